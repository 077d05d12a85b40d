/**
 * The price of each configured Kubernetes cluster of a scope. A configured name the API does not
 * know (404) is recorded as an error for that name and the others are still stored; any other
 * failure fails the scope (so a transient error never makes a cluster look gone). The API gives
 * these clusters no tags: each row carries the tags the configuration gives the cluster.
 */
import type { RunError } from '../../db/schema.js';
import { k8sClusterPrices } from '../../db/schema.js';
import { isNotFound, toRunError } from '../errors.js';
import { mapK8sPrice } from '../mappers.js';
import { rowContext, scopeOf, scopeUnits, type Collector } from './collector.js';

export const k8sPricesCollector: Collector = {
  name: 'k8s_prices',
  kind: 'k8s_price',
  phase: 1,
  units: (ctx) => scopeUnits(ctx, (s) => (s.k8sClusters.length === 0 ? 'no Kubernetes clusters configured for this scope' : null)),
  async collect(writer, unit, ctx) {
    const { projectId, regionId, scope } = scopeOf(unit);
    const rc = rowContext(writer, unit);
    const itemErrors: RunError[] = [];
    let firstMissing: unknown = null;
    for (const name of scope.k8sClusters) {
      ctx.checkpoint();
      await ctx.limiter.run(async () => {
        try {
          const price = await ctx.client.getK8sClusterPrice(projectId, regionId, name);
          await writer.insert(k8sClusterPrices, [mapK8sPrice(name, price, rc, scope.k8sClusterTags?.[name] ?? {}, ctx.config)]);
        } catch (err) {
          if (!isNotFound(err)) throw err;
          firstMissing ??= err;
          itemErrors.push(toRunError(err, 'k8s_prices', unit.scopeKey));
        }
      });
    }
    if (itemErrors.length === scope.k8sClusters.length) throw firstMissing;
    return { itemErrors };
  },
};
