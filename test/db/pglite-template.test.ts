/**
 * A new PGlite folder is filled from the stored template (src/db/pglite-template.ts), made by the
 * installed PGlite, and is then a database like any other: migrated, written, reopened.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { PGlite } from '@electric-sql/pglite';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connection.js';
import { migrateDatabase } from '../../src/db/migrate.js';
import { PGLITE_TEMPLATE_FILE, installedPgliteVersion, usablePgliteTemplate } from '../../src/db/pglite-template.js';

const MIGRATION_COUNT = (JSON.parse(readFileSync(new URL('../../migrations/meta/_journal.json', import.meta.url), 'utf8')) as { entries: unknown[] }).entries.length;
const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** pg_control's system identifier: initdb draws a new one for every cluster it makes. */
const SYSTEM_ID = 'SELECT system_identifier::text AS id FROM pg_control_system()';

describe('the PGlite template', () => {
  it(`was made by the installed PGlite (${installedPgliteVersion()}); after an upgrade, run npm run pglite-template`, () => {
    expect(usablePgliteTemplate()).toBe(PGLITE_TEMPLATE_FILE);
  });

  it('fills a new folder (the same cluster, not a new initdb), which migrates, stores and reopens', async () => {
    const template = await PGlite.create('memory://', { loadDataDir: new Blob([brotliDecompressSync(readFileSync(PGLITE_TEMPLATE_FILE))]) });
    const templateId = (await template.query<{ id: string }>(SYSTEM_ID)).rows[0]!.id;
    await template.close();

    const folder = mkdtempSync(join(tmpdir(), 'cloudtally-template-'));
    folders.push(folder);
    const first = await openDatabase({ driver: 'pglite', dataDir: folder });
    try {
      expect((await first.query<{ id: string }>(SYSTEM_ID))[0]!.id).toBe(templateId);
      await migrateDatabase(first);
      await first.execute('CREATE TABLE template_test (note text)');
      await first.execute("INSERT INTO template_test VALUES ('kept')");
    } finally {
      await first.close();
    }
    const again = await openDatabase({ driver: 'pglite', dataDir: folder });
    try {
      expect(await again.query('SELECT note FROM template_test')).toEqual([{ note: 'kept' }]);
      expect(await again.query('SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations')).toEqual([{ n: MIGRATION_COUNT }]);
    } finally {
      await again.close();
    }
  }, 120_000);
});
