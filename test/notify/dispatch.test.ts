/**
 * The outbox's dispatcher against a real SMTP server (smtp-server) and a real HTTP receiver, on
 * both databases: the documented webhook body and its signature (recomputed here), mail with its
 * attachment, retries with exponential backoff, failure shown in collection health and in the
 * metrics, and once-only delivery with two dispatchers.
 */
import { createHmac } from 'node:crypto';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../src/config/index.js';
import type { Database } from '../../src/db/connection.js';
import { silentLogger } from '../../src/logger.js';
import { createDispatcher } from '../../src/notify/dispatcher.js';
import type { OutgoingMessage } from '../../src/notify/message.js';
import { enqueueMessage } from '../../src/notify/outbox.js';
import { createMetrics } from '../../src/ops/metrics.js';
import { testDatabases } from '../helpers/databases.js';
import { startReportsApp } from '../reports/helpers.js';
import { startSmtpReceiver, startWebhookReceiver, type SmtpReceiver, type WebhookReceiver } from './helpers.js';

const SECRET = 'hook-secret-0123456789';
const T0 = new Date('2026-11-02T09:00:00Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);

function configFor(smtp: SmtpReceiver, hook: WebhookReceiver, outbox: Record<string, number> = {}): Config {
  return loadConfig(
    { CLOUDTALLY_CONFIG: 'c.json', CLOUDTALLY_SMTP_URL: smtp.url, CLOUDTALLY_MAIL_FROM: 'Cloudtally <cloudtally@example.com>', FINANCE_HOOK_SECRET: SECRET },
    {
      readFile: () =>
        JSON.stringify({
          channels: [
            { name: 'finance-hook', type: 'webhook', url: hook.url, secret_env: 'FINANCE_HOOK_SECRET', allow_private_network: true },
            { name: 'finance-mail', type: 'email', to: ['finance@example.com', 'cfo@example.com'], allow_private_network: true },
          ],
          outbox: { first_retry_seconds: 30, max_retry_seconds: 3600, max_attempts: 4, ...outbox },
        }),
    },
  );
}

const alert: OutgoingMessage = {
  key: 'budget:ML team:2026-11:actual:80',
  channels: ['finance-hook', 'finance-mail'],
  subject: 'Budget "ML team" passed 80% of EUR 50000.00',
  text: 'Spend to date EUR 40125.50 (80.3%), forecast for the month end EUR 61000.00.',
  data: { budget: 'ML team', spend: '40125.50', threshold: 80 },
  link: 'https://cloudtally.example.com/reports/budgets',
  attachment: { filename: 'top.csv', contentType: 'text/csv', content: 'group,cost\r\nml,40125.50\r\n' },
};

describe.each(testDatabases())('notification dispatch on $name', ({ open }) => {
  let db: Database;
  let smtp: SmtpReceiver;
  let hook: WebhookReceiver;

  beforeEach(async () => {
    [db, smtp, hook] = await Promise.all([open(), startSmtpReceiver(), startWebhookReceiver()]);
  }, 60_000);
  afterEach(async () => {
    await Promise.all([db?.close(), smtp?.close(), hook?.close()]);
  });

  const deliveries = () =>
    db.query<{ channel: string; status: string; attempts: number; next_attempt_at: Date; sent_at: Date | null; last_error: string | null }>(
      'select channel, status, attempts, next_attempt_at, sent_at, last_error from notify_deliveries order by channel',
    );

  it('posts the documented, signed JSON body and mails the message with its attachment', async () => {
    const config = configFor(smtp, hook);
    const dispatcher = createDispatcher({ db, config, logger: silentLogger() });
    expect(await enqueueMessage(db, alert)).toBe(true);
    expect(await dispatcher.dispatch(T0)).toEqual({ sent: 2, retrying: 0, failed: 0 });
    dispatcher.close();

    expect(hook.posts).toHaveLength(1);
    const post = hook.posts[0]!;
    expect(post.headers['content-type']).toBe('application/json');
    const timestamp = String(T0.getTime() / 1000);
    expect(post.headers['x-cloudtally-timestamp']).toBe(timestamp);
    // The receiver's check: HMAC-SHA256 of "<timestamp>.<raw body>" with the shared secret.
    expect(post.headers['x-cloudtally-signature']).toBe(`sha256=${createHmac('sha256', SECRET).update(`${timestamp}.${post.body}`).digest('hex')}`);
    expect(JSON.parse(post.body)).toEqual({
      text: `${alert.subject}\n\n${alert.text}\n\n${alert.link}`,
      subject: alert.subject,
      key: alert.key,
      link: alert.link,
      data: alert.data,
      sent_at: '2026-11-02T09:00:00.000Z',
    });

    expect(smtp.mails).toHaveLength(1);
    const mail = smtp.mails[0]!;
    expect(mail.from).toBe('cloudtally@example.com');
    expect(mail.to.sort()).toEqual(['cfo@example.com', 'finance@example.com']);
    expect(mail.subject).toBe(alert.subject);
    expect(mail.text.replace(/\r\n/g, '\n').trim()).toBe(`${alert.subject}\n\n${alert.text}\n\n${alert.link}`);
    expect(mail.headers['x-cloudtally-key']).toBe(alert.key);
    expect(mail.attachments.map((a) => [a.filename, a.contentType, a.content.toString('utf8')])).toEqual([['top.csv', 'text/csv', 'group,cost\r\nml,40125.50\r\n']]);

    expect((await deliveries()).map((d) => [d.channel, d.status, d.attempts, d.sent_at?.toISOString(), d.last_error])).toEqual([
      ['finance-hook', 'sent', 1, '2026-11-02T09:00:00.000Z', null],
      ['finance-mail', 'sent', 1, '2026-11-02T09:00:00.000Z', null],
    ]);
    // Nothing left: another round sends nothing.
    expect(await createDispatcher({ db, config, logger: silentLogger() }).dispatch(at(3600))).toEqual({ sent: 0, retrying: 0, failed: 0 });
  });

  it('retries with exponential backoff: the receiver fails twice, then takes it', async () => {
    hook.plan.push(503, 503);
    const config = configFor(smtp, hook);
    const dispatcher = createDispatcher({ db, config, logger: silentLogger() });
    await enqueueMessage(db, { ...alert, channels: ['finance-hook'] });

    expect(await dispatcher.dispatch(T0)).toEqual({ sent: 0, retrying: 1, failed: 0 });
    let [d] = await deliveries();
    // First retry after first_retry_seconds (30 s).
    expect([d!.status, d!.attempts, d!.next_attempt_at.toISOString()]).toEqual(['pending', 1, at(30).toISOString()]);
    expect(d!.last_error).toBe(`webhook at ${new URL(hook.url).host} answered 503, body of 9 bytes not kept`);

    // Not due yet: nothing is sent.
    expect(await dispatcher.dispatch(at(29))).toEqual({ sent: 0, retrying: 0, failed: 0 });
    expect(hook.posts).toHaveLength(1);

    expect(await dispatcher.dispatch(at(30))).toEqual({ sent: 0, retrying: 1, failed: 0 });
    [d] = await deliveries();
    // The pause doubles: 60 s after the second failure.
    expect([d!.status, d!.attempts, d!.next_attempt_at.toISOString()]).toEqual(['pending', 2, at(90).toISOString()]);

    expect(await dispatcher.dispatch(at(90))).toEqual({ sent: 1, retrying: 0, failed: 0 });
    [d] = await deliveries();
    // The last failure stays on record after the delivery recovered (the alert history shows it).
    expect([d!.status, d!.attempts, d!.sent_at?.toISOString(), d!.last_error]).toEqual(['sent', 3, at(90).toISOString(), `webhook at ${new URL(hook.url).host} answered 503, body of 9 bytes not kept`]);
    expect(hook.posts).toHaveLength(3);
    // Each attempt carries the same message key (receivers can de-duplicate on it).
    expect(new Set(hook.posts.map((p) => (JSON.parse(p.body) as { key: string }).key))).toEqual(new Set([alert.key]));
    dispatcher.close();
  });

  it('marks a delivery failed after the last attempt, shows it in collection health and the metrics, and never shows the URL', async () => {
    hook.plan.push(500, 500);
    const config = configFor(smtp, hook, { max_attempts: 2 });
    const dispatcher = createDispatcher({ db, config, logger: silentLogger() });
    await enqueueMessage(db, { ...alert, channels: ['finance-hook'] });
    await dispatcher.dispatch(T0);
    expect(await dispatcher.dispatch(at(30))).toEqual({ sent: 0, retrying: 0, failed: 1 });
    expect(await dispatcher.dispatch(at(100_000))).toEqual({ sent: 0, retrying: 0, failed: 0 });
    const [d] = await deliveries();
    expect([d!.status, d!.attempts]).toEqual(['failed', 2]);
    expect(hook.posts).toHaveLength(2);

    const app = await startReportsApp(() => ({ db, config, now: at(60) }));
    try {
      const res = await request(`${app.base}/api/reports/collection-health?view=notifications`);
      const body = (await res.body.json()) as { rows: Array<Record<string, unknown>>; summary: Array<{ label: string; value: unknown }>; notes: string[] };
      expect(res.statusCode).toBe(200);
      expect(body.rows).toEqual([
        {
          key: alert.key,
          channel: 'finance-hook',
          status: 'failed',
          attempts: 2,
          created_at: expect.any(String),
          next_attempt_at: null,
          last_error: `webhook at ${new URL(hook.url).host} answered 500, body of 9 bytes not kept (after 2 attempts)`,
        },
      ]);
      expect(body.summary.find((s) => s.label === 'Failed notifications, last 7 days')?.value).toBe(1);
      expect(body.notes.some((n) => n.includes('finance-hook (1 failed, 0 overdue)'))).toBe(true);
      const html = await (await request(`${app.base}/reports/collection-health?view=notifications`)).body.text();
      expect(html).toContain('answered 500');
      expect(html).not.toContain('s3cr3t');
      expect(JSON.stringify(body)).not.toContain('s3cr3t');
    } finally {
      await app.close();
    }

    const metrics = createMetrics({ database: db, defaultMetrics: false, outbox: { overdueMinutes: 30 } });
    const text = await metrics.text();
    expect(text).toContain('cloudtally_notification_deliveries{channel="finance-hook",state="failed"} 1');
    expect(text).toContain('cloudtally_notification_deliveries{channel="finance-hook",state="pending"} 0');
    dispatcher.close();
  });

  it('a refusal that will not change (4xx) fails at once; a message for a channel no longer configured fails too', async () => {
    hook.plan.push(404);
    const config = configFor(smtp, hook);
    const dispatcher = createDispatcher({ db, config, logger: silentLogger() });
    await enqueueMessage(db, { ...alert, channels: ['finance-hook', 'old-channel'] });
    expect(await dispatcher.dispatch(T0)).toEqual({ sent: 0, retrying: 0, failed: 2 });
    expect((await deliveries()).map((d) => [d.channel, d.status, d.attempts, d.last_error])).toEqual([
      ['finance-hook', 'failed', 1, `webhook at ${new URL(hook.url).host} answered 404, body of 9 bytes not kept`],
      ['old-channel', 'failed', 1, 'channel "old-channel" is not configured (any more)'],
    ]);
    dispatcher.close();
  });

  it('sends once: the same key enqueued twice, two dispatchers at the same time', async () => {
    const config = configFor(smtp, hook);
    const a = createDispatcher({ db, config, logger: silentLogger(), claimant: 'replica-a' });
    const b = createDispatcher({ db, config, logger: silentLogger(), claimant: 'replica-b' });
    expect(await Promise.all([enqueueMessage(db, alert), enqueueMessage(db, alert)])).toEqual(expect.arrayContaining([true, false]));
    const [ra, rb] = await Promise.all([a.dispatch(T0), b.dispatch(T0)]);
    expect(ra.sent + rb.sent).toBe(2);
    expect(smtp.mails).toHaveLength(1);
    expect(hook.posts).toHaveLength(1);
    a.close();
    b.close();
  });

  it('mail failures name the SMTP host, never the password', async () => {
    await smtp.close();
    const config = loadConfig(
      { CLOUDTALLY_CONFIG: 'c.json', CLOUDTALLY_SMTP_URL: `smtp://alerts:pa55word@${new URL(smtp.url).host}` },
      { readFile: () => JSON.stringify({ channels: [{ name: 'finance-mail', type: 'email', to: ['finance@example.com'], allow_private_network: true }], outbox: { timeout_ms: 2000 } }) },
    );
    const dispatcher = createDispatcher({ db, config, logger: silentLogger() });
    await enqueueMessage(db, { ...alert, channels: ['finance-mail'] });
    expect(await dispatcher.dispatch(T0)).toEqual({ sent: 0, retrying: 1, failed: 0 });
    const [d] = await deliveries();
    expect(d!.last_error).toMatch(new RegExp(`^mail through ${new URL(smtp.url).host.replace(/\./g, '\\.')} failed: `));
    expect(d!.last_error).not.toContain('pa55word');
    dispatcher.close();
  });
});
