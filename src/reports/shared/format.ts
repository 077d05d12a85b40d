/** Small text helpers for titles, notes and chart labels (display only; values stay exact). */

export function formatInstant(date: Date): string {
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** "12 min", "3.5 h", "2.1 d"; negative ages (clock skew, backdated data) read as 0. */
export function formatAge(now: Date, then: Date): string {
  const minutes = Math.max(0, (now.getTime() - then.getTime()) / 60_000);
  if (minutes < 90) return `${Math.round(minutes)} min`;
  const hours = minutes / 60;
  if (hours < 48) return `${Math.round(hours * 10) / 10} h`;
  return `${Math.round((hours / 24) * 10) / 10} d`;
}

/** Decimal text (numeric from the database) as a JS number, for charts only. */
export function chartNumber(value: unknown): number | null {
  if (value === null || value === undefined) return null;
  const n = typeof value === 'number' ? value : Number(value);
  return Number.isFinite(n) ? n : null;
}

export const KIND_LABELS: Record<string, string> = {
  instance: 'Instances',
  cluster: 'GPU clusters',
  k8s_price: 'Kubernetes clusters',
  cluster_server: 'Cluster servers',
  port: 'Ports',
  keypair: 'Keypairs',
  flavor: 'GPU flavors',
  storage_key: 'Storage keys',
  image_tag: 'Image tags',
  free_feature: 'Free features',
};

export function kindLabel(kind: string): string {
  return KIND_LABELS[kind] ?? kind;
}

/** Label of a grouping: `tag:team` -> "tag team", `flavor` -> "flavor". */
export function dimensionLabel(dimension: string): string {
  return dimension.startsWith('tag:') ? `tag ${dimension.slice(4)}` : dimension;
}

/** First day of the UTC month of `date`, and the first day of the next month. */
export function monthBounds(date: Date): { start: Date; end: Date } {
  const start = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1));
  const end = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1));
  return { start, end };
}

export function isoDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

export function addDays(day: string, days: number): string {
  return isoDay(new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000));
}

/**
 * `part` of `whole` (counts) as a percentage with two decimals, exact (integer arithmetic, half
 * away from zero): percentOf(2, 3) === '66.67'. The `percent` column kind's form, for shares
 * counted outside SQL.
 */
export function percentOf(part: number, whole: number): string {
  if (!Number.isSafeInteger(part) || !Number.isSafeInteger(whole) || whole === 0) throw new Error(`percentOf needs integer counts and a non-zero whole (got ${part} of ${whole})`);
  const negative = part < 0 !== whole < 0 && part !== 0;
  const p = BigInt(Math.abs(part));
  const w = BigInt(Math.abs(whole));
  // Hundredths of a percent, rounded half away from zero: floor((2 * 10000 * p + w) / (2 * w)).
  const hundredths = (2n * 10_000n * p + w) / (2n * w);
  const text = `${hundredths / 100n}.${(hundredths % 100n).toString().padStart(2, '0')}`;
  return negative && hundredths > 0n ? `-${text}` : text;
}
