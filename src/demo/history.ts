import type { CollectorDeps, ProgressEvent, RunSummary } from '../collect/index.js';
import { runCollection } from '../collect/index.js';
import type { Simulator } from '../simulator/index.js';
import { DEMO_HISTORY_STEP_HOURS } from '../config/index.js';

/**
 * A week of demo history, so a newcomer's first dashboards have trends and "what changed".
 * It goes through the real path: the simulator's company changes a little between steps (a
 * cluster added, instances stopped, a tag fixed, a price change), and each step is an ordinary
 * collection backdated with `now`. Only the kinds that carry cost and inventory are collected in
 * the past; the full collection at start-up then brings every kind up to date.
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

/** How many collections the backfill runs (one per step). */
export function demoHistorySteps(days = 7, stepHours = DEMO_HISTORY_STEP_HOURS): number {
  return Math.floor((days * 24) / stepHours);
}

export async function backfillDemoHistory(deps: CollectorDeps, sim: Simulator, options: DemoHistoryOptions): Promise<number> {
  const stepHours = options.stepHours ?? DEMO_HISTORY_STEP_HOURS;
  const steps = demoHistorySteps(options.days, stepHours);
  const changes = demoChanges(sim);
  for (let i = 0; i < steps; i++) {
    if (options.signal?.aborted) return i;
    const at = new Date(options.now.getTime() - (steps - i) * stepHours * 3_600_000);
    changes[i % changes.length]?.(i, at);
    const summary = await runCollection(deps, { trigger: 'startup', collectors: HISTORY_COLLECTORS, now: at, signal: options.signal, onProgress: options.onProgress });
    options.onStep?.(summary, i + 1, steps);
  }
  return steps;
}

/** Deterministic changes to the demo company, one per step, in rotation; `at` is the step's (backdated) time. */
function demoChanges(sim: Simulator): Array<(step: number, at: Date) => void> {
  const [first, second] = sim.state.scopes();
  const nothing = () => undefined;
  if (!first) return [nothing];
  const p1 = first.project_id;
  const r1 = first.region_id;
  const running = () => sim.state.instances(p1, r1).filter((i) => i.status === 'ACTIVE');
  return [
    nothing,
    (step, at) => {
      sim.state.addCluster(p1, r1, { name: `demo-training-${step}`, flavor: 'bm3-ai-1xlarge-h100-80-8', servers_count: 2, tags: { team: 'ml', env: 'prod' }, created_at: at });
    },
    () => {
      const victim = running().at(-1);
      if (victim) sim.state.stopInstance(p1, r1, victim.id);
    },
    nothing,
    () => {
      const untagged = running().find((i) => !i.tags.some((t) => t.key === 'team'));
      if (untagged) sim.state.setInstanceTag(untagged.id, 'team', 'platform');
    },
    (step, at) => {
      const scope = second ?? first;
      // Created at the step's time, so the cluster is not younger than its first snapshot.
      sim.state.addCluster(scope.project_id, scope.region_id, { name: `demo-inference-${step}`, flavor: 'bm2-ai-1xlarge-a100-80-8', servers_count: 1, tags: { team: 'data-eng', env: 'staging' }, created_at: at });
    },
  ];
}
