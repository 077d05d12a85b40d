import { randomBytes } from 'node:crypto';
import { z } from 'zod';

export interface SimulatorOptions {
  /** Default '127.0.0.1'. */
  host?: string;
  /** Default 0 (a free port); the CLI passes 8088. */
  port?: number;
  /** Default: a random key, readable as sim.apiKey. */
  apiKey?: string;
  /** Default 42: same seed => same demo company (ids, names, tags, prices). */
  seed?: number;
  /** Number of instances in the demo company; default 60; scales to >= 100_000. */
  size?: number;
  /** The "current time" created_at values are relative to; default new Date(). */
  now?: Date;
  /** RUNNING -> FINISHED/ERROR after this delay; default 1000. */
  taskDelayMs?: number;
  /** Added to every answer; default 0. */
  latencyMs?: number;
  /** 0..1: share of requests answered 502/503/504 at random (seeded); default 0. */
  errorRate?: number;
  /** After every `every` requests, the next `burst` get 429 + Retry-After. */
  rateLimit?: { every: number; burst: number; retryAfterSeconds: number } | null;
  /** 0..1: share of JSON bodies cut short; default 0. */
  truncateRate?: number;
  /** Serve the real-world variants of DESIGN.md; default false. */
  legacy?: boolean;
}

export type ResolvedSimulatorOptions = Required<Omit<SimulatorOptions, 'rateLimit'>> & {
  rateLimit: { every: number; burst: number; retryAfterSeconds: number } | null;
};

export const DEFAULT_SEED = 42;
export const DEFAULT_SIZE = 60;
export const MAX_SIZE = 1_000_000;
export const DEFAULT_CLI_PORT = 8088;

const rate = z.number().min(0, 'must be between 0 and 1').max(1, 'must be between 0 and 1');
const nonNegativeInt = z.int('must be an integer').min(0, 'must be at least 0');

const RateLimitSchema = z.strictObject({
  every: z.int('must be an integer').min(1, 'must be at least 1'),
  burst: z.int('must be an integer').min(1, 'must be at least 1'),
  retryAfterSeconds: nonNegativeInt,
});

const OptionsSchema = z.strictObject({
  host: z.string().min(1, 'must not be empty').optional(),
  port: nonNegativeInt.max(65535, 'must be at most 65535').optional(),
  apiKey: z.string().regex(/^\S+$/, 'must be non-empty without spaces').optional(),
  seed: z.int('must be an integer').optional(),
  size: nonNegativeInt.max(MAX_SIZE, `must be at most ${MAX_SIZE}`).optional(),
  now: z.date('must be a valid Date').optional(),
  taskDelayMs: nonNegativeInt.optional(),
  latencyMs: nonNegativeInt.optional(),
  errorRate: rate.optional(),
  rateLimit: RateLimitSchema.nullable().optional(),
  truncateRate: rate.optional(),
  legacy: z.boolean().optional(),
});

/** The runtime knobs setOptions may change. */
export const OptionsPatchSchema = OptionsSchema.pick({
  latencyMs: true,
  errorRate: true,
  rateLimit: true,
  truncateRate: true,
  legacy: true,
  taskDelayMs: true,
});

