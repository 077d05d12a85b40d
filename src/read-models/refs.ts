/**
 * An instance as the stop endpoint addresses it: project, region and id, written
 * `project:region:id` in forms and URLs (e.g. `380101:76:6f1c...`).
 */
import type { InstanceRef } from '../costing/current-instances.js';

export type { InstanceRef };

const REF = /^(\d{1,9}):(\d{1,9}):([A-Za-z0-9][A-Za-z0-9._-]{0,127})$/;

export function formatInstanceRef(ref: InstanceRef): string {
  return `${ref.projectId}:${ref.regionId}:${ref.instanceId}`;
}

export function parseInstanceRef(text: string): InstanceRef | null {
  const match = REF.exec(text.trim());
  if (!match) return null;
  const projectId = Number(match[1]);
  const regionId = Number(match[2]);
  if (projectId < 1 || regionId < 1) return null;
  return { projectId, regionId, instanceId: match[3]! };
}

export function sameRef(a: InstanceRef, b: InstanceRef): boolean {
  return a.projectId === b.projectId && a.regionId === b.regionId && a.instanceId === b.instanceId;
}

/** At most this many instances per action request. */
export const MAX_REFS_PER_REQUEST = 200;

/**
 * Refs from a form field given once or repeated; duplicates dropped (first order kept). Every
 * unreadable value and an over-long list are problems, so nothing is silently left out.
 */
export function parseInstanceRefs(value: unknown, max = MAX_REFS_PER_REQUEST): { refs: InstanceRef[]; problems: string[] } {
  const values = value === undefined ? [] : Array.isArray(value) ? value : [value];
  const refs: InstanceRef[] = [];
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const v of values) {
    const ref = typeof v === 'string' ? parseInstanceRef(v) : null;
    if (!ref) {
      problems.push(`${JSON.stringify(String(v).slice(0, 80))} is not an instance reference (project:region:id)`);
      continue;
    }
    const key = formatInstanceRef(ref);
    if (seen.has(key)) continue;
    seen.add(key);
    refs.push(ref);
  }
  if (refs.length > max) problems.push(`at most ${max} instances at once (got ${refs.length})`);
  return { refs, problems };
}
