/**
 * Hostile query strings against every report over real HTTP: random and extreme values for every
 * parameter (the report's own, taken from its zod schema, and the web's limit/offset/page/format)
 * on the page, the JSON API and the CSV export. Nothing answers 5xx, and a 400 names a parameter
 * of the report. New reports and new parameters are covered without touching this file.
 */
import fc from 'fast-check';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { allReports } from '../../src/reports/index.js';
import type { ReportDefinition } from '../../src/reports/report.js';
import type { FieldError } from '../../src/web/errors.js';
import { API_PAGING, HTML_PAGING, innerSchema, parseFormat, parsePaging, WEB_PARAMS } from '../../src/web/query.js';
import { testDatabases } from '../helpers/databases.js';
import { appTest } from '../helpers/reports-app.js';
import type { ReportsApp } from './helpers.js';

interface ParamInfo {
  name: string;
  /** Values the parameter's parser accepts: what reaches SQL, so the most dangerous ones to vary. */
  accepted: string[];
  /** The edges of `accepted`: its lowest and highest number, earliest and latest date, longest text. */
  boundaries: string[];
}

/** Boundary values: the accepted values where overflow and out-of-range errors live. */
function boundariesOf(accepted: readonly string[]): string[] {
  const numbers = accepted.filter((v) => /^\d+$/.test(v)).sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0));
  const dates = accepted.filter((v) => /^\d{4}-\d{2}-\d{2}/.test(v)).sort();
  const longest = [...accepted].sort((a, b) => b.length - a.length)[0];
  return [...new Set([numbers[0], numbers.at(-1), dates[0], dates.at(-1), longest].filter((v): v is string => v !== undefined))];
}

function paramInfo(name: string, accepted: string[]): ParamInfo {
  return { name, accepted, boundaries: boundariesOf(accepted) };
}

/** The report's own parameters: the keys of its params object (however it is refined). */
function reportParams(report: ReportDefinition): ParamInfo[] {
  const object = innerSchema(report.params as z.core.$ZodType);
  if (!(object instanceof z.ZodObject)) throw new Error(`report ${report.name}: params is not a zod object; teach this test to find its parameters`);
  return Object.entries(object.shape as Record<string, z.ZodType>).map(([name, schema]) => {
    const inner = innerSchema(schema);
    const options = inner instanceof z.ZodEnum ? (inner.options as unknown[]).map(String) : [];
    return paramInfo(name, [...options, ...VALUE_POOL].filter((v) => schema.safeParse(v).success));
  });
}

type Route = 'html' | 'json' | 'csv';

/** limit, offset, page and format, with the values the web layer's own parsing accepts on the route. */
function webParams(route: Route): ParamInfo[] {
  return WEB_PARAMS.map((name) => {
    const accepts = (value: string) => {
      const errors: FieldError[] = [];
      parsePaging({ [name]: value }, route === 'html' ? HTML_PAGING : API_PAGING, errors);
      parseFormat({ [name]: value }, route, errors);
      return errors.length === 0;
    };
    return paramInfo(name, ['html', 'json', 'csv', ...VALUE_POOL].filter(accepts));
  });
}

const INTEGER_EXTREMES = [
  '0', '-1', '1', '2', '9', '10000', '10001', '999999999', '1000000000', '1000000001', '2147483647', '2147483648', '4294967296',
  '9007199254740991', '9007199254740992', '-9007199254740993', '1e308', '1e-308', 'Infinity', 'NaN', '9'.repeat(400), '0'.repeat(30) + '1',
  '1.5', '0x10', '+1', ' 1', '1 ', '１２',
];
const DATE_EXTREMES = [
  '0000-01-01', '0001-01-01', '1969-12-31', '1970-01-01', '0000-01', '1969-12', '9999-12', '0000', '0000-Q1', '9999-Q4', '2025-03-09', '2025-03-10', '2025-02-29', '2024-02-29', '9999-12-31', '275760-09-13',
  '-271821-04-20', '+275760-09-13', '0000-01-01T00:00:00Z', '0000-01-01T00:00:00+14:00', '9999-12-31T23:59:59-14:00', '2025-03-10T12:00:00Z',
  '2025-03-10T12:00Z', '2025-03-10 12:00:00+0100', '2025-03-10T25:61:61Z', '1e308-01-01',
];
const STRING_EXTREMES = [
  '', ' ', '\u0000', 'a\u0000b', 'ü', '💥', '\u202e', '\ud800', "'", "' or 1=1 --", '"; drop table snapshots; --', '%', '_', '\\', ':', 'tag:', 'tag:team',
  'tag:' + 'k'.repeat(300), 'team:ml', ':x', 'x'.repeat(5000), 'null', 'undefined', 'true', '[]', '{}', 'EUR', 'kind', 'instances', 'ports',
];

