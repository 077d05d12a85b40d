/**
 * The collection suites that need more than the first collection (history: changes, retention,
 * sealed days; faults: failed scopes, retries, dead runs) on a database distributed by the
 * distribute command's own function, on the Citus coordinator named by TEST_CITUS_URL. They assert
 * the same outcomes as on PGlite and Postgres (collection.test.ts), so passing here means the same
 * behaviour on Citus.
 */
import { describe, vi } from 'vitest';
import { CITUS_URL, citusSuiteTitle, citusTestDatabase } from '../helpers/citus.js';
import { faultsSuite } from './suites/faults.js';
import { historySuite } from './suites/history.js';

// Every statement of a collection runs as a distributed transaction over 32 shards per table:
// the suites' several collections per setup take minutes where PGlite takes seconds.
vi.setConfig({ hookTimeout: 900_000, testTimeout: 300_000 });

describe.skipIf(!CITUS_URL)(citusSuiteTitle('collection history and faults on a distributed database'), () => {
  historySuite([citusTestDatabase()]);
  faultsSuite([citusTestDatabase()]);
});
