/**
 * The anomaly explanations written after each collection run (table anomaly_explanations): read
 * by the anomalies report and the alerts instead of explaining a day again, but only under the
 * very inputs they were computed from (`digest`, see reports/shared/anomaly-explain.ts). What to
 * explain and how is the report's (an ExplanationSource, read-only); storing it is done here.
 */
import type { Queryable } from '../../db/connection.js';
import { executeStatement, sql } from '../../db/statement.js';
import type { PricedKind } from '../pricing.js';

/** What happened to a resource, as far as the group's spend is concerned. */
export type LineChange =
  | 'appeared'
  | 'disappeared'
  | 'moved in'
  | 'moved out'
  | 'started'
  | 'stopped'
  | 'flavor changed'
  | 'price changed'
  | 'ran part of the day';

export interface ExplanationLine {
  kind: PricedKind;
  scope: string;
  resource_id: string;
  name: string | null;
  change: LineChange;
  /** The diff's changed fields and tags, e.g. `status: SHUTOFF -> ACTIVE; team: "web" -> "ml"`. */
  details: string;
  /** Run-rate in the group and currency before and after (0 when not in the group, not running). */
  price_per_hour_before: string;
  price_per_hour_after: string;
  /** Hours at the new rate that give the impact (impact / rate change); null when the rate did not change. */
  hours: string | null;
  /** Cost impact on the day (exact decimal text, in the currency). */
  impact: string;
  /** The line as one sentence. */
  text: string;
}

export interface Explanation {
  lines: ExplanationLine[];
  /** Lines beyond the first `maxLines` (by size of impact), not listed. */
  more: number;
  /** Sum of every line's impact (listed or not). */
  explained: string;
  /** When the snapshots compared were taken (before = null: none before the day). */
  compared: Array<{ kind: string; scope: string; before_at: Date | null; after_at: Date }>;
}


export interface ExplanationKey {
  dimension: string;
  group: string;
  currency: string;
  day: string;
}

interface StoredRow extends Record<string, unknown> {
  explanation: Explanation & { compared: Array<{ before_at: string | null; after_at: string }> };
}

/** The stored explanation of `key` computed from inputs `digest`, or null (none, or from other inputs). */
export async function readStoredExplanation(q: Queryable, key: ExplanationKey, digest: string): Promise<Explanation | null> {
  const [row] = await q.query<StoredRow>(
    `select explanation from anomaly_explanations
      where dimension = $1 and group_value = $2 and currency = $3 and day = $4::date and inputs = $5`,
    [key.dimension, key.group, key.currency, key.day, digest],
  );
  if (!row) return null;
  const e = row.explanation;
  // JSON has no dates: the compared snapshots' times come back as ISO text.
  return { ...e, compared: e.compared.map((c) => ({ ...c, before_at: c.before_at === null ? null : new Date(c.before_at), after_at: new Date(c.after_at) })) };
}

/** Stores (or replaces) the explanation of `key`, computed from inputs `digest`. */
async function writeStoredExplanation(q: Queryable, key: ExplanationKey, digest: string, explanation: Explanation, now: Date): Promise<void> {
  await executeStatement(
    q,
    sql`insert into anomaly_explanations (dimension, group_value, currency, day, inputs, explanation, computed_at)
     values (${key.dimension}, ${key.group}, ${key.currency}, ${key.day}::date, ${digest}, ${JSON.stringify(explanation)}::jsonb, ${now.toISOString()})
     on conflict (dimension, group_value, currency, day)
     do update set inputs = excluded.inputs, explanation = excluded.explanation, computed_at = excluded.computed_at`,
  );
}

/** What to explain after a run, and how: the anomalies report's side (reports/anomalies.ts explanationSource). */
export interface ExplanationSource {
  /** The days and groups to have explanations for. */
  candidates(): Promise<ExplanationKey[]>;
  /** The digest of what decides `key`'s explanation and how to compute it; null when there is nothing to explain. */
  prepare(key: ExplanationKey): Promise<{ digest: string; explain(): Promise<Explanation> } | null>;
}

/**
 * Explains and stores every candidate of `source` whose stored explanation was computed from other
 * inputs (or is missing); one whose inputs have not changed is kept, not computed again.
 */
export async function storeExplanations(q: Queryable, now: Date, source: ExplanationSource): Promise<{ explained: number; kept: number }> {
  let explained = 0;
  let kept = 0;
  for (const key of await source.candidates()) {
    const prepared = await source.prepare(key);
    if (prepared === null || (await readStoredExplanation(q, key, prepared.digest))) {
      kept++;
      continue;
    }
    await writeStoredExplanation(q, key, prepared.digest, await prepared.explain(), now);
    explained++;
  }
  return { explained, kept };
}
