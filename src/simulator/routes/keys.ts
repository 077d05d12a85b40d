import { PathIdSchema, ScopeParamsSchema } from '../../cloud/schemas/requests.js';
import { notFound } from '../http/errors.js';
import type { Router } from '../http/router.js';
import { ok } from '../http/types.js';
import { validateRequest } from '../http/validate.js';
import { listEnvelope } from '../wire/common.js';
import { keypairWire } from '../wire/keys.js';
import { imageTagWire } from '../wire/misc.js';
import { requireScope, wire } from './common.js';

const ImageParamsSchema = ScopeParamsSchema.extend({ image_id: PathIdSchema });

/** Image tags and project keypairs. */
export function addImageAndKeypairRoutes(router: Router): void {
  router.add('GET', '/cloud/v1/images/:project_id/:region_id/:image_id/metadata', (ctx) => {
    const { path } = validateRequest({ path: ImageParamsSchema }, { path: ctx.params });
    requireScope(ctx, path.project_id, path.region_id);
    const image = ctx.state.image(path.image_id);
    if (!image) throw notFound(`image ${path.image_id} not found in project ${path.project_id} region ${path.region_id}`);
    const w = wire(ctx);
    return ok(listEnvelope(image.tags.map((t) => imageTagWire(t, w)), w));
  });

  router.add('GET', '/cloud/v1/keypairs/:project_id/:region_id', (ctx) => {
    const { path } = validateRequest({ path: ScopeParamsSchema }, { path: ctx.params });
    const scope = requireScope(ctx, path.project_id, path.region_id);
    const w = wire(ctx);
    return ok(listEnvelope(scope.keypairs.map((k) => keypairWire(k, w)), w));
  });
}
