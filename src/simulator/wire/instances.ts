import type { InstanceWire } from '../../cloud/schemas/responses.js';
import { CPU_FLAVORS } from '../catalog.js';
import type { SimInstance, SimScope } from '../model.js';
import { derivedRng, HEX_ALPHABET } from '../random.js';
import { formatTimestamp, NOT_ENDED } from '../timestamps.js';
import { legacyTags, legacyTime, oddRecord, tagList, type JsonObject, type WireContext } from './common.js';

/**
 * Instance and cluster server records. Values that never change (volumes, ports, addresses, the
 * DDoS profile) are derived from the instance id and the seed, so every read agrees.
 */

export function vmState(instance: SimInstance): string {
  return instance.status === 'SHUTOFF' ? 'stopped' : 'active';
}

function privateAddress(scope: SimScope, instance: SimInstance): { ip: string; subnetId: string; network: string } {
  const network = scope.networks[0];
  const n = instance.ordinal + 10;
  return {
    ip: `10.${network?.octet ?? 10}.${(n >> 8) & 255}.${n & 255}`,
    subnetId: network?.subnetId ?? '',
    network: network?.name ?? 'private-net',
  };
}

function publicAddress(scope: SimScope, instance: SimInstance): { ip: string; subnetId: string } {
  const network = scope.networks[scope.networks.length - 1];
  const n = instance.ordinal + 10;
  return { ip: `185.${network?.octet ?? 11}.${(n >> 8) & 255}.${n & 255}`, subnetId: network?.subnetId ?? '' };
}

function flavorOf(scope: SimScope, instance: SimInstance, asServer: boolean): NonNullable<InstanceWire['flavor']> {
  const gpu = scope.flavors.find((f) => f.name === instance.flavorName);
  const cpu = CPU_FLAVORS.find((f) => f.name === instance.flavorName);
  const vcpus = gpu?.vcpus ?? cpu?.vcpus ?? 1;
  const ram = gpu?.ramMiB ?? cpu?.ramMiB ?? 1024;
  const base = {
    flavor_id: instance.flavorName,
    flavor_name: instance.flavorName,
    architecture: 'x86_64',
    os_type: 'linux',
    ram,
    vcpus,
  };
  if (asServer) {
    const hw = gpu?.hardware;
    return {
      ...base,
      resource_class: gpu?.resourceClass ?? instance.flavorName,
      hardware_description: {
        cpu: hw?.cpu ?? `${vcpus} vCPU`,
        disk: hw?.disk ?? '',
        gpu: hw?.gpu ?? '',
        license: '',
        network: hw?.network ?? '',
        ram: hw?.ram ?? `${Math.round(ram / 1024)}GB`,
      },
    };
  }
  return { ...base, hardware_description: { ram: `${ram} MiB`, vcpus: `${vcpus} vCPU` } };
}

function ddosProfile(instance: SimInstance, ip: string): NonNullable<InstanceWire['ddos_profile']> {
  const field = {
    id: 21,
    name: 'ARTP',
    description: 'Application-level protection of real-time protocols',
    required: false,
    default: null,
    field_type: 'bool',
    validation_schema: { type: 'boolean' },
  };
  return {
    id: 70_000 + instance.ordinal,
    site: 'ED',
    options: { active: true, bgp: true },
    profile_template: { id: 63, name: 'Advanced', description: 'TCP/UDP services', fields: [field] },
    profile_template_description: 'TCP/UDP services',
    protocols: [{ port: '443', protocols: ['TCP'] }],
    status: { status: 'Updated', error_description: '' },
    fields: [{ ...field, id: 9000 + instance.ordinal, base_field: 21, field_value: ip.endsWith('0') }],
  };
}

