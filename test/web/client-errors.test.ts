/**
 * Requests refused by Node's HTTP parser (before Express) get a status and a readable reason,
 * not an empty body that a browser shows as a blank page.
 */
import { createServer } from 'node:http';
import { connect } from 'node:net';
import express from 'express';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logger.js';
import { answerClientErrors } from '../../src/web/client-errors.js';
import { listenOnFreePort, type Listening } from '../helpers/listen.js';

let server: Listening;
let port: number;

beforeAll(async () => {
  const app = express();
  app.get('/reports/x', (_req, res) => void res.send('ok'));
  const http = createServer(app);
  answerClientErrors(http, silentLogger());
  server = await listenOnFreePort(http);
  port = server.port;
});
afterAll(async () => {
  await server.close();
});

function raw(text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(text));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString('utf8')));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

describe('requests the HTTP parser refuses', () => {
  it('answers a 20 KB URL with 431 and what to do about it', async () => {
    const res = await request(`http://127.0.0.1:${port}/reports/x?q=${'x'.repeat(20_000)}`);
    expect(res.statusCode).toBe(431);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(await res.body.text()).toContain('exceed 16 KB. Remove some filters');
    // A normal request on the same server is unaffected.
    expect(await (await request(`http://127.0.0.1:${port}/reports/x`)).body.text()).toBe('ok');
  });

  it('answers a malformed request with 400 and a reason', async () => {
    const answer = await raw('NOT HTTP AT ALL\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(answer).toContain('The request could not be read: it is not valid HTTP.');
  });
});
