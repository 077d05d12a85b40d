import type { Binds } from './binds.js';

/** A tag scope as SQL needs it (auth/access-scope.ts's AccessScope): the tag key and its allowed values. */
export interface TagScope {
  key: string;
  values: readonly string[];
}

/**
 * The SQL condition "the row `alias` is in the scope": its tags have `key` with one of `values`;
 * `true` without a scope (null or undefined: everything). Values are bound, never spliced.
 * `->>` and `= any` rather than `@>`: like the inventory's tag filter, this keeps the planner off the
 * tags GIN index, which indexes every snapshot ever kept (see reports/inventory.ts).
 * A row without tags, or without the key, is outside every scope.
 */
export function scopeCondition(scope: TagScope | null | undefined, alias: string, binds: Binds): string {
  if (!scope) return 'true';
  return tagsInScopeSql(`${alias}.tags`, `${binds.add(scope.key)}::text`, `${binds.add([...scope.values])}::text[]`);
}

/** The same condition over any tags expression, with the scope's key and values as SQL (bound parameters). */
export function tagsInScopeSql(tags: string, key: string, values: string): string {
  return `coalesce((${tags} ->> ${key}) = any(${values}), false)`;
}
