// End-to-end tests of the "Size it" screen: act as a user, compare the numbers shown with
// the CLI (the same core) and with values worked out by hand, fail on any console error.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { launch, startServer, newPage, ready, cli, gib, text, shot } from './helpers.mjs';

let browser, server;
before(async () => { browser = await launch(); server = await startServer(); });
after(async () => { await browser?.close(); await server?.close(); });

test('loads, computes in WASM, and shows the default scenario without errors', async () => {
  const page = await newPage(browser);
  await page.goto(server.url + '/');
  await ready(page);
  const expected = cli(['plan', 'llama-3.1-8b', '--gpu', 'h100-sxm', '--max-model-len', '8192']);
  assert.equal(await text(page, 'weights-per-gpu'), gib(expected.per_gpu.weights_bytes));
  assert.equal(await text(page, 'kv-pool-per-gpu'), gib(expected.per_gpu.kv_pool_bytes));
  const n = expected.needed;
  assert.equal(await text(page, 'gpus-needed'), `${n.gpus} (TP ${n.tensor_parallel_size})`);
  assert.equal(n.gpus, expected.gpus_needed);
  assert.deepEqual(page.errors, []);
  await shot(page, 'size-default-light');
});

test('the catalog is a file beside the wasm: preloaded while the page\'s code downloads, fetched once, shared with the other views', async () => {
  // The page's JS comes 800 ms late (its wasm is in the page and starts only with it): the
  // catalog has arrived long before it, and the page still answers from it.
  const slow = await startServer({ delay: { '/vramfit-web-': 800 } });
  const page = await newPage(browser, { serviceWorkers: 'block' });
  const warnings = [];
  page.on('console', (m) => { if (m.type() === 'warning') warnings.push(m.text()); });
  const done = {};
  page.on('requestfinished', (r) => { done[new URL(r.url()).pathname] ??= Date.now(); });
  await page.goto(`${slow.url}/?model=qwen2.5-7b&gpu=l40s`);
  await ready(page);
  const catalog = Object.keys(done).filter((u) => /^\/catalog-[0-9a-f]{16}\.json$/.test(u));
  const code = Object.keys(done).filter((u) => /^\/vramfit-web-[0-9a-f]+\.js$/.test(u));
  assert.equal(catalog.length, 1, `one catalog file: ${Object.keys(done)}`);
  assert.equal(code.length, 1);
  assert.ok(done[catalog[0]] < done[code[0]], 'the catalog arrived while the page\'s code was on its way');
  const expected = cli(['plan', 'qwen2.5-7b', '--gpu', 'l40s', '--max-model-len', '8192']);
  assert.equal(await text(page, 'weights-per-gpu'), gib(expected.per_gpu.weights_bytes));
  // The page's own fetch took the preloaded response: one resource entry for the file (a fetch
  // that missed the preload is a second one, from the HTTP cache).
  const entries = await page.evaluate((name) => performance.getEntriesByType('resource')
    .filter((e) => new URL(e.name).pathname === name).map((e) => e.initiatorType), catalog[0]);
  assert.deepEqual(entries, ['link']);
  // Another view (the views chunk of the same wasm, sharing its memory) reads the catalog the
  // page already holds: the server sees the file once.
  await page.getByTestId('tab-quant').click();
  await page.getByTestId('quant-table').waitFor();
  const hits = slow.stats.requests.filter((r) => r.url.startsWith('/catalog-') && !r.url.startsWith('/catalog-sources'));
  assert.equal(hits.length, 1, JSON.stringify(slow.stats.requests));
  assert.deepEqual(warnings.filter((w) => /preload/i.test(w) && w.includes('catalog-')), []);
  assert.deepEqual(page.errors, []);
  await page.context().close();
  await slow.close();
});

