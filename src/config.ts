/**
 * cloudtally's configuration: environment variables plus an optional JSON file named by
 * CLOUDTALLY_CONFIG. Validated once; every problem is reported together in one ConfigError; the
 * result is deep-frozen. This is the only module that reads process.env (as a default argument).
 *
 * Precedence: environment variables win over the file for scalar settings (retention); the
 * structured settings (scopes, schedules, tag aliases, client tuning) come from the file only.
 * An empty environment variable counts as unset.
 */
import { parseSimulatorEnv, type SimulatorOptions } from './simulator/options.js';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import cron from 'node-cron';
import { z } from 'zod';
import { redactDatabaseUrl } from './db/url.js';
import { FIXED_DIMENSIONS, TAG_DIMENSION_PREFIX } from './db/cost-model.js';
import { AllocationRuleSchema, allocationRules, DEMO_ALLOCATION, type AllocationRule } from './allocation-config.js';
import { parseAddressRule } from './auth/addresses.js';
import { accountKey } from './auth/identity.js';
import { parsePasswordHash } from './auth/password.js';
import { ROLES, type Role } from './auth/roles.js';
import { applyKeyCase, applyValueCase, normaliseTagKey, normaliseTagValue, type TagKeyCase, type TagRules, type TagValueCase } from './tags/normalise.js';

// ---------------------------------------------------------------------------------------------
// Public types and constants.

export const COLLECTOR_NAMES = [
  'clusters',
  'instances',
  'ports',
  'keypairs',
  'flavors',
  'k8s_prices',
  'storage_keys',
  'image_tags',
  'free_features',
] as const;
export type CollectorName = (typeof COLLECTOR_NAMES)[number];

/** Inventory hourly; prices change rarely (every 6 h); free features daily. */
export const DEFAULT_SCHEDULES: Readonly<Record<CollectorName, string>> = Object.freeze({
  clusters: '0 * * * *',
  instances: '0 * * * *',
  ports: '0 * * * *',
  keypairs: '0 * * * *',
  flavors: '0 */6 * * *',
  k8s_prices: '0 */6 * * *',
  storage_keys: '0 * * * *',
  image_tags: '0 * * * *',
  free_features: '0 3 * * *',
});

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Who may read /metrics: anyone who reaches the port, holders of the bearer token, or nobody. */
export const METRICS_ACCESS_MODES = ['open', 'token', 'off'] as const;
export type MetricsAccessMode = (typeof METRICS_ACCESS_MODES)[number];
export const METRICS_TOKEN_MIN_LENGTH = 16;

export interface MetricsSettings {
  access: MetricsAccessMode;
  /** Set exactly when access is 'token'. */
  token: string | null;
}

/** Names the FOCUS export puts in its account and provider columns (the API tells none of them). */
export interface FocusSettings {
  billingAccountId: string;
  billingAccountName: string;
  providerName: string;
  publisherName: string;
  invoiceIssuerName: string;
}

/**
 * Spend anomalies (docs/anomalies.md): each complete day's spend of every group of the watched
 * groupings, per currency, against the median and median absolute deviation (MAD) of its
 * trailing baseline. A day is flagged only when all three tests pass: robust deviation, absolute
 * change, relative change. Decimal settings are kept as decimal text (exact arithmetic).
 */
export interface AnomalySettings {
  /** Watched groupings as stored dimensions (`project`, `tag:<normalised key>`). */
  groupings: string[];
  /** Complete days before the day that form its baseline. */
  baselineDays: number;
  /** Fewer baseline days with data than this: "not enough history", never a guess. */
  minBaselineDays: number;
  /** k: flagged when |spend - median| > k x 1.4826 x MAD (decimal text). */
  madMultiplier: string;
  /** Smallest absolute change (in the currency) that can be flagged, per currency code, and for the others. */
  minChange: { default: string; byCurrency: Record<string, string> };
  /** Smallest change relative to the median, in percent (decimal text). */
  minChangePercent: string;
  /** Opt-in alerts: the groupings (dimensions) whose anomalies are sent, and to which channels. */
  alerts: Array<{ grouping: string; notify: string[] }>;
}

export const DEFAULT_ANOMALY_GROUPINGS = ['tag:team', 'project'] as const;

export const DEFAULT_FOCUS_PROVIDER_NAME = 'Cloud provider';
export const DEFAULT_FOCUS_BILLING_ACCOUNT_ID = 'default';

export interface Scope {
  projectId: number;
  regionId: number;
  securityGroups: string[];
  k8sClusters: string[];
}

/**
 * Hours between the steps of the demo history that simulator mode backfills into an empty
 * database; also the demo service's cost cap, so that history integrates without gaps.
 */
export const DEMO_HISTORY_STEP_HOURS = 6;

export type CloudConfig = { mode: 'simulator' } | { mode: 'remote'; baseUrl: string; apiKey: string };

/** Same shape as openDatabase's argument (src/db/connection.ts). */
export type DatabaseSettings = { driver: 'pg'; url: string } | { driver: 'pglite'; dataDir: string };

/** The built-in simulator's knobs, from the SIM_* variables (validated by the simulator's own schema). */
export type SimulatorSettings = Omit<SimulatorOptions, 'now'>;

export interface ClientSettings {
  timeoutMs: number;
  maxConcurrency: number;
  maxRetries: number;
}

// ---- Users, roles and actions (issue 5) ------------------------------------------------------

export interface AuthUser {
  name: string;
  role: Role;
  /** `scrypt$N$r$p$salt$hash` (see src/auth/password.ts). */
  passwordHash: string;
}

export interface ProxyAuthSettings {
  /** Request header carrying the user name (lower case), honoured only from trustedAddresses. */
  header: string;
  /** Optional header carrying the user's groups, comma-separated. */
  groupsHeader: string | null;
  /** IP addresses or CIDR blocks of the reverse proxies (compared with the TCP peer address). */
  trustedAddresses: string[];
  /** User name or group -> role; the most trusted match wins. */
  roleMap: Record<string, Role>;
  /** Role of a proxied user that no entry maps; null refuses them (403). */
  defaultRole: Role | null;
}

export interface AuthSettings {
  /** CLOUDTALLY_SESSION_SECRET: signs cookies and CSRF tokens; required when users are configured. */
  sessionSecret: string | null;
  sessionTtlHours: number;
  /** Backoff after failed sign-ins, per (account, client address) and per client address (src/auth/rate-limit.ts). */
  loginThrottle: LoginThrottleSettings;
  proxy: ProxyAuthSettings | null;
}

export interface LoginThrottleSettings {
  /** Failures for one account from one client address before delays start. */
  freeFailuresPerAccount: number;
  /** Failures from one client address (any accounts) before delays start. */
  freeFailuresPerAddress: number;
  /** The first delay; each further failure doubles it, up to maxDelaySeconds. */
  firstDelaySeconds: number;
  maxDelaySeconds: number;
  /** A counter is forgotten after this long without a failure (longer than maxDelaySeconds). */
  forgetAfterHours: number;
}

/** How the app is reached: the public URL and the reverse proxies in front of it. */
export interface WebSettings {
  /**
   * CLOUDTALLY_PUBLIC_URL as an origin (`https://cloudtally.example.com`), or null. When https:
   * Secure `__Host-` cookies and HSTS. Browsers' state-changing requests must come from this
   * origin or the request's own.
   */
  publicUrl: string | null;
  /**
   * Reverse proxies whose X-Forwarded-For / -Proto / -Host are believed (IPs, CIDRs):
   * CLOUDTALLY_TRUSTED_PROXIES plus auth.proxy.trusted_addresses. Empty: those headers are ignored.
   */
  trustedProxies: string[];
}

