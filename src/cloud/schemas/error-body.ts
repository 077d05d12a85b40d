import { z } from 'zod';

/**
 * The spec leaves error bodies open. The simulator answers every error with this shape, and the
 * client parses it when it can (keeping whatever else a real API sends):
 *   { "code": "validation_failed", "message": "...", "errors": [{ "field": "body.name", "message": "..." }] }
 */
export const ApiErrorBodySchema = z.looseObject({
  code: z.string().optional(),
  message: z.string().optional(),
  errors: z.array(z.looseObject({ field: z.string(), message: z.string() })).optional(),
});
export type ApiErrorBody = z.output<typeof ApiErrorBodySchema>;

export interface FieldProblem {
  field: string;
  message: string;
}

/** Turns zod issues into `{field, message}` pairs, fields as `body.interfaces[0].network_id`. */
export function fieldProblems(error: z.ZodError, prefix?: string): FieldProblem[] {
  return error.issues.map((issue) => {
    let field = prefix ?? '';
    for (const part of issue.path) {
      if (typeof part === 'number') field += `[${part}]`;
      else field += field === '' ? String(part) : `.${String(part)}`;
    }
    return { field: field === '' ? '(root)' : field, message: issue.message };
  });
}
