/**
 * The ports of every instance in the scope's latest complete instance snapshot (normally the one
 * this run just wrote), one request per instance within the run's concurrency limit. Rows are
 * buffered and written in batches by one writer at a time, which also holds fetching back when
 * the database is the slower side.
 */
import { instancePorts } from '../../db/schema.js';
import { forEachLimited, SerialQueue } from '../concurrency.js';
import { isNotFound } from '../errors.js';
import { mapPort, type PortRow } from '../mappers.js';
import { firstSighting, latestCompleteSnapshot, rowContext, scopeOf, scopeUnits, type Collector } from './collector.js';

const FLUSH_ROWS = 2_000;

export const portsCollector: Collector = {
  name: 'ports',
  kind: 'port',
  phase: 3,
  units: (ctx) => scopeUnits(ctx, (s) => (s.securityGroups.length === 0 ? 'no security groups configured for this scope' : null)),
  async collect(writer, unit, ctx) {
    const { projectId, regionId } = scopeOf(unit);
    const source = await latestCompleteSnapshot(ctx.db, 'instance', unit.scopeKey);
    if (source === null) throw new Error('no complete instance snapshot of this scope yet: the instances collector has not succeeded here');
    const ids = (
      await ctx.db.query<{ instance_id: string }>('SELECT instance_id FROM instances WHERE snapshot_id = $1 ORDER BY instance_id', [source])
    ).map((r) => r.instance_id);

    const rc = rowContext(writer, unit);
    const writes = new SerialQueue();
    let buffer: PortRow[] = [];
    let vanished = 0;
    const flush = () => {
      // Prepared now, so the rows are garbage while the write waits its turn.
      const page = writer.prepare(instancePorts, buffer);
      buffer = [];
      return writes.push(() => writer.write(page));
    };

    await forEachLimited(ids, ctx.limiter.size, async (instanceId) => {
      ctx.checkpoint();
      await ctx.limiter.run(async () => {
        let ports;
        try {
          ports = await ctx.client.listInstancePorts(projectId, regionId, instanceId);
        } catch (err) {
          // Deleted since the instance snapshot was taken: it has no ports to list any more.
          if (isNotFound(err)) {
            vanished++;
            return;
          }
          throw err;
        }
        // Each instance is asked once; a port it lists twice is stored once.
        const seen = new Set<string>();
        for (const port of ports.results) if (firstSighting(seen, port.id)) buffer.push(mapPort(instanceId, port, rc));
        if (buffer.length >= FLUSH_ROWS) await flush();
      });
    });
    await flush();
    if (vanished > 0) {
      ctx.logger.info({ scope: unit.scopeKey, vanished }, 'instances gone since their snapshot were skipped by the ports collector');
    }
  },
};