test('the first result is built and painted before the rest of the page, which follows it unchanged', async () => {
  const page = await newPage(browser);
  // What is in the document when the live page's verdict arrives (a shared link's first
  // verdict, from the main chunk, is in #vf-first: first.test.mjs), when the page first paints
  // after it, and when the service worker is registered.
  await page.addInitScript(() => {
    const seen = () => ({
      at: performance.now(),
      formats: !!document.querySelector('[data-testid="formats"]'),
      commands: !!document.querySelector('[data-testid="commands"]'),
      features: !!document.querySelector('[data-testid="mm-images"]'),
      models: document.querySelectorAll('[data-testid="model"] option').length,
      gpus: document.querySelectorAll('[data-testid="gpu"] option').length,
      figures: document.querySelectorAll('.vf-figure').length,
      chart: !!document.querySelector('[data-testid="memory-chart"]'),
    });
    new MutationObserver((_, o) => {
      if (![...document.querySelectorAll('[data-testid="verdict"]')].some((v) => !v.closest('#vf-first'))) return;
      o.disconnect();
      window.__atVerdict = seen();
      requestAnimationFrame(() => { window.__painted = performance.now(); });
    }).observe(document, { childList: true, subtree: true });
    const sw = navigator.serviceWorker;
    if (sw) {
      const register = sw.register.bind(sw);
      sw.register = (...a) => { window.__swAt = performance.now(); return register(...a); };
    }
  });
  await page.goto(server.url + '/?model=qwen2.5-7b&gpu=l40s');
  await ready(page);
  const r = await page.evaluate(() => ({ v: window.__atVerdict, painted: window.__painted, sw: window.__swAt }));
  // The first result: verdict, figures and chart; the chosen model and GPU each their option.
  assert.equal(r.v.figures, 8);
  assert.ok(r.v.chart);
  assert.deepEqual([r.v.models, r.v.gpus], [1, 1]);
  // Not yet: the tables and commands below the chart, the folded features' controls.
  assert.deepEqual([r.v.formats, r.v.commands, r.v.features], [false, false, false]);
  // The service worker is registered after that paint.
  assert.ok(r.painted > r.v.at && r.sw >= r.painted, JSON.stringify(r));
  // Then the whole page: every catalog model and GPU listed, the chosen ones still shown.
  const lists = await page.evaluate(async () => ({
    models: document.querySelectorAll('[data-testid="model"] option').length,
    gpus: document.querySelectorAll('[data-testid="gpu"] option').length,
    model: document.querySelector('[data-testid="model"]').value,
    gpu: document.querySelector('[data-testid="gpu"]').value,
    // Entries of the catalog file (each catalog file a list).
    catalog: await (async () => {
      const c = await (await fetch(document.querySelector('link[rel=preload][as=fetch]').href)).json();
      const n = (dir) => Object.entries(c).filter(([k]) => k.startsWith(dir)).reduce((a, [, v]) => a + v.length, 0);
      return [n('models/'), n('gpus/')];
    })(),
  }));
  assert.ok(lists.catalog[0] > 50 && lists.catalog[1] > 50, JSON.stringify(lists));
  assert.deepEqual(lists, { models: lists.catalog[0], gpus: lists.catalog[1], model: 'qwen2.5-7b', gpu: 'l40s', catalog: lists.catalog });
  await page.getByTestId('features').locator('summary').click();
  await page.getByTestId('mm-images').waitFor();
  assert.ok(await page.getByTestId('command-input').isVisible());
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('a catalog that does not come is said on the page, not a blank one or a panic', async () => {
  const broken = await startServer({ status: { '/catalog-': 503 } });
  const page = await newPage(browser, { serviceWorkers: 'block' });
  await page.goto(`${broken.url}/?model=qwen2.5-7b`);
  const alert = page.getByTestId('catalog-missing');
  await alert.waitFor();
  const said = (await alert.textContent()).trim();
  assert.match(said, /catalog of GPUs and models did not load/);
  assert.match(said, /catalog-[0-9a-f]{16}\.json: the server answered 503/);
  assert.match(said, /reload the page/);
  // The browser's own line about the 503 is the only console error: nothing panicked.
  assert.deepEqual(page.errors.filter((e) => !/status of 503/.test(e)), []);
  await page.context().close();
  await broken.close();
  // A catalog file whose bytes are not UTF-8 (the page takes them as bytes, src/state.rs
  // `early_catalog`) is said too, naming the file.
  const garbled = await newPage(browser, { serviceWorkers: 'block' });
  await garbled.route(/\/catalog-[0-9a-f]{16}\.json$/, (r) => r.fulfill({ status: 200, contentType: 'application/json', body: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]) }));
  await garbled.goto(`${server.url}/?model=qwen2.5-7b`);
  await garbled.getByTestId('catalog-missing').waitFor();
  assert.match(await garbled.getByTestId('catalog-missing').textContent(), /catalog-[0-9a-f]{16}\.json: not UTF-8/);
  assert.deepEqual(garbled.errors, []);
  await garbled.context().close();
});

