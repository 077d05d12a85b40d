import type { Config } from '../config/index.js';
import { isLoopbackHost } from './addresses.js';

type AuthConfig = Pick<Config, 'users' | 'auth'>;

/**
 * How people sign in. With no users, no trusted proxy and no OpenID Connect provider configured, cloudtally runs in
 * local-only mode: nobody logs in, everyone is admin, so it must only be reachable from this
 * machine (it listens on loopback only and refuses other peers).
 */
export interface AuthMode {
  localOnly: boolean;
  /** Login form with configured users and passwords. */
  passwords: boolean;
  /** Identity from a trusted reverse proxy's header. */
  proxy: boolean;
  /** Sign-in through an OpenID Connect provider. */
  oidc: boolean;
}

export function authModeOf(config: AuthConfig): AuthMode {
  const passwords = config.users.length > 0;
  const proxy = config.auth.proxy !== null;
  const oidc = config.auth.oidc !== null;
  return { localOnly: !passwords && !proxy && !oidc, passwords, proxy, oidc };
}

export const LOCAL_ONLY_BANNER =
  'Local-only mode: no users or trusted proxy are configured, so cloudtally listens on this machine only (127.0.0.1) and everyone who can open it acts as admin. Configure users (npm run cli -- hash-password) or auth.proxy to share it.';

export class ListenHostError extends Error {
  override readonly name = 'ListenHostError';
}

/**
 * The address the web server may listen on: the configured HOST, except that local-only mode
 * refuses anything but a loopback address (a clear error, not a silent change of address).
 */
export function listenHostFor(config: AuthConfig & Pick<Config, 'server'>): string {
  const host = config.server.host;
  if (authModeOf(config).localOnly && !isLoopbackHost(host)) {
    throw new ListenHostError(
      `HOST=${host} refused: no users and no trusted proxy are configured, so cloudtally runs in local-only mode ` +
        '(no login, everyone is admin) and may listen on a loopback address only (127.0.0.1, ::1 or localhost). ' +
        'Configure "users" in the config file (hashes from: npm run cli -- hash-password) with CLOUDTALLY_SESSION_SECRET, ' +
        'or "auth.proxy", to serve other machines; or unset HOST.',
    );
  }
  return host;
}
