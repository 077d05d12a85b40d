/**
 * Every report of the app as HTML, JSON and CSV over the known dataset (test/reports/fixture.ts)
 * on a database distributed by distributeTables on the Citus coordinator named by TEST_CITUS_URL,
 * compared with the same requests on plain Postgres (TEST_DATABASE_URL) or else PGlite: the same
 * status, the same JSON (generated-at fields aside) and the same CSV. The dataset is seeded while
 * the tables are still local on the coordinator; distributeTables keeps every row.
 */
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/connection.js';
import { allReports } from '../../src/reports/index.js';
import { CITUS_URL, citusSuiteTitle, openDistributedDatabase, type DistributedDatabase } from '../helpers/citus.js';
import { testDatabases } from '../helpers/databases.js';
import { NOW, seedKnownDataset } from './fixture.js';
import { startReportsApp, testConfig, type ReportsApp } from './helpers.js';

interface Answer {
  status: number;
  body: string;
}

async function fetchAnswer(app: ReportsApp, path: string): Promise<Answer> {
  const res = await request(`${app.base}${path}`);
  return { status: res.statusCode, body: (await res.body.text()).replace(/^\uFEFF/, '') };
}

/** Keys whose values are clocks of the run, not results (they differ between any two runs). */
const TIME_KEYS = /^(generatedAt|computedAt|generated_at|computed_at|tookMs|durationMs|elapsedMs)$/;

function withoutTimes(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutTimes);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).filter(([k]) => !TIME_KEYS.test(k)).map(([k, v]) => [k, withoutTimes(v)]));
  }
  return value;
}

async function serve(db: Database): Promise<ReportsApp> {
  const config = testConfig();
  return startReportsApp(() => ({ db, config, now: NOW }));
}

const names = allReports().map((r) => r.name);

/**
 * The answers that still fail on Citus 13 (issue 25 item 1, not yet restructured), each with the
 * error Citus gives. Marked as expected failures so that the suite notices when one starts to work
 * (vitest then fails the test: take it off this list).
 */
const STILL_FAILING: Record<string, { formats: ReadonlyArray<'json' | 'csv' | 'html'>; error: string }> = {
  // Priced rows of many snapshots (pricedResourcesSql) read through the views' lateral join: read
  // by a join instead, Citus answered, but the FOCUS export on Postgres took 4 x as long.
  focus: { formats: ['json', 'csv', 'html'], error: 'complex joins are only supported when all distributed tables are co-located and joined on their distribution columns' },
  // The first page walks each snapshot's rows in a lateral subquery with a LIMIT (an index walk on
  // Postgres), and the CSV builds each snapshot's rows in a lateral with CTEs.
  inventory: {
    formats: ['json', 'csv', 'html'],
    error: 'complex joins are only supported when all distributed tables are co-located and joined on their distribution columns (pages); CTEs that refer to other subqueries are not supported in multi-shard queries (CSV)',
  },
};

/** `it`, or `it.fails` for an answer listed in STILL_FAILING. */
function itOnCitus(name: string, format: 'json' | 'csv' | 'html') {
  return STILL_FAILING[name]?.formats.includes(format) ? it.fails : it;
}

describe.skipIf(!CITUS_URL)(citusSuiteTitle('every report on a distributed database'), () => {
  let citus: DistributedDatabase | undefined;
  let plain: Database | undefined;
  let citusApp: ReportsApp | undefined;
  let plainApp: ReportsApp | undefined;
  const plainTarget = testDatabases().at(-1)!; // Postgres when TEST_DATABASE_URL is set, else PGlite

  beforeAll(async () => {
    plain = await plainTarget.open();
    await seedKnownDataset(plain);
    plainApp = await serve(plain);
    citus = await openDistributedDatabase(CITUS_URL!, seedKnownDataset);
    citusApp = await serve(citus.db);
  }, 300_000);

  afterAll(async () => {
    await citusApp?.close();
    await plainApp?.close();
    await plain?.close();
    await citus?.close();
  });

  describe.each(names)('%s', (name) => {
    itOnCitus(name, 'json')(`JSON answers 200 and the same as on ${plainTarget.name}`, async () => {
      const path = `/api/reports/${name}`;
      const [a, b] = await Promise.all([fetchAnswer(citusApp!, path), fetchAnswer(plainApp!, path)]);
      expect(b.status, b.body.slice(0, 300)).toBe(200);
      expect(a.status, a.body.slice(0, 500)).toBe(200);
      expect(withoutTimes(JSON.parse(a.body))).toEqual(withoutTimes(JSON.parse(b.body)));
    });

    itOnCitus(name, 'csv')(`CSV answers 200 and the same as on ${plainTarget.name}`, async () => {
      const path = `/api/reports/${name}.csv`;
      const [a, b] = await Promise.all([fetchAnswer(citusApp!, path), fetchAnswer(plainApp!, path)]);
      expect(b.status, b.body.slice(0, 300)).toBe(200);
      expect(a.status, a.body.slice(0, 500)).toBe(200);
      expect(a.body).toBe(b.body);
    });

    itOnCitus(name, 'html')('HTML answers 200', async () => {
      const a = await fetchAnswer(citusApp!, `/reports/${name}`);
      expect(a.status, a.body.slice(0, 500)).toBe(200);
    });
  });
});