test('picking a model and a GPU and changing the context length updates the numbers', async () => {
  const page = await newPage(browser);
  await page.goto(server.url + '/');
  await ready(page);
  await page.getByTestId('model').selectOption('qwen2.5-7b');
  await page.getByTestId('gpu').selectOption('h100-sxm');
  await page.getByTestId('gpu-util').fill('0.95');
  await page.getByTestId('context-length').fill('8192');
  // Hand-worked, from Qwen2.5-7B's config.json: 28 layers × 2 (K,V) × 4 KV heads × 128 × 2 B.
  await assert.doesNotReject(page.getByTestId('kv-pool-per-gpu').locator('xpath=..').getByText('57,344 B/token').waitFor());
  let e = cli(['plan', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--gpu-memory-utilization', '0.95', '--max-model-len', '8192']);
  await page.waitForFunction(([id, v]) => document.querySelector(`[data-testid="${id}"]`)?.textContent.trim() === v, ['max-concurrency', e.per_gpu.max_concurrency.toFixed(2)]);
  assert.equal(await text(page, 'weights-per-gpu'), gib(e.per_gpu.weights_bytes));
  assert.equal(await text(page, 'kv-pool-per-gpu'), gib(e.per_gpu.kv_pool_bytes));
  // vLLM v0.19 measured 58.53 GiB of KV cache and 133.79× concurrency for this scenario
  // (../shared/calibration, llm-d-planner logs); we must be within 1 %.
  assert.ok(Math.abs(e.per_gpu.kv_pool_bytes / 2 ** 30 - 58.53) / 58.53 < 0.01);
  const before = await text(page, 'max-concurrency');
  await page.getByTestId('context-length').fill('32768');
  e = cli(['plan', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--gpu-memory-utilization', '0.95', '--max-model-len', '32768']);
  await page.waitForFunction(([id, v]) => document.querySelector(`[data-testid="${id}"]`)?.textContent.trim() === v, ['max-concurrency', e.per_gpu.max_concurrency.toFixed(2)]);
  assert.notEqual(await text(page, 'max-concurrency'), before);
  assert.ok(Math.abs(e.per_gpu.max_concurrency - 33.45) / 33.45 < 0.01, 'vLLM logged 33.45x at 32768');
  assert.match(await text(page, 'verdict'), /^fits/);
  assert.deepEqual(page.errors, []);
  await shot(page, 'size-qwen-h100');
});

test('a model that does not fit says so, with the fix, and matches the CLI verdict', async () => {
  const page = await newPage(browser);
  await page.goto(server.url + '/?model=llama-3.1-70b&gpu=rtx-4090&tp=1&len=8192');
  await ready(page);
  const e = cli(['plan', 'llama-3.1-70b', '--gpu', 'rtx-4090', '--tensor-parallel-size', '1', '--max-model-len', '8192']);
  assert.equal(e.fits, false);
  // The same words as the CLI, its backticked flags shown as code.
  assert.equal(await text(page, 'verdict'), e.plan_verdict.replaceAll('`', ''));
  assert.ok((await page.getByTestId('verdict').locator('code').count()) > 0);
  assert.match(await text(page, 'verdict'), /^will not start at TP 1 × PP 1 \(as given\): .* — fix: /);
  // Every figure says what it would take: no speed, no cost, the fewest GPUs that start.
  assert.equal(await text(page, 'decode-tokens-per-s'), '–');
  assert.equal(await text(page, 'cost'), '–');
  const n = e.needed;
  assert.match(await text(page, 'gpus-needed'), new RegExp(`^${n.gpus} \\(TP ${n.tensor_parallel_size}`));
  assert.equal((await page.getByTestId('fix').allTextContents()).length, e.fixes.length);
  // The commands apply the first fix.
  const vllm = await page.getByTestId('command-vllm').textContent();
  assert.ok(vllm.includes(e.commands.vllm.split('\n')[0]), vllm);
  assert.match(await text(page, 'command-notes'), /apply the fix/);
  assert.deepEqual(page.errors, []);
});

test('the seed\'s AWQ 70B on an L40S: the cards show the fix, the command is the AWQ checkpoint at that length', async () => {
  const page = await newPage(browser);
  await page.goto(server.url + '/?model=llama-3.1-70b&gpu=l40s&quant=int4-awq&tp=1&len=8192');
  await ready(page);
  const e = cli(['plan', 'llama-3.1-70b', '--gpu', 'l40s', '--quantization', 'awq', '--tensor-parallel-size', '1', '--max-model-len', '8192']);
  assert.equal(e.fix.max_model_len, 7488);
  assert.equal(await text(page, 'max-context'), 'fits at ≤ 7,488 tokens');
  assert.equal(await text(page, 'max-concurrency'), 'fits at ≤ 7,488 tokens');
  const vllm = await page.getByTestId('command-vllm').textContent();
  assert.match(vllm, /vllm serve hugging-quants\/Meta-Llama-3\.1-70B-Instruct-AWQ-INT4/);
  assert.match(vllm, /--max-model-len 7488/);
  assert.doesNotMatch(vllm, /meta-llama\/Llama-3\.1-70B-Instruct\b/);
  assert.equal(vllm.replace(/^vLLM/, ''), e.commands.vllm);
  assert.deepEqual(page.errors, []);
});

test('the share link restores the scenario exactly, and back/forward work', async () => {
  const page = await newPage(browser);
  await page.goto(server.url + '/');
  await ready(page);
  await page.getByTestId('model').selectOption('qwen3-8b');
  await page.getByTestId('kv-dtype').selectOption('fp8');
  await page.getByTestId('users').fill('12');
  await page.waitForURL(/users=12/);
  const url = page.url();
  const weights = await text(page, 'weights-per-gpu');
  const kv = await text(page, 'kv-pool-per-gpu');
  const other = await newPage(browser);
  await other.goto(url);
  await ready(other);
  assert.equal(await text(other, 'weights-per-gpu'), weights);
  assert.equal(await text(other, 'kv-pool-per-gpu'), kv);
  assert.equal(await other.getByTestId('model').inputValue(), 'qwen3-8b');
  assert.equal(await other.getByTestId('kv-dtype').inputValue(), 'fp8');
  // Back undoes the KV dtype change: a choice is a history entry, or one with the model's when
  // the two come in one burst (state.rs `UrlWrites`); KV is back to auto either way.
  await page.goBack();
  await page.waitForFunction(() => document.querySelector('[data-testid="kv-dtype"]').value === 'auto');
  await page.goForward();
  await page.waitForFunction(() => document.querySelector('[data-testid="kv-dtype"]').value === 'fp8');
  assert.deepEqual([...page.errors, ...other.errors], []);
});

test('the address is written after the paint, at most every 120 ms, merged as the history should read', async () => {
  const page = await newPage(browser);
  await page.goto(server.url + '/');
  await ready(page);
  const r = await page.evaluate(async () => {
    // Every History API call the page makes: [which, URL, when].
    const calls = [];
    for (const k of ['pushState', 'replaceState']) {
      const f = History.prototype[k];
      History.prototype[k] = function (...a) { calls.push([k, a[2], performance.now()]); return f.apply(this, a); };
    }
    const q = (id) => document.querySelector(`[data-testid="${id}"]`);
    const set = (id, v, ev) => { const el = q(id); el.value = v; el.dispatchEvent(new Event(ev, { bubbles: true })); };
    const painted = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 20)));
    const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
    const until = async (what, ok) => {
      for (const end = performance.now() + 2000; !ok(); await sleep(5)) {
        if (performance.now() > end) throw new Error(`the address never showed ${what}: ${location.search}`);
      }
    };
    const start = history.length;
    // Typing: the numbers first, the address after the paint, one write for both keystrokes.
    set('context-length', '16384', 'input');
    set('context-length', '20480', 'input');
    const during = location.search;
    await painted();
    const typed = [location.search, history.length - start];
    // Two choices in one task, and a keystroke: nothing is written before their paint (none
    // pays a history write before its numbers), and they are one history entry, written
    // once the interval since the typing's write has passed.
    set('kv-dtype', 'fp8', 'change');
    set('model', 'qwen3-8b', 'change');
    set('context-length', '24576', 'input');
    const choosing = [location.search, history.length - start];
    await until('the choices', () => location.search.includes('model'));
    const chosen = [location.search, history.length - start];
    // A held arrow key: 30 keystrokes 10 ms apart, then a choice.
    const keys = calls.length;
    for (let i = 0; i < 30; i++) {
      set('context-length', String(8192 + 1024 * i), 'input');
      await sleep(10);
    }
    set('gpu', 'a100-80gb-sxm', 'change');
    await until('the GPU', () => location.search.includes('gpu='));
    await sleep(300);
    return { during, typed, choosing, chosen, calls, keys, held: [location.search, history.length - start] };
  });
  assert.equal(r.during, '');
  assert.deepEqual(r.typed, ['?len=20480', 0]);
  assert.deepEqual(r.choosing, ['?len=20480', 0]);
  // The typing's one write, then one entry for both choices and the keystroke, 120 ms later.
  assert.deepEqual(r.calls.slice(0, 2).map((c) => c.slice(0, 2)), [['replaceState', '?len=20480'], ['pushState', '?model=qwen3-8b&kv=fp8&len=24576']]);
  assert.deepEqual(r.chosen, ['?model=qwen3-8b&kv=fp8&len=24576', 1]);
  // The held key: its writes merge, and the choice after it is an entry of its own.
  assert.deepEqual(r.held, ['?model=qwen3-8b&gpu=a100-80gb-sxm&kv=fp8&len=37888', 2]);
  assert.deepEqual(r.calls.at(-1).slice(0, 2), ['pushState', '?model=qwen3-8b&gpu=a100-80gb-sxm&kv=fp8&len=37888']);
  assert.deepEqual(r.calls.at(-2).slice(0, 2), ['replaceState', '?model=qwen3-8b&kv=fp8&len=37888']);
  // Never two calls within 120 ms, so the 30 keystrokes took a few writes (one a frame, as
  // before, would be ~20).
  const gaps = r.calls.slice(1).map((c, i) => c[2] - r.calls[i][2]);
  assert.ok(Math.min(...gaps) >= 119, `gaps ${gaps.map((g) => g.toFixed(0))}`);
  assert.ok(r.calls.length - r.keys < 15, `${r.calls.length - r.keys} writes for 30 keystrokes and a choice`);
  assert.equal(await page.getByTestId('context-length').inputValue(), '37888');
  // Back goes to the held key's last length, then to the typed length before the choices.
  await page.goBack();
  await page.waitForFunction(() => location.search === '?model=qwen3-8b&kv=fp8&len=37888');
  await page.waitForFunction(() => document.querySelector('[data-testid="gpu"]').value !== 'a100-80gb-sxm');
  await page.goBack();
  await page.waitForFunction(() => location.search === '?len=20480');
  await page.waitForFunction(() => document.querySelector('[data-testid="model"]').value === 'llama-3.1-8b');
  assert.deepEqual(page.errors, []);
});


test('an address write fetches nothing: the tab\'s icon is in the page, not asked for again after each write', async () => {
  // Chromium asks for the page's icon again after every same-document navigation
  // (scripts/page_head.py): with icon.svg as a file, each write below fetched it and built an
  // SVG document on the main thread.
  // A server of its own, whose requests are this page's alone.
  const own = await startServer();
  const page = await newPage(browser, { serviceWorkers: 'block' });
  await page.goto(own.url + '/?model=qwen2.5-7b&gpu=h100-sxm');
  await ready(page);
  await page.waitForTimeout(300);
  const icon = await page.evaluate(() => [...document.querySelectorAll('link[rel~="icon"]')].map((l) => l.getAttribute('href')));
  assert.equal(icon.length, 1);
  assert.match(icon[0], /^data:image\/png;base64,/);
  const png = Buffer.from(icon[0].split(',')[1], 'base64');
  assert.equal(png.subarray(1, 4).toString(), 'PNG');
  assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [32, 32]);
  // Counted by the page and by the server (Playwright's request events leave out a
  // `/favicon.ico`, which a page without an icon would be asked for).
  const requests = [];
  page.on('request', (r) => requests.push(r.url()));
  const served = own.stats.requests.length;
  for (const len of [12288, 16384, 20480, 24576]) {
    await page.getByTestId('context-length').fill(String(len));
    await page.waitForFunction((l) => location.search.includes(`len=${l}`), len);
    await page.waitForTimeout(200);
  }
  assert.deepEqual(requests, []);
  assert.deepEqual(own.stats.requests.slice(served).map((r) => r.url), []);
  assert.deepEqual(page.errors, []);
  await page.context().close();
  await own.close();
});

