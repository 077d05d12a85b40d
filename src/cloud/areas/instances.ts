import {
  InstanceListSchema,
  InstancePortListSchema,
  PathIdSchema,
  ScopeParamsSchema,
  StopInstanceResponseSchema,
  type Instance,
  type InstancePort,
} from '../schemas/index.js';
import { decodeWith, rememberResults, rememberStopped } from '../decode.js';
import type { Transport } from '../http.js';
import { ROUTES } from '../paths.js';
import type { ListResult } from '../types.js';
import { InputCheck } from '../validate.js';

/** Compute instances: listed per security group, stopped, and their ports. */
export interface InstanceApi {
  /** `GET /cloud/v1/securitygroups/{project_id}/{region_id}/{group_id}/instances`. */
  listInstancesBySecurityGroup(project_id: number, region_id: number, group_id: string): Promise<ListResult<Instance>>;
  /**
   * `POST /cloud/v1/instances/{project_id}/{region_id}/{instance_id}/stop`: the instance records
   * after the stop (a legacy single-object answer is turned into a one-record list).
   */
  stopInstance(project_id: number, region_id: number, instance_id: string): Promise<ListResult<Instance>>;
  /** `GET /cloud/v1/instances/{project_id}/{region_id}/{instance_id}/ports`. */
  listInstancePorts(project_id: number, region_id: number, instance_id: string): Promise<ListResult<InstancePort>>;
}

export function instanceApi(transport: Transport): InstanceApi {
  return {
    async listInstancesBySecurityGroup(project_id, region_id, group_id) {
      const route = ROUTES.listInstancesBySecurityGroup;
      const input = new InputCheck('listInstancesBySecurityGroup', route);
      const scope = input.check('path', ScopeParamsSchema, { project_id, region_id });
      const group = input.check('path.group_id', PathIdSchema, group_id);
      input.done();
      return transport.send({
        operation: 'listInstancesBySecurityGroup',
        page: true,
        route,
        params: { ...scope, group_id: group },
        idempotent: true,
        decode: decodeWith(InstanceListSchema, rememberResults),
      });
    },

    async stopInstance(project_id, region_id, instance_id) {
      const route = ROUTES.stopInstance;
      const input = new InputCheck('stopInstance', route);
      const scope = input.check('path', ScopeParamsSchema, { project_id, region_id });
      const instance = input.check('path.instance_id', PathIdSchema, instance_id);
      input.done();
      return transport.send({
        operation: 'stopInstance',
        route,
        params: { ...scope, instance_id: instance },
        // A POST, but stopping a stopped instance is a no-op that answers the same records,
        // so repeating it after a lost answer is safe: retried like a GET.
        idempotent: true,
        decode: decodeWith(StopInstanceResponseSchema, rememberStopped),
      });
    },

    async listInstancePorts(project_id, region_id, instance_id) {
      const route = ROUTES.listInstancePorts;
      const input = new InputCheck('listInstancePorts', route);
      const scope = input.check('path', ScopeParamsSchema, { project_id, region_id });
      const instance = input.check('path.instance_id', PathIdSchema, instance_id);
      input.done();
      return transport.send({
        operation: 'listInstancePorts',
        page: true,
        route,
        params: { ...scope, instance_id: instance },
        idempotent: true,
        decode: decodeWith(InstancePortListSchema, rememberResults),
      });
    },
  };
}
