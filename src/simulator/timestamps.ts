/**
 * The timestamp forms the API uses. The spec's own per-field forms are used in spec mode; legacy
 * mode rotates all four real-world forms (DESIGN.md, "The cloud API").
 */

export type TimestampStyle = 'zulu' | 'space-micro' | 'naive' | 'offset';

const LEGACY_ROTATION: readonly TimestampStyle[] = ['space-micro', 'naive', 'offset', 'zulu'];

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

/**
 * - zulu:        2023-09-28T15:24:34.000Z (ISO 8601 / RFC 3339, UTC)
 * - space-micro: 2023-09-28 15:25:06.115000 (no zone, UTC)
 * - naive:       2019-06-25T08:42:42 (no zone, UTC)
 * - offset:      2023-09-28T15:24:34+0000
 */
export function formatTimestamp(date: Date, style: TimestampStyle): string {
  if (style === 'zulu') return date.toISOString();
  const d = `${date.getUTCFullYear()}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}`;
  const t = `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}`;
  switch (style) {
    case 'space-micro':
      return `${d} ${t}.${pad(date.getUTCMilliseconds(), 3)}000`;
    case 'naive':
      return `${d}T${t}`;
    case 'offset':
      return `${d}T${t}+0000`;
  }
}

/** Legacy mode: one of the four forms, chosen by a stable number of the record (so reads repeat). */
export function legacyTimestamp(date: Date, selector: number): string {
  return formatTimestamp(date, LEGACY_ROTATION[Math.abs(selector) % LEGACY_ROTATION.length] ?? 'zulu');
}

/** `YYYY-MM-DD` in UTC. */
export function formatDate(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/** Drops milliseconds: every generated time is whole seconds, so the zone-less legacy forms lose nothing. */
export function wholeSeconds(ms: number): Date {
  return new Date(Math.floor(ms / 1000) * 1000);
}

export const DAY_MS = 86_400_000;

/** The API's "not ended" marker. */
export const NOT_ENDED = '0001-01-01T00:00:00Z';
