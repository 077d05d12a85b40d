import { K8sClusterNameSchema, PricingResultSchema, ScopeParamsSchema, type PricingResult } from '../schemas/index.js';
import { decodeWith, rememberRecord } from '../decode.js';
import type { Transport } from '../http.js';
import { ROUTES } from '../paths.js';
import { InputCheck } from '../validate.js';

/** Price estimates. */
export interface PricingApi {
  /** `GET /cloud/v2/pricing/{project_id}/{region_id}/k8s/clusters/{cluster_name}`: prices as exact decimal text. */
  getK8sClusterPrice(project_id: number, region_id: number, cluster_name: string): Promise<PricingResult>;
}

export function pricingApi(transport: Transport): PricingApi {
  return {
    async getK8sClusterPrice(project_id, region_id, cluster_name) {
      const route = ROUTES.getK8sClusterPrice;
      const input = new InputCheck('getK8sClusterPrice', route);
      const scope = input.check('path', ScopeParamsSchema, { project_id, region_id });
      const name = input.check('path.cluster_name', K8sClusterNameSchema, cluster_name);
      input.done();
      return transport.send({
        operation: 'getK8sClusterPrice',
        route,
        params: { ...scope, cluster_name: name },
        idempotent: true,
        decode: decodeWith(PricingResultSchema, rememberRecord),
      });
    },
  };
}
