/**
 * Collection from the simulator into PGlite (and Postgres with TEST_DATABASE_URL). The suites
 * share one test file so that the test process pays PGlite's start-up once.
 */
import { faultsSuite } from './suites/faults.js';
import { fullCollectionSuite } from './suites/full-collection.js';
import { historySuite } from './suites/history.js';
import { legacySuite } from './suites/legacy.js';
import { unreadPortsSuite } from './suites/unread-ports.js';

fullCollectionSuite();
historySuite();
faultsSuite();
legacySuite();
unreadPortsSuite();
