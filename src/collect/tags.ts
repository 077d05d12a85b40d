/** Tags as the API returns them, turned into the three tag columns of a resource row. */
import type { Tag } from '../cloud/schemas/index.js';
import { normaliseTagKey, normaliseTagValue, type TagRules } from '../tags/normalise.js';
import type { OriginalTag } from '../db/schema.js';

/** The configuration's tag rules: key case and aliases, value case and aliases. */
export type TagSettings = TagRules;

export interface TagColumns {
  /** Normalised key -> normalised value; when two keys normalise alike, the first one received wins. */
  tags: Record<string, string>;
  /** Normalised keys of the read-only tags that made it into `tags`. */
  tagsReadOnly: string[];
  /** The list as received. */
  tagsOriginal: OriginalTag[];
}

export function tagColumns(list: readonly Tag[], settings: TagSettings): TagColumns {
  // A null-prototype object: a tag key such as `__proto__` is an ordinary key here.
  const tags = Object.create(null) as Record<string, string>;
  const readOnly: string[] = [];
  const original: OriginalTag[] = [];
  for (const tag of list) {
    original.push({ key: tag.key, value: tag.value as string, read_only: tag.read_only });
    const key = normaliseTagKey(tag.key, settings);
    if (Object.hasOwn(tags, key)) continue;
    // A tag without a value still says the key is set: it groups as the empty value.
    tags[key] = normaliseTagValue(key, tag.value ?? '', settings);
    if (tag.read_only) readOnly.push(key);
  }
  return { tags: { ...tags }, tagsReadOnly: readOnly, tagsOriginal: original };
}

/** The tag columns again from the list as received (`tags_original`), under the current rules. */
export function retagColumns(original: readonly OriginalTag[], settings: TagSettings): Omit<TagColumns, 'tagsOriginal'> {
  const { tags, tagsReadOnly } = tagColumns(
    original.map((t) => ({ key: t.key, value: t.value, read_only: t.read_only })),
    settings,
  );
  return { tags, tagsReadOnly };
}
