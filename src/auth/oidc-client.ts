import * as oidc from 'openid-client';
import type { DeepReadonly, OidcSettings } from '../config/index.js';

/** What this module logs through (a pino logger fits). */
export interface OidcLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

/**
 * The OpenID Connect client side of sign-in (authorization code flow with PKCE, through
 * openid-client): the provider's discovery document, read lazily and read again after a failure
 * (a provider down at start does not stop cloudtally), the authorization URL, and the checked
 * answer (state, issuer, PKCE, ID token signature, audience, nonce) with the user's claims.
 */

/** What the browser's short-lived flow cookie keeps between the redirect and the callback. */
export interface OidcFlow {
  state: string;
  nonce: string;
  verifier: string;
  /** Where to go once signed in (a safe path of this app). */
  returnPath: string;
  /** When the flow started (ms since the epoch). */
  startedAt: number;
}

export type ProviderStatus = 'unknown' | 'reachable' | 'unreachable';

/** Why a callback was refused: the text for the person, and the reason to log (never a token or code). */
export class OidcSignInError extends Error {
  override readonly name = 'OidcSignInError';
  constructor(
    readonly status: 400 | 403 | 503,
    readonly userMessage: string,
    readonly reason: string,
  ) {
    super(reason);
  }
}

export interface OidcClientOptions {
  /** Each request to the provider (seconds). */
  timeoutSeconds?: number;
  /** After a failed discovery, the next sign-in tries again once this much time has passed. */
  retryAfterMs?: number;
  now?: () => number;
}

type Settings = DeepReadonly<OidcSettings>;

export class OidcClient {
  private configuration: oidc.Configuration | null = null;
  private pending: Promise<oidc.Configuration | null> | null = null;
  private failedAt: number | null = null;
  private readonly timeoutSeconds: number;
  private readonly retryAfterMs: number;
  private readonly now: () => number;

  constructor(
    private readonly settings: Settings,
    private readonly logger: OidcLog,
    options: OidcClientOptions = {},
  ) {
    this.timeoutSeconds = options.timeoutSeconds ?? 5;
    this.retryAfterMs = options.retryAfterMs ?? 10_000;
    this.now = options.now ?? Date.now;
  }

  get displayName(): string {
    return this.settings.displayName;
  }

  status(): ProviderStatus {
    if (this.configuration) return 'reachable';
    return this.failedAt === null ? 'unknown' : 'unreachable';
  }

  /** The provider's configuration, discovering it when not known yet (null: unreachable now). */
  async discover(): Promise<oidc.Configuration | null> {
    if (this.configuration) return this.configuration;
    if (this.failedAt !== null && this.now() - this.failedAt < this.retryAfterMs) return null;
    this.pending ??= this.discoverOnce().finally(() => {
      this.pending = null;
    });
    return this.pending;
  }

  private async discoverOnce(): Promise<oidc.Configuration | null> {
    const issuer = new URL(this.settings.issuer);
    try {
      const config = await oidc.discovery(issuer, this.settings.clientId, this.settings.clientSecret, undefined, {
        // An http issuer passes configuration only for loopback hosts (src/config/oidc.ts).
        execute: issuer.protocol === 'http:' ? [oidc.allowInsecureRequests] : [],
        timeout: this.timeoutSeconds,
      });
      this.configuration = config;
      this.failedAt = null;
      this.logger.info({ issuer: this.settings.issuer }, 'OpenID Connect provider discovered');
      return config;
    } catch (err) {
      this.failedAt = this.now();
      this.logger.warn({ issuer: this.settings.issuer, err: describeError(err) }, 'OpenID Connect provider cannot be reached');
      return null;
    }
  }

  /** A new flow and the provider URL to send the browser to; null when the provider cannot be reached. */
  async begin(returnPath: string): Promise<{ url: URL; flow: OidcFlow } | null> {
    const config = await this.discover();
    if (!config) return null;
    const flow: OidcFlow = { state: oidc.randomState(), nonce: oidc.randomNonce(), verifier: oidc.randomPKCECodeVerifier(), returnPath, startedAt: this.now() };
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: this.settings.redirectUrl,
      scope: this.settings.scopes.join(' '),
      state: flow.state,
      nonce: flow.nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(flow.verifier),
      code_challenge_method: 'S256',
    });
    return { url, flow };
  }

  /**
   * Checks the provider's answer against the flow and returns the user's claims: the ID token's,
   * completed by the userinfo endpoint's (for providers that put profile claims there only).
   */
  async finish(callbackUrl: URL, flow: OidcFlow): Promise<Record<string, unknown>> {
    const config = await this.discover();
    if (!config) throw new OidcSignInError(503, 'The sign-in provider cannot be reached now. Try again in a minute.', 'provider unreachable at callback');
    let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
    try {
      // The token request's redirect_uri is callbackUrl's origin and path: the caller builds it on redirectUrl.
      tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: flow.verifier,
        expectedState: flow.state,
        expectedNonce: flow.nonce,
        idTokenExpected: true,
      });
    } catch (err) {
      throw refusalOf(err);
    }
    const idClaims = tokens.claims();
    if (!idClaims) throw new OidcSignInError(400, 'The sign-in provider sent no ID token.', 'no id_token');
    let userinfo: Record<string, unknown> = {};
    if (config.serverMetadata().userinfo_endpoint) {
      try {
        userinfo = await oidc.fetchUserInfo(config, tokens.access_token, idClaims.sub);
      } catch (err) {
        throw new OidcSignInError(400, 'The sign-in provider\'s user information could not be read. Try again.', `userinfo: ${describeError(err)}`);
      }
    }
    // The signed ID token's claims win over userinfo's.
    return { ...userinfo, ...idClaims };
  }
}

/** Library errors carry no token or code in their messages: their message and code are safe to log. */
function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = (err as { code?: unknown }).code;
  const cause = err.cause instanceof Error ? ` (${err.cause.message})` : '';
  return `${typeof code === 'string' ? `${code}: ` : ''}${err.message}${cause}`;
}

function refusalOf(err: unknown): OidcSignInError {
  const reason = describeError(err);
  if (err instanceof oidc.AuthorizationResponseError) {
    const denied = err.error === 'access_denied';
    return new OidcSignInError(403, denied ? 'The sign-in provider did not let you in (access denied).' : `The sign-in provider refused the sign-in (${err.error}).`, `provider error ${err.error}`);
  }
  if (err instanceof oidc.ResponseBodyError) {
    return new OidcSignInError(400, 'The sign-in provider refused this sign-in code (it was already used or has expired). Sign in again.', reason);
  }
  // The check that failed is named in the error's cause (oauth4webapi's wording).
  const message = reason;
  if (/"state"/.test(message)) return new OidcSignInError(400, 'This sign-in answer does not belong to the sign-in you started (state mismatch). Sign in again.', reason);
  if (/"iss"/.test(message)) return new OidcSignInError(400, 'This sign-in answer comes from another provider than the configured one (issuer mismatch).', reason);
  if (/"nonce"/.test(message)) return new OidcSignInError(400, 'The sign-in provider\'s ID token does not belong to this sign-in (nonce mismatch). Sign in again.', reason);
  return new OidcSignInError(400, 'The sign-in provider\'s answer did not check out. Sign in again.', reason);
}
