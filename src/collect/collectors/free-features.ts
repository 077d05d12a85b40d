/**
 * Activated free features of the content delivery account (global), by configured id. A 404 for
 * one id is an error recorded for that id and the others are still stored (that activation does
 * not exist); any other failure fails the snapshot, so a transient error never makes one look gone.
 * When every id is unknown nothing is stored and the snapshot fails (the account is likely wrong).
 */
import type { RunError } from '../../db/schema.js';
import { freeFeatures, GLOBAL_SCOPE } from '../../db/schema.js';
import { isNotFound, toRunError } from '../errors.js';
import { mapFreeFeature } from '../mappers.js';
import { rowContext, type Collector } from './collector.js';

export const freeFeaturesCollector: Collector = {
  name: 'free_features',
  kind: 'free_feature',
  phase: 2,
  units: (ctx) =>
    ctx.freeFeatureIds.length === 0
      ? [{ scopeKey: GLOBAL_SCOPE, skipped: 'no free-feature ids configured' }]
      : [{ scopeKey: GLOBAL_SCOPE, projectId: null, regionId: null, scope: null }],
  async collect(writer, unit, ctx) {
    const rc = rowContext(writer, unit);
    const itemErrors: RunError[] = [];
    const ids = [...new Set(ctx.freeFeatureIds)];
    let firstMissing: unknown = null;
    for (const id of ids) {
      ctx.checkpoint();
      await ctx.limiter.run(async () => {
        try {
          const feature = await ctx.client.getFreeFeature(id);
          await writer.insert(freeFeatures, [mapFreeFeature(feature, rc)], { onConflictDoNothing: true });
        } catch (err) {
          if (!isNotFound(err)) throw err;
          firstMissing ??= err;
          itemErrors.push(toRunError(err, 'free_features', unit.scopeKey));
        }
      });
    }
    if (itemErrors.length === ids.length) throw firstMissing;
    return { itemErrors };
  },
};
