import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluateIdleRules, parseExpiry, type IdleSubject } from '../../src/actions/index.js';
import { Binds } from '../../src/db/binds.js';
import type { Database } from '../../src/db/connection.js';
import { IDLE_RULES } from '../../src/read-models/idle-rules.js';
import { expiryInstantSql, idleRuleFlagsSql, idleRuleInputsFromTags, STORED_IDLE_RULE_INPUTS } from '../../src/read-models/idle-rules-sql.js';
import { testDatabases } from '../helpers/databases.js';
import { testConfig } from './helpers.js';

/*
 * The idle list is decided in SQL (idle-rules-sql.ts) and worded in TypeScript (idle-rules.ts):
 * both must decide alike on every input, edge cases first.
 */

const EXPIRY_TEXTS = [
  // days: the end of the day, UTC
  '2024-05-31', '2024-02-29', '2023-02-29', '1900-02-29', '2000-02-29', '2024-04-31', '2024-13-01', '2024-00-10', '2024-05-00',
  '0000-01-01', '0001-01-01', '0099-12-31', '9999-12-31',
  // times, zones, fractions
  '2024-05-31T18:00:00Z', '2024-05-31t18:00:00z', '2024-05-31 18:00', '2024-05-31T18:00', '2024-05-31T18:00:59',
  '2024-05-31T18:00:00.1', '2024-05-31T18:00:00.123456', '2024-05-31T18:00:00.9999', '2024-05-31T18:00:00.1234567',
  '2024-01-01T00:30+01:00', '2024-01-01T00:30+0100', '2024-12-31T23:30-05:30', '2024-05-31T18:00+23:59', '2024-05-31T18:00+24:00',
  '2024-05-31T18:00+05:60', '2024-05-31T24:00', '2024-05-31T23:60', '2024-05-31T23:59:60', '2024-05-31T18', '2024-05-31T18:00+5',
  // blanks: ASCII ones are trimmed, others are not
  ' 2024-05-31 ', '\t2024-05-31\n', '\u00a02024-05-31', '2024-05-31\u2028',
  // not dates
  '', 'tomorrow', '2024-5-31', '20240531', '31/05/2024', '٢٠٢٤-٠٥-٣١', '２０２４-05-31', '2024-05-31T18:00:00ZZ', '2024-05-31\n18:00',
];

