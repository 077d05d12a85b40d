/**
 * Tag hygiene: per tag key, how many priced resources and how much run-rate lack it, and which
 * of its values look like variants of each other (equal ignoring case, spaces and punctuation,
 * e.g. `ML`, `ml`, ` ml`). Read from the latest rollups (every resource is in them, running or not).
 */
import { z } from 'zod';
import { PRICED_KINDS, TAG_DIMENSION_PREFIX } from '../costing/pricing.js';
import { UNTAGGED } from '../db/schema.js';
import type { Column, Row } from './report.js';
import { listRows } from './shared/batches.js';
import { appUrl } from './shared/links.js';
import { percentOf } from './shared/format.js';
import { dirParam, sortParam } from './shared/params.js';
import { latestSnapshots, latestSnapshotsSql } from '../db/latest-snapshots.js';
import { freshnessNotes } from './shared/snapshots.js';
import { defineReport } from './shared/define.js';
import { scopedCostNotes, scopeOf } from './shared/access-scope.js';
import { partitionPrefixes } from '../costing/partitions.js';
import type { Report, ReportCtx } from './shared/types.js';

const SORTS = ['key', 'resources', 'lacking', 'lacking_share', 'variant_groups'] as const;

export const tagHygieneParams = z.strictObject({
  sort: sortParam(SORTS),
  dir: dirParam,
});
export type TagHygieneParams = z.infer<typeof tagHygieneParams>;

/** The comparison form of a value: NFKC, lower case, without whitespace, punctuation or symbols. */
export function variantForm(value: string): string {
  return value.normalize('NFKC').toLowerCase().replace(/[\s\p{P}\p{S}]/gu, '');
}

/** Groups of two or more distinct values with the same variant form, largest first. */
export function variantGroups(values: readonly string[]): string[][] {
  const byForm = new Map<string, Set<string>>();
  for (const v of values) {
    const form = variantForm(v);
    byForm.set(form, (byForm.get(form) ?? new Set()).add(v));
  }
  return [...byForm.values()]
    .filter((set) => set.size > 1)
    .map((set) => [...set].sort())
    .sort((a, b) => b.length - a.length || a[0]!.localeCompare(b[0]!));
}

interface KeyFacts {
  key: string;
  resources: number;
  lacking: number;
  lackingUnpriced: number;
  /** currency -> [run-rate lacking, share of the currency's run-rate lacking] */
  perCurrency: Map<string, { lacking: string; share: string | null }>;
  values: string[];
  /** value -> resources carrying it (every currency). */
  valueResources: Map<string, number>;
}

async function keyFacts(ctx: ReportCtx): Promise<{ keys: KeyFacts[]; currencies: string[] }> {
  const rows = await ctx.db.query<{
    dimension: string;
    group_value: string;
    currency: string | null;
    price_per_hour: string;
    resources: number;
    lacking_share: string | null;
  }>(
    // The company-wide rows (prefix ''), or a scoped user's partitions (costing/partitions.ts), summed.
    `with latest as (${latestSnapshotsSql('$1')}),
      prefixes as (select unnest($3::text[]) as prefix),
      keys as (
        select distinct substr(r.dimension, length(p.prefix) + 1) as dimension
        from cost_rollups r join latest l on l.id = r.snapshot_id join prefixes p on r.dimension like p.prefix || 'tag:%'
      ),
      eff as (
        select k.dimension, r.group_value, r.currency, r.price_per_hour, r.resource_count
        from keys k cross join prefixes p join cost_rollups r on r.dimension = p.prefix || k.dimension join latest l on l.id = r.snapshot_id
        union all
        select k.dimension, $2::text, r.currency, r.price_per_hour, r.resource_count
        from keys k cross join prefixes p cross join latest l join cost_rollups r on r.snapshot_id = l.id and r.dimension = p.prefix || 'kind'
        where not exists (select 1 from cost_rollups x where x.snapshot_id = r.snapshot_id and x.dimension = p.prefix || k.dimension)
      ),
      g as (
        select dimension, group_value, currency, sum(price_per_hour) as price_per_hour, sum(resource_count)::int as resources
        from eff group by dimension, group_value, currency
      )
      select g.*, case when g.group_value = $2 and g.currency is not null
          then round(100 * g.price_per_hour / nullif(sum(g.price_per_hour) over (partition by g.dimension, g.currency), 0), 2) end as lacking_share
      from g order by dimension, group_value, currency nulls last`,
    [PRICED_KINDS, UNTAGGED, partitionPrefixes(scopeOf(ctx))],
  );
  const byKey = new Map<string, KeyFacts>();
  const currencies = new Set<string>();
  for (const r of rows) {
    const key = r.dimension.slice(TAG_DIMENSION_PREFIX.length);
    const facts: KeyFacts = byKey.get(key) ?? { key, resources: 0, lacking: 0, lackingUnpriced: 0, perCurrency: new Map(), values: [], valueResources: new Map() };
    byKey.set(key, facts);
    facts.resources += r.resources;
    if (r.currency !== null) currencies.add(r.currency);
    if (r.group_value === UNTAGGED) {
      facts.lacking += r.resources;
      if (r.currency === null) facts.lackingUnpriced += r.resources;
      else facts.perCurrency.set(r.currency, { lacking: r.price_per_hour, share: r.lacking_share });
    } else {
      if (!facts.values.includes(r.group_value)) facts.values.push(r.group_value);
      facts.valueResources.set(r.group_value, (facts.valueResources.get(r.group_value) ?? 0) + r.resources);
    }
  }
  return { keys: [...byKey.values()], currencies: [...currencies].sort() };
}

