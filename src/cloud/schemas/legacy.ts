/**
 * Maps the older field names the real API still sends (DESIGN.md, "The cloud API") onto the
 * spec's names before validation. Each function leaves spec-shaped input untouched and never
 * mutates its argument; legacy keys stay in the object so the raw JSON keeps them.
 */

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function rename(out: Json, from: string, to: string): void {
  if (out[to] === undefined && out[from] !== undefined) out[to] = out[from];
}

/** `metadata_detailed` (key/value/read_only list) or `metadata` (flat map) become `tags`. */
function legacyTags(out: Json): void {
  if (out['tags'] !== undefined) return;
  if (Array.isArray(out['metadata_detailed'])) {
    out['tags'] = out['metadata_detailed'];
  } else if (isObject(out['metadata'])) {
    out['tags'] = Object.entries(out['metadata']).map(([key, value]) => ({ key, value, read_only: false }));
  }
}

export function fromLegacyInstance(input: unknown): unknown {
  if (!isObject(input)) return input;
  const out: Json = { ...input };
  rename(out, 'instance_id', 'id');
  rename(out, 'instance_name', 'name');
  rename(out, 'instance_created', 'created_at');
  rename(out, 'keypair_name', 'ssh_key_name');
  legacyTags(out);
  return out;
}

export function fromLegacyCluster(input: unknown): unknown {
  if (!isObject(input)) return input;
  const out: Json = { ...input };
  rename(out, 'poplar_servers', 'servers');
  rename(out, 'keypair_name', 'ssh_key_name');
  legacyTags(out);
  return out;
}

export function fromLegacyKeypair(input: unknown): unknown {
  if (!isObject(input)) return input;
  const out: Json = { ...input };
  rename(out, 'sshkey_id', 'id');
  rename(out, 'sshkey_name', 'name');
  return out;
}

/** Stop may answer with a single instance object instead of the list envelope. */
export function fromSingleObjectEnvelope(input: unknown): unknown {
  if (isObject(input) && !Array.isArray(input['results']) && input['count'] === undefined) {
    if (typeof input['id'] === 'string' || typeof input['instance_id'] === 'string') {
      return { count: 1, results: [input] };
    }
  }
  return input;
}
