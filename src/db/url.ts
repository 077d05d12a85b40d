/**
 * A database URL safe to print: the password replaced by `***`. Anything that does not parse as a
 * URL is hidden whole, since it might hold a password in a form we cannot see.
 */
export function redactDatabaseUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '[unparseable database URL]';
  }
  if (parsed.password) parsed.password = '***';
  const params = parsed.searchParams;
  for (const key of [...params.keys()]) {
    if (/pass|secret|key/i.test(key)) params.set(key, '***');
  }
  return parsed.toString();
}

/** `host:port/database as user`, for error messages about a connection. */
export function describeDatabaseTarget(url: string): string {
  try {
    const parsed = new URL(url);
    const db = decodeURIComponent(parsed.pathname.replace(/^\//, '')) || '(default database)';
    const user = parsed.username ? ` as ${decodeURIComponent(parsed.username)}` : '';
    return `${parsed.hostname || 'localhost'}:${parsed.port || '5432'}/${db}${user}`;
  } catch {
    return '[unparseable database URL]';
  }
}
