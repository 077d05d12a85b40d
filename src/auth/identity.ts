import type { AccessScope } from './access-scope.js';
import type { Role } from './roles.js';

/** Who is making a request, and how we know. */
export interface Identity {
  name: string;
  role: Role;
  via: 'session' | 'proxy' | 'local';
  /** The login session's id (SHA-256 of its token) when via 'session'. */
  sessionId: string | null;
  /** What the user may see and act on; null: everything. */
  scope: AccessScope | null;
}

/** A user name as sign-in compares it: trimmed, NFC, lower case (so " VIEWER " is viewer). */
export function accountKey(name: string): string {
  return name.trim().normalize('NFC').toLowerCase();
}