export interface IdleRulesSettings {
  /** Running at least this many days with no (or an empty) owner tag. */
  noOwner: { enabled: boolean; minRunningDays: number };
  /** A tag holding a date (YYYY-MM-DD or ISO 8601 time) in the past. */
  expired: { enabled: boolean; tagKey: string };
  /** An environment tag with one of `values` running outside working hours in `timezone`. */
  offHours: {
    enabled: boolean;
    tagKey: string;
    /** Lower case. */
    values: string[];
    /** IANA time zone, e.g. Europe/Berlin. */
    timezone: string;
    /** 'HH:MM' 24 h, local to the time zone; start < end. */
    workingHours: { start: string; end: string };
    /** ISO weekdays that are working days: 1 = Monday ... 7 = Sunday. */
    workingDays: number[];
  };
  /** Listed through one of these security groups (id or name). */
  quarantine: { enabled: boolean; securityGroups: string[] };
  /** Servers of a bare metal cluster whose task_status is one of these. */
  clusterCleanUp: { enabled: boolean; taskStatuses: string[] };
}

export interface NotificationSettings {
  /** Slack-compatible incoming webhook (POST {"text": ...}); a secret: never logged. */
  webhookUrl: string;
  timeoutMs: number;
  /** Attempts after the first one. */
  retries: number;
  /** Address of this app, for links in the messages (null: no links). */
  appUrl: string | null;
}

// ---- Notification channels and scheduled deliveries (issue 14) -------------------------------

/** A webhook channel: POST of the documented JSON body (docs/notifications.md), optionally signed. */
export interface WebhookChannel {
  name: string;
  type: 'webhook';
  /** A secret (it usually carries a token): never logged; errors name its host only. */
  url: string;
  /** The environment variable named by `secret_env`, whose value signs the body (HMAC-SHA256); null: unsigned. */
  secretEnv: string | null;
  /** Its value (a secret). */
  secret: string | null;
}

/** An email channel: mail through the operator's SMTP server (CLOUDTALLY_SMTP_URL). */
export interface EmailChannel {
  name: string;
  type: 'email';
  to: string[];
}

export type ChannelSettings = WebhookChannel | EmailChannel;

export interface SmtpSettings {
  /** CLOUDTALLY_SMTP_URL (smtp:// or smtps://, may carry user and password): a secret, never logged. */
  url: string;
  /** Host and port of the URL: what errors and logs name. */
  host: string;
  /** CLOUDTALLY_MAIL_FROM, default cloudtally@<hostname>. */
  from: string;
}

/** The outbox's retries (the dispatcher: src/notify/dispatcher.ts). */
export interface OutboxSettings {
  /** Attempts per message and channel before it is marked failed. */
  maxAttempts: number;
  /** Pause after the first failed attempt; doubles after each further one, at most maxRetrySeconds. */
  firstRetrySeconds: number;
  maxRetrySeconds: number;
  /** Time allowed for one attempt (HTTP request or SMTP conversation). */
  timeoutMs: number;
  /** How often the service looks for due messages (it also looks after each collection). */
  intervalSeconds: number;
  /** A pending message whose next attempt is this late counts as overdue in collection health and metrics. */
  overdueAfterMinutes: number;
}

/** A report sent on a schedule: rendered as CSV, enqueued for its channels once per slot. */
export interface DeliverySettings {
  /** `name` from the file, or the position in `deliveries` (as text): the message key uses it. */
  id: string;
  name: string | null;
  report: string;
  /** The report's parameters as a query string would give them (values as text). */
  params: Record<string, string | string[]>;
  schedule: string;
  notify: string[];
  format: 'csv';
}

/** A monthly budget of the configuration file (`budgets`), its tag key and value normalised. */
export interface BudgetSettings {
  name: string;
  /** null: the total (every priced resource); else `project`, `region`, `kind`, `flavor` or `tag:<key>`. */
  by: string | null;
  /** The group of `by` the budget covers (null with the total). */
  value: string | null;
  /** ISO 4217, upper case. */
  currency: string;
  /** Exact decimal text, > 0. */
  amountPerMonth: string;
  /** Percentages of the amount that alert, ascending, without repeats. */
  thresholds: number[];
  /** Channel names (`channels` of the configuration). */
  notify: string[];
}

interface ConfigShape {
  cloud: CloudConfig;
  database: DatabaseSettings;
  /** A read-only Postgres (streaming replica) for report queries (DATABASE_READ_URL); a secret. */
  databaseReadUrl: string | null;
  server: { host: string; port: number };
  web: WebSettings;
  logLevel: LogLevel;
  /** Snapshots older than this are pruned (cost_daily is kept). */
  retentionDays: number;
  /** Hourly detail is kept this long; older snapshots are thinned to one per scope and day. */
  retentionHourlyDays: number;
  /**
   * Longest time one snapshot's run-rate is assumed to hold in costs over time (longer gaps are
   * capped, not extrapolated); null: 2 x each priced collector's schedule. The demo service
   * (simulator mode) uses the spacing of its backfilled history unless one is configured.
   */
  costMaxGapHours: number | null;
  /** Knobs of the built-in simulator (used when cloud.mode is 'simulator', and by `npm run sim`). */
  simulator: SimulatorSettings;
  /**
   * Where the built-in simulator of `npm start` / `npm run collect` keeps its demo company between
   * restarts: `demo-simulator.json` in CLOUDTALLY_DATA_DIR; null (memory only) for `memory://`.
   */
  demoStateFile: string | null;
  /** Empty in simulator mode unless configured: the scopes then come from the simulator's manifest. */
  scopes: Scope[];
  imageIds: string[];
  freeFeatureIds: number[];
  schedules: Record<CollectorName, string>;
  /** alias key -> canonical key, both already in the configured case. */
  tagAliases: Record<string, string>;
  tagKeyCase: TagKeyCase;
  /** `preserve` (default) or `lower`: the case tag values are stored and grouped in (always NFC, trimmed). */
  tagValueCase: TagValueCase;
  /** normalised tag key -> (alias value -> canonical value), in the configured value case. */
  tagValueAliases: Record<string, Record<string, string>>;
  /** Account and provider names of the FOCUS export. */
  focus: FocusSettings;
  /** `budgets` of the file; null when the file has none (the demo then ships its own, main.ts). */
  budgets: BudgetSettings[] | null;
  anomalies: AnomalySettings;
  /** Shared-cost allocation rules, in order (docs/allocation.md); the demo's rule in simulator mode without a file. */
  allocation: AllocationRule[];
  client: ClientSettings;
  collectOnStart: boolean;
  /** Web users; none (and no proxy) = local-only mode: 127.0.0.1 only, everyone admin. */
  users: AuthUser[];
  auth: AuthSettings;
  idleRules: IdleRulesSettings;
  notifications: NotificationSettings | null;
  /** Where notices (budget and anomaly alerts, scheduled deliveries) can go; names unique. */
  channels: ChannelSettings[];
  /** Set when CLOUDTALLY_SMTP_URL is; required by email channels. */
  smtp: SmtpSettings | null;
  outbox: OutboxSettings;
  deliveries: DeliverySettings[];
  /** Default delay between marking an instance for a stop and the stop. */
  stopGraceHours: number;
  /** Tag key (normalised) naming an instance's owner, who is warned of a scheduled stop. */
  ownerTagKey: string;
  /** Access to /metrics (CLOUDTALLY_METRICS_ACCESS, CLOUDTALLY_METRICS_TOKEN). */
  metrics: MetricsSettings;
  /** Path of the JSON file read, or null. */
  configFile: string | null;
}

export type DeepReadonly<T> = T extends (infer E)[]
  ? readonly DeepReadonly<E>[]
  : T extends object
    ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
    : T;

export type Config = DeepReadonly<ConfigShape>;

export interface ConfigProblem {
  path: string;
  message: string;
}

/** Invalid configuration: every problem found, each as `path: reason`. Never carries a secret. */
export class ConfigError extends Error {
  readonly problems: readonly ConfigProblem[];

