import { isDecimalText } from './decimal.js';
import { buildCluster, clusterInterfaces } from './generate/clusters.js';
import { generateCompany } from './generate/company.js';
import type {
  SimCluster,
  SimCompany,
  SimFaasNamespace,
  SimFlavor,
  SimFreeFeature,
  SimImage,
  SimInferenceDeployment,
  SimInstance,
  SimK8sCluster,
  SimKeypair,
  SimListener,
  SimLoadBalancer,
  SimPool,
  SimScope,
  SimSecurityGroup,
  SimStorageKey,
  SimTag,
  SimVirtualCluster,
} from './model.js';
import type { SavedCompany } from './persistence.js';
import { hashString, Rng } from './random.js';
import { TaskStore, type SimTaskStart, type SimTaskView } from './tasks.js';
import { wholeSeconds } from './timestamps.js';

/** A helper was asked about something the company does not have. */
export class SimLookupError extends Error {
  override readonly name = 'SimLookupError';
}

export interface SimManifest {
  scopes: Array<{ project_id: number; region_id: number; security_groups: string[]; k8s_clusters: string[] }>;
  image_ids: string[];
  free_feature_ids: number[];
}

export interface SimScopeSummary {
  project_id: number;
  region_id: number;
  region_name: string;
  currency_code: string;
}

export interface AddClusterInput {
  name?: string;
  flavor?: string;
  servers_count?: number;
  image_id?: string;
  tags?: Record<string, string>;
  created_at?: Date;
}

export interface AddInstanceInput {
  name: string;
  flavor: string;
  tags?: Record<string, string>;
  created_at?: Date;
}

/**
 * The in-memory company shared by the HTTP routes and by tests. Every read first settles the
 * tasks that are due, so effects of asynchronous operations are visible without polling the task.
 */
export class SimState {
  readonly seed: number;
  /** Delay of new tasks (RUNNING -> FINISHED/ERROR). */
  taskDelayMs: number;
  readonly tasks: TaskStore;
  /** Randomness for what is created at run time (new ids), separate from the generated company. */
  readonly runtimeRng: Rng;
  private readonly company: SimCompany;
  private readonly scopeByKey = new Map<string, SimScope>();
  private readonly instanceById = new Map<string, SimInstance>();
  private readonly groupById = new Map<string, SimSecurityGroup>();
  /** The simulator's current time (the `now` option plus the time elapsed since start). */
  readonly clock: () => Date;
  /** Told after every change of the company (the demo saves it then). */
  onChange: (() => void) | undefined;

  /** `saved`: a company saved earlier (see persistence.ts) instead of a freshly generated one. */
  constructor(options: { seed: number; size: number; now: Date; taskDelayMs: number; clock: () => Date; saved?: SavedCompany }) {
    this.seed = options.seed;
    this.taskDelayMs = options.taskDelayMs;
    this.clock = options.clock;
    this.company = options.saved?.company ?? generateCompany(options.seed, options.size, options.now);
    this.runtimeRng = new Rng(options.saved?.runtimeRngPosition ?? hashString('runtime', options.seed));
    this.tasks = new TaskStore(options.clock, () => this.runtimeRng.uuid());
    for (const scope of this.company.scopes) {
      this.scopeByKey.set(scopeKey(scope.projectId, scope.regionId), scope);
      for (const group of scope.securityGroups) this.groupById.set(group.id, group);
      for (const instance of scope.instances) this.instanceById.set(instance.id, instance);
      for (const cluster of scope.clusters) this.indexServers(cluster);
    }
  }

  // ---- reading --------------------------------------------------------------------------

  manifest(): SimManifest {
    this.settle();
    return {
      scopes: this.company.scopes.map((s) => ({
        project_id: s.projectId,
        region_id: s.regionId,
        security_groups: s.securityGroups.map((g) => g.id),
        k8s_clusters: s.k8sClusters.map((k) => k.name),
      })),
      image_ids: this.company.images.map((i) => i.id),
      free_feature_ids: this.company.freeFeatures.map((f) => f.id),
    };
  }

  scopes(): SimScopeSummary[] {
    return this.company.scopes.map((s) => ({
      project_id: s.projectId,
      region_id: s.regionId,
      region_name: s.regionName,
      currency_code: s.currency,
    }));
  }

  projects(): Array<{ id: number; name: string }> {
    return this.company.projects.map((p) => ({ ...p }));
  }

  /** The scope, or undefined when the project + region pair is not one of the company's. */
  findScope(projectId: number, regionId: number): SimScope | undefined {
    this.settle();
    return this.scopeByKey.get(scopeKey(projectId, regionId));
  }

  scope(projectId: number, regionId: number): SimScope {
    const scope = this.findScope(projectId, regionId);
    if (!scope) throw new SimLookupError(`no scope for project ${projectId} and region ${regionId}`);
    return scope;
  }

  hasProject(projectId: number): boolean {
    return this.company.projects.some((p) => p.id === projectId);
  }

  /** The virtual machines of the scope, i.e. those listed through its security groups. */
  instances(projectId: number, regionId: number): SimInstance[] {
    return this.scope(projectId, regionId).instances;
  }

