/**
 * Every report of the app as HTML, JSON and CSV over the known dataset (test/reports/fixture.ts)
 * on a database distributed by distributeTables on the Citus coordinator named by TEST_CITUS_URL,
 * compared with the same requests on plain Postgres (TEST_DATABASE_URL) or else PGlite: the same
 * status, the same JSON (generated-at fields aside) and the same CSV. The dataset is seeded while
 * the tables are still local on the coordinator; distributeTables keeps every row.
 */
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AccessScope } from '../../src/auth/access-scope.js';
import type { Database } from '../../src/db/connection.js';
import { allReports } from '../../src/reports/index.js';
import { CITUS_URL, citusSuiteTitle, openDistributedDatabase, type DistributedDatabase } from '../helpers/citus.js';
import { testDatabases } from '../helpers/databases.js';
import { NOW, seedKnownDataset, T1 } from './fixture.js';
import { INVENTORY_KINDS, type InventoryKind } from '../../src/reports/inventory-kinds.js';
import { exportRows, run, startReportsApp, testConfig, type ReportsApp } from './helpers.js';

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

/** A user scoped to team ml (the fixture's tags), as the web app puts it in the report context. */
const TEAM_ML: AccessScope = { by: 'tag:team', key: 'team', values: ['ml'] };

async function serve(db: Database): Promise<ReportsApp> {
  const config = testConfig();
  return startReportsApp(() => ({ db, config, now: NOW }));
}

const names = allReports().map((r) => r.name);

/** A sortable column of each inventory list. */
const KIND_SORTS: Record<InventoryKind, string> = {
  instances: 'name',
  clusters: 'price_per_hour',
  servers: 'status',
  resources: 'price_per_hour',
  ports: 'name',
  keypairs: 'name',
  'storage-keys': 'name',
  'image-tags': 'key',
  'free-features': 'name',
};

/** Each list of the inventory in its default order and sorted, a page further on, searched and as of a past time. */
const INVENTORY_PATHS = INVENTORY_KINDS.flatMap((kind) => {
  const sort = KIND_SORTS[kind];
  return [
    `kind=${kind}`,
    `kind=${kind}&sort=${sort}`,
    `kind=${kind}&sort=${sort}&dir=desc&limit=2&offset=1`,
    `kind=${kind}&limit=2&offset=3`,
    `kind=${kind}&q=1`,
    `kind=${kind}&at=${encodeURIComponent(T1.toISOString())}`,
  ];
});

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

  describe.each(INVENTORY_PATHS)('inventory?%s', (query) => {
    it(`JSON and CSV answer 200 and the same as on ${plainTarget.name}`, async () => {
      for (const path of [`/api/reports/inventory?${query}`, `/api/reports/inventory.csv?${query}`]) {
        const [a, b] = await Promise.all([fetchAnswer(citusApp!, path), fetchAnswer(plainApp!, path)]);
        expect(b.status, `${path}: ${b.body.slice(0, 300)}`).toBe(200);
        expect(a.status, `${path}: ${a.body.slice(0, 500)}`).toBe(200);
        if (path.includes('.csv')) expect(a.body).toBe(b.body);
        else expect(withoutTimes(JSON.parse(a.body))).toEqual(withoutTimes(JSON.parse(b.body)));
      }
    });
  });

  // The web app takes the scope from the signed-in user (test/auth/scoped-access.test.ts); here the
  // reports are run with it directly, each rows and export compared.
  const scopedNames = allReports().filter((r) => r.scoped).map((r) => r.name);
  describe.each([...scopedNames.map((name) => [name, {}] as const), ...INVENTORY_KINDS.map((kind) => ['inventory', { kind }] as const)])(
    '%s %o for a user scoped to team ml',
    (name, query) => {
      it(`gives the same page and export as on ${plainTarget.name}`, async () => {
        const report = allReports().find((r) => r.name === name)!;
        const config = testConfig();
        const [a, b] = await Promise.all(
          [citus!.db, plain!].map(async (db) => {
            const ctx = { db, config, now: NOW, scope: TEAM_ML };
            const out = await run(report, ctx, query);
            return { rows: out.rows, totals: out.totals ?? null, summary: out.summary, exported: await exportRows(report, ctx, query) };
          }),
        );
        expect(withoutTimes(a)).toEqual(withoutTimes(b));
        if (name === 'inventory' && (query as { kind?: string }).kind === 'instances') {
          // The scope applies: only team ml's instances, and some of them.
          expect(b.exported.length).toBeGreaterThan(0);
          for (const row of b.exported) expect((row.tags as Record<string, string>).team).toBe('ml');
        }
      });
    },
  );

  describe.each(names)('%s', (name) => {
    it(`JSON answers 200 and the same as on ${plainTarget.name}`, async () => {
      const path = `/api/reports/${name}`;
      const [a, b] = await Promise.all([fetchAnswer(citusApp!, path), fetchAnswer(plainApp!, path)]);
      expect(b.status, b.body.slice(0, 300)).toBe(200);
      expect(a.status, a.body.slice(0, 500)).toBe(200);
      expect(withoutTimes(JSON.parse(a.body))).toEqual(withoutTimes(JSON.parse(b.body)));
    });

    it(`CSV answers 200 and the same as on ${plainTarget.name}`, async () => {
      const path = `/api/reports/${name}.csv`;
      const [a, b] = await Promise.all([fetchAnswer(citusApp!, path), fetchAnswer(plainApp!, path)]);
      expect(b.status, b.body.slice(0, 300)).toBe(200);
      expect(a.status, a.body.slice(0, 500)).toBe(200);
      expect(a.body).toBe(b.body);
    });

    it('HTML answers 200', async () => {
      const a = await fetchAnswer(citusApp!, `/reports/${name}`);
      expect(a.status, a.body.slice(0, 500)).toBe(200);
    });
  });
});
