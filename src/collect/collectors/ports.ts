/**
 * The ports of every instance in the scope's latest complete instance snapshot (normally the one
 * this run just wrote), one request per instance within the run's concurrency limit. Rows are
 * buffered and written in batches by one writer at a time, which also holds fetching back when
 * the database is the slower side.
 *
 * One instance whose ports cannot be read (the request failed after the client's retries) does
 * not cost the scope its port snapshot: the instance is recorded in unread_instance_ports, its
 * last known ports are carried over from the previous port snapshot (read_at = when they were
 * read), and presence marks none of them gone. The scope fails only when the key is refused
 * (401/403: every request would fail alike) or when no instance could be read at all.
 */
import { getTableColumns, getTableName } from 'drizzle-orm';
import { CloudError } from '../../cloud/index.js';
import type { Queryable } from '../../db/connection.js';
import { instancePorts, unreadInstancePorts, type RunError } from '../../db/schema.js';
import { snapshotRowsSql, versionedTable } from '../../db/versions.js';
import { forEachLimited, SerialQueue } from '../concurrency.js';
import { isAuthFailure, isNotFound, MissingSourceError, statusOf, toRunError } from '../errors.js';
import { mapPort, type PortRow } from '../mappers.js';
import type { SnapshotWriter } from '../snapshot-writer.js';
import { firstSighting, latestCompleteSnapshot, rowContext, scopeOf, scopeUnits, type Collector } from './collector.js';

const FLUSH_ROWS = 2_000;

interface Unread {
  instanceId: string;
  error: unknown;
}

export const portsCollector: Collector = {
  name: 'ports',
  kind: 'port',
  phase: 3,
  units: (ctx) => scopeUnits(ctx, (s) => (s.securityGroups.length === 0 ? 'no security groups configured for this scope' : null)),
  async collect(writer, unit, ctx) {
    const { projectId, regionId } = scopeOf(unit);
    const source = await latestCompleteSnapshot(ctx.db, 'instance', unit.scopeKey);
    if (source === null) throw new MissingSourceError('no complete instance snapshot of this scope yet: the instances collector has not succeeded here');
    const ids = (
      await ctx.db.query<{ instance_id: string }>(`SELECT instance_id FROM (${snapshotRowsSql(versionedTable('instances'), 'instance_id', '$1')}) i ORDER BY instance_id`, [source])
    ).map((r) => r.instance_id);

    const rc = rowContext(writer, unit);
    const writes = new SerialQueue();
    let buffer: PortRow[] = [];
    let vanished = 0;
    const unread: Unread[] = [];
    const flush = () => {
      // Prepared now, so the rows are garbage while the write waits its turn.
      const page = writer.prepare(instancePorts, buffer);
      buffer = [];
      return writes.push(() => writer.write(page));
    };

    /** Reads one instance's ports into the buffer; a cloud failure is returned, anything else thrown. */
    const readPorts = (instanceId: string): Promise<unknown> =>
      ctx.limiter.run(async () => {
        let ports;
        try {
          ports = await ctx.client.listInstancePorts(projectId, regionId, instanceId);
        } catch (err) {
          // Deleted since the instance snapshot was taken: it has no ports to list any more.
          if (isNotFound(err)) {
            vanished++;
            return null;
          }
          if (isAuthFailure(err) || !isCloudFailure(err)) throw err;
          return err;
        }
        // Each instance is asked once; a port it lists twice is stored once.
        const seen = new Set<string>();
        for (const port of ports.results) if (firstSighting(seen, port.id)) buffer.push(mapPort(instanceId, port, rc));
        if (buffer.length >= FLUSH_ROWS) await flush();
        return null;
      });

    const failed: Unread[] = [];
    await forEachLimited(ids, ctx.limiter.size, async (instanceId) => {
      ctx.checkpoint();
      const error = await readPorts(instanceId);
      if (error !== null) failed.push({ instanceId, error });
    });
    // A burst of 5xx or 429 that outlasted the client's retries for a few instances has usually
    // passed by the end of the scope: those instances get one more round before they count as
    // unread. Not when nothing was read at all (the API is down here; asking again only delays).
    if (failed.length > 0 && failed.length < ids.length - vanished) {
      await forEachLimited(failed, ctx.limiter.size, async ({ instanceId }) => {
        ctx.checkpoint();
        const error = await readPorts(instanceId);
        if (error !== null) unread.push({ instanceId, error });
      });
    } else {
      unread.push(...failed);
    }
    await flush();
    if (vanished > 0) {
      ctx.logger.info({ scope: unit.scopeKey, vanished }, 'instances gone since their snapshot were skipped by the ports collector');
    }
    if (unread.length === 0) return;
    // Nothing read at all: the API is down for this scope, and the scope fails loudly.
    if (unread.length === ids.length - vanished) throw unread[0]!.error;
    const carried = await keepLastKnownPorts(ctx.db, writer, unread);
    ctx.logger.warn(
      { scope: unit.scopeKey, unread: unread.length, instances: ids.length, carried },
      'ports of some instances could not be read: their last known ports are kept',
    );
    return { itemErrors: [unreadWarning(unread, ids.length, unit.scopeKey)] };
  },
};

