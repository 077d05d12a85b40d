/** Web users and sign-in: sessions, login throttling, and a trusted sign-in proxy. */
import { z } from 'zod';
import { parseAddressRule } from '../auth/addresses.js';
import { AccessScopeSchema, accessScopeOf, type AccessScope, type AccessScopeInput } from '../auth/access-scope.js';
import { accountKey } from '../auth/identity.js';
import { parsePasswordHash } from '../auth/password.js';
import { ROLES } from '../auth/roles.js';
import { normaliseTagKey, normaliseTagValue, type TagRules } from '../tags/normalise.js';
import type { ConfigProblem } from './problems.js';
import { OidcSchema } from './oidc.js';
import type { AuthSettings, AuthUser, OidcSettings } from './types.js';
import { nonEmptyName } from './validators.js';

const roleSchema = z.enum(ROLES, { error: `must be one of ${ROLES.join(', ')}` });

export const UserSchema = z.strictObject({
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
  /** Only resources with this tag (e.g. {"by": "tag:team", "values": ["ml"]}); absent: everything. */
  scope: AccessScopeSchema.nullable().default(null),
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
  /** User name or group -> what they see (team-scoped access); absent: every proxied user sees everything. */
  team_scopes: z
    .strictObject({
      map: z.record(nonEmptyName, z.union([z.literal('all'), AccessScopeSchema], { error: 'must be "all" or {"by": "tag:<key>", "values": ["..."]}' })),
      unmatched: z.enum(['refuse', 'all'], { error: 'must be "refuse" or "all"' }).default('refuse'),
    })
    .nullable()
    .default(null),
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

export const AuthSchema = z.strictObject({
  session_ttl_hours: z.number().positive().max(24 * 90).default(12),
  login_throttle: LoginThrottleSchema.prefault({}),
  /** Replaced by login_throttle: refused with a pointer (see authSettings). */
  login_rate_limit: z.unknown().optional(),
  proxy: ProxySchema.nullable().default(null),
  /** Sign-in through an OpenID Connect provider (src/config/oidc.ts). */
  oidc: OidcSchema.nullable().default(null),
});

/** The file's users; names must be unique (case-insensitively). */
export function userSettings(raw: readonly z.output<typeof UserSchema>[], problems: ConfigProblem[], tags: TagNormalising): AuthUser[] {
  const seen = new Map<string, number>();
  raw.forEach((user, i) => {
    const key = accountKey(user.name);
    const first = seen.get(key);
    if (first !== undefined) problems.push({ path: `users[${i}].name`, message: `repeats users[${first}] (names are compared case-insensitively)` });
    else seen.set(key, i);
  });
  return raw.map((u) => ({
    name: u.name,
    role: u.role,
    passwordHash: u.password_hash,
    scope: u.scope ? normalisedScope(u.scope, tags) : null,
  }));
}

export type TagNormalising = Pick<TagRules, 'tagAliases' | 'tagKeyCase' | 'tagValueCase' | 'tagValueAliases'>;

/** A configured scope with its key and values normalised like collected tags. */
export function normalisedScope(scope: AccessScopeInput, tags: TagNormalising): AccessScope {
  return accessScopeOf(scope, (k) => normaliseTagKey(k, tags), (k, v) => normaliseTagValue(k, v, tags));
}

/** CLOUDTALLY_SESSION_SECRET: long enough, and required once there are sessions (users or auth.oidc). */
export function sessionSecretSetting(secret: string | null, hasSessions: boolean, problems: ConfigProblem[]): string | null {
  if (secret !== null && secret.length < 32) {
    problems.push({ path: 'CLOUDTALLY_SESSION_SECRET', message: 'must be at least 32 characters (e.g. openssl rand -hex 32)' });
  } else if (secret === null && hasSessions) {
    problems.push({
      path: 'CLOUDTALLY_SESSION_SECRET',
      message: 'is required when users or auth.oidc are configured (at least 32 characters, e.g. openssl rand -hex 32), so that logins survive restarts and work on every replica',
    });
  }
  return secret;
}

export function authSettings(raw: z.output<typeof AuthSchema>, sessionSecret: string | null, oidc: OidcSettings | null, problems: ConfigProblem[], tags: TagNormalising): AuthSettings {
  if (raw.login_rate_limit !== undefined) {
    problems.push({
      path: 'auth.login_rate_limit',
      message:
        'was replaced by auth.login_throttle (growing delays per account and client address instead of a lock-out per user name; see docs/production.md, "Sign-in throttling")',
    });
  }
  const proxy = raw.proxy;
  const throttle = raw.login_throttle;
  return {
    sessionSecret,
    sessionTtlHours: raw.session_ttl_hours,
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
          teamScopes: proxy.team_scopes
            ? {
                map: Object.fromEntries(Object.entries(proxy.team_scopes.map).map(([who, scope]) => [who, scope === 'all' ? 'all' : normalisedScope(scope, tags)])),
                unmatched: proxy.team_scopes.unmatched,
              }
            : null,
        }
      : null,
    oidc,
  };
}
