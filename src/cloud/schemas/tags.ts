import { z } from 'zod';
import { looseBool, looseString } from './primitives.js';

/** Tag keys and values are at most 255 characters each (spec, Limits). */
export const TAG_MAX_LENGTH = 255;

/** Tags as sent on creation: an object mapping key to value. */
export const TagsInputSchema = z
  .record(z.string(), z.string().max(TAG_MAX_LENGTH, `tag value longer than ${TAG_MAX_LENGTH} characters`))
  .superRefine((tags, ctx) => {
    for (const key of Object.keys(tags)) {
      if (key.length === 0) ctx.addIssue({ code: 'custom', path: [key], message: 'tag key must not be empty' });
      else if (key.length > TAG_MAX_LENGTH) {
        ctx.addIssue({
          code: 'custom',
          path: [`${key.slice(0, 20)}...`],
          message: `tag key longer than ${TAG_MAX_LENGTH} characters (${key.length})`,
        });
      }
    }
  });
export type TagsInput = z.infer<typeof TagsInputSchema>;

/** One tag as the API returns it (also the image tag record). */
export const TagSchema = z.looseObject({
  key: z.string(),
  value: looseString,
  read_only: looseBool.transform((v) => v ?? false),
});
export type Tag = z.output<typeof TagSchema>;
export type TagWire = z.input<typeof TagSchema>;

/** The output form: an array of tags; null or missing reads as no tags. */
export const TagListSchema = z
  .array(TagSchema)
  .nullish()
  .transform((v) => v ?? []);

/** Converts the input form to the output form the API answers with. */
export function tagsInputToList(tags: TagsInput | undefined, readOnlyKeys: ReadonlySet<string> = new Set()): TagWire[] {
  return Object.entries(tags ?? {}).map(([key, value]) => ({ key, value, read_only: readOnlyKeys.has(key) }));
}