  /** Any instance or cluster server, by id. */
  instance(id: string): SimInstance | undefined {
    this.settle();
    return this.instanceById.get(id);
  }

  securityGroups(projectId: number, regionId: number): SimSecurityGroup[] {
    return this.scope(projectId, regionId).securityGroups;
  }

  securityGroup(id: string): SimSecurityGroup | undefined {
    return this.groupById.get(id);
  }

  clusters(projectId: number, regionId: number): SimCluster[] {
    return this.scope(projectId, regionId).clusters;
  }

  flavors(projectId: number, regionId: number): SimFlavor[] {
    return this.scope(projectId, regionId).flavors;
  }

  keypairs(projectId: number, regionId: number): SimKeypair[] {
    return this.scope(projectId, regionId).keypairs;
  }

  k8sClusters(projectId: number, regionId: number): SimK8sCluster[] {
    return this.scope(projectId, regionId).k8sClusters;
  }

  loadBalancers(projectId: number, regionId: number): SimLoadBalancer[] {
    return this.scope(projectId, regionId).loadBalancers;
  }

  pools(projectId: number, regionId: number): SimPool[] {
    return this.scope(projectId, regionId).pools;
  }

  faasNamespaces(projectId: number, regionId: number): SimFaasNamespace[] {
    return this.scope(projectId, regionId).faasNamespaces;
  }

  virtualClusters(projectId: number, regionId: number): SimVirtualCluster[] {
    return this.scope(projectId, regionId).virtualClusters;
  }

  inferenceDeployments(projectId: number): SimInferenceDeployment[] {
    this.settle();
    return this.company.inferenceDeployments.filter((d) => d.projectId === projectId);
  }

  /** A listener of one of the scope's load balancers. */
  listener(projectId: number, regionId: number, listenerId: string): SimListener | undefined {
    const scope = this.findScope(projectId, regionId);
    return scope?.loadBalancers.flatMap((lb) => lb.listeners).find((l) => l.id === listenerId);
  }

  images(): SimImage[] {
    return this.company.images;
  }

  image(id: string): SimImage | undefined {
    return this.company.images.find((i) => i.id === id);
  }

  /** Storage keys in id order. */
  storageKeys(): SimStorageKey[] {
    return this.company.storageKeys;
  }

  freeFeatures(): SimFreeFeature[] {
    return this.company.freeFeatures;
  }

  freeFeature(id: number): SimFreeFeature | undefined {
    return this.company.freeFeatures.find((f) => f.id === id);
  }

  getTask(id: string): SimTaskView | undefined {
    return this.tasks.get(id);
  }

  /** The company and the run-time id generator's position, to be saved (tasks are not part of it). */
  saved(): SavedCompany {
    this.settle();
    return { company: this.company, runtimeRngPosition: this.runtimeRng.position };
  }

  // ---- changing ---------------------------------------------------------------------------

  /** Applies the effects of the tasks that are due. */
  settle(): void {
    if (this.tasks.settle()) this.noteChange();
  }

  /** Something changed the company (the methods below call it; so does a route that edits a record). */
  noteChange(): void {
    this.onChange?.();
  }

  startTask(input: Omit<SimTaskStart, 'delayMs'>): SimTaskView {
    return this.tasks.start({ ...input, delayMs: this.taskDelayMs });
  }

  /** Stops an instance or cluster server of the scope; stopping a stopped one changes nothing. */
  stopInstance(projectId: number, regionId: number, instanceId: string): SimInstance {
    const instance = this.instance(instanceId);
    if (!instance || instance.projectId !== projectId || instance.regionId !== regionId) {
      throw new SimLookupError(`no instance ${instanceId} in project ${projectId} region ${regionId}`);
    }
    instance.status = 'SHUTOFF';
    this.noteChange();
    return instance;
  }

  /** Sets (or with null removes) a tag of an instance or cluster server. */
  setInstanceTag(instanceId: string, key: string, value: string | null): SimInstance {
    const instance = this.instance(instanceId);
    if (!instance) throw new SimLookupError(`no instance ${instanceId}`);
    instance.tags = setTag(instance.tags, key, value);
    this.noteChange();
    return instance;
  }

  /** Deletes an instance (a virtual machine of the scope, not a cluster server). */
  deleteInstance(projectId: number, regionId: number, instanceId: string): void {
    const scope = this.scope(projectId, regionId);
    const index = scope.instances.findIndex((i) => i.id === instanceId);
    if (index < 0) throw new SimLookupError(`no instance ${instanceId} in project ${projectId} region ${regionId}`);
    const [instance] = scope.instances.splice(index, 1);
    // Listed through its security groups: it leaves them too.
    for (const group of scope.securityGroups) group.instances = group.instances.filter((i) => i !== instance);
    this.instanceById.delete(instanceId);
    this.noteChange();
  }

  deleteKeypair(projectId: number, regionId: number, name: string): void {
    const scope = this.scope(projectId, regionId);
    const index = scope.keypairs.findIndex((k) => k.name === name);
    if (index < 0) throw new SimLookupError(`no keypair ${name} in project ${projectId} region ${regionId}`);
    scope.keypairs.splice(index, 1);
    this.noteChange();
  }

