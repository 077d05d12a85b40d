import { Router } from '../http/router.js';
import { addAppRoutes } from './apps.js';
import { addClusterRoutes } from './clusters.js';
import { addInstanceRoutes } from './instances.js';
import { addImageAndKeypairRoutes } from './keys.js';
import { addLoadBalancingRoutes } from './loadbalancing.js';
import { addMiscRoutes } from './misc.js';
import { addStorageKeyRoutes } from './storage-keys.js';

/** Every route of the simulator. */
export function buildRouter(): Router {
  const router = new Router();
  addClusterRoutes(router);
  addInstanceRoutes(router);
  addLoadBalancingRoutes(router);
  addAppRoutes(router);
  addImageAndKeypairRoutes(router);
  addStorageKeyRoutes(router);
  addMiscRoutes(router);
  return router;
}
