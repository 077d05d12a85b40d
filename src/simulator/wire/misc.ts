import type { FreeFeatureWire, ListenerWire, PricingResultWire, TaskWire } from '../../cloud/schemas/responses.js';
import { decimalToNumber, HOURS_PER_MONTH, scaledToText } from '../decimal.js';
import type { SimFreeFeature, SimK8sCluster, SimListener, SimPriceLine, SimTag } from '../model.js';
import type { SimTaskView } from '../tasks.js';
import { formatTimestamp } from '../timestamps.js';
import { legacyTime, oddRecord, type JsonObject, type WireContext } from './common.js';

/** Listener record (JSON names follow the provider's SDK; `stats` only when asked, never here). */
export function listenerWire(listener: SimListener, ctx: WireContext): ListenerWire | JsonObject {
  const record: ListenerWire = {
    id: listener.id,
    name: listener.name,
    admin_state_up: listener.adminStateUp,
    allowed_cidrs: [...listener.allowedCidrs],
    connection_limit: listener.connectionLimit,
    creator_task_id: listener.creatorTaskId,
    insert_headers: { ...listener.insertHeaders },
    loadbalancer_id: listener.loadBalancerId,
    operating_status: listener.operatingStatus,
    pool_count: listener.poolCount,
    protocol: listener.protocol,
    protocol_port: listener.protocolPort,
    provisioning_status: listener.provisioningStatus,
    secret_id: listener.secretId,
    sni_secret_id: [...listener.sniSecretIds],
    task_id: null,
    timeout_client_data: listener.timeoutClientData,
    timeout_member_connect: listener.timeoutMemberConnect,
    timeout_member_data: listener.timeoutMemberData,
    user_list: listener.users.map((u) => ({ ...u })),
  };
  if (!ctx.legacy) return record;
  return {
    ...record,
    protocol_port: String(listener.protocolPort),
    connection_limit: String(listener.connectionLimit),
    admin_state_up: String(listener.adminStateUp),
    creator_task_id: null,
    region: null,
    timeout_tcp_inspect: 0,
  };
}

/** One price item; all amounts exact (units of 0.0001). */
function priceItem(line: SimPriceLine, currency: string, ctx: WireContext, key: string): JsonObject {
  const hourUnits = (line.baseHourUnits * (100 - line.discountPercent)) / 100;
  const item = {
    currency_code: currency,
    discount_percent: line.discountPercent,
    price_per_hour: decimalToNumber(scaledToText(hourUnits, 4)),
    price_per_month: decimalToNumber(scaledToText(hourUnits * HOURS_PER_MONTH, 4)),
    price_status: 'show',
    price_without_discount_per_month: decimalToNumber(scaledToText(line.baseHourUnits * HOURS_PER_MONTH, 4)),
    tax_percent: line.taxPercent,
  };
  if (!ctx.legacy || !oddRecord(key)) return item;
  return {
    ...item,
    price_per_hour: String(item.price_per_hour),
    price_per_month: String(item.price_per_month),
    price_without_discount_per_month: String(item.price_without_discount_per_month),
    discount_percent: String(item.discount_percent),
  };
}

/** The pricing result: items per node pool, public IP and volume, and their exact total. */
export function pricingWire(cluster: SimK8sCluster, ctx: WireContext): PricingResultWire | JsonObject {
  const all = [...cluster.instances, ...cluster.publicips, ...cluster.volumes];
  const discounted = all.reduce((sum, l) => sum + (l.baseHourUnits * (100 - l.discountPercent)) / 100, 0);
  const base = all.reduce((sum, l) => sum + l.baseHourUnits, 0);
  const item = (line: SimPriceLine, i: number, kind: string) => priceItem(line, cluster.currency, ctx, `${cluster.name}:${kind}:${i}`);
  const total = {
    currency_code: cluster.currency,
    discount_percent: base === 0 ? 0 : decimalToNumber((((base - discounted) * 100) / base).toFixed(2)),
    price_per_hour: decimalToNumber(scaledToText(discounted, 4)),
    price_per_month: decimalToNumber(scaledToText(discounted * HOURS_PER_MONTH, 4)),
    price_status: 'show',
    price_without_discount_per_month: decimalToNumber(scaledToText(base * HOURS_PER_MONTH, 4)),
    tax_percent: 0,
  };
  return {
    instances: cluster.instances.map((l, i) => item(l, i, 'instances')),
    publicips: cluster.publicips.map((l, i) => item(l, i, 'publicips')),
    volumes: cluster.volumes.map((l, i) => item(l, i, 'volumes')),
    total_price: ctx.legacy ? { ...total, price_per_month: String(total.price_per_month) } : total,
  };
}

export function imageTagWire(tag: SimTag, ctx: WireContext): JsonObject {
  return ctx.legacy ? { key: tag.key, value: tag.value, read_only: String(tag.read_only) } : { ...tag };
}

/** Activated free feature; create_date RFC 3339 in UTC (spec). */
export function freeFeatureWire(feature: SimFreeFeature, ctx: WireContext): FreeFeatureWire | JsonObject {
  const record: FreeFeatureWire = {
    id: feature.id,
    client_id: feature.clientId,
    feature_id: feature.featureId,
    feature: { id: feature.featureId, name: feature.name, service: feature.service, is_free: feature.isFree },
    create_date: formatTimestamp(feature.createdAt, 'zulu'),
  };
  if (!ctx.legacy) return record;
  return { ...record, create_date: legacyTime(feature.createdAt, feature.id), feature_id: String(feature.featureId), end_date: null };
}

/** A task: progress in `status` (spec wording), or in `state` (legacy, as the provider sends it). */
export function taskWire(task: SimTaskView, ctx: WireContext): TaskWire | JsonObject {
  const common = {
    id: task.id,
    error: task.error,
    task_type: task.type,
    created_on: ctx.legacy ? legacyTime(task.createdAt, task.id) : formatTimestamp(task.createdAt, 'zulu'),
    finished_on: task.finishedAt === null ? null : ctx.legacy ? legacyTime(task.finishedAt, task.id) : formatTimestamp(task.finishedAt, 'zulu'),
    created_resources: task.createdResources,
    project_id: task.projectId,
    region_id: task.regionId,
  };
  if (!ctx.legacy) return { ...common, status: task.status };
  return { ...common, state: task.status, user_id: 31337, request_id: null, data: null };
}