function columnsFor(currencies: readonly string[]): Column[] {
  return [
    { key: 'key', label: 'Tag key', kind: 'text', sortable: true },
    { key: 'resources', label: 'Resources', kind: 'int', sortable: true },
    { key: 'lacking', label: 'Lacking the key', kind: 'int', hrefKey: 'href', sortable: true },
    { key: 'lacking_share', label: 'Share of resources lacking', kind: 'percent', sortable: true },
    ...currencies.flatMap((c, i): Column[] => [
      { key: `lacking_cost_${i}`, label: `Run-rate lacking the key (${c} per hour)`, kind: 'money', currencyKey: `currency_${i}`, hourly: true },
      { key: `lacking_cost_share_${i}`, label: `Share of ${c} run-rate lacking`, kind: 'percent', secondary: true },
    ]),
    { key: 'lacking_unpriced', label: 'Lacking, without price', kind: 'int', secondary: true },
    { key: 'values', label: 'Distinct values', kind: 'int' },
    { key: 'variant_groups', label: 'Variant groups', kind: 'int', sortable: true },
    { key: 'variants', label: 'Values that look alike', kind: 'text' },
    { key: 'suggested_config', label: 'Configuration that merges them', kind: 'text', secondary: true },
  ];
}

function toRows(keys: readonly KeyFacts[], currencies: readonly string[], params: TagHygieneParams): Row[] {
  const rows = keys.map((k) => {
    const groups = variantGroups(k.values);
    const row: Row = {
      key: k.key,
      resources: k.resources,
      lacking: k.lacking,
      lacking_share: k.resources === 0 ? null : percentOf(k.lacking, k.resources),
      lacking_unpriced: k.lackingUnpriced,
      values: k.values.length,
      variant_groups: groups.length,
      variants: groups.map((g) => g.map((v) => JSON.stringify(v)).join(' ~ ')).join('; '),
      suggested_config: groups.length === 0 ? '' : JSON.stringify({ tag_value_aliases: { [k.key]: valueAliasesFor(k, groups) } }),
      href: appUrl('/reports/inventory', { kind: 'resources', missing_tag: k.key }),
    };
    currencies.forEach((c, i) => {
      const facts = k.perCurrency.get(c);
      row[`currency_${i}`] = c;
      row[`lacking_cost_${i}`] = facts?.lacking ?? '0';
      row[`lacking_cost_share_${i}`] = facts?.share ?? (facts ? null : '0');
    });
    return row;
  });
  const sort = params.sort ?? 'lacking';
  const dir = (params.dir ?? (sort === 'key' ? 'asc' : 'desc')) === 'asc' ? 1 : -1;
  return rows.sort((a, b) => {
    // Shares are decimal text ("40.00"): compared as numbers.
    const value = (r: Row) => (sort === 'lacking_share' && r[sort] !== null ? Number(r[sort]) : (r[sort] as number | string | null));
    const x = value(a);
    const y = value(b);
    if (x === y) return String(a.key).localeCompare(String(b.key));
    if (x === null) return 1;
    if (y === null) return -1;
    return (x < y ? -1 : 1) * dir;
  });
}