const VALUE_POOL = [...INTEGER_EXTREMES, ...DATE_EXTREMES, ...STRING_EXTREMES];

/** Any value: an extreme, a random number or random text, or (half the time) one the parameter accepts. */
const anyValueArb = (param: ParamInfo): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...INTEGER_EXTREMES) },
    { weight: 2, arbitrary: fc.constantFrom(...DATE_EXTREMES) },
    { weight: 2, arbitrary: fc.constantFrom(...STRING_EXTREMES) },
    { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n })).map(String) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
    { weight: param.accepted.length > 0 ? 9 : 0, arbitrary: acceptedValueArb(param) },
  );

/** A value the parameter accepts, most often one of its boundaries. */
const acceptedValueArb = (param: ParamInfo): fc.Arbitrary<string> =>
  param.accepted.length === 0
    ? fc.constant('')
    : fc.oneof({ weight: 1, arbitrary: fc.constantFrom(...param.accepted) }, { weight: 3, arbitrary: fc.constantFrom(...param.boundaries) });

type Pair = readonly [name: string, values: readonly string[]];

/**
 * One request: one hostile parameter (any value, sometimes given twice), with up to three others
 * at values their parsers accept, and sometimes limit with page or offset (their product is what
 * overflows). So an extreme that passes parsing meets other extremes in SQL, and a 400 is about
 * the hostile value rather than a random companion.
 */
function requestArb(report: ReportDefinition) {
  const routes: Route[] = ['html', 'json', 'csv'];
  return fc.constantFrom(...routes).chain((route) => {
    const own = reportParams(report);
    const web = webParams(route);
    const accepted = (param: ParamInfo): fc.Arbitrary<Pair> => acceptedValueArb(param).map((v) => [param.name, [v]] as const);
    const webParam = (name: string) => web.find((p) => p.name === name)!;
    const hostile = fc.constantFrom(...own, ...web).chain((param) =>
      fc.tuple(fc.constant(param.name), fc.oneof({ weight: 4, arbitrary: anyValueArb(param).map((v) => [v]) }, { weight: 1, arbitrary: fc.array(anyValueArb(param), { minLength: 2, maxLength: 2 }) })),
    );
    const companions = own.filter((p) => p.accepted.length > 0);
    return fc.record({
      route: fc.constant(route),
      hostile,
      companions: companions.length > 0 ? fc.array(fc.constantFrom(...companions).chain(accepted), { maxLength: 3 }) : fc.constant([]),
      paging: fc.oneof(
        { weight: 1, arbitrary: fc.constant([]) },
        { weight: 3, arbitrary: fc.constantFrom('page', 'offset').chain((start) => fc.tuple(accepted(webParam('limit')), accepted(webParam(start)))) },
      ),
    });
  });
}

function pathOf(report: string, route: Route, pairs: readonly Pair[]): string {
  const query = new URLSearchParams();
  for (const [name, values] of pairs) for (const value of values) query.append(name, value);
  const base = route === 'html' ? `/reports/${report}` : route === 'json' ? `/api/reports/${report}` : `/api/reports/${report}.csv`;
  const qs = query.toString();
  return qs ? `${base}?${qs}` : base;
}

/** The parameters a 400 names: `errors[].field` in JSON, the `<code>` of each listed error on a page. */
function namedParameters(route: Route, body: string): string[] {
  if (route === 'html') return [...body.matchAll(/<li><code>([^<]*)<\/code>:/g)].map((m) => m[1]!);
  const errors = (JSON.parse(body) as { errors?: Array<{ field: string }> }).errors ?? [];
  return errors.map((e) => e.field.replace(/^query\./, ''));
}

/** `tag.0` (the first value of a repeated parameter) names `tag`. */
const parameterOf = (field: string) => field.split('.')[0]!;

/** Fixed, so that every run sends the same requests; ~30 per report is a few hundred per database. */
const SEED = 20250310;
const RUNS_PER_REPORT = 30;