function problems(error: z.ZodError, prefix: string): string {
  return error.issues.map((i) => `${prefix}${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
}

/** Validates options (throwing an Error that lists every bad one) and fills in the defaults. */
export function resolveOptions(options: SimulatorOptions): ResolvedSimulatorOptions {
  const parsed = OptionsSchema.safeParse(options);
  if (!parsed.success) throw new Error(`invalid simulator options: ${problems(parsed.error, '')}`);
  const o = parsed.data;
  return {
    host: o.host ?? '127.0.0.1',
    port: o.port ?? 0,
    apiKey: o.apiKey ?? `sim-${randomBytes(18).toString('base64url')}`,
    seed: o.seed ?? DEFAULT_SEED,
    size: o.size ?? DEFAULT_SIZE,
    now: o.now ?? new Date(),
    taskDelayMs: o.taskDelayMs ?? 1000,
    latencyMs: o.latencyMs ?? 0,
    errorRate: o.errorRate ?? 0,
    rateLimit: o.rateLimit ?? null,
    truncateRate: o.truncateRate ?? 0,
    legacy: o.legacy ?? false,
  };
}

export function validateOptionsPatch(patch: unknown): z.output<typeof OptionsPatchSchema> {
  const parsed = OptionsPatchSchema.safeParse(patch);
  if (!parsed.success) throw new Error(`invalid simulator options: ${problems(parsed.error, '')}`);
  return parsed.data;
}

// ---- environment ------------------------------------------------------------------------------

const envInt = (min: number, max: number) =>
  z
    .string()
    .trim()
    .regex(/^-?\d+$/, 'must be an integer')
    .transform(Number)
    .pipe(z.int().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));
const envRate = z
  .string()
  .trim()
  .regex(/^\d+(\.\d+)?$/, 'must be a number between 0 and 1')
  .transform(Number)
  .pipe(rate);
const envBool = z
  .string()
  .trim()
  .toLowerCase()
  .pipe(z.enum(['true', 'false', '1', '0', 'yes', 'no'], { error: 'must be true or false' }))
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

const EnvSchema = z.object({
  SIM_HOST: z.string().trim().min(1).optional(),
  SIM_PORT: envInt(0, 65535).optional(),
  SIM_API_KEY: z.string().regex(/^\S+$/, 'must be non-empty without spaces').optional(),
  SIM_SEED: envInt(-2_147_483_648, 4_294_967_295).optional(),
  SIM_SIZE: envInt(0, MAX_SIZE).optional(),
  SIM_TASK_DELAY_MS: envInt(0, 3_600_000).optional(),
  SIM_LATENCY_MS: envInt(0, 600_000).optional(),
  SIM_ERROR_RATE: envRate.optional(),
  SIM_RATE_LIMIT_EVERY: envInt(1, 1_000_000_000).optional(),
  SIM_RATE_LIMIT_BURST: envInt(1, 1_000_000_000).optional(),
  SIM_RATE_LIMIT_RETRY_AFTER: envInt(0, 86_400).optional(),
  SIM_TRUNCATE_RATE: envRate.optional(),
  SIM_LEGACY: envBool.optional(),
});

/**
 * Simulator options from SIM_* variables (empty values count as unset). SIM_PORT defaults to 8088
 * here (the CLI's port); the rate limit is on when SIM_RATE_LIMIT_EVERY is set (burst default 1,
 * Retry-After default 1 s). Throws one Error listing every bad variable (never their values).
 */
export function simulatorOptionsFromEnv(env: Record<string, string | undefined>): SimulatorOptions {
  const { options, problems } = parseSimulatorEnv(env);
  if (problems.length > 0) {
    throw new Error(`invalid simulator environment: ${problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`);
  }
  return options;
}

/**
 * The same as simulatorOptionsFromEnv, but returns the problems (variable name + reason) instead
 * of throwing, so the configuration can report them with everything else that is wrong.
 */
export function parseSimulatorEnv(env: Record<string, string | undefined>): {
  options: SimulatorOptions;
  problems: Array<{ path: string; message: string }>;
} {
  const relevant: Record<string, string> = {};
  for (const key of Object.keys(EnvSchema.shape)) {
    const value = env[key];
    if (value !== undefined && value.trim() !== '') relevant[key] = value;
  }
  const parsed = EnvSchema.safeParse(relevant);
  const problems = parsed.success
    ? []
    : parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
  if (parsed.success && parsed.data.SIM_RATE_LIMIT_EVERY === undefined) {
    if (parsed.data.SIM_RATE_LIMIT_BURST !== undefined) {
      problems.push({ path: 'SIM_RATE_LIMIT_BURST', message: 'needs SIM_RATE_LIMIT_EVERY' });
    }
    if (parsed.data.SIM_RATE_LIMIT_RETRY_AFTER !== undefined) {
      problems.push({ path: 'SIM_RATE_LIMIT_RETRY_AFTER', message: 'needs SIM_RATE_LIMIT_EVERY' });
    }
  }
  if (!parsed.success || problems.length > 0) return { options: { host: '127.0.0.1', port: DEFAULT_CLI_PORT }, problems };
  const e = parsed.data;
  const options: SimulatorOptions = { host: e.SIM_HOST ?? '127.0.0.1', port: e.SIM_PORT ?? DEFAULT_CLI_PORT };
  if (e.SIM_API_KEY !== undefined) options.apiKey = e.SIM_API_KEY;
  if (e.SIM_SEED !== undefined) options.seed = e.SIM_SEED;
  if (e.SIM_SIZE !== undefined) options.size = e.SIM_SIZE;
  if (e.SIM_TASK_DELAY_MS !== undefined) options.taskDelayMs = e.SIM_TASK_DELAY_MS;
  if (e.SIM_LATENCY_MS !== undefined) options.latencyMs = e.SIM_LATENCY_MS;
  if (e.SIM_ERROR_RATE !== undefined) options.errorRate = e.SIM_ERROR_RATE;
  if (e.SIM_TRUNCATE_RATE !== undefined) options.truncateRate = e.SIM_TRUNCATE_RATE;
  if (e.SIM_LEGACY !== undefined) options.legacy = e.SIM_LEGACY;
  if (e.SIM_RATE_LIMIT_EVERY !== undefined) {
    options.rateLimit = {
      every: e.SIM_RATE_LIMIT_EVERY,
      burst: e.SIM_RATE_LIMIT_BURST ?? 1,
      retryAfterSeconds: e.SIM_RATE_LIMIT_RETRY_AFTER ?? 1,
    };
  }
  return { options, problems: [] };
}
