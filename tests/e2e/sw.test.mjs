// The service worker's traffic and updates: its pre-cache downloads nothing the page has
// already downloaded, and a new build reaches a returning visitor (new assets, new catalog
// sources) while the old build's cache is deleted. Bytes are counted at the server.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { launch, startServer, newPage, ready, DIST, ROOT } from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

/** Waits until the server has heard no request for `ms`. */
async function settle(server, ms = 800) {
  let n = -1;
  while (n !== server.stats.requests.length) {
    n = server.stats.requests.length;
    await new Promise((r) => setTimeout(r, ms));
  }
}

/** Uses every part of the app that downloads something: the first load, the catalog's
 * sources and the import worker (the OOM explainer). */
async function useEverything(page) {
  await page.getByTestId('tab-catalog').click();
  await page.locator('[data-testid="catalog-models"][data-sources="ready"]').waitFor();
  await page.getByTestId('tab-oom').click();
  await page.getByTestId('oom-input').fill('RuntimeError: CUDA error: out of memory');
  await page.getByTestId('oom-finding').first().waitFor();
}

/** A cold visit that uses everything; returns the bytes the server wrote and its requests. */
async function coldVisit(cache, serviceWorkers) {
  const server = await startServer({ cache });
  const page = await newPage(browser, { serviceWorkers });
  await page.goto(server.url + '/');
  await ready(page);
  if (serviceWorkers === 'allow') {
    // The worker has pre-cached the build and controls the page before anything is used.
    await page.evaluate(async () => { await navigator.serviceWorker.ready; });
    await page.waitForFunction(() => !!navigator.serviceWorker.controller);
    assert.equal((await page.evaluate(() => caches.keys())).length, 1);
    // It then caches what the first load did not fetch, when the page asks.
    await page.getByTestId('offline-ready').waitFor();
  }
  await useEverything(page);
  await settle(server);
  const out = { bytes: server.stats.wire(), requests: server.stats.requests };
  assert.deepEqual(page.errors, []);
  await page.context().close();
  await server.close();
  return out;
}

for (const cache of ['http', 'none']) {
  test(`a cold visit with the service worker downloads each file once (server cache headers: ${cache})`, async () => {
    const without = await coldVisit(cache, 'block');
    const withSw = await coldVisit(cache, 'allow');
    console.log(`cold visit, cache headers ${cache}: ${withSw.bytes} B with the service worker, ${without.bytes} B without (${(withSw.bytes / without.bytes).toFixed(3)}x)`);
    assert.ok(withSw.bytes <= 1.05 * without.bytes, `${withSw.bytes} B with the service worker, ${without.bytes} B without`);
    // No content-hashed file (the app's js and wasm, the worker's, the sources) is sent twice.
    const sent = withSw.requests.filter((r) => r.status === 200 && /-[0-9a-f]{12,16}[._]/.test(r.url)).map((r) => r.url);
    assert.deepEqual(sent.filter((u, i) => sent.indexOf(u) !== i), []);
    assert.ok(sent.some((u) => u.includes('_split_app.wasm')) && sent.some((u) => /catalog-sources-/.test(u)), sent.join(' '));
  });
}

test('a first visit through a shared link downloads the page once: the service worker caches the response the browser already has', async () => {
  // With either server's headers: a `no-cache` response is stored too, and `force-cache`
  // takes it without asking the server again.
  for (const cache of ['http', 'none']) {
    const server = await startServer({ cache });
    const page = await newPage(browser);
    try {
      await page.goto(server.url + '/?model=qwen2.5-7b&gpu=l40s');
      await ready(page);
      await page.evaluate(async () => { await navigator.serviceWorker.ready; });
      await settle(server);
      const pages = server.stats.requests.filter((r) => /^\/(index\.html)?(\?.*)?$/.test(r.url)).map((r) => `${r.url} ${r.status}`);
      assert.deepEqual(pages, ['/?model=qwen2.5-7b&gpu=l40s 200'], cache);
      // The page it cached as './' is this build's: once every view is cached, offline, the
      // start page and another link load.
      await page.getByTestId('offline-ready').waitFor();
      await page.context().setOffline(true);
      for (const url of ['/', '/?model=llama-3.1-8b&gpu=h100-sxm']) {
        await page.goto(server.url + url);
        await ready(page);
      }
      assert.deepEqual(page.errors.filter((x) => !/Failed to load resource|net::ERR_/.test(x)), []);
    } finally {
      await page.context().close();
      await server.close();
    }
  }
});

