/**
 * API records -> database rows, one function per kind. Pure: no I/O. Typed columns follow
 * schema.ts; `raw` is the record as received with secrets already redacted by the client
 * (rawOf); timestamps are parsed as UTC; prices stay exact decimal text. The scope's project and
 * region are the ones asked for (what the record says is kept in `raw`).
 */
import { rawOf } from '../cloud/index.js';
import {
  parseApiTimestamp,
  type Cluster,
  type FreeFeature,
  type GpuFlavor,
  type Instance,
  type InstancePort,
  type Keypair,
  type PriceItem as ApiPriceItem,
  type PricingResult,
  type StorageKey,
  type Tag,
} from '../cloud/schemas/index.js';
import type {
  freeFeatures,
  gpuClusters,
  gpuClusterServers,
  gpuFlavors,
  imageTags,
  instancePorts,
  instances,
  k8sClusterPrices,
  keypairs,
  PriceItem,
  storageSshKeys,
} from '../db/schema.js';
import { tagColumns, type TagSettings } from './tags.js';

export type ClusterRow = typeof gpuClusters.$inferInsert;
export type ClusterServerRow = typeof gpuClusterServers.$inferInsert;
export type InstanceRow = typeof instances.$inferInsert;
export type PortRow = typeof instancePorts.$inferInsert;
export type KeypairRow = typeof keypairs.$inferInsert;
export type FlavorRow = typeof gpuFlavors.$inferInsert;
export type K8sPriceRow = typeof k8sClusterPrices.$inferInsert;
export type StorageKeyRow = typeof storageSshKeys.$inferInsert;
export type ImageTagRow = typeof imageTags.$inferInsert;
export type FreeFeatureRow = typeof freeFeatures.$inferInsert;

/** Where a record was read: the snapshot it goes into and the scope asked for. */
export interface RowContext {
  snapshotId: number;
  projectId: number | null;
  regionId: number | null;
}

function rawJson(record: object): Record<string, unknown> {
  return rawOf(record) ?? {};
}

export function mapCluster(c: Cluster, ctx: RowContext, tagSettings: TagSettings): ClusterRow {
  return {
    snapshotId: ctx.snapshotId,
    clusterId: c.cluster_id,
    clusterName: c.cluster_name,
    clusterStatus: c.cluster_status,
    taskStatus: c.task_status,
    flavorName: c.flavor,
    imageId: c.image_id,
    imageName: c.image_name,
    projectId: ctx.projectId,
    regionId: ctx.regionId,
    region: c.region,
    createdAt: parseApiTimestamp(c.created_at),
    sshKeyName: c.ssh_key_name,
    serverCount: c.servers.length,
    ...tagColumns(c.tags, tagSettings),
    raw: rawJson(c),
  };
}

/** A bare metal server of a cluster (an instance record inside the cluster record). */
export function mapClusterServer(clusterId: string, s: Instance, ctx: RowContext, tagSettings: TagSettings): ClusterServerRow {
  return {
    snapshotId: ctx.snapshotId,
    clusterId,
    serverId: s.id,
    name: s.name,
    status: s.status,
    vmState: s.vm_state,
    flavorId: s.flavor?.flavor_id ?? null,
    flavorName: s.flavor?.flavor_name ?? null,
    resourceClass: s.flavor?.resource_class ?? null,
    projectId: ctx.projectId,
    regionId: ctx.regionId,
    region: s.region,
    createdAt: parseApiTimestamp(s.created_at),
    sshKeyName: s.ssh_key_name,
    ...tagColumns(s.tags, tagSettings),
    raw: rawJson(s),
  };
}

/** An instance listed through one security group; the groups of duplicates are merged later. */
export function mapInstance(i: Instance, groupIds: readonly string[], ctx: RowContext, tagSettings: TagSettings): InstanceRow {
  return {
    snapshotId: ctx.snapshotId,
    instanceId: i.id,
    name: i.name,
    description: i.instance_description,
    status: i.status,
    vmState: i.vm_state,
    taskState: i.task_state,
    flavorId: i.flavor?.flavor_id ?? null,
    flavorName: i.flavor?.flavor_name ?? null,
    vcpus: i.flavor?.vcpus ?? null,
    ram: i.flavor?.ram ?? null,
    projectId: ctx.projectId,
    regionId: ctx.regionId,
    region: i.region,
    createdAt: parseApiTimestamp(i.created_at),
    sshKeyName: i.ssh_key_name,
    securityGroupIds: [...groupIds],
    securityGroupNames: i.security_groups.map((g) => g.name).filter((n): n is string => n !== null),
    volumeCount: i.volumes.length,
    ...tagColumns(i.tags, tagSettings),
    raw: rawJson(i),
  };
}

