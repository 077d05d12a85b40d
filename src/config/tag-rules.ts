/** The file's tag rules: key and value case, key aliases and value aliases, checked for conflicts. */
import { z } from 'zod';
import { applyKeyCase, applyValueCase, normaliseTagKey, type TagKeyCase, type TagRules, type TagValueCase } from '../tags/normalise.js';
import { formatPathSegment, type ConfigProblem } from './problems.js';
import type { ConfigShape } from './types.js';
import { nonEmptyName } from './validators.js';

export const TagAliasesSchema = z.record(nonEmptyName, nonEmptyName);
export const TagCaseSchema = z.enum(['lower', 'preserve'], { error: 'must be "lower" or "preserve"' });
export const TagValueAliasesSchema = z.record(nonEmptyName, z.record(nonEmptyName, nonEmptyName, { error: 'must map alias values to canonical values, e.g. {"ML": "ml"}' }), {
  error: 'must map tag keys to value aliases, e.g. {"team": {"ML": "ml"}}',
});

export type TagSettings = Pick<ConfigShape, 'tagAliases' | 'tagKeyCase' | 'tagValueCase' | 'tagValueAliases'>;

/** The file's tag rules with their aliases normalised; without a file, the defaults and no aliases. */
export function tagSettings(
  raw: { tag_aliases: Record<string, string>; tag_key_case: TagKeyCase; tag_value_case: TagValueCase; tag_value_aliases: Record<string, Record<string, string>> } | null,
  problems: ConfigProblem[],
): TagSettings {
  const tagKeyCase = raw?.tag_key_case ?? 'lower';
  const tagAliases = raw ? normaliseAliases(raw.tag_aliases, tagKeyCase, problems) : {};
  const tagValueCase = raw?.tag_value_case ?? 'preserve';
  const tagValueAliases = raw ? normaliseValueAliases(raw.tag_value_aliases, { tagAliases, tagKeyCase, tagValueCase }, problems) : {};
  return { tagAliases, tagKeyCase, tagValueCase, tagValueAliases };
}

function normaliseAliases(
  raw: Record<string, string>,
  keyCase: TagKeyCase,
  problems: ConfigProblem[],
): Record<string, string> {
  const aliases: Record<string, string> = Object.create(null) as Record<string, string>;
  const origin: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [alias, canonical] of Object.entries(raw)) {
    const from = applyKeyCase(alias, keyCase);
    const to = applyKeyCase(canonical, keyCase);
    const path = `tag_aliases${formatPathSegment(alias)}`;
    if (from in aliases && aliases[from] !== to) {
      problems.push({
        path,
        message: `maps to "${canonical}" but "${origin[from]}" is the same key in ${keyCase} case and maps to "${aliases[from]}"`,
      });
      continue;
    }
    aliases[from] = to;
    origin[from] = alias;
  }
  for (const [from, to] of Object.entries(aliases)) {
    if (from !== to && to in aliases && aliases[to] !== to) {
      problems.push({
        path: `tag_aliases${formatPathSegment(origin[from] ?? from)}`,
        message: `maps to "${to}", which is itself an alias of "${aliases[to]}"; map straight to the canonical key`,
      });
    }
  }
  return Object.fromEntries(Object.entries(aliases));
}

/**
 * tag_value_aliases with keys through the key rules (case, tag_aliases) and values through the
 * value case. Two entries that become the same (key, alias) must agree; a canonical value must not
 * itself be an alias.
 */
function normaliseValueAliases(
  raw: Record<string, Record<string, string>>,
  rules: Pick<TagRules, 'tagAliases' | 'tagKeyCase' | 'tagValueCase'>,
  problems: ConfigProblem[],
): Record<string, Record<string, string>> {
  const byKey = new Map<string, { map: Map<string, string>; origin: Map<string, string> }>();
  for (const [rawKey, values] of Object.entries(raw)) {
    const key = normaliseTagKey(rawKey, rules);
    const entry = byKey.get(key) ?? { map: new Map<string, string>(), origin: new Map<string, string>() };
    byKey.set(key, entry);
    for (const [alias, canonical] of Object.entries(values)) {
      const from = applyValueCase(alias, rules.tagValueCase);
      const to = applyValueCase(canonical, rules.tagValueCase);
      const path = `tag_value_aliases${formatPathSegment(rawKey)}${formatPathSegment(alias)}`;
      const earlier = entry.map.get(from);
      if (earlier !== undefined && earlier !== to) {
        problems.push({
          path,
          message: `maps to "${canonical}" but ${entry.origin.get(from)} is the same value of tag key "${key}" (after normalisation) and maps to "${earlier}"`,
        });
        continue;
      }
      entry.map.set(from, to);
      entry.origin.set(from, path);
    }
  }
  const result: Array<[string, Record<string, string>]> = [];
  for (const [key, { map, origin }] of byKey) {
    for (const [from, to] of map) {
      const next = map.get(to);
      if (from !== to && next !== undefined && next !== to) {
        problems.push({ path: origin.get(from)!, message: `maps to "${to}", which is itself an alias of "${next}"; map straight to the canonical value` });
      }
    }
    result.push([key, Object.fromEntries(map)]);
  }
  // fromEntries defines own properties, so a key such as `__proto__` stays an ordinary key.
  return Object.fromEntries(result);
}