test('the first load fetches what "Size it" needs and nothing else; the rest when used', async () => {
  const server = await startServer({ cache: 'http' });
  const page = await newPage(browser, { serviceWorkers: 'block' });
  await page.goto(server.url + '/');
  await ready(page);
  await settle(server);
  const first = server.stats.requests.map((r) => r.url);
  const later = /vramfit-web-[0-9a-f]+_split_(views|worker_client)\.wasm|vramfit-worker-|catalog-sources-|icon-\d+\.png/;
  assert.deepEqual(first.filter((u) => later.test(u)), [], first.join(' '));
  assert.ok(first.some((u) => /vramfit-web-[0-9a-f]+\.js/.test(u)), first.join(' '));
  // The rest of "Size it" is a chunk of its own, fetched once right after the first result.
  assert.equal(first.filter((u) => /_split_size_rest\.wasm/.test(u)).length, 1, first.join(' '));
  // Another view brings the views chunk (a part of the page's wasm, src/views.rs), once; going back and forth fetches nothing more.
  await page.getByTestId('tab-budget').click();
  await page.locator('[data-lazy="view"][data-mounted]').waitFor();
  await page.getByTestId('tab-size').click();
  await page.getByTestId('tab-quant').click();
  await page.locator('[data-lazy="view"][data-mounted]').waitFor();
  await settle(server, 400);
  const views = server.stats.requests.map((r) => r.url).filter((u) => /_split_views\.wasm/.test(u));
  assert.equal(views.length, 1, views.join(' ')); // one wasm chunk; its loader came with the page
  assert.deepEqual(page.errors, []);
  await page.context().close();
  await server.close();
});

/** Replaces `name` in `dir` by a file of new content under a new content-hashed name, and
 * renames it (and updates its integrity hash, if any) in index.html. */
function rehash(dir, name, content) {
  const hash = crypto.createHash('sha256').update(content).digest('hex').slice(0, 16);
  const next = name.replace(/-[0-9a-f]{12,16}(?=[._])/, `-${hash}`);
  assert.notEqual(next, name);
  const sri = (b) => 'sha384-' + crypto.createHash('sha384').update(b).digest('base64');
  const old = fs.readFileSync(path.join(dir, name));
  fs.rmSync(path.join(dir, name));
  fs.writeFileSync(path.join(dir, next), content);
  const index = path.join(dir, 'index.html');
  const html = fs.readFileSync(index, 'utf8');
  fs.writeFileSync(index, html.replaceAll(name, next).replaceAll(sri(old), sri(content)));
  return next;
}

