/**
 * The raw JSON behind each parsed record, without secrets, so that collectors can store what the
 * API really answered (extra and legacy fields included) and nothing they must not keep.
 */

/** Fields that hold secrets wherever they appear (clusters, servers, keypairs, listener users). */
export const SECRET_FIELDS: ReadonlySet<string> = new Set(['user_data', 'password', 'private_key', 'encrypted_password']);
/** What a present, non-null secret is replaced with: the fact that it was there is kept. */
export const REDACTED = '[redacted]';

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Replaces the value of every secret field (at any depth) that is present and not null with
 * `"[redacted]"`, in place. Only for JSON the caller owns (fresh from JSON.parse).
 */
export function redactSecretsInPlace(value: unknown): void {
  if (Array.isArray(value)) {
    for (const item of value) redactSecretsInPlace(item);
  } else if (isObject(value)) {
    // for-in without Object.keys: this walks every object of every record collected.
    for (const key in value) {
      const field = value[key];
      if (typeof field === 'object' && field !== null) {
        if (SECRET_FIELDS.has(key)) value[key] = REDACTED;
        else redactSecretsInPlace(field);
      } else if (field !== null && field !== undefined && SECRET_FIELDS.has(key)) {
        value[key] = REDACTED;
      }
    }
  }
}

/** Returns a deep copy of JSON data with every present, non-null secret field replaced by `"[redacted]"`. */
export function redactSecrets<T>(value: T): T {
  if (value === undefined) return value;
  const copy = JSON.parse(JSON.stringify(value)) as T;
  redactSecretsInPlace(copy);
  return copy;
}

/**
 * Where a record keeps its raw object: a non-enumerable symbol property, invisible to JSON,
 * Object.keys, spread and equality checks. (A WeakMap did the same, but its entries cost garbage
 * collection time at hundreds of thousands of records per collection.)
 */
const RAW = Symbol('cloudtally.raw');

/**
 * The JSON object a record was parsed from, secrets redacted; undefined for objects the client
 * did not parse. Works for every element of a list, every single record, and servers inside
 * clusters. The raw object is shared, not copied: treat it as read-only.
 */
export function rawOf(record: object): JsonObject | undefined {
  return (record as Record<symbol, JsonObject>)[RAW];
}

export function rememberRaw(record: unknown, raw: unknown): void {
  if (typeof record === 'object' && record !== null && isObject(raw)) Object.defineProperty(record, RAW, { value: raw, configurable: true });
}

/** Pairs each parsed record with the raw element at the same index. */
export function rememberRawList(records: readonly unknown[], raws: unknown): void {
  if (!Array.isArray(raws)) return;
  records.forEach((record, i) => rememberRaw(record, raws[i]));
}
