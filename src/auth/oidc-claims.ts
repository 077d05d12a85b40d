import type { OidcSettings } from '../config/types.js';
import type { DeepReadonly } from '../config/index.js';
import type { AccessScope } from './access-scope.js';
import { highestRole, type Role } from './roles.js';

/** Who an OpenID Connect provider's claims say the user is in cloudtally, or why they may not sign in. */
export type OidcVerdict =
  | { kind: 'user'; name: string; role: Role; scope: AccessScope | null }
  | { kind: 'refused'; name: string; reason: string };

type Mapping = Pick<DeepReadonly<OidcSettings>, 'nameClaim' | 'roles' | 'teamScopes'>;

const PLAIN = /^[^\u0000-\u001f\u007f]{1,256}$/;

/** A claim's string values: a string is one value, an array its strings; anything else none. */
export function claimValues(claims: Readonly<Record<string, unknown>>, claim: string): string[] {
  const value = claims[claim];
  const list = Array.isArray(value) ? value : [value];
  return list.filter((v): v is string => typeof v === 'string' && PLAIN.test(v));
}

/** The name shown and logged: the configured claim, else email, else sub. */
export function userNameOf(claims: Readonly<Record<string, unknown>>, nameClaim: string): string {
  for (const claim of [nameClaim, 'email', 'sub']) {
    const [first] = claimValues(claims, claim);
    if (first) return first.trim().slice(0, 100);
  }
  return '';
}

/**
 * The role (the most trusted mapped claim value, else the default) and the scope (the mapped
 * claim values' scopes: one tag key, values merged; "all" wins; unmatched as configured).
 */
export function verdictOfClaims(claims: Readonly<Record<string, unknown>>, mapping: Mapping): OidcVerdict {
  const name = userNameOf(claims, mapping.nameClaim);
  if (!name) return { kind: 'refused', name: '(no name)', reason: `The provider's answer names nobody (no ${mapping.nameClaim}, email or sub claim).` };

  const roleValues = claimValues(claims, mapping.roles.claim);
  const role = highestRole(roleValues.flatMap((v) => (Object.hasOwn(mapping.roles.map, v) ? [mapping.roles.map[v]!] : []))) ?? mapping.roles.default;
  if (!role) return { kind: 'refused', name, reason: `${name} has no role in cloudtally: no value of the "${mapping.roles.claim}" claim is mapped to one (auth.oidc.roles).` };

  const teams = mapping.teamScopes;
  if (!teams) return { kind: 'user', name, role, scope: null };
  const matched = claimValues(claims, teams.claim).flatMap((v) => (Object.hasOwn(teams.map, v) ? [teams.map[v]!] : []));
  if (matched.length === 0) {
    if (teams.unmatched === 'all') return { kind: 'user', name, role, scope: null };
    return { kind: 'refused', name, reason: `${name} has no team scope in cloudtally: no value of the "${teams.claim}" claim is mapped to one (auth.oidc.team_scopes).` };
  }
  if (matched.includes('all')) return { kind: 'user', name, role, scope: null };
  const scopes = matched.filter((s): s is DeepReadonly<AccessScope> => s !== 'all');
  const keys = [...new Set(scopes.map((s) => s.key))];
  if (keys.length > 1) {
    return { kind: 'refused', name, reason: `Ambiguous team scope for ${name}: the "${teams.claim}" claim maps to scopes by different tags (${keys.join(', ')}).` };
  }
  const first = scopes[0]!;
  const values = [...new Set(scopes.flatMap((s) => s.values))].sort();
  return { kind: 'user', name, role, scope: { by: first.by, key: first.key, values } };
}