test('a recompute rewrites only what changed: no element is built again', async () => {
  const page = await newPage(browser);
  await page.goto(server.url + '/?model=qwen2.5-7b&gpu=h100-sxm');
  await ready(page);
  // Every DOM mutation an input causes, by kind, with its element's test id or tag.
  const mutations = (id, value, ev) => page.evaluate(async ([id, value, ev]) => {
    const seen = [];
    const obs = new MutationObserver((ms) => seen.push(...ms.map((m) => {
      const el = m.target.nodeType === 1 ? m.target : m.target.parentElement;
      return `${m.type}${m.attributeName ? `[${m.attributeName}]` : ''} ${el.closest('[data-testid]')?.dataset.testid} ${el.tagName.toLowerCase()}`;
    })));
    obs.observe(document.body, { childList: true, characterData: true, subtree: true, attributes: true });
    const el = document.querySelector(`[data-testid="${id}"]`);
    el.value = value;
    el.dispatchEvent(new Event(ev, { bubbles: true }));
    await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 50)));
    obs.disconnect();
    return seen;
  }, [id, value, ev]);
  // A longer context: new text in the figures and commands that show it, nothing else.
  const len = await mutations('context-length', '9216', 'input');
  assert.ok(len.length > 0 && len.length <= 12, len.join('\n'));
  assert.deepEqual(len.filter((m) => !m.startsWith('characterData')), []);
  assert.ok(len.some((m) => m.includes('max-concurrency')), len.join('\n'));
  // Another model: the options of the model list stay, the chart's marks move (no mark is
  // added or removed when the formats are the same), nothing's attributes are set again
  // unless they changed.
  const model = await mutations('model', 'llama-3.1-8b', 'change');
  assert.deepEqual(model.filter((m) => / (model|gpu) (option|optgroup)$/.test(m)), []);
  assert.deepEqual(model.filter((m) => m.startsWith('childList') && m.includes('memory-chart')), []);
  assert.deepEqual(model.filter((m) => /\[(class|data-testid|xmlns|role)\]/.test(m)), []);
  assert.ok(model.some((m) => m.startsWith('attributes[width]') && m.includes('memory-chart')), model.join('\n'));
  assert.ok(model.length < 100, `${model.length} mutations`);
  assert.deepEqual(page.errors, []);
});

