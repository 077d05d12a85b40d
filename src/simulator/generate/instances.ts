import { CPU_FLAVORS, SECURITY_GROUP_NAMES } from '../catalog.js';
import type { SimFlavor, SimInstance, SimKeypair, SimSecurityGroup } from '../model.js';
import { Rng } from '../random.js';
import { DAY_MS, wholeSeconds } from '../timestamps.js';
import { generateTags, pickTeam, type TagProfile } from './tags.js';

/** A security group holds at most about this many instances, whatever the size. */
export const SECURITY_GROUP_TARGET = 1700;
const SECOND_GROUP_SHARE = 0.12;

const ROLES: readonly string[] = ['train', 'infer', 'notebook', 'etl', 'eval', 'batch', 'web', 'finetune'];

export interface InstanceGenerationInput {
  rng: Rng;
  projectId: number;
  regionId: number;
  count: number;
  now: Date;
  flavors: readonly SimFlavor[];
  keypairs: readonly SimKeypair[];
  k8sClusterNames: readonly string[];
}

export function securityGroupCount(rng: Rng, instanceCount: number): number {
  return Math.max(rng.int(2, 4), Math.ceil((instanceCount * (1 + SECOND_GROUP_SHARE)) / SECURITY_GROUP_TARGET));
}

export function generateSecurityGroups(rng: Rng, projectId: number, regionId: number, count: number): SimSecurityGroup[] {
  const groups: SimSecurityGroup[] = [];
  for (let i = 0; i < count; i++) {
    const name = SECURITY_GROUP_NAMES[i] ?? `workers-${String(i).padStart(3, '0')}`;
    groups.push({ id: rng.uuid(), name, projectId, regionId, instances: [] });
  }
  return groups;
}

const slugCache = new Map<string, string>();

/** Team names as they appear in resource names. */
export function nameSlug(value: string): string {
  const cached = slugCache.get(value);
  if (cached !== undefined) return cached;
  const slug = computeSlug(value);
  if (slugCache.size < 1000) slugCache.set(value, slug);
  return slug;
}

function computeSlug(value: string): string {
  const slug = value
    .normalize('NFKD')
    .replace(/[^\x20-\x7e]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
  return slug === '' ? 'team' : slug;
}

/** Fills the groups with `count` instances: each in one group, about 12% in a second one. */
export function generateInstances(input: InstanceGenerationInput, groups: SimSecurityGroup[]): SimInstance[] {
  const { rng, now } = input;
  const pricedVm = input.flavors.filter((f) => f.kind === 'vm' && !f.disabled && f.pricePerHour !== null);
  const hiddenVm = input.flavors.filter((f) => f.kind === 'vm' && f.pricePerHour === null);
  const instances: SimInstance[] = [];
  const width = Math.max(3, String(input.count).length);
  for (let i = 0; i < input.count; i++) {
    const roll = rng.float();
    const profile: TagProfile = roll < 0.15 ? 'untagged' : roll < 0.27 ? 'idle' : 'normal';
    const team = pickTeam(rng);
    const role = rng.pick(ROLES);
    const slug = nameSlug(team.value);
    const serial = String(i).padStart(width, '0');
    const name = profile === 'untagged' ? `tmp-${role}-${serial}` : `${slug}-${role}-${serial}`;
    const ageDays = profile === 'idle' ? rng.int(200, 360) : rng.int(1, 364);
    const createdAt = wholeSeconds(now.getTime() - ageDays * DAY_MS - rng.int(0, 86_399) * 1000);
    const flavorRoll = rng.float();
    const flavorName =
      flavorRoll < 0.82 && pricedVm.length > 0
        ? rng.pick(pricedVm).name
        : flavorRoll < 0.87 && hiddenVm.length > 0
          ? rng.pick(hiddenVm).name
          : rng.pick(CPU_FLAVORS).name;
    const stopped = profile === 'idle' ? rng.chance(0.45) : rng.chance(0.05);
    const primary = i % groups.length;
    const groupIndexes = [primary];
    if (groups.length > 1 && rng.chance(SECOND_GROUP_SHARE)) {
      groupIndexes.push((primary + 1 + rng.int(0, groups.length - 2)) % groups.length);
    }
    const instance: SimInstance = {
      id: rng.uuid(),
      name,
      description: profile === 'untagged' ? '' : `${role} node of ${slug}`,
      projectId: input.projectId,
      regionId: input.regionId,
      createdAt,
      flavorName,
      status: stopped ? 'SHUTOFF' : 'ACTIVE',
      tags: generateTags(rng, profile, { now, k8sClusterNames: input.k8sClusterNames }, team),
      securityGroupIds: groupIndexes.map((g) => (groups[g] as SimSecurityGroup).id),
      sshKeyName: input.keypairs.length > 0 && rng.chance(0.9) ? rng.pick(input.keypairs).name : null,
      ordinal: i,
      external: rng.chance(0.12),
      clusterId: null,
    };
    for (const g of groupIndexes) (groups[g] as SimSecurityGroup).instances.push(instance);
    instances.push(instance);
  }
  return instances;
}
