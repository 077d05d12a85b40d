/** Configuration problems: each named by its path, all reported together in one ConfigError. */
import type { z } from 'zod';

export interface ConfigProblem {
  path: string;
  message: string;
}

/** Invalid configuration: every problem found, each as `path: reason`. Never carries a secret. */
export class ConfigError extends Error {
  readonly problems: readonly ConfigProblem[];

  constructor(problems: ConfigProblem[], source = 'configuration') {
    const count = problems.length === 1 ? '1 problem' : `${problems.length} problems`;
    super(`Invalid ${source} (${count}):\n${problems.map((p) => `  - ${p.path}: ${p.message}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = Object.freeze(problems.map((p) => Object.freeze({ ...p })));
  }
}

/** A zod error's issues as problems; an unknown key is named by its own path. */
export function zodProblems(error: z.ZodError): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        problems.push({ path: formatPath([...issue.path, key]), message: 'is not a known setting' });
      }
    } else {
      problems.push({ path: formatPath(issue.path), message: issue.message });
    }
  }
  return problems;
}

function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(top level)';
  const [first, ...rest] = path;
  const head = typeof first === 'string' && isIdentifier(first) ? first : formatPathSegment(first!);
  return head + rest.map(formatPathSegment).join('');
}

/** One path segment as it follows the one before: `.name`, `[0]` or `["odd key"]`. */
export function formatPathSegment(segment: PropertyKey): string {
  if (typeof segment === 'number') return `[${segment}]`;
  const s = String(segment);
  return isIdentifier(s) ? `.${s}` : `[${JSON.stringify(s)}]`;
}

function isIdentifier(s: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(s);
}
