/** Project keypairs, identified by NAME within a scope (legacy answers put the name in the id). */
import { keypairs } from '../../db/schema.js';
import { listSample } from '../../logger.js';
import { keypairName, mapKeypair, type KeypairRow } from '../mappers.js';
import { rowContext, scopeOf, scopeUnits, type Collector } from './collector.js';

export const keypairsCollector: Collector = {
  name: 'keypairs',
  kind: 'keypair',
  phase: 2,
  units: (ctx) => scopeUnits(ctx),
  async collect(writer, unit, ctx) {
    const { projectId, regionId } = scopeOf(unit);
    const rc = rowContext(writer, unit);
    ctx.checkpoint();
    await ctx.limiter.run(async () => {
      const list = await ctx.client.listKeypairs(projectId, regionId);
      const byName = new Map<string, KeypairRow>();
      const duplicates: string[] = [];
      for (const keypair of list.results) {
        const name = keypairName(keypair);
        if (byName.has(name)) duplicates.push(name);
        else byName.set(name, mapKeypair(keypair, rc));
      }
      if (duplicates.length > 0) {
        ctx.logger.warn({ scope: unit.scopeKey, duplicates: listSample(duplicates) }, 'keypair names listed more than once; the first of each was kept');
      }
      await writer.insert(keypairs, [...byName.values()], { onConflictDoNothing: true });
    });
  },
};
