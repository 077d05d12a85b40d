import { afterEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/connection.js';
import { enqueueMessage } from '../../src/notify/outbox.js';
import { testDatabases } from '../helpers/databases.js';

const message = {
  key: 'budget:ML team:2026-11:actual:80',
  channels: ['finance-hook', 'finance-mail'],
  subject: 'ML team at 80% of its budget',
  text: 'ML team has spent 40000.00 EUR of 50000.00 EUR',
  data: { budget: 'ML team', spend: '40000.00' },
  link: 'https://cloudtally.example.com/reports/budgets',
};

describe.each(testDatabases())('outbox on $name', ({ open }) => {
  let db: Database | undefined;
  afterEach(async () => {
    await db?.close();
    db = undefined;
  });

  it('queues a message once per key, with one pending delivery per channel', async () => {
    db = await open();
    expect(await enqueueMessage(db, message)).toBe(true);
    expect(await enqueueMessage(db, { ...message, subject: 'changed' })).toBe(false);
    const messages = await db.query<{ key: string; payload: { subject: string; link: string } }>('select key, payload from notify_messages');
    expect(messages).toEqual([{ key: message.key, payload: expect.objectContaining({ subject: message.subject, link: message.link }) }]);
    const deliveries = await db.query('select channel, status, attempts from notify_deliveries order by channel');
    expect(deliveries).toEqual([
      { channel: 'finance-hook', status: 'pending', attempts: 0 },
      { channel: 'finance-mail', status: 'pending', attempts: 0 },
    ]);
  });

  it('two concurrent enqueues of one key create it once', async () => {
    db = await open();
    const d = db;
    const results = await Promise.all([enqueueMessage(d, message), enqueueMessage(d, message), d.transaction((tx) => enqueueMessage(tx, message))]);
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await d.query('select count(*)::int as n from notify_deliveries')).toEqual([{ n: 2 }]);
  });
});