describe.each(testDatabases())('report parameters at their bounds on $name', (database) => {
  let app: ReportsApp;

  appTest.beforeAll(async ({ reportsApps }) => {
    ({ app } = await reportsApps.open(database));
  });

  async function get(path: string) {
    const res = await request(`${app.base}${path}`);
    // The whole body: a CSV export that fails half-way ends the connection, which throws here.
    return { status: res.statusCode, body: await res.body.text() };
  }

  async function expectNamed400(path: string, route: Route, name: string, message: string) {
    const res = await get(path);
    expect(res.status, `${path}: ${res.body.slice(0, 300)}`).toBe(400);
    expect(namedParameters(route, res.body), path).toContain(name);
    expect(res.body, path).toContain(message);
  }

  it('answers offset=2147483648 on the inventory with 400 naming offset, on HTML, JSON and CSV', async () => {
    const message = 'offset must be an integer from 0 to 1000000000';
    await expectNamed400('/reports/inventory?offset=2147483648', 'html', 'offset', message);
    await expectNamed400('/api/reports/inventory?offset=2147483648', 'json', 'offset', message);
    await expectNamed400('/api/reports/inventory.csv?offset=2147483648', 'csv', 'offset', message);
    // The largest offset allowed is answered (with no rows), not refused.
    const last = await get('/api/reports/inventory?offset=1000000000&limit=10000');
    expect(last.status, last.body.slice(0, 300)).toBe(200);
    expect((JSON.parse(last.body) as { rows: unknown[] }).rows).toEqual([]);
  });

  it('answers page=9007199254740991&limit=10000 on the audit log with 400 naming page, on HTML, JSON and CSV', async () => {
    const query = 'page=9007199254740991&limit=10000';
    const message = 'page must be an integer from 1 to';
    await expectNamed400(`/reports/audit?${query}`, 'html', 'page', message);
    await expectNamed400(`/api/reports/audit?${query}`, 'json', 'page', message);
    await expectNamed400(`/api/reports/audit.csv?${query}`, 'csv', 'page', message);
    // The same page number on the other reports the sweep found failing.
    for (const name of ['overview', 'cost', 'k8s-prices', 'flavors', 'collection-health', 'scheduled-stops']) {
      await expectNamed400(`/api/reports/${name}?${query}`, 'json', 'page', message);
    }
    // The last page allowed at this limit is answered.
    const last = await get('/api/reports/audit?page=100001&limit=10000');
    expect(last.status, last.body.slice(0, 300)).toBe(200);
  });

  it('answers dates before 1970 (year 0000 is no year in Postgres) with 400 naming the parameter, on HTML, JSON and CSV', async () => {
    const dateMessage = (name: string) => `${name} must be a date from 1970-01-01 to 9999-12-31`;
    for (const [route, prefix] of [['html', '/reports/'], ['json', '/api/reports/'], ['csv', '/api/reports/']] as const) {
      const suffix = route === 'csv' ? '.csv' : '';
      await expectNamed400(`${prefix}audit${suffix}?from=0000-01-01`, route, 'from', dateMessage('from'));
      await expectNamed400(`${prefix}audit${suffix}?to=1969-12-31`, route, 'to', dateMessage('to'));
      await expectNamed400(`${prefix}focus${suffix}?from=0000-01-01&to=0000-01-02`, route, 'from', dateMessage('from'));
      await expectNamed400(`${prefix}changes${suffix}?since=0000-01-01T00:00:00Z`, route, 'since', 'since must be a time from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z');
    }
    // The bounds themselves are answered.
    for (const path of ['/api/reports/audit?from=1970-01-01&to=9999-12-31', '/api/reports/audit.csv?from=9999-12-31', '/api/reports/changes?since=1970-01-01']) {
      const res = await get(path);
      expect(res.status, `${path}: ${res.body.slice(0, 300)}`).toBe(200);
    }
  });

  // Per report, so each gets the same share of requests and a failure names the report.
  it.each(allReports().map((r) => r.name))(
    'answers random and extreme values for every parameter of %s without a 5xx, and a 400 names a parameter',
    { timeout: 300_000 },
    async (name) => {
      const report = allReports().find((r) => r.name === name) as ReportDefinition;
      const known = new Set([...reportParams(report).map((p) => p.name), ...WEB_PARAMS]);
      await fc.assert(
        fc.asyncProperty(requestArb(report), async ({ route, hostile, companions, paging }) => {
          const path = pathOf(name, route, [hostile, ...companions, ...paging]);
          const res = await get(path).catch((err: unknown) => {
            throw new Error(`${path}: ${String(err)} (a CSV export that fails half-way closes the connection)`);
          });
          if (res.status >= 500) throw new Error(`${res.status} for ${path}: ${res.body.slice(0, 300)}`);
          if (res.status === 400) {
            const named = namedParameters(route, res.body);
            if (named.length === 0 || !named.every((n) => known.has(parameterOf(n)))) throw new Error(`400 for ${path} names ${JSON.stringify(named)}: ${res.body.slice(0, 300)}`);
          }
        }),
        { seed: SEED, numRuns: RUNS_PER_REPORT },
      );
    },
  );
});
