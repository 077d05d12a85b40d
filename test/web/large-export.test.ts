import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { request } from 'undici';
import { BIG_ROWS, bigExportProgress, startTestServer, type TestServer } from './fixtures.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/**
 * Live heap (after a full GC), so the figure is what the export holds on to, not garbage that
 * happens not to be collected yet.
 */
function liveHeap(): number {
  gc();
  return process.memoryUsage().heapUsed;
}

const MB = 1024 * 1024;

describe('a 100,000-row CSV export', () => {
  it('streams every row with backpressure and a flat heap', async () => {
    const baseline = liveHeap();
    let peak = baseline;
    let chunks = 0;

    const res = await request(`${server.url}/api/reports/big.csv`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['transfer-encoding']).toBe('chunked');

    let records = 0;
    let bytes = 0;
    let tail = '';
    let producedWhilePaused = -1;
    let receivedWhilePaused = -1;
    for await (const chunk of res.body) {
      const text = (chunk as Buffer).toString('utf8');
      bytes += (chunk as Buffer).length;
      records += text.split('\n').length - 1;
      tail = (tail + text).slice(-300);
      if (++chunks % 64 === 0) peak = Math.max(peak, liveHeap());
      if (producedWhilePaused < 0 && records > 1000) {
        // Stop reading for a moment: the server must stop pulling rows from the report.
        await new Promise((r) => setTimeout(r, 80));
        producedWhilePaused = bigExportProgress.produced;
        receivedWhilePaused = records;
        peak = Math.max(peak, liveHeap());
      }
    }
    const growthMb = (peak - baseline) / MB;
    console.info(`100,000-row CSV: ${(bytes / MB).toFixed(1)} MB sent; live heap peak growth ${growthMb.toFixed(1)} MB over ${chunks} chunks; rows produced while the client paused at ${receivedWhilePaused}: ${producedWhilePaused}`);

    expect(records).toBe(BIG_ROWS + 1);
    expect(tail.endsWith(`res-099999,99999,9.99,EUR,${'resource number 99999 '.padEnd(200, 'x')}\r\n`)).toBe(true);
    expect(bigExportProgress.closed).toBe(true);
    // Only socket and stream buffers' worth of rows ahead of the reader (a few MB; the kernel
    // sizes localhost buffers), never the whole export.
    expect(producedWhilePaused - receivedWhilePaused).toBeLessThan(BIG_ROWS * 0.6);
    // The CSV is ~21 MB and its rows as objects far more: holding either would show here.
    expect(growthMb).toBeLessThan(10);
  });

  it('stops pulling rows from the report when the client goes away', async () => {
    const controller = new AbortController();
    const res = await request(`${server.url}/api/reports/big.csv`, { signal: controller.signal });
    for await (const _chunk of res.body) {
      controller.abort();
      break;
    }
    await vi.waitFor(() => expect(bigExportProgress.closed).toBe(true), { timeout: 2_000, interval: 10 });
    expect(bigExportProgress.closed).toBe(true);
    expect(bigExportProgress.produced).toBeLessThan(BIG_ROWS);
  });
});
