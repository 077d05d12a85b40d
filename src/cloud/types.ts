/** Result shapes shared by the API areas. */

/** A list envelope as parsed: `count` as the API gave it (null when missing), the parsed records. */
export interface ListResult<T> {
  count: number | null;
  results: T[];
  links?: unknown;
}

/** One page yielded by a pagination iterator. */
export interface Page<T> {
  /** Offset this page was asked for. */
  offset: number;
  /** Total number of records the API reported (`count`, or `meta.total_count` for storage keys), when it did. */
  total: number | null;
  results: T[];
}