  constructor(problems: ConfigProblem[], source = 'configuration') {
    const count = problems.length === 1 ? '1 problem' : `${problems.length} problems`;
    super(`Invalid ${source} (${count}):\n${problems.map((p) => `  - ${p.path}: ${p.message}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = Object.freeze(problems.map((p) => Object.freeze({ ...p })));
  }
}

/**
 * What checking a delivery needs of a report: its name and the parameter schema its query string
 * is parsed with. Every report definition (src/reports/report.ts) is one.
 */
export interface DeliverableReport {
  readonly name: string;
  readonly params: z.ZodType<unknown>;
}

export interface LoadConfigOptions {
  /** Reads the file named by CLOUDTALLY_CONFIG; defaults to fs.readFileSync(path, 'utf8'). */
  readFile?: (path: string) => string;
  /**
   * The reports `deliveries` may name: each delivery's report must be one of them and its params
   * valid for it. The command line passes every report; without it they are not checked here
   * (the delivery scheduler checks them again when it starts).
   */
  reports?: readonly DeliverableReport[];
  /** The host name of the default CLOUDTALLY_MAIL_FROM (default os.hostname()). */
  hostname?: string;
}

// ---------------------------------------------------------------------------------------------
// Environment variables.

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

function hasProtocol(value: string, protocols: string[]): boolean {
  try {
    return protocols.includes(new URL(value).protocol);
  } catch {
    return false;
  }
}

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
type Env = z.infer<typeof EnvSchema>;

// ---------------------------------------------------------------------------------------------
// The JSON file. `scopes`, `image_ids` and `free_feature_ids` have the shape of the simulator's
// GET /_sim/manifest answer, so a manifest is a valid configuration file.

const nonEmptyName = z.string().trim().min(1, { error: 'must not be empty' }).max(255, { error: 'must be at most 255 characters' });
const positiveInt = z.int({ error: 'must be a positive whole number' }).positive({ error: 'must be a positive whole number' });

/** Groupings a budget may cover besides the total (tag:<key> too). */
export const BUDGET_GROUPINGS = ['project', 'region', 'kind', 'flavor'] as const;
export const DEFAULT_BUDGET_THRESHOLDS: readonly number[] = Object.freeze([50, 80, 100]);
/** Largest amount_per_month: 15 digits before the point, 6 after. */
const BUDGET_AMOUNT = /^\d{1,15}(\.\d{1,6})?$/;

/**
 * One budget, as in the configuration file and in the web app's budget form (one schema for
 * both): `by` absent = the total; `amount_per_month` a decimal string (exact, never a float).
 */
export const BudgetSchema = z
  .strictObject({
    name: nonEmptyName.max(100, { error: 'must be at most 100 characters' }),
    by: z
      .string()
      .trim()
      .refine((b) => (BUDGET_GROUPINGS as readonly string[]).includes(b) || /^tag:\S/.test(b), {
        error: `must be one of ${BUDGET_GROUPINGS.join(', ')} or tag:<key> (leave it out for the total)`,
      })
      .optional(),
    value: nonEmptyName.optional(),
    currency: z
      .string()
      .trim()
      .regex(/^[A-Za-z]{3}$/, { error: 'must be an ISO 4217 currency code of 3 letters, e.g. EUR' })
      .transform((c) => c.toUpperCase()),
    amount_per_month: z
      .string({ error: 'must be a decimal number in a string, e.g. "50000" or "1234.50" (exact, never a float)' })
      .trim()
      .regex(BUDGET_AMOUNT, { error: 'must be a decimal number such as 50000 or 1234.50 (at most 15 digits before the point and 6 after)' })
      .refine((a) => /[1-9]/.test(a), { error: 'must be greater than 0' })
      .transform((a) => a.replace(/^0+(?=\d)/, '').replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '')),
    thresholds: z
      .array(z.int({ error: 'must be whole percentages' }).min(1, { error: 'must be from 1 to 1000 (percent)' }).max(1000, { error: 'must be from 1 to 1000 (percent)' }))
      .min(1, { error: 'must name at least one percentage' })
      .max(10, { error: 'must have at most 10 percentages' })
      .refine((t) => new Set(t).size === t.length, { error: 'must not repeat a percentage' })
      .transform((t) => [...t].sort((a, b) => a - b))
      .default([...DEFAULT_BUDGET_THRESHOLDS]),
    notify: z
      .array(nonEmptyName)
      .refine((n) => new Set(n).size === n.length, { error: 'must not repeat a channel' })
      .default([]),
  })
  .superRefine((b, ctx) => {
    if (b.by !== undefined && b.value === undefined) ctx.addIssue({ code: 'custom', path: ['value'], message: `is required with by (the group of ${b.by} the budget covers)` });
    if (b.by === undefined && b.value !== undefined) ctx.addIssue({ code: 'custom', path: ['by'], message: 'is required with value (e.g. "tag:team"); leave both out for the total' });
  });
export type BudgetInput = z.input<typeof BudgetSchema>;

const ScopeSchema = z.strictObject({
  project_id: positiveInt,
  region_id: positiveInt,
  security_groups: z.array(nonEmptyName).default([]),
  k8s_clusters: z.array(nonEmptyName).default([]),
});

const cronExpression = z.string().superRefine((pattern, ctx) => {
  const reason = cronProblem(pattern);
  if (reason) ctx.addIssue({ code: 'custom', message: reason });
});

function cronProblem(pattern: string): string | null {
  try {
    if (cron.validate(pattern)) return null;
    const errors = cron.validateDetailed(pattern).errors;
    const detail = errors.map((e) => e.message).join('; ');
    return `is not a valid cron expression${detail ? ` (${detail})` : ''}`;
  } catch (err) {
    return `is not a valid cron expression (${(err as Error).message})`;
  }
}

const SchedulesSchema = z.strictObject(
  Object.fromEntries(COLLECTOR_NAMES.map((name) => [name, cronExpression.optional()])) as Record<
    CollectorName,
    z.ZodOptional<typeof cronExpression>
  >,
);

const roleSchema = z.enum(ROLES, { error: `must be one of ${ROLES.join(', ')}` });

const UserSchema = z.strictObject({
  name: z
    .string()
    .trim()
    .min(1, { error: 'must not be empty' })
    .max(100, { error: 'must be at most 100 characters' })
    .regex(/^[^\s\u0000-\u001f]+$/, { error: 'must not contain spaces or control characters' }),
  role: roleSchema,
  // The reason never echoes the hash.
  password_hash: z.string().superRefine((text, ctx) => {
    const parsed = parsePasswordHash(text);
    if ('problem' in parsed) ctx.addIssue({ code: 'custom', message: parsed.problem });
  }),
});

const headerName = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9-]{1,100}$/, { error: 'must be an HTTP header name (letters, digits, -)' })
  .transform((h) => h.toLowerCase());

const ProxySchema = z.strictObject({
  header: headerName,
  groups_header: headerName.nullable().default(null),
  trusted_addresses: z
    .array(
      z.string().superRefine((text, ctx) => {
        const rule = parseAddressRule(text);
        if ('problem' in rule) ctx.addIssue({ code: 'custom', message: rule.problem });
      }),
    )
    .min(1, { error: 'must list at least one proxy address: the header is honoured only from these' }),
  role_map: z.record(nonEmptyName, roleSchema).default({}),
  default_role: roleSchema.nullable().default(null),
});

const LoginThrottleSchema = z
  .strictObject({
    free_failures_per_account: z.int().min(1).max(1000).default(5),
    free_failures_per_address: z.int().min(1).max(10_000).default(20),
    first_delay_seconds: z.number().positive().max(60).default(1),
    max_delay_seconds: z.number().positive().max(24 * 3600).default(900),
    forget_after_hours: z.number().positive().max(24 * 30).default(24),
  })
  .superRefine((t, ctx) => {
    if (t.max_delay_seconds < t.first_delay_seconds) {
      ctx.addIssue({ code: 'custom', path: ['max_delay_seconds'], message: 'must be at least first_delay_seconds' });
    }
    // Otherwise a client waiting out the longest delay would find its failures forgotten.
    if (t.forget_after_hours * 3600 <= t.max_delay_seconds) {
      ctx.addIssue({ code: 'custom', path: ['forget_after_hours'], message: 'must be longer than max_delay_seconds' });
    }
  });