describe.each(testDatabases())('idle rules in SQL on $name', ({ open }) => {
  let db: Database;
  beforeAll(async () => {
    db = await open();
  });
  afterAll(async () => {
    await db?.close();
  });

  it('reads every expiry text as parseExpiry does, to the millisecond, and never fails on one', async () => {
    for (const text of EXPIRY_TEXTS) {
      const binds = new Binds();
      const sql = `select (extract(epoch from ${expiryInstantSql(`${binds.add(text)}::text`, binds)}) * 1000)::text as ms`;
      const [row] = await db.query<{ ms: string | null }>(sql, binds.values);
      const expected = parseExpiry(text);
      expect(row!.ms === null ? null : Number(row!.ms), JSON.stringify(text)).toBe(expected === null ? null : expected.getTime());
    }
    // The cases above cover both answers, and each kind of invalid field.
    expect(EXPIRY_TEXTS.filter((t) => parseExpiry(t) !== null).length).toBeGreaterThan(15);
    expect(EXPIRY_TEXTS.filter((t) => parseExpiry(t) === null).length).toBeGreaterThan(15);
  });

  const config = testConfig({
    owner_tag_key: 'owner',
    idle_rules: {
      no_owner: { min_running_days: 30 },
      expired: { tag_key: 'expires' },
      off_hours: { timezone: 'Europe/Berlin', working_hours: { start: '08:00', end: '20:00' }, values: ['dev', 'test'] },
      quarantine: { security_groups: ['sg-q', 'quarantine'] },
      cluster_clean_up: { task_statuses: ['CLUSTER_CLEAN_UP'] },
    },
  });
  const DAY = 86_400_000;
  const FRIDAY = new Date('2024-05-17T10:30:00Z'); // working hours in Berlin
  const SATURDAY = new Date('2024-05-18T10:30:00Z');

  /** Subjects with the creation time as the database stores it (microseconds) and as TypeScript reads it. */
  function subjects(now: Date): Array<{ created: string | null; subject: IdleSubject }> {
    const cutoff = now.getTime() - 30 * DAY;
    const iso = (ms: number, micros = '') => new Date(ms).toISOString().replace('Z', `${micros}Z`);
    const out: Array<{ created: string | null; subject: IdleSubject }> = [];
    const add = (created: string | null, over: Partial<IdleSubject> = {}) =>
      out.push({
        created,
        subject: {
          createdAt: created === null ? null : new Date(created.replace(/(\.\d{3})\d+Z$/, '$1Z')),
          tags: {},
          securityGroupIds: [],
          securityGroupNames: [],
          clusterName: null,
          clusterTaskStatus: null,
          ...over,
        },
      });
    for (const created of [iso(cutoff), iso(cutoff, '400'), iso(cutoff + 1), iso(cutoff - 1, '999'), iso(now.getTime()), iso(now.getTime() + DAY), null]) {
      add(created);
      add(created, { tags: { owner: 'ana' } });
    }
    const old = iso(cutoff - DAY);
    for (const owner of ['', '  ', '\t\n', '\u00a0', ' ana ', 'ana']) add(old, { tags: { owner } });
    add(old, { tags: { owner: 5 as unknown as string } });
    add(old, { tags: { owner: null as unknown as string } });
    add(old, { tags: { Owner: 'ana' } });
    const young = iso(now.getTime() - DAY);
    for (const expires of EXPIRY_TEXTS) add(young, { tags: { owner: 'ana', expires } });
    for (const expires of ['2024-05-16', '2024-05-17', '2024-05-17T10:30:00Z', '2024-05-17T10:30:00.001Z', '2024-05-17T12:30+02:00', '2024-05-17T12:31+02:00']) {
      add(young, { tags: { owner: 'ana', expires } });
    }
    add(young, { tags: { owner: 'ana', expires: 20240101 as unknown as string } });
    for (const env of ['dev', 'DEV', ' test ', 'prod', '', 'Dev\t']) add(young, { tags: { owner: 'ana', env } });
    add(young, { tags: { owner: 'ana' }, securityGroupIds: ['sg-1', 'sg-q'] });
    add(young, { tags: { owner: 'ana' }, securityGroupNames: ['default', 'quarantine'] });
    add(young, { tags: { owner: 'ana' }, securityGroupIds: ['quarantine-2'], securityGroupNames: ['Quarantine'] });
    for (const status of ['CLUSTER_CLEAN_UP', 'cluster_clean_up', 'RUNNING', null]) add(young, { tags: { owner: 'ana' }, clusterName: 'c', clusterTaskStatus: status });
    add(old, { tags: { env: 'dev', expires: '2020-01-01' }, securityGroupIds: ['sg-q'], clusterName: 'c', clusterTaskStatus: 'CLUSTER_CLEAN_UP' });
    return out;
  }

  // From the tags, as on the snapshots; and from the values extracted when current_instances is built.
  it.each([
    ['a working Friday', FRIDAY, 'tags'],
    ['a Saturday', SATURDAY, 'tags'],
    ['a working Friday', FRIDAY, 'stored inputs'],
    ['a Saturday', SATURDAY, 'stored inputs'],
  ] as const)('decides every rule as evaluateIdleRules does on %s, from the %s', async (_, now, from) => {
    const cases = subjects(now);
    const seen = new Set<string>();
    for (const { created, subject } of cases) {
      const binds = new Binds();
      const values = [created, JSON.stringify(subject.tags), subject.securityGroupIds, subject.securityGroupNames, subject.clusterTaskStatus].map((v) => binds.add(v));
      const columns = `select ${values[0]}::timestamptz as created_at, ${values[1]}::jsonb as tags, ${values[2]}::text[] as security_group_ids,
        ${values[3]}::text[] as security_group_names, ${values[4]}::text as cluster_task_status`;
      const extracted = idleRuleInputsFromTags(config, binds);
      const rows =
        from === 'tags'
          ? `(${columns}) x`
          : `(select x.*, ${extracted.ownerMissing} as owner_missing, ${extracted.expiresAt} as expires_at, ${extracted.offHoursValue} as off_hours_value
              from (${columns}) x) x`;
      const flags = idleRuleFlagsSql(config, now, binds, from === 'tags' ? extracted : STORED_IDLE_RULE_INPUTS);
      const [row] = await db.query<{ flags: boolean[] }>(`select array[${IDLE_RULES.map((r) => flags[r]).join(', ')}] as flags from ${rows}`, binds.values);
      const inSql = IDLE_RULES.filter((_, i) => row!.flags[i]);
      const inTs = evaluateIdleRules(subject, config, now).map((m) => m.rule);
      expect(inSql, JSON.stringify({ created, ...subject })).toEqual(inTs);
      seen.add(inTs.join(','));
    }
    // Every rule is seen both matching and not.
    for (const rule of IDLE_RULES.filter((r) => r !== 'off_hours' || now === SATURDAY)) {
      expect([...seen].some((s) => s.split(',').includes(rule)), rule).toBe(true);
    }
    expect(seen.has('')).toBe(true);
  });
});
