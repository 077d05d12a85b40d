/**
 * docs/grafana-cost-dashboard.json is checked against the metrics the service exports, so a
 * renamed metric or label cannot leave the dashboard showing nothing unnoticed.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { createMetrics } from '../../src/ops/metrics.js';

interface Target {
  expr?: string;
}
interface Panel {
  title: string;
  targets?: Target[];
  panels?: Panel[];
}
interface Dashboard {
  panels: Panel[];
  templating: { list: Array<{ name: string; query?: string | { query: string } }> };
}

const dashboard = JSON.parse(readFileSync(new URL('../../docs/grafana-cost-dashboard.json', import.meta.url), 'utf8')) as Dashboard;

const allPanels = (panels: readonly Panel[]): Panel[] => panels.flatMap((p) => [p, ...allPanels(p.panels ?? [])]);

/** Every PromQL expression of the dashboard: panel targets and query variables. */
function expressions(): string[] {
  const targets = allPanels(dashboard.panels).flatMap((p) => (p.targets ?? []).map((t) => t.expr ?? ''));
  const variables = dashboard.templating.list.flatMap((v) => (typeof v.query === 'object' ? [v.query.query] : []));
  return [...targets, ...variables];
}

/** The metric names and label matchers one expression uses. */
function used(expr: string): { metrics: string[]; matchers: Array<{ metric: string; label: string; value: string }> } {
  const metrics = [...expr.matchAll(/\b(cloudtally_[a-z_]+)\b/g)].map((m) => m[1]!);
  const matchers = [...expr.matchAll(/\b(cloudtally_[a-z_]+)\{([^}]*)\}/g)].flatMap((m) =>
    [...m[2]!.matchAll(/(\w+)\s*=\s*"([^"]*)"/g)].map((l) => ({ metric: m[1]!, label: l[1]!, value: l[2]! })),
  );
  return { metrics, matchers };
}

describe('docs/grafana-cost-dashboard.json', () => {
  const registry = createMetrics({ defaultMetrics: false }).registry;
  const exported = new Map(registry.getMetricsAsArray().map((m) => [m.name, m]));

  it('has panels for cost per hour by team, the total by currency and the month to date', () => {
    const exprs = expressions();
    expect(exprs.length).toBeGreaterThanOrEqual(4);
    expect(exprs.some((e) => e.includes('group_by="tag:team"'))).toBe(true);
    expect(exprs.some((e) => e.includes('group_by="total"'))).toBe(true);
    expect(exprs.some((e) => e.includes('cloudtally_cost_month_to_date'))).toBe(true);
  });

  it('names in every expression only metrics the service exports, with labels they have', () => {
    for (const expr of expressions()) {
      const { metrics, matchers } = used(expr);
      expect(metrics.length, expr).toBeGreaterThan(0);
      for (const name of metrics) expect(exported.has(name), `${name} in ${expr}`).toBe(true);
      for (const m of matchers) {
        const labels = ((exported.get(m.metric) as unknown as { labelNames: string[] }).labelNames ?? []);
        expect(labels, `${m.label} of ${m.metric}`).toContain(m.label);
      }
    }
  });

  it('filters on groupings the service exports by default', () => {
    const groupings = new Set(['total', ...loadConfig({}).metrics.costGroupings]);
    const filtered = expressions().flatMap((e) => used(e).matchers.filter((m) => m.label === 'group_by').map((m) => m.value));
    expect(filtered.length).toBeGreaterThan(0);
    expect(filtered.filter((g) => !groupings.has(g))).toEqual([]);
  });
});
