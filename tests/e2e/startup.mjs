// Where a cold load's time goes, up to the first result (a benchmark, not a test): against
// release builds on 127.0.0.1, N cold loads of a shared link (default 10) from each build,
// in turn, in one browser, so that the machine's drift and the browser's slower first
// contexts fall on every build alike (a first round is left out); each in a fresh context
// with the service worker blocked (SW=1: allowed, as bench.mjs loads). Medians, in ms from
// navigation start:
//  - the page's responseEnd (Navigation Timing; the main wasm is in the page since step 9,
//    scripts/page_wasm.py) and the catalog file's (Resource Timing),
//  - the first result in the DOM and painted (first contentful paint), both timed inside
//    the page (helpers.mjs timeFirstResult), so Playwright's polling is not in them, and
//    the live page's verdict;
// and the start's phases between the page's own User Timing marks (src/state.rs `mark`;
// a build without them shows NaN): the page's last byte → `vf-start` (the page parsed, the
// glue run, the module decoded, compiled and instantiated) → `vf-catalog-text` → `vf-catalog-read` →
// `vf-first-shown` → `vf-mounted` (the calculator).
// FAST3G=1 loads them gzipped under Chromium DevTools' "Fast 3G" preset (helpers.mjs `fast3g`), as bench.mjs does
// (the phases then follow the bytes); PAGE=/ loads the home page instead of the shared link.
// Usage: node tests/e2e/startup.mjs                     (dist/)
//        BENCH_DIST=/path/to/dist N=20 SW=1 node tests/e2e/startup.mjs
//        FAST3G=1 N=5 node tests/e2e/startup.mjs DIST_A DIST_B
//        N=40 node tests/e2e/startup.mjs DIST_A DIST_B   (builds compared, e.g. copies of
//        dist/ from two commits)
// docs/PERFORMANCE.md ("Issue 19, step 4", "step 8") records what it found.
import { launch, startServer, newPage, DIST, timeFirstResult, firstResult, fast3g, median } from './helpers.mjs';

const dists = process.argv.length > 2 ? process.argv.slice(2) : [process.env.BENCH_DIST || DIST];
const N = Number(process.env.N || 10);
const browser = await launch();
const slow = !!process.env.FAST3G;
const servers = await Promise.all(dists.map((d) => startServer({ gzip: slow }, d)));
const runs = dists.map(() => []);
for (let i = 0; i < (N + 1) * dists.length; i++) {
  const k = i % dists.length;
  const page = await newPage(browser, { serviceWorkers: process.env.SW ? 'allow' : 'block' });
  if (slow) await fast3g(page);
  await timeFirstResult(page);
  await page.goto(servers[k].url + (process.env.PAGE ?? '/?model=qwen2.5-7b&gpu=h100-sxm'), { timeout: 120000 });
  const t = await firstResult(page, 120000);
  const at = await page.evaluate(() => {
    const end = (re) => performance.getEntriesByType('resource').find((e) => re.test(e.name))?.responseEnd ?? NaN;
    const o = { page: performance.getEntriesByType('navigation')[0].responseEnd, catalog: end(/\/catalog-[0-9a-f]+\.json$/) };
    for (const m of performance.getEntriesByType('mark')) if (m.name.startsWith('vf-')) o[m.name] = m.startTime;
    return o;
  });
  if (i >= dists.length) runs[k].push({ ...t, at });
  await page.context().close();
}
const ms = (x) => (Number.isFinite(x) ? `${Math.round(x)}` : 'NaN');
const steps = ['page', 'vf-start', 'vf-catalog-text', 'vf-catalog-read', 'vf-first-shown', 'vf-mounted'];
console.log(`| build | page received | catalog received | first result in the DOM | painted | live page | ${steps.slice(1).map((s, j) => `${steps[j]} → ${s}`).join(' | ')} |`);
console.log(`|---|---|---|---|---|---|${steps.slice(1).map(() => '---').join('|')}|`);
dists.forEach((d, k) => {
  const v = runs[k];
  const phases = steps.slice(1).map((s, j) => ms(median(v.map((r) => r.at[s] - r.at[steps[j]]))));
  console.log(`| ${d} | ${ms(median(v.map((r) => r.at.page)))} | ${ms(median(v.map((r) => r.at.catalog)))} | ${ms(median(v.map((r) => r.dom)))} | ${ms(median(v.map((r) => r.painted)))} | ${ms(median(v.map((r) => r.live)))} | ${phases.join(' | ')} |`);
});
await browser.close();
for (const s of servers) await s.close?.();
