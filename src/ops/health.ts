/**
 * Liveness and readiness.
 *
 *   GET /healthz  the process is up and its event loop answers: always 200 {status, uptime_s}.
 *                 Use it as the container HEALTHCHECK / liveness probe.
 *   GET /readyz   the service can do its job: the database answers (with a short timeout), every
 *                 migration this build ships is applied, and the last good collection is not older
 *                 than its allowance. 200 or 503, with a JSON body naming each check. Use it for
 *                 readiness / alerting, not for liveness: a cloud API outage makes it 503 (the data
 *                 is getting stale) while the dashboard still serves the last good data.
 *                 `collection` is `degraded` (still 200 while the data is within its allowance)
 *                 when the latest run of some scope failed, with each failing unit and its
 *                 reason (e.g. "API key not accepted (401)"): the replica can serve, so taking it
 *                 out of a load balancer would only hide the last good data; the staleness rule
 *                 turns it 503 if the failure lasts. A run that makes no progress (running, its
 *                 heartbeat older than the stale threshold: its process is frozen or cut off) makes
 *                 it 503 with `collection` `stalled`: no collection can start until it is ended.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Router } from 'express';
import type { Queryable } from '../db/connection.js';
import type { UnitFailure } from '../collect/failures.js';
import type { StalledRun } from '../collect/run-record.js';
import { MIGRATIONS_FOLDER } from '../db/migrate.js';
import { withTimeout } from './timeout.js';

export interface HealthDeps {
  database: Queryable;
  /** End of the latest successful collection (e.g. the collection service's status().lastGoodAt). */
  lastGoodCollectionAt: () => Promise<Date | null>;
  /** Units whose latest run failed (collect's failingUnits); none when not given. */
  collectionFailures?: () => Promise<ReadonlyArray<Pick<UnitFailure, 'collector' | 'scope' | 'reason' | 'runId' | 'failedAt'>>>;
  /** Running runs whose heartbeat is stale (collect's stalledRuns); none when not given. */
  stalledRuns?: () => Promise<ReadonlyArray<Pick<StalledRun, 'runId' | 'runnerId' | 'heartbeatAt' | 'silentMs'>>>;
  /** When this process started; "no collection yet" is fine during the start-up grace. */
  startedAt: Date;
  /** The last good collection may be this old (see collectionAllowanceMs). */
  collectionMaxAgeMs: number;
  /** After start, a missing or stale collection does not fail readiness for this long. Default: collectionMaxAgeMs. */
  startupGraceMs?: number;
  /** Each database check gives up after this long. Default 2000. */
  databaseTimeoutMs?: number;
  /** Where the build's migrations (meta/_journal.json) are. Default: the package's migrations/. */
  migrationsFolder?: string;
  now?: () => Date;
}

export interface CheckResult {
  ok: boolean;
  [detail: string]: unknown;
}

export interface Readiness {
  status: 'ready' | 'not_ready';
  /**
   * `degraded` while the latest run of some scope failed (see checks.collection.failing);
   * `stalled` while a running run makes no progress (checks.collection.stalled; not ready).
   */
  collection: 'ok' | 'degraded' | 'stalled';
  checks: { database: CheckResult; migrations: CheckResult; collection: CheckResult };
}

