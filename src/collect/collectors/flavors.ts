/** GPU flavors of a scope with prices and capacity, the disabled ones too (stored with disabled = true). */
import { gpuFlavors } from '../../db/schema.js';
import { mapFlavor } from '../mappers.js';
import { rowContext, scopeOf, scopeUnits, type Collector } from './collector.js';

export const flavorsCollector: Collector = {
  name: 'flavors',
  kind: 'flavor',
  phase: 1,
  units: (ctx) => scopeUnits(ctx),
  async collect(writer, unit, ctx) {
    const { projectId, regionId } = scopeOf(unit);
    const rc = rowContext(writer, unit);
    ctx.checkpoint();
    await ctx.limiter.run(async () => {
      const list = await ctx.client.listGpuFlavors(projectId, regionId, {
        disabled: true,
        include_prices: true,
        include_capacity: true,
      });
      await writer.insert(gpuFlavors, list.results.map((f) => mapFlavor(f, rc)), { onConflictDoNothing: true });
    });
  },
};