const AuthSchema = z.strictObject({
  session_ttl_hours: z.number().positive().max(24 * 90).default(12),
  login_throttle: LoginThrottleSchema.prefault({}),
  /** Replaced by login_throttle: refused with a pointer (see actionSettings). */
  login_rate_limit: z.unknown().optional(),
  proxy: ProxySchema.nullable().default(null),
});

const clockTime = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, { error: 'must be HH:MM (24 h)' });

const IdleRulesSchema = z.strictObject({
  no_owner: z
    .strictObject({ enabled: z.boolean().default(true), min_running_days: z.int().min(0).max(3650).default(30) })
    .prefault({}),
  expired: z.strictObject({ enabled: z.boolean().default(true), tag_key: nonEmptyName.default('expires') }).prefault({}),
  off_hours: z
    .strictObject({
      enabled: z.boolean().default(true),
      tag_key: nonEmptyName.default('env'),
      values: z.array(nonEmptyName).min(1).default(['dev', 'test', 'sandbox']),
      timezone: z
        .string()
        .default('UTC')
        .refine(isTimeZone, { error: 'must be an IANA time zone such as Europe/Berlin or UTC' }),
      working_hours: z
        .strictObject({ start: clockTime.default('08:00'), end: clockTime.default('20:00') })
        .prefault({})
        .refine((h) => h.start < h.end, { error: 'start must be before end' }),
      working_days: z.array(z.int().min(1).max(7)).default([1, 2, 3, 4, 5]),
    })
    .prefault({}),
  quarantine: z.strictObject({ enabled: z.boolean().default(true), security_groups: z.array(nonEmptyName).default([]) }).prefault({}),
  cluster_clean_up: z
    .strictObject({ enabled: z.boolean().default(true), task_statuses: z.array(nonEmptyName).default(['CLUSTER_CLEAN_UP']) })
    .prefault({}),
});

const NotificationsSchema = z.strictObject({
  /** Optional here when CLOUDTALLY_WEBHOOK_URL gives it (a webhook URL is a secret). */
  webhook_url: z
    .string()
    .refine((s) => hasProtocol(s, ['http:', 'https:']), { error: 'must be an absolute http(s) URL' })
    .optional(),
  timeout_ms: z.int().min(100).max(60_000).default(5_000),
  retries: z.int().min(0).max(10).default(2),
  app_url: z
    .string()
    .refine((s) => hasProtocol(s, ['http:', 'https:']), { error: 'must be an absolute http(s) URL' })
    .transform((s) => s.replace(/\/+$/, ''))
    .nullable()
    .default(null),
});

const MAIL_ADDRESS = /^[^\s@<>"(),;:]+@[^\s@<>"(),;:]+\.?[^\s@<>"(),;:]*$/;

/** `local@domain`, or `Display Name <local@domain>`. */
function isMailAddress(text: string): boolean {
  const named = /^[^<>\r\n]*<([^<>]+)>$/.exec(text);
  return MAIL_ADDRESS.test(named ? named[1]! : text);
}

const channelName = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, { error: 'must be 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit' });

const ChannelSchema = z.discriminatedUnion(
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
    }),
    z.strictObject({
      name: channelName,
      type: z.literal('email'),
      to: z
        .array(z.string().trim().refine(isMailAddress, { error: 'must be a mail address' }))
        .min(1, { error: 'must list at least one address' }),
    }),
  ],
  { error: 'must have "type": "webhook" or "email"' },
);

const OutboxSchema = z
  .strictObject({
    max_attempts: z.int().min(1).max(100).default(8),
    first_retry_seconds: z.number().min(1).max(24 * 3600).default(30),
    max_retry_seconds: z.number().min(1).max(7 * 24 * 3600).default(3600),
    timeout_ms: z.int().min(100).max(120_000).default(10_000),
    interval_seconds: z.number().min(1).max(3600).default(15),
    overdue_after_minutes: z.number().min(1).max(7 * 24 * 60).default(30),
  })
  .superRefine((o, ctx) => {
    if (o.max_retry_seconds < o.first_retry_seconds) ctx.addIssue({ code: 'custom', path: ['max_retry_seconds'], message: 'must be at least first_retry_seconds' });
  });

const deliveryParamValue = z.union([z.string(), z.number(), z.boolean(), z.array(z.union([z.string(), z.number()]))], {
  error: 'must be text, a number, true/false or a list of them (as the report\'s query parameter would be)',
});

const DeliverySchema = z.strictObject({
  name: channelName.optional(),
  report: nonEmptyName,
  params: z.record(z.string(), deliveryParamValue).default({}),
  schedule: cronExpression,
  notify: z.array(channelName).min(1, { error: 'must name at least one channel' }),
  format: z.literal('csv', { error: 'must be "csv"' }).default('csv'),
});

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

const decimalText = (what: string) =>
  z
    .union([z.string(), z.number()], { error: `must be a ${what} (a number or decimal text such as "10")` })
    .transform((v) => String(v).trim())
    .refine((v) => /^\d+(\.\d+)?$/.test(v), { error: `must be a ${what} (a number or decimal text such as "10")` });

const groupingName = nonEmptyName.refine((v) => ['project', 'region', 'kind', 'flavor', 'state'].includes(v) || (v.startsWith('tag:') && v.slice(4).trim() !== ''), {
  error: 'must be project, region, kind, flavor, state or tag:<key>',
});

const AnomaliesSchema = z.strictObject({
  groupings: z.array(groupingName).min(1, { error: 'must name at least one grouping' }).default([...DEFAULT_ANOMALY_GROUPINGS]),
  baseline_days: z.int().min(3).max(90).default(14),
  min_baseline_days: z.int().min(3).max(90).default(7),
  mad_multiplier: decimalText('non-negative number').default('3'),
  min_change: decimalText('non-negative amount').default('10'),
  min_change_by_currency: z.record(z.string().trim().regex(/^[A-Za-z]{3}$/, { error: 'must be a currency code such as EUR' }), decimalText('non-negative amount')).default({}),
  min_change_percent: decimalText('non-negative percentage').default('20'),
  alert_groupings: z
    .array(z.strictObject({ by: groupingName, notify: z.array(nonEmptyName).min(1, { error: 'must name at least one channel' }) }))
    .default([]),
});

const FileSchema = z.strictObject({
  scopes: z.array(ScopeSchema).default([]),
  image_ids: z.array(nonEmptyName).default([]),
  free_feature_ids: z.array(positiveInt).default([]),
  schedules: SchedulesSchema.default({}),
  retention_days: z.int().min(1).max(3650).optional(),
  retention_hourly_days: z.int().min(1).max(3650).optional(),
  cost_max_gap_hours: z.int().min(1).max(744).optional(),
  tag_aliases: z.record(nonEmptyName, nonEmptyName).default({}),
  tag_key_case: z.enum(['lower', 'preserve'], { error: 'must be "lower" or "preserve"' }).default('lower'),
  tag_value_case: z.enum(['lower', 'preserve'], { error: 'must be "lower" or "preserve"' }).default('preserve'),
  tag_value_aliases: z
    .record(nonEmptyName, z.record(nonEmptyName, nonEmptyName, { error: 'must map alias values to canonical values, e.g. {"ML": "ml"}' }), {
      error: 'must map tag keys to value aliases, e.g. {"team": {"ML": "ml"}}',
    })
    .default({}),
  focus: z
    .strictObject({
      billing_account_id: nonEmptyName.optional(),
      billing_account_name: nonEmptyName.optional(),
      provider_name: nonEmptyName.optional(),
      publisher_name: nonEmptyName.optional(),
      invoice_issuer_name: nonEmptyName.optional(),
    })
    .prefault({}),
  budgets: z.array(BudgetSchema).optional(),
  anomalies: AnomaliesSchema.prefault({}),
  allocation: z.array(AllocationRuleSchema).optional(),
  client: z
    .strictObject({
      timeout_ms: z.int().min(100).max(600_000).default(30_000),
      max_concurrency: z.int().min(1).max(256).default(8),
      max_retries: z.int().min(0).max(20).default(4),
    })
    .default({ timeout_ms: 30_000, max_concurrency: 8, max_retries: 4 }),
  collect_on_start: z.boolean().default(true),
  users: z.array(UserSchema).default([]),
  auth: AuthSchema.prefault({}),
  idle_rules: IdleRulesSchema.prefault({}),
  notifications: NotificationsSchema.nullable().default(null),
  channels: z.array(ChannelSchema).default([]),
  outbox: OutboxSchema.prefault({}),
  deliveries: z.array(DeliverySchema).default([]),
  stop_grace_hours: z.number().min(0).max(24 * 30).default(24),
  owner_tag_key: nonEmptyName.default('owner'),
});
type FileSettings = z.infer<typeof FileSchema>;

