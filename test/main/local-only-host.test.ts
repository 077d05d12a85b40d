import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { loadConfig } from '../../src/config/index.js';
import { silentLogger } from '../../src/logger.js';
import { startService, type RunningService } from '../../src/main.js';

/**
 * Local-only mode as `npm start` runs it: every endpoint, health and metrics included, answers
 * only Host names of the loopback, so a web page that points its own name at 127.0.0.1 (DNS
 * rebinding) reaches nothing.
 */
describe('startService in local-only mode', () => {
  let service: RunningService;
  let port: string;

  beforeAll(async () => {
    const config = loadConfig(
      { CLOUDTALLY_CONFIG: '/test/cloudtally.json', CLOUDTALLY_DATA_DIR: 'memory://', PORT: '0' },
      { readFile: () => JSON.stringify({ collect_on_start: false }) },
    );
    service = await startService(config, silentLogger(), { demoHistoryDays: 0 });
    await service.ready;
    port = new URL(service.url).port;
  }, 120_000);

  afterAll(async () => {
    await service?.stop();
  });

  const get = async (path: string, host: string) => {
    const res = await request(`${service.url}${path}`, { headers: { host } });
    return { status: res.statusCode, body: await res.body.text() };
  };

  it('serves pages, health and metrics under localhost, 127.0.0.1 and [::1]', async () => {
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`]) {
      for (const path of ['/healthz', '/metrics', '/reports/overview']) expect((await get(path, host)).status, `${host}${path}`).toBe(200);
    }
  });

  it('answers 421 with a plain explanation to any other Host, health and metrics included', async () => {
    for (const host of [`rebind.evil.example:${port}`, 'rebind.evil.example']) {
      for (const path of ['/healthz', '/readyz', '/metrics', '/reports/overview', '/login']) {
        const res = await get(path, host);
        expect(res.status, `${host}${path}`).toBe(421);
        expect(res.body).toContain('local-only mode');
        expect(res.body).not.toContain('<html');
      }
    }
  });
});