  /** Sets a flavor's hourly price (decimal text; the monthly one follows as x730), or hides it with null. */
  setFlavorPrice(projectId: number, regionId: number, flavorName: string, pricePerHour: string | null): SimFlavor {
    const flavor = this.flavors(projectId, regionId).find((f) => f.name === flavorName);
    if (!flavor) throw new SimLookupError(`no flavor ${flavorName} in project ${projectId} region ${regionId}`);
    if (pricePerHour !== null && !isDecimalText(pricePerHour)) {
      throw new Error(`price_per_hour must be a non-negative decimal text, got ${JSON.stringify(pricePerHour)}`);
    }
    flavor.pricePerHour = pricePerHour;
    this.noteChange();
    return flavor;
  }

  /** Adds an ACTIVE bare metal cluster at once (no task); unspecified parts are made up. */
  addCluster(projectId: number, regionId: number, input: AddClusterInput = {}): SimCluster {
    const scope = this.scope(projectId, regionId);
    const rng = this.runtimeRng;
    const flavor = input.flavor ?? scope.flavors.find((f) => f.kind === 'baremetal' && !f.disabled)?.name;
    if (!flavor) throw new SimLookupError(`no bare metal flavor in project ${projectId} region ${regionId}`);
    const image = input.image_id ?? this.company.images[0]?.id;
    if (!image) throw new SimLookupError('the company has no image');
    const cluster = buildCluster(rng, scope, {
      name: input.name ?? `added-cluster-${scope.clusters.length + 1}`,
      flavorName: flavor,
      imageId: image,
      serversCount: input.servers_count ?? 1,
      createdAt: input.created_at ?? wholeSeconds(this.clock().getTime()),
      creatorTaskId: rng.uuid(),
      interfaces: clusterInterfaces(rng, scope, false),
      tags: tagsFromInput(input.tags),
    });
    this.insertCluster(scope, cluster);
    return cluster;
  }

  /** Adds a running virtual machine at once (no task), listed through the scope's first security group. */
  addInstance(projectId: number, regionId: number, input: AddInstanceInput): SimInstance {
    const scope = this.scope(projectId, regionId);
    const group = scope.securityGroups[0];
    if (!group) throw new SimLookupError(`no security group in project ${projectId} region ${regionId}`);
    if (!scope.flavors.some((f) => f.name === input.flavor)) throw new SimLookupError(`no flavor ${input.flavor} in project ${projectId} region ${regionId}`);
    const instance: SimInstance = {
      id: this.runtimeRng.uuid(),
      name: input.name,
      description: '',
      projectId,
      regionId,
      createdAt: input.created_at ?? wholeSeconds(this.clock().getTime()),
      flavorName: input.flavor,
      status: 'ACTIVE',
      tags: tagsFromInput(input.tags),
      securityGroupIds: [group.id],
      sshKeyName: null,
      ordinal: scope.nextOrdinal++,
      external: false,
      clusterId: null,
    };
    scope.instances.push(instance);
    group.instances.push(instance);
    this.instanceById.set(instance.id, instance);
    this.noteChange();
    return instance;
  }

  /** Lists a built cluster and indexes its servers (used by addCluster and the create task). */
  insertCluster(scope: SimScope, cluster: SimCluster): void {
    scope.clusters.push(cluster);
    this.indexServers(cluster);
    this.noteChange();
  }

  createStorageKey(name: string): SimStorageKey {
    const key: SimStorageKey = {
      id: this.company.nextStorageKeyId++,
      name,
      createdAt: wholeSeconds(this.clock().getTime()),
    };
    this.company.storageKeys.push(key);
    this.noteChange();
    return key;
  }

  /** Removes a storage key; false when there is none with that id. */
  deleteStorageKey(id: number): boolean {
    const keys = this.company.storageKeys;
    const index = keys.findIndex((k) => k.id === id);
    if (index < 0) return false;
    keys.splice(index, 1);
    this.noteChange();
    return true;
  }

  addInferenceDeployment(deployment: SimInferenceDeployment): void {
    this.company.inferenceDeployments.push(deployment);
    this.noteChange();
  }

  private indexServers(cluster: SimCluster): void {
    for (const server of cluster.servers) this.instanceById.set(server.id, server);
  }
}

function scopeKey(projectId: number, regionId: number): string {
  return `${projectId}/${regionId}`;
}

export function tagsFromInput(tags: Record<string, string> | undefined): SimTag[] {
  return Object.entries(tags ?? {}).map(([key, value]) => ({ key, value, read_only: false }));
}

function setTag(tags: SimTag[], key: string, value: string | null): SimTag[] {
  const rest = tags.filter((t) => t.key !== key);
  if (value === null) return rest;
  const existing = tags.find((t) => t.key === key);
  const updated: SimTag = { key, value, read_only: existing?.read_only ?? false };
  return existing ? tags.map((t) => (t.key === key ? updated : t)) : [...tags, updated];
}
