/** `auth.oidc`: sign-in through an OpenID Connect provider (src/auth/oidc-client.ts, src/web/oidc-routes.ts). */
import { z } from 'zod';
import { AccessScopeSchema, accessScopeOf } from '../auth/access-scope.js';
import { isLoopbackHost } from '../auth/addresses.js';
import { ROLES } from '../auth/roles.js';
import { normaliseTagKey, normaliseTagValue, type TagRules } from '../tags/normalise.js';
import type { ConfigProblem } from './problems.js';
import type { OidcSettings } from './types.js';
import { nonEmptyName } from './validators.js';

export const OIDC_CALLBACK_PATH = '/auth/oidc/callback';
export const OIDC_LOGIN_PATH = '/auth/oidc/login';

const roleSchema = z.enum(ROLES, { error: `must be one of ${ROLES.join(', ')}` });

const claimName = z
  .string({ error: 'must be a claim name' })
  .trim()
  .regex(/^[A-Za-z0-9_.:-]{1,100}$/, { error: 'must be a claim name (letters, digits, _ . : -)' });

function urlProblem(text: string, loopbackHttpOnly: boolean): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.username || url.password) return 'must not contain credentials';
  if (url.search || url.hash) return 'must not have a query or fragment';
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && (!loopbackHttpOnly || isLoopbackHost(url.hostname))) return null;
  return loopbackHttpOnly ? 'must be an https URL (http only for a loopback host: 127.0.0.1, ::1, localhost)' : 'must be an http(s) URL';
}

/** A URL field; `onlyPath`: the path it must have. */
function urlField(what: string, loopbackHttpOnly: boolean, onlyPath?: string) {
  return z
    .string({ error: `must be ${what}` })
    .trim()
    .superRefine((text, ctx) => {
      const problem = urlProblem(text, loopbackHttpOnly);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
      else if (onlyPath && new URL(text).pathname !== onlyPath) ctx.addIssue({ code: 'custom', message: `must end in ${onlyPath} (the path cloudtally answers)` });
    });
}

const scopeToken = z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]{1,100}$/, { error: 'must be a scope name (printable, no spaces or quotes)' });

const RolesSchema = z
  .strictObject(
    {
      claim: claimName.default('groups'),
      map: z.record(nonEmptyName, roleSchema).default({}),
      default: roleSchema.nullable().default(null),
    },
    { error: 'must be {"claim": "groups", "map": {"<claim value>": "viewer|operator|admin"}, "default": null}' },
  )
  .refine((r) => Object.keys(r.map).length > 0 || r.default !== null, { error: 'must map at least one claim value to a role, or give a default role' });

const TeamScopesSchema = z.strictObject(
  {
    claim: claimName.default('groups'),
    map: z
      .record(nonEmptyName, z.union([z.literal('all'), AccessScopeSchema], { error: 'must be "all" or {"by": "tag:<key>", "values": ["..."]}' }))
      .refine((m) => Object.keys(m).length > 0, { error: 'must map at least one claim value to a scope' }),
    unmatched: z.enum(['refuse', 'all'], { error: 'must be "refuse" or "all"' }).default('refuse'),
  },
  { error: 'must be {"claim": "groups", "map": {"<claim value>": {"by": "tag:team", "values": ["ml"]} or "all"}, "unmatched": "refuse"}' },
);

export const OidcSchema = z.strictObject({
  issuer: urlField("the provider's issuer URL", true),
  client_id: z.string({ error: 'must be the client id registered at the provider' }).trim().min(1, { error: 'must not be empty' }).max(255),
  client_secret_env: z
    .string({ error: 'must name the environment variable holding the client secret' })
    .regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, { error: 'must be an environment variable name (letters, digits, _)' }),
  redirect_url: urlField('a URL', false, OIDC_CALLBACK_PATH).nullable().default(null),
  scopes: z
    .array(scopeToken, { error: 'must be a list of scope names' })
    .default(['openid', 'profile', 'email'])
    .refine((s) => s.includes('openid'), { error: 'must include "openid"' }),
  display_name: z.string().trim().min(1, { error: 'must not be empty' }).max(60, { error: 'must be at most 60 characters' }).default('single sign-on'),
  name_claim: claimName.default('preferred_username'),
  roles: RolesSchema,
  team_scopes: TeamScopesSchema.nullable().default(null),
});

type TagNormalising = Pick<TagRules, 'tagAliases' | 'tagKeyCase' | 'tagValueCase' | 'tagValueAliases'>;

/**
 * The provider settings with the client secret read from the named variable and the redirect
 * URL derived from CLOUDTALLY_PUBLIC_URL when not given. Problems never carry the secret.
 */
export function oidcSettings(
  raw: z.output<typeof OidcSchema>,
  env: Record<string, string | undefined>,
  publicUrl: string | null,
  tags: TagNormalising,
  problems: ConfigProblem[],
): OidcSettings | null {
  const clientSecret = env[raw.client_secret_env];
  if (clientSecret === undefined || clientSecret === '') {
    problems.push({ path: 'auth.oidc.client_secret_env', message: `names the environment variable ${raw.client_secret_env}, which is not set` });
  }
  const redirectUrl = raw.redirect_url ?? (publicUrl ? `${publicUrl}${OIDC_CALLBACK_PATH}` : null);
  if (redirectUrl === null) {
    problems.push({ path: 'auth.oidc.redirect_url', message: `is required when CLOUDTALLY_PUBLIC_URL is not set (e.g. "https://cloudtally.example.com${OIDC_CALLBACK_PATH}")` });
  }
  if (!clientSecret || redirectUrl === null) return null;
  const scopeOf = (input: z.output<typeof AccessScopeSchema>) =>
    accessScopeOf(input, (k) => normaliseTagKey(k, tags), (k, v) => normaliseTagValue(k, v, tags));
  const teams = raw.team_scopes;
  return {
    issuer: raw.issuer,
    clientId: raw.client_id,
    clientSecret,
    redirectUrl,
    scopes: [...new Set(raw.scopes)],
    displayName: raw.display_name,
    nameClaim: raw.name_claim,
    roles: { claim: raw.roles.claim, map: { ...raw.roles.map }, default: raw.roles.default },
    teamScopes: teams
      ? {
          claim: teams.claim,
          map: Object.fromEntries(Object.entries(teams.map).map(([value, scope]) => [value, scope === 'all' ? 'all' : scopeOf(scope)])),
          unmatched: teams.unmatched,
        }
      : null,
  };
}
