// Where a cold load's time goes, up to the first result (a benchmark, not a test): against
// the release build on 127.0.0.1, N cold loads (default 10), each in a fresh context with the
// service worker blocked (SW=1: allowed, as bench.mjs loads), and the medians of
//  - the page wasm's and the catalog file's responseEnd (Resource Timing),
//  - the first result in the DOM and painted (first contentful paint), both timed inside
//    the page (helpers.mjs timeFirstResult), so Playwright's polling is not in them.
// All from navigation start, in ms. Usage: node tests/e2e/startup.mjs
//   BENCH_DIST=/path/to/dist N=20 SW=1 node tests/e2e/startup.mjs
// docs/PERFORMANCE.md ("Issue 19, step 4") records what it found.
import { launch, startServer, newPage, DIST, timeFirstResult, firstResult } from './helpers.mjs';
const browser = await launch();
const server = await startServer({}, process.env.BENCH_DIST || DIST);
const rows = [];
for (let i = 0; i < +(process.env.N || 10); i++) {
  const page = await newPage(browser, { serviceWorkers: process.env.SW ? 'allow' : 'block' });
  await timeFirstResult(page);
  await page.goto(server.url + '/?model=qwen2.5-7b&gpu=h100-sxm');
  const { dom, painted } = await firstResult(page);
  const [wasm, catalog] = await page.evaluate(() => {
    const end = (re) => performance.getEntriesByType('resource').find((e) => re.test(e.name))?.responseEnd ?? NaN;
    return [end(/vramfit-web-[0-9a-f]+_bg\.wasm$/), end(/\/catalog-[0-9a-f]+\.json$/)];
  });
  rows.push([wasm, catalog, dom, painted]);
  await page.context().close();
}
const med = (k) => { const s = rows.map((r) => r[k]).sort((a, b) => a - b); return s[Math.floor(s.length / 2)].toFixed(0); };
console.log('| build | wasm received | catalog received | first result in the DOM | painted |\n|---|---|---|---|---|');
console.log(`| ${process.env.BENCH_DIST || 'dist'} | ${med(0)} | ${med(1)} | ${med(2)} | ${med(3)} |`);
await browser.close();
await server.close?.();
