import type { CollectorDeps, ProgressEvent, RunSummary } from '../collect/index.js';
import { runCollection } from '../collect/index.js';
import type { Simulator } from '../simulator/index.js';
import { DEMO_HISTORY_STEP_HOURS } from '../config/index.js';

/**
 * The demo's history, so a newcomer's first dashboards answer finance's first questions: the whole
 * previous calendar month and this month to date (demoHistoryDays), with trends, "what changed",
 * a spend anomaly with its cause, and enough complete days for the forecasts. It goes through the
 * real path: the simulator's company changes between steps (demoEvents), and each step is an
 * ordinary collection backdated with `now`. Only the kinds that carry cost and inventory are
 * collected in the past; the full collection at start-up then brings every kind up to date.
 */
export interface DemoHistoryOptions {
  now: Date;
  days?: number;
  stepHours?: number;
  onStep?: (summary: RunSummary, index: number, total: number) => void;
  /** Stops the backfill between steps and the running step at its next page (shutdown). */
  signal?: AbortSignal;
  /** Told of each step's progress (metrics). */
  onProgress?: (event: ProgressEvent) => void;
}

const HISTORY_COLLECTORS = ['flavors', 'k8s_prices', 'clusters', 'instances'] as const;
const DAY_MS = 86_400_000;
/** At least this many days, so that a month-over-month comparison and a 14-day anomaly baseline fit. */
export const DEMO_MIN_HISTORY_DAYS = 35;

/** Days of demo history for a start at `now`: back to the first of the previous month (UTC), at least DEMO_MIN_HISTORY_DAYS. */
export function demoHistoryDays(now: Date): number {
  const previousMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1);
  return Math.max(DEMO_MIN_HISTORY_DAYS, Math.ceil((now.getTime() - previousMonth) / DAY_MS));
}

/** How many collections the backfill runs (one per step). */
export function demoHistorySteps(days: number, stepHours = DEMO_HISTORY_STEP_HOURS): number {
  return Math.floor((days * 24) / stepHours);
}

export async function backfillDemoHistory(deps: CollectorDeps, sim: Simulator, options: DemoHistoryOptions): Promise<number> {
  const stepHours = options.stepHours ?? DEMO_HISTORY_STEP_HOURS;
  const steps = demoHistorySteps(options.days ?? demoHistoryDays(options.now), stepHours);
  const stepMs = stepHours * 3_600_000;
  const events = demoEvents(sim, options.now, steps);
  // The work after a run (alerts, the idle read model, anomaly explanations) once, after the last
  // step: for every step it would cost more than the step and alert about the past.
  const { afterRun: _afterRun, ...backfillDeps } = deps;
  let previous = options.now.getTime() - (steps + 1) * stepMs;
  for (let i = 0; i < steps; i++) {
    if (options.signal?.aborted) return i;
    const at = new Date(options.now.getTime() - (steps - i) * stepMs);
    // Each event happens at the first step at or after its time (none from before the history).
    for (const event of events) if (event.at.getTime() > previous && event.at <= at) event.apply(i, at);
    previous = at.getTime();
    const summary = await runCollection(backfillDeps, { trigger: 'startup', collectors: HISTORY_COLLECTORS, now: at, signal: options.signal, onProgress: options.onProgress });
    options.onStep?.(summary, i + 1, steps);
    if (i === steps - 1 && deps.afterRun && !options.signal?.aborted) {
      await deps.afterRun(summary.finishedAt ?? at).catch((err: unknown) => deps.logger.error({ err }, 'work after the demo history failed (done again after the next run)'));
    }
  }
  return steps;
}

interface DemoEvent {
  at: Date;
  apply: (step: number, at: Date) => void;
}

/**
 * What happens to the demo company, deterministic for a given start:
 * - in the history's last six steps (so even a one-day history has them): an H100 training
 *   cluster for team ml, an instance stopped, an untagged instance tagged team platform, an A100
 *   inference cluster for team data-eng;
 * - 20 days before `now`: the H100 VM flavor of the third scope gets dearer (a price change);
 * - 5 days before `now` (its UTC day): team research starts ten H100 VMs for a training burst in
 *   the second scope and stops them the next day, so its spend jumps on that day only and the
 *   anomalies report explains the jump by the instances that appeared.
 */
function demoEvents(sim: Simulator, now: Date, steps: number): DemoEvent[] {
  const [first, second, third] = sim.state.scopes();
  if (!first) return [];
  const p1 = first.project_id;
  const r1 = first.region_id;
  const running = () => sim.state.instances(p1, r1).filter((i) => i.status === 'ACTIVE');
  const stepMs = DEMO_HISTORY_STEP_HOURS * 3_600_000;
  const recent = (j: number) => new Date(now.getTime() - (Math.min(steps, 6) - j) * stepMs);
  const day = (offset: number, hour = 0) => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + offset, hour));
  const events: DemoEvent[] = [
    {
      at: recent(1),
      apply: (step, at) =>
        void sim.state.addCluster(p1, r1, { name: `demo-training-${step}`, flavor: 'bm3-ai-1xlarge-h100-80-8', servers_count: 2, tags: { team: 'ml', env: 'prod' }, created_at: at }),
    },
    {
      at: recent(2),
      apply: () => {
        const victim = running().at(-1);
        if (victim) sim.state.stopInstance(p1, r1, victim.id);
      },
    },
    {
      at: recent(4),
      apply: () => {
        const untagged = running().find((i) => !i.tags.some((t) => t.key === 'team'));
        if (untagged) sim.state.setInstanceTag(untagged.id, 'team', 'platform');
      },
    },
    {
      at: recent(5),
      apply: (step, at) => {
        const scope = second ?? first;
        // Created at the step's time, so the cluster is not younger than its first snapshot.
        sim.state.addCluster(scope.project_id, scope.region_id, { name: `demo-inference-${step}`, flavor: 'bm2-ai-1xlarge-a100-80-8', servers_count: 1, tags: { team: 'data-eng', env: 'staging' }, created_at: at });
      },
    },
  ];
  if (third) {
    events.push({ at: day(-20, 12), apply: () => void sim.state.setFlavorPrice(third.project_id, third.region_id, H100_VM, '3.10') });
  }
  if (second) {
    const burst: string[] = [];
    events.push(
      {
        at: day(-5),
        apply: (_step, at) => {
          for (let n = 1; n <= 10; n++) {
            const vm = sim.state.addInstance(second.project_id, second.region_id, { name: `research-burst-${String(n).padStart(2, '0')}`, flavor: H100_VM, tags: { team: 'research', env: 'prod', purpose: 'training-burst' }, created_at: at });
            burst.push(vm.id);
          }
        },
      },
      { at: day(-4), apply: () => burst.forEach((id) => sim.state.stopInstance(second.project_id, second.region_id, id)) },
    );
  }
  return events;
}

/** The single-H100 VM flavor of the demo catalogue (src/simulator/catalog.ts). */
const H100_VM = 'g3-ai-24-256-1600-h100-80-1';
