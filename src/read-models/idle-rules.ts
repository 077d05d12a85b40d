import type { Config } from '../config/index.js';

/*
 * Idle rules: why a running instance is probably burning money for nothing. Each rule that
 * matches says why in words, with the values it looked at. Rules only look at running instances
 * (a stopped one costs no compute and cannot be stopped again).
 *
 * Evaluation: the idle list is decided in SQL (idle-rules-sql.ts: the same rules as boolean
 * expressions, so that a list of every running instance never leaves the database);
 * `evaluateIdleRules` decides one instance (the stop confirmation) and words the reasons of the
 * rows shown. test/actions/idle-rules-sql.test.ts holds both to the same answers.
 */

export const IDLE_RULES = ['no_owner', 'expired', 'off_hours', 'quarantine', 'cluster_clean_up'] as const;
export type IdleRuleId = (typeof IDLE_RULES)[number];

export const IDLE_RULE_TITLES: Readonly<Record<IdleRuleId, string>> = {
  no_owner: 'Long-running without owner',
  expired: 'Expired',
  off_hours: 'Running outside working hours',
  quarantine: 'Quarantined',
  cluster_clean_up: 'Cluster being cleaned up',
};

export interface RuleMatch {
  rule: IdleRuleId;
  reason: string;
}

/** A match as people read it: the rule's title, then why ("Expired: the expires tag ..."). */
export function ruleMatchText(match: RuleMatch): string {
  return match.reason ? `${IDLE_RULE_TITLES[match.rule]}: ${match.reason}` : IDLE_RULE_TITLES[match.rule];
}

/** What the rules look at; tag keys are the normalised ones the collectors store. */
export interface IdleSubject {
  createdAt: Date | null;
  tags: Readonly<Record<string, string>>;
  securityGroupIds: readonly string[];
  securityGroupNames: readonly string[];
  clusterName: string | null;
  clusterTaskStatus: string | null;
}

export type IdleRuleSettings = Pick<Config, 'idleRules' | 'ownerTagKey'>;

const DAY_MS = 86_400_000;

export function evaluateIdleRules(subject: IdleSubject, settings: IdleRuleSettings, now: Date): RuleMatch[] {
  const rules = settings.idleRules;
  const matches: RuleMatch[] = [];

  if (rules.noOwner.enabled && subject.createdAt) {
    const days = Math.floor((now.getTime() - subject.createdAt.getTime()) / DAY_MS);
    const owner = tagValue(subject.tags, settings.ownerTagKey);
    if (days >= rules.noOwner.minRunningDays && !owner) {
      matches.push({
        rule: 'no_owner',
        reason: `running for ${days} days (the limit is ${rules.noOwner.minRunningDays}) with no "${settings.ownerTagKey}" tag`,
      });
    }
  }

  if (rules.expired.enabled) {
    const value = tagValue(subject.tags, rules.expired.tagKey);
    const expiresAt = value ? parseExpiry(value) : null;
    if (value && expiresAt && expiresAt.getTime() <= now.getTime()) {
      matches.push({ rule: 'expired', reason: `tag "${rules.expired.tagKey}" is ${value}, which has passed` });
    }
  }

  if (rules.offHours.enabled) {
    const env = tagValue(subject.tags, rules.offHours.tagKey);
    if (env && rules.offHours.values.includes(env.toLowerCase())) {
      const local = localTime(now, rules.offHours.timezone);
      if (!withinWorkingHours(local, rules.offHours)) {
        matches.push({
          rule: 'off_hours',
          reason: `${rules.offHours.tagKey}=${env} running outside working hours (${describeWorkingHours(rules.offHours)}; it is ${WEEKDAY_NAMES[local.weekday - 1]} ${local.time} there)`,
        });
      }
    }
  }

  if (rules.quarantine.enabled && rules.quarantine.securityGroups.length > 0) {
    const groups = new Set(rules.quarantine.securityGroups);
    const hit = [...subject.securityGroupIds, ...subject.securityGroupNames].find((g) => groups.has(g));
    if (hit) matches.push({ rule: 'quarantine', reason: `in the quarantine security group "${hit}"` });
  }

  if (rules.clusterCleanUp.enabled && subject.clusterTaskStatus && rules.clusterCleanUp.taskStatuses.includes(subject.clusterTaskStatus)) {
    matches.push({
      rule: 'cluster_clean_up',
      reason: `server of cluster "${subject.clusterName ?? '(unnamed)'}" whose task status is ${subject.clusterTaskStatus}`,
    });
  }

  return matches;
}

/**
 * Blanks around a tag value that do not count: ASCII whitespace only, the same set the SQL side
 * (idle-rules-sql.ts) trims with btrim, so both decide alike.
 */
export const TAG_BLANKS = ' \t\n\r\f\v';
const TRIM = /^[ \t\n\r\f\v]+|[ \t\n\r\f\v]+$/g;

function tagValue(tags: Readonly<Record<string, string>>, key: string): string | null {
  const value: unknown = Object.hasOwn(tags, key) ? tags[key] : undefined;
  if (typeof value !== 'string') return null;
  const trimmed = value.replace(TRIM, '');
  return trimmed === '' ? null : trimmed;
}

