import {
  FaasParamsSchema,
  InferenceDeploymentCreateBodySchema,
  ProjectParamsSchema,
  ScopeParamsSchema,
  TaskListSchema,
  type InferenceDeploymentCreateBody,
  type TaskList,
} from '../schemas/index.js';
import { decodeWith, rememberRecord } from '../decode.js';
import type { Transport } from '../http.js';
import { ROUTES } from '../paths.js';
import { InputCheck } from '../validate.js';

/** Inference application deployments and serverless functions. */
export interface ServerlessApi {
  /** `POST /cloud/v3/inference/applications/{project_id}/deployments`. */
  createInferenceDeployment(project_id: number, body: InferenceDeploymentCreateBody): Promise<TaskList>;
  /** `DELETE /cloud/v1/faas/namespaces/{project_id}/{region_id}/{namespace_name}/functions/{function_name}`. */
  deleteFunction(project_id: number, region_id: number, namespace_name: string, function_name: string): Promise<TaskList>;
}

export function serverlessApi(transport: Transport): ServerlessApi {
  return {
    async createInferenceDeployment(project_id, body) {
      const route = ROUTES.createInferenceDeployment;
      const input = new InputCheck('createInferenceDeployment', route);
      const params = input.check('path', ProjectParamsSchema, { project_id });
      const checked = input.check('body', InferenceDeploymentCreateBodySchema, body);
      input.done();
      return transport.send({
        operation: 'createInferenceDeployment',
        route,
        params,
        body: checked,
        idempotent: false,
        decode: decodeWith(TaskListSchema, rememberRecord),
      });
    },

    async deleteFunction(project_id, region_id, namespace_name, function_name) {
      const route = ROUTES.deleteFunction;
      const input = new InputCheck('deleteFunction', route);
      const scope = input.check('path', ScopeParamsSchema, { project_id, region_id });
      const names = input.check('path', FaasParamsSchema, { namespace_name, function_name });
      input.done();
      return transport.send({
        operation: 'deleteFunction',
        route,
        params: { ...scope, ...names },
        idempotent: false,
        decode: decodeWith(TaskListSchema, rememberRecord),
      });
    },
  };
}