test('a new build replaces the old one: new assets and sources after one reload, the old cache deleted', async () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'vramfit-sw-'));
  const [a, b] = ['a', 'b'].map((n) => path.join(tmp, n));
  // Timestamps kept: an unchanged file keeps its ETag, as on a real host.
  fs.cpSync(DIST, a, { recursive: true, preserveTimestamps: true });
  fs.cpSync(DIST, b, { recursive: true, preserveTimestamps: true });
  // Build B: a changed stylesheet (inline in index.html) and a changed source, renamed by
  // content; then sw.js's file list and cache name written again by the build's own hook.
  const withStyle = fs.readFileSync(path.join(b, 'index.html'), 'utf8').replace('</style>', ':root{--vf-build:"B"}</style>');
  assert.match(withStyle, /--vf-build:"B"/);
  fs.writeFileSync(path.join(b, 'index.html'), withStyle);
  const html = fs.readFileSync(path.join(b, 'index.html'), 'utf8');
  const sourcesName = /catalog-sources-[0-9a-f]{16}\.json/.exec(html)[0];
  const sources = JSON.parse(fs.readFileSync(path.join(b, sourcesName), 'utf8'));
  const id = Object.keys(sources.models)[0];
  sources.models[id] = 'Build B source https://example.invalid/build-b';
  rehash(b, sourcesName, JSON.stringify(sources));
  execFileSync('python3', [path.join(ROOT, 'scripts', 'sw_files.py'), b]);
  const build = (dir) => /^const BUILD = "([0-9a-f]{16})"/m.exec(fs.readFileSync(path.join(dir, 'sw.js'), 'utf8'))[1];
  assert.notEqual(build(a), build(b));

  const server = await startServer({}, a);
  const page = await newPage(browser);
  const cacheKeys = () => page.evaluate(() => caches.keys());
  const buildVar = () => page.evaluate(() => getComputedStyle(document.documentElement).getPropertyValue('--vf-build').trim());
  const sourceOf = async () => {
    await page.getByTestId('tab-catalog').click();
    await page.locator('[data-testid="catalog-models"][data-sources="ready"]').waitFor();
    await page.getByTestId('catalog-search').fill(id);
    const rows = await page.locator('[data-testid="catalog-models"] tbody tr').evaluateAll((trs) => trs.map((tr) => [tr.querySelector('code').textContent, tr.lastElementChild.textContent]));
    return rows.find(([i]) => i === id)[1];
  };
  await page.goto(server.url + '/');
  await ready(page);
  await page.evaluate(async () => { await navigator.serviceWorker.ready; });
  await page.waitForFunction(() => !!navigator.serviceWorker.controller);
  await page.getByTestId('offline-ready').waitFor();
  assert.deepEqual(await cacheKeys(), [`vramfit-${build(a)}`]);
  assert.equal(await buildVar(), '');
  assert.doesNotMatch(await sourceOf(), /Build B source/);

  // The deploy. One reload (of the start page: the catalog tab is in the URL) shows build B:
  // navigations are network-first, and B's new files are not A's, so A's worker lets them
  // through. B's worker installs meanwhile (taking the files A already had from A's cache),
  // skips waiting, claims the page and deletes A's cache.
  server.setRoot(b);
  const seen = server.stats.requests.length;
  await page.goto(server.url + '/');
  await ready(page);
  assert.equal(await buildVar(), '"B"');
  assert.match(await sourceOf(), /Build B source/);
  // The browser checks sw.js for an update after a navigation (a second or so later).
  const t0 = Date.now();
  while (JSON.stringify(await cacheKeys()) !== JSON.stringify([`vramfit-${build(b)}`])) {
    assert.ok(Date.now() - t0 < 20000, `caches after the update: ${await cacheKeys()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  console.log(`update: build B's cache alone after ${Date.now() - t0} ms`);
  // Files that did not change were not downloaded again (the page's wasm chunks, the
  // worker's). The main chunk is in index.html (scripts/page_wasm.py), which a deploy always
  // changes: it comes with the page, once.
  const again = server.stats.requests.slice(seen).map((r) => `${r.url} ${r.status}`);
  console.log(`update: requests after the deploy: ${again.join(', ')}`);
  assert.deepEqual(again.filter((u) => /\.wasm /.test(u)), [], again.join(' '));
  assert.equal(again.filter((u) => /^\/(index\.html)?(\?\S*)? 200$/.test(u)).length, 1, again.join(' '));

  // Build B's cache is complete: with the server gone, B loads with its stylesheet and sources.
  await server.close();
  await page.goto(server.url + '/');
  await ready(page);
  assert.equal(await buildVar(), '"B"');
  assert.match(await sourceOf(), /Build B source/);
  assert.deepEqual(await cacheKeys(), [`vramfit-${build(b)}`]);
  assert.deepEqual(page.errors.filter((x) => !/Failed to load resource|net::ERR_/.test(x)), []);
  await page.context().close();
  fs.rmSync(tmp, { recursive: true, force: true });
});
