/** Bare metal GPU clusters, every page, with their servers in the same snapshot. */
import { gpuClusters, gpuClusterServers } from '../../db/schema.js';
import { mapCluster, mapClusterServer } from '../mappers.js';
import type { PreparedRows } from '../snapshot-writer.js';
import { firstSighting, rowContext, scopeOf, scopeUnits, type Collector } from './collector.js';

export const clustersCollector: Collector = {
  name: 'clusters',
  kind: 'cluster',
  phase: 2,
  pageOrder: 2,
  units: (ctx) => scopeUnits(ctx),
  async collect(writer, unit, ctx) {
    const { projectId, regionId } = scopeOf(unit);
    const rc = rowContext(writer, unit);
    const pages = ctx.client.gpuClusterPages(projectId, regionId);
    // A cluster created during the listing can shift offsets and repeat one: the first copy is kept.
    const seenClusters = new Set<string>();
    const seenServers = new Set<string>();
    /** The next page's clusters and servers ready to write (the records let go), or null after the last page. */
    const nextPage = async (): Promise<PreparedRows[] | null> => {
      const next = await pages.next();
      if (next.done) return null;
      const clusters = next.value.results.filter((c) => firstSighting(seenClusters, c.cluster_id));
      const servers = clusters.flatMap((c) =>
        c.servers
          .filter((s) => firstSighting(seenServers, `${c.cluster_id}\u0000${s.id}`))
          .map((s) => mapClusterServer(c.cluster_id, s, rc, ctx.config)),
      );
      return [
        writer.prepare(gpuClusters, clusters.map((c) => mapCluster(c, rc, ctx.config))),
        writer.prepare(gpuClusterServers, servers, { countAs: 'cluster_server' }),
      ];
    };
    for (;;) {
      ctx.checkpoint();
      const done = await ctx.bigPage(async () => {
        const page = await nextPage();
        if (page === null) return true;
        await writer.write(...page);
        return false;
      });
      if (done) return;
    }
  },
};
