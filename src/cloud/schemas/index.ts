export * from './primitives.js';
export * from './tags.js';
export * from './requests.js';
export * from './responses.js';
export * from './legacy.js';
export * from './error-body.js';