/** The spec's instance record (cluster servers: with flavor.resource_class and without volumes). */
export function specInstance(instance: SimInstance, ctx: WireContext, asServer: boolean): InstanceWire {
  const scope = ctx.state.scope(instance.projectId, instance.regionId);
  const rng = derivedRng(ctx.state.seed, `instance:${instance.id}`);
  const creatorTaskId = rng.uuid();
  const priv = privateAddress(scope, instance);
  const pub = instance.external ? publicAddress(scope, instance) : null;
  const addresses: Record<string, unknown> = {
    [priv.network]: [{ addr: priv.ip, type: 'fixed', version: 4 }],
  };
  if (pub) addresses['public'] = [{ addr: pub.ip, type: 'floating', version: 4 }];
  const blackholed = pub !== null && rng.chance(0.2);
  const record: InstanceWire = {
    id: instance.id,
    name: instance.name,
    instance_description: instance.description,
    addresses,
    blackhole_ports: blackholed
      ? [
          {
            AlarmEnd: NOT_ENDED,
            AlarmStart: formatTimestamp(new Date(instance.createdAt.getTime() + 86_400_000), 'zulu'),
            AlarmState: 'ACK_REQ',
            AlertDuration: '3h 12m',
            DestinationIP: pub.ip,
            ID: 4000 + instance.ordinal,
          },
        ]
      : [],
    created_at: formatTimestamp(instance.createdAt, 'zulu'),
    creator_task_id: creatorTaskId,
    ddos_profile: pub ? ddosProfile(instance, pub.ip) : null,
    fixed_ip_assignments: [
      { external: false, ip_address: priv.ip, subnet_id: priv.subnetId },
      ...(pub ? [{ external: true, ip_address: pub.ip, subnet_id: pub.subnetId }] : []),
    ],
    flavor: flavorOf(scope, instance, asServer),
    instance_isolation: blackholed ? { reason: 'DDoS attack' } : null,
    project_id: instance.projectId,
    region_id: instance.regionId,
    region: scope.regionName,
    security_groups: instance.securityGroupIds.map((id) => ({ name: ctx.state.securityGroup(id)?.name ?? id })),
    ssh_key_name: instance.sshKeyName,
    status: instance.status,
    tags: tagList(instance.tags),
    task_id: null,
    task_state: null,
    vm_state: vmState(instance),
  };
  if (!asServer) {
    const count = rng.int(1, 2);
    record.volumes = Array.from({ length: count }, (_, i) => ({ id: rng.uuid(), delete_on_termination: i === 0 }));
  }
  return record;
}

/**
 * The legacy variant: `instance_id`, `instance_name`, `instance_created`, `keypair_name`,
 * `metadata` + `metadata_detailed` instead of the spec's names; nulls for descriptions, task ids,
 * the DDoS profile and the flavor's os_type/architecture; some numbers and booleans as text;
 * rotated timestamp forms; unknown extra fields.
 */
export function legacyInstance(instance: SimInstance, ctx: WireContext, asServer: boolean): JsonObject {
  const spec = specInstance(instance, ctx, asServer);
  const {
    id,
    name,
    created_at: _createdAt,
    ssh_key_name,
    tags: _tags,
    flavor,
    volumes,
    ...rest
  } = spec;
  const odd = oddRecord(instance.id);
  const out: JsonObject = {
    ...rest,
    instance_id: id,
    instance_name: name,
    instance_created: legacyTime(instance.createdAt, instance.id),
    keypair_name: ssh_key_name,
    ...legacyTags(instance.tags),
    instance_description: odd ? null : spec.instance_description,
    creator_task_id: null,
    ddos_profile: null,
    project_id: String(instance.projectId),
    flavor: flavor ? { ...flavor, architecture: null, os_type: null, ram: String(flavor.ram) } : null,
    instance_type: asServer ? 'baremetal' : 'vm',
    locked: false,
  };
  if (volumes) {
    out['volumes'] = volumes.map((v) => ({ ...v, delete_on_termination: String(v.delete_on_termination) }));
  }
  return out;
}

export function instanceWire(instance: SimInstance, ctx: WireContext, asServer = instance.clusterId !== null): JsonObject | InstanceWire {
  return ctx.legacy ? legacyInstance(instance, ctx, asServer) : specInstance(instance, ctx, asServer);
}

/** Ports of an instance: 1 or 2, derived from its id; the first is in all its groups, the second in the first. */
export function instancePorts(instance: SimInstance, ctx: WireContext): JsonObject[] {
  const rng = derivedRng(ctx.state.seed, `ports:${instance.id}`);
  const count = rng.chance(0.35) ? 2 : 1;
  const groups = instance.securityGroupIds.map((id) => ({ id, name: ctx.state.securityGroup(id)?.name ?? id }));
  const ports: JsonObject[] = [];
  for (let k = 0; k < count; k++) {
    const port: JsonObject = {
      id: rng.uuid(),
      name: `${instance.name}-eth${k}`,
      security_groups: k === 0 ? groups : groups.slice(0, 1),
    };
    if (ctx.legacy) {
      // Drawn from its own generator so legacy extras never shift the ids.
      const mac = derivedRng(ctx.state.seed, `mac:${instance.id}:${k}`);
      port['mac_address'] = `fa:16:3e:${mac.text(2, HEX_ALPHABET)}:${mac.text(2, HEX_ALPHABET)}:${mac.text(2, HEX_ALPHABET)}`;
      port['admin_state_up'] = 'true';
    }
    ports.push(port);
  }
  return ports;
}
