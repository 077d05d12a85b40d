import {
  LbPoolCreateBodySchema,
  ListenerRecordSchema,
  ListenerUpdateBodySchema,
  LoadBalancerCreateBodySchema,
  PathIdSchema,
  ScopeParamsSchema,
  TaskListSchema,
  type LbPoolCreateBody,
  type Listener,
  type ListenerUpdateBody,
  type LoadBalancerCreateBody,
  type TaskList,
} from '../schemas/index.js';
import { decodeWith, rememberRecord } from '../decode.js';
import type { Transport } from '../http.js';
import { ROUTES } from '../paths.js';
import { InputCheck } from '../validate.js';

/** Load balancers, their pools and listeners. */
export interface LoadBalancingApi {
  /** `POST /cloud/v1/lbpools/{project_id}/{region_id}`. */
  createLbPool(project_id: number, region_id: number, body: LbPoolCreateBody): Promise<TaskList>;
  /** `POST /cloud/v1/loadbalancers/{project_id}/{region_id}` (path not shown in the spec; see paths.ts). */
  createLoadBalancer(project_id: number, region_id: number, body: LoadBalancerCreateBody): Promise<TaskList>;
  /** `PATCH /v2/lblisteners/{project_id}/{region_id}/{listener_id}`: renames a listener, answers its record. */
  updateLbListener(project_id: number, region_id: number, listener_id: string, body: ListenerUpdateBody): Promise<Listener>;
}

export function loadBalancingApi(transport: Transport): LoadBalancingApi {
  return {
    async createLbPool(project_id, region_id, body) {
      const route = ROUTES.createLbPool;
      const input = new InputCheck('createLbPool', route);
      const params = input.check('path', ScopeParamsSchema, { project_id, region_id });
      const checked = input.check('body', LbPoolCreateBodySchema, body);
      input.done();
      return transport.send({
        operation: 'createLbPool',
        route,
        params,
        body: checked,
        idempotent: false,
        decode: decodeWith(TaskListSchema, rememberRecord),
      });
    },

    async createLoadBalancer(project_id, region_id, body) {
      const route = ROUTES.createLoadBalancer;
      const input = new InputCheck('createLoadBalancer', route);
      const params = input.check('path', ScopeParamsSchema, { project_id, region_id });
      const checked = input.check('body', LoadBalancerCreateBodySchema, body);
      input.done();
      return transport.send({
        operation: 'createLoadBalancer',
        route,
        params,
        body: checked,
        idempotent: false,
        decode: decodeWith(TaskListSchema, rememberRecord),
      });
    },

    async updateLbListener(project_id, region_id, listener_id, body) {
      const route = ROUTES.updateLbListener;
      const input = new InputCheck('updateLbListener', route);
      const scope = input.check('path', ScopeParamsSchema, { project_id, region_id });
      const listener = input.check('path.listener_id', PathIdSchema, listener_id);
      const checked = input.check('body', ListenerUpdateBodySchema, body);
      input.done();
      return transport.send({
        operation: 'updateLbListener',
        route,
        params: { ...scope, listener_id: listener },
        body: checked,
        idempotent: false,
        decode: decodeWith(ListenerRecordSchema, rememberRecord),
      });
    },
  };
}
