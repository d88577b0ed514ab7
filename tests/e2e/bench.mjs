// Browser timing benchmark (not a test): against the release build on 127.0.0.1,
//  - median of 10 cold loads: navigation start → first result (the verdict) in the DOM, and
//    painted (first contentful paint; both timed inside the page: helpers.mjs timeFirstResult);
//  - median of 20 recomputes: input change → new numbers and redrawn chart in the DOM;
//  - WebAssembly memory after load;
//  - median of 5: the OOM explainer's first answer, which starts the import worker (a second
//    wasm module, fetched and compiled then), and the next answer from the running worker;
//  - median of 20 recomputes after a model change (the model select);
//  - a cold first visit with the service worker on, from a server that gzips as a static host
//    does: every byte the browser fetched until the service worker has installed and the
//    network is quiet (its install included), then with what it caches a moment after the
//    first result (until `offline-ready`), and the same with the service worker blocked;
//  - median of 5 cold loads under Chromium DevTools' "Fast 3G" preset through CDP
//    (`Network.emulateNetworkConditions`: 1.6 Mb/s × 0.9 down, 750 kb/s × 0.9 up, 150 ms ×
//    3.75 latency; devtools-frontend `SDK/NetworkManager.ts` `Fast3GConditions`), service
//    worker blocked, gzip on: navigation start → first result in the DOM.
// Usage: node tests/e2e/bench.mjs   (after `trunk build --release`; prints Markdown)
//        BENCH_DIST=/path/to/dist node tests/e2e/bench.mjs   (another build, e.g. main's, to
//        compare in one session)
import os from 'node:os';
import { execFileSync } from 'node:child_process';
import { launch, startServer, newPage, DIST, timeFirstResult, firstResult } from './helpers.mjs';