/**
 * The value aliases that merge each group of look-alike values into its most used value (ties: the
 * one with no upper-case letters, then the first in order), e.g. {"ML": "ml", " Ml ": "ml"}.
 */
export function valueAliasesFor(facts: Pick<KeyFacts, 'valueResources'>, groups: readonly string[][]): Record<string, string> {
  const entries: Array<[string, string]> = [];
  for (const group of groups) {
    const canonical = [...group].sort(
      (a, b) =>
        (facts.valueResources.get(b) ?? 0) - (facts.valueResources.get(a) ?? 0) ||
        Number(a !== a.toLowerCase()) - Number(b !== b.toLowerCase()) ||
        a.localeCompare(b),
    )[0]!;
    for (const v of group) if (v !== canonical) entries.push([v, canonical]);
  }
  return Object.fromEntries(entries);
}

/** One tag_value_aliases object for every key with look-alike values, ready to paste into the configuration file. */
function valueAliasNote(keys: readonly KeyFacts[]): string[] {
  const entries = keys.flatMap((k): Array<[string, Record<string, string>]> => {
    const groups = variantGroups(k.values);
    return groups.length === 0 ? [] : [[k.key, valueAliasesFor(k, groups)]];
  });
  if (entries.length === 0) return [];
  entries.sort((a, b) => a[0].localeCompare(b[0]));
  const onlyCase = keys.every((k) => variantGroups(k.values).every((g) => new Set(g.map((v) => v.normalize('NFC').trim().toLowerCase())).size === 1));
  return [
    `To merge look-alike values into one group, add to the configuration file: ${JSON.stringify({ tag_value_aliases: Object.fromEntries(entries) })}` +
      (onlyCase ? ' (or "tag_value_case": "lower", since they differ only in case and surrounding spaces)' : '') +
      '. New collections use it at once; run `npm run cli -- recompute-rollups` to apply it to the history (docs/tags.md).',
  ];
}

/** Keys that look like variants of each other (`cost-center`, `cost_center`): candidates for tag_aliases. */
function keyVariantNote(keys: readonly KeyFacts[]): string[] {
  const groups = variantGroups(keys.map((k) => k.key));
  if (groups.length === 0) return [];
  return [
    `Tag keys that look like the same key: ${groups.map((g) => g.map((v) => JSON.stringify(v)).join(' ~ ')).join('; ')}. Map them to one key with tag_aliases in the configuration.`,
  ];
}

export const tagHygieneReport: Report<TagHygieneParams> = defineReport({
  name: 'tag-hygiene',
  title: 'Tag hygiene',
  description: 'Per tag key: resources and run-rate lacking it, and values that look like variants of each other.',
  section: 'cost',
  params: tagHygieneParams,

  async run(ctx, params, page) {
    const [{ keys, currencies }, snapshots] = await Promise.all([keyFacts(ctx), latestSnapshots(ctx.db, PRICED_KINDS)]);
    const rows = toRows(keys, currencies, params);
    return {
      title: 'Tag hygiene',
      summary: [
        { label: 'Tag keys', value: keys.length, kind: 'int' },
        { label: 'Keys with look-alike values', value: rows.filter((r) => (r.variant_groups as number) > 0).length, kind: 'int' },
      ],
      charts: [
        {
          id: 'lacking',
          title: 'Resources lacking each key',
          type: 'bar',
          horizontal: true,
          labels: rows.map((r) => String(r.key)),
          datasets: [{ label: 'Resources lacking', data: rows.map((r) => r.lacking as number) }],
          valueLabel: 'resources',
        },
      ],
      columns: columnsFor(currencies),
      rows: rows.slice(page.offset, page.offset + page.limit),
      totalRows: rows.length,
      notes: [
        ...(await scopedCostNotes(ctx)),
        ...freshnessNotes(ctx.now, snapshots, 'priced resources'),
        'Counts include every instance, GPU cluster and Kubernetes cluster (running or not); run-rates only the running ones. Kubernetes clusters carry no tags.',
        'Values look alike when they are equal ignoring case, whitespace, punctuation and symbols.',
        ...keyVariantNote(keys),
        ...valueAliasNote(keys),
      ],
    };
  },

  async export(ctx, params) {
    const { keys, currencies } = await keyFacts(ctx);
    return { columns: columnsFor(currencies), rows: listRows(toRows(keys, currencies, params)) };
  },
  scoped: true,
}, { cached: true });
