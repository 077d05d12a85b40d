import type { z } from 'zod';
import { fieldProblems, type FieldProblem } from '../../cloud/schemas/error-body.js';
import { validationFailed } from './errors.js';

type Part = 'path' | 'query' | 'body';

/**
 * Parses the path parameters, query and body of a request with the shared request schemas and
 * answers 400 `validation_failed` listing every bad field of every part at once
 * (fields named `path.project_id`, `query.limit`, `body.interfaces[0].network_id`).
 */
export function validateRequest<T extends Partial<Record<Part, z.ZodType>>>(
  schemas: T,
  inputs: { [K in keyof T]: unknown },
): { [K in keyof T]: T[K] extends z.ZodType ? z.output<T[K]> : never } {
  const problems: FieldProblem[] = [];
  const out: Record<string, unknown> = {};
  for (const part of Object.keys(schemas) as Part[]) {
    const schema = schemas[part];
    if (!schema) continue;
    const result = schema.safeParse(inputs[part as keyof T]);
    if (result.success) out[part] = result.data;
    else problems.push(...fieldProblems(result.error, part));
  }
  if (problems.length > 0) throw validationFailed(problems);
  return out as { [K in keyof T]: T[K] extends z.ZodType ? z.output<T[K]> : never };
}
