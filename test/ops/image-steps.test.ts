/**
 * The container image's steps, replayed by scripts/image-steps.mjs in a clean folder: the same
 * npm ci / npm run build / npm ci --omit=dev the Dockerfile runs (read from the Dockerfile itself),
 * then its CMD, its HEALTHCHECK until healthy, and SIGTERM expecting exit code 0.
 *
 * Slow (two npm installs and a build, 1-2 minutes): it runs in CI (CI set) and when
 * CLOUDTALLY_IMAGE_STEPS=1; CLOUDTALLY_IMAGE_STEPS=0 skips it everywhere. It needs no network
 * beyond the npm registry (npm's local cache usually answers).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const flag = process.env.CLOUDTALLY_IMAGE_STEPS;
const enabled = flag === '1' || (flag !== '0' && Boolean(process.env.CI));
const root = fileURLToPath(new URL('../..', import.meta.url));

describe.runIf(enabled)('the Dockerfile steps in a clean folder', () => {
  it('install, build, start, answer the HEALTHCHECK and /healthz, and stop cleanly on SIGTERM', async () => {
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [join(root, 'scripts', 'image-steps.mjs')], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.on('error', reject);
      child.on('exit', (exitCode) => resolve({ code: exitCode, output }));
    });
    // On failure the script's own account (which step, what the service printed) is the message.
    expect(code, output.slice(-6000)).toBe(0);
    expect(output).toContain('build: RUN npm run build');
    expect(output).toMatch(/runtime: RUN .*npm ci --omit=dev/);
    expect(output).toMatch(/HEALTHCHECK node dist\/ops\/healthcheck\.js: exit 0/);
    expect(output).toMatch(/GET \/healthz: 200 \{"status":"ok"/);
    expect(output).toContain('service exited: code 0, signal null');
  }, 600_000);
});
