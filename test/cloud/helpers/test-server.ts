import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import { listenOnFreePort } from '../../helpers/listen.js';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** Date.now() when the request arrived. */
  at: number;
}

export type Handler = (req: RecordedRequest, res: ServerResponse, index: number) => void | Promise<void>;

export interface TestServer {
  url: string;
  requests: RecordedRequest[];
  /** Highest number of requests handled at the same time. */
  maxInFlight(): number;
  close(): Promise<void>;
}

/** A tiny HTTP server whose answers the test scripts; it records every request. */
export async function startTestServer(handler: Handler): Promise<TestServer> {
  const requests: RecordedRequest[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const server = createServer((req, res) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    const done = () => {
      inFlight--;
    };
    res.on('close', done);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      requests.push(recorded);
      Promise.resolve(handler(recorded, res, requests.length - 1)).catch((err: unknown) => {
        res.statusCode = 599;
        res.end(String(err));
      });
    });
  });
  const { url, close } = await listenOnFreePort(server);
  return {
    url,
    requests,
    maxInFlight: () => maxInFlight,
    close,
  };
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A spec-shaped keypair list with one record. */
export function keypairList(name = 'deploy-key'): unknown {
  return {
    count: 1,
    results: [
      {
        id: '7f3c1a52-9b1e-4d43-8c0a-1e2f3a4b5c6d',
        name,
        public_key: 'ssh-ed25519 AAAA test',
        shared_in_project: false,
        state: 'ACTIVE',
        created_at: '2023-09-28 15:25:06.115000',
        fingerprint: 'aa:bb',
        private_key: null,
        project_id: 1,
      },
    ],
  };
}
