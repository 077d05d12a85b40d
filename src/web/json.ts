/** JSON.stringify that writes bigints as strings instead of throwing. */
export function toJson(value: unknown, space?: number): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), space) ?? 'null';
}

/**
 * JSON for a `<script type="application/json">` element: `<`, `>`, `&` and the JS line
 * separators are written as \u escapes, so no value can close the element or open a comment.
 */
export function jsonForScript(value: unknown): string {
  return toJson(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
