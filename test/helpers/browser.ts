import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

/** The system Chromium (apt); no browser is ever downloaded. */
export const CHROMIUM = '/usr/bin/chromium';
/** In CI the browser tests must run (and fail loudly if Chromium is missing); locally they are skipped without it. */
export const skipBrowserTests = !existsSync(CHROMIUM) && !process.env.CI;

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
}

export interface WatchOptions {
  javaScriptEnabled?: boolean;
}

/**
 * A page in a fresh context that records everything that would mean the page is broken: console
 * errors and warnings, page errors, CSP violations, failed loads and HTTP errors.
 */
export async function watchedPage(browser: Browser, options: WatchOptions = {}): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext({ acceptDownloads: true, javaScriptEnabled: options.javaScriptEnabled ?? true });
  const page = await context.newPage();
  const problems: string[] = [];
  // Runs in the page (the tsconfig has no DOM types, hence `any`).
  await page.addInitScript(() => {
    (globalThis as any).document.addEventListener('securitypolicyviolation', (e: any) => {
      console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`);
    });
  });
  page.on('console', (msg) => {
    if (msg.type() === 'error' || msg.type() === 'warning') problems.push(`console ${msg.type()}: ${msg.text()}`);
  });
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('requestfailed', (req) => {
    const error = req.failure()?.errorText;
    // The browser cancels what an old document was still loading (its favicon, say) when a form
    // submission navigates away: not a failure of the app. Server errors show as HTTP >= 400 below.
    if (error === 'net::ERR_ABORTED') return;
    problems.push(`request failed: ${req.url()} ${error}`);
  });
  page.on('response', (res) => {
    if (res.status() >= 400) problems.push(`HTTP ${res.status()} for ${res.url()}`);
  });
  return { page, problems };
}

/** Each canvas on the page: its id, Chart.js type, width and how many pixels it painted. */
export function drawnCharts(page: Page): Promise<Array<{ id: string; type: string | null; width: number; painted: number }>> {
  return page.evaluate(() =>
    [...(globalThis as any).document.querySelectorAll('canvas')].map((canvas: any) => {
      const chart = (globalThis as any).Chart.getChart(canvas) as { config: { type: string } } | undefined;
      const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data as Uint8ClampedArray;
      let painted = 0;
      for (let i = 3; i < pixels.length; i += 4) if (pixels[i]! > 0) painted++;
      return { id: canvas.id as string, type: chart?.config.type ?? null, width: canvas.width as number, painted };
    }),
  );
}
