import { FAAS_FUNCTIONS, FAAS_NAMESPACES, GPU_FLAVORS, K8S_CLUSTER_NAMES, KEYPAIR_NAMES, type RegionSpec } from '../catalog.js';
import { centsToText } from '../decimal.js';
import type {
  SimFaasNamespace,
  SimFlavor,
  SimK8sCluster,
  SimKeypair,
  SimListener,
  SimLoadBalancer,
  SimNetwork,
  SimPriceLine,
} from '../model.js';
import { BASE64_ALPHABET, HEX_ALPHABET, type Rng } from '../random.js';
import { DAY_MS, wholeSeconds } from '../timestamps.js';
import { shuffled } from './shuffle.js';

/** The generators for the smaller parts of a scope. */

export function generateNetworks(rng: Rng, scopeIndex: number): SimNetwork[] {
  return [
    { networkId: rng.uuid(), subnetId: rng.uuid(), name: 'private-net', octet: 10 + scopeIndex * 2 },
    { networkId: rng.uuid(), subnetId: rng.uuid(), name: 'public', octet: 11 + scopeIndex * 2 },
  ];
}

/** Every catalog GPU flavor, priced for the region (cents rounded), with a per-scope capacity. */
export function generateFlavors(rng: Rng, region: RegionSpec): SimFlavor[] {
  return GPU_FLAVORS.map((spec) => {
    const cents = spec.hourCents === null ? null : Math.round((spec.hourCents * region.pricePercent) / 100);
    return {
      name: spec.name,
      kind: spec.kind,
      resourceClass: spec.resourceClass,
      vcpus: spec.vcpus,
      ramMiB: spec.ramMiB,
      hardware: { ...spec.hardware },
      disabled: spec.disabled,
      capacity: spec.disabled ? 0 : spec.kind === 'baremetal' ? rng.int(0, 12) : rng.int(4, 64),
      currency: region.currency,
      pricePerHour: cents === null ? null : centsToText(cents),
    };
  });
}

export function generateKeypairs(
  rng: Rng,
  projectId: number,
  regionId: number,
  count: number,
  now: Date,
  withPrivateKey: boolean,
): SimKeypair[] {
  const names = shuffled(rng, KEYPAIR_NAMES);
  const keypairs: SimKeypair[] = [];
  for (let i = 0; i < count; i++) {
    const name = names[i] ?? `deploy-key-${String(i).padStart(4, '0')}`;
    const ed25519 = rng.chance(0.7);
    const publicKey = ed25519
      ? `ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI${rng.text(43, BASE64_ALPHABET)} ${name}`
      : `ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQ${rng.text(200, BASE64_ALPHABET)} ${name}`;
    const fingerprint = Array.from({ length: 16 }, () => rng.text(2, HEX_ALPHABET)).join(':');
    keypairs.push({
      id: rng.uuid(),
      name,
      projectId,
      regionId,
      publicKey,
      fingerprint,
      // One key created by the API still carries its private key: the collector must strip it.
      privateKey:
        withPrivateKey && name === 'ci-deploy'
          ? `-----BEGIN OPENSSH PRIVATE KEY-----\nSIMULATED-${rng.text(64, BASE64_ALPHABET)}\n-----END OPENSSH PRIVATE KEY-----\n`
          : null,
      sharedInProject: rng.chance(0.4),
      createdAt: wholeSeconds(now.getTime() - rng.int(20, 360) * DAY_MS - rng.int(0, 86_399) * 1000),
    });
  }
  return keypairs;
}