/** The simulator's manifest: same fields as the file; keys it may add later are ignored. */
const ManifestSchema = z.looseObject({
  scopes: z.array(z.looseObject(ScopeSchema.shape)),
  image_ids: z.array(nonEmptyName).default([]),
  free_feature_ids: z.array(positiveInt).default([]),
});

// ---------------------------------------------------------------------------------------------
// Loading.

export function loadConfig(
  env: Record<string, string | undefined> = process.env,
  opts: LoadConfigOptions = {},
): Config {
  const problems: ConfigProblem[] = [];

  const { vars, invalid } = parseEnv(env, problems);

  const configFile = vars.CLOUDTALLY_CONFIG ?? null;
  let file: FileSettings | null = null;
  if (configFile !== null) {
    const loaded = readConfigFile(configFile, opts.readFile ?? ((p) => readFileSync(p, 'utf8')));
    if ('problem' in loaded) {
      problems.push(loaded.problem);
    } else {
      const fileResult = FileSchema.safeParse(loaded.value);
      if (fileResult.success) file = fileResult.data;
      else problems.push(...zodProblems(fileResult.error));
    }
  } else {
    file = FileSchema.parse({});
  }

  const simulator = parseSimulatorEnv(env);
  problems.push(...simulator.problems);
  const cloud = cloudConfig(vars, invalid, problems);
  const scopes = file ? toScopes(file.scopes, problems, 'scopes') : [];
  if (cloud?.mode === 'remote' && file && scopes.length === 0) {
    problems.push({
      path: 'scopes',
      message:
        'at least one scope (project_id, region_id) is required with CLOUDTALLY_API_URL: the API has no endpoint that lists projects and regions',
    });
  }
  const tagKeyCase = file?.tag_key_case ?? 'lower';
  const tagAliases = file ? normaliseAliases(file.tag_aliases, tagKeyCase, problems) : {};
  const tagValueCase = file?.tag_value_case ?? 'preserve';
  const tagValueAliases = file ? normaliseValueAliases(file.tag_value_aliases, { tagAliases, tagKeyCase, tagValueCase }, problems) : {};

  const retentionDays = vars.CLOUDTALLY_RETENTION_DAYS ?? file?.retention_days ?? 90;
  // Default: hourly detail for the whole retention (history is stored as versions since issue 15:
  // an unchanged resource costs almost nothing per collection, so thinning is no longer needed).
  const retentionHourlyDays = Math.min(vars.CLOUDTALLY_RETENTION_HOURLY_DAYS ?? file?.retention_hourly_days ?? retentionDays, retentionDays);
  const hourlyExplicit = vars.CLOUDTALLY_RETENTION_HOURLY_DAYS ?? file?.retention_hourly_days;
  if (hourlyExplicit !== undefined && hourlyExplicit > retentionDays) {
    problems.push({
      path: vars.CLOUDTALLY_RETENTION_HOURLY_DAYS !== undefined ? 'CLOUDTALLY_RETENTION_HOURLY_DAYS' : 'retention_hourly_days',
      message: `must not exceed the retention (${retentionDays} days)`,
    });
  }

  if (vars.DATABASE_READ_URL && !vars.DATABASE_URL) {
    problems.push({
      path: 'DATABASE_READ_URL',
      message: 'needs DATABASE_URL: a read replica follows a Postgres primary (the embedded PGlite has none)',
    });
  }

  const budgets = file?.budgets ? budgetSettings(file.budgets, { tagAliases, tagKeyCase, tagValueCase, tagValueAliases }, problems) : null;
  const allocation = file ? allocationRules(file.allocation ?? (configFile === null && cloud?.mode === 'simulator' ? DEMO_ALLOCATION : []), allocationNormaliser({ tagAliases, tagKeyCase, tagValueCase, tagValueAliases }), problems) : [];

  const metrics = metricsSettings(vars, invalid, problems);
  const anomalies = file ? anomalySettings(file.anomalies, { tagAliases, tagKeyCase }, file.channels, problems) : null;
  const actions = file ? actionSettings(file, vars, { tagAliases, tagKeyCase }, problems) : null;
  const web = webSettings(vars, file?.auth.proxy?.trusted_addresses ?? [], problems);
  const notify = file ? notifySettings(file, vars, env, invalid, opts, problems) : null;

  if (problems.length > 0 || !cloud || !file || !actions || !notify || !anomalies) {
    throw new ConfigError(problems);
  }

  const config: ConfigShape = {
    cloud,
    database: vars.DATABASE_URL
      ? { driver: 'pg', url: vars.DATABASE_URL }
      : { driver: 'pglite', dataDir: vars.CLOUDTALLY_DATA_DIR ?? './data' },
    databaseReadUrl: vars.DATABASE_READ_URL ?? null,
    server: { host: vars.HOST ?? '127.0.0.1', port: vars.PORT ?? 3000 },
    web,
    logLevel: vars.LOG_LEVEL ?? 'info',
    retentionDays,
    retentionHourlyDays,
    costMaxGapHours: vars.CLOUDTALLY_COST_MAX_GAP_HOURS ?? file.cost_max_gap_hours ?? null,
    simulator: simulator.options,
    demoStateFile: demoStateFile(vars.CLOUDTALLY_DATA_DIR ?? './data'),
    scopes,
    imageIds: file.image_ids,
    freeFeatureIds: file.free_feature_ids,
    schedules: { ...DEFAULT_SCHEDULES, ...definedEntries(file.schedules) },
    tagAliases,
    tagKeyCase,
    tagValueCase,
    tagValueAliases,
    focus: focusSettings(file.focus),
    budgets: budgets ?? null,
    anomalies,
    allocation,
    client: {
      timeoutMs: file.client.timeout_ms,
      maxConcurrency: file.client.max_concurrency,
      maxRetries: file.client.max_retries,
    },
    collectOnStart: file.collect_on_start,
    ...actions,
    ...notify,
    metrics,
    configFile,
  };
  return deepFreeze(config);
}

/**
 * The file's budgets with `by`'s tag key and `value` through the tag rules, so that they name the
 * groups the reports show; names must be unique (case-insensitively).
 */
function budgetSettings(list: z.output<typeof BudgetSchema>[], rules: TagRules, problems: ConfigProblem[]): BudgetSettings[] {
  const seen = new Map<string, number>();
  return list.map((b, i) => {
    const key = b.name.toLowerCase();
    const first = seen.get(key);
    if (first !== undefined) problems.push({ path: `budgets[${i}].name`, message: `repeats budgets[${first}] (budget names are compared case-insensitively)` });
    else seen.set(key, i);
    return normaliseBudget(b, rules);
  });
}

/** A parsed budget (file or web form) as settings: a tag grouping's key and value normalised. */
export function normaliseBudget(b: z.output<typeof BudgetSchema>, rules: TagRules): BudgetSettings {
  let by = b.by ?? null;
  let value = b.value ?? null;
  if (by !== null && value !== null && by.startsWith('tag:')) {
    const tagKey = normaliseTagKey(by.slice(4), rules);
    by = `tag:${tagKey}`;
    value = normaliseTagValue(tagKey, value, rules);
  }
  return { name: b.name, by, value, currency: b.currency, amountPerMonth: b.amount_per_month, thresholds: b.thresholds, notify: b.notify };
}

function demoStateFile(dataDir: string): string | null {
  return dataDir === 'memory://' || dataDir === '' ? null : join(dataDir, 'demo-simulator.json');
}