test('hostile URL values are shown as text and run nothing', async () => {
  const page = await newPage(browser);
  const evil = encodeURIComponent('<img src=x onerror="window.__pwned=1">');
  const script = encodeURIComponent('<script>window.__pwned=2</script>');
  await page.goto(`${server.url}/?model=${evil}&gpu=${script}&len=abc&tp=0`);
  await ready(page);
  const notice = await text(page, 'url-notice');
  assert.ok(notice.includes('<img src=x onerror="window.__pwned=1">'), notice);
  assert.ok(notice.includes('<script>window.__pwned=2</script>'), notice);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.equal(await page.locator('img[src="x"]').count(), 0);
  // The defaults are shown instead.
  assert.equal(await page.getByTestId('model').inputValue(), 'llama-3.1-8b');
  assert.deepEqual(page.errors, []);
});

test('the GPU list filters by vendor, memory and price', async () => {
  const page = await newPage(browser);
  await page.goto(server.url + '/');
  await ready(page);
  await page.getByTestId('gpu-filter').fill('amd');
  const ids = await page.getByTestId('gpu').locator('option').evaluateAll((o) => o.map((x) => x.value));
  assert.ok(ids.includes('mi300x'), ids.join(','));
  assert.ok(!ids.includes('rtx-4090'));
  assert.ok(ids.includes('h100-sxm'), 'the selected GPU stays listed');
  await page.getByTestId('gpu-filter').fill('');
  await page.getByTestId('gpu-max-price').fill('3000');
  const cheap = await page.getByTestId('gpu').locator('option').evaluateAll((o) => o.map((x) => x.value));
  assert.ok(cheap.includes('rtx-4090') || cheap.includes('rtx-3090'), cheap.join(','));
  assert.ok(!cheap.includes('b200'));
  // A cap at or below $0 would list no GPU: it is refused in words and cuts nothing.
  for (const bad of ['0', '-1']) {
    await page.getByTestId('gpu-max-price').fill(bad);
    assert.equal(await text(page, 'gpu-max-price-error'), `a price cap must be above $0; got ${bad}`);
    const all = await page.getByTestId('gpu').locator('option').evaluateAll((o) => o.map((x) => x.value));
    assert.ok(all.includes('b200') && all.includes('rtx-4090'), all.join(','));
  }
  await page.getByTestId('gpu-max-price').fill('3000');
  assert.equal(await page.getByTestId('gpu-max-price-error').count(), 0);
  assert.deepEqual(page.errors, []);
});

