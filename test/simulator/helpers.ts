import { request } from 'undici';
import { vi } from 'vitest';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../src/simulator/index.js';

/** A fixed "now" so generated times are the same in every run. */
export const NOW = new Date('2025-06-01T12:00:00Z');
export const API_KEY = 'test-key-0123456789';

export function start(options: SimulatorOptions = {}): Promise<Simulator> {
  return startSimulator({ apiKey: API_KEY, now: NOW, taskDelayMs: 30, ...options });
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The parsed body when it is JSON, else undefined. */
  json: any;
}

export interface CallOptions {
  body?: unknown;
  /** Sent as is (for malformed JSON). */
  rawBody?: string;
  /** The Authorization header; null sends none. Default: `apikey <key>`. */
  auth?: string | null;
}

/** One HTTP request to the simulator with undici (not the project's client). */
export async function call(sim: Simulator, method: string, path: string, options: CallOptions = {}): Promise<Answer> {
  const headers: Record<string, string> = {};
  const auth = options.auth === undefined ? `apikey ${sim.apiKey}` : options.auth;
  if (auth !== null) headers['authorization'] = auth;
  let body: string | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await request(`${sim.url}${path}`, { method: method as 'GET', headers, body });
  const text = await res.body.text();
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, headers: res.headers, text, json };
}

export const get = (sim: Simulator, path: string, options?: CallOptions) => call(sim, 'GET', path, options);

/** Polls a task until it leaves RUNNING (the delay in tests is tens of ms, at most half a second). */
export async function waitForTask(sim: Simulator, taskId: string, field: 'status' | 'state' = 'status'): Promise<any> {
  const answer = await vi.waitFor(
    async () => {
      const answer = await get(sim, `/v1/tasks/${taskId}`);
      if (answer.status === 200 && answer.json[field] === 'RUNNING') throw new Error(`task ${taskId} still RUNNING`);
      return answer;
    },
    { timeout: 5_000, interval: 10 },
  );
  if (answer.status !== 200) throw new Error(`task ${taskId}: status ${answer.status} ${answer.text}`);
  return answer.json;
}

export function firstScope(sim: Simulator) {
  const scope = sim.manifest().scopes[0];
  if (!scope) throw new Error('no scope');
  return scope;
}

/** Field names of a validation_failed answer. */
export function fields(answer: Answer): string[] {
  return (answer.json?.errors ?? []).map((e: { field: string }) => e.field);
}
