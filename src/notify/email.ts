/**
 * Email channels: plain-text mail through the operator's SMTP server (CLOUDTALLY_SMTP_URL, with
 * nodemailer), the message's attachment attached. The SMTP URL may carry a password: errors name
 * the host only.
 *
 * What the server sends is bounded: nodemailer keeps a reply line until its end and a multi-line
 * reply until its last line, without limit, and its timeouts are of silence only. So each message
 * goes over a socket of our own (nodemailer's `getSocket`) that counts the bytes the server sends
 * (below TLS: the handshake counts too) and ends the conversation past `maxAnswerBytes`, or when
 * the whole conversation outlasts its deadline.
 *
 * The server's name is resolved and every address checked before each conversation (a non-public
 * one only for channels with `allow_private_network`), and the socket is connected to a checked
 * address (destination.ts), so nodemailer never resolves the name again. What the server answered
 * is not kept: an error names nodemailer's code, the SMTP command and status, and the length of
 * the answer.
 */
import type { Socket } from 'node:net';
import { Duplex } from 'node:stream';
import nodemailer, { type Transporter } from 'nodemailer';
import { parseConnectionUrl } from 'nodemailer/lib/shared/index.js';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import type { DeepReadonly, EmailChannel, SmtpSettings } from '../config/index.js';
import { connectChecked, type DestinationPolicy, type Resolver } from './destination.js';
import { droppedBodyText, type PostResult } from './http.js';
import type { StoredMessage } from './outbox.js';
import { plainText } from './webhook.js';

export interface Mailer {
  send(channel: DeepReadonly<EmailChannel>, key: string, message: StoredMessage): Promise<PostResult>;
  close(): void;
}

export interface MailerLimits {
  /** Each step (connecting, the greeting, every reply) must come within this (outbox.timeout_ms). */
  timeoutMs: number;
  /** Bytes the server may send during one message (outbox.max_smtp_answer_bytes). */
  maxAnswerBytes: number;
  /** How names are resolved (tests); default the system's resolver. */
  resolve?: Resolver;
}

/**
 * The whole conversation of one message may take this many steps' time: connect, greeting,
 * EHLO, STARTTLS, AUTH, the envelope and the data, each within timeoutMs, rarely all slow at
 * once. The dispatcher's claim on a delivery lasts longer than this (6 x timeoutMs at least).
 */
export const CONVERSATION_STEPS = 5;

/** Why this side ended a conversation, when it did. */
interface Cut {
  reason: string | null;
}

export function createMailer(smtp: DeepReadonly<SmtpSettings>, limits: MailerLimits): Mailer {
  const { timeoutMs, maxAnswerBytes } = limits;
  const open = new Set<Transporter>();
  return {
    async send(channel, key, message) {
      const cut: Cut = { reason: null };
      let socket: MeteredSocket | null = null;
      const options: SMTPTransport.Options = {
        ...parseConnectionUrl(smtp.url),
        connectionTimeout: timeoutMs,
        greetingTimeout: timeoutMs,
        socketTimeout: timeoutMs,
        // (A proxy named in the URL takes this socket's place, unmetered.)
        getSocket: (options, callback) => {
          connectMetered(options, { allowPrivateNetwork: channel.allowPrivateNetwork, resolve: limits.resolve }, timeoutMs, maxAnswerBytes, cut).then(
            (s) => {
              socket = s;
              callback(null, { connection: s });
            },
            (err: Error) => callback(err, null),
          );
        },
      };
      const transport = nodemailer.createTransport(options);
      open.add(transport);
      const deadlineMs = CONVERSATION_STEPS * timeoutMs;
      const deadline = setTimeout(() => {
        cut.reason = `the conversation did not end within ${deadlineMs} ms (${CONVERSATION_STEPS} x outbox.timeout_ms)`;
        socket?.destroy(new Error(cut.reason));
      }, deadlineMs);
      try {
        await transport.sendMail({
          from: smtp.from,
          to: [...channel.to],
          subject: message.subject,
          text: plainText(message),
          headers: { 'X-Cloudtally-Key': key },
          ...(message.attachment
            ? {
                attachments: [message.attachment, ...(message.sidecar ? [message.sidecar] : [])].map((a) => ({ filename: a.filename, contentType: a.contentType, content: a.content })),
              }
            : {}),
        });
        return { ok: true, status: null, retryable: false, error: null };
      } catch (err) {
        // Cut short here: whatever error the cut surfaced as (a reset, a closed connection, TLS), say why.
        if (cut.reason !== null) return { ok: false, status: null, retryable: true, error: `mail through ${smtp.host} failed: ${cut.reason}` };
        const e = err as Error & { code?: string; responseCode?: number; response?: string; command?: string };
        if (e.code === 'EPRIVATEDESTINATION') {
          return { ok: false, status: null, retryable: false, error: `mail through ${smtp.host} refused: ${e.message}` };
        }
        // A permanent refusal of the message or its recipients (5xx) will not change by itself.
        const permanent = (e.code === 'EENVELOPE' || e.code === 'EMESSAGE') && e.responseCode !== undefined && e.responseCode >= 500;
        return { ok: false, status: e.responseCode ?? null, retryable: !permanent, error: `mail through ${smtp.host} failed: ${failureText(e, smtp.url)}` };
      } finally {
        clearTimeout(deadline);
        transport.close();
        open.delete(transport);
      }
    },
    close() {
      for (const transport of open) transport.close();
      open.clear();
    },
  };
}