test('units toggle between GiB and GB, and the engine commands match the layout', async () => {
  const page = await newPage(browser);
  await page.goto(server.url + '/?model=llama-3.1-70b&gpu=h100-sxm&len=8192');
  await ready(page);
  const e = cli(['plan', 'llama-3.1-70b', '--gpu', 'h100-sxm', '--max-model-len', '8192']);
  assert.equal(await text(page, 'weights-per-gpu'), gib(e.per_gpu.weights_bytes));
  await page.getByTestId('units').selectOption('gb');
  await page.waitForURL(/units=gb/);
  assert.equal(await text(page, 'weights-per-gpu'), `${(e.per_gpu.weights_bytes / 1e9).toFixed(2)} GB`);
  const cmds = await text(page, 'commands');
  assert.ok(cmds.includes('vllm serve meta-llama/'), cmds);
  assert.ok(cmds.includes(`--tensor-parallel-size ${e.tensor_parallel_size}`), cmds);
  assert.ok(cmds.includes('--max-model-len 8192'), cmds);
  assert.ok(cmds.includes(`--tp ${e.tensor_parallel_size}`), 'SGLang');
  assert.ok(cmds.includes('device_map="auto"'), 'transformers');
  assert.ok(cmds.includes('llama-server'), 'llama.cpp');
  assert.deepEqual(page.errors, []);
});

