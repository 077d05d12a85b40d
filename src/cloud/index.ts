/** The cloud API client. Collectors and actions import from here (and types from './schemas/index.js'). */
export { createCloudClient, type CloudClient, type CloudClientOptions } from './client.js';
export type { CloudLogger, RequestEvent } from './http.js';
export type { ListResult, Page } from './types.js';
export type { StorageKeyFilters } from './areas/images-and-keys.js';
export type { WaitForTasksOptions } from './areas/tasks.js';
export {
  CloudError,
  CloudApiError,
  CloudValidationError,
  CloudResponseError,
  CloudResponseTooLargeError,
  CloudTimeoutError,
  CloudNetworkError,
  CloudTaskError,
  type RequestIdentity,
} from './errors.js';
export { rawOf, redactSecrets, REDACTED, SECRET_FIELDS } from './raw.js';
export { ROUTES, TASK_PATH, endpointOf, type Route, type RouteName } from './paths.js';
export { parseRetryAfterMs } from './backoff.js';
