/** The environment variables, each checked on its own; an empty variable counts as unset. */
import { z } from 'zod';
import type { ConfigProblem } from './problems.js';
import { LOG_LEVELS, METRICS_ACCESS_MODES } from './types.js';
import { hasProtocol, isMailAddress } from './validators.js';

const blankToUndefined = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : v);

const envInt = (min: number, max: number) => {
  const reason = `must be a whole number from ${min} to ${max}`;
  return z.preprocess(
    blankToUndefined,
    z
      .string()
      .trim()
      .regex(/^[+-]?\d+$/, { error: reason })
      .transform(Number)
      .refine((n) => n >= min && n <= max, { error: reason })
      .optional(),
  );
};

// Reasons never echo the value: URLs and keys may carry credentials.
const envString = () => z.preprocess(blankToUndefined, z.string().trim().optional());

const envHttpUrl = () =>
  z.preprocess(
    blankToUndefined,
    z
      .string()
      .trim()
      .refine((s) => hasProtocol(s, ['http:', 'https:']), { error: 'must be an absolute http(s) URL' })
      .transform((s) => s.replace(/\/+$/, ''))
      .optional(),
  );

const envPostgresUrl = () =>
  z.preprocess(
    blankToUndefined,
    z
      .string()
      .trim()
      .refine((s) => hasProtocol(s, ['postgres:', 'postgresql:']), {
        error: 'must be a postgres:// or postgresql:// URL',
      })
      .optional(),
  );

const EnvSchema = z.object({
  CLOUDTALLY_CONFIG: envString(),
  CLOUDTALLY_API_URL: envHttpUrl(),
  CLOUDTALLY_API_KEY: envString(),
  DATABASE_URL: envPostgresUrl(),
  DATABASE_READ_URL: envPostgresUrl(),
  CLOUDTALLY_DATA_DIR: envString(),
  PORT: envInt(0, 65535),
  HOST: envString(),
  LOG_LEVEL: z.preprocess(
    blankToUndefined,
    z
      .string()
      .trim()
      .toLowerCase()
      .pipe(z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` }))
      .optional(),
  ),
  CLOUDTALLY_RETENTION_DAYS: envInt(1, 3650),
  CLOUDTALLY_RETENTION_HOURLY_DAYS: envInt(1, 3650),
  CLOUDTALLY_COST_MAX_GAP_HOURS: envInt(1, 744),
  CLOUDTALLY_RUN_HEARTBEAT_SECONDS: envInt(1, 300),
  CLOUDTALLY_RUN_STALE_SECONDS: envInt(2, 3600),
  CLOUDTALLY_DB_IDLE_IN_TRANSACTION_SECONDS: envInt(0, 86_400),
  CLOUDTALLY_DB_LOCK_TIMEOUT_SECONDS: envInt(1, 600),
  CLOUDTALLY_DB_KEEPALIVE_SECONDS: envInt(1, 600),
  CLOUDTALLY_METRICS_ACCESS: z.preprocess(
    blankToUndefined,
    z
      .string()
      .trim()
      .toLowerCase()
      .pipe(z.enum(METRICS_ACCESS_MODES, { error: `must be one of ${METRICS_ACCESS_MODES.join(', ')}` }))
      .optional(),
  ),
  CLOUDTALLY_METRICS_TOKEN: envString(),
  CLOUDTALLY_SESSION_SECRET: envString(),
  CLOUDTALLY_WEBHOOK_URL: envHttpUrl(),
  CLOUDTALLY_PUBLIC_URL: envString(),
  CLOUDTALLY_TRUSTED_PROXIES: envString(),
  CLOUDTALLY_SMTP_URL: z.preprocess(
    blankToUndefined,
    z
      .string()
      .trim()
      .refine((s) => hasProtocol(s, ['smtp:', 'smtps:']), { error: 'must be an smtp:// or smtps:// URL (e.g. smtps://user:password@mail.example.com:465)' })
      .optional(),
  ),
  CLOUDTALLY_MAIL_FROM: z.preprocess(
    blankToUndefined,
    z
      .string()
      .trim()
      .refine(isMailAddress, { error: 'must be a mail address, e.g. cloudtally@example.com or "Cloudtally <cloudtally@example.com>"' })
      .optional(),
  ),
});
export type Env = z.infer<typeof EnvSchema>;

/** Each variable parsed on its own, so one bad value does not hide the others' problems. */
export function parseEnv(
  env: Record<string, string | undefined>,
  problems: ConfigProblem[],
): { vars: Env; invalid: Set<string> } {
  const vars: Record<string, unknown> = {};
  const invalid = new Set<string>();
  for (const [name, schema] of Object.entries(EnvSchema.shape)) {
    const result = schema.safeParse(env[name]);
    if (result.success) {
      vars[name] = result.data;
    } else {
      invalid.add(name);
      problems.push(...result.error.issues.map((issue) => ({ path: name, message: issue.message })));
    }
  }
  return { vars: vars as Env, invalid };
}
