import { z } from 'zod';
import {
  ClusterListQuerySchema,
  ClusterListSchema,
  FlavorListQuerySchema,
  GpuClusterCreateBodySchema,
  GpuFlavorListSchema,
  ScopeParamsSchema,
  TaskListSchema,
  VirtualGpuClusterCreateBodySchema,
  type Cluster,
  type ClusterListQuery,
  type FlavorListQuery,
  type GpuClusterCreateBody,
  type GpuFlavor,
  type TaskList,
  type VirtualGpuClusterCreateBody,
} from '../schemas/index.js';
import { decodeWith, rememberClusters, rememberRecord, rememberResults } from '../decode.js';
import type { Transport } from '../http.js';
import { ROUTES } from '../paths.js';
import type { ListResult, Page } from '../types.js';
import { InputCheck } from '../validate.js';

export const DEFAULT_CLUSTER_PAGE_SIZE = 100;
const PageSizeSchema = z.int({ error: 'must be an integer' }).min(1, 'must be at least 1');

/** Bare metal GPU clusters, GPU flavors and virtual GPU clusters. */
export interface ClusterApi {
  /** `POST /cloud/v1/ai/clusters/gpu/{project_id}/{region_id}`: starts the creation; wait for the task ids. */
  createGpuCluster(project_id: number, region_id: number, body: GpuClusterCreateBody): Promise<TaskList>;
  /** `GET /cloud/v2/ai/clusters/{project_id}/{region_id}`: one page of clusters. */
  listGpuClusters(project_id: number, region_id: number, query?: ClusterListQuery): Promise<ListResult<Cluster>>;
  /** Every page of clusters by limit/offset, one request per page, until a short page or `count` is reached. */
  gpuClusterPages(project_id: number, region_id: number, options?: { pageSize?: number }): AsyncGenerator<Page<Cluster>, void, undefined>;
  /** `GET /cloud/v1/ai/flavors/{project_id}/{region_id}`. */
  listGpuFlavors(project_id: number, region_id: number, query?: FlavorListQuery): Promise<ListResult<GpuFlavor>>;
  /** `POST /cloud/v3/gpu/virtual/{project_id}/{region_id}/clusters`. */
  createVirtualGpuCluster(project_id: number, region_id: number, body: VirtualGpuClusterCreateBody): Promise<TaskList>;
}

export function clusterApi(transport: Transport): ClusterApi {
  const listGpuClusters: ClusterApi['listGpuClusters'] = async (project_id, region_id, query = {}) => {
    const route = ROUTES.listGpuClusters;
    const input = new InputCheck('listGpuClusters', route);
    const params = input.check('path', ScopeParamsSchema, { project_id, region_id });
    const q = input.check('query', ClusterListQuerySchema, query);
    input.done();
    return transport.send({
      operation: 'listGpuClusters',
      page: true,
      route,
      params,
      query: q,
      idempotent: true,
      decode: decodeWith(ClusterListSchema, rememberClusters),
    });
  };

  return {
    async createGpuCluster(project_id, region_id, body) {
      const route = ROUTES.createGpuCluster;
      const input = new InputCheck('createGpuCluster', route);
      const params = input.check('path', ScopeParamsSchema, { project_id, region_id });
      const checked = input.check('body', GpuClusterCreateBodySchema, body);
      input.done();
      return transport.send({
        operation: 'createGpuCluster',
        route,
        params,
        body: checked,
        idempotent: false,
        decode: decodeWith(TaskListSchema, rememberRecord),
      });
    },

    listGpuClusters,

    async *gpuClusterPages(project_id, region_id, options = {}) {
      const pageSize = options.pageSize ?? DEFAULT_CLUSTER_PAGE_SIZE;
      const input = new InputCheck('gpuClusterPages', ROUTES.listGpuClusters);
      input.check('query.limit', PageSizeSchema, pageSize);
      input.done();
      for (let offset = 0; ; ) {
        const page = await listGpuClusters(project_id, region_id, { limit: pageSize, offset });
        yield { offset, total: page.count, results: page.results };
        offset += page.results.length;
        if (page.results.length < pageSize || (page.count !== null && offset >= page.count)) return;
      }
    },

    async listGpuFlavors(project_id, region_id, query = {}) {
      const route = ROUTES.listGpuFlavors;
      const input = new InputCheck('listGpuFlavors', route);
      const params = input.check('path', ScopeParamsSchema, { project_id, region_id });
      const q = input.check('query', FlavorListQuerySchema, query);
      input.done();
      return transport.send({
        operation: 'listGpuFlavors',
        page: true,
        route,
        params,
        query: q,
        idempotent: true,
        decode: decodeWith(GpuFlavorListSchema, rememberResults),
      });
    },

    async createVirtualGpuCluster(project_id, region_id, body) {
      const route = ROUTES.createVirtualGpuCluster;
      const input = new InputCheck('createVirtualGpuCluster', route);
      const params = input.check('path', ScopeParamsSchema, { project_id, region_id });
      const checked = input.check('body', VirtualGpuClusterCreateBodySchema, body);
      input.done();
      return transport.send({
        operation: 'createVirtualGpuCluster',
        route,
        params,
        body: checked,
        idempotent: false,
        decode: decodeWith(TaskListSchema, rememberRecord),
      });
    },
  };
}
