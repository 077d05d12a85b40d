import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import type { SimCompany, SimInstance, SimScope } from './model.js';

/**
 * The demo company kept (`npm start` in simulator mode: in its database, src/demo/persistence.ts):
 * the whole company as JSON, with the position of the generator that invents new ids, so that a
 * restart continues the same company.
 * Saved whole, not as a journal of changes: every change (history steps, stops, tasks that
 * finished, anything a route changed) is in it without each change being recorded separately.
 * Tasks still running when it is saved are not kept (their effects never happen).
 */

export const STATE_FILE_FORMAT = 'cloudtally-demo-simulator';
export const STATE_FILE_VERSION = 1;

const date = z.iso.datetime({ offset: true }).transform((text) => new Date(text));
const int = z.int();
const tag = z.object({ key: z.string(), value: z.string(), read_only: z.boolean() });

const instance = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  projectId: int,
  regionId: int,
  createdAt: date,
  flavorName: z.string(),
  status: z.enum(['ACTIVE', 'SHUTOFF']),
  tags: z.array(tag),
  securityGroupIds: z.array(z.string()),
  sshKeyName: z.string().nullable(),
  ordinal: int,
  external: z.boolean(),
  clusterId: z.string().nullable(),
});

const flavor = z.object({
  name: z.string(),
  kind: z.enum(['baremetal', 'vm']),
  resourceClass: z.string(),
  vcpus: int,
  ramMiB: int,
  hardware: z.object({ cpu: z.string(), disk: z.string(), ephemeral: z.string(), gpu: z.string(), network: z.string(), ram: z.string() }),
  disabled: z.boolean(),
  capacity: int,
  currency: z.string(),
  pricePerHour: z.string().nullable(),
});

const iface = z.object({ type: z.string(), network_id: z.string(), subnet_id: z.string(), port_id: z.string() });

const cluster = z.object({
  id: z.string(),
  name: z.string(),
  projectId: int,
  regionId: int,
  createdAt: date,
  creatorTaskId: z.string(),
  taskId: z.string().nullable(),
  taskStatus: z.string().nullable(),
  status: z.string(),
  flavorName: z.string(),
  imageId: z.string(),
  interfaces: z.array(iface),
  password: z.string().nullable(),
  userData: z.string().nullable(),
  username: z.string().nullable(),
  sshKeyName: z.string().nullable(),
  tags: z.array(tag),
  servers: z.array(instance),
});

const keypair = z.object({
  id: z.string(),
  name: z.string(),
  projectId: int,
  regionId: int,
  publicKey: z.string(),
  fingerprint: z.string(),
  privateKey: z.string().nullable(),
  sharedInProject: z.boolean(),
  createdAt: date,
});

const priceLine = z.object({ baseHourUnits: z.number(), discountPercent: z.number(), taxPercent: z.number() });

const listener = z.object({
  id: z.string(),
  name: z.string(),
  loadBalancerId: z.string(),
  protocol: z.string(),
  protocolPort: int,
  adminStateUp: z.boolean(),
  allowedCidrs: z.array(z.string()),
  connectionLimit: int,
  creatorTaskId: z.string(),
  insertHeaders: z.record(z.string(), z.string()),
  operatingStatus: z.string(),
  provisioningStatus: z.string(),
  poolCount: int,
  secretId: z.string().nullable(),
  sniSecretIds: z.array(z.string()),
  timeoutClientData: int,
  timeoutMemberConnect: int,
  timeoutMemberData: int,
  users: z.array(z.object({ username: z.string(), encrypted_password: z.string() })),
});

