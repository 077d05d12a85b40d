/**
 * What to collect: the scopes (project and region), image IDs and free-feature IDs. They have the
 * shape of the simulator's GET /_sim/manifest answer, so a manifest is a valid configuration file.
 */
import { z } from 'zod';
import { ConfigError, zodProblems, type ConfigProblem } from './problems.js';
import { deepFreeze, type DeepReadonly, type Scope } from './types.js';
import { nonEmptyName, positiveInt } from './validators.js';

/**
 * A Kubernetes cluster to price: its name, or its name and tags. The API gives these clusters no
 * tags, so tags configured here are stored and grouped exactly like the API's tags of other kinds.
 */
const K8sClusterSchema = z.preprocess(
  (entry) => (typeof entry === 'string' ? { name: entry } : entry),
  z.strictObject(
    {
      name: nonEmptyName,
      tags: z
        .record(
          z.string().refine((key) => key.trim() !== '' && key.length <= 255),
          z.string({ error: 'a tag value must be a string' }).max(255, { error: 'a tag value must be at most 255 characters' }),
          { error: (issue) => (issue.code === 'invalid_key' ? 'a tag key must be 1 to 255 characters, not only spaces' : 'must be an object of tag keys to string values') },
        )
        .default({}),
    },
    { error: 'must be a cluster name or {"name": "...", "tags": {"key": "value"}}' },
  ),
);

export const ScopeSchema = z.strictObject({
  project_id: positiveInt,
  region_id: positiveInt,
  security_groups: z.array(nonEmptyName).default([]),
  k8s_clusters: z.array(K8sClusterSchema).default([]),
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
  return raw.map((s, i) => ({
    projectId: s.project_id,
    regionId: s.region_id,
    securityGroups: [...new Set(s.security_groups)],
    ...k8sClusters(s.k8s_clusters, problems, `${basePath}[${i}].k8s_clusters`),
  }));
}

/** The clusters' names (each once: a name listed twice is a problem) and the tags configured for them. */
function k8sClusters(raw: readonly z.output<typeof K8sClusterSchema>[], problems: ConfigProblem[], path: string): Pick<Scope, 'k8sClusters' | 'k8sClusterTags'> {
  const seen = new Map<string, number>();
  const tags: Record<string, Record<string, string>> = {};
  raw.forEach((entry, j) => {
    const name = entry.name;
    const first = seen.get(name);
    if (first !== undefined) {
      problems.push({ path: `${path}[${j}]`, message: `repeats ${path}[${first}] (cluster "${name}"); list each cluster once, with its tags` });
      return;
    }
    seen.set(name, j);
    if (Object.keys(entry.tags).length > 0) tags[name] = { ...entry.tags };
  });
  return { k8sClusters: [...seen.keys()], ...(Object.keys(tags).length > 0 ? { k8sClusterTags: tags } : {}) };
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
