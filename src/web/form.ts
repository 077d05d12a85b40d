import { invalidParameters, type FieldError } from './errors.js';

/**
 * The fields of a form post (or of a query that a form sends with GET), read the one way for
 * every handler. The body parser gives a field sent twice as an array: a field that takes one
 * value is then refused (400 naming each such field) rather than read as empty or as one of the
 * values; a field that takes several (ticked checkboxes, channel names) is read whole. Absent
 * fields are '' and [].
 */
export function readForm<S extends string, L extends string = never>(
  fields: unknown,
  names: { single: readonly S[]; lists?: readonly L[] },
  where: 'body' | 'query' = 'body',
): Record<S, string> & Record<L, string[]> {
  const source = (fields !== null && typeof fields === 'object' ? fields : {}) as Record<string, unknown>;
  const out: Record<string, string | string[]> = {};
  const errors: FieldError[] = [];
  for (const name of names.single) {
    const value = source[name];
    if (Array.isArray(value)) errors.push({ field: `${where}.${name}`, message: `${name} was sent ${value.length} times; it takes one value` });
    out[name] = typeof value === 'string' ? value : '';
  }
  for (const name of names.lists ?? []) {
    const value = source[name];
    out[name] = (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string');
  }
  if (errors.length > 0) throw invalidParameters(errors);
  return out as Record<S, string> & Record<L, string[]>;
}