const scope = z.object({
  projectId: int,
  regionId: int,
  regionName: z.string(),
  currency: z.string(),
  networks: z.array(z.object({ networkId: z.string(), subnetId: z.string(), name: z.string(), octet: int })),
  /** Members are not stored twice: they come from the instances' securityGroupIds. */
  securityGroups: z.array(z.object({ id: z.string(), name: z.string(), projectId: int, regionId: int })),
  instances: z.array(instance),
  flavors: z.array(flavor),
  clusters: z.array(cluster),
  keypairs: z.array(keypair),
  k8sClusters: z.array(
    z.object({ name: z.string(), currency: z.string(), instances: z.array(priceLine), publicips: z.array(priceLine), volumes: z.array(priceLine) }),
  ),
  loadBalancers: z.array(
    z.object({ id: z.string(), name: z.string(), flavor: z.string(), createdAt: date, tags: z.array(tag), listeners: z.array(listener) }),
  ),
  pools: z.array(
    z.object({
      id: z.string(),
      name: z.string(),
      protocol: z.string(),
      lbAlgorithm: z.string(),
      loadBalancerId: z.string().nullable(),
      listenerId: z.string().nullable(),
      memberCount: int,
      createdAt: date,
    }),
  ),
  faasNamespaces: z.array(z.object({ name: z.string(), functions: z.array(z.string()) })),
  virtualClusters: z.array(
    z.object({ id: z.string(), name: z.string(), flavor: z.string(), serversCount: int, tags: z.array(tag), createdAt: date }),
  ),
  nextOrdinal: int,
});

const StateFileSchema = z.object({
  format: z.literal(STATE_FILE_FORMAT),
  version: z.literal(STATE_FILE_VERSION),
  seed: int,
  size: int,
  savedAt: date,
  /** Position of the generator of run-time ids (SimState.runtimeRng). */
  runtimeRngPosition: int.min(0).max(0xffff_ffff),
  company: z.object({
    clientId: int,
    projects: z.array(z.object({ id: int, name: z.string() })),
    scopes: z.array(scope),
    images: z.array(z.object({ id: z.string(), name: z.string(), tags: z.array(tag) })),
    storageKeys: z.array(z.object({ id: int, name: z.string(), createdAt: date })),
    nextStorageKeyId: int,
    freeFeatures: z.array(
      z.object({ id: int, clientId: int, featureId: int, name: z.string(), service: z.string(), isFree: z.boolean(), createdAt: date }),
    ),
    inferenceDeployments: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        projectId: int,
        applicationName: z.string(),
        regions: z.array(int),
        components: z.array(z.string()),
        createdAt: date,
      }),
    ),
  }),
});

export interface SavedCompany {
  company: SimCompany;
  runtimeRngPosition: number;
}

/** What loading found: no file yet, the saved company, or a file that cannot be used (and why). */
export type LoadOutcome =
  | { outcome: 'absent' }
  | ({ outcome: 'restored' } & SavedCompany)
  | { outcome: 'unusable'; problem: string };

/** The company as the JSON text of the state file (Dates become ISO strings). */
export function serializeCompany(saved: SavedCompany, savedAt: Date): string {
  const { company } = saved;
  const file = {
    format: STATE_FILE_FORMAT,
    version: STATE_FILE_VERSION,
    seed: company.seed,
    size: company.size,
    savedAt,
    runtimeRngPosition: saved.runtimeRngPosition,
    company: {
      clientId: company.clientId,
      projects: company.projects,
      scopes: company.scopes.map((s) => ({
        ...s,
        securityGroups: s.securityGroups.map(({ id, name, projectId, regionId }) => ({ id, name, projectId, regionId })),
        faasNamespaces: s.faasNamespaces.map((n) => ({ name: n.name, functions: [...n.functions] })),
      })),
      images: company.images,
      storageKeys: company.storageKeys,
      nextStorageKeyId: company.nextStorageKeyId,
      freeFeatures: company.freeFeatures,
      inferenceDeployments: company.inferenceDeployments,
    },
  };
  return JSON.stringify(file);
}

/**
 * The company saved in the file text, when it is one of ours and for this seed and size (a file
 * of another company would show a different demo under the same name).
 */
