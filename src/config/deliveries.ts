/** Reports sent on a schedule, as CSV, to channels. */
import { z } from 'zod';
import { channelName, unknownChannelProblems } from './notify.js';
import { formatPathSegment, type ConfigProblem } from './problems.js';
import type { DeliverySettings } from './types.js';
import { AccessScopeSchema } from '../auth/access-scope.js';
import { normalisedScope, type TagNormalising } from './auth.js';
import { cronExpression, nonEmptyName } from './validators.js';

/**
 * What checking a delivery needs of a report: its name and the parameter schema its query string
 * is parsed with. Every report definition (src/reports/report.ts) is one.
 */
export interface DeliverableReport {
  readonly name: string;
  readonly params: z.ZodType<unknown>;
  /** Whether the report can answer for a team scope (src/reports/report.ts). */
  readonly scoped?: boolean;
}

const deliveryParamValue = z.union([z.string(), z.number(), z.boolean(), z.array(z.union([z.string(), z.number()]))], {
  error: 'must be text, a number, true/false or a list of them (as the report\'s query parameter would be)',
});

export const DeliverySchema = z.strictObject({
  name: channelName.optional(),
  report: nonEmptyName,
  params: z.record(z.string(), deliveryParamValue).default({}),
  schedule: cronExpression,
  notify: z.array(channelName).min(1, { error: 'must name at least one channel' }),
  format: z.literal('csv', { error: 'must be "csv"' }).default('csv'),
  /** Only this team's resources (team-scoped access), e.g. a team lead's weekly inventory; absent: everything. */
  scope: AccessScopeSchema.nullable().default(null),
});

/**
 * The deliveries: ids unique, each naming known channels and, when `reportList` is given, a
 * known report with valid params.
 */
export function deliverySettings(
  raw: readonly z.output<typeof DeliverySchema>[],
  channels: readonly { name: string }[],
  reportList: readonly DeliverableReport[] | undefined,
  problems: ConfigProblem[],
  tags: TagNormalising,
): DeliverySettings[] {
  const reports = reportList ? new Map(reportList.map((r) => [r.name, r])) : null;
  const deliveryIds = new Map<string, number>();
  return raw.map((d, i) => {
    const path = `deliveries[${i}]`;
    const id = d.name ?? String(i);
    const first = deliveryIds.get(id);
    if (first !== undefined) problems.push({ path: `${path}.name`, message: `repeats deliveries[${first}] ("${id}"); delivery names must be unique` });
    else deliveryIds.set(id, i);
    problems.push(...unknownChannelProblems(d.notify, `${path}.notify`, channels));
    const params = deliveryQuery(d.params);
    if (reports) {
      const report = reports.get(d.report);
      if (!report) problems.push({ path: `${path}.report`, message: `is not a report; one of ${[...reports.keys()].join(', ')}` });
      else problems.push(...deliveryParamProblems(report, params).map((p) => ({ path: `${path}.params${p.path ? formatPathSegment(p.path) : ''}`, message: p.message })));
      if (report && d.scope && !report.scoped) {
        problems.push({ path: `${path}.scope`, message: `cannot be given for report "${d.report}": it shows figures of every team and is not split by team` });
      }
    }
    const scope = d.scope ? normalisedScope(d.scope, tags) : null;
    return { id, name: d.name ?? null, report: d.report, params, schedule: d.schedule, notify: [...new Set(d.notify)], format: d.format, scope };
  });
}

/** A delivery's params as the report's query string would carry them (numbers and booleans as text). */
function deliveryQuery(params: Record<string, string | number | boolean | Array<string | number>>): Record<string, string | string[]> {
  return Object.fromEntries(Object.entries(params).map(([k, v]) => [k, Array.isArray(v) ? v.map(String) : String(v)]));
}

/**
 * The problems of `params` for `report`, through the report's own parameter schema (the one the
 * web's query parsing uses); `path` is the parameter's name.
 */
export function deliveryParamProblems(report: Pick<DeliverableReport, 'params'>, params: Record<string, string | string[]>): ConfigProblem[] {
  let result: ReturnType<typeof report.params.safeParse>;
  try {
    result = report.params.safeParse(params);
  } catch (err) {
    return [{ path: '', message: `cannot be checked: ${(err as Error).message}` }];
  }
  if (result.success) return [];
  return result.error.issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ path: key, message: 'is not a parameter of this report' }))
      : [{ path: issue.path.map(String).join('.'), message: issue.message }],
  );
}
