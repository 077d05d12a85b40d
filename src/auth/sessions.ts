import { createHash, randomBytes } from 'node:crypto';
import type { Queryable } from '../db/connection.js';

/**
 * Login sessions in the database (table auth_sessions), so that logout really ends a session, on
 * every replica, and a restart keeps people logged in. The browser holds a random 256-bit token;
 * the table holds only its SHA-256 (a leaked table cannot be turned into cookies).
 */

export interface StoredSession {
  /** SHA-256 of the token, hex: also what binds CSRF tokens to this session. */
  id: string;
  userName: string;
  createdAt: Date;
  expiresAt: Date;
}

export function sessionIdOf(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export class SessionStore {
  constructor(private readonly db: Queryable) {}

  /** A new session; returns the token for the cookie (never stored). Purges expired rows. */
  async create(userName: string, ttlMs: number, now = new Date()): Promise<{ token: string; session: StoredSession }> {
    const token = randomBytes(32).toString('base64url');
    const session: StoredSession = { id: sessionIdOf(token), userName, createdAt: now, expiresAt: new Date(now.getTime() + ttlMs) };
    await this.db.execute('DELETE FROM auth_sessions WHERE expires_at <= $1', [now.toISOString()]);
    await this.db.execute('INSERT INTO auth_sessions (id_hash, user_name, created_at, expires_at) VALUES ($1, $2, $3, $4)', [
      session.id,
      userName,
      session.createdAt.toISOString(),
      session.expiresAt.toISOString(),
    ]);
    return { token, session };
  }

  /** The live session of a token, or null (unknown, logged out or expired). */
  async find(token: string, now = new Date()): Promise<StoredSession | null> {
    if (!/^[A-Za-z0-9_-]{20,100}$/.test(token)) return null;
    const rows = await this.db.query<{ id_hash: string; user_name: string; created_at: Date; expires_at: Date }>(
      'SELECT id_hash, user_name, created_at, expires_at FROM auth_sessions WHERE id_hash = $1 AND expires_at > $2',
      [sessionIdOf(token), now.toISOString()],
    );
    const row = rows[0];
    return row ? { id: row.id_hash, userName: row.user_name, createdAt: row.created_at, expiresAt: row.expires_at } : null;
  }

  async delete(sessionId: string): Promise<void> {
    await this.db.execute('DELETE FROM auth_sessions WHERE id_hash = $1', [sessionId]);
  }
}
