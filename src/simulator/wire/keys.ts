import type { KeypairWire, StorageKeyWire } from '../../cloud/schemas/responses.js';
import type { SimKeypair, SimStorageKey } from '../model.js';
import { formatTimestamp } from '../timestamps.js';
import { legacyTime, type JsonObject, type WireContext } from './common.js';

/** Keypair record; created_at without zone (spec). */
export function keypairWire(keypair: SimKeypair, ctx: WireContext): KeypairWire | JsonObject {
  if (ctx.legacy) {
    // Legacy: sshkey_id holds the key's name, no state / shared_in_project / created_at.
    return {
      sshkey_id: keypair.name,
      sshkey_name: keypair.name,
      public_key: keypair.publicKey,
      fingerprint: keypair.fingerprint,
      private_key: keypair.privateKey,
      project_id: String(keypair.projectId),
      user_id: 31337,
    };
  }
  return {
    id: keypair.id,
    name: keypair.name,
    public_key: keypair.publicKey,
    shared_in_project: keypair.sharedInProject,
    state: 'ACTIVE',
    created_at: formatTimestamp(keypair.createdAt, 'naive'),
    fingerprint: keypair.fingerprint,
    private_key: keypair.privateKey,
    project_id: keypair.projectId,
  };
}

/** Storage SSH key record; created_at ISO 8601 (spec). */
export function storageKeyWire(key: SimStorageKey, ctx: WireContext): StorageKeyWire | JsonObject {
  if (ctx.legacy) return { id: key.id, name: key.name, created_at: legacyTime(key.createdAt, key.id), storages: [] };
  return { id: key.id, name: key.name, created_at: formatTimestamp(key.createdAt, 'zulu') };
}
