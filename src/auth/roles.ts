/**
 * Roles, from least to most trusted. Each includes what the one before it may do:
 * viewer reads and exports; operator also takes actions (stop, schedule, cancel); admin also
 * starts collections and changes settings.
 */
export const ROLES = ['viewer', 'operator', 'admin'] as const;
export type Role = (typeof ROLES)[number];

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

/** Whether `role` may do what `needed` may do. */
export function roleAtLeast(role: Role, needed: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(needed);
}

/** The most trusted of some roles (null for none). */
export function highestRole(roles: Iterable<Role>): Role | null {
  let best: Role | null = null;
  for (const role of roles) if (best === null || ROLES.indexOf(role) > ROLES.indexOf(best)) best = role;
  return best;
}

/** What a role may do, for templates and JSON. */
export interface Permissions {
  read: boolean;
  act: boolean;
  admin: boolean;
}

export function permissionsOf(role: Role): Permissions {
  return { read: true, act: roleAtLeast(role, 'operator'), admin: roleAtLeast(role, 'admin') };
}
