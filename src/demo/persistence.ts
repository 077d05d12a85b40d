import { readFile } from 'node:fs/promises';
import type { Config } from '../config/index.js';
import type { Queryable } from '../db/connection.js';
import type { Logger } from '../logger.js';
import type { CompanyStore, PersistenceOptions } from '../simulator/index.js';

/**
 * Where the built-in simulator of `npm start` and `npm run collect` keeps the demo company: in the
 * database whose history it made (table demo_company), so a restart continues the same company
 * and two databases started from one folder never share or advance each other's demo. Undefined
 * (memory only) when the database itself is in memory.
 */
export function demoPersistence(config: Config, logger: Logger, db: Queryable): PersistenceOptions | undefined {
  const { database } = config;
  if (database.driver === 'pglite' && database.dataDir === 'memory://') return undefined;
  // Before the company moved into the database, PGlite's folder held it in a file: that file
  // belongs to this database, so it is read once when the table is still empty. A Postgres
  // database never reads it (the file may be another database's demo).
  const legacyFile = database.driver === 'pglite' ? config.demoStateFile : null;
  return { store: databaseStore(db, legacyFile), log: logger.child({ component: 'simulator' }) };
}

function databaseStore(db: Queryable, legacyFile: string | null): CompanyStore {
  return {
    where: 'the database (table demo_company)',
    async read() {
      const [row] = await db.query<{ state: string }>('select state from demo_company where id');
      if (row) return row.state;
      if (legacyFile === null) return null;
      const text = await readFile(legacyFile, 'utf8').catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return null;
        throw error;
      });
      // Into the table at once: from now on the database holds this folder's company.
      if (text !== null) await save(db, text);
      return text;
    },
    write: (text) => save(db, text),
  };
}

async function save(db: Queryable, text: string): Promise<void> {
  await db.execute(
    `insert into demo_company (id, state, saved_at) values (true, $1, now())
     on conflict (id) do update set state = excluded.state, saved_at = excluded.saved_at`,
    [text],
  );
}
