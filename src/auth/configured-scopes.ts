import type { Config, DeepReadonly } from '../config/index.js';
import { accessScopeId, type AccessScope } from './access-scope.js';

/**
 * Every distinct access scope the configuration names: configured users' scopes and the entries
 * of auth.proxy.team_scopes and auth.oidc.team_scopes. A user in several groups of one tag key gets
 * the union of their values, which is not listed here.
 */
export function configuredAccessScopes(config: DeepReadonly<Pick<Config, 'users' | 'auth' | 'deliveries'>>): AccessScope[] {
  const scopes = new Map<string, AccessScope>();
  const add = (scope: DeepReadonly<AccessScope> | null | 'all') => {
    if (scope && scope !== 'all') scopes.set(accessScopeId(scope), { by: scope.by, key: scope.key, values: [...scope.values] });
  };
  for (const user of config.users) add(user.scope);
  for (const scope of Object.values(config.auth.proxy?.teamScopes?.map ?? {})) add(scope);
  for (const scope of Object.values(config.auth.oidc?.teamScopes?.map ?? {})) add(scope);
  for (const delivery of config.deliveries) add(delivery.scope ?? null);
  return [...scopes.values()].sort((a, b) => accessScopeId(a).localeCompare(accessScopeId(b)));
}

/** The tag keys of the configured scopes: the keys whose cost partitions the rollups write (costing/partitions.ts). */
export function configuredScopeKeys(config: DeepReadonly<Pick<Config, 'users' | 'auth' | 'deliveries'>>): string[] {
  return [...new Set(configuredAccessScopes(config).map((s) => s.key))].sort();
}
