/**
 * Email channels: plain-text mail through the operator's SMTP server (CLOUDTALLY_SMTP_URL, with
 * nodemailer), the message's attachment attached. The SMTP URL may carry a password: errors name
 * the host only.
 *
 * The server's name is resolved and every address checked before each conversation (a non-public
 * one only for channels with `allow_private_network`), and nodemailer is given a socket already
 * connected to a checked address (destination.ts), so it never resolves the name again. What the
 * server answered is not kept: an error names nodemailer's code, the SMTP command and status, and
 * the length of the answer.
 */
import nodemailer, { type Transporter } from 'nodemailer';
import type { DeepReadonly, EmailChannel, SmtpSettings } from '../config/index.js';
import { connectChecked, type Resolver } from './destination.js';
import { droppedBodyText, type PostResult } from './http.js';
import type { StoredMessage } from './outbox.js';
import { plainText } from './webhook.js';

export interface Mailer {
  send(channel: DeepReadonly<EmailChannel>, key: string, message: StoredMessage): Promise<PostResult>;
  close(): void;
}

/** What nodemailer's getSocket receives: the transport's options (from the SMTP URL). */
interface SocketRequest {
  host?: string;
  port?: number | string;
  secure?: boolean;
}

export function createMailer(smtp: DeepReadonly<SmtpSettings>, timeoutMs: number, options: { resolve?: Resolver } = {}): Mailer {
  // One transport per answer to "may it reach a private network?": channels differ.
  const transports = new Map<boolean, Transporter>();
  const transporter = (allowPrivateNetwork: boolean) => {
    let transport = transports.get(allowPrivateNetwork);
    if (!transport) {
      transport = nodemailer.createTransport(smtp.url, {
        connectionTimeout: timeoutMs,
        greetingTimeout: timeoutMs,
        socketTimeout: timeoutMs,
      });
      const policy = { allowPrivateNetwork, resolve: options.resolve };
      // nodemailer's hook for a socket of our own (its proxy support): connected to a checked
      // address; TLS (smtps, STARTTLS) is then negotiated by nodemailer with the host's name.
      (transport as Transporter & { getSocket: (o: SocketRequest, cb: (err: Error | null, socket?: unknown) => void) => void }).getSocket = (request, callback) => {
        const host = request.host ?? 'localhost';
        const port = Number(request.port) || (request.secure ? 465 : 587);
        connectChecked(host, port, policy, timeoutMs).then(
          (connection) => callback(null, { connection }),
          (err: Error) => callback(err),
        );
      };
      transports.set(allowPrivateNetwork, transport);
    }
    return transport;
  };
  return {
    async send(channel, key, message) {
      try {
        await transporter(channel.allowPrivateNetwork).sendMail({
          from: smtp.from,
          to: [...channel.to],
          subject: message.subject,
          text: plainText(message),
          headers: { 'X-Cloudtally-Key': key },
          ...(message.attachment
            ? { attachments: [{ filename: message.attachment.filename, contentType: message.attachment.contentType, content: message.attachment.content }] }
            : {}),
        });
        return { ok: true, status: null, retryable: false, error: null };
      } catch (err) {
        const e = err as Error & { code?: string; responseCode?: number; response?: string; command?: string };
        if (e.code === 'EPRIVATEDESTINATION') {
          return { ok: false, status: null, retryable: false, error: `mail through ${smtp.host} refused: ${e.message}` };
        }
        // A permanent refusal of the message or its recipients (5xx) will not change by itself.
        const permanent = (e.code === 'EENVELOPE' || e.code === 'EMESSAGE') && e.responseCode !== undefined && e.responseCode >= 500;
        return { ok: false, status: e.responseCode ?? null, retryable: !permanent, error: `mail through ${smtp.host} failed: ${failureText(e, smtp.url)}` };
      }
    },
    close() {
      for (const transport of transports.values()) transport.close();
      transports.clear();
    },
  };
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
