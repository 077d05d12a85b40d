export { addressMatcher, isLoopbackAddress, isLoopbackHost, normaliseAddress, parseAddressRule } from './addresses.js';
export { accountKey, type Identity } from './identity.js';
export { authModeOf, listenHostFor, ListenHostError, LOCAL_ONLY_BANNER, type AuthMode } from './mode.js';
export { burnPasswordCheck, hashPassword, parsePasswordHash, passwordCheckLimiter, SCRYPT_DEFAULTS, verifyPassword } from './password.js';
export { createProxyIdentifier, type ProxyVerdict } from './proxy.js';
export { BackoffCounter, LoginThrottle, type BackoffPolicy } from './rate-limit.js';
export { highestRole, isRole, permissionsOf, roleAtLeast, ROLES, type Permissions, type Role } from './roles.js';
export { SessionStore, sessionIdOf, type StoredSession } from './sessions.js';
