import type { TagWire } from '../../cloud/schemas/tags.js';
import type { SimTag } from '../model.js';
import { hashString } from '../random.js';
import type { SimState } from '../state.js';
import { legacyTimestamp } from '../timestamps.js';

/** How answers are shaped: the spec's tidy shapes, or the real-world (legacy) variants of DESIGN.md. */
export interface WireContext {
  state: SimState;
  legacy: boolean;
  /** Request path, for the `links` of legacy envelopes. */
  path: string;
}

export type JsonObject = Record<string, unknown>;

export function listEnvelope(results: unknown[], ctx: WireContext, count = results.length): JsonObject {
  if (!ctx.legacy) return { count, results };
  return { count, results, links: [{ rel: 'self', href: ctx.path }], request_id: `req-${hashString(ctx.path).toString(16)}` };
}

export function tagList(tags: readonly SimTag[]): TagWire[] {
  return tags.map((t) => ({ key: t.key, value: t.value, read_only: t.read_only }));
}

/** Legacy tags: `metadata` (flat map) plus `metadata_detailed` (the list), with read_only as text. */
export function legacyTags(tags: readonly SimTag[]): { metadata: Record<string, string>; metadata_detailed: JsonObject[] } {
  return {
    metadata: Object.fromEntries(tags.map((t) => [t.key, t.value])),
    metadata_detailed: tags.map((t) => ({ key: t.key, value: t.value, read_only: t.read_only })),
  };
}

/** A legacy timestamp, its form chosen by the record's id so repeated reads agree. */
export function legacyTime(date: Date, recordId: string | number): string {
  return legacyTimestamp(date, hashString(String(recordId)));
}

/** Every other record (by id) gets the stringly-typed variant in legacy mode. */
export function oddRecord(recordId: string | number): boolean {
  return hashString(String(recordId)) % 2 === 1;
}
