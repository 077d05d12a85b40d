/** The configuration's shape: the frozen Config and the types of its sections. */
import type { AllocationRule } from '../allocation-config.js';
import type { AccessScope } from '../auth/access-scope.js';
import type { Role } from '../auth/roles.js';
import type { SimulatorOptions } from '../simulator/options.js';
import type { TagKeyCase, TagValueCase } from '../tags/normalise.js';

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

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Who may read /metrics: anyone who reaches the port, holders of the bearer token, or nobody. */
export const METRICS_ACCESS_MODES = ['open', 'token', 'off'] as const;
export type MetricsAccessMode = (typeof METRICS_ACCESS_MODES)[number];

export interface MetricsSettings {
  access: MetricsAccessMode;
  /** Set exactly when access is 'token'. */
  token: string | null;
  /** Groupings with a `cloudtally_cost_per_hour` series per group (config file `metrics.cost_groupings`). */
  costGroupings: string[];
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

export interface Scope {
  projectId: number;
  regionId: number;
  securityGroups: string[];
  k8sClusters: string[];
  /** Tags configured per Kubernetes cluster name (the API gives them none); a cluster not named has none. */
  k8sClusterTags?: Record<string, Record<string, string>>;
}

export type CloudConfig = { mode: 'simulator' } | { mode: 'remote'; baseUrl: string; apiKey: string };

/** Same shape as openDatabase's argument (src/db/connection.ts). */
export type DatabaseSettings = { driver: 'pg'; url: string } | { driver: 'pglite'; dataDir: string };

/** How long a database session may stall before it is ended (Postgres; docs/production.md, "Reliability bounds"). */
export interface DatabaseSessionSettings {
  /** idle_in_transaction_session_timeout of every session; 0: off. */
  idleInTransactionTimeoutMs: number;
  /** lock_timeout of clean-up and maintenance: ending a dead run, retention, recompute-rollups. */
  lockTimeoutMs: number;
  /** TCP keepalive idle time and probe interval, on both ends of every session. */
  keepAliveSeconds: number;
}

/** The heartbeat of collection runs. */
export interface CollectionRunSettings {
  /** How often a running run writes its heartbeat. */
  heartbeatMs: number;
  /** A running run whose heartbeat is older than this is dead: it is ended and its sessions terminated. */
  staleAfterMs: number;
}

/** The built-in simulator's knobs, from the SIM_* variables (validated by the simulator's own schema). */
export type SimulatorSettings = Omit<SimulatorOptions, 'now'>;

export interface ClientSettings {
  /** One attempt of a request, the whole body included. */
  timeoutMs: number;
  maxConcurrency: number;
  maxRetries: number;
  /** Largest list answer (one page) read, in bytes. */
  maxPageBytes: number;
  /** Largest other answer (a record, a task, an error body) read, in bytes. */
  maxRecordBytes: number;
}

// ---- Users, roles and actions ---------------------------------------------------------------

export interface AuthUser {
  name: string;
  role: Role;
  /** `scrypt$N$r$p$salt$hash` (see src/auth/password.ts). */
  passwordHash: string;
  /** Only the resources of this scope; null: everything. */
  scope: AccessScope | null;
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
  /**
   * What proxied users see, by user name or group (src/auth/proxy-scope.ts); null: every proxied
   * user sees everything.
   */
  teamScopes: ProxyTeamScopes | null;
}

export interface ProxyTeamScopes {
  /** User name or group -> its scope, or 'all' (everything). */
  map: Record<string, AccessScope | 'all'>;
  /** A proxied user that no entry names: refused, or sees everything. */
  unmatched: 'refuse' | 'all';
}

export interface AuthSettings {
  /** CLOUDTALLY_SESSION_SECRET: signs cookies and CSRF tokens; required when users are configured. */
  sessionSecret: string | null;
  sessionTtlHours: number;
  /** Backoff after failed sign-ins, per (account, client address) and per client address (src/auth/rate-limit.ts). */
  loginThrottle: LoginThrottleSettings;
  proxy: ProxyAuthSettings | null;
  /** Sign-in through an OpenID Connect provider; null: off. */
  oidc: OidcSettings | null;
}

export interface OidcSettings {
  /** The provider's issuer URL (its discovery document is read from it). */
  issuer: string;
  clientId: string;
  /** Read from the variable auth.oidc.client_secret_env names. */
  clientSecret: string;
  /** Where the provider sends the browser back: <public URL>/auth/oidc/callback. */
  redirectUrl: string;
  scopes: string[];
  /** The login button says "Sign in with <displayName>". */
  displayName: string;
  /** The user's name: this claim, else email, else sub. */
  nameClaim: string;
  /** Claim values -> role; the most trusted match wins; default for no match (null: refused). */
  roles: { claim: string; map: Record<string, Role>; default: Role | null };
  /** Claim values -> scope ('all': everything); null: every OIDC user sees everything. */
  teamScopes: { claim: string; map: Record<string, AccessScope | 'all'>; unmatched: 'refuse' | 'all' } | null;
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
  /** `notifications.allow_private_network`: the webhook may be at a private, loopback, link-local ... address. */
  allowPrivateNetwork: boolean;
}

// ---- Notification channels and scheduled deliveries ------------------------------------------

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
  /** `allow_private_network`: the URL may reach a private, loopback, link-local ... address. */
  allowPrivateNetwork: boolean;
}

/** An email channel: mail through the operator's SMTP server (CLOUDTALLY_SMTP_URL). */
export interface EmailChannel {
  name: string;
  type: 'email';
  to: string[];
  /** `allow_private_network`: this channel's mail may go through an SMTP server at a non-public address. */
  allowPrivateNetwork: boolean;
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
  /** Bytes an SMTP server may send during one message before the attempt is cut short. */
  maxSmtpAnswerBytes: number;
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
  /** Only this team's resources (the report must be one that answers for a scope); null: everything. */
  scope: AccessScope | null;
}

/** A monthly budget of the configuration file (`budgets`), its tag key and value normalised. */
/** The calendar periods a budget may cover. */
export const BUDGET_PERIODS = ['month', 'quarter', 'year'] as const;
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];

export interface BudgetSettings {
  name: string;
  /** null: the total (every priced resource); else `project`, `region`, `kind`, `flavor` or `tag:<key>`. */
  by: string | null;
  /** The group of `by` the budget covers (null with the total). */
  value: string | null;
  /** ISO 4217, upper case. */
  currency: string;
  /** The budget's period: a calendar month, quarter or year (UTC). */
  period: BudgetPeriod;
  /** The amount for one period, exact decimal text, > 0. */
  amount: string;
  /** Percentages of the amount that alert, ascending, without repeats. */
  thresholds: number[];
  /** Channel names (`channels` of the configuration). */
  notify: string[];
}

/** The configuration as loading builds it; callers get it deep-frozen, as Config. */
export interface ConfigShape {
  cloud: CloudConfig;
  database: DatabaseSettings;
  /** A read-only Postgres (streaming replica) for report queries (DATABASE_READ_URL); a secret. */
  databaseReadUrl: string | null;
  databaseSessions: DatabaseSessionSettings;
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
   * `demo-simulator.json` in CLOUDTALLY_DATA_DIR, where older versions kept the demo company; now
   * it is kept in the database and this file is read once into a PGlite database of this folder
   * (src/demo/persistence.ts). null for `memory://`.
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
  collectionRuns: CollectionRunSettings;
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

export function deepFreeze<T>(value: T): DeepReadonly<T> {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value as DeepReadonly<T>;
}
