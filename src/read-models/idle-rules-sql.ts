import type { Binds } from '../db/binds.js';
import type { TagExtraction } from '../costing/derive/current-instances.js';
import { EXPIRY_PATTERN, isOffHoursNow, TAG_BLANKS, type IdleRuleId, type IdleRuleSettings } from './idle-rules.js';

/*
 * The idle rules as SQL, so that a list of every running instance is filtered, counted, totalled,
 * sorted and paged in the database: deciding them in Node meant reading and holding every running
 * instance (npm run bench reports measures the list). Each rule is a boolean expression over the columns of the current
 * instance rows aliased `x` (created_at, tags, security_group_ids, security_group_names,
 * cluster_task_status) that decides exactly what evaluateIdleRules (idle-rules.ts) decides; that
 * one still words the reasons of the rows shown. test/actions/idle-rules-sql.test.ts holds the two
 * to the same answers on every edge case (blank tags, non-text tags, each expiry form and each
 * invalid field, sub-millisecond creation times).
 */

/** A tag's value as the rules read it: text only, ASCII blanks trimmed, null when empty. */
function tagValueSql(tags: string, key: string, binds: Binds): string {
  return `nullif(case when jsonb_typeof(${tags} -> ${key}) = 'string' then btrim(${tags} ->> ${key}, ${binds.add(TAG_BLANKS)}::text) end, '')`;
}

/**
 * The instant an expiry text stands for (parseExpiry's rules), or null; never an error, whatever
 * the text: every field is checked before a timestamp is built from it.
 */
export function expiryInstantSql(text: string, binds: Binds): string {
  const m = `regexp_match(btrim(${text}, ${binds.add(TAG_BLANKS)}::text), ${binds.add(EXPIRY_PATTERN)}::text)`;
  const f = (i: number) => `(e.m)[${i}]::int`;
  const [y, mo, d, h, mi, s, zh, zm] = [f(1), f(2), f(3), `coalesce(${f(4)}, 0)`, `coalesce(${f(5)}, 0)`, `coalesce(${f(6)}, 0)`, `coalesce(${f(10)}, 0)`, `coalesce(${f(11)}, 0)`];
  const daysIn = `case when ${mo} = 2 then case when (${y} % 4 = 0 and ${y} % 100 <> 0) or ${y} % 400 = 0 then 29 else 28 end
      when ${mo} in (4, 6, 9, 11) then 30 else 31 end`;
  const valid = `${y} >= 1 and ${mo} between 1 and 12 and ${d} >= 1 and ${d} <= ${daysIn} and ${h} <= 23 and ${mi} <= 59 and ${s} <= 59 and ${zh} <= 23 and ${zm} <= 59`;
  const millis = `coalesce(rpad(substr((e.m)[7], 1, 3), 3, '0')::int, 0)`;
  const sign = `case when (e.m)[9] = '-' then -1 else 1 end`;
  return `(select case when e.m is not null and ${valid} then
      make_timestamptz(${y}, ${mo}, ${d}, ${h}, ${mi}, 0, 'UTC') + make_interval(secs => ${s}) + ${millis} * interval '1 millisecond'
      - ${sign} * (${zh} * 60 + ${zm}) * interval '1 minute'
      + case when (e.m)[4] is null then interval '1 day' else interval '0' end
    end from (select ${m} as m) e)`;
}

/** The SQL expressions the rules read, over the rows they judge. */
export interface IdleRuleInputs {
  /** True when the owner tag has no value (absent, not text, or blank). */
  ownerMissing: string;
  /** The instant the expiry tag's value stands for, or null. */
  expiresAt: string;
  /** The off-hours tag's value in lower case, or null. */
  offHoursValue: string;
}

/**
 * The inputs read from the tags of current instance rows `x` (`tags` jsonb) under `settings`.
 * Each binds its parameters when read: a statement must not carry a parameter it never uses
 * (Postgres cannot type it), and the off-hours rule reads its input only off hours.
 */
export function idleRuleInputsFromTags(settings: IdleRuleSettings, binds: Binds): IdleRuleInputs {
  const rules = settings.idleRules;
  const tag = (key: string) => tagValueSql('x.tags', `${binds.add(key)}::text`, binds);
  return {
    get ownerMissing() {
      return `(${tag(settings.ownerTagKey)} is null)`;
    },
    get expiresAt() {
      const key = `${binds.add(rules.expired.tagKey)}::text`;
      return `case when x.tags ? ${key} then ${expiryInstantSql(tagValueSql('x.tags', key, binds), binds)} end`;
    },
    get offHoursValue() {
      return `lower(${tag(rules.offHours.tagKey)})`;
    },
  };
}

/** The idle rules' inputs as current_instances extracts them when it is built under `settings`. */
export function idleTagExtraction(settings: IdleRuleSettings): TagExtraction {
  return {
    keys: [settings.ownerTagKey, settings.idleRules.expired.tagKey, settings.idleRules.offHours.tagKey],
    columns: (binds) => idleRuleInputsFromTags(settings, binds),
  };
}

/** The inputs as current_instances rows `x` hold them (extracted when the table was built). */
export const STORED_IDLE_RULE_INPUTS: IdleRuleInputs = { ownerMissing: 'x.owner_missing', expiresAt: 'x.expires_at', offHoursValue: 'x.off_hours_value' };

/**
 * Each enabled rule's test over current instance rows `x` at `now` (disabled rules: false), on
 * the tag values `inputs` gives and the columns created_at, security_group_ids,
 * security_group_names and cluster_task_status. The off-hours rule depends only on the time, so
 * it is decided here once.
 */
export function idleRuleFlagsSql(settings: IdleRuleSettings, now: Date, binds: Binds, inputs: IdleRuleInputs): Record<IdleRuleId, string> {
  const rules = settings.idleRules;
  const nowSql = `${binds.add(now.toISOString())}::timestamptz`;
  const flags: Record<IdleRuleId, string> = { no_owner: 'false', expired: 'false', off_hours: 'false', quarantine: 'false', cluster_clean_up: 'false' };
  if (rules.noOwner.enabled) {
    // Whole days as evaluateIdleRules counts them, on the creation time it reads (milliseconds):
    // created at most minRunningDays x 24 h before now, to the millisecond, i.e. before that
    // instant plus one millisecond (a constant: nothing computed per row).
    const latest = new Date(now.getTime() - rules.noOwner.minRunningDays * 86_400_000 + 1);
    flags.no_owner = `(x.created_at < ${binds.add(latest.toISOString())}::timestamptz and ${inputs.ownerMissing})`;
  }
  if (rules.expired.enabled) flags.expired = `(${inputs.expiresAt} <= ${nowSql})`;
  if (isOffHoursNow(now, rules.offHours)) flags.off_hours = `(${inputs.offHoursValue} = any(${binds.add(rules.offHours.values)}::text[]))`;
  if (rules.quarantine.enabled && rules.quarantine.securityGroups.length > 0) {
    const groups = binds.add(rules.quarantine.securityGroups);
    flags.quarantine = `(x.security_group_ids && ${groups}::text[] or x.security_group_names && ${groups}::text[])`;
  }
  if (rules.clusterCleanUp.enabled) flags.cluster_clean_up = `(x.cluster_task_status = any(${binds.add(rules.clusterCleanUp.taskStatuses)}::text[]))`;
  for (const rule of Object.keys(flags) as IdleRuleId[]) flags[rule] = `coalesce(${flags[rule]}, false)`;
  return flags;
}
