/**
 * Email channels: plain-text mail through the operator's SMTP server (CLOUDTALLY_SMTP_URL, with
 * nodemailer), the message's attachment attached. The SMTP URL may carry a password: errors name
 * the host only.
 */
import nodemailer, { type Transporter } from 'nodemailer';
import type { DeepReadonly, EmailChannel, SmtpSettings } from '../config/index.js';
import type { PostResult } from './http.js';
import type { StoredMessage } from './outbox.js';
import { plainText } from './webhook.js';

export interface Mailer {
  send(channel: DeepReadonly<EmailChannel>, key: string, message: StoredMessage): Promise<PostResult>;
  close(): void;
}

export function createMailer(smtp: DeepReadonly<SmtpSettings>, timeoutMs: number): Mailer {
  let transport: Transporter | null = null;
  const transporter = () =>
    (transport ??= nodemailer.createTransport(smtp.url, {
      connectionTimeout: timeoutMs,
      greetingTimeout: timeoutMs,
      socketTimeout: timeoutMs,
    }));
  return {
    async send(channel, key, message) {
      try {
        await transporter().sendMail({
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
        const e = err as Error & { code?: string; responseCode?: number; response?: string };
        // A permanent refusal of the message or its recipients (5xx) will not change by itself.
        const permanent = (e.code === 'EENVELOPE' || e.code === 'EMESSAGE') && e.responseCode !== undefined && e.responseCode >= 500;
        const detail = redact(e.response ?? e.message, smtp.url);
        return { ok: false, status: e.responseCode ?? null, retryable: !permanent, error: `mail through ${smtp.host} failed: ${e.code ?? e.name}${detail ? ` (${detail})` : ''}` };
      }
    },
    close() {
      transport?.close();
      transport = null;
    },
  };
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
