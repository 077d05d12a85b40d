import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendAudit, type AuditEntry } from '../../src/actions/audit.js';
import type { Database } from '../../src/db/connection.js';
import { auditReport, type AuditParams } from '../../src/reports/audit.js';
import type { Row } from '../../src/reports/report.js';
import { testDatabases } from '../helpers/databases.js';
import { testConfig } from './helpers.js';

const config = testConfig();

const entry = (over: Partial<AuditEntry>): AuditEntry => ({
  at: new Date('2024-05-10T12:00:00Z'),
  actor: 'olivia',
  role: 'operator',
  action: 'stop',
  instanceId: 'i-1',
  projectId: 1,
  regionId: 2,
  reason: 'idle',
  dryRun: false,
  result: 'stopped',
  error: null,
  taskIds: [],
  ...over,
});

describe.each(testDatabases())('audit report on $name', ({ open }) => {
  let db: Database;

  beforeAll(async () => {
    db = await open();
    await appendAudit(db, entry({ at: new Date('2024-05-09T23:59:59Z'), instanceId: 'i-1', taskIds: ['t-1'] }));
    await appendAudit(db, entry({ at: new Date('2024-05-10T00:00:00Z'), actor: 'oscar', role: 'admin', instanceId: 'i-2', result: 'failed', error: 'stopInstance: POST ... answered 503' }));
    await appendAudit(db, entry({ at: new Date('2024-05-11T23:59:59Z'), instanceId: 'i-3', dryRun: true, result: 'would_stop' }));
    await appendAudit(db, entry({ at: new Date('2024-05-12T00:00:00Z'), actor: 'scheduler', role: 'system', instanceId: 'i-1', result: 'not_found' }));
    // The name comes from what the collectors saw of the instance.
    await db.execute(`insert into resource_presence (kind, scope_key, resource_id, name, first_seen_at, last_seen_at) values ('instance', 'p1-r2', 'i-1', 'web-1', now(), now())`);
  });
  afterAll(async () => {
    await db?.close();
  });

  const run = async (query: Record<string, string>) => {
    const params = (await auditReport.params.parseAsync(query)) as AuditParams;
    return auditReport.run({ db, config, now: new Date('2024-05-17T00:00:00Z') }, params, { limit: 2, offset: 0 });
  };

  it('lists every attempt newest first, with the instance name, and pages', async () => {
    const out = await run({});
    expect(out.totalRows).toBe(4);
    expect(out.rows.map((r) => [r.instance_id, r.result, r.outcome])).toEqual([
      ['i-1', 'not_found', 'No longer exists (no-op)'],
      ['i-3', 'would_stop', 'Would be stopped (dry run)'],
    ]);
    expect(out.rows[0]!.instance_name).toBe('web-1');
  });

  it('filters by actor, result, instance, dry run and an inclusive UTC date range', async () => {
    expect((await run({ actor: 'oscar' })).rows.map((r) => r.instance_id)).toEqual(['i-2']);
    expect((await run({ result: 'failed' })).rows.map((r) => r.error)).toEqual(['stopInstance: POST ... answered 503']);
    expect((await run({ instance: 'i-1' })).totalRows).toBe(2);
    expect((await run({ dry_run: 'yes' })).rows.map((r) => r.instance_id)).toEqual(['i-3']);
    const range = await run({ from: '2024-05-10', to: '2024-05-11' });
    expect(range.totalRows).toBe(2);
    expect(range.rows.map((r) => r.instance_id)).toEqual(['i-3', 'i-2']);
    await expect(auditReport.params.parseAsync({ from: '2024-05-12', to: '2024-05-10' })).rejects.toThrow(/from must not be after to/);
    await expect(auditReport.params.parseAsync({ result: 'deleted' })).rejects.toThrow(/result must be one of/);
  });

  it('exports every matching row (keyset pages), the same filters as the page', async () => {
    const params = (await auditReport.params.parseAsync({ actor: 'olivia' })) as AuditParams;
    const file = await auditReport.export({ db, config, now: new Date() }, params);
    const rows: Row[] = [];
    for await (const row of file.rows) rows.push(row);
    expect(rows.map((r) => r.instance_id)).toEqual(['i-3', 'i-1']);
    expect(rows[1]!.task_ids).toEqual(['t-1']);
    expect(file.columns.map((c) => c.key)).toContain('reason');
  });
});
