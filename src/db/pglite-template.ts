/**
 * The PGlite data folder exactly as PGlite's own initdb leaves it, stored once in the package
 * (pglite/initdb-template.tar.br, a brotli-compressed tar of `dumpDataDir`), so that a new folder is
 * filled by unpacking it instead of running initdb. PGlite's initdb runs a second database
 * instance and copies its whole WebAssembly heap for every step: about 700-800 MB resident for
 * ten seconds, where unpacking the template takes about 320 MB for three. The template is made by
 * the PGlite version named in pglite/initdb-template.json; with any other version installed it is
 * not used (initdb runs, as before) and `npm run pglite-template` makes it again.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** <package root>/pglite, found from this file (src/db or dist/db), not from the cwd. */
export const PGLITE_TEMPLATE_FOLDER = fileURLToPath(new URL('../../pglite', import.meta.url));
export const PGLITE_TEMPLATE_FILE = join(PGLITE_TEMPLATE_FOLDER, 'initdb-template.tar.br');
export const PGLITE_TEMPLATE_INFO = join(PGLITE_TEMPLATE_FOLDER, 'initdb-template.json');

export interface PgliteTemplateInfo {
  /** The @electric-sql/pglite version whose initdb made the template. */
  pglite: string;
}

/** The installed @electric-sql/pglite's version (its package.json, found from its entry point). */
export function installedPgliteVersion(): string {
  const entry = fileURLToPath(import.meta.resolve('@electric-sql/pglite'));
  for (let dir = dirname(entry); dir !== dirname(dir); dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (!existsSync(manifest)) continue;
    const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string; version?: string };
    if (pkg.name === '@electric-sql/pglite' && pkg.version) return pkg.version;
  }
  throw new Error(`cannot find the version of @electric-sql/pglite (no package.json above ${entry})`);
}

/** The template's file when it was made by the installed PGlite; null otherwise (initdb runs). */
export function usablePgliteTemplate(): string | null {
  if (!existsSync(PGLITE_TEMPLATE_FILE) || !existsSync(PGLITE_TEMPLATE_INFO)) return null;
  const info = JSON.parse(readFileSync(PGLITE_TEMPLATE_INFO, 'utf8')) as Partial<PgliteTemplateInfo>;
  return info.pglite === installedPgliteVersion() ? PGLITE_TEMPLATE_FILE : null;
}
