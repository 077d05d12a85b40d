/**
 * The web port, checked before anything else is opened: a port that is taken (or not ours to
 * bind) stops the start with one line naming the address, not a stack trace after the database
 * has been opened and migrated.
 */
import { createServer, type Server } from 'node:net';
import { EX_CANTCREAT, StartupError } from './startup.js';

/** `host:port`, with IPv6 addresses in brackets. */
export function formatAddress(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** The StartupError for a failed listen, or the error itself when it is not about the address. */
export function listenError(err: unknown, host: string, port: number): unknown {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const why =
    code === 'EADDRINUSE'
      ? 'the port is already in use (is cloudtally or another program running there?)'
      : code === 'EACCES'
        ? 'permission denied (ports below 1024 need privileges)'
        : code === 'EADDRNOTAVAIL'
          ? 'no such address on this machine'
          : null;
  if (!why) return err;
  return new StartupError(`cannot listen on ${formatAddress(host, port)}: ${why}; set PORT or HOST`, EX_CANTCREAT, { cause: err });
}

/** Binds host:port and lets it go again; throws a StartupError (exit 73) when it cannot be bound. */
export async function ensureCanListen(host: string, port: number): Promise<void> {
  if (port === 0) return; // any free port: nothing to check
  const probe: Server = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', (err) => reject(listenError(err, host, port)));
    probe.listen({ host, port, exclusive: true }, () => resolve());
  });
  await new Promise<void>((resolve) => probe.close(() => resolve()));
}
