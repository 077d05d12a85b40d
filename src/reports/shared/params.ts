/**
 * zod building blocks for report parameters. Query values arrive as strings (or string arrays when
 * repeated); every schema here turns them into typed values or fails with a message that names
 * what was expected, which the web turns into a 400.
 */
import { z } from 'zod';

export const SORT_DIRECTIONS = ['asc', 'desc'] as const;
export type SortDirection = (typeof SORT_DIRECTIONS)[number];

export const dirParam = z.enum(SORT_DIRECTIONS, { error: 'dir must be asc or desc' }).optional();

/** `sort` limited to the given column keys. */
export function sortParam<const K extends string>(keys: readonly [K, ...K[]]) {
  return z.enum(keys, { error: `sort must be one of ${keys.join(', ')}` }).optional();
}

/** A positive database id (project_id, region_id, run id) given as digits. */
export const idParam = (name: string) =>
  z
    .string()
    .regex(/^\d{1,9}$/, { error: `${name} must be a positive whole number` })
    .transform(Number)
    .refine((n) => n > 0, { error: `${name} must be a positive whole number` })
    .optional();

/** A whole number in [min, max]. */
export const intParam = (name: string, min: number, max: number) =>
  z
    .string()
    .regex(/^\d{1,6}$/, { error: `${name} must be a whole number from ${min} to ${max}` })
    .transform(Number)
    .refine((n) => n >= min && n <= max, { error: `${name} must be a whole number from ${min} to ${max}` })
    .optional();

/** Free text (search, names) of bounded length. */
export const textParam = (name: string, max = 255) =>
  z.string().max(max, { error: `${name} must be at most ${max} characters` }).optional();

/**
 * The dates and instants a report accepts: from the Unix epoch to the last day of year 9999. No
 * data is older, and the bounds keep every date (and a day either side of it) a year that
 * Postgres and JavaScript both hold and write alike (Postgres has no year 0000; JavaScript writes
 * years after 9999 as +010000).
 */
export const EARLIEST_DATE = '1970-01-01';
export const LATEST_DATE = '9999-12-31';
const EARLIEST_INSTANT = Date.parse(`${EARLIEST_DATE}T00:00:00Z`);
const END_OF_LATEST_DATE = Date.parse(`${LATEST_DATE}T00:00:00Z`) + 86_400_000;

/** A UTC date YYYY-MM-DD that exists, from EARLIEST_DATE to LATEST_DATE. */
export const dateParam = (name: string) =>
  z
    .string()
    // abort: a value that is no date at all gets this one message, not the calendar check's too.
    .regex(/^\d{4}-\d{2}-\d{2}$/, { error: `${name} must be a date YYYY-MM-DD`, abort: true })
    .refine((s) => {
      const d = new Date(`${s}T00:00:00Z`);
      return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
    }, { error: `${name} must be a real calendar date YYYY-MM-DD`, abort: true })
    .refine((s) => s >= EARLIEST_DATE && s <= LATEST_DATE, { error: `${name} must be a date from ${EARLIEST_DATE} to ${LATEST_DATE}` })
    .optional();

/** An instant: ISO 8601 with a zone, or a date (midnight UTC); from EARLIEST_DATE to the end of LATEST_DATE (UTC). */
export const instantParam = (name: string) =>
  z
    .string()
    .max(40)
    .refine((s) => /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2}))?$/.test(s) && !Number.isNaN(Date.parse(s.length === 10 ? `${s}T00:00:00Z` : s)), {
      error: `${name} must be an ISO 8601 time with a zone (e.g. 2025-03-01T12:00:00Z) or a date`,
      abort: true,
    })
    .transform((s) => new Date(s.length === 10 ? `${s}T00:00:00Z` : s))
    .refine((d) => d.getTime() >= EARLIEST_INSTANT && d.getTime() < END_OF_LATEST_DATE, {
      error: `${name} must be a time from ${EARLIEST_DATE}T00:00:00Z to ${LATEST_DATE}T23:59:59Z`,
    })
    .optional();

/** One or more values of a repeated parameter (each parsed by `item`), as an array. */
export const repeated = <T extends z.ZodType<unknown, string>>(item: T) =>
  z
    // One value or several, as an array first, so that "at most 20" is what a 21st value reads
    // (a union would only say "Invalid input").
    .preprocess((v) => (typeof v === 'string' ? [v] : v), z.array(z.string()).max(20, { error: 'at most 20 values' }))
    .pipe(z.array(item))
    .optional();

/** yes / no filter. */
export const yesNoParam = (name: string) =>
  z
    .enum(['yes', 'no'], { error: `${name} must be yes or no` })
    .transform((v) => v === 'yes')
    .optional();

/**
 * A tag filter `key:value` (the first colon separates them; the key is normalised later through
 * the configured aliases). `key:` matches an empty value.
 */
export const tagFilterParam = z
  .string()
  .max(520)
  .refine((s) => s.indexOf(':') > 0 && s.slice(0, s.indexOf(':')).trim() !== '', {
    error: 'tag must be key:value (e.g. team:ml); the key must not be empty',
  })
  .transform((s) => ({ key: s.slice(0, s.indexOf(':')), value: s.slice(s.indexOf(':') + 1) }));

/** A tag key (for grouping or "lacking the key"); normalised later through the configured aliases. */
export const tagKeyParam = (name: string) =>
  z
    .string()
    .max(255, { error: `${name} must be at most 255 characters` })
    .refine((s) => s.trim() !== '', { error: `${name} must not be blank` });

/**
 * A parameter found invalid while the report runs (checks that need the data or the report's
 * "now"): answered like a schema error, 400 `invalid_parameters` naming the field.
 */
export function invalidParameter(name: string, message: string): Error {
  return Object.assign(new Error(message), { status: 400, code: 'invalid_parameters', errors: [{ field: `query.${name}`, message }] });
}
