import type { z } from 'zod';
import { fieldProblems, type FieldProblem } from './schemas/index.js';
import { CloudValidationError } from './errors.js';
import { endpointOf, type Route } from './paths.js';
import { compiled } from './compiled.js';

/**
 * Checks every part of a request (path, query, body) against the shared request schemas and
 * throws one CloudValidationError listing all problems, before anything is sent.
 *
 *   const input = new InputCheck('createLbPool', ROUTES.createLbPool);
 *   const scope = input.check('path', ScopeParamsSchema, { project_id, region_id });
 *   const body = input.check('body', LbPoolCreateBodySchema, rawBody);
 *   input.done(); // throws when anything failed; only then are `scope` and `body` used
 */
export class InputCheck {
  private readonly problems: FieldProblem[] = [];

  constructor(
    private readonly operation: string,
    private readonly route: Route,
  ) {}

  /** Returns the parsed value; when invalid, records the problems (fields prefixed with `prefix`). */
  check<S extends z.ZodType>(prefix: string, schema: S, value: unknown): z.output<S> {
    const parsed = compiled(schema).safeParse(value);
    if (parsed.success) return parsed.data;
    this.problems.push(...fieldProblems(parsed.error, prefix));
    return undefined as z.output<S>; // never used: done() throws first
  }

  done(): void {
    if (this.problems.length === 0) return;
    const { method, template } = this.route;
    throw new CloudValidationError(
      { operation: this.operation, method, path: template, endpoint: endpointOf(this.route) },
      this.problems,
    );
  }
}
