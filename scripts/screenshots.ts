/**
 * `npm run screenshots`: every report page, and every inventory kind, of the demo service in
 * headless Chromium at 1440 px and at 390 px wide, in light and dark colour schemes, so anyone can
 * look at what the pages show. The service runs on embedded defaults (in-memory PGlite, the built-in
 * simulator with two days of demo history); nothing outside this machine is contacted.
 *
 *   npm run screenshots                    # into ./screenshots/ (not committed)
 *   npm run screenshots -- --out DIR       # elsewhere
 *   npm run screenshots -- --readme        # also refresh docs/screenshots/overview.png (the README's)
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { loadConfig } from '../src/config/index.js';
import { silentLogger } from '../src/logger.js';
import { startService } from '../src/main.js';
import { INVENTORY_KINDS } from '../src/reports/inventory-kinds.js';
import { allReports } from '../src/reports/index.js';

const WIDTHS = [
  { name: '1440', width: 1440, height: 900 },
  { name: '390', width: 390, height: 844 },
] as const;
const SCHEMES = ['light', 'dark'] as const;

const { values: args } = parseArgs({
  options: {
    out: { type: 'string', default: 'screenshots' },
    readme: { type: 'boolean', default: false },
  },
});

function pagesToShoot(): Array<{ file: string; path: string }> {
  const pages = allReports()
    .filter((report) => report.name !== 'inventory')
    .map((report) => ({ file: report.name, path: `/reports/${report.name}` }));
  pages.unshift({ file: 'index', path: '/' });
  for (const kind of INVENTORY_KINDS) pages.push({ file: `inventory-${kind}`, path: `/reports/inventory?kind=${kind}` });
  return pages;
}

async function main(): Promise<void> {
  const out = args.out!;
  mkdirSync(out, { recursive: true });
  const config = loadConfig({ CLOUDTALLY_DATA_DIR: 'memory://', PORT: '0', SIM_TASK_DELAY_MS: '20' });
  const service = await startService(config, silentLogger(), { demoHistoryDays: 2 });
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  try {
    await service.ready;
    await service.collection.idle();
    const pages = pagesToShoot();
    for (const size of WIDTHS) {
      for (const scheme of SCHEMES) {
        const context = await browser.newContext({ viewport: { width: size.width, height: size.height }, colorScheme: scheme });
        const page = await context.newPage();
        for (const target of pages) {
          const response = await page.goto(`${service.url}${target.path}`, { waitUntil: 'networkidle' });
          if (!response || response.status() >= 400) throw new Error(`${target.path} answered ${response?.status() ?? 'nothing'}`);
          // Every chart drawn (not its "Drawing the chart…" placeholder).
          await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('figure.chart:not(.chart-empty):not(.chart-drawn)').length === 0);
          const file = join(out, `${target.file}-${size.name}-${scheme}.png`);
          await page.screenshot({ path: file, fullPage: true });
          process.stdout.write(`${file}\n`);
        }
        await context.close();
      }
    }
    if (args.readme) {
      copyFileSync(join(out, 'overview-1440-light.png'), 'docs/screenshots/overview.png');
      process.stdout.write('docs/screenshots/overview.png\n');
    }
  } finally {
    await browser.close();
    await service.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`screenshots failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
