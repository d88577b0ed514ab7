// Offline use and exports: after one visit the app loads and computes with the server gone
// (service worker + web manifest); Markdown/CSV/SVG/PNG exports download.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { launch, startServer, newPage, ready, cli, text, gib } from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

test('after one visit the app reloads and computes with the network gone', async () => {
  const server = await startServer();
  const page = await newPage(browser);
  await page.goto(server.url + '/');
  await ready(page);
  const manifest = await page.evaluate(async () => (await fetch(document.querySelector('link[rel=manifest]').href)).json());
  assert.equal(manifest.short_name, 'vramfit');
  assert.ok(manifest.icons.some((i) => i.sizes === '512x512'));
  await page.evaluate(async () => { await navigator.serviceWorker.ready; });
  await page.reload();
  await ready(page);
  await page.waitForFunction(() => !!navigator.serviceWorker.controller);
  // What the first load did not need (the views chunk, the import worker, the catalog's
  // sources) is cached a moment after the first result; the footer says when.
  await page.getByTestId('offline-ready').waitFor();
  await server.close();
  await page.reload();
  await ready(page);
  await page.getByTestId('context-length').fill('4096');
  const e = cli(['plan', 'llama-3.1-8b', '--gpu', 'h100-sxm', '--max-model-len', '4096']);
  await page.waitForFunction((v) => document.querySelector('[data-testid="max-concurrency"]')?.textContent.trim() === v, e.per_gpu.max_concurrency.toFixed(2));
  assert.equal(await text(page, 'weights-per-gpu'), gib(e.per_gpu.weights_bytes));
  // The catalog's sources (fetched on demand, cached by the service worker) load offline.
  await page.getByTestId('tab-catalog').click();
  await page.locator('[data-testid="catalog-models"][data-sources="ready"]').waitFor();
  // So does the import worker (cached, though this page never used it): the OOM
  // explainer answers offline.
  await page.getByTestId('tab-oom').click();
  await page.getByTestId('oom-input').fill('RuntimeError: CUDA error: out of memory');
  await page.getByTestId('oom-finding').first().waitFor();
  // Offline reloads log the failed network attempt; anything else is an error.
  assert.deepEqual(page.errors.filter((x) => !/Failed to load resource|net::ERR_/.test(x)), []);
});

test('Markdown, CSV, SVG and PNG exports download', async () => {
  const server = await startServer();
  const page = await newPage(browser);
  await page.goto(server.url + '/?model=qwen2.5-7b');
  await ready(page);
  for (const [id, re] of [['export-md', /^# Qwen2\.5 7B on /], ['export-csv', /^quantity,bytes\nweights,\d+/], ['export-svg', /^<svg/]]) {
    const [dl] = await Promise.all([page.waitForEvent('download'), page.getByTestId(id).click()]);
    const body = fs.readFileSync(await dl.path(), 'utf8');
    assert.match(body, re, id);
  }
  const [png] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-png').click()]);
  const bytes = fs.readFileSync(await png.path());
  assert.deepEqual([...bytes.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
  assert.deepEqual(page.errors, []);
  await server.close();
});
