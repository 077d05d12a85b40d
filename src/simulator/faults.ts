import { Rng } from './random.js';

/**
 * Faults: scripted ones (injected by tests, consumed in order by the next matching requests) and
 * random ones from the options (seeded, so a run with the same seed and requests repeats).
 * The simulator's own /_sim/ routes get no random fault, and a scripted one only when its path
 * pattern names them.
 */

export type SimFault = { match?: { method?: string; path?: RegExp }; count?: number } & (
  | { kind: 'status'; status: number; retryAfterSeconds?: number }
  | { kind: 'truncate' }
  | { kind: 'garbage' }
  | { kind: 'delay'; ms: number }
  | { kind: 'reset' }
);

export interface RateLimit {
  every: number;
  burst: number;
  retryAfterSeconds: number;
}

export interface RandomFaultSettings {
  errorRate: number;
  rateLimit: RateLimit | null;
  truncateRate: number;
}

/** What to do to one request. */
export interface FaultPlan {
  delayMs: number;
  /** Answer with this error status instead of handling the request. */
  status: { status: number; retryAfterSeconds?: number } | null;
  /** Send half of the JSON body (with the full Content-Length) and close the connection. */
  truncate: boolean;
  /** Answer 200 with a body that is not JSON. */
  garbage: boolean;
  /** Destroy the socket without answering. */
  reset: boolean;
}

const NO_FAULT: FaultPlan = { delayMs: 0, status: null, truncate: false, garbage: false, reset: false };
const RANDOM_ERROR_STATUSES = [502, 503, 504] as const;

export function isSimulatorOwnPath(path: string): boolean {
  return path === '/_sim' || path.startsWith('/_sim/');
}

export class FaultController {
  private scripted: Array<{ fault: SimFault; remaining: number }> = [];
  private requestCount = 0;
  private readonly rng: Rng;

  constructor(seed: number) {
    this.rng = new Rng((seed ^ 0x5eed_fa17) >>> 0);
  }

  inject(faults: SimFault[]): void {
    for (const fault of faults) {
      const count = fault.count ?? 1;
      if (!Number.isInteger(count) || count < 1) throw new Error(`fault count must be a positive integer, got ${count}`);
      if (fault.kind === 'status' && (fault.status < 100 || fault.status > 599)) {
        throw new Error(`fault status must be an HTTP status, got ${fault.status}`);
      }
      this.scripted.push({ fault, remaining: count });
    }
  }

  /** Scripted faults not used yet. */
  pending(): number {
    return this.scripted.reduce((sum, s) => sum + s.remaining, 0);
  }

  plan(method: string, path: string, settings: RandomFaultSettings): FaultPlan {
    const own = isSimulatorOwnPath(path);
    const scripted = this.takeScripted(method, path, own);
    if (own) return scripted ? toPlan(scripted) : NO_FAULT;
    const position = this.requestCount++;
    if (scripted) return toPlan(scripted);
    const limit = settings.rateLimit;
    if (limit && position % (limit.every + limit.burst) >= limit.every) {
      return { ...NO_FAULT, status: { status: 429, retryAfterSeconds: limit.retryAfterSeconds } };
    }
    if (settings.errorRate > 0 && this.rng.float() < settings.errorRate) {
      return { ...NO_FAULT, status: { status: this.rng.pick(RANDOM_ERROR_STATUSES) } };
    }
    if (settings.truncateRate > 0 && this.rng.float() < settings.truncateRate) return { ...NO_FAULT, truncate: true };
    return NO_FAULT;
  }

  private takeScripted(method: string, path: string, own: boolean): SimFault | null {
    const index = this.scripted.findIndex(({ fault }) => {
      const m = fault.match;
      if (m?.method && m.method.toUpperCase() !== method.toUpperCase()) return false;
      if (m?.path) {
        m.path.lastIndex = 0;
        return m.path.test(path);
      }
      return !own;
    });
    if (index < 0) return null;
    const entry = this.scripted[index] as { fault: SimFault; remaining: number };
    entry.remaining -= 1;
    if (entry.remaining === 0) this.scripted.splice(index, 1);
    return entry.fault;
  }
}

function toPlan(fault: SimFault): FaultPlan {
  switch (fault.kind) {
    case 'status':
      return {
        ...NO_FAULT,
        status: fault.retryAfterSeconds === undefined ? { status: fault.status } : { status: fault.status, retryAfterSeconds: fault.retryAfterSeconds },
      };
    case 'truncate':
      return { ...NO_FAULT, truncate: true };
    case 'garbage':
      return { ...NO_FAULT, garbage: true };
    case 'delay':
      return { ...NO_FAULT, delayMs: Math.max(0, fault.ms) };
    case 'reset':
      return { ...NO_FAULT, reset: true };
  }
}
