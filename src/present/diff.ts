/*
 * A `diff` cell (what changed in one resource) for people: each field as "label: old → new", tags
 * as added / removed / changed. Values are shown as the API gave them; none reads as "—".
 */

/** One field of a resource that changed: its human label, the value before and after (as stored). */
export interface FieldChange {
  field: string;
  label: string;
  before: unknown;
  after: unknown;
}

/** One tag that changed: added (no value before), removed (none after) or changed. */
export interface TagChange {
  key: string;
  change: 'added' | 'removed' | 'changed';
  before: string | null;
  after: string | null;
}

/** The value of a `diff` column. */
export interface Diff {
  fields: FieldChange[];
  tags: TagChange[];
}

export const NONE = '—';

/** One changed value as text: strings as they are, lists joined, absent as "—". */
export function changeValueText(value: unknown): string {
  if (value === null || value === undefined || value === '') return NONE;
  if (Array.isArray(value)) return value.length === 0 ? NONE : value.map((v) => (typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v))).join(', ');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

export function isDiff(value: unknown): value is Diff {
  return typeof value === 'object' && value !== null && Array.isArray((value as Diff).fields) && Array.isArray((value as Diff).tags);
}

export interface DiffView {
  fields: Array<{ label: string; before: string; after: string }>;
  tags: Array<{ change: TagChange['change']; key: string; before: string; after: string; text: string }>;
}

function tagText(t: TagChange): string {
  if (t.change === 'added') return `added ${t.key}=${t.after ?? ''}`;
  if (t.change === 'removed') return `removed ${t.key}=${t.before ?? ''}`;
  return `changed ${t.key}: ${t.before ?? ''} → ${t.after ?? ''}`;
}

export function diffView(diff: Diff): DiffView {
  return {
    fields: diff.fields.map((f: FieldChange) => ({ label: f.label, before: changeValueText(f.before), after: changeValueText(f.after) })),
    tags: diff.tags.map((t) => ({ change: t.change, key: t.key, before: t.before ?? '', after: t.after ?? '', text: tagText(t) })),
  };
}

/** The whole change on one line, for CSV and titles: `Status: ACTIVE → SHUTOFF; tag added env=prod`. */
export function diffText(diff: Diff): string {
  return [
    ...diff.fields.map((f) => `${f.label}: ${changeValueText(f.before)} → ${changeValueText(f.after)}`),
    ...diff.tags.map((t) => `tag ${tagText(t)}`),
  ].join('; ');
}
