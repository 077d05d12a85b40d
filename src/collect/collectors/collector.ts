/** What every collector implements, and what a run hands it. */
import type { CloudClient } from '../../cloud/index.js';
import type { Config } from '../../config/index.js';
import type { Database } from '../../db/connection.js';
import { scopeKeyOf, type RunError, type SnapshotKind } from '../../db/schema.js';
import type { Logger } from '../../logger.js';
import type { Limiter } from '../concurrency.js';
import type { SnapshotWriter } from '../snapshot-writer.js';
import type { CollectorName, ScopeConfig } from '../types.js';
import type { RowContext } from '../mappers.js';

/** One snapshot's worth of work: a project + region scope, or the global scope. */
export interface Unit {
  scopeKey: string;
  projectId: number | null;
  regionId: number | null;
  /** The configured scope (null for global kinds). */
  scope: ScopeConfig | null;
}

/** A unit with nothing configured to collect: no snapshot is written (so nothing is marked gone). */
export interface SkippedUnit {
  scopeKey: string;
  skipped: string;
}

export interface RunContext {
  db: Database;
  client: CloudClient;
  config: Config;
  logger: Logger;
  scopes: readonly ScopeConfig[];
  imageIds: readonly string[];
  freeFeatureIds: readonly number[];
  /**
   * The run's shared work slots (size: the client's concurrency limit). A slot is held while a
   * page or item is fetched AND written, which bounds both requests in flight and pages in memory.
   */
  limiter: Limiter;
  /**
   * Slots for big pages (a security group's instances, a page of clusters with their servers),
   * taken before `limiter`. Measured at 100,000 instances: the live heap stays
   * near 60 MB whatever this is, but each page in flight adds tens of MB of short-lived garbage
   * (the client's parse, the insert's parameters) that V8 collects lazily; 2 pages in flight gave
   * a peak RSS of ~390-410 MB where 4 gave ~470 MB, at no loss of speed on 2 cores (the work is
   * CPU-bound: the client's parse, the simulator, Postgres).
   */
  pageLimiter: Limiter;
  /** Runs fn holding a page slot and a work slot (in that order). */
  bigPage<T>(fn: () => Promise<T>): Promise<T>;
  /** Throws CollectionStoppedError once the run has been asked to stop. */
  checkpoint(): void;
}

export interface UnitResult {
  /** Errors about single items (a configured id that does not exist) that did not fail the unit. */
  itemErrors?: RunError[];
}

export interface Collector {
  name: CollectorName;
  /** The snapshot kind it writes. */
  kind: SnapshotKind;
  /**
   * Dependency order within a run: 1 = prices (flavors, Kubernetes), so that the rollups of
   * 2 = inventory (clusters, instances, keys...) find this run's prices, and 3 = what is derived
   * from inventory (ports of the collected instances, tags of the images seen in clusters).
   */
  phase: 1 | 2 | 3;
  /**
   * Which units get the run's page slots first (lower first; default last; then the order units
   * started in). The biggest snapshots go first, so that each one's finalising transaction
   * (presence, rollups) runs while the others still fetch pages instead of trailing the run.
   */
  pageOrder?: number;
  units(ctx: RunContext): Array<Unit | SkippedUnit>;
  /** Streams the unit's rows into the (incomplete) snapshot; the run finalises or discards it. */
  collect(writer: SnapshotWriter, unit: Unit, ctx: RunContext): Promise<UnitResult | void>;
}

export function scopeUnits(ctx: RunContext, skip?: (scope: ScopeConfig) => string | null): Array<Unit | SkippedUnit> {
  return ctx.scopes.map((scope) => {
    const scopeKey = scopeKeyOf(scope.projectId, scope.regionId);
    const reason = skip?.(scope) ?? null;
    if (reason !== null) return { scopeKey, skipped: reason };
    return { scopeKey, projectId: scope.projectId, regionId: scope.regionId, scope };
  });
}

export function rowContext(writer: SnapshotWriter, unit: Unit): RowContext {
  return { snapshotId: writer.id, projectId: unit.projectId, regionId: unit.regionId };
}

/** The configured scope of a per-scope unit (a programming error when missing). */
export function scopeOf(unit: Unit): { projectId: number; regionId: number; scope: ScopeConfig } {
  if (unit.scope === null || unit.projectId === null || unit.regionId === null) {
    throw new Error(`unit ${unit.scopeKey} has no project + region scope`);
  }
  return { projectId: unit.projectId, regionId: unit.regionId, scope: unit.scope };
}

/**
 * Adds key to seen; false when it was already there. Collectors drop records repeated within a
 * snapshot with it (offsets shifted by a record created during the listing), since rows are
 * written with COPY, which cannot skip a key already stored.
 */
export function firstSighting(seen: Set<string>, key: string): boolean {
  if (seen.has(key)) return false;
  seen.add(key);
  return true;
}

/** The id of the newest complete snapshot of a kind and scope, or null. */
export async function latestCompleteSnapshot(db: Database, kind: SnapshotKind, scopeKey: string): Promise<number | null> {
  const rows = await db.query<{ id: number }>(
    `SELECT id FROM snapshots WHERE kind = $1 AND scope_key = $2 AND complete ORDER BY taken_at DESC, id DESC LIMIT 1`,
    [kind, scopeKey],
  );
  return rows[0]?.id ?? null;
}
