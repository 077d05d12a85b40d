import { FreeFeatureIdSchema, FreeFeatureRecordSchema, type FreeFeature } from '../schemas/index.js';
import { decodeWith, rememberRecord } from '../decode.js';
import type { Transport } from '../http.js';
import { ROUTES } from '../paths.js';
import { InputCheck } from '../validate.js';

/** Content delivery account administration. */
export interface CdnApi {
  /** `GET /cdn/admin/free_features/{free_feature_id}`. */
  getFreeFeature(free_feature_id: number): Promise<FreeFeature>;
}

export function cdnApi(transport: Transport): CdnApi {
  return {
    async getFreeFeature(free_feature_id) {
      const route = ROUTES.getFreeFeature;
      const input = new InputCheck('getFreeFeature', route);
      const id = input.check('path.free_feature_id', FreeFeatureIdSchema, free_feature_id);
      input.done();
      return transport.send({
        operation: 'getFreeFeature',
        route,
        params: { free_feature_id: id },
        idempotent: true,
        decode: decodeWith(FreeFeatureRecordSchema, rememberRecord),
      });
    },
  };
}
