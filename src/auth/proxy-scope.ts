import type { DeepReadonly, ProxyTeamScopes } from '../config/index.js';
import { describeAccessScope, type AccessScope } from './access-scope.js';

/**
 * What a proxied user sees (auth.proxy.team_scopes): the entries for their name and groups.
 * Any entry "all" wins (everything); entries of one tag key merge their values; entries of
 * different keys cannot be combined into one scope and refuse the user; no entry: `unmatched`.
 */
export type ProxyScopeVerdict = { kind: 'scope'; scope: AccessScope | null } | { kind: 'refused'; reason: string };

export function proxyScopeOf(teamScopes: DeepReadonly<ProxyTeamScopes> | null, name: string, groups: readonly string[]): ProxyScopeVerdict {
  if (!teamScopes) return { kind: 'scope', scope: null };
  const matched = [name, ...groups].filter((key) => Object.hasOwn(teamScopes.map, key)).map((key) => ({ key, scope: teamScopes.map[key]! }));
  if (matched.some((m) => m.scope === 'all')) return { kind: 'scope', scope: null };
  const scopes = matched.map((m) => ({ key: m.key, scope: m.scope as DeepReadonly<AccessScope> }));
  if (scopes.length === 0) {
    return teamScopes.unmatched === 'all'
      ? { kind: 'scope', scope: null }
      : { kind: 'refused', reason: `The sign-in proxy names user "${name}", whom no entry of auth.proxy.team_scopes gives a team (by name or group).` };
  }
  const keys = [...new Set(scopes.map((s) => s.scope.key))];
  if (keys.length > 1) {
    const listed = scopes.map((s) => `${s.key}: ${describeAccessScope(s.scope)}`).join('; ');
    return { kind: 'refused', reason: `User "${name}" matches team scopes of different tag keys (${listed}); cloudtally cannot combine them. Give the user one tag key in auth.proxy.team_scopes.` };
  }
  const first = scopes[0]!.scope;
  const values = [...new Set(scopes.flatMap((s) => s.scope.values))].sort();
  return { kind: 'scope', scope: { by: first.by, key: first.key, values } };
}
