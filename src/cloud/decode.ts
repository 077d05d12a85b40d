import type { z } from 'zod';
import { compiled } from './compiled.js';
import { fieldProblems } from './schemas/index.js';
import type { DecodeResult } from './http.js';
import { rememberRaw, rememberRawList } from './raw.js';

/** Parses JSON with a response schema, then lets `remember` pair parsed records with their raw JSON. */
export function decodeWith<S extends z.ZodType>(
  schema: S,
  remember: (parsed: z.output<S>, raw: unknown) => void,
): (json: unknown) => DecodeResult<z.output<S>> {
  const fast = compiled(schema);
  return (json) => {
    const parsed = fast.safeParse(json);
    if (!parsed.success) return { ok: false, problems: fieldProblems(parsed.error) };
    remember(parsed.data, json);
    return { ok: true, value: parsed.data };
  };
}

function field(raw: unknown, name: string): unknown {
  return typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>)[name] : undefined;
}

/** A single record: the whole JSON object is its raw form. */
export function rememberRecord(parsed: unknown, raw: unknown): void {
  rememberRaw(parsed, raw);
}

/** A list envelope: each result pairs with the raw result at the same index. */
export function rememberResults(parsed: { results: readonly unknown[] }, raw: unknown): void {
  rememberRawList(parsed.results, field(raw, 'results'));
}

/** The storage key list: each element of `data`. */
export function rememberData(parsed: { data: readonly unknown[] }, raw: unknown): void {
  rememberRawList(parsed.data, field(raw, 'data'));
}

/** Clusters: each cluster, and each server inside it (legacy answers call them `poplar_servers`). */
export function rememberClusters(parsed: { results: ReadonlyArray<{ servers: readonly unknown[] }> }, raw: unknown): void {
  rememberResults(parsed, raw);
  parsed.results.forEach((cluster, i) => {
    const rawCluster = (field(raw, 'results') as unknown[] | undefined)?.[i];
    rememberRawList(cluster.servers, field(rawCluster, 'servers') ?? field(rawCluster, 'poplar_servers'));
  });
}

/** Stop: the list envelope, or (legacy) a single instance object, which is then the record's raw form. */
export function rememberStopped(parsed: { results: readonly unknown[] }, raw: unknown): void {
  if (Array.isArray(field(raw, 'results'))) rememberResults(parsed, raw);
  else if (parsed.results.length === 1) rememberRaw(parsed.results[0], raw);
}
