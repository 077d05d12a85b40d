/** Where notices go: the channels (webhook or email), the SMTP server, and the outbox's retries. */
import { hostname } from 'node:os';
import { z } from 'zod';
import type { Env } from './env.js';
import { literalPrivateHost, privateDestinationProblem } from './destinations.js';
import type { ConfigProblem } from './problems.js';
import type { ChannelSettings, OutboxSettings, SmtpSettings } from './types.js';
import { hasProtocol, isMailAddress } from './validators.js';

export const channelName = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, { error: 'must be 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit' });

export const ChannelSchema = z.discriminatedUnion(
  'type',
  [
    z.strictObject({
      name: channelName,
      type: z.literal('webhook'),
      // The reason never echoes the URL: it usually carries a token.
      url: z.string().refine((s) => hasProtocol(s, ['http:', 'https:']), { error: 'must be an absolute http(s) URL' }),
      secret_env: z
        .string()
        .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: 'must be the name of an environment variable (letters, digits, _)' })
        .optional(),
      // Private, loopback, link-local ... destinations are refused without it (config/destinations.ts).
      allow_private_network: z.boolean().default(false),
    }),
    z.strictObject({
      name: channelName,
      type: z.literal('email'),
      to: z
        .array(z.string().trim().refine(isMailAddress, { error: 'must be a mail address' }))
        .min(1, { error: 'must list at least one address' }),
      // Whether this channel's mail may go through an SMTP server at a non-public address.
      allow_private_network: z.boolean().default(false),
    }),
  ],
  { error: 'must have "type": "webhook" or "email"' },
);

export const OutboxSchema = z
  .strictObject({
    max_attempts: z.int().min(1).max(100).default(8),
    first_retry_seconds: z.number().min(1).max(24 * 3600).default(30),
    max_retry_seconds: z.number().min(1).max(7 * 24 * 3600).default(3600),
    timeout_ms: z.int().min(100).max(120_000).default(10_000),
    interval_seconds: z.number().min(1).max(3600).default(15),
    overdue_after_minutes: z.number().min(1).max(7 * 24 * 60).default(30),
    /**
     * Bytes an SMTP server may send during one message (greeting, replies, TLS handshake): its
     * replies are a few hundred bytes and a certificate chain a few KB; 64 KiB leaves room for
     * hundreds of recipients' replies.
     */
    max_smtp_answer_bytes: z.int().min(4096).max(16 * 1024 * 1024).default(64 * 1024),
  })
  .superRefine((o, ctx) => {
    if (o.max_retry_seconds < o.first_retry_seconds) ctx.addIssue({ code: 'custom', path: ['max_retry_seconds'], message: 'must be at least first_retry_seconds' });
  });

/** CLOUDTALLY_SMTP_URL and the sender (CLOUDTALLY_MAIL_FROM, default cloudtally@<mailHost or os.hostname()>). */
export function smtpSettings(vars: Env, mailHost: string | undefined, problems: ConfigProblem[]): SmtpSettings | null {
  const smtpUrl = vars.CLOUDTALLY_SMTP_URL;
  const smtp: SmtpSettings | null = smtpUrl
    ? { url: smtpUrl, host: new URL(smtpUrl).host, from: vars.CLOUDTALLY_MAIL_FROM ?? `cloudtally@${mailHost ?? hostname()}` }
    : null;
  if (!smtp && vars.CLOUDTALLY_MAIL_FROM !== undefined) {
    problems.push({ path: 'CLOUDTALLY_MAIL_FROM', message: 'is set but CLOUDTALLY_SMTP_URL is not: mail cannot be sent without an SMTP server' });
  }
  return smtp;
}

/**
 * The channels: names unique, a webhook's secret read from the variable its `secret_env` names,
 * email only with an SMTP server (`smtpInvalid`: CLOUDTALLY_SMTP_URL is set but was refused).
 */
export function channelSettings(
  raw: readonly z.output<typeof ChannelSchema>[],
  smtp: SmtpSettings | null,
  smtpInvalid: boolean,
  env: Record<string, string | undefined>,
  problems: ConfigProblem[],
): ChannelSettings[] {
  const seen = new Map<string, number>();
  return raw.map((c, i) => {
    const first = seen.get(c.name);
    if (first !== undefined) problems.push({ path: `channels[${i}].name`, message: `repeats channels[${first}] ("${c.name}"); channel names must be unique` });
    else seen.set(c.name, i);
    if (c.type === 'email') {
      if (!smtp && !smtpInvalid) {
        problems.push({ path: `channels[${i}]`, message: `is an email channel, which needs CLOUDTALLY_SMTP_URL (smtp:// or smtps://)` });
      }
      const smtpKind = smtp && !c.allow_private_network ? literalPrivateHost(smtp.url) : null;
      if (smtpKind) problems.push({ path: `channels[${i}]`, message: privateDestinationProblem('sends mail through CLOUDTALLY_SMTP_URL, whose host', smtpKind) });
      return { name: c.name, type: 'email', to: [...new Set(c.to)], allowPrivateNetwork: c.allow_private_network };
    }
    const urlKind = c.allow_private_network ? null : literalPrivateHost(c.url);
    if (urlKind) problems.push({ path: `channels[${i}].url`, message: privateDestinationProblem('the host', urlKind) });
    let secret: string | null = null;
    if (c.secret_env !== undefined) {
      const value = env[c.secret_env]?.trim();
      if (!value) problems.push({ path: `channels[${i}].secret_env`, message: `names ${c.secret_env}, which is not set (or empty)` });
      else secret = value;
    }
    return { name: c.name, type: 'webhook', url: c.url, secretEnv: c.secret_env ?? null, secret, allowPrivateNetwork: c.allow_private_network };
  });
}

export function outboxSettings(o: z.output<typeof OutboxSchema>): OutboxSettings {
  return {
    maxAttempts: o.max_attempts,
    firstRetrySeconds: o.first_retry_seconds,
    maxRetrySeconds: o.max_retry_seconds,
    timeoutMs: o.timeout_ms,
    intervalSeconds: o.interval_seconds,
    overdueAfterMinutes: o.overdue_after_minutes,
    maxSmtpAnswerBytes: o.max_smtp_answer_bytes,
  };
}

/**
 * A problem for each name in `names` (at `path`, e.g. `budgets[0].notify`) that is not a
 * configured channel. For every setting that names channels (deliveries, budgets, anomalies).
 */
export function unknownChannelProblems(names: readonly string[], path: string, channels: readonly { name: string }[]): ConfigProblem[] {
  const known = new Set(channels.map((c) => c.name));
  const list = known.size > 0 ? `configured: ${[...known].join(', ')}` : 'no channels are configured';
  return names.flatMap((name, i) => (known.has(name) ? [] : [{ path: `${path}[${i}]`, message: `"${name}" is not a channel in "channels" (${list})` }]));
}
