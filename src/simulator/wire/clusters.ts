import type { ClusterWire } from '../../cloud/schemas/responses.js';
import type { SimCluster } from '../model.js';
import { formatTimestamp } from '../timestamps.js';
import { legacyTags, legacyTime, tagList, type JsonObject, type WireContext } from './common.js';
import { legacyInstance, specInstance } from './instances.js';

/** Bare metal GPU cluster records: created_at as "date space time with microseconds" (spec). */
export function specCluster(cluster: SimCluster, ctx: WireContext): ClusterWire {
  const scope = ctx.state.scope(cluster.projectId, cluster.regionId);
  return {
    cluster_id: cluster.id,
    cluster_name: cluster.name,
    cluster_status: cluster.status,
    created_at: formatTimestamp(cluster.createdAt, 'space-micro'),
    creator_task_id: cluster.creatorTaskId,
    flavor: cluster.flavorName,
    image_id: cluster.imageId,
    image_name: ctx.state.image(cluster.imageId)?.name ?? null,
    interfaces: cluster.interfaces.map((i) => ({ ...i })),
    password: cluster.password,
    project_id: cluster.projectId,
    region: scope.regionName,
    region_id: cluster.regionId,
    servers: cluster.servers.map((s) => specInstance(s, ctx, true)),
    ssh_key_name: cluster.sshKeyName,
    tags: tagList(cluster.tags),
    task_id: cluster.taskId,
    task_status: cluster.taskStatus,
    user_data: cluster.userData,
    username: cluster.username,
  };
}

/** Legacy: servers under `poplar_servers`, `keypair_name`, metadata tags, nulls, rotated timestamps. */
export function legacyCluster(cluster: SimCluster, ctx: WireContext): JsonObject {
  const { servers: _servers, ssh_key_name, tags: _tags, ...rest } = specCluster(cluster, ctx);
  return {
    ...rest,
    created_at: legacyTime(cluster.createdAt, cluster.id),
    creator_task_id: null,
    interfaces: null,
    keypair_name: ssh_key_name,
    ...legacyTags(cluster.tags),
    poplar_servers: cluster.servers.map((s) => legacyInstance(s, ctx, true)),
    project_id: String(cluster.projectId),
    cluster_metadata: null,
    cluster_type: 'baremetal',
  };
}

export function clusterWire(cluster: SimCluster, ctx: WireContext): JsonObject | ClusterWire {
  return ctx.legacy ? legacyCluster(cluster, ctx) : specCluster(cluster, ctx);
}
