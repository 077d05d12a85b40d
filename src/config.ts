/** Moved to src/config/; this re-export goes once every caller imports config/index.js. */
export * from './config/index.js';
