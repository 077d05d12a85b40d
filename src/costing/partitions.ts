/**
 * Cost partitions: the cost rollups of the resources of one tag value (e.g. team = ml), written
 * beside the company-wide ones, so that a team-scoped user's costs, totals, charts and budgets
 * are summed in SQL from rows of their own resources only, as exactly as everyone's.
 *
 * A partition row's dimension is the dimension prefixed with its partition, `@<16 hex>/project`:
 * the hex is a hash of the tag key and value (a key or value may hold any character, the prefix
 * has a fixed shape). Partitions are written for every value of each tag key recorded in
 * `cost_partition_keys` (the keys that the configured access scopes use). A scope of several
 * values is the sum of their partitions: a resource has one value per key, so they never overlap.
 *
 * Readers take a dimension with its partitions in front (`@a/@b/project`): see dimensionRows.
 */
import { createHash } from 'node:crypto';
import type { TagScope } from '../db/access-scope-sql.js';
import { TAG_DIMENSION_PREFIX } from './pricing.js';

const PREFIX_LENGTH = 18;
const PREFIX_PATTERN = /^@[0-9a-f]{16}\//;
/** The same prefix computed in SQL from a tag key and value (text expressions). */
export function partitionPrefixSql(key: string, value: string): string {
  return `('@' || left(encode(sha256(convert_to(${key} || chr(31) || ${value}, 'UTF8')), 'hex'), 16) || '/')`;
}

/** The prefix of the partition of resources whose tag `key` is `value`. */
export function partitionPrefix(key: string, value: string): string {
  return `@${createHash('sha256').update(`${key}\u001f${value}`, 'utf8').digest('hex').slice(0, 16)}/`;
}

/** The dimension as a reader takes it: within the scope's partitions, or as is without a scope. */
export function dimensionWithin(scope: TagScope | null | undefined, dimension: string): string {
  return partitionPrefixes(scope).join('') + dimension;
}

/** The partition prefixes of a scope: `['']` (the company-wide rows) without one. */
export function partitionPrefixes(scope: TagScope | null | undefined): string[] {
  return scope ? scope.values.map((v) => partitionPrefix(scope.key, v)) : [''];
}

/** What a reader matches in the rollup rows for a dimension (as dimensionWithin gives it). */
export interface DimensionRows {
  /** The dimension itself, without partitions. */
  base: string;
  /** The rows' dimension: one per partition (or the dimension alone, company-wide). */
  dims: string[];
  /** The `kind` rows (totals) of the same partitions, in the same order. */
  kindDims: string[];
  /** Whether it is a tag dimension (whose absence makes a snapshot's totals `(untagged)`). */
  isTag: boolean;
}

export function dimensionRows(dimension: string): DimensionRows {
  const prefixes: string[] = [];
  let rest = dimension;
  while (PREFIX_PATTERN.test(rest)) {
    prefixes.push(rest.slice(0, PREFIX_LENGTH));
    rest = rest.slice(PREFIX_LENGTH);
  }
  const parts = prefixes.length > 0 ? prefixes : [''];
  return { base: rest, dims: parts.map((p) => p + rest), kindDims: parts.map((p) => `${p}kind`), isTag: rest.startsWith(TAG_DIMENSION_PREFIX) };
}

/** SQL: the partition prefix of a stored dimension expression ('' company-wide). */
export function storedPartitionSql(dimension: string): string {
  return `(case when ${dimension} ~ '^@[0-9a-f]{16}/' then left(${dimension}, ${PREFIX_LENGTH}) else '' end)`;
}

/** SQL: whether a stored dimension expression is a tag dimension, company-wide or within a partition. */
export function storedIsTagSql(dimension: string): string {
  return `(${dimension} ~ '^(@[0-9a-f]{16}/)?tag:')`;
}