/** The routers' work as a function, for the start command's own checks and for tests. */
export function createReadinessCheck(deps: HealthDeps): () => Promise<Readiness> {
  const expected = latestJournalEntry(deps.migrationsFolder ?? MIGRATIONS_FOLDER);
  const timeoutMs = deps.databaseTimeoutMs ?? 2000;
  const now = deps.now ?? (() => new Date());
  const graceMs = deps.startupGraceMs ?? deps.collectionMaxAgeMs;

  // One ping in flight at a time: probes arriving while the database hangs share it instead of
  // piling connection attempts onto the pool.
  let ping: Promise<void> | null = null;
  const pingDatabase = () => {
    ping ??= withTimeout(deps.database.query('SELECT 1'), timeoutMs, 'database ping')
      .then(() => undefined)
      .finally(() => (ping = null));
    return ping;
  };

  const databaseCheck = async (): Promise<CheckResult> => {
    const started = performance.now();
    try {
      await pingDatabase();
      return { ok: true, ms: elapsed(started) };
    } catch (err) {
      return { ok: false, ms: elapsed(started), error: messageOf(err) };
    }
  };

  const migrationsCheck = async (): Promise<CheckResult> => {
    const base = { expected: expected.tag };
    try {
      const rows = await withTimeout(
        deps.database.query<{ applied: string | number; latest: string | number | null }>(
          'SELECT count(*) AS applied, max(created_at) AS latest FROM drizzle.__drizzle_migrations',
        ),
        timeoutMs,
        'migrations query',
      );
      const latest = rows[0]?.latest == null ? null : Number(rows[0].latest);
      const applied = Number(rows[0]?.applied ?? 0);
      // drizzle applies every journal entry whose `when` is newer than the latest recorded created_at.
      if (latest === null || latest < expected.when) {
        return { ...base, ok: false, applied, error: 'migrations pending: run `cloudtally migrate` or restart the service' };
      }
      return { ...base, ok: true, applied };
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === '42P01' || code === '3F000') {
        return { ...base, ok: false, applied: 0, error: 'the database has never been migrated (no drizzle.__drizzle_migrations)' };
      }
      return { ...base, ok: false, error: messageOf(err) };
    }
  };

  const collectionCheck = async (): Promise<CheckResult> => {
    const at = now();
    const uptimeMs = at.getTime() - deps.startedAt.getTime();
    const inGrace = uptimeMs < graceMs;
    const base: Record<string, unknown> & { max_age_s: number } = { max_age_s: Math.round(deps.collectionMaxAgeMs / 1000), state: 'ok' };
    let last: Date | null;
    let failures: Awaited<ReturnType<NonNullable<HealthDeps['collectionFailures']>>>;
    let stalled: Awaited<ReturnType<NonNullable<HealthDeps['stalledRuns']>>>;
    try {
      [last, failures, stalled] = await Promise.all([
        withTimeout(deps.lastGoodCollectionAt(), timeoutMs, 'last collection query'),
        deps.collectionFailures ? withTimeout(deps.collectionFailures(), timeoutMs, 'failing collections query') : [],
        deps.stalledRuns ? withTimeout(deps.stalledRuns(), timeoutMs, 'stalled runs query') : [],
      ]);
    } catch (err) {
      return { ...base, ok: false, error: messageOf(err) };
    }
    if (stalled.length > 0) {
      const first = stalled[0]!;
      return {
        ...base,
        ok: false,
        state: 'stalled',
        last_good_at: last?.toISOString() ?? null,
        stalled: stalled.map((r) => ({
          run_id: r.runId,
          runner: r.runnerId,
          heartbeat_at: r.heartbeatAt.toISOString(),
          silent_s: Math.round(r.silentMs / 1000),
        })),
        error: `collection run #${first.runId} (runner ${first.runnerId}) makes no progress: no heartbeat for ${Math.round(first.silentMs / 1000)} s; no collection can start until it is ended (the next start, or this service within a heartbeat, ends it)`,
      };
    }
    if (failures.length > 0) {
      const reasons = [...new Set(failures.map((f) => f.reason))];
      base.state = 'degraded';
      base.reason = reasons.join('; ');
      base.failing = failures.map((f) => ({
        collector: f.collector,
        scope: f.scope,
        reason: f.reason,
        run_id: f.runId,
        failed_at: f.failedAt?.toISOString() ?? null,
      }));
    }
    if (last === null) {
      return inGrace
        ? { ...base, ok: true, last_good_at: null, note: 'no collection yet (within the start-up grace)' }
        : { ...base, ok: false, last_good_at: null, error: `no successful collection in the ${Math.round(uptimeMs / 60_000)} min since start` };
    }
    const ageS = Math.max(0, Math.round((at.getTime() - last.getTime()) / 1000));
    const fresh = ageS * 1000 <= deps.collectionMaxAgeMs;
    const result = { ...base, last_good_at: last.toISOString(), age_s: ageS };
    if (fresh) return { ...result, ok: true };
    if (inGrace) return { ...result, ok: true, note: 'stale, but within the start-up grace' };
    return { ...result, ok: false, error: `the last good collection is ${ageS} s old (allowed ${base.max_age_s} s)` };
  };

  return async () => {
    const database = await databaseCheck();
    const [migrations, collection] = database.ok
      ? await Promise.all([migrationsCheck(), collectionCheck()])
      : [
          { ok: false, error: 'not checked: the database is unreachable' },
          { ok: false, error: 'not checked: the database is unreachable' },
        ];
    const ok = database.ok && migrations.ok && collection.ok;
    return {
      status: ok ? 'ready' : 'not_ready',
      collection: collection.state === 'stalled' ? 'stalled' : collection.state === 'degraded' ? 'degraded' : 'ok',
      checks: { database, migrations, collection },
    };
  };
}

/** GET /healthz and GET /readyz. Mount them before any login or CSRF middleware. */
export function healthRouter(deps: HealthDeps): Router {
  const readiness = createReadinessCheck(deps);
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.setHeader('cache-control', 'no-store');
    res.status(200).json({ status: 'ok', uptime_s: Math.round(process.uptime()) });
  });
  router.get('/readyz', async (_req, res, next) => {
    try {
      const result = await readiness();
      res.setHeader('cache-control', 'no-store');
      res.status(result.status === 'ready' ? 200 : 503).json(result);
    } catch (err) {
      next(err);
    }
  });
  return router;
}

/** The newest migration the build ships, as drizzle records it (`when` = created_at). */
export function latestJournalEntry(migrationsFolder: string): { tag: string; when: number } {
  const path = join(migrationsFolder, 'meta', '_journal.json');
  let entries: Array<{ tag: string; when: number }>;
  try {
    entries = (JSON.parse(readFileSync(path, 'utf8')) as { entries: Array<{ tag: string; when: number }> }).entries;
  } catch (err) {
    throw new Error(`cannot read the migrations journal ${path}: ${(err as Error).message}`, { cause: err });
  }
  const latest = entries.reduce<{ tag: string; when: number } | null>((a, e) => (a === null || e.when > a.when ? e : a), null);
  if (!latest) throw new Error(`the migrations journal ${path} lists no migration`);
  return { tag: latest.tag, when: latest.when };
}

function elapsed(started: number): number {
  return Math.round((performance.now() - started) * 10) / 10;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
