/**
 * The anomaly explanations written after each collection run (table anomaly_explanations): read
 * by the anomalies report and the alerts instead of explaining a day again, but only under the
 * very inputs they were computed from (`digest`, see anomaly-explain.ts explanationInputs).
 */
import type { Queryable } from '../../db/connection.js';
import type { Explanation } from './anomaly-explain.js';

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
export async function writeStoredExplanation(q: Queryable, key: ExplanationKey, digest: string, explanation: Explanation, now: Date): Promise<void> {
  await q.execute(
    `insert into anomaly_explanations (dimension, group_value, currency, day, inputs, explanation, computed_at)
     values ($1, $2, $3, $4::date, $5, $6::jsonb, $7)
     on conflict (dimension, group_value, currency, day)
     do update set inputs = excluded.inputs, explanation = excluded.explanation, computed_at = excluded.computed_at`,
    [key.dimension, key.group, key.currency, key.day, digest, JSON.stringify(explanation), now],
  );
}
