import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Directories the web layer reads at run time, resolved from this file's location (works from
 * src/ under tsx and from dist/ after a build), never from the process's working directory.
 */
function findPackageRoot(start: string): string {
  let dir = start;
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      const { name } = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string };
      if (name === 'cloudtally') return dir;
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`cloudtally package root not found above ${start}`);
    dir = parent;
  }
}

export const packageRoot = findPackageRoot(dirname(fileURLToPath(import.meta.url)));
export const viewsDir = join(packageRoot, 'views');
export const publicDir = join(packageRoot, 'public');

/** Chart.js's UMD build, resolved through Node's resolver so hoisted node_modules layouts work too. */
export const chartJsDistDir = dirname(createRequire(import.meta.url).resolve('chart.js'));
export const chartJsFile = 'chart.umd.js';
