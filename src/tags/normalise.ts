/**
 * How tag keys and values are normalised before they are stored and grouped: the one rule that
 * the configuration (its aliases, budgets, allocation), the collectors and the reports share.
 */

export type TagKeyCase = 'lower' | 'preserve';
export type TagValueCase = 'lower' | 'preserve';

/** The configuration's tag rules (src/config/tags.ts builds them from the file). */
export interface TagRules {
  /** alias key -> canonical key, both already in the configured case. */
  readonly tagAliases: Readonly<Record<string, string>>;
  readonly tagKeyCase: TagKeyCase;
  readonly tagValueCase: TagValueCase;
  /** normalised tag key -> (alias value -> canonical value), values already trimmed and in the configured case. */
  readonly tagValueAliases: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

/** A key NFC-normalised and in the configured case, before any alias applies. */
export function applyKeyCase(key: string, keyCase: TagKeyCase): string {
  const nfc = key.normalize('NFC');
  return keyCase === 'lower' ? nfc.toLowerCase() : nfc;
}

/**
 * The key under which a tag is stored and grouped: the configured case applied (NFC-normalised),
 * then the alias map (so `Team`, `TEAM` and `owner-team` can all become `team`).
 */
export function normaliseTagKey(key: string, settings: Pick<TagRules, 'tagAliases' | 'tagKeyCase'>): string {
  const cased = applyKeyCase(key, settings.tagKeyCase);
  return Object.hasOwn(settings.tagAliases, cased) ? settings.tagAliases[cased]! : cased;
}

/** A value NFC-normalised, trimmed and in the configured case, before any alias applies. */
export function applyValueCase(value: string, valueCase: TagValueCase): string {
  const nfc = value.normalize('NFC').trim();
  return valueCase === 'lower' ? nfc.toLowerCase() : nfc;
}

/**
 * The value under which a tag is stored and grouped, for a key already normalised by
 * normaliseTagKey: NFC-normalised and trimmed, the configured case applied, then the key's value
 * aliases (so `ML`, ` Ml ` and `ml` can all become `ml`).
 */
export function normaliseTagValue(key: string, value: string, rules: Pick<TagRules, 'tagValueCase' | 'tagValueAliases'>): string {
  const cased = applyValueCase(value, rules.tagValueCase);
  const aliases = Object.hasOwn(rules.tagValueAliases, key) ? rules.tagValueAliases[key]! : undefined;
  return aliases && Object.hasOwn(aliases, cased) ? aliases[cased]! : cased;
}