test('a value the input table refuses shows its message, keeps what was typed, and leaves the URL', async () => {
  const page = await newPage(browser);
  await page.goto(server.url + '/?util=0.9');
  await ready(page);
  const util = page.getByTestId('gpu-util');
  // The limits come from the core's table (crates/vramfit-core/src/inputs/keys.rs: 0.05..=1),
  // in the field's tooltip.
  const tip = await page.locator('label.vf-field', { has: util }).getAttribute('title');
  assert.ok(tip.endsWith('. Allowed: 0.05 to 1.'), tip);
  await util.fill('0.03');
  const msg = page.locator('.vf-field-error');
  await msg.waitFor();
  // The same message a link gets (share::decode) and the CLI prints, its flag shown as code.
  assert.equal((await msg.textContent()).trim(), '--gpu-memory-utilization must be between 0.05 and 1; got 0.03');
  assert.deepEqual(await msg.locator('code').allTextContents(), ['--gpu-memory-utilization']);
  assert.equal(await util.getAttribute('aria-invalid'), 'true');
  assert.equal(await util.inputValue(), '0.03');
  assert.ok(page.url().endsWith('?util=0.9'), page.url());
  const bin = new URL('../../target/debug/vramfit', import.meta.url).pathname;
  const link = spawnSync(bin, ['plan', 'llama-3.1-8b', '--gpu', 'h100-sxm', '--gpu-memory-utilization', '0.03'], { encoding: 'utf8' });
  assert.equal(link.status, 2);
  assert.ok(link.stderr.includes('`--gpu-memory-utilization` must be between 0.05 and 1; got 0.03'), link.stderr);
  // A valid value clears the message and moves the URL.
  await util.fill('0.8');
  await page.waitForFunction(() => location.search.includes('util=0.8'));
  assert.equal(await page.locator('.vf-field-error').count(), 0);
  assert.deepEqual(page.errors, []);
});

