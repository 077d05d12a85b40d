/** Every collector, by name, in dependency order. */
import { COLLECTOR_NAMES } from '../../config/index.js';
import type { CollectorName } from '../types.js';
import { clustersCollector } from './clusters.js';
import type { Collector } from './collector.js';
import { flavorsCollector } from './flavors.js';
import { freeFeaturesCollector } from './free-features.js';
import { imageTagsCollector } from './image-tags.js';
import { instancesCollector } from './instances.js';
import { k8sPricesCollector } from './k8s-prices.js';
import { keypairsCollector } from './keypairs.js';
import { portsCollector } from './ports.js';
import { storageKeysCollector } from './storage-keys.js';

export type { Collector } from './collector.js';

export const COLLECTORS: Readonly<Record<CollectorName, Collector>> = {
  clusters: clustersCollector,
  instances: instancesCollector,
  ports: portsCollector,
  keypairs: keypairsCollector,
  flavors: flavorsCollector,
  k8s_prices: k8sPricesCollector,
  storage_keys: storageKeysCollector,
  image_tags: imageTagsCollector,
  free_features: freeFeaturesCollector,
};

/** The named collectors (all by default), deduplicated, grouped by phase in dependency order. */
export function collectorPhases(names: readonly CollectorName[] = COLLECTOR_NAMES): Collector[][] {
  const unknown = names.filter((n) => !(n in COLLECTORS));
  if (unknown.length > 0) throw new Error(`unknown collector(s): ${unknown.join(', ')} (known: ${COLLECTOR_NAMES.join(', ')})`);
  const chosen = COLLECTOR_NAMES.filter((n) => names.includes(n)).map((n) => COLLECTORS[n]);
  return [1, 2, 3].map((phase) => chosen.filter((c) => c.phase === phase)).filter((group) => group.length > 0);
}

/** Collector names sorted into dependency order. */
export function orderedCollectorNames(names: readonly CollectorName[] = COLLECTOR_NAMES): CollectorName[] {
  return collectorPhases(names).flat().map((c) => c.name);
}
