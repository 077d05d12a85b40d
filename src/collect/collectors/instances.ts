/**
 * Instances of a scope, listed through each configured security group. An instance in several
 * groups is stored once with all their ids. Memory stays bounded: each group's page is written
 * as soon as it arrives (its records let go before the write waits on the database), except the
 * instances whose record names more than one security group: they may be listed again through
 * another group, so their rows wait (raw JSON as text) until every group is listed and are then
 * written with all their group ids. Rewriting them instead (an UPDATE of ~12% of the rows at
 * 100,000 instances) cost Postgres 0.3-0.45 s per run and left as many dead row versions. An
 * instance listed again although its record named one group is merged by an UPDATE at the end.
 */
import { arrayLiteral, JsonText } from '../../db/bulk.js';
import { instances } from '../../db/schema.js';
import { forEachLimited } from '../concurrency.js';
import { mapInstance, type InstanceRow } from '../mappers.js';
import type { PreparedRows } from '../snapshot-writer.js';
import { rowContext, scopeOf, scopeUnits, type Collector } from './collector.js';

const MERGE_CHUNK = 5_000;
/** Rows per COPY of the instances that waited for every group. */
const WAITING_PAGE = 2_000;

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
    const waiting = new Map<string, InstanceRow>();

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
        const row = mapInstance(instance, [groupId], rc, ctx.config);
        if (instance.security_groups.length > 1) {
          // The json column takes the text as it is (bulk.ts): the parsed record is let go.
          waiting.set(instance.id, { ...row, raw: new JsonText(JSON.stringify(row.raw)) as unknown as InstanceRow['raw'] });
        } else {
          rows.push(row);
        }
      }
      return writer.prepare(instances, rows);
    };

    await forEachLimited(scope.securityGroups, ctx.pageLimiter.size, async (groupId) => {
      ctx.checkpoint();
      await ctx.bigPage(async () => writer.write(await groupPage(groupId)));
    });

    ctx.checkpoint();
    const waited = [...waiting.values()];
    waiting.clear();
    for (let i = 0; i < waited.length; i += WAITING_PAGE) {
      const rows = waited.slice(i, i + WAITING_PAGE).map((row) => ({ ...row, securityGroupIds: groupsOf.get(row.instanceId)! }));
      await ctx.bigPage(() => writer.write(writer.prepare(instances, rows)));
    }

    ctx.checkpoint();
    const written = new Set(waited.map((row) => row.instanceId));
    const shared = [...groupsOf].filter(([id, groups]) => groups.length > 1 && !written.has(id));
    for (let i = 0; i < shared.length; i += MERGE_CHUNK) {
      const chunk = shared.slice(i, i + MERGE_CHUNK);
      await writer.execute(
        `UPDATE instances AS i SET security_group_ids = u.groups::text[]
           FROM unnest($2::text[], $3::text[]) AS u(id, groups)
          WHERE i.snapshot_id = $1 AND i.instance_id = u.id`,
        [writer.id, chunk.map(([id]) => id), chunk.map(([, groups]) => arrayLiteral(groups))],
      );
    }
  },
};
