/**
 * The load of a benchmark, from a process of its own (the server's event loop and CPU time are
 * not the client's): `node bench/load-client.ts <url> <connections> <requests>` sends `requests`
 * GETs of `url` over `connections` keep-alive connections with autocannon (each connection one
 * request at a time), and prints on one line the latency of every answer in ms (p50, p95, p99,
 * max) with the count of answers that were not 2xx and of errors (timeouts, resets).
 */
import { createRequire } from 'node:module';
import { percentile } from './measure.js';

interface Instance {
  on(event: 'response', listener: (client: unknown, statusCode: number, bytes: number, responseTime: number) => void): void;
}
interface Result {
  errors: number;
  timeouts: number;
  non2xx: number;
}
type Autocannon = (options: Record<string, unknown>, done: (error: Error | null, result: Result) => void) => Instance;

const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

export interface LoadResult {
  requests: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  non2xx: number;
  errors: number;
}

function load(url: string, connections: number, amount: number): Promise<LoadResult> {
  const times: number[] = [];
  return new Promise((resolve, reject) => {
    const instance = autocannon({ url, connections, amount, pipelining: 1, timeout: 60 }, (error, result) => {
      if (error) return reject(error);
      resolve({
        requests: times.length,
        p50: percentile(times, 50),
        p95: percentile(times, 95),
        p99: percentile(times, 99),
        max: percentile(times, 100),
        non2xx: result.non2xx,
        errors: result.errors + result.timeouts,
      });
    });
    instance.on('response', (_client, _status, _bytes, responseTime) => void times.push(responseTime));
  });
}

const [url, connections, amount] = process.argv.slice(2);
load(url!, Number(connections), Number(amount)).then(
  (result) => process.stdout.write(`${JSON.stringify(result)}\n`),
  (error: unknown) => {
    process.stderr.write(`bench load-client: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
