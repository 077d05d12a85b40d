/**
 * A new PGlite folder is initialised (initdb) in a short-lived child process. PGlite runs initdb
 * inside the process that opens the folder, with a second database instance beside it and the
 * new cluster copied through memory; WebAssembly memory never shrinks, so that one-time peak
 * (about 800 MB measured) would stay the process's resident size for its whole life. In a child
 * it is returned to the system when the child exits; this process then opens a folder that
 * exists, at a fraction of that.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

// Runs as an ES module with `node -e`: argv[1] is PGlite's module URL, argv[2] the folder, argv[3] the start parameters.
const INIT_SCRIPT = `
const [, url, dir, params] = process.argv;
const { PGlite } = await import(url);
const db = await PGlite.create(dir, { startParams: JSON.parse(params) });
await db.close();
`;

export async function initialisePgliteFolder(dataDir: string, startParams: readonly string[]): Promise<void> {
  const pgliteUrl = import.meta.resolve('@electric-sql/pglite');
  try {
    await run(process.execPath, ['--input-type=module', '-e', INIT_SCRIPT, pgliteUrl, dataDir, JSON.stringify(startParams)], {
      timeout: 300_000,
      maxBuffer: 4 * 1024 * 1024,
    });
  } catch (err) {
    const e = err as Error & { stderr?: string; code?: unknown; signal?: unknown };
    const detail = (e.stderr ?? '').trim().split('\n').slice(-5).join(' | ') || e.message;
    throw new Error(`initialising a new PGlite database in ${dataDir} failed (child process exit ${String(e.code ?? e.signal)}): ${detail}`, { cause: err });
  }
}