type ActionSettings = Pick<ConfigShape, 'users' | 'auth' | 'idleRules' | 'notifications' | 'stopGraceHours' | 'ownerTagKey'>;

/** Users, sign-in, idle rules and notifications; tag keys normalised like the collected tags. */
function actionSettings(
  file: FileSettings,
  vars: Env,
  tags: { tagAliases: Record<string, string>; tagKeyCase: TagKeyCase },
  problems: ConfigProblem[],
): ActionSettings {
  const seen = new Map<string, number>();
  file.users.forEach((user, i) => {
    const key = accountKey(user.name);
    const first = seen.get(key);
    if (first !== undefined) problems.push({ path: `users[${i}].name`, message: `repeats users[${first}] (names are compared case-insensitively)` });
    else seen.set(key, i);
  });
  const secret = vars.CLOUDTALLY_SESSION_SECRET ?? null;
  if (secret !== null && secret.length < 32) {
    problems.push({ path: 'CLOUDTALLY_SESSION_SECRET', message: 'must be at least 32 characters (e.g. openssl rand -hex 32)' });
  } else if (secret === null && file.users.length > 0) {
    problems.push({
      path: 'CLOUDTALLY_SESSION_SECRET',
      message: 'is required when users are configured (at least 32 characters, e.g. openssl rand -hex 32), so that logins survive restarts and work on every replica',
    });
  }

  let notifications: NotificationSettings | null = null;
  const webhookUrl = vars.CLOUDTALLY_WEBHOOK_URL ?? file.notifications?.webhook_url;
  if (webhookUrl) {
    const n = file.notifications;
    notifications = { webhookUrl, timeoutMs: n?.timeout_ms ?? 5_000, retries: n?.retries ?? 2, appUrl: n?.app_url ?? null };
  } else if (file.notifications) {
    problems.push({ path: 'notifications.webhook_url', message: 'is required (or set CLOUDTALLY_WEBHOOK_URL); use "notifications": null for none' });
  }

  if (file.auth.login_rate_limit !== undefined) {
    problems.push({
      path: 'auth.login_rate_limit',
      message:
        'was replaced by auth.login_throttle (growing delays per account and client address instead of a lock-out per user name; see docs/production.md, "Sign-in throttling")',
    });
  }

  const key = (k: string) => normaliseTagKey(k, tags);
  const rules = file.idle_rules;
  const proxy = file.auth.proxy;
  const throttle = file.auth.login_throttle;
  return {
    users: file.users.map((u) => ({ name: u.name, role: u.role, passwordHash: u.password_hash })),
    auth: {
      sessionSecret: secret,
      sessionTtlHours: file.auth.session_ttl_hours,
      loginThrottle: {
        freeFailuresPerAccount: throttle.free_failures_per_account,
        freeFailuresPerAddress: throttle.free_failures_per_address,
        firstDelaySeconds: throttle.first_delay_seconds,
        maxDelaySeconds: throttle.max_delay_seconds,
        forgetAfterHours: throttle.forget_after_hours,
      },
      proxy: proxy
        ? {
            header: proxy.header,
            groupsHeader: proxy.groups_header,
            trustedAddresses: proxy.trusted_addresses.map((a) => a.trim()),
            roleMap: { ...proxy.role_map },
            defaultRole: proxy.default_role,
          }
        : null,
    },
    idleRules: {
      noOwner: { enabled: rules.no_owner.enabled, minRunningDays: rules.no_owner.min_running_days },
      expired: { enabled: rules.expired.enabled, tagKey: key(rules.expired.tag_key) },
      offHours: {
        enabled: rules.off_hours.enabled,
        tagKey: key(rules.off_hours.tag_key),
        values: [...new Set(rules.off_hours.values.map((v) => v.toLowerCase()))],
        timezone: rules.off_hours.timezone,
        workingHours: { ...rules.off_hours.working_hours },
        workingDays: [...new Set(rules.off_hours.working_days)].sort((a, b) => a - b),
      },
      quarantine: { enabled: rules.quarantine.enabled, securityGroups: [...new Set(rules.quarantine.security_groups)] },
      clusterCleanUp: { enabled: rules.cluster_clean_up.enabled, taskStatuses: [...new Set(rules.cluster_clean_up.task_statuses)] },
    },
    notifications,
    stopGraceHours: file.stop_grace_hours,
    ownerTagKey: key(file.owner_tag_key),
  };
}

/**
 * CLOUDTALLY_PUBLIC_URL (an origin: http(s), no path, query, fragment or credentials) and the
 * trusted reverse proxies (CLOUDTALLY_TRUSTED_PROXIES, comma- or space-separated, plus the
 * sign-in proxy's addresses, which are proxies too).
 */
function webSettings(vars: Env, proxyAddresses: readonly string[], problems: ConfigProblem[]): WebSettings {
  let publicUrl: string | null = null;
  const text = vars.CLOUDTALLY_PUBLIC_URL;
  if (text !== undefined) {
    const problem = publicUrlProblem(text);
    if (problem) problems.push({ path: 'CLOUDTALLY_PUBLIC_URL', message: problem });
    else publicUrl = new URL(text).origin;
  }
  const listed = (vars.CLOUDTALLY_TRUSTED_PROXIES ?? '').split(/[\s,]+/).filter((t) => t !== '');
  for (const entry of listed) {
    const rule = parseAddressRule(entry);
    if ('problem' in rule) problems.push({ path: 'CLOUDTALLY_TRUSTED_PROXIES', message: `${JSON.stringify(entry)} ${rule.problem}` });
  }
  return { publicUrl, trustedProxies: [...new Set([...listed, ...proxyAddresses.map((a) => a.trim())])] };
}

function publicUrlProblem(text: string): string | null {
  const shape = 'must be the absolute http(s) address people open, without a path (e.g. https://cloudtally.example.com)';
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return shape;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return shape;
  if (url.username || url.password) return 'must not carry a user name or password';
  if (url.search || url.hash || text.includes('?') || text.includes('#')) return 'must not have a query (?) or fragment (#)';
  if (url.pathname !== '/') return 'must not have a path: cloudtally is served at the root of its host (its cookies use the __Host- prefix, which needs Path=/)';
  return null;
}

