/**
 * Tags of the images of a scope: every image seen in the scope's latest complete cluster snapshot
 * plus the configured image ids. The API lists image tags per project and region, so they are
 * collected per scope. A 404 for an image seen in the scope's clusters is an error recorded for
 * that image (the others are stored); a 404 for a configured image not seen there only means the
 * image does not exist in that region, and is logged at debug level. Other failures fail the scope,
 * and so does a 404 for every image seen in the scope's clusters (then the scope is likely unknown).
 */
import type { RunError } from '../../db/schema.js';
import { imageTags } from '../../db/schema.js';
import { snapshotRowsSql, versionedTable } from '../../db/versions.js';
import { isNotFound, MissingSourceError, toRunError } from '../errors.js';
import { mapImageTag } from '../mappers.js';
import { latestCompleteSnapshot, rowContext, scopeOf, scopeUnits, type Collector } from './collector.js';

export const imageTagsCollector: Collector = {
  name: 'image_tags',
  kind: 'image_tag',
  phase: 3,
  units: (ctx) => scopeUnits(ctx),
  async collect(writer, unit, ctx) {
    const { projectId, regionId } = scopeOf(unit);
    const clusters = await latestCompleteSnapshot(ctx.db, 'cluster', unit.scopeKey);
    if (clusters === null) throw new MissingSourceError('no complete cluster snapshot of this scope yet: the clusters collector has not succeeded here');
    const seen = new Set(
      (
        await ctx.db.query<{ image_id: string }>(
          `SELECT DISTINCT image_id FROM (${snapshotRowsSql(versionedTable('gpu_clusters'), 'image_id', '$1')}) c WHERE image_id IS NOT NULL ORDER BY image_id`,
          [clusters],
        )
      ).map((r) => r.image_id),
    );
    const imageIds = [...new Set([...seen, ...ctx.imageIds])];
    const rc = rowContext(writer, unit);
    const itemErrors: RunError[] = [];
    let firstMissing: unknown = null;
    for (const imageId of imageIds) {
      ctx.checkpoint();
      await ctx.limiter.run(async () => {
        try {
          const tags = await ctx.client.getImageTags(projectId, regionId, imageId);
          // The same key twice on one image would break the primary key: the first is kept.
          await writer.insert(imageTags, tags.results.map((t) => mapImageTag(imageId, t, rc)), { onConflictDoNothing: true });
        } catch (err) {
          if (!isNotFound(err)) throw err;
          if (seen.has(imageId)) {
            firstMissing ??= err;
            itemErrors.push(toRunError(err, 'image_tags', unit.scopeKey));
          }
          else ctx.logger.debug({ scope: unit.scopeKey, imageId }, 'configured image not found in this scope');
        }
      });
    }
    if (seen.size > 0 && itemErrors.length === seen.size) throw firstMissing;
    return { itemErrors };
  },
};
