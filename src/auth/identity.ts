import type { Role } from './roles.js';

/** Who is making a request, and how we know. */
export interface Identity {
  name: string;
  role: Role;
  via: 'session' | 'proxy' | 'local';
  /** The login session's id (SHA-256 of its token) when via 'session'. */
  sessionId: string | null;
}
