import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FaultController, type SimFault } from './faults.js';
import { createRequestListener, type RequestLogEntry, type ServerSettings } from './http/server.js';
import { resolveOptions, validateOptionsPatch, type SimulatorOptions } from './options.js';
import { loadCompany, serializeCompany, StateSaver, type CompanyStore, type SavedCompany } from './persistence.js';
import { buildRouter } from './routes/index.js';
import { SimState, type SimManifest } from './state.js';

/**
 * The cloud API simulator: an HTTP server implementing every endpoint of cloud-api.md over an
 * in-memory, deterministic demo company (see README, "Simulator").
 */

export type { SimFault } from './faults.js';
export { fileStore, type CompanyStore } from './persistence.js';
export { simulatorOptionsFromEnv, type SimulatorOptions } from './options.js';
export { SimLookupError, SimState, type AddClusterInput, type AddInstanceInput, type SimManifest, type SimScopeSummary } from './state.js';
export type { SimTaskStatus, SimTaskView } from './tasks.js';
export type * from './model.js';

export interface Simulator {
  /** e.g. 'http://127.0.0.1:41234' (no trailing slash). */
  url: string;
  apiKey: string;
  /** Same as GET /_sim/manifest. */
  manifest(): SimManifest;
  /** The in-memory company shared with the routes. */
  state: SimState;
  /** Scripted faults, consumed in order by the next matching requests. */
  injectFaults(...faults: SimFault[]): void;
  setOptions(
    patch: Partial<Pick<SimulatorOptions, 'latencyMs' | 'errorRate' | 'rateLimit' | 'truncateRate' | 'legacy' | 'taskDelayMs'>>,
  ): void;
  /** Every request received (path without query); status 0 for a reset connection. */
  requestLog: RequestLogEntry[];
  clearRequestLog(): void;
  /** Where the company is saved and whether it was restored from there; undefined when in memory only. */
  persistence?: PersistenceReport;
  /** Stops listening; with persistence, first waits until every change is saved. */
  close(): Promise<void>;
}

/** Where a simulator keeps its company across restarts (the demo of `npm start`). */
export interface PersistenceOptions {
  /** Where the company is kept (fileStore(file), or a database row); created when absent, replaced whole. */
  store: CompanyStore;
  /** Told when a saved company cannot be used or a save fails (pino-compatible). */
  log?: { warn(details: object, message: string): void; info(details: object, message: string): void };
}

export interface PersistenceReport {
  /** The store's `where`. */
  where: string;
  /** `restored`: the saved company continues; `fresh`: none was saved; `replaced`: the saved one was unusable. */
  outcome: 'restored' | 'fresh' | 'replaced';
  /** Why the saved company could not be used (`replaced`). */
  problem?: string;
}

/**
 * Starts the simulator. Without `persistence` the company lives in memory only (tests, `npm run
 * sim`); with it, a company saved in its store continues and every change is saved there.
 */
export async function startSimulator(options: SimulatorOptions = {}, persistence?: PersistenceOptions): Promise<Simulator> {
  const opts = resolveOptions(options);
  const startedAt = Date.now();
  const base = opts.now.getTime();
  const clock = () => new Date(base + (Date.now() - startedAt));
  let saved: SavedCompany | undefined;
  let report: PersistenceReport | undefined;
  if (persistence) {
    const where = persistence.store.where;
    const loaded = await loadCompany(persistence.store, { seed: opts.seed, size: opts.size });
    if (loaded.outcome === 'restored') {
      saved = loaded;
      report = { where, outcome: 'restored' };
      persistence.log?.info({ where }, 'demo company restored: the simulator continues where it stopped');
    } else if (loaded.outcome === 'absent') {
      report = { where, outcome: 'fresh' };
      persistence.log?.info({ where }, 'no saved demo company: a new one is generated and saved');
    } else {
      report = { where, outcome: 'replaced', problem: loaded.problem };
      persistence.log?.warn({ where, problem: loaded.problem }, 'saved demo company unusable: a new one replaces it');
    }
  }
  const state = new SimState({ seed: opts.seed, size: opts.size, now: opts.now, taskDelayMs: opts.taskDelayMs, clock, saved });
  let saver: StateSaver | undefined;
  if (persistence) {
    const { store, log } = persistence;
    saver = new StateSaver(store, () => serializeCompany(state.saved(), clock()), (error) => log?.warn({ err: error, where: store.where }, 'saving the demo company failed'));
    state.onChange = () => saver?.changed();
    // Saved at once: a new company's creation times depend on the start time, so keep them.
    if (report?.outcome !== 'restored') saver.changed();
  }
  const faults = new FaultController(opts.seed);
  const settings: ServerSettings = {
    latencyMs: opts.latencyMs,
    errorRate: opts.errorRate,
    rateLimit: opts.rateLimit,
    truncateRate: opts.truncateRate,
    legacy: opts.legacy,
  };
  const requestLog: RequestLogEntry[] = [];
  const server = createServer(
    { keepAlive: true },
    createRequestListener({ router: buildRouter(), state, faults, settings, apiKey: opts.apiKey, requestLog }),
  );
  server.keepAliveTimeout = 5_000;

  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error) => reject(new Error(`simulator could not listen on ${opts.host}:${opts.port}: ${error.message}`));
    server.once('error', onError);
    server.listen(opts.port, opts.host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  return {
    url: `http://${host}:${address.port}`,
    apiKey: opts.apiKey,
    manifest: () => state.manifest(),
    state,
    injectFaults: (...list) => faults.inject(list),
    setOptions: (patch) => {
      const p = validateOptionsPatch(patch);
      if (p.latencyMs !== undefined) settings.latencyMs = p.latencyMs;
      if (p.errorRate !== undefined) settings.errorRate = p.errorRate;
      if (p.rateLimit !== undefined) settings.rateLimit = p.rateLimit;
      if (p.truncateRate !== undefined) settings.truncateRate = p.truncateRate;
      if (p.legacy !== undefined) settings.legacy = p.legacy;
      if (p.taskDelayMs !== undefined) state.taskDelayMs = p.taskDelayMs;
    },
    requestLog,
    clearRequestLog: () => {
      requestLog.length = 0;
    },
    persistence: report,
    close: async () => {
      await new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(new Error(`simulator close failed: ${error.message}`)) : resolve()));
        server.closeAllConnections();
      });
      // Only what is not saved yet: a simulator that changed nothing (`npm run collect` beside a
      // running `npm start`) must not write back the company it read. Tasks already due apply first.
      if (saver) {
        state.settle();
        await saver.flush();
      }
    },
  };
}
