import { createHash, randomBytes } from 'node:crypto';
import type { Queryable } from '../db/connection.js';
import type { AccessScope } from './access-scope.js';
import { isRole, type Role } from './roles.js';

/**
 * Login sessions in the database (table auth_sessions), so that logout really ends a session, on
 * every replica, and a restart keeps people logged in. The browser holds a random 256-bit token;
 * the table holds only its SHA-256 (a leaked table cannot be turned into cookies).
 *
 * A password session names a user of the configuration file, whose role and scope are read from
 * the file at each request. An OpenID Connect user is in no file: the session keeps the role and
 * scope the provider's claims gave at sign-in (until it ends).
 */

/** What an OpenID Connect session carries; absent for password sessions. */
export interface SignInGrant {
  method: 'oidc';
  role: Role;
  scope: AccessScope | null;
}

export interface StoredSession {
  /** SHA-256 of the token, hex: also what binds CSRF tokens to this session. */
  id: string;
  userName: string;
  createdAt: Date;
  expiresAt: Date;
  /** Set for an OpenID Connect session; null for a password session. */
  grant: SignInGrant | null;
}

type SessionRow = {
  id_hash: string;
  user_name: string;
  created_at: Date;
  expires_at: Date;
  method: string;
  role: string | null;
  scope: unknown;
};

function scopeOfRow(value: unknown): AccessScope | null {
  const s = (typeof value === 'string' ? JSON.parse(value) : value) as Partial<AccessScope> | null;
  if (!s || typeof s.by !== 'string' || typeof s.key !== 'string' || !Array.isArray(s.values)) return null;
  return { by: s.by, key: s.key, values: s.values.filter((v): v is string => typeof v === 'string') };
}

/** A row as a session; an 'oidc' row whose role is not a role any more (a corrupt row) is no session. */
function sessionOfRow(row: SessionRow): StoredSession | null {
  const base = { id: row.id_hash, userName: row.user_name, createdAt: row.created_at, expiresAt: row.expires_at };
  if (row.method === 'password') return { ...base, grant: null };
  if (row.method !== 'oidc' || !row.role || !isRole(row.role)) return null;
  const scope = row.scope === null ? null : scopeOfRow(row.scope);
  // A stored scope that does not read back must not widen to "everything".
  if (row.scope !== null && scope === null) return null;
  return { ...base, grant: { method: 'oidc', role: row.role, scope } };
}

export function sessionIdOf(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export class SessionStore {
  constructor(private readonly db: Queryable) {}

  /** A new session; returns the token for the cookie (never stored). Purges expired rows. */
  async create(userName: string, ttlMs: number, now = new Date(), grant: SignInGrant | null = null): Promise<{ token: string; session: StoredSession }> {
    const token = randomBytes(32).toString('base64url');
    const session: StoredSession = { id: sessionIdOf(token), userName, createdAt: now, expiresAt: new Date(now.getTime() + ttlMs), grant };
    await this.db.execute('DELETE FROM auth_sessions WHERE expires_at <= $1', [now.toISOString()]);
    await this.db.execute(
      'INSERT INTO auth_sessions (id_hash, user_name, created_at, expires_at, method, role, scope) VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb)',
      [
        session.id,
        userName,
        session.createdAt.toISOString(),
        session.expiresAt.toISOString(),
        grant?.method ?? 'password',
        grant?.role ?? null,
        grant?.scope ? JSON.stringify(grant.scope) : null,
      ],
    );
    return { token, session };
  }

  /** The live session of a token, or null (unknown, logged out or expired). */
  async find(token: string, now = new Date()): Promise<StoredSession | null> {
    if (!/^[A-Za-z0-9_-]{20,100}$/.test(token)) return null;
    const rows = await this.db.query<SessionRow>(
      'SELECT id_hash, user_name, created_at, expires_at, method, role, scope FROM auth_sessions WHERE id_hash = $1 AND expires_at > $2',
      [sessionIdOf(token), now.toISOString()],
    );
    const row = rows[0];
    return row ? sessionOfRow(row) : null;
  }

  async delete(sessionId: string): Promise<void> {
    await this.db.execute('DELETE FROM auth_sessions WHERE id_hash = $1', [sessionId]);
  }
}
