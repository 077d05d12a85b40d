/**
 * The one-way flow of the architecture (README, "Architecture"), checked over the import
 * statements of src/: client -> collectors -> database -> reports -> web, actions back out through
 * the client, and read models shared by reports and actions that depend on the database only.
 * Presentation (money, formats, CSV, URLs) is present/'s, which web, notify and budgets share and
 * which depends on none of them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Top-level folder of src/ (or the file name for files directly in src/) of each relative import. */
function importedAreas(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const areas = new Set<string>();
  for (const match of text.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s+'(\.[^']+)'/g)) {
    const target = relative(SRC, resolve(dirname(file), match[1]!));
    areas.add(target.split('/')[0]!.replace(/\.js$/, ''));
  }
  return [...areas];
}

function areaOf(file: string): string {
  return relative(SRC, file).split('/')[0]!.replace(/\.ts$/, '');
}

const FORBIDDEN: Record<string, string[]> = {
  cloud: ['db', 'collect', 'reports', 'web', 'actions', 'read-models'],
  db: ['cloud', 'collect', 'reports', 'web', 'actions', 'read-models'],
  'read-models': ['cloud', 'collect', 'reports', 'web', 'actions'],
  reports: ['cloud', 'collect', 'web', 'actions', 'simulator'],
  actions: ['reports', 'web', 'collect'],
  web: ['cloud', 'collect', 'simulator'],
  present: ['web', 'reports', 'collect', 'cloud', 'actions', 'notify', 'budgets', 'db'],
  notify: ['web'],
  budgets: ['web'],
};

/** Areas that may import only the listed areas (besides their own files). */
const ONLY: Record<string, string[]> = {
  // The configuration is read by everything, so it reads nearly nothing: the rules it validates
  // against (auth, the simulator's options, the cost model's dimensions, allocation, tags).
  config: ['allocation-config', 'auth', 'db', 'simulator', 'tags'],
  tags: [],
};

describe('the dependency rules of src/', () => {
  const files = sourceFiles(SRC);

  it('finds the source files and their imports', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(importedAreas(join(SRC, 'reports', 'idle.ts'))).toContain('read-models');
    expect(importedAreas(join(SRC, 'config', 'allocation.ts'))).toContain('db');
  });

  for (const [area, forbidden] of Object.entries(FORBIDDEN)) {
    it(`${area}/ imports none of ${forbidden.join(', ')}`, () => {
      const offending = files
        .filter((file) => areaOf(file) === area)
        .flatMap((file) => importedAreas(file).filter((target) => forbidden.includes(target)).map((target) => `${relative(SRC, file)} -> ${target}/`));
      expect(offending).toEqual([]);
    });
  }

  for (const [area, allowed] of Object.entries(ONLY)) {
    it(`${area}/ imports ${allowed.length > 0 ? `only ${allowed.join(', ')}` : 'no other area'}`, () => {
      const offending = files
        .filter((file) => areaOf(file) === area)
        .flatMap((file) => importedAreas(file).filter((target) => target !== area && !allowed.includes(target)).map((target) => `${relative(SRC, file)} -> ${target}/`));
      expect(offending).toEqual([]);
    });
  }
});
