/**
 * How a benchmark runs cloudtally's own code in a child process: as the image runs it (compiled
 * dist/, the Dockerfile's NODE_OPTIONS) or as `npm start` does (sources through tsx, which alone
 * adds ~90 MB of RSS), so the memory and CPU measured are the service's, not the harness's.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));

export type Runtime = 'dist' | 'tsx';

export interface ChildRuntime {
  execArgv: string[];
  root: string;
  ext: string;
}

/** Node's flags in the image (the Dockerfile's NODE_OPTIONS), read from the Dockerfile itself. */
function imageNodeOptions(): string[] {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  const match = /NODE_OPTIONS="([^"]*)"/.exec(dockerfile);
  if (!match) throw new Error('bench: no NODE_OPTIONS="..." in the Dockerfile');
  return match[1]!.split(/\s+/).filter(Boolean);
}

/** The node arguments and module root of a child process for a runtime (dist/ is built first). */
export function childRuntime(runtime: Runtime): ChildRuntime {
  if (runtime === 'dist') {
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    const build = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
    if (build.status !== 0) throw new Error('bench: building dist/ (tsc -p tsconfig.build.json) failed');
    return { execArgv: imageNodeOptions(), root: join(ROOT, 'dist'), ext: '.js' };
  }
  // As `npm start` runs it (package.json's start script).
  return { execArgv: ['--max-semi-space-size=64', '--import', 'tsx'], root: join(ROOT, 'src'), ext: '.ts' };
}

/** A module of the runtime as a URL literal for a child's `import()`. */
export function moduleUrl(runtime: ChildRuntime, path: string): string {
  return JSON.stringify(pathToFileURL(join(runtime.root, path + runtime.ext)).href);
}

/** Resident set size of a process in bytes (Linux /proc), or null once it is gone. */
export function rssOf(pid: number): number | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1];
    return kb ? Number(kb) * 1024 : null;
  } catch {
    return null;
  }
}
