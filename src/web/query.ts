import { z } from 'zod';
import type { RawQuery } from '../present/urls.js';
import type { ReportDefinition, ReportPage } from '../reports/report.js';
import { parseCols, type ColumnChoice } from './columns.js';
import { invalidParameters, type FieldError } from './errors.js';

export interface PagingLimits {
  defaultLimit: number;
  maxLimit: number;
}

export const HTML_PAGING: PagingLimits = { defaultLimit: 50, maxLimit: 500 };
export const API_PAGING: PagingLimits = { defaultLimit: 100, maxLimit: 10_000 };

/** Parameters the web layer owns; they never reach a report's `params` schema. */
export const WEB_PARAMS = ['limit', 'offset', 'page', 'format', 'exact', 'cols'] as const;
export type OutputFormat = 'html' | 'json' | 'csv';

/**
 * Empty values are dropped: a GET filter form sends every field, and an empty one means "not
 * set", so report schemas never see `project=""`.
 */
export function toRawQuery(query: unknown): RawQuery {
  const raw: RawQuery = {};
  if (query === null || typeof query !== 'object') return raw;
  for (const [key, value] of Object.entries(query)) {
    if (typeof value === 'string') {
      if (value !== '') raw[key] = value;
    } else if (Array.isArray(value)) {
      const values = value.filter((v): v is string => typeof v === 'string' && v !== '');
      if (values.length === 1) raw[key] = values[0]!;
      else if (values.length > 1) raw[key] = values;
    }
  }
  return raw;
}

export function withoutWebParams(query: RawQuery): RawQuery {
  const rest: RawQuery = { ...query };
  for (const key of WEB_PARAMS) delete rest[key];
  return rest;
}

/**
 * The furthest row a page may start at: a billion rows is far beyond any real report, and
 * offset + limit (at most 10,000) stays within Postgres `integer`, which some reports' SQL casts
 * the offset to. `page` is bounded so that (page - 1) * limit stays within it too.
 */
export const MAX_OFFSET = 1_000_000_000;

/** An integer from min to max, or an error naming the parameter and its range (`hint` says why the bound). */
function readInteger(query: RawQuery, name: string, min: number, max: number, errors: FieldError[], hint = ''): number | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  const range = `an integer from ${min} to ${max}${hint}`;
  if (Array.isArray(value)) {
    errors.push({ field: `query.${name}`, message: `${name} must be given once, as ${range}` });
    return undefined;
  }
  // At most 16 digits: anything longer is out of range anyway, and never a float like 1e308.
  const n = /^\d{1,16}$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    errors.push({ field: `query.${name}`, message: `${name} must be ${range} (got ${JSON.stringify(value.slice(0, 40))})` });
    return undefined;
  }
  return n;
}

/**
 * limit (1..max, default per output), offset (0..MAX_OFFSET) or page (1-based, an alternative to
 * offset, up to the page that starts at MAX_OFFSET for this limit).
 */
export function parsePaging(query: RawQuery, limits: PagingLimits, errors: FieldError[]): ReportPage {
  const limit = readInteger(query, 'limit', 1, limits.maxLimit, errors) ?? limits.defaultLimit;
  const offset = readInteger(query, 'offset', 0, MAX_OFFSET, errors);
  const lastPage = Math.floor(MAX_OFFSET / limit) + 1;
  const page = readInteger(query, 'page', 1, lastPage, errors, ` at limit ${limit}`);
  if (offset !== undefined && page !== undefined) {
    errors.push({ field: 'query.page', message: 'give either page or offset, not both' });
  }
  return { limit, offset: offset ?? (page !== undefined ? (page - 1) * limit : 0) };
}

/**
 * `format` may only name the output the route serves; the JSON route also serves CSV for
 * `format=csv` (for tools that cannot use the .csv URL).
 */
export function parseFormat(query: RawQuery, route: OutputFormat, errors: FieldError[]): OutputFormat {
  const value = query.format;
  if (value === undefined) return route;
  const allowed: OutputFormat[] = route === 'json' ? ['json', 'csv'] : [route];
  if (typeof value === 'string' && (allowed as string[]).includes(value)) return value as OutputFormat;
  errors.push({ field: 'query.format', message: `format must be ${allowed.join(' or ')} here` });
  return route;
}

/**
 * `exact=1` writes money in CSV with every decimal the database holds instead of rounded to the
 * currency's minor unit (JSON is always exact, HTML always rounded); `exact=0` is the default.
 */
