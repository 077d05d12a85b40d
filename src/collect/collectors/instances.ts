/**
 * Instances of a scope, listed through each configured security group. An instance in several
 * groups is stored once with all their ids. Memory stays bounded: each group's page is written
 * as soon as it arrives (its records let go before the write waits on the database), and only an
 * id -> group ids map is kept to merge the duplicates with one UPDATE at the end.
 */
import { getTableName } from 'drizzle-orm';
import { arrayLiteral } from '../../db/bulk.js';
import { instances } from '../../db/schema.js';
import { forEachLimited } from '../concurrency.js';
import { mapInstance, type InstanceRow } from '../mappers.js';
import type { PreparedRows } from '../snapshot-writer.js';
import { rowContext, scopeOf, scopeUnits, type Collector } from './collector.js';

const MERGE_CHUNK = 5_000;

export const instancesCollector: Collector = {
  name: 'instances',
  kind: 'instance',
  phase: 2,
  pageOrder: 1,
  // Without groups there is no way to list instances; an empty snapshot would mark them all gone.
  units: (ctx) => scopeUnits(ctx, (s) => (s.securityGroups.length === 0 ? 'no security groups configured for this scope' : null)),
  async collect(writer, unit, ctx) {
    const { projectId, regionId, scope } = scopeOf(unit);
    const rc = rowContext(writer, unit);
    const groupsOf = new Map<string, string[]>();

    /** One group's instances not seen in an earlier group, ready to write (the records themselves are let go). */
    const groupPage = async (groupId: string): Promise<PreparedRows> => {
      const list = await ctx.client.listInstancesBySecurityGroup(projectId, regionId, groupId);
      const rows: InstanceRow[] = [];
      for (const instance of list.results) {
        const groups = groupsOf.get(instance.id);
        if (groups) {
          if (!groups.includes(groupId)) groups.push(groupId);
          continue;
        }
        groupsOf.set(instance.id, [groupId]);
        rows.push(mapInstance(instance, [groupId], rc, ctx.config));
      }
      return writer.prepare(instances, rows);
    };

    await forEachLimited(scope.securityGroups, ctx.pageLimiter.size, async (groupId) => {
      ctx.checkpoint();
      await ctx.bigPage(async () => writer.write(await groupPage(groupId)));
    });

    ctx.checkpoint();
    const shared = [...groupsOf].filter(([, groups]) => groups.length > 1);
    for (let i = 0; i < shared.length; i += MERGE_CHUNK) {
      const chunk = shared.slice(i, i + MERGE_CHUNK);
      await writer.execute(
        // The text-to-array cast happens in the CTE: Citus refuses STABLE functions (the cast)
        // over columns in an UPDATE's own expressions.
        `WITH u AS MATERIALIZED (SELECT id, groups::text[] AS groups FROM unnest($2::text[], $3::text[]) AS u(id, groups))
         UPDATE ${getTableName(instances)} AS i SET security_group_ids = u.groups
           FROM u
          WHERE i.snapshot_id = $1 AND i.instance_id = u.id`,
        // Sorted: the pages finish in any order, and an instance's groups are a set; an order that
        // followed the pages would read as a change between two collections of the same company.
        [writer.id, chunk.map(([id]) => id), chunk.map(([, groups]) => arrayLiteral([...groups].sort()))],
      );
    }
  },
};
