/**
 * The one-way flow of the architecture (README, "Architecture"), checked over the import
 * statements of src/: client -> collectors -> database -> costing -> reports -> web, actions back
 * out through the client; every area of src/ is named in a rule.
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

/** Areas that must not import the listed areas. */
const FORBIDDEN: Record<string, string[]> = {
  collect: ['reports', 'web', 'actions', 'notify', 'budgets', 'read-models'],
  reports: ['cloud', 'collect', 'web', 'actions', 'simulator', 'notify', 'budgets'],
  actions: ['reports', 'web', 'collect', 'simulator'],
  web: ['cloud', 'collect', 'simulator'],
  notify: ['web', 'cloud', 'simulator', 'actions'],
  budgets: ['web', 'cloud', 'collect', 'simulator', 'actions'],
  ops: ['web', 'actions', 'reports', 'simulator'],
  demo: ['web', 'reports', 'actions'],
};

/** Areas that may import only the listed areas (besides their own files). */
const ONLY: Record<string, string[]> = {
  cloud: ['limiter'],
  simulator: ['cloud', 'limiter'],
  db: [],
  // Where prices become costs: from the database alone (derive/ logs through the logger's type).
  costing: ['db', 'logger'],
  'read-models': ['config', 'costing', 'db'],
  present: ['memo'],
  auth: ['config', 'db', 'limiter'],
  // The configuration is read by everything, so it reads nearly nothing: the rules it validates
  // against (auth, the simulator's options, the cost model's dimensions, allocation, tags).
  config: ['allocation-config', 'auth', 'costing', 'db', 'simulator', 'tags'],
  tags: [],
  // Allocation rules: their shape and how shares are applied (exact decimals).
  'allocation-config': ['read-models'],
};

/** The composition root: builds the real parts and wires them, so it may import any area. */
const ENTRY_POINTS = ['cli', 'main', 'connect-cloud', 'commands'];
/** Single-purpose modules with no imports of other areas. */
const LEAVES = ['logger', 'limiter', 'memo'];

describe('the dependency rules of src/', () => {
  const files = sourceFiles(SRC);

  it('finds the source files and their imports', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(importedAreas(join(SRC, 'reports', 'idle.ts'))).toContain('read-models');
    expect(importedAreas(join(SRC, 'config', 'allocation.ts'))).toContain('costing');
  });

  it('names every area of src/ in a rule, as an entry point or as a leaf', () => {
    const named = new Set([...Object.keys(FORBIDDEN), ...Object.keys(ONLY), ...ENTRY_POINTS, ...LEAVES]);
    expect([...new Set(files.map(areaOf))].filter((area) => !named.has(area)).sort()).toEqual([]);
  });

  for (const leaf of LEAVES) {
    it(`${leaf} imports no other area`, () => {
      const offending = files.filter((file) => areaOf(file) === leaf).flatMap((file) => importedAreas(file).filter((target) => target !== leaf));
      expect(offending).toEqual([]);
    });
  }

  it('reports/ never write: no INSERT, UPDATE or DELETE in its SQL', () => {
    const writes = /insert into|delete from|update [a-z_]+ set/i;
    const offending = files.filter((file) => areaOf(file) === 'reports' && writes.test(readFileSync(file, 'utf8'))).map((file) => relative(SRC, file));
    expect(offending).toEqual([]);
  });

  it('db/ imports no scheduler', () => {
    const offending = files.filter((file) => areaOf(file) === 'db' && /from 'node-cron'/.test(readFileSync(file, 'utf8'))).map((file) => relative(SRC, file));
    expect(offending).toEqual([]);
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