export function parseExact(query: RawQuery, errors: FieldError[]): boolean {
  const value = query.exact;
  if (value === undefined || value === '0') return false;
  if (value === '1') return true;
  errors.push({ field: 'query.exact', message: 'exact must be 1 (exact decimals in CSV) or 0 (rounded to the currency\'s minor unit)' });
  return false;
}

/** Issues a value given several times causes in a parameter that takes one. */
const ONE_VALUE_ISSUES = new Set(['invalid_type', 'invalid_value', 'invalid_format', 'invalid_union']);

/**
 * zod's issues as field errors. With the raw query, a parameter given several times where one
 * value is expected says so (rather than "expected string, received array").
 */
export function zodFieldErrors(issues: readonly z.core.$ZodIssue[], rawQuery: RawQuery = {}): FieldError[] {
  const errors: FieldError[] = [];
  const once = new Set<string>();
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) errors.push({ field: `query.${key}`, message: `unknown parameter ${key}` });
      continue;
    }
    const path = issue.path.map(String).join('.');
    if (issue.path.length === 1 && Array.isArray(rawQuery[path]) && ONE_VALUE_ISSUES.has(issue.code)) {
      if (!once.has(path)) errors.push({ field: `query.${path}`, message: `${path} must be given once` });
      once.add(path);
      continue;
    }
    errors.push({ field: path ? `query.${path}` : 'query', message: issue.message });
  }
  return errors;
}

/** Unwraps optional / default / nullable and pipes down to the schema that reads the raw value. */
export function innerSchema(schema: z.core.$ZodType): z.core.$ZodType {
  let current = schema;
  for (let depth = 0; depth < 20; depth++) {
    if (current instanceof z.ZodOptional || current instanceof z.ZodDefault || current instanceof z.ZodNullable) current = current.unwrap() as z.core.$ZodType;
    else if (current instanceof z.ZodPipe) current = current.in as z.core.$ZodType;
    else return current;
  }
  return current;
}

/** The parameter names a report reads (the keys of its params object), or null when they cannot be known. */
export function reportParamNames(schema: z.core.$ZodType): ReadonlySet<string> | null {
  const object = innerSchema(schema);
  return object instanceof z.ZodObject ? new Set(Object.keys(object.shape as object)) : null;
}

/** Campaign tags that links from mail and chat carry: ignored without a word. */
const SILENTLY_IGNORED = /^utm_/;

/**
 * A link that carries a parameter the report does not read (an old bookmark, a tracking tag)
 * still opens the report: the parameter is dropped and named in `ignored`.
 */
function withoutUnknownParams(query: RawQuery, known: ReadonlySet<string> | null): { query: RawQuery; ignored: string[] } {
  if (known === null) return { query, ignored: [] };
  const kept: RawQuery = {};
  const ignored: string[] = [];
  for (const [key, value] of Object.entries(query)) {
    if (known.has(key)) kept[key] = value;
    else if (!SILENTLY_IGNORED.test(key)) ignored.push(key.slice(0, 60));
  }
  return { query: kept, ignored };
}

export interface ParsedReportQuery<P> {
  params: P;
  /** Parameters the report does not read, dropped (tracking tags such as utm_* are not listed). */
  ignored: string[];
  page: ReportPage;
  format: OutputFormat;
  /** CSV money with exact decimals (`exact=1`). */
  exact: boolean;
  /** The HTML table's columns (`cols`, see columns.ts); JSON and CSV carry every column. */
  columns: ColumnChoice;
  /** The query without the web layer's own parameters: what the report saw. */
  reportQuery: RawQuery;
}

/** Validates paging and the report's own parameters together, so one 400 lists every problem. */
export async function parseReportQuery<P>(
  report: ReportDefinition<P, unknown, unknown>,
  rawQuery: RawQuery,
  route: OutputFormat,
  limits: PagingLimits,
): Promise<ParsedReportQuery<P>> {
  const errors: FieldError[] = [];
  const page = parsePaging(rawQuery, limits, errors);
  const format = parseFormat(rawQuery, route, errors);
  const exact = parseExact(rawQuery, errors);
  const columns = parseCols(rawQuery, errors);
  const { query: reportQuery, ignored } = withoutUnknownParams(withoutWebParams(rawQuery), reportParamNames(report.params as z.core.$ZodType));
  const parsed = await report.params.safeParseAsync(reportQuery);
  if (!parsed.success) errors.push(...zodFieldErrors(parsed.error.issues, reportQuery));
  if (errors.length > 0 || !parsed.success) throw invalidParameters(errors);
  return { params: parsed.data, ignored, page, format, exact, columns, reportQuery };
}
