// Shared helpers for the browser tests: one Chromium (Debian's, via playwright-core), the
// built dist/ served on 127.0.0.1, console-error tracking, CLI oracle, screenshots.
import { chromium } from 'playwright-core';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from './server.mjs';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const DIST = path.join(ROOT, 'dist');
export const SHOTS = path.join(ROOT, 'target', 'e2e');
fs.mkdirSync(SHOTS, { recursive: true });

export async function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

export async function startServer(opts, root = DIST) {
  if (!fs.existsSync(path.join(root, 'index.html'))) throw new Error(`${root}/ is missing: run trunk build --release first`);
  return serve(root, opts);
}

/** A page that records console errors and uncaught exceptions (a Rust panic shows as both).
 * `serviceWorkers: 'block'` keeps the service worker from registering. */
export async function newPage(browser, { width = 1280, height = 900, colorScheme = 'light', serviceWorkers = 'allow' } = {}) {
  const context = await browser.newContext({ viewport: { width, height }, colorScheme, serviceWorkers });
  const page = await context.newPage();
  page.errors = [];
  page.on('console', (m) => { if (m.type() === 'error') page.errors.push(m.text()); });
  page.on('pageerror', (e) => page.errors.push(String(e)));
  page.on('dialog', (d) => { page.errors.push(`unexpected dialog: ${d.message()}`); d.dismiss(); });
  return page;
}

/** Chromium DevTools' "Fast 3G" preset on `page`, through CDP (devtools-frontend
 * `SDK/NetworkManager.ts` `Fast3GConditions`: 1.6 Mb/s × 0.9 down, 750 kb/s × 0.9 up,
 * 150 ms × 3.75 latency), for bench.mjs and startup.mjs. */
export async function fast3g(page) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 150 * 3.75, downloadThroughput: (1.6 * 1000 * 1000) / 8 * 0.9, uploadThroughput: (750 * 1000) / 8 * 0.9 });
}

/** Waits until the app has rendered its first result, and the parts it builds after the
 * first paint (src/components/later.rs). */
export async function ready(page) {
  await page.getByTestId('verdict').waitFor({ timeout: 20000 });
  await page.getByTestId('formats').waitFor({ timeout: 20000 });
}

/** Times the first result from inside the page (an init script; Playwright's polling, which
 * waits up to 100 ms and more between looks, is not in it): `await firstResult(page)` after
 * the navigation gives `{ dom, painted, live }`, ms from navigation start to the verdict
 * attached to the document, to the first contentful paint (Paint Timing), and to the live
 * page's verdict (the calculator's mount). The first verdict is in `#vf-first`: on the home
 * page the build's (scripts/prerender.mjs), in the HTML; on a shared link that opens "Size it"
 * the link's own, from the main chunk (src/first.rs). On a link to another view there is none
 * before the calculator, and `live` equals `dom`. The page paints nothing before its first verdict, so that paint is the
 * first result's. */
export async function timeFirstResult(page) {
  await page.addInitScript(() => {
    new MutationObserver((_, o) => {
      const all = document.querySelectorAll('[data-testid="verdict"]');
      if (!all.length) return;
      window.__firstResult ??= performance.now();
      if (![...all].some((v) => !v.closest('#vf-first'))) return;
      window.__liveResult = performance.now();
      o.disconnect();
    }).observe(document, { childList: true, subtree: true });
  });
}

export async function firstResult(page, timeout = 20000) {
  await page.waitForFunction(() => window.__liveResult && performance.getEntriesByName('first-contentful-paint').length, null, { timeout });
  const t = await page.evaluate(() => {
    const start = performance.getEntriesByType('navigation')[0].startTime;
    return {
      dom: window.__firstResult - start,
      painted: performance.getEntriesByName('first-contentful-paint')[0].startTime - start,
      live: window.__liveResult - start,
    };
  });
  if (!(t.painted >= t.dom)) throw new Error(`the first paint came before the first result: ${JSON.stringify(t)}`);
  return t;
}

// The benchmarks' median (bench.mjs, startup.mjs): of the finite values, the upper middle one
// of an even count; NaN when there is none.
export function median(values) {
  const s = values.filter(Number.isFinite).sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)] : NaN;
}

/** The page's main wasm chunk, read from index.html's text as served (before the HTML
 * parser): a character per byte, U+0100 + byte for NUL, CR and `<` (scripts/main_chunk.py;
 * read here on its own, so that a mistake there shows). */
export function pageWasm(html) {
  const m = /<script type="text\/plain" id="vf-wasm">([^<]*)<\/script>/.exec(html);
  if (!m) throw new Error('index.html holds no #vf-wasm block');
  const codes = Array.from(m[1], (c) => c.codePointAt(0));
  const odd = codes.findIndex((c) => c > 0x1ff || (c > 0xff) !== [0x00, 0x0d, 0x3c].includes(c & 0xff));
  if (odd >= 0) throw new Error(`#vf-wasm: character ${odd} is U+${codes[odd].toString(16)}`);
  return Buffer.from(codes.map((c) => c & 0xff));
}

/** Runs the CLI built by `cargo build -p vramfit-cli` and parses its JSON. */
export function cli(args) {
  const bin = path.join(ROOT, 'target', 'debug', 'vramfit');
  return JSON.parse(execFileSync(bin, [...args, '--json'], { encoding: 'utf8' }));
}

/** The core's binary-unit formatting (vramfit_core::units::fmt_bytes, Units::Binary). */
export function gib(bytes) {
  const g = 2 ** 30;
  if (bytes >= g * 0.995 || bytes === 0) return `${(bytes / g).toFixed(2)} GiB`;
  return `${(bytes / 2 ** 20).toFixed(0)} MiB`;
}

export async function text(page, id) {
  return (await page.getByTestId(id).first().textContent()).trim();
}

export async function shot(page, name) {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}
