/**
 * What to collect: the scopes (project and region), image IDs and free-feature IDs. They have the
 * shape of the simulator's GET /_sim/manifest answer, so a manifest is a valid configuration file.
 */
import { z } from 'zod';
import { ConfigError, zodProblems, type ConfigProblem } from './problems.js';
import { deepFreeze, type DeepReadonly, type Scope } from './types.js';
import { nonEmptyName, positiveInt } from './validators.js';

export const ScopeSchema = z.strictObject({
  project_id: positiveInt,
  region_id: positiveInt,
  security_groups: z.array(nonEmptyName).default([]),
  k8s_clusters: z.array(nonEmptyName).default([]),
});

/** The simulator's manifest: same fields as the file; keys it may add later are ignored. */
const ManifestSchema = z.looseObject({
  scopes: z.array(z.looseObject(ScopeSchema.shape)),
  image_ids: z.array(nonEmptyName).default([]),
  free_feature_ids: z.array(positiveInt).default([]),
});

export function toScopes(raw: readonly z.output<typeof ScopeSchema>[], problems: ConfigProblem[], basePath: string): Scope[] {
  const seen = new Map<string, number>();
  raw.forEach((s, i) => {
    const key = `${s.project_id}/${s.region_id}`;
    const first = seen.get(key);
    if (first !== undefined) {
      problems.push({
        path: `${basePath}[${i}]`,
        message: `repeats ${basePath}[${first}] (project ${s.project_id}, region ${s.region_id}); list each scope once`,
      });
    } else {
      seen.set(key, i);
    }
  });
  return raw.map((s) => ({
    projectId: s.project_id,
    regionId: s.region_id,
    securityGroups: [...new Set(s.security_groups)],
    k8sClusters: [...new Set(s.k8s_clusters)],
  }));
}

/**
 * Scopes, image IDs and free-feature IDs from a simulator manifest (GET /_sim/manifest), for
 * simulator mode where the configuration has none. Throws ConfigError naming each bad field.
 */
export function scopesFromManifest(manifest: unknown): {
  scopes: readonly DeepReadonly<Scope>[];
  imageIds: readonly string[];
  freeFeatureIds: readonly number[];
} {
  const result = ManifestSchema.safeParse(manifest);
  if (!result.success) throw new ConfigError(zodProblems(result.error), 'simulator manifest');
  const problems: ConfigProblem[] = [];
  const scopes = toScopes(result.data.scopes, problems, 'scopes');
  if (problems.length > 0) throw new ConfigError(problems, 'simulator manifest');
  return deepFreeze({ scopes, imageIds: result.data.image_ids, freeFeatureIds: result.data.free_feature_ids });
}
