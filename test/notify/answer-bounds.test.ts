/**
 * What a channel answers is read only so far: a webhook answering 500 MB has a few KB of it read
 * (the delivery settles at once, its stored error short); an SMTP server that never ends its
 * greeting is cut off past `outbox.max_smtp_answer_bytes`, one that trickles it at the
 * conversation's deadline. Mail over TLS (smtps, STARTTLS) still goes through the metered socket.
 */
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import type { Database } from '../../src/db/connection.js';
import { silentLogger } from '../../src/logger.js';
import { createDispatcher } from '../../src/notify/dispatcher.js';
import { createMailer } from '../../src/notify/email.js';
import type { OutgoingMessage } from '../../src/notify/message.js';
import { enqueueMessage, type StoredMessage } from '../../src/notify/outbox.js';
import { testDatabases } from '../helpers/databases.js';

const MB = 1024 * 1024;
const T0 = new Date('2026-11-02T09:00:00Z');

const notice: OutgoingMessage = {
  key: 'budget:ML team:2026-11:actual:80',
  channels: ['finance-hook'],
  subject: 'Budget "ML team" passed 80%',
  text: 'Spend to date EUR 40125.50.',
  data: { budget: 'ML team' },
};

/** A webhook receiver that answers `status` with `totalBytes` of text, as fast as the client reads. */
async function startHugeAnswerer(status: number, totalBytes: number): Promise<{ url: string; written: () => number; close(): Promise<void> }> {
  let written = 0;
  const server: Server = createHttpServer((req, res) => {
    req.resume();
    req.on('end', async () => {
      res.writeHead(status, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(MB, 'x');
      while (written < totalBytes && !res.destroyed) {
        written += chunk.length;
        if (!res.write(chunk)) await new Promise((resolve) => res.once('drain', resolve).once('close', resolve));
      }
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/finance?token=s3cr3t`,
    written: () => written,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe.each(testDatabases())('webhook answers of 500 MB ($name)', ({ open }) => {
  let db: Database;
  let hook: Awaited<ReturnType<typeof startHugeAnswerer>> | undefined;
  beforeEach(async () => {
    db = await open();
  });
  afterEach(async () => {
    await Promise.all([db?.close(), hook?.close()]);
    hook = undefined;
  });

  for (const status of [503, 200]) {
    it(`${status}: the delivery settles at once, having read a few KB of the answer; the stored error is short`, async () => {
      hook = await startHugeAnswerer(status, 500 * MB);
      const config = loadConfig(
        { CLOUDTALLY_CONFIG: 'c.json' },
        { readFile: () => JSON.stringify({ channels: [{ name: 'finance-hook', type: 'webhook', url: hook!.url, allow_private_network: true }], outbox: { timeout_ms: 20_000 } }) },
      );
      await enqueueMessage(db, notice);
      const dispatcher = createDispatcher({ db, config, logger: silentLogger() });
      const started = Date.now();
      const result = await dispatcher.dispatch(T0);
      const ms = Date.now() - started;
      dispatcher.close();
      // The rest was never read: the receiver got no further than what sockets buffer.
      expect(hook.written()).toBeLessThan(64 * MB);
      expect(ms).toBeLessThan(3_000);
      expect(result).toEqual(status === 200 ? { sent: 1, retrying: 0, failed: 0 } : { sent: 0, retrying: 1, failed: 0 });
      const [delivery] = await db.query<{ last_error: string | null }>('select last_error from notify_deliveries');
      expect((delivery!.last_error ?? '').length).toBeLessThan(300);
    }, 60_000);
  }
});

// ---- SMTP

const mail: StoredMessage = { key: 'k-1', channels: ['finance-mail'], subject: 'Subject', text: 'Text', data: {}, link: null, attachment: null } as unknown as StoredMessage;
const channel = { name: 'finance-mail', type: 'email' as const, to: ['finance@example.com'], allowPrivateNetwork: true };

/** A TCP server that runs `talk` on each connection. */
async function startTcp(talk: (socket: Socket) => void): Promise<{ host: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: TcpServer = createTcpServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    talk(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    host: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

describe('SMTP answers', () => {
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    await Promise.all(closers.splice(0).map((close) => close()));
  });

  it('a greeting that never ends is cut off past max_smtp_answer_bytes, at once', async () => {
    let sent = 0;
    const server = await startTcp((socket) => {
      const line = Buffer.from(`220-${'x'.repeat(1000)}\r\n`.repeat(64));
      const pump = () => {
        while (!socket.destroyed && socket.write(line)) sent += line.length;
      };
      socket.on('drain', pump);
      pump();
    });
    closers.push(server.close);
    const mailer = createMailer({ url: `smtp://${server.host}`, host: server.host, from: 'cloudtally@example.com' }, { timeoutMs: 10_000, maxAnswerBytes: 65_536 });
    const started = Date.now();
    const result = await mailer.send(channel, 'k-1', mail);
    mailer.close();
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(result).toEqual({
      ok: false,
      status: null,
      retryable: true,
      error: `mail through ${server.host} failed: the server sent more than 65536 bytes (outbox.max_smtp_answer_bytes); the rest was not read`,
    });
    expect(sent).toBeLessThan(64 * MB);
  });

  it('a reply that trickles forever ends at the conversation deadline (5 x outbox.timeout_ms)', async () => {
    // Greets, then answers EHLO with a line every 50 ms and never the last one: never silent for
    // long enough to time out a step.
    const server = await startTcp((socket) => {
      socket.write('220 mail.example.com ESMTP\r\n');
      socket.once('data', () => {
        const timer = setInterval(() => socket.write('250-still answering\r\n'), 50);
        socket.on('close', () => clearInterval(timer));
      });
    });
    closers.push(server.close);
    const mailer = createMailer({ url: `smtp://${server.host}`, host: server.host, from: 'cloudtally@example.com' }, { timeoutMs: 400, maxAnswerBytes: 65_536 });
    const started = Date.now();
    const result = await mailer.send(channel, 'k-1', mail);
    mailer.close();
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(result.error).toBe(`mail through ${server.host} failed: the conversation did not end within 2000 ms (5 x outbox.timeout_ms)`);
  });

  it('a server that never greets fails within outbox.timeout_ms', async () => {
    const server = await startTcp(() => undefined);
    closers.push(server.close);
    const mailer = createMailer({ url: `smtp://${server.host}`, host: server.host, from: 'cloudtally@example.com' }, { timeoutMs: 400, maxAnswerBytes: 65_536 });
    const started = Date.now();
    const result = await mailer.send(channel, 'k-1', mail);
    mailer.close();
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(result.error).toMatch(/^mail through 127\.0\.0\.1:\d+ failed: ETIMEDOUT \((Greeting never received|Timeout)\)$/);
  });

  for (const tls of ['smtps', 'STARTTLS'] as const) {
    it(`mail over ${tls} goes through the metered socket`, async () => {
      const received: string[] = [];
      const server = new SMTPServer({
        secure: tls === 'smtps',
        authOptional: true,
        disableReverseLookup: true,
        logger: false,
        onData(stream, _session, callback) {
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('end', () => {
            received.push(Buffer.concat(chunks).toString('utf8'));
            callback();
          });
        },
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
      closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
      const host = `127.0.0.1:${(server.server.address() as AddressInfo).port}`;
      const url = `${tls === 'smtps' ? 'smtps' : 'smtp'}://${host}?tls.rejectUnauthorized=false${tls === 'STARTTLS' ? '&requireTLS=true' : ''}`;
      const mailer = createMailer({ url, host, from: 'cloudtally@example.com' }, { timeoutMs: 5_000, maxAnswerBytes: 65_536 });
      const result = await mailer.send(channel, 'k-1', mail);
      mailer.close();
      expect(result).toEqual({ ok: true, status: null, retryable: false, error: null });
      expect(received).toHaveLength(1);
      expect(received[0]).toContain('Subject: Subject');
    });
  }
});