const median = (v) => { const s = [...v].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const browser = await launch();
const dist = process.env.BENCH_DIST || DIST;
const server = await startServer({}, dist);
const loads = [];
const painted = [];
for (let i = 0; i < 10; i++) {
  const page = await newPage(browser); // fresh context: cold cache, no service worker
  await timeFirstResult(page);
  await page.goto(server.url + '/?model=qwen2.5-7b&gpu=h100-sxm');
  const t = await firstResult(page);
  loads.push(t.dom);
  painted.push(t.painted);
  await page.context().close();
}
const page = await newPage(browser);
await page.goto(server.url + '/?model=qwen2.5-7b&gpu=h100-sxm');
await page.getByTestId('verdict').waitFor();
const heap = await page.evaluate(() => window.wasmBindings?.wasm_memory_bytes?.() ?? NaN);
const recomputes = [];
const domUpdates = [];
for (let i = 0; i < 20; i++) {
  const len = 4096 + i * 1024;
  const [dom, frame] = await page.evaluate(async (len) => {
    const input = document.querySelector('[data-testid="context-length"]');
    const target = document.querySelector('[data-testid="max-concurrency"]');
    const chart = document.querySelector('[data-testid="memory-chart"]');
    let tDom = null;
    // The moment both the number and the chart have been rewritten (microtask precision).
    const changed = new Promise((resolve) => {
      let n = 0;
      const obs = new MutationObserver(() => { if (++n >= 1 && tDom === null) { tDom = performance.now(); obs.disconnect(); resolve(); } });
      obs.observe(target, { childList: true, characterData: true, subtree: true });
      void chart;
    });
    const t0 = performance.now();
    input.value = String(len);
    input.dispatchEvent(new Event('input', { bubbles: true }));
    await changed;
    await new Promise((r) => requestAnimationFrame(() => r()));
    return [tDom - t0, performance.now() - t0];
  }, len);
  domUpdates.push(dom);
  recomputes.push(frame);
}
// Paste → first finding visible, polled each animation frame.
const explain = (p, msg) => p.evaluate(async (msg) => {
  const input = document.querySelector('[data-testid="oom-input"]');
  const first = () => document.querySelector('[data-testid="oom-finding"] h3')?.textContent;
  const before = first();
  const t0 = performance.now();
  input.value = msg;
  input.dispatchEvent(new Event('input', { bubbles: true }));
  while (first() === before || first() === undefined) await new Promise((r) => requestAnimationFrame(r));
  return performance.now() - t0;
}, msg);
const TORCH = 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 23.65 GiB of which 3.06 MiB is free. Process 1234 has 23.64 GiB memory in use. Of the allocated memory 16.97 GiB is allocated by PyTorch, and 6.27 GiB is reserved by PyTorch but unallocated.';
const cold = [];
const warm = [];
for (let i = 0; i < 5; i++) {
  const p = await newPage(browser);
  await p.goto(server.url + '/?view=oom');
  await p.getByTestId('oom-input').waitFor();
  cold.push(await explain(p, TORCH));
  warm.push(await explain(p, 'RuntimeError: CUDA error: out of memory'));
  await p.context().close();
}
// Model change → new numbers in the DOM (alternating two catalog models).
const models = [];
for (let i = 0; i < 20; i++) {
  const id = i % 2 ? 'qwen2.5-7b' : 'llama-3.1-8b';
  models.push(await page.evaluate(async (id) => {
    const select = document.querySelector('[data-testid="model"]');
    const target = document.querySelector('[data-testid="weights-per-gpu"]');
    const changed = new Promise((resolve) => {
      const obs = new MutationObserver(() => { obs.disconnect(); resolve(performance.now()); });
      obs.observe(target, { childList: true, characterData: true, subtree: true });
    });
    const t0 = performance.now();
    select.value = id;
    select.dispatchEvent(new Event('change', { bubbles: true }));
    return (await changed) - t0;
  }, id));
}
// What a first visit sends, gzip as a host serves it, with and without the service worker.
const gz = await startServer({ gzip: true }, dist);
const visit = async (serviceWorkers) => {
  const before = gz.stats.requests.length;
  const p = await newPage(browser, { serviceWorkers });
  await p.goto(gz.url + '/?model=qwen2.5-7b&gpu=h100-sxm');
  await p.getByTestId('verdict').waitFor();
  if (serviceWorkers === 'allow') {
    await p.evaluate(async () => { await navigator.serviceWorker.ready; });
  }
  // Quiet for 1.5 s: the first load (and the service worker's install) has finished.
  const quiet = async () => {
    let n = -1;
    while (n !== gz.stats.requests.length) { n = gz.stats.requests.length; await new Promise((r) => setTimeout(r, 1500)); }
    return gz.stats.requests.slice(before);
  };
  const sum = (rs) => rs.reduce((a, r) => a + (r.gzip ?? r.bytes ?? 0), 0);
  const got = await quiet();
  // Then what the service worker caches a moment after the first result (every other view,
  // the import worker, the sources), once the footer says every view works offline.
  let all = got;
  if (serviceWorkers === 'allow') {
    // A build without the note (before issue 19) caches everything at install.
    if (await p.getByTestId('offline-ready').waitFor({ timeout: 15000 }).then(() => true, () => false)) all = await quiet();
  }
  await p.context().close();
  return { bytes: sum(got), requests: got.length, allBytes: sum(all), allRequests: all.length };
};
const withSw = await visit('allow');
const noSw = await visit('block');
// Fast 3G, cold, no service worker.
const slow = [];
for (let i = 0; i < 5; i++) {
  const p = await newPage(browser, { serviceWorkers: 'block' });
  const cdp = await p.context().newCDPSession(p);
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 150 * 3.75, downloadThroughput: (1.6 * 1000 * 1000) / 8 * 0.9, uploadThroughput: (750 * 1000) / 8 * 0.9 });
  await timeFirstResult(p);
  await p.goto(gz.url + '/?model=qwen2.5-7b&gpu=h100-sxm', { timeout: 120000 });
  slow.push((await firstResult(p, 120000)).dom);
  await p.context().close();
}
await gz.close();
await browser.close();
await server.close();
let chromium = '';
try { chromium = execFileSync('/usr/bin/chromium', ['--version'], { encoding: 'utf8' }).trim(); } catch { /* optional */ }
console.log(`## Browser (${new Date().toISOString().slice(0, 10)}, ${os.cpus().length} cores ${os.cpus()[0]?.model ?? ''}, ${chromium}, headless)\n`);
console.log('| measure | median | min | max |\n|---|---|---|---|');
console.log(`| cold load → first result in the DOM (10 loads) | ${median(loads).toFixed(0)} ms | ${Math.min(...loads).toFixed(0)} ms | ${Math.max(...loads).toFixed(0)} ms |`);
console.log(`| cold load → first result painted (10 loads) | ${median(painted).toFixed(0)} ms | ${Math.min(...painted).toFixed(0)} ms | ${Math.max(...painted).toFixed(0)} ms |`);
console.log(`| input change → new numbers and chart in the DOM (20) | ${median(domUpdates).toFixed(1)} ms | ${Math.min(...domUpdates).toFixed(1)} ms | ${Math.max(...domUpdates).toFixed(1)} ms |`);
console.log(`| input change → next animation frame after the update (20) | ${median(recomputes).toFixed(1)} ms | ${Math.min(...recomputes).toFixed(1)} ms | ${Math.max(...recomputes).toFixed(1)} ms |`);
console.log(`| WebAssembly memory after load | ${(heap / 2 ** 20).toFixed(1)} MiB | | |`);
console.log(`| OOM explainer, first answer: starts the import worker (5) | ${median(cold).toFixed(0)} ms | ${Math.min(...cold).toFixed(0)} ms | ${Math.max(...cold).toFixed(0)} ms |`);
console.log(`| OOM explainer, next answer from the running worker (5) | ${median(warm).toFixed(1)} ms | ${Math.min(...warm).toFixed(1)} ms | ${Math.max(...warm).toFixed(1)} ms |`);
console.log(`| model change → new numbers in the DOM (20) | ${median(models).toFixed(1)} ms | ${Math.min(...models).toFixed(1)} ms | ${Math.max(...models).toFixed(1)} ms |`);
console.log(`| cold first visit, service worker on: bytes fetched until quiet (gzip, its install included) | ${(withSw.bytes / 1000).toFixed(0)} KB (${withSw.requests} requests) | | |`);
console.log(`| the same, with what the service worker caches after the first result (every view offline) | ${(withSw.allBytes / 1000).toFixed(0)} KB (${withSw.allRequests} requests) | | |`);
console.log(`| cold first visit, service worker blocked: bytes fetched (gzip) | ${(noSw.bytes / 1000).toFixed(0)} KB (${noSw.requests} requests) | | |`);
console.log(`| Fast 3G, cold, no service worker → first result in the DOM (5) | ${median(slow).toFixed(0)} ms | ${Math.min(...slow).toFixed(0)} ms | ${Math.max(...slow).toFixed(0)} ms |`);