export function generateK8sClusters(rng: Rng, count: number, currency: string): SimK8sCluster[] {
  const names = shuffled(rng, K8S_CLUSTER_NAMES);
  const out: SimK8sCluster[] = [];
  const line = (minCents: number, maxCents: number): SimPriceLine => ({
    baseHourUnits: rng.int(minCents, maxCents) * 100,
    discountPercent: rng.pick([0, 0, 5, 10]),
    taxPercent: 0,
  });
  for (let i = 0; i < count; i++) {
    out.push({
      name: names[i] ?? `k8s-pool-${String(i).padStart(3, '0')}`,
      currency,
      instances: Array.from({ length: rng.int(1, 3) }, () => line(150, 2600)),
      publicips: Array.from({ length: rng.int(0, 2) }, () => line(1, 2)),
      volumes: Array.from({ length: rng.int(1, 2) }, () => line(2, 40)),
    });
  }
  return out;
}

function listener(rng: Rng, loadBalancerId: string, name: string, protocol: string, port: number): SimListener {
  return {
    id: rng.uuid(),
    name,
    loadBalancerId,
    protocol,
    protocolPort: port,
    adminStateUp: true,
    allowedCidrs: protocol === 'HTTP' ? [] : ['0.0.0.0/0'],
    connectionLimit: 100_000,
    creatorTaskId: rng.uuid(),
    insertHeaders: protocol === 'HTTP' ? { 'X-Forwarded-For': 'true' } : {},
    operatingStatus: 'ONLINE',
    provisioningStatus: 'ACTIVE',
    poolCount: 1,
    secretId: protocol === 'TERMINATED_HTTPS' ? rng.uuid() : null,
    sniSecretIds: [],
    timeoutClientData: 50_000,
    timeoutMemberConnect: 5_000,
    timeoutMemberData: 50_000,
    users: [],
  };
}

export function generateLoadBalancer(rng: Rng, now: Date): SimLoadBalancer {
  const id = rng.uuid();
  return {
    id,
    name: 'lb-public-web',
    flavor: 'lb1-2-4',
    createdAt: wholeSeconds(now.getTime() - rng.int(30, 300) * DAY_MS),
    tags: [{ key: 'team', value: 'platform', read_only: false }],
    listeners: [listener(rng, id, 'http-80', 'HTTP', 80), listener(rng, id, 'https-443', 'TERMINATED_HTTPS', 443)],
  };
}

/** A listener built from a create request (used by the load balancer create task). */
export function newListener(
  rng: Rng,
  loadBalancerId: string,
  input: {
    name: string;
    protocol: string;
    protocol_port: number;
    admin_state_up?: boolean | undefined;
    allowed_cidrs?: string[] | null | undefined;
    connection_limit?: number | undefined;
    insert_headers?: Record<string, string> | undefined;
    secret_id?: string | null | undefined;
    sni_secret_id?: string[] | undefined;
    timeout_client_data?: number | null | undefined;
    timeout_member_connect?: number | null | undefined;
    timeout_member_data?: number | null | undefined;
    user_list?: Array<{ username: string; encrypted_password: string }> | undefined;
  },
  creatorTaskId: string,
): SimListener {
  const base = listener(rng, loadBalancerId, input.name, input.protocol, input.protocol_port);
  return {
    ...base,
    creatorTaskId,
    adminStateUp: input.admin_state_up ?? true,
    allowedCidrs: input.allowed_cidrs ?? [],
    connectionLimit: input.connection_limit ?? 100_000,
    insertHeaders: input.insert_headers ?? {},
    poolCount: 0,
    secretId: input.secret_id ?? null,
    sniSecretIds: input.sni_secret_id ?? [],
    timeoutClientData: input.timeout_client_data ?? 50_000,
    timeoutMemberConnect: input.timeout_member_connect ?? 5_000,
    timeoutMemberData: input.timeout_member_data ?? 50_000,
    users: input.user_list ?? [],
  };
}

export function generateFaasNamespaces(rng: Rng): SimFaasNamespace[] {
  const names = shuffled(rng, FAAS_NAMESPACES).slice(0, rng.int(1, 2));
  return names.map((name) => ({
    name,
    functions: new Set(shuffled(rng, FAAS_FUNCTIONS).slice(0, rng.int(2, 4))),
  }));
}