export function parseCompany(text: string, expected: { seed: number; size: number }): LoadOutcome {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    return { outcome: 'unusable', problem: `not JSON (${(error as Error).message})` };
  }
  const parsed = StateFileSchema.safeParse(raw);
  if (!parsed.success) {
    const first = parsed.error.issues.slice(0, 3).map((i) => `${i.path.join('.') || '(file)'}: ${i.message}`);
    return { outcome: 'unusable', problem: `not a saved demo company (${first.join('; ')})` };
  }
  const file = parsed.data;
  if (file.seed !== expected.seed || file.size !== expected.size) {
    return {
      outcome: 'unusable',
      problem: `saved for seed ${file.seed} and size ${file.size}, but the simulator runs with seed ${expected.seed} and size ${expected.size}`,
    };
  }
  const scopes: SimScope[] = file.company.scopes.map((s) => {
    const groups = s.securityGroups.map((g) => ({ ...g, instances: [] as SimInstance[] }));
    const byId = new Map(groups.map((g) => [g.id, g]));
    for (const vm of s.instances) for (const id of vm.securityGroupIds) byId.get(id)?.instances.push(vm);
    return { ...s, securityGroups: groups, faasNamespaces: s.faasNamespaces.map((n) => ({ name: n.name, functions: new Set(n.functions) })) };
  });
  return {
    outcome: 'restored',
    runtimeRngPosition: file.runtimeRngPosition,
    company: { ...file.company, seed: file.seed, size: file.size, scopes },
  };
}

/** Where a company is kept: a file, or a database row (src/demo/persistence.ts). */
export interface CompanyStore {
  /** Where it is, as the logs name it. */
  readonly where: string;
  /** The saved text; null when nothing was saved yet. Throws when it cannot be read. */
  read(): Promise<string | null>;
  /** Replaces the saved text, whole or not at all. */
  write(text: string): Promise<void>;
}

/** A company kept in a JSON file, replaced atomically. */
export function fileStore(file: string): CompanyStore {
  return {
    where: file,
    async read() {
      try {
        return await readFile(file, 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw error;
      }
    },
    write: (text) => writeFileAtomically(file, text),
  };
}

export async function loadCompany(store: CompanyStore, expected: { seed: number; size: number }): Promise<LoadOutcome> {
  let text: string | null;
  try {
    text = await store.read();
  } catch (error) {
    return { outcome: 'unusable', problem: `cannot be read (${(error as Error).message})` };
  }
  return text === null ? { outcome: 'absent' } : parseCompany(text, expected);
}

/** Writes the whole file or nothing: a temporary file beside it, then a rename over it. */
export async function writeFileAtomically(file: string, text: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    await writeFile(temporary, text, { encoding: 'utf8', flush: true });
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => undefined);
    throw new Error(`cannot save the demo company to ${file}: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * Saves after each change, never two writes at once: changes during a write are saved by one
 * more write after it. `flush()` waits until everything changed so far is saved.
 */
export class StateSaver {
  private dirty = false;
  private failed = false;
  private writing: Promise<void> | null = null;

  constructor(
    private readonly store: CompanyStore,
    private readonly snapshot: () => string,
    private readonly onError: (error: Error) => void,
  ) {}

  changed(): void {
    this.dirty = true;
    this.writing ??= this.drain();
  }

  /** Waits for the saves under way; saves again if the last one failed. Nothing changed: nothing written. */
  async flush(): Promise<void> {
    if (this.failed) this.dirty = true;
    if (this.dirty) this.writing ??= this.drain();
    await this.writing;
  }

  private async drain(): Promise<void> {
    // Let the rest of the current change (e.g. a whole request or history step) happen first.
    await new Promise((resolve) => setImmediate(resolve));
    while (this.dirty) {
      this.dirty = false;
      try {
        await this.store.write(this.snapshot());
        this.failed = false;
      } catch (error) {
        this.failed = true;
        this.onError(error as Error);
      }
    }
    this.writing = null;
  }
}