export function mapPort(instanceId: string, p: InstancePort, ctx: RowContext): PortRow {
  return {
    snapshotId: ctx.snapshotId,
    instanceId,
    portId: p.id,
    name: p.name,
    securityGroups: p.security_groups.map((g) => ({ id: g.id, name: g.name })),
    projectId: ctx.projectId,
    regionId: ctx.regionId,
    raw: rawJson(p),
  };
}

/**
 * A keypair. Its identity within a scope is its NAME: legacy answers put the name in the id
 * (`sshkey_id`), so the id column holds whatever the API called the id.
 */
export function mapKeypair(k: Keypair, ctx: RowContext): KeypairRow {
  return {
    snapshotId: ctx.snapshotId,
    keypairId: k.id,
    name: keypairName(k),
    fingerprint: k.fingerprint,
    state: k.state,
    sharedInProject: k.shared_in_project,
    projectId: ctx.projectId,
    regionId: ctx.regionId,
    createdAt: parseApiTimestamp(k.created_at),
    raw: rawJson(k),
  };
}

export function keypairName(k: Keypair): string {
  return k.name ?? k.id;
}

export function mapFlavor(f: GpuFlavor, ctx: RowContext): FlavorRow {
  return {
    snapshotId: ctx.snapshotId,
    flavorId: f.flavor_id,
    flavorName: f.flavor_name,
    disabled: f.disabled ?? false,
    capacity: f.capacity,
    currencyCode: f.currency_code,
    pricePerHour: f.price_per_hour,
    pricePerMonth: f.price_per_month,
    priceStatus: f.price_status,
    resourceClass: f.resource_class,
    hardware: f.hardware_description,
    projectId: ctx.projectId,
    regionId: ctx.regionId,
    raw: rawJson(f),
  };
}

function priceItem(item: ApiPriceItem): PriceItem {
  return {
    currency_code: item.currency_code,
    discount_percent: item.discount_percent,
    price_per_hour: item.price_per_hour,
    price_per_month: item.price_per_month,
    price_status: item.price_status,
    price_without_discount_per_month: item.price_without_discount_per_month,
    tax_percent: item.tax_percent,
  };
}

/** The price of one configured Kubernetes cluster (its name is the path parameter asked for). */
/**
 * `tags`: the cluster's tags from the configuration (the API gives Kubernetes clusters none), kept
 * as received and normalised like an API resource's tags.
 */
export function mapK8sPrice(clusterName: string, p: PricingResult, ctx: RowContext, tags: Readonly<Record<string, string>>, tagSettings: TagSettings): K8sPriceRow {
  const total = p.total_price;
  return {
    snapshotId: ctx.snapshotId,
    clusterName,
    currencyCode: total.currency_code,
    pricePerHour: total.price_per_hour,
    pricePerMonth: total.price_per_month,
    priceWithoutDiscountPerMonth: total.price_without_discount_per_month,
    discountPercent: total.discount_percent,
    taxPercent: total.tax_percent,
    priceStatus: total.price_status,
    breakdown: {
      instances: p.instances.map(priceItem),
      publicips: p.publicips.map(priceItem),
      volumes: p.volumes.map(priceItem),
    },
    projectId: ctx.projectId,
    regionId: ctx.regionId,
    raw: rawJson(p),
    ...tagColumns(Object.entries(tags).map(([key, value]) => ({ key, value, read_only: false })), tagSettings),
  };
}

export function mapStorageKey(k: StorageKey, ctx: RowContext): StorageKeyRow {
  return {
    snapshotId: ctx.snapshotId,
    keyId: String(k.id),
    name: k.name,
    createdAt: parseApiTimestamp(k.created_at),
    raw: rawJson(k),
  };
}

/** An image tag: a resource of its own, its key kept as received (not normalised). */
export function mapImageTag(imageId: string, t: Tag, ctx: RowContext): ImageTagRow {
  return {
    snapshotId: ctx.snapshotId,
    imageId,
    key: t.key,
    value: t.value,
    readOnly: t.read_only,
    projectId: ctx.projectId,
    regionId: ctx.regionId,
    raw: rawJson(t),
  };
}

export function mapFreeFeature(f: FreeFeature, ctx: RowContext): FreeFeatureRow {
  return {
    snapshotId: ctx.snapshotId,
    activationId: String(f.id),
    clientId: f.client_id === null ? null : String(f.client_id),
    featureId: f.feature_id === null ? null : String(f.feature_id),
    featureName: f.feature?.name ?? null,
    featureService: f.feature?.service ?? null,
    isFree: f.feature?.is_free ?? null,
    createdAt: parseApiTimestamp(f.create_date),
    raw: rawJson(f),
  };
}
