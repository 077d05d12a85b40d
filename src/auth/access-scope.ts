/**
 * Team-scoped access: a user may see only the resources whose tag `key` has one of `values`
 * (`"scope": {"by": "tag:team", "values": ["ml"]}` in the configuration). A user without a
 * scope sees everything.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';

export interface AccessScope {
  /** `tag:<key>`, as written in the configuration. */
  by: string;
  /** The tag key, normalised like collected tag keys (see src/tags). */
  key: string;
  /** The allowed tag values, normalised like collected values, sorted, without repeats. */
  values: readonly string[];
}

const TAG_PREFIX = 'tag:';

export const AccessScopeSchema = z.strictObject(
  {
    by: z
      .string()
      .trim()
      .refine((s) => s.startsWith(TAG_PREFIX) && s.length > TAG_PREFIX.length && s.length <= TAG_PREFIX.length + 255, {
        error: 'must be tag:<key> (e.g. "tag:team")',
      }),
    values: z
      .array(z.string().trim().min(1, { error: 'a value must not be empty' }).max(255, { error: 'a value must be at most 255 characters' }), {
        error: 'must be a list of tag values',
      })
      .min(1, { error: 'must list at least one tag value' }),
  },
  { error: 'must be {"by": "tag:<key>", "values": ["..."]}' },
);
export type AccessScopeInput = z.output<typeof AccessScopeSchema>;

/** The scope of a configuration entry, with its key and values normalised by `normaliseKey` / `normaliseValue` (the tag rules). */
export function accessScopeOf(
  input: AccessScopeInput,
  normaliseKey: (key: string) => string = (k) => k,
  normaliseValue: (key: string, value: string) => string = (_k, v) => v,
): AccessScope {
  const key = normaliseKey(input.by.slice(TAG_PREFIX.length));
  const values = [...new Set(input.values.map((v) => normaliseValue(key, v)))].sort();
  return { by: `${TAG_PREFIX}${key}`, key, values };
}

/** A short stable id of a scope (same key and values, same id), for cache keys and stored partitions. */
export function accessScopeId(scope: Pick<AccessScope, 'key' | 'values'>): string {
  return createHash('sha256').update(JSON.stringify([scope.key, scope.values])).digest('hex').slice(0, 16);
}

/** "team = ml or cv", for page headers and audit text. */
export function describeAccessScope(scope: Pick<AccessScope, 'key' | 'values'>): string {
  return `${scope.key} = ${scope.values.join(' or ')}`;
}