test('a number field keeps every character typed, key by key, and through other fields\' changes', async () => {
  const page = await newPage(browser);
  await page.goto(server.url + '/?util=0.9');
  await ready(page);
  const util = page.getByTestId('gpu-util');
  const msg = page.locator('.vf-field-error');
  // Typed key by key, the field passes through text that is no number yet (`-`, `0.`): it
  // stays as typed (a number input reported it as empty, which cleared the field and dropped
  // the minus sign: `-0.5` became `0.5`, applied without a word).
  await util.fill('');
  await util.pressSequentially('-0.5');
  assert.equal(await util.inputValue(), '-0.5');
  await msg.waitFor();
  assert.equal((await msg.textContent()).trim(), '--gpu-memory-utilization must be between 0.05 and 1; got -0.5');
  await util.fill('');
  await util.pressSequentially('.85');
  await page.waitForFunction(() => location.search.includes('util=0.85'));
  assert.equal(await util.inputValue(), '.85');
  assert.equal(await msg.count(), 0);
  // A decimal comma is refused by name, not read as 15; the value goes back to the one the
  // field had when it was focused (0.9), not a value typed on the way.
  await util.fill('0,15');
  await msg.waitFor();
  assert.equal((await msg.textContent()).trim(), '0,15 is not a number');
  await page.waitForFunction(() => location.search.includes('util=0.9'));
  // Another field's change leaves the refused text and its message where they are.
  await page.getByTestId('users').fill('7');
  await page.waitForFunction(() => location.search.includes('users=7'));
  assert.equal(await util.inputValue(), '0,15');
  assert.equal((await msg.textContent()).trim(), '0,15 is not a number');
  assert.ok(page.url().includes('util=0.9'), page.url());
  // While a field holds refused text, "Size it" says the numbers are the last accepted ones.
  const stale = page.getByTestId('stale-note');
  await stale.waitFor();
  assert.match(await stale.textContent(), /^Not updated: vramfit could not use what is in GPU memory utilization \(see the message there\)/);
  assert.equal(await page.locator('.vf-size.vf-stale').count(), 1);
  // The arrow keys step the value by the field's step, as a number input's did, and stop at
  // the end of the range.
  await util.fill('0.9');
  await stale.waitFor({ state: 'detached' });
  assert.equal(await page.locator('.vf-size.vf-stale').count(), 0);
  await util.press('ArrowUp');
  assert.equal(await util.inputValue(), '0.91');
  await page.waitForFunction(() => location.search.includes('util=0.91'));
  await util.press('ArrowDown');
  await util.press('ArrowDown');
  assert.equal(await util.inputValue(), '0.89');
  await util.fill('1');
  await util.press('ArrowUp');
  assert.equal(await util.inputValue(), '1');
  const len = page.getByTestId('context-length');
  await len.fill('8192');
  await len.press('ArrowUp');
  assert.equal(await len.inputValue(), '8193');
  assert.equal(await msg.count(), 0);
  assert.deepEqual(page.errors, []);
});

test('clearing the context length is auto (the model\'s maximum), not an error, while another is typed', async () => {
  const page = await newPage(browser);
  await page.goto(server.url + '/?model=qwen2.5-7b&gpu=l40s&len=4096');
  await ready(page);
  const len = page.getByTestId('context-length');
  assert.equal(await len.getAttribute('placeholder'), 'auto');
  await len.fill('');
  await page.waitForFunction(() => new URL(location.href).searchParams.get('len') === 'auto');
  assert.equal(await len.inputValue(), '');
  assert.equal(await page.locator('.vf-field-error').count(), 0);
  await len.pressSequentially('16384');
  await page.waitForFunction(() => new URL(location.href).searchParams.get('len') === '16384');
  assert.equal(await page.locator('.vf-field-error').count(), 0);
  assert.deepEqual(page.errors, []);
});

test('a refused number puts back the value its edit began with: no prefix typed on the way stays in the result or the link', async () => {
  const page = await newPage(browser);
  await page.goto(server.url + '/?model=qwen2.5-7b&gpu=l40s&len=4096');
  await ready(page);
  const len = page.getByTestId('context-length');
  const conc = await text(page, 'max-concurrency');
  // Key by key, `9999999` (valid) is applied on the way to a number above 16,777,216.
  await len.selectText();
  await len.pressSequentially('99999999999999999999');
  const msg = page.locator('.vf-field-error');
  await msg.waitFor();
  assert.equal((await msg.textContent()).trim(), '--max-model-len must be between 1 and 16777216; got 99999999999999999999');
  assert.equal(await len.inputValue(), '99999999999999999999');
  // Past the address's write interval (120 ms): the last write is the value put back.
  await page.waitForTimeout(400);
  assert.equal(new URL(page.url()).searchParams.get('len'), '4096');
  assert.equal(await text(page, 'max-concurrency'), conc);
  assert.deepEqual(page.errors, []);
});

test('a parallel size the lists do not offer, from a link, is shown and selected, not a blank list', async () => {
  const page = await newPage(browser);
  await page.goto(server.url + '/?model=llama-3.1-8b&gpu=h100-sxm&tp=9&pp=3');
  await ready(page);
  const tp = page.getByTestId('tp');
  const pp = page.getByTestId('pp');
  assert.equal(await tp.inputValue(), '9');
  assert.equal(await pp.inputValue(), '3');
  assert.equal(await tp.evaluate((s) => s.selectedOptions[0]?.textContent), '9');
  // Choosing a listed size takes the extra option away.
  await tp.selectOption('2');
  await page.waitForFunction(() => location.search.includes('tp=2'));
  assert.equal(await tp.locator('option[value="9"]').count(), 0);
  assert.equal(await pp.inputValue(), '3');
  assert.deepEqual(page.errors, []);
});
