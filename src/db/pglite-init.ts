/**
 * A new PGlite folder is filled in a short-lived child process: from the stored template
 * (pglite-template.ts) when it was made by the installed PGlite, otherwise by PGlite's initdb.
 * Either runs a WebAssembly heap and buffers that this process would otherwise keep for its whole
 * life (WebAssembly memory never shrinks): initdb about 700-800 MB, unpacking the template about
 * 320 MB (measured). In a child they are returned to the system when it exits; this process then
 * opens a folder that exists, at a fraction of that.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { usablePgliteTemplate } from './pglite-template.js';

const run = promisify(execFile);

// Runs as an ES module with `node -e`: argv[1] is PGlite's module URL, argv[2] the folder, argv[3]
// the start parameters, argv[4] the template file ('' for initdb).
const INIT_SCRIPT = `
const [, url, dir, params, template] = process.argv;
const { PGlite } = await import(url);
let loadDataDir;
if (template) {
  const { readFileSync } = await import('node:fs');
  const { brotliDecompressSync } = await import('node:zlib');
  loadDataDir = new Blob([brotliDecompressSync(readFileSync(template))]);
}
const db = await PGlite.create(dir, { startParams: JSON.parse(params), loadDataDir });
await db.close();
`;

export async function initialisePgliteFolder(dataDir: string, startParams: readonly string[]): Promise<void> {
  const pgliteUrl = import.meta.resolve('@electric-sql/pglite');
  const template = usablePgliteTemplate();
  const how = template ? `from the template ${template}` : 'with initdb';
  try {
    await run(process.execPath, ['--input-type=module', '-e', INIT_SCRIPT, pgliteUrl, dataDir, JSON.stringify(startParams), template ?? ''], {
      timeout: 300_000,
      maxBuffer: 4 * 1024 * 1024,
    });
  } catch (err) {
    const e = err as Error & { stderr?: string; code?: unknown; signal?: unknown };
    const detail = (e.stderr ?? '').trim().split('\n').slice(-5).join(' | ') || e.message;
    throw new Error(`initialising a new PGlite database in ${dataDir} ${how} failed (child process exit ${String(e.code ?? e.signal)}): ${detail}`, { cause: err });
  }
}
