/**
 * Real receivers for the notification tests: an SMTP server (smtp-server) that keeps every mail,
 * and an HTTP server that keeps every webhook POST and answers from a plan of status codes.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { listenOnFreePort } from '../helpers/listen.js';

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  headers: Record<string, string>;
  subject: string;
  text: string;
  attachments: Array<{ filename: string; contentType: string; content: Buffer }>;
}

export interface SmtpReceiver {
  url: string;
  mails: ReceivedMail[];
  close(): Promise<void>;
}

export async function startSmtpReceiver(): Promise<SmtpReceiver> {
  const mails: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    disableReverseLookup: true,
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        mails.push({ from, to: session.envelope.rcptTo.map((r) => r.address), raw, ...parseMime(raw) });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.server.address() as AddressInfo).port;
  return { url: `smtp://127.0.0.1:${port}`, mails, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

// ---- A small MIME reader (what nodemailer writes: headers, multipart/mixed, base64 / quoted-printable).

function parseHeaders(block: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of block.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return headers;
}

function decodeBody(body: string, encoding: string | undefined): Buffer {
  switch ((encoding ?? '7bit').toLowerCase()) {
    case 'base64':
      return Buffer.from(body.replace(/\s+/g, ''), 'base64');
    case 'quoted-printable': {
      const soft = body.replace(/=\r\n/g, '');
      const bytes: number[] = [];
      for (let i = 0; i < soft.length; i++) {
        if (soft[i] === '=' && /^[0-9A-F]{2}$/i.test(soft.slice(i + 1, i + 3))) {
          bytes.push(parseInt(soft.slice(i + 1, i + 3), 16));
          i += 2;
        } else {
          bytes.push(...Buffer.from(soft[i]!, 'utf8'));
        }
      }
      return Buffer.from(bytes);
    }
    default:
      return Buffer.from(body, 'utf8');
  }
}

/** RFC 2047 encoded words (=?UTF-8?Q?...?= / =?UTF-8?B?...?=) in a header. */
function decodeWords(text: string): string {
  return text.replace(/=\?utf-8\?([qb])\?([^?]*)\?=\s*/gi, (_m, kind: string, data: string) =>
    kind.toLowerCase() === 'b' ? Buffer.from(data, 'base64').toString('utf8') : decodeBody(data.replace(/_/g, ' '), 'quoted-printable').toString('utf8'),
  );
}

function parseMime(raw: string): Omit<ReceivedMail, 'from' | 'to' | 'raw'> {
  const split = raw.indexOf('\r\n\r\n');
  const headers = parseHeaders(raw.slice(0, split));
  const body = raw.slice(split + 4);
  const parts: Array<{ headers: Record<string, string>; body: string }> = [];
  const boundary = /boundary="?([^";]+)"?/i.exec(headers['content-type'] ?? '')?.[1];
  if (boundary) {
    for (const piece of body.split(`--${boundary}`).slice(1)) {
      if (piece.startsWith('--')) break;
      const p = piece.replace(/^\r\n/, '');
      const at = p.indexOf('\r\n\r\n');
      parts.push({ headers: parseHeaders(p.slice(0, at)), body: p.slice(at + 4).replace(/\r\n$/, '') });
    }
  } else {
    parts.push({ headers, body });
  }
  let text = '';
  const attachments: ReceivedMail['attachments'] = [];
  for (const part of parts) {
    const content = decodeBody(part.body, part.headers['content-transfer-encoding']);
    const disposition = part.headers['content-disposition'] ?? '';
    if (disposition.startsWith('attachment')) {
      const filename = /filename="?([^";]+)"?/i.exec(disposition)?.[1] ?? '';
      attachments.push({ filename, contentType: (part.headers['content-type'] ?? '').split(';')[0]!.trim(), content });
    } else if ((part.headers['content-type'] ?? 'text/plain').startsWith('text/plain')) {
      text = content.toString('utf8');
    }
  }
  return { headers, subject: decodeWords(headers.subject ?? ''), text, attachments };
}

// ---- Webhook receiver.

export interface ReceivedPost {
  headers: IncomingHttpHeaders;
  body: string;
}

export interface WebhookReceiver {
  url: string;
  posts: ReceivedPost[];
  /** Status codes for the next requests, in order; 200 once they run out. */
  plan: number[];
  close(): Promise<void>;
}

export async function startWebhookReceiver(plan: number[] = []): Promise<WebhookReceiver> {
  const receiver: WebhookReceiver = { url: '', posts: [], plan, close: async () => undefined };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      receiver.posts.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const status = receiver.plan.shift() ?? 200;
      res.writeHead(status, { 'content-type': 'text/plain' });
      res.end(status === 200 ? 'ok' : 'try later');
    });
  });
  const listening = await listenOnFreePort(server);
  receiver.url = `${listening.url}/hooks/finance?token=s3cr3t`;
  receiver.close = listening.close;
  return receiver;
}
