import type { ProxyAuthSettings } from '../config/index.js';
import type { DeepReadonly } from '../config/index.js';
import { addressMatcher } from './addresses.js';
import type { Identity } from './identity.js';
import { proxyScopeOf } from './proxy-scope.js';
import { highestRole, isRole, type Role } from './roles.js';

/**
 * Single sign-on through a reverse proxy: the proxy authenticates the user and passes the name
 * (and optionally groups) in headers. Those headers are believed ONLY when the TCP peer is one of
 * the configured proxy addresses; from anywhere else they are ignored, as anyone can send them.
 */

export type ProxyVerdict =
  /** Not a trusted proxy, or no user header: the request is identified some other way. */
  | { kind: 'none' }
  | { kind: 'user'; identity: Identity }
  /** A trusted proxy named a user that no role mapping admits, or whose team scopes refuse them (`reason`). */
  | { kind: 'refused'; name: string; reason?: string };

const PLAIN_VALUE = /^[^\u0000-\u001f\u007f]{1,256}$/;

export function createProxyIdentifier(settings: DeepReadonly<ProxyAuthSettings>) {
  const trusted = addressMatcher(settings.trustedAddresses);
  return {
    isTrusted: trusted,
    identify(peer: string | undefined, header: (name: string) => string | undefined): ProxyVerdict {
      if (!trusted(peer)) return { kind: 'none' };
      const name = header(settings.header)?.trim();
      if (!name || !PLAIN_VALUE.test(name)) return { kind: 'none' };
      const groupsText = settings.groupsHeader ? header(settings.groupsHeader) ?? '' : '';
      const groups = groupsText
        .split(',')
        .map((g) => g.trim())
        .filter((g) => g !== '' && PLAIN_VALUE.test(g));
      const mapped: Role[] = [];
      for (const key of [name, ...groups]) {
        const role = Object.hasOwn(settings.roleMap, key) ? settings.roleMap[key] : undefined;
        if (isRole(role)) mapped.push(role);
      }
      const role = highestRole(mapped) ?? settings.defaultRole;
      if (!role) return { kind: 'refused', name };
      const scoped = proxyScopeOf(settings.teamScopes, name, groups);
      if (scoped.kind === 'refused') return { kind: 'refused', name, reason: scoped.reason };
      return { kind: 'user', identity: { name, role, via: 'proxy', sessionId: null, scope: scoped.scope } };
    },
  };
}
