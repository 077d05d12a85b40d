import type { SimState } from '../state.js';

/** What a route handler sees of a request. */
export interface RouteContext {
  method: string;
  /** Path without the query string. */
  path: string;
  params: Record<string, string>;
  /** Query parameters; for a repeated name the last value wins. */
  query: Record<string, string>;
  /** The parsed JSON body; undefined when the request had none. */
  body: unknown;
  state: SimState;
  legacy: boolean;
}

/** A handler's answer: JSON body (or none, e.g. 204) and status. */
export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export function ok(body: unknown, status = 200): Reply {
  return { status, body };
}
