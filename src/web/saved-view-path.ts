import { parse as parseQueryString } from 'node:querystring';
import type { ReportDefinition } from '../reports/report.js';
import { ClientError, type FieldError } from './errors.js';
import { HTML_PAGING, parseReportQuery, toRawQuery } from './query.js';

/** At most this many characters: a report URL with every filter set fits easily. */
export const MAX_VIEW_PATH = 2000;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyReport = ReportDefinition<any, any, any>;

const REPORT_PATH = /^\/reports\/([a-z0-9][a-z0-9_-]*)(?:\?([^#]*))?$/;

function refuse(message: string, errors: FieldError[] = []): ClientError {
  return new ClientError(400, 'invalid_view_path', `Invalid path: ${message}`, errors.length > 0 ? errors : [{ field: 'body.path', message }]);
}

/**
 * Checks that `path` is a report page of this site that would open: a relative path (no scheme,
 * no `//`, no backslash), of a report in `reports`, whose query passes that report's own
 * parameter validation (the report route's, parseReportQuery). Returns the path trimmed; throws
 * a 400 naming the problem otherwise.
 */
export async function checkViewPath(path: string, reports: ReadonlyMap<string, AnyReport>): Promise<string> {
  const given = path.trim();
  if (given === '') throw refuse('is required (a report URL such as /reports/cost?by=tag:team)');
  if (given.length > MAX_VIEW_PATH) throw refuse(`is ${given.length} characters long; at most ${MAX_VIEW_PATH} are kept`);
  // eslint-disable-next-line no-control-regex
  if (/[\\\u0000-\u001f\u007f]/.test(given)) throw refuse('may not contain backslashes or control characters');
  if (!given.startsWith('/') || given.startsWith('//')) throw refuse('must be a path on this site starting with /reports/ (no scheme, no host)');
  const match = REPORT_PATH.exec(given);
  if (!match) throw refuse('must be a report page: /reports/<report name>, optionally with ?parameters (no #fragment)');
  const report = reports.get(match[1]!);
  if (!report) throw refuse(`there is no report named "${match[1]}"`);
  try {
    await parseReportQuery(report, toRawQuery(parseQueryString(match[2] ?? '')), 'html', HTML_PAGING);
  } catch (err) {
    if (!(err instanceof ClientError)) throw err;
    const errors = err.errors.map((e) => ({ field: 'body.path', message: `${e.field.replace(/^query\./, '')}: ${e.message}` }));
    throw refuse(`the ${report.name} report does not accept its parameters (${errors.map((e) => e.message).join('; ')})`, errors);
  }
  return given;
}
