import { DEMO_HISTORY_STEP_HOURS, type Config, type DeepReadonly, type Scope } from '../config/index.js';
import { demoBudgets } from './budgets.js';

/**
 * The demo's gap cap: its history is collected every DEMO_HISTORY_STEP_HOURS, and with the
 * schedules' caps (2 h for hourly instances) a day would count only a third of its hours. An hour
 * more than the step, because a backfilled step's snapshots are taken a few milliseconds later or
 * earlier than the step's time: a cap of exactly the step would leave those milliseconds uncovered.
 */
export const DEMO_MAX_GAP_HOURS = DEMO_HISTORY_STEP_HOURS + 1;

/**
 * The demo's own configuration (simulator mode), for what the configuration does not set:
 * - the demo's gap cap (DEMO_MAX_GAP_HOURS);
 * - the demo budgets (src/demo/budgets.ts; one of them sized by `now`);
 * - tags for the demo company's Kubernetes clusters (the API gives them none), as a configuration
 *   would give them: by team, and one cluster left untagged so that tag hygiene has one to list.
 */
export function demoConfig(loaded: Config, now: Date): Config {
  return Object.freeze({ ...loaded, costMaxGapHours: loaded.costMaxGapHours ?? DEMO_MAX_GAP_HOURS, budgets: loaded.budgets ?? demoBudgets(now) });
}

/** Team of each demo Kubernetes cluster by name (src/simulator/catalog.ts); k8s-dev-sandbox stays untagged. */
export const DEMO_K8S_CLUSTER_TAGS: Readonly<Record<string, Readonly<Record<string, string>>>> = Object.freeze({
  'k8s-prod-ml': { team: 'ml', env: 'prod' },
  'k8s-inference': { team: 'ml', env: 'prod' },
  'k8s-staging': { team: 'platform', env: 'staging' },
  'k8s-batch': { team: 'data-eng', env: 'prod' },
});

/** The demo company's scopes (from its manifest) with the demo's Kubernetes cluster tags. */
export function withDemoK8sTags(scopes: readonly DeepReadonly<Scope>[]): DeepReadonly<Scope>[] {
  return scopes.map((scope) => ({
    ...scope,
    k8sClusterTags: Object.fromEntries(scope.k8sClusters.flatMap((name) => (DEMO_K8S_CLUSTER_TAGS[name] ? [[name, DEMO_K8S_CLUSTER_TAGS[name]]] : []))),
  }));
}
