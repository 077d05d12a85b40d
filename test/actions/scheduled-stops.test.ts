import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  cancelScheduledStop,
  getScheduledStop,
  notifyScheduled,
  runDueStops,
  scheduleStops,
  startDueStopsScheduler,
  type InstanceRef,
  type ScheduledStopsDeps,
} from '../../src/actions/index.js';
import { sendWebhook } from '../../src/actions/notify.js';
import type { CloudClient } from '../../src/cloud/client.js';
import type { Config } from '../../src/config/index.js';
import type { Database } from '../../src/db/connection.js';
import { scheduledStopsReport } from '../../src/reports/idle-scheduled.js';
import type { Simulator } from '../../src/simulator/index.js';
import type { SimInstance } from '../../src/simulator/model.js';
import { createLogger } from '../../src/logger.js';
import { testDatabases } from '../helpers/databases.js';
import { clientOf, runningVms, seedFromSimulator, SIM_NOW, startTestSimulator, startWebhookReceiver, testConfig, type WebhookReceiver } from './helpers.js';

const OPERATOR = { name: 'olivia', role: 'operator' };
const HOUR = 3_600_000;
const refOf = (i: SimInstance): InstanceRef => ({ projectId: i.projectId, regionId: i.regionId, instanceId: i.id });

describe.each(testDatabases())('scheduled stops on $name', ({ open }) => {
  let db: Database;
  let sim: Simulator;
  let client: CloudClient;
  let hook: WebhookReceiver;
  let config: Config;
  let deps: ScheduledStopsDeps & { client: CloudClient };

  beforeEach(async () => {
    [db, sim, hook] = await Promise.all([open(), startTestSimulator(), startWebhookReceiver()]);
    client = clientOf(sim);
    config = testConfig({ notifications: { webhook_url: hook.url, timeout_ms: 500, retries: 2, app_url: 'https://cloudtally.example.com/', allow_private_network: true } });
    await seedFromSimulator(db, sim, config);
    deps = { db, client, config, notify: { backoffMs: 5 } };
  });
  afterEach(async () => {
    await client.close();
    await Promise.all([db.close(), sim.close(), hook.close()]);
  });

  const owned = () => runningVms(sim).find((i) => i.tags.some((t) => t.key === 'owner'))!;
  const unowned = () => runningVms(sim).find((i) => !i.tags.some((t) => t.key.toLowerCase() === 'owner'))!;
  const stopPosts = () => sim.requestLog.filter((r) => r.method === 'POST' && r.path.endsWith('/stop'));
  const auditRows = () => db.query<{ actor: string; role: string; action: string; instance_id: string; result: string; reason: string }>('select actor, role, action, instance_id, result, reason from audit_log order by id');

  it('marks instances, warns the owner and the operators, and stops them only when due', async () => {
    const a = owned();
    const b = unowned();
    const ownerOfA = a.tags.find((t) => t.key === 'owner')!.value;
    const { scheduled, skipped } = await scheduleStops(deps, { actor: OPERATOR, reason: 'idle GPUs over the weekend', refs: [refOf(a), refOf(b)], now: SIM_NOW });
    expect(skipped).toEqual([]);
    expect(scheduled.map((s) => [s.ref.instanceId, s.owner, s.dueAt.toISOString(), s.status])).toEqual([
      [a.id, ownerOfA, new Date(SIM_NOW.getTime() + 24 * HOUR).toISOString(), 'pending'],
      [b.id, null, new Date(SIM_NOW.getTime() + 24 * HOUR).toISOString(), 'pending'],
    ]);

    const notices = await notifyScheduled(deps, scheduled);
    expect(notices.map((n) => n.status)).toEqual(['sent', 'sent']); // one message per owner
    await hook.waitFor(2);
    const toOwner = hook.received.find((m) => m.text.includes(`Owner: ${ownerOfA}`))!;
    expect(toOwner.text).toContain(a.name);
    expect(toOwner.text).toContain('2024-05-18 10:30 UTC');
    expect(toOwner.text).toContain('marked by olivia (operator): idle GPUs over the weekend');
    expect(toOwner.text).toContain('https://cloudtally.example.com/reports/scheduled-stops');
    expect(hook.received.find((m) => m.text.includes('Owner: unknown (no "owner" tag)'))!.text).toContain(b.name);
    expect((await getScheduledStop(db, scheduled[0]!.id))!.notices).toMatchObject([{ event: 'scheduled', status: 'sent', attempts: 1, error: null }]);

    sim.clearRequestLog();
    expect(await runDueStops(deps, new Date(SIM_NOW.getTime() + 23 * HOUR))).toEqual({ stops: [], outcomes: [] });
    expect(stopPosts()).toEqual([]);
    expect(sim.state.instance(a.id)!.status).toBe('ACTIVE');

    const ran = await runDueStops(deps, new Date(SIM_NOW.getTime() + 24 * HOUR + 60_000));
    expect(ran.outcomes.map((o) => [o.ref.instanceId, o.result])).toEqual([
      [a.id, 'stopped'],
      [b.id, 'stopped'],
    ]);
    expect(ran.stops.map((s) => [s.status, s.result])).toEqual([
      ['done', 'stopped'],
      ['done', 'stopped'],
    ]);
    expect(sim.state.instance(a.id)!.status).toBe('SHUTOFF');
    expect(sim.state.instance(b.id)!.status).toBe('SHUTOFF');
    expect(stopPosts()).toHaveLength(2);

    const audit = await auditRows();
    expect(audit.map((r) => [r.action, r.actor, r.instance_id, r.result])).toEqual([
      ['schedule_stop', 'olivia', a.id, 'scheduled'],
      ['schedule_stop', 'olivia', b.id, 'scheduled'],
      ['stop', 'scheduler', a.id, 'stopped'],
      ['stop', 'scheduler', b.id, 'stopped'],
    ]);
    expect(audit[2]!.reason).toMatch(new RegExp(`^scheduled stop #${scheduled[0]!.id}, marked by olivia \\(operator\\) at .*: idle GPUs over the weekend`));

    // The owners hear about the outcome too; and a second run finds nothing left to do.
    await hook.waitFor(4);
    expect(hook.received.slice(2).map((m) => m.text).join('\n')).toMatch(/cloudtally ran 1 scheduled stop:[\s\S]*stopped/);
    expect((await runDueStops(deps, new Date(SIM_NOW.getTime() + 48 * HOUR))).stops).toEqual([]);
    expect(stopPosts()).toHaveLength(2);
  });

  it('can be cancelled before it runs, and then never runs', async () => {
    const a = owned();
    const { scheduled } = await scheduleStops(deps, { actor: OPERATOR, reason: 'weekend', refs: [refOf(a)], graceHours: 2, now: SIM_NOW });
    const cancel = await cancelScheduledStop(deps, { id: scheduled[0]!.id, actor: { name: 'oscar', role: 'admin' }, now: new Date(SIM_NOW.getTime() + HOUR) });
    expect(cancel.cancelled).toBe(true);
    expect(cancel.stop).toMatchObject({ status: 'cancelled', cancelledBy: 'oscar' });

    sim.clearRequestLog();
    expect((await runDueStops(deps, new Date(SIM_NOW.getTime() + 3 * HOUR))).stops).toEqual([]);
    expect(stopPosts()).toEqual([]);
    expect(sim.state.instance(a.id)!.status).toBe('ACTIVE');

    const again = await cancelScheduledStop(deps, { id: scheduled[0]!.id, actor: OPERATOR });
    expect(again).toMatchObject({ cancelled: false, stop: { status: 'cancelled' } });
    expect((await auditRows()).map((r) => [r.action, r.actor, r.result])).toEqual([
      ['schedule_stop', 'olivia', 'scheduled'],
      ['cancel_scheduled_stop', 'oscar', 'cancelled'],
    ]);
    // Once cancelled, the instance can be marked again.
    expect((await scheduleStops(deps, { actor: OPERATOR, reason: 'again', refs: [refOf(a)], now: SIM_NOW })).scheduled).toHaveLength(1);
  });

  it('skips what it cannot mark, saying why: not running, unknown, already marked', async () => {
    const stopped = sim.state.scopes().flatMap((s) => sim.state.instances(s.project_id, s.region_id)).find((i) => i.status === 'SHUTOFF')!;
    const a = owned();
    const unknown: InstanceRef = { projectId: a.projectId, regionId: a.regionId, instanceId: 'no-such-instance' };
    await scheduleStops(deps, { actor: OPERATOR, reason: 'first', refs: [refOf(a)], now: SIM_NOW });
    const { scheduled, skipped } = await scheduleStops(deps, { actor: OPERATOR, reason: 'second', refs: [refOf(a), refOf(stopped), unknown], now: SIM_NOW });
    expect(scheduled).toEqual([]);
    expect(skipped.map((s) => [s.refText.split(':')[2], s.why.split(/[:(]/)[0]!.trim()])).toEqual([
      [a.id, 'already marked to be stopped at 2024-05-18T10'],
      [stopped.id, 'already SHUTOFF'],
      ['no-such-instance', 'not in the collected data'],
    ]);
  });

  it('records webhook failures with the error, retried and visible in the scheduled-stops report', async () => {
    hook.answer = 500;
    const a = owned();
    const { scheduled } = await scheduleStops(deps, { actor: OPERATOR, reason: 'weekend', refs: [refOf(a)], now: SIM_NOW });
    const [notice] = await notifyScheduled(deps, scheduled);
    expect(notice).toMatchObject({ event: 'scheduled', status: 'failed', attempts: 3 });
    // The receiver's answer ("nope") is not kept: its status and length are.
    expect(notice!.error).toMatch(/^webhook at 127\.0\.0\.1:\d+ answered 500, body of 4 bytes not kept \(after 3 attempts\)$/);
    expect(notice!.error).not.toContain('secret-token');

    const out = await scheduledStopsReport.run({ db, config, now: SIM_NOW }, {}, { limit: 50, offset: 0 });
    expect(out.rows).toHaveLength(1);
    expect(out.rows[0]).toMatchObject({ id: scheduled[0]!.id, notice_failed: true, cancellable: true, status: 'pending' });
    expect(String(out.rows[0]!.notices)).toContain('scheduled: FAILED after 3 attempts (webhook at');
    expect(out.notes.join(' ')).toContain('1 of these could not be announced through the webhook');
    const failedOnly = await scheduledStopsReport.run({ db, config, now: SIM_NOW }, { notices: 'failed' }, { limit: 50, offset: 0 });
    expect(failedOnly.totalRows).toBe(1);
  });

  it('gives up on a webhook that does not answer in time, and retries 429 and 5xx only', async () => {
    let calls = 0;
    hook.answer = () => (++calls === 1 ? 503 : 200);
    expect(await sendWebhook(config.notifications, 'hello', { backoffMs: 5 })).toEqual({ status: 'sent', attempts: 2, error: null });
    hook.answer = 404;
    expect(await sendWebhook(config.notifications, 'hello', { backoffMs: 5 })).toMatchObject({ status: 'failed', attempts: 1 });
    hook.hang = true;
    const timedOut = await sendWebhook({ ...config.notifications!, timeoutMs: 100, retries: 1 }, 'hello', { backoffMs: 5 });
    expect(timedOut).toEqual({ status: 'failed', attempts: 2, error: expect.stringMatching(/^webhook at 127\.0\.0\.1:\d+ did not answer within 100 ms \(after 2 attempts\)$/) });
    expect(await sendWebhook(null, 'hello')).toEqual({ status: 'not_configured', attempts: 0, error: null });
  });

  it('runs each due stop once when two schedulers run at the same time', async () => {
    const vms = runningVms(sim).slice(0, 3);
    await scheduleStops(deps, { actor: OPERATOR, reason: 'batch', refs: vms.map(refOf), graceHours: 1, now: SIM_NOW });
    sim.clearRequestLog();
    const later = new Date(SIM_NOW.getTime() + 2 * HOUR);
    const [x, y] = await Promise.all([runDueStops(deps, later), runDueStops(deps, later)]);
    expect(x.stops.length + y.stops.length).toBe(3);
    expect(stopPosts()).toHaveLength(3);
    expect(vms.every((i) => sim.state.instance(i.id)!.status === 'SHUTOFF')).toBe(true);
  });

  it('performs due stops on its schedule until stopped', async () => {
    const [a] = runningVms(sim);
    const { scheduled } = await scheduleStops(deps, { actor: OPERATOR, reason: 'soon', refs: [refOf(a!)], graceHours: 0, now: SIM_NOW });
    const scheduler = startDueStopsScheduler({ ...deps, logger: createLogger({ level: 'silent' }) }, { expression: '* * * * * *', now: () => new Date(SIM_NOW.getTime() + 1000) });
    try {
      await vi.waitFor(async () => expect((await getScheduledStop(db, scheduled[0]!.id))!.status).toBe('done'), { timeout: 5_000, interval: 50 });
    } finally {
      await scheduler.stop();
    }
    expect(await getScheduledStop(db, scheduled[0]!.id)).toMatchObject({ status: 'done', result: 'stopped' });
    expect(sim.state.instance(a!.id)!.status).toBe('SHUTOFF');
  });
});
