/** Bare metal GPU clusters, every page, with their servers in the same snapshot. */
import { gpuClusters, gpuClusterServers } from '../../db/schema.js';
import { mapCluster, mapClusterServer } from '../mappers.js';
import { rowContext, scopeOf, scopeUnits, type Collector } from './collector.js';

export const clustersCollector: Collector = {
  name: 'clusters',
  kind: 'cluster',
  phase: 2,
  units: (ctx) => scopeUnits(ctx),
  async collect(writer, unit, ctx) {
    const { projectId, regionId } = scopeOf(unit);
    const rc = rowContext(writer, unit);
    const pages = ctx.client.gpuClusterPages(projectId, regionId);
    for (;;) {
      ctx.checkpoint();
      const done = await ctx.bigPage(async () => {
        const next = await pages.next();
        if (next.done) return true;
        const clusters = next.value.results;
        // A cluster created during the listing can shift offsets and repeat one: the first copy is kept.
        await writer.insert(
          gpuClusters,
          clusters.map((c) => mapCluster(c, rc, ctx.config)),
          { onConflictDoNothing: true },
        );
        await writer.insert(
          gpuClusterServers,
          clusters.flatMap((c) => c.servers.map((s) => mapClusterServer(c.cluster_id, s, rc, ctx.config))),
          { countAs: 'cluster_server', onConflictDoNothing: true },
        );
        return false;
      });
      if (done) return;
    }
  },
};
