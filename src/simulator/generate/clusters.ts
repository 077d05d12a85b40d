import type { SimCluster, SimImage, SimInstance, SimInterface, SimScope, SimTag } from '../model.js';
import { BASE64_ALPHABET, type Rng } from '../random.js';
import { DAY_MS, wholeSeconds } from '../timestamps.js';
import { nameSlug } from './instances.js';
import { generateTags, pickTeam } from './tags.js';

/** What a new bare metal cluster is made of (from the generator, the create API or a test). */
export interface ClusterBlueprint {
  /** Made up when absent. */
  id?: string;
  name: string;
  flavorName: string;
  imageId: string;
  serversCount: number;
  createdAt: Date;
  creatorTaskId: string;
  taskId?: string | null;
  taskStatus?: string | null;
  interfaces: SimInterface[];
  password?: string | null;
  userData?: string | null;
  username?: string | null;
  sshKeyName?: string | null;
  tags: SimTag[];
  /** Security groups of the servers; the scope's first group when empty. */
  securityGroupIds?: string[];
}

/** Builds the cluster and its servers (ACTIVE instance records carrying the cluster's tags). */
export function buildCluster(rng: Rng, scope: SimScope, blueprint: ClusterBlueprint): SimCluster {
  const id = blueprint.id ?? rng.uuid();
  const groupIds =
    blueprint.securityGroupIds && blueprint.securityGroupIds.length > 0
      ? blueprint.securityGroupIds
      : scope.securityGroups.slice(0, 1).map((g) => g.id);
  const external = blueprint.interfaces.some((i) => i.type === 'external');
  const servers: SimInstance[] = [];
  for (let k = 0; k < blueprint.serversCount; k++) {
    servers.push({
      id: rng.uuid(),
      name: `${blueprint.name}-${k + 1}`,
      description: `server ${k + 1} of cluster ${blueprint.name}`,
      projectId: scope.projectId,
      regionId: scope.regionId,
      createdAt: blueprint.createdAt,
      flavorName: blueprint.flavorName,
      status: 'ACTIVE',
      tags: blueprint.tags.map((t) => ({ ...t })),
      securityGroupIds: [...groupIds],
      sshKeyName: blueprint.sshKeyName ?? null,
      ordinal: scope.nextOrdinal++,
      external,
      clusterId: id,
    });
  }
  return {
    id,
    name: blueprint.name,
    projectId: scope.projectId,
    regionId: scope.regionId,
    createdAt: blueprint.createdAt,
    creatorTaskId: blueprint.creatorTaskId,
    taskId: blueprint.taskId ?? null,
    taskStatus: blueprint.taskStatus ?? null,
    status: 'ACTIVE',
    flavorName: blueprint.flavorName,
    imageId: blueprint.imageId,
    interfaces: blueprint.interfaces,
    password: blueprint.password ?? null,
    userData: blueprint.userData ?? null,
    username: blueprint.username ?? null,
    sshKeyName: blueprint.sshKeyName ?? null,
    tags: blueprint.tags,
    servers,
  };
}

/** A subnet interface (and sometimes an external one) on the scope's networks. */
export function clusterInterfaces(rng: Rng, scope: SimScope, withExternal: boolean): SimInterface[] {
  const network = rng.pick(scope.networks);
  const out: SimInterface[] = [
    { type: 'subnet', network_id: network.networkId, subnet_id: network.subnetId, port_id: rng.uuid() },
  ];
  if (withExternal) {
    const publicNet = scope.networks[scope.networks.length - 1] ?? network;
    out.push({ type: 'external', network_id: publicNet.networkId, subnet_id: publicNet.subnetId, port_id: rng.uuid() });
  }
  return out;
}

const PURPOSES: readonly string[] = ['train', 'pretrain', 'finetune', 'infer', 'eval', 'research'];

/** cloud-init text that holds a password hash, as real user_data often does (never decode or log it). */
function userDataWithHash(rng: Rng): string {
  const text = `#cloud-config\nusers:\n  - name: ops\n    passwd: $6$rounds=4096$${rng.text(16, BASE64_ALPHABET.slice(0, 62))}$${rng.text(43, BASE64_ALPHABET.slice(0, 62))}\n`;
  return Buffer.from(text, 'utf8').toString('base64');
}

export interface ClusterGenerationInput {
  rng: Rng;
  scope: SimScope;
  count: number;
  now: Date;
  images: readonly SimImage[];
  /** Whether this scope shows the special cases (a clean-up task, a disabled flavor). */
  showcase: boolean;
}

export function generateClusters(input: ClusterGenerationInput): SimCluster[] {
  const { rng, scope, now } = input;
  const enabledBm = scope.flavors.filter((f) => f.kind === 'baremetal' && !f.disabled);
  const disabledBm = scope.flavors.filter((f) => f.kind === 'baremetal' && f.disabled);
  const clusters: SimCluster[] = [];
  for (let j = 0; j < input.count; j++) {
    const team = pickTeam(rng);
    const name = `${nameSlug(team.value)}-${rng.pick(PURPOSES)}-${String(j + 1).padStart(2, '0')}`;
    const useDisabled = input.showcase && j === 0 && disabledBm.length > 0;
    const flavor = useDisabled ? rng.pick(disabledBm) : rng.pick(enabledBm);
    const secretsKind = j % 3;
    const cleanUp = input.showcase && j === 1;
    const userData = secretsKind === 0 ? userDataWithHash(rng) : null;
    const password = secretsKind === 1 ? `Gpu-${rng.text(12, BASE64_ALPHABET.slice(0, 62))}` : null;
    clusters.push(
      buildCluster(rng, scope, {
        name,
        flavorName: flavor.name,
        imageId: rng.pick(input.images).id,
        serversCount: rng.int(1, 4),
        createdAt: wholeSeconds(now.getTime() - rng.int(5, 360) * DAY_MS - rng.int(0, 86_399) * 1000),
        creatorTaskId: rng.uuid(),
        taskId: cleanUp ? rng.uuid() : null,
        taskStatus: cleanUp ? 'CLUSTER_CLEAN_UP' : null,
        interfaces: clusterInterfaces(rng, scope, rng.chance(0.4)),
        password,
        userData,
        username: secretsKind === 1 ? 'ubuntu' : null,
        sshKeyName: scope.keypairs.length > 0 ? rng.pick(scope.keypairs).name : null,
        tags: generateTags(rng, rng.chance(0.1) ? 'untagged' : 'normal', { now, k8sClusterNames: [] }, team),
      }),
    );
  }
  return clusters;
}