/**
 * A TCP connection to the server (as nodemailer would open it: port 465 with TLS, else 587)
 * through a checked address, metered.
 */
async function connectMetered(options: SMTPTransport.Options, policy: DestinationPolicy, timeoutMs: number, maxAnswerBytes: number, cut: Cut): Promise<MeteredSocket> {
  const host = options.host ?? 'localhost';
  const port = Number(options.port) || (options.secure ? 465 : 587);
  const socket = await connectChecked(host, port, policy, timeoutMs);
  return new MeteredSocket(socket, maxAnswerBytes, () => {
    cut.reason = `the server sent more than ${maxAnswerBytes} bytes (outbox.max_smtp_answer_bytes); the rest was not read`;
    return cut.reason;
  });
}

/**
 * `EENVELOPE at RCPT TO: answered 550, answer of 38 bytes not kept`, or for a failure without an
 * answer nodemailer's code and message (`ECONNECTION (connect ECONNREFUSED ...)`).
 */
function failureText(e: Error & { code?: string; responseCode?: number; response?: string; command?: string }, url: string): string {
  const code = e.code ?? e.name;
  if (typeof e.response === 'string') {
    // nodemailer puts the server's answer in the message too: only its status and length are kept.
    const at = e.command ? ` at ${e.command}` : '';
    const status = e.responseCode ? `answered ${e.responseCode}` : 'answered';
    return `${code}${at}: ${status}, ${droppedBodyText(Buffer.byteLength(e.response), false, 'answer')}`;
  }
  const detail = redact(e.message, url);
  return `${code}${detail ? ` (${detail})` : ''}`;
}

/**
 * The socket as nodemailer sees it (and TLS, which it layers on top for smtps and STARTTLS): every
 * byte from the server passes the count; past the limit the connection is destroyed.
 */
class MeteredSocket extends Duplex {
  private received = 0;

  constructor(
    private readonly socket: Socket,
    private readonly maxBytes: number,
    private readonly overflow: () => string,
  ) {
    super({ allowHalfOpen: false });
    socket.on('data', (chunk: Buffer) => {
      this.received += chunk.length;
      if (this.received > this.maxBytes) {
        this.destroy(new Error(this.overflow()));
        return;
      }
      if (!this.push(chunk)) socket.pause();
    });
    socket.on('end', () => this.push(null));
    socket.on('error', (err) => this.destroy(err));
    socket.on('close', () => {
      if (!this.destroyed) this.destroy();
    });
    socket.on('timeout', () => this.emit('timeout'));
  }

  override _read(): void {
    this.socket.resume();
  }

  override _write(chunk: Buffer, encoding: BufferEncoding, callback: (err?: Error | null) => void): void {
    this.socket.write(chunk, encoding, callback);
  }

  override _final(callback: (err?: Error | null) => void): void {
    this.socket.end(callback);
  }

  override _destroy(err: Error | null, callback: (err?: Error | null) => void): void {
    this.socket.destroy();
    callback(err);
  }

  setTimeout(ms: number, listener?: () => void): this {
    this.socket.setTimeout(ms);
    if (listener) this.once('timeout', listener);
    return this;
  }

  setKeepAlive(enable?: boolean, delayMs?: number): this {
    this.socket.setKeepAlive(enable, delayMs);
    return this;
  }

  setNoDelay(noDelay?: boolean): this {
    this.socket.setNoDelay(noDelay);
    return this;
  }

  get remoteAddress(): string | undefined {
    return this.socket.remoteAddress;
  }

  get remotePort(): number | undefined {
    return this.socket.remotePort;
  }

  get localAddress(): string | undefined {
    return this.socket.localAddress;
  }

  get localPort(): number | undefined {
    return this.socket.localPort;
  }
}

/** The SMTP URL and its password never reach an error message. */
function redact(text: string, url: string): string {
  let out = text.split(url).join('[SMTP URL]');
  try {
    const password = decodeURIComponent(new URL(url).password);
    if (password) out = out.split(password).join('[redacted]');
  } catch {
    // not a URL: nothing more to hide
  }
  return out.replace(/\s+/g, ' ').trim().slice(0, 300);
}