/** Failures of the cloud API on one request (a 5xx, 429, timeout, network error, bad body); not database errors. */
function isCloudFailure(err: unknown): boolean {
  return err instanceof CloudError;
}

/**
 * Records the unread instances and copies their rows from the previous complete port snapshot
 * of the scope (itself possibly carried: read_at keeps the time they were really read).
 * Returns the rows carried.
 */
async function keepLastKnownPorts(db: Queryable, writer: SnapshotWriter, unread: readonly Unread[]): Promise<number> {
  const ids = unread.map((u) => u.instanceId);
  await writer.execute(
    `INSERT INTO ${getTableName(unreadInstancePorts)} (snapshot_id, instance_id, status, error)
     SELECT $1, u.instance_id, u.status, u.error FROM unnest($2::text[], $3::int[], $4::text[]) AS u(instance_id, status, error)`,
    [writer.id, ids, unread.map((u) => statusOf(u.error)), unread.map((u) => toRunError(u.error, 'ports', '').message)],
  );
  // Every column but the snapshot and read_at, by name, so a column added later is carried too.
  const columns = Object.values(getTableColumns(instancePorts))
    .map((c) => c.name)
    .filter((name) => name !== 'snapshot_id' && name !== 'read_at');
  const list = columns.map((c) => `"${c}"`).join(', ');
  const [prev] = await db.query<{ id: number; taken_at: Date }>(
    `SELECT id, taken_at FROM snapshots WHERE kind = 'port' AND scope_key = $1 AND complete AND taken_at <= $2 ORDER BY taken_at DESC, id DESC LIMIT 1`,
    [writer.target.scopeKey, writer.target.takenAt],
  );
  if (!prev) return 0;
  return writer.execute(
    `INSERT INTO ${getTableName(instancePorts)} (snapshot_id, ${list}, read_at)
     SELECT $1, ${columns.map((c) => `p."${c}"`).join(', ')}, coalesce(p.read_at, $3)
       FROM (${snapshotRowsSql(versionedTable('instance_ports'), `${list}, read_at`, '$2')}) p
      WHERE p.instance_id = ANY($4::text[])`,
    [writer.id, prev.id, prev.taken_at, ids],
    { countAs: 'port' },
  );
}

/** One warning per scope (not one per instance): how many were not read, and the first failure. */
function unreadWarning(unread: readonly Unread[], instances: number, scopeKey: string): RunError {
  const first = toRunError(unread[0]!.error, 'ports', scopeKey);
  return {
    ...first,
    severity: 'warning',
    message: `ports of ${unread.length} of ${instances} instance(s) could not be read; their last known ports are kept and marked as such. First failure: ${first.message}`,
  };
}
