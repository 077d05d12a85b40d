import { CLIENT_ID, FREE_FEATURE_CATALOG, IMAGE_NAMES, PROJECTS, REGIONS, SCOPE_LAYOUT } from '../catalog.js';
import type { SimCompany, SimFreeFeature, SimImage, SimScope, SimStorageKey } from '../model.js';
import { derivedRng, type Rng } from '../random.js';
import { DAY_MS, wholeSeconds } from '../timestamps.js';
import { generateClusters } from './clusters.js';
import { generateInstances, generateSecurityGroups, securityGroupCount } from './instances.js';
import {
  generateFaasNamespaces,
  generateFlavors,
  generateK8sClusters,
  generateKeypairs,
  generateLoadBalancer,
  generateNetworks,
} from './scope-parts.js';
import { shuffled, splitByWeights } from './shuffle.js';

/**
 * The deterministic demo company. Each part draws from its own generator derived from the seed
 * and a name, so one part's size does not shift the ids of another: the same seed gives the same
 * scopes, groups and first records at any size.
 */

/** Storage keys: about 1,200 at the default size, growing with it. */
export function storageKeyCount(size: number): number {
  return 1140 + size;
}

export function generateCompany(seed: number, size: number, now: Date): SimCompany {
  const images = generateImages(derivedRng(seed, 'images'));
  const counts = splitByWeights(
    size,
    SCOPE_LAYOUT.map((s) => s.weight),
  );
  const scopes = SCOPE_LAYOUT.map((layout, index) =>
    generateScope(seed, layout.projectId, layout.regionId, index, counts[index] ?? 0, now, images),
  );
  return {
    seed,
    size,
    clientId: CLIENT_ID,
    projects: PROJECTS.map((p) => ({ ...p })),
    scopes,
    images,
    storageKeys: generateStorageKeys(derivedRng(seed, 'storage-keys'), storageKeyCount(size), now),
    nextStorageKeyId: 1001 + storageKeyCount(size),
    freeFeatures: generateFreeFeatures(derivedRng(seed, 'free-features'), now),
    inferenceDeployments: [],
  };
}

function generateScope(
  seed: number,
  projectId: number,
  regionId: number,
  index: number,
  instanceCount: number,
  now: Date,
  images: SimImage[],
): SimScope {
  const region = REGIONS.find((r) => r.id === regionId);
  if (!region) throw new Error(`scope layout names unknown region ${regionId}`);
  const rng = (part: string): Rng => derivedRng(seed, `${projectId}/${regionId}/${part}`);
  const partsRng = rng('parts');
  const k8sCount = partsRng.int(1, 3) + Math.floor(instanceCount / 2000);
  const scope: SimScope = {
    projectId,
    regionId,
    regionName: region.name,
    currency: region.currency,
    networks: generateNetworks(partsRng, index),
    securityGroups: [],
    instances: [],
    flavors: generateFlavors(rng('flavors'), region),
    clusters: [],
    keypairs: generateKeypairs(rng('keypairs'), projectId, regionId, 3 + Math.floor(instanceCount / 200), now, index === 0),
    k8sClusters: generateK8sClusters(rng('k8s'), k8sCount, region.currency),
    loadBalancers: [generateLoadBalancer(rng('lb'), now)],
    pools: [],
    faasNamespaces: generateFaasNamespaces(rng('faas')),
    virtualClusters: [],
    nextOrdinal: instanceCount,
  };
  const groupRng = rng('security-groups');
  scope.securityGroups = generateSecurityGroups(groupRng, projectId, regionId, securityGroupCount(groupRng, instanceCount));
  scope.instances = generateInstances(
    {
      rng: rng('instances'),
      projectId,
      regionId,
      count: instanceCount,
      now,
      flavors: scope.flavors,
      keypairs: scope.keypairs,
      k8sClusterNames: scope.k8sClusters.map((k) => k.name),
    },
    scope.securityGroups,
  );
  scope.clusters = generateClusters({
    rng: rng('clusters'),
    scope,
    count: 2 + Math.floor(instanceCount / 40),
    now,
    images,
    showcase: index === 0,
  });
  return scope;
}

function generateImages(rng: Rng): SimImage[] {
  const count = rng.int(3, 5);
  return IMAGE_NAMES.slice(0, count).map((name, i) => {
    const [distro = 'linux', version = ''] = name.split('-');
    const driver = /nvidia-(\d+)/.exec(name)?.[1] ?? '';
    const tags = [
      { key: 'os_distro', value: distro, read_only: false },
      { key: 'os_version', value: version, read_only: false },
      { key: 'nvidia_driver', value: driver, read_only: false },
      { key: 'image_type', value: 'gpu', read_only: true },
    ];
    if (i % 2 === 0) tags.push({ key: 'build.pipeline', value: `images-${rng.int(100, 999)}`, read_only: false });
    if (name.endsWith('-ib')) tags.push({ key: 'infiniband', value: 'true', read_only: true });
    return { id: rng.uuid(), name, tags };
  });
}

const KEY_PURPOSES: readonly string[] = ['sftp', 'backup', 'etl', 'media', 'logs', 'ci'];
const KEY_USERS: readonly string[] = ['alice', 'bob', 'chen', 'dana', 'eve', 'farid', 'grace', 'hugo', 'ines'];

/** Keys created one after another over the past year: ids and creation times rise together. */
function generateStorageKeys(rng: Rng, count: number, now: Date): SimStorageKey[] {
  const start = now.getTime() - 365 * DAY_MS;
  const step = (364 * DAY_MS) / Math.max(count, 1);
  const keys: SimStorageKey[] = [];
  for (let i = 0; i < count; i++) {
    keys.push({
      id: 1001 + i,
      name: `${rng.pick(KEY_PURPOSES)}-${rng.pick(KEY_USERS)}-${String(i + 1).padStart(5, '0')}`,
      createdAt: wholeSeconds(start + i * step + rng.int(0, Math.floor(step / 2000)) * 1000),
    });
  }
  return keys;
}

function generateFreeFeatures(rng: Rng, now: Date): SimFreeFeature[] {
  const features = shuffled(rng, FREE_FEATURE_CATALOG).slice(0, rng.int(4, 6));
  let id = 5300;
  return features.map((feature) => {
    id += rng.int(1, 9);
    return {
      id,
      clientId: CLIENT_ID,
      featureId: feature.id,
      name: feature.name,
      service: feature.service,
      isFree: true,
      createdAt: wholeSeconds(now.getTime() - rng.int(10, 360) * DAY_MS - rng.int(0, 86_399) * 1000),
    };
  });
}