/** Each variable parsed on its own, so one bad value does not hide the others' problems. */
function parseEnv(
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

function cloudConfig(vars: Env, invalid: Set<string>, problems: ConfigProblem[]): CloudConfig | null {
  if (invalid.has('CLOUDTALLY_API_URL') || invalid.has('CLOUDTALLY_API_KEY')) return null;
  const url = vars.CLOUDTALLY_API_URL;
  const key = vars.CLOUDTALLY_API_KEY;
  if (url && key) return { mode: 'remote', baseUrl: url, apiKey: key };
  if (!url && !key) return { mode: 'simulator' };
  const [missing, present] = url ? ['CLOUDTALLY_API_KEY', 'CLOUDTALLY_API_URL'] : ['CLOUDTALLY_API_URL', 'CLOUDTALLY_API_KEY'];
  problems.push({
    path: missing,
    message: `is required when ${present} is set (set both for a real cloud, neither for the built-in simulator)`,
  });
  return null;
}

function readConfigFile(
  path: string,
  readFile: (path: string) => string,
): { value: unknown } | { problem: ConfigProblem } {
  let text: string;
  try {
    text = readFile(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return { problem: { path: 'CLOUDTALLY_CONFIG', message: `cannot read ${JSON.stringify(path)} (${code ?? (err as Error).message})` } };
  }
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (err) {
    return { problem: { path: 'CLOUDTALLY_CONFIG', message: `${JSON.stringify(path)} is not valid JSON (${(err as Error).message})` } };
  }
}

function toScopes(raw: FileSettings['scopes'], problems: ConfigProblem[], basePath: string): Scope[] {
  const seen = new Map<string, number>();
  raw.forEach((s, i) => {
    const key = `${s.project_id}/${s.region_id}`;
    const first = seen.get(key);
    if (first !== undefined) {
      problems.push({
        path: `${basePath}[${i}]`,
        message: `repeats ${basePath}[${first}] (project ${s.project_id}, region ${s.region_id}); list each scope once`,
      });
    } else {
      seen.set(key, i);
    }
  });
  return raw.map((s) => ({
    projectId: s.project_id,
    regionId: s.region_id,
    securityGroups: [...new Set(s.security_groups)],
    k8sClusters: [...new Set(s.k8s_clusters)],
  }));
}

function normaliseAliases(
  raw: Record<string, string>,
  keyCase: TagKeyCase,
  problems: ConfigProblem[],
): Record<string, string> {
  const aliases: Record<string, string> = Object.create(null) as Record<string, string>;
  const origin: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [alias, canonical] of Object.entries(raw)) {
    const from = applyKeyCase(alias, keyCase);
    const to = applyKeyCase(canonical, keyCase);
    const path = `tag_aliases${formatPathSegment(alias)}`;
    if (from in aliases && aliases[from] !== to) {
      problems.push({
        path,
        message: `maps to "${canonical}" but "${origin[from]}" is the same key in ${keyCase} case and maps to "${aliases[from]}"`,
      });
      continue;
    }
    aliases[from] = to;
    origin[from] = alias;
  }
  for (const [from, to] of Object.entries(aliases)) {
    if (from !== to && to in aliases && aliases[to] !== to) {
      problems.push({
        path: `tag_aliases${formatPathSegment(origin[from] ?? from)}`,
        message: `maps to "${to}", which is itself an alias of "${aliases[to]}"; map straight to the canonical key`,
      });
    }
  }
  return Object.fromEntries(Object.entries(aliases));
}

/**
 * tag_value_aliases with keys through the key rules (case, tag_aliases) and values through the
 * value case. Two entries that become the same (key, alias) must agree; a canonical value must not
 * itself be an alias.
 */
function normaliseValueAliases(
  raw: Record<string, Record<string, string>>,
  rules: Pick<TagRules, 'tagAliases' | 'tagKeyCase' | 'tagValueCase'>,
  problems: ConfigProblem[],
): Record<string, Record<string, string>> {
  const byKey = new Map<string, { map: Map<string, string>; origin: Map<string, string> }>();
  for (const [rawKey, values] of Object.entries(raw)) {
    const key = normaliseTagKey(rawKey, rules);
    const entry = byKey.get(key) ?? { map: new Map<string, string>(), origin: new Map<string, string>() };
    byKey.set(key, entry);
    for (const [alias, canonical] of Object.entries(values)) {
      const from = applyValueCase(alias, rules.tagValueCase);
      const to = applyValueCase(canonical, rules.tagValueCase);
      const path = `tag_value_aliases${formatPathSegment(rawKey)}${formatPathSegment(alias)}`;
      const earlier = entry.map.get(from);
      if (earlier !== undefined && earlier !== to) {
        problems.push({
          path,
          message: `maps to "${canonical}" but ${entry.origin.get(from)} is the same value of tag key "${key}" (after normalisation) and maps to "${earlier}"`,
        });
        continue;
      }
      entry.map.set(from, to);
      entry.origin.set(from, path);
    }
  }
  const result: Array<[string, Record<string, string>]> = [];
  for (const [key, { map, origin }] of byKey) {
    for (const [from, to] of map) {
      const next = map.get(to);
      if (from !== to && next !== undefined && next !== to) {
        problems.push({ path: origin.get(from)!, message: `maps to "${to}", which is itself an alias of "${next}"; map straight to the canonical value` });
      }
    }
    result.push([key, Object.fromEntries(map)]);
  }
  // fromEntries defines own properties, so a key such as `__proto__` stays an ordinary key.
  return Object.fromEntries(result);
}

function anomalySettings(
  raw: FileSettings['anomalies'],
  tags: { tagAliases: Record<string, string>; tagKeyCase: TagKeyCase },
  channels: readonly { name: string }[],
  problems: ConfigProblem[],
): AnomalySettings {
  const dimension = (by: string) => (by.startsWith('tag:') ? `tag:${normaliseTagKey(by.slice(4).trim(), tags)}` : by);
  const groupings = [...new Set(raw.groupings.map(dimension))];
  if (raw.min_baseline_days > raw.baseline_days) {
    problems.push({ path: 'anomalies.min_baseline_days', message: `must not exceed baseline_days (${raw.baseline_days})` });
  }
  const alerts = raw.alert_groupings.map((a, i) => {
    const grouping = dimension(a.by);
    if (!groupings.includes(grouping)) {
      problems.push({ path: `anomalies.alert_groupings[${i}].by`, message: `must be one of the watched groupings (${groupings.join(', ')})` });
    }
    problems.push(...unknownChannelProblems(a.notify, `anomalies.alert_groupings[${i}].notify`, channels));
    return { grouping, notify: [...new Set(a.notify)] };
  });
  return {
    groupings,
    baselineDays: raw.baseline_days,
    minBaselineDays: raw.min_baseline_days,
    madMultiplier: raw.mad_multiplier,
    minChange: { default: raw.min_change, byCurrency: Object.fromEntries(Object.entries(raw.min_change_by_currency).map(([c, v]) => [c.toUpperCase(), v])) },
    minChangePercent: raw.min_change_percent,
    alerts,
  };
}

/** Groupings and group values of allocation rules, normalised like the collected tags. */
function allocationNormaliser(rules: TagRules) {
  return {
    dimension: (by: string): string | null => {
      if ((FIXED_DIMENSIONS as readonly string[]).includes(by)) return by;
      const key = by.startsWith(TAG_DIMENSION_PREFIX) ? by.slice(TAG_DIMENSION_PREFIX.length).trim() : '';
      return key !== '' ? TAG_DIMENSION_PREFIX + normaliseTagKey(key, rules) : null;
    },
    value: (dimension: string, value: string): string =>
      dimension.startsWith(TAG_DIMENSION_PREFIX) ? normaliseTagValue(dimension.slice(TAG_DIMENSION_PREFIX.length), value, rules) : value.trim(),
  };
}

function focusSettings(raw: FileSettings['focus']): FocusSettings {
  const providerName = raw.provider_name ?? DEFAULT_FOCUS_PROVIDER_NAME;
  const billingAccountId = raw.billing_account_id ?? DEFAULT_FOCUS_BILLING_ACCOUNT_ID;
  return {
    billingAccountId,
    billingAccountName: raw.billing_account_name ?? billingAccountId,
    providerName,
    publisherName: raw.publisher_name ?? providerName,
    invoiceIssuerName: raw.invoice_issuer_name ?? providerName,
  };
}

/**
 * Scopes, image IDs and free-feature IDs from a simulator manifest (GET /_sim/manifest), for
 * simulator mode where the configuration has none. Throws ConfigError naming each bad field.
 */
export function scopesFromManifest(manifest: unknown): {
  scopes: readonly DeepReadonly<Scope>[];
  imageIds: readonly string[];
  freeFeatureIds: readonly number[];
} {
  const result = ManifestSchema.safeParse(manifest);
  if (!result.success) throw new ConfigError(zodProblems(result.error), 'simulator manifest');
  const problems: ConfigProblem[] = [];
  const scopes = toScopes(result.data.scopes, problems, 'scopes');
  if (problems.length > 0) throw new ConfigError(problems, 'simulator manifest');
  return deepFreeze({ scopes, imageIds: result.data.image_ids, freeFeatureIds: result.data.free_feature_ids });
}

/**
 * /metrics access. Default: 'token' when a token is given, else 'open' — the numbers carry no
 * secrets and no money, and Prometheus usually scrapes from inside the network; set 'token' or
 * 'off' when the port is reachable from where it should not be.
 */
function metricsSettings(vars: Env, invalid: Set<string>, problems: ConfigProblem[]): MetricsSettings {
  const token = vars.CLOUDTALLY_METRICS_TOKEN ?? null;
  const access = vars.CLOUDTALLY_METRICS_ACCESS ?? (token !== null ? 'token' : 'open');
  if (invalid.has('CLOUDTALLY_METRICS_ACCESS')) return { access: 'off', token: null };
  if (access === 'token') {
    if (token === null) {
      problems.push({ path: 'CLOUDTALLY_METRICS_TOKEN', message: 'is required when CLOUDTALLY_METRICS_ACCESS is token' });
    } else if (token.length < METRICS_TOKEN_MIN_LENGTH || !/^[\x21-\x7e]+$/.test(token)) {
      problems.push({
        path: 'CLOUDTALLY_METRICS_TOKEN',
        message: `must be at least ${METRICS_TOKEN_MIN_LENGTH} printable ASCII characters without spaces`,
      });
    }
    return { access, token };
  }
  if (token !== null) {
    problems.push({
      path: 'CLOUDTALLY_METRICS_TOKEN',
      message: `is set but CLOUDTALLY_METRICS_ACCESS is ${access}: the token would be ignored (unset one of them)`,
    });
  }
  return { access, token: null };
}

type NotifySettings = Pick<ConfigShape, 'channels' | 'smtp' | 'outbox' | 'deliveries'>;

/**
 * Channels (names unique; a webhook's secret read from its `secret_env`; email needs
 * CLOUDTALLY_SMTP_URL), the SMTP server and sender, the outbox's retries, and the scheduled
 * deliveries (each naming known channels, and with `opts.reports` a known report with valid params).
 */
function notifySettings(
  file: FileSettings,
  vars: Env,
  env: Record<string, string | undefined>,
  invalid: Set<string>,
  opts: LoadConfigOptions,
  problems: ConfigProblem[],
): NotifySettings {
  const smtpUrl = vars.CLOUDTALLY_SMTP_URL;
  const smtp: SmtpSettings | null = smtpUrl
    ? { url: smtpUrl, host: new URL(smtpUrl).host, from: vars.CLOUDTALLY_MAIL_FROM ?? `cloudtally@${opts.hostname ?? hostname()}` }
    : null;
  if (!smtp && vars.CLOUDTALLY_MAIL_FROM !== undefined) {
    problems.push({ path: 'CLOUDTALLY_MAIL_FROM', message: 'is set but CLOUDTALLY_SMTP_URL is not: mail cannot be sent without an SMTP server' });
  }

  const seen = new Map<string, number>();
  const channels: ChannelSettings[] = file.channels.map((c, i) => {
    const first = seen.get(c.name);
    if (first !== undefined) problems.push({ path: `channels[${i}].name`, message: `repeats channels[${first}] ("${c.name}"); channel names must be unique` });
    else seen.set(c.name, i);
    if (c.type === 'email') {
      if (!smtp && !invalid.has('CLOUDTALLY_SMTP_URL')) {
        problems.push({ path: `channels[${i}]`, message: `is an email channel, which needs CLOUDTALLY_SMTP_URL (smtp:// or smtps://)` });
      }
      return { name: c.name, type: 'email', to: [...new Set(c.to)] };
    }
    let secret: string | null = null;
    if (c.secret_env !== undefined) {
      const value = env[c.secret_env]?.trim();
      if (!value) problems.push({ path: `channels[${i}].secret_env`, message: `names ${c.secret_env}, which is not set (or empty)` });
      else secret = value;
    }
    return { name: c.name, type: 'webhook', url: c.url, secretEnv: c.secret_env ?? null, secret };
  });

  const reports = opts.reports ? new Map(opts.reports.map((r) => [r.name, r])) : null;
  const deliveryIds = new Map<string, number>();
  const deliveries: DeliverySettings[] = file.deliveries.map((d, i) => {
    const path = `deliveries[${i}]`;
    const id = d.name ?? String(i);
    const first = deliveryIds.get(id);
    if (first !== undefined) problems.push({ path: `${path}.name`, message: `repeats deliveries[${first}] ("${id}"); delivery names must be unique` });
    else deliveryIds.set(id, i);
    problems.push(...unknownChannelProblems(d.notify, `${path}.notify`, channels));
    const params = deliveryQuery(d.params);
    if (reports) {
      const report = reports.get(d.report);
      if (!report) problems.push({ path: `${path}.report`, message: `is not a report; one of ${[...reports.keys()].join(', ')}` });
      else problems.push(...deliveryParamProblems(report, params).map((p) => ({ path: `${path}.params${p.path ? formatPathSegment(p.path) : ''}`, message: p.message })));
    }
    return { id, name: d.name ?? null, report: d.report, params, schedule: d.schedule, notify: [...new Set(d.notify)], format: d.format };
  });

  const o = file.outbox;
  return {
    channels,
    smtp,
    outbox: {
      maxAttempts: o.max_attempts,
      firstRetrySeconds: o.first_retry_seconds,
      maxRetrySeconds: o.max_retry_seconds,
      timeoutMs: o.timeout_ms,
      intervalSeconds: o.interval_seconds,
      overdueAfterMinutes: o.overdue_after_minutes,
    },
    deliveries,
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

/** A delivery's params as the report's query string would carry them (numbers and booleans as text). */
function deliveryQuery(params: Record<string, string | number | boolean | Array<string | number>>): Record<string, string | string[]> {
  return Object.fromEntries(Object.entries(params).map(([k, v]) => [k, Array.isArray(v) ? v.map(String) : String(v)]));
}

/**
 * The problems of `params` for `report`, through the report's own parameter schema (the one the
 * web's query parsing uses); `path` is the parameter's name.
 */
export function deliveryParamProblems(report: Pick<DeliverableReport, 'params'>, params: Record<string, string | string[]>): ConfigProblem[] {
  let result: ReturnType<typeof report.params.safeParse>;
  try {
    result = report.params.safeParse(params);
  } catch (err) {
    return [{ path: '', message: `cannot be checked: ${(err as Error).message}` }];
  }
  if (result.success) return [];
  return result.error.issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ path: key, message: 'is not a parameter of this report' }))
      : [{ path: issue.path.map(String).join('.'), message: issue.message }],
  );
}

