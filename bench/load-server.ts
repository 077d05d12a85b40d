/**
 * The web app of a load benchmark in a process of its own: `node --import tsx bench/load-server.ts <database url>`
 * opens the database, serves every report on a free loopback port as `bench reports` does (no
 * sign-in, no data status, the report cache at its defaults, the real clock), prints
 * `{"url": ...}` on one line when it listens, and ends when its stdin closes (the benchmark ended).
 */
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../src/config/index.js';
import { openDatabase } from '../src/db/connection.js';
import { silentLogger } from '../src/logger.js';
import { allReports } from '../src/reports/index.js';
import { createWebApp } from '../src/web/app.js';

async function serve(url: string | undefined): Promise<void> {
  if (!url) throw new Error('bench load-server: give the database URL');
  const db = await openDatabase({ driver: 'pg', url }, { poolSize: 10 });
  const config = loadConfig({});
  const app = createWebApp({ reports: allReports(), context: () => ({ db, config, now: new Date() }), logger: silentLogger(), demo: false });
  const server = app.listen(0, '127.0.0.1', () => {
    process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })}\n`);
  });
  const stop = () => {
    server.closeAllConnections();
    server.close(() => void db.close().finally(() => process.exit(0)));
  };
  process.stdin.on('end', stop);
  process.stdin.on('close', stop);
  process.stdin.resume();
}

serve(process.argv[2]).catch((error: unknown) => {
  process.stderr.write(`bench load-server: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