/** The shape of an expiry tag: a day, or a day and a time with an optional zone (`Z` or ±HH[:]MM). */
export const EXPIRY_PATTERN = '^([0-9]{4})-([0-9]{2})-([0-9]{2})(?:[Tt ]([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\\.([0-9]{1,6}))?)?([Zz]|([+-])([0-9]{2}):?([0-9]{2}))?)?$';
const EXPIRY = new RegExp(EXPIRY_PATTERN);

const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const daysIn = (y: number, m: number) => (m === 2 ? (isLeap(y) ? 29 : 28) : [4, 6, 9, 11].includes(m) ? 30 : 31);

/**
 * When an expiry tag's date has passed: `2024-05-31` expires at the end of that day (UTC);
 * a time (`2024-05-31T18:00:00Z`, `2024-05-31 18:00`, `...+02:00`; zone-less = UTC) at that
 * instant, to the millisecond (finer digits are dropped). Every field is checked (month 1-12, the
 * day within its month, year from 1, hour 0-23, minute and second 0-59, zone up to 23:59); anything
 * else is not a date and the rule does not match. The SQL side (expiryInstantSql) decides the same.
 */
export function parseExpiry(text: string): Date | null {
  const m = EXPIRY.exec(text.replace(TRIM, ''));
  if (!m) return null;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return null;
  const [hour, minute, second] = [Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0)];
  const zoneHours = Number(m[10] ?? 0);
  const zoneMinutes = Number(m[11] ?? 0);
  if (hour > 23 || minute > 59 || second > 59 || zoneHours > 23 || zoneMinutes > 59) return null;
  const at = new Date(0);
  at.setUTCFullYear(year, month - 1, day); // not Date.UTC: it reads years 0-99 as 1900-1999
  at.setUTCHours(hour, minute, second, Number((m[7] ?? '').padEnd(3, '0').slice(0, 3)));
  const offsetMinutes = (m[9] === '-' ? -1 : 1) * (zoneHours * 60 + zoneMinutes);
  const instant = at.getTime() - offsetMinutes * 60_000 + (m[4] === undefined ? DAY_MS : 0);
  return new Date(instant);
}

const WEEKDAY_NAMES = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'] as const;

export interface LocalTime {
  /** ISO weekday, 1 = Monday. */
  weekday: number;
  /** 'HH:MM', 24 h. */
  time: string;
}

/** One formatter per time zone: building one costs ~100 times formatting with it (an idle list evaluates every running instance). */
const LOCAL_TIME_FORMATS = new Map<string, Intl.DateTimeFormat>();

/** The wall-clock weekday and time at `now` in an IANA time zone. */
export function localTime(now: Date, timeZone: string): LocalTime {
  let format = LOCAL_TIME_FORMATS.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone, weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    LOCAL_TIME_FORMATS.set(timeZone, format);
  }
  const parts = format.formatToParts(now);
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  const weekday = WEEKDAY_NAMES.indexOf(get('weekday') as (typeof WEEKDAY_NAMES)[number]) + 1;
  return { weekday, time: `${get('hour').padStart(2, '0')}:${get('minute').padStart(2, '0')}` };
}

type OffHours = Config['idleRules']['offHours'];

export function withinWorkingHours(local: LocalTime, offHours: Pick<OffHours, 'workingDays' | 'workingHours'>): boolean {
  return offHours.workingDays.includes(local.weekday) && local.time >= offHours.workingHours.start && local.time < offHours.workingHours.end;
}

/** Whether instances tagged with an off-hours environment would match now. */
export function isOffHoursNow(now: Date, offHours: OffHours): boolean {
  return offHours.enabled && !withinWorkingHours(localTime(now, offHours.timezone), offHours);
}

export function describeWorkingHours(offHours: Pick<OffHours, 'workingDays' | 'workingHours' | 'timezone'>): string {
  const days = offHours.workingDays.map((d) => WEEKDAY_NAMES[d - 1]).join(', ');
  return `${days} ${offHours.workingHours.start}–${offHours.workingHours.end} ${offHours.timezone}`;
}

/** One line per enabled rule, for the report's notes. */
export function describeIdleRules(settings: IdleRuleSettings): string[] {
  const r = settings.idleRules;
  const lines: string[] = [];
  if (r.noOwner.enabled) lines.push(`${IDLE_RULE_TITLES.no_owner}: running ${r.noOwner.minRunningDays}+ days with no "${settings.ownerTagKey}" tag.`);
  if (r.expired.enabled) lines.push(`${IDLE_RULE_TITLES.expired}: the "${r.expired.tagKey}" tag holds a date that has passed.`);
  if (r.offHours.enabled) lines.push(`${IDLE_RULE_TITLES.off_hours}: "${r.offHours.tagKey}" is ${r.offHours.values.join(', ')} and it is outside ${describeWorkingHours(r.offHours)}.`);
  if (r.quarantine.enabled && r.quarantine.securityGroups.length > 0) lines.push(`${IDLE_RULE_TITLES.quarantine}: in security group ${r.quarantine.securityGroups.join(', ')}.`);
  if (r.clusterCleanUp.enabled) lines.push(`${IDLE_RULE_TITLES.cluster_clean_up}: servers of clusters whose task status is ${r.clusterCleanUp.taskStatuses.join(', ')}.`);
  return lines;
}
