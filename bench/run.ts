/**
 * `npm run bench [collect|reports] [-- options]`: the benchmarks, against the local Postgres
 * (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres; each benchmark creates
 * and drops its own database). Without a name, every benchmark runs in turn.
 */
const BENCHMARKS: Record<string, () => Promise<{ main(args: string[]): Promise<void> }>> = {
  collect: () => import('./collect.js'),
  reports: () => import('./reports.js'),
  periods: () => import('./periods.js'),
  anomalies: () => import('./anomalies.js'),
  history: () => import('./history.js'),
  storage: () => import('./storage.js'),
  'overview-load': () => import('./overview-load.js'),
  citus: () => import('./citus.js'),
  writes: () => import('./writes.js'),
};

async function run(argv: string[]): Promise<void> {
  const [name, ...rest] = argv;
  const names = name && !name.startsWith('-') ? [name] : Object.keys(BENCHMARKS);
  const args = name && !name.startsWith('-') ? rest : argv;
  for (const benchmark of names) {
    const load = BENCHMARKS[benchmark];
    if (!load) throw new Error(`unknown benchmark "${benchmark}"; known: ${Object.keys(BENCHMARKS).join(', ')}`);
    process.stdout.write(`\n### benchmark: ${benchmark}\n`);
    await (await load()).main(args);
  }
}

run(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
