import { z } from 'zod';
import {
  ImageTagListSchema,
  KeypairListSchema,
  PathIdSchema,
  STORAGE_KEY_LIST_MAX_LIMIT,
  ScopeParamsSchema,
  StorageKeyCreateBodySchema,
  StorageKeyIdSchema,
  StorageKeyListQuerySchema,
  StorageKeyListSchema,
  StorageKeyRecordSchema,
  looseInt,
  type Keypair,
  type StorageKey,
  type StorageKeyCreateBody,
  type StorageKeyList,
  type StorageKeyListQuery,
  type Tag,
} from '../schemas/index.js';
import { decodeWith, rememberData, rememberRecord, rememberResults } from '../decode.js';
import type { Transport } from '../http.js';
import { ROUTES } from '../paths.js';
import type { ListResult, Page } from '../types.js';
import { InputCheck } from '../validate.js';

export const DEFAULT_STORAGE_KEY_PAGE_SIZE = STORAGE_KEY_LIST_MAX_LIMIT;

export type StorageKeyFilters = Omit<StorageKeyListQuery, 'limit' | 'offset'>;

/** Image tags, project keypairs and storage SSH keys. */
export interface ImagesAndKeysApi {
  /** `GET /cloud/v1/images/{project_id}/{region_id}/{image_id}/metadata` (deprecated in the spec; its replacement's path is not shown). */
  getImageTags(project_id: number, region_id: number, image_id: string): Promise<ListResult<Tag>>;
  /** `GET /cloud/v1/keypairs/{project_id}/{region_id}`; `private_key` comes back as "[redacted]" when the API sent one. */
  listKeypairs(project_id: number, region_id: number): Promise<ListResult<Keypair>>;
  /** `PUT /storage/provisioning/v1/key`. */
  createStorageKey(body: StorageKeyCreateBody): Promise<StorageKey>;
  /** `GET /storage/provisioning/v2/key`: one page, `{data, meta}`. */
  listStorageKeys(query?: StorageKeyListQuery): Promise<StorageKeyList>;
  /** Every page of storage keys by offset/limit until a short page or `meta.total_count` is reached. */
  storageKeyPages(options?: StorageKeyFilters & { pageSize?: number }): AsyncGenerator<Page<StorageKey>, void, undefined>;
  /** `DELETE /storage/provisioning/v1/key/{key_id}` (deprecated in the spec); the answer has no body. */
  deleteStorageKey(key_id: number): Promise<void>;
}

const PageSizeSchema = z
  .int({ error: 'must be an integer' })
  .min(1, `must be 1 to ${STORAGE_KEY_LIST_MAX_LIMIT}`)
  .max(STORAGE_KEY_LIST_MAX_LIMIT, `must be 1 to ${STORAGE_KEY_LIST_MAX_LIMIT}`);

/** `meta.total_count` when the API gave a readable one. */
function totalCount(meta: Record<string, unknown>): number | null {
  const parsed = looseInt.safeParse(meta['total_count']);
  return parsed.success ? parsed.data : null;
}

export function imagesAndKeysApi(transport: Transport): ImagesAndKeysApi {
  const listStorageKeys: ImagesAndKeysApi['listStorageKeys'] = async (query = {}) => {
    const route = ROUTES.listStorageKeys;
    const input = new InputCheck('listStorageKeys', route);
    const q = input.check('query', StorageKeyListQuerySchema, query);
    input.done();
    return transport.send({
      operation: 'listStorageKeys',
      page: true,
      route,
      query: q,
      idempotent: true,
      decode: decodeWith(StorageKeyListSchema, rememberData),
    });
  };

  return {
    async getImageTags(project_id, region_id, image_id) {
      const route = ROUTES.getImageTags;
      const input = new InputCheck('getImageTags', route);
      const scope = input.check('path', ScopeParamsSchema, { project_id, region_id });
      const image = input.check('path.image_id', PathIdSchema, image_id);
      input.done();
      return transport.send({
        operation: 'getImageTags',
        page: true,
        route,
        params: { ...scope, image_id: image },
        idempotent: true,
        decode: decodeWith(ImageTagListSchema, rememberResults),
      });
    },

    async listKeypairs(project_id, region_id) {
      const route = ROUTES.listKeypairs;
      const input = new InputCheck('listKeypairs', route);
      const params = input.check('path', ScopeParamsSchema, { project_id, region_id });
      input.done();
      return transport.send({
        operation: 'listKeypairs',
        page: true,
        route,
        params,
        idempotent: true,
        decode: decodeWith(KeypairListSchema, rememberResults),
      });
    },

    async createStorageKey(body) {
      const route = ROUTES.createStorageKey;
      const input = new InputCheck('createStorageKey', route);
      const checked = input.check('body', StorageKeyCreateBodySchema, body);
      input.done();
      return transport.send({
        operation: 'createStorageKey',
        route,
        body: checked,
        // A PUT, but it creates a new key with a new id each time: not repeatable.
        idempotent: false,
        decode: decodeWith(StorageKeyRecordSchema, rememberRecord),
      });
    },

    listStorageKeys,

    async *storageKeyPages(options = {}) {
      const { pageSize = DEFAULT_STORAGE_KEY_PAGE_SIZE, ...filters } = options;
      const input = new InputCheck('storageKeyPages', ROUTES.listStorageKeys);
      input.check('query.limit', PageSizeSchema, pageSize);
      input.done();
      for (let offset = 0; ; ) {
        const page = await listStorageKeys({ ...filters, limit: pageSize, offset });
        const total = totalCount(page.meta);
        yield { offset, total, results: page.data };
        offset += page.data.length;
        if (page.data.length < pageSize || (total !== null && offset >= total)) return;
      }
    },

    async deleteStorageKey(key_id) {
      const route = ROUTES.deleteStorageKey;
      const input = new InputCheck('deleteStorageKey', route);
      const id = input.check('path.key_id', StorageKeyIdSchema, key_id);
      input.done();
      await transport.send<void>({ operation: 'deleteStorageKey', route, params: { key_id: id }, idempotent: false });
    },
  };
}