/** A copy safe to log: API keys and the database password replaced. */
export function describeConfig(config: Config): DeepReadonly<ConfigShape> {
  const copy = structuredClone(config) as ConfigShape;
  if (copy.cloud.mode === 'remote') copy.cloud.apiKey = '[redacted]';
  if (copy.database.driver === 'pg') copy.database.url = redactDatabaseUrl(copy.database.url);
  if (copy.databaseReadUrl) copy.databaseReadUrl = redactDatabaseUrl(copy.databaseReadUrl);
  if (copy.simulator.apiKey !== undefined) copy.simulator.apiKey = '[redacted]';
  for (const user of copy.users) user.passwordHash = '[redacted]';
  if (copy.auth.sessionSecret !== null) copy.auth.sessionSecret = '[redacted]';
  if (copy.notifications) copy.notifications.webhookUrl = '[redacted]';
  if (copy.metrics.token !== null) copy.metrics.token = '[redacted]';
  for (const channel of copy.channels) {
    if (channel.type === 'webhook') {
      channel.url = '[redacted]';
      if (channel.secret !== null) channel.secret = '[redacted]';
    }
  }
  if (copy.smtp) copy.smtp.url = '[redacted]';
  return copy;
}

// ---------------------------------------------------------------------------------------------
// Helpers.

function zodProblems(error: z.ZodError): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        problems.push({ path: formatPath([...issue.path, key]), message: 'is not a known setting' });
      }
    } else {
      problems.push({ path: formatPath(issue.path), message: issue.message });
    }
  }
  return problems;
}

function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(top level)';
  const [first, ...rest] = path;
  const head = typeof first === 'string' && isIdentifier(first) ? first : formatPathSegment(first!);
  return head + rest.map(formatPathSegment).join('');
}

function formatPathSegment(segment: PropertyKey): string {
  if (typeof segment === 'number') return `[${segment}]`;
  const s = String(segment);
  return isIdentifier(s) ? `.${s}` : `[${JSON.stringify(s)}]`;
}

function isIdentifier(s: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(s);
}

function definedEntries<T extends object>(obj: T): Partial<T> {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function deepFreeze<T>(value: T): DeepReadonly<T> {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value as DeepReadonly<T>;
}
