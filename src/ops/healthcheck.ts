/**
 * The container's HEALTHCHECK: `node dist/ops/healthcheck.js` asks the running service's /healthz
 * on the configured port and exits 0 when it answers 200, 1 otherwise. Slim images have no curl;
 * this needs only Node. It reads the same configuration as the service (so PORT and HOST agree).
 */
import { pathToFileURL } from 'node:url';
import { loadConfig } from '../config/index.js';

/** Where to reach a server listening on `host`: a wildcard address is reached on loopback. */
export function healthzUrl(server: { host: string; port: number }): string {
  const host = server.host === '0.0.0.0' || server.host === '' ? '127.0.0.1' : server.host === '::' ? '::1' : server.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${server.port}/healthz`;
}

/** True when GET url answers 200 within timeoutMs. */
export async function probe(url: string, timeoutMs = 4000): Promise<{ ok: boolean; detail: string }> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await res.body?.cancel();
    return { ok: res.status === 200, detail: `${url} answered ${res.status}` };
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return { ok: false, detail: `${url}: ${(err as Error).message}${cause ? ` (${cause.code ?? cause.message})` : ''}` };
  }
}

async function main(): Promise<number> {
  const { server } = loadConfig();
  const result = await probe(healthzUrl(server));
  if (!result.ok) process.stderr.write(`unhealthy: ${result.detail}\n`);
  return result.ok ? 0 : 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().then(
    (code) => (process.exitCode = code),
    (err: unknown) => {
      process.stderr.write(`unhealthy: ${(err as Error).message}\n`);
      process.exitCode = 1;
    },
  );
}
