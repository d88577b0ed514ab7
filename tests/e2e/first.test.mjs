// Issue 19: the home page's first result is in index.html (scripts/prerender.mjs writes it at
// build time from the page's own first paint), shown before the wasm arrives, replaced by the
// live page in the task that mounts it; a shared link (any query) never shows it, but its own
// verdict, from the page's main chunk (src/first.rs), while the calculator's chunk comes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { launch, startServer, newPage, ready, cli, gib, pageWasm } from './helpers.mjs';

let browser, server;
before(async () => { browser = await launch(); server = await startServer(); });
after(async () => { await browser?.close(); await server?.close(); });

/** Records, from an init script, every verdict attached to the document (whether it was the
 * build's, inside #vf-first) and whether a mutation batch ever left two in the document. */
async function watchVerdicts(page) {
  await page.addInitScript(() => {
    window.__verdicts = [];
    window.__both = false;
    new MutationObserver(() => {
      const all = [...document.querySelectorAll('[data-testid="verdict"]')];
      if (all.length > 1) window.__both = true;
      for (const v of all) {
        if (v.__seen) continue;
        v.__seen = true;
        window.__verdicts.push({ build: !!v.closest('#vf-first'), at: performance.now() });
      }
    }).observe(document, { childList: true, subtree: true });
  });
}

// What the first result shows: the verdict, the eight figures (value and detail) and the
// chart's bars, as text.
const figures = (page, scope) => page.evaluate((scope) => {
  const root = document.querySelector(scope);
  return {
    verdict: root.querySelector('[data-testid="verdict"]').textContent,
    figures: [...root.querySelectorAll('.vf-figure')].map((f) => f.textContent),
    chart: root.querySelector('[data-testid="memory-chart"]')?.textContent ?? null,
  };
}, scope);

test('the home page shows its first result from the HTML, the CLI\'s numbers, and the live page takes its place in one task', async () => {
  const page = await newPage(browser, { serviceWorkers: 'block' });
  await watchVerdicts(page);
  // The page's JS (without which its wasm, in the page, does not start) is held back until the
  // build's first result has been read.
  let release;
  const held = new Promise((r) => { release = r; });
  await page.route(/\/vramfit-web-[0-9a-f]+\.js$/, async (route) => { await held; await route.continue(); });
  // Not to `load` (nor `DOMContentLoaded`): the start script imports the JS, so both wait for it.
  await page.goto(server.url + '/', { waitUntil: 'commit' });
  await page.locator('#vf-first [data-testid="verdict"]').waitFor();
  const built = await figures(page, '#vf-first');
  const state = await page.evaluate(() => {
    const first = document.getElementById('vf-first');
    const controls = [...first.querySelectorAll('input, select, textarea, button')];
    const select = first.querySelector('[data-testid="model"]');
    return {
      inert: first.querySelector('.vf-first-page').inert,
      status: [...first.querySelectorAll('[role="status"]')].map((s) => [s.textContent, s.closest('[inert]') === null]),
      controls: controls.length,
      enabled: controls.filter((c) => !c.disabled).map((c) => c.outerHTML.slice(0, 80)),
      model: [select.value, select.options.length],
      gpu: document.querySelector('#vf-first [data-testid="gpu"]').value,
      length: document.querySelector('#vf-first [data-testid="context-length"]').value,
      figures: first.querySelectorAll('.vf-figure').length,
    };
  });
  assert.equal(state.inert, true);
  // A loading note, outside the inert part (assistive technology reads it).
  assert.deepEqual(state.status, [['Loading the calculator…', true]]);
  assert.ok(state.controls > 10, JSON.stringify(state));
  assert.deepEqual(state.enabled, [], 'every control of the build\'s first result is disabled');
  assert.deepEqual([state.model, state.gpu, state.length, state.figures], [['llama-3.1-8b', 1], 'h100-sxm', '8192', 8]);
  // The numbers are the default scenario's, as the CLI computes them (Inputs::default()).
  const e = cli(['plan', 'llama-3.1-8b', '--gpu', 'h100-sxm', '--max-model-len', '8192']);
  const value = (id) => page.locator(`#vf-first [data-testid="${id}"]`).textContent();
  assert.equal(await value('weights-per-gpu'), gib(e.per_gpu.weights_bytes));
  assert.equal(await value('kv-pool-per-gpu'), gib(e.per_gpu.kv_pool_bytes));
  assert.equal(await value('max-concurrency'), e.per_gpu.max_concurrency.toFixed(2));

  release();
  await ready(page);
  const live = await figures(page, 'body');
  const after = await page.evaluate(() => ({
    first: !!document.getElementById('vf-first'),
    verdicts: document.querySelectorAll('[data-testid="verdict"]').length,
    disabled: document.querySelector('[data-testid="model"]').disabled,
    both: window.__both,
    seen: window.__verdicts.map((v) => v.build),
  }));
  assert.deepEqual(after, { first: false, verdicts: 1, disabled: false, both: false, seen: [true, false] });
  // The live page's first result reads the same as the build's.
  assert.deepEqual(live, built);
  // And it answers: a new context length recomputes.
  await page.getByTestId('context-length').fill('32768');
  const e32 = cli(['plan', 'llama-3.1-8b', '--gpu', 'h100-sxm', '--max-model-len', '32768']);
  await page.waitForFunction((v) => document.querySelector('[data-testid="max-concurrency"]').textContent.trim() === v, e32.per_gpu.max_concurrency.toFixed(2));
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('a shared link (any query) never shows the home page\'s result: its first verdict and figures are its own, from the main chunk, before the calculator', async () => {
  for (const q of ['?model=qwen2.5-7b&gpu=l40s', '?model=llama-3.1-70b&gpu=rtx-4090&len=32768&units=gb', '?view=oom', '?len=8192&view=budget']) {
    const page = await newPage(browser, { serviceWorkers: 'block' });
    await watchVerdicts(page);
    // The calculator (the app split, src/lib.rs) is held back until the first result has
    // been read.
    let release;
    const held = new Promise((r) => { release = r; });
    await page.route(/\/vramfit-web-[0-9a-f]+_split_app\.wasm$/, async (route) => { await held; await route.continue(); });
    await page.goto(`${server.url}/${q}`);
    await page.locator('#vf-first [role="status"]').waitFor({ state: 'attached' });
    const size = !q.includes('view=');
    let first = null;
    if (size) {
      // "Size it": the scenario's own verdict, in the inert part, beside the loading note.
      await page.locator('#vf-first [data-testid="verdict"]').waitFor();
      first = await page.evaluate(() => {
        const v = document.querySelector('#vf-first [data-testid="verdict"]');
        return { text: v.textContent, class: v.className, inert: !!v.closest('[inert]'), scenario: document.querySelector('#vf-first .vf-first-scenario').textContent, figures: [...document.querySelectorAll('#vf-first .vf-figure')].map((f) => [f.title, f.textContent]) };
      });
      assert.equal(first.inert, true, q);
      // Above it, what it is the verdict on: the catalog's model and GPU names.
      assert.match(first.scenario, q.includes('70b') ? /^Llama 3\.1 70B on .*RTX 4090.*$/ : /^Qwen2\.5 7B on .*L40S.*$/, q);
    } else {
      // Another view has no verdict: the loading note alone, until the calculator.
      await page.waitForTimeout(300);
      assert.deepEqual(await page.evaluate(() => [document.querySelectorAll('#vf-first > *').length, !!document.querySelector('[data-testid="verdict"]')]), [1, false], q);
    }
    release();
    if (size) await ready(page);
    else await page.waitForFunction(() => !document.getElementById('vf-first') && document.querySelector('.vf-tabs'));
    const seen = await page.evaluate(() => ({ first: !!document.getElementById('vf-first'), both: window.__both, build: window.__verdicts.map((v) => v.build) }));
    assert.deepEqual(seen, { first: false, both: false, build: size ? [true, false] : [] }, q);
    if (size) {
      // The live verdict reads as the first one did, with the same colour, and so do the eight
      // figures (label, value and detail, tooltip), in the link's units.
      const live = await page.evaluate(() => {
        const v = document.querySelector('[data-testid="verdict"]');
        return { text: v.textContent, class: v.className, figures: [...document.querySelectorAll('.vf-figure')].map((f) => [f.title, f.textContent]) };
      });
      assert.equal(first.figures.length, 8, q);
      assert.deepEqual(live, { text: first.text, class: first.class, figures: first.figures }, q);
      if (q.includes('units=gb')) assert.match(first.figures[0][1], / GB/, q);
    }
    assert.deepEqual(page.errors, []);
    await page.context().close();
  }
});

test('a calculator whose code does not come says so, as text, at the top; the first result stays, readable, no longer loading', async () => {
  for (const q of ['/?model=qwen2.5-7b&gpu=l40s', '/']) {
    const page = await newPage(browser, { serviceWorkers: 'block' });
    await page.route(/\/vramfit-web-[0-9a-f]+_split_app\.wasm$/, (r) => r.fulfill({ status: 404, body: 'gone' }));
    await page.goto(server.url + q);
    await page.getByTestId('start-failed').waitFor();
    const failed = await page.getByTestId('start-failed').evaluate((p) => ({
      role: p.getAttribute('role'), text: p.textContent, children: p.children.length, first: document.body.firstElementChild === p,
    }));
    assert.deepEqual([failed.role, failed.children, failed.first], ['alert', 0, true], q);
    assert.match(failed.text, /^The calculator's code could not be downloaded \(.+\); check the connection, then reload the page\.$/, q);
    // The verdict stays (it is the scenario's answer), out of `inert`; the loading note and the
    // progress cursor go.
    const state = await page.evaluate(() => ({
      verdicts: document.querySelectorAll('#vf-first [data-testid="verdict"]').length,
      inert: !!document.querySelector('#vf-first [inert]'),
      status: document.querySelectorAll('.vf-first-status').length,
      cursor: getComputedStyle(document.body).cursor,
    }));
    assert.deepEqual(state, { verdicts: 1, inert: false, status: 0, cursor: 'auto' }, q);
    await page.context().close();
  }
});

test('a stale link\'s first result says what it ignored, as the live page does', async () => {
  const page = await newPage(browser, { serviceWorkers: 'block' });
  let release;
  const held = new Promise((r) => { release = r; });
  await page.route(/\/vramfit-web-[0-9a-f]+_split_app\.wasm$/, async (route) => { await held; await route.continue(); });
  await page.goto(`${server.url}/?model=no-such-model&gpu=l40s`);
  await page.locator('#vf-first [data-testid="verdict"]').waitFor();
  const notice = () => page.evaluate(() => document.querySelector('.vf-notice')?.textContent);
  const first = await notice();
  assert.match(first ?? '', /^Some link parameters were ignored:model: .*no-such-model/);
  release();
  await ready(page);
  assert.equal(await page.locator('#vf-first').count(), 0);
  assert.equal(await notice(), first);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('the home page fetches the calculator beside the main chunk, each file once; a shared link only after its first result', async () => {
  // Home: every file the chunk loader needs for the app split, preloaded and used, once.
  const home = await newPage(browser, { serviceWorkers: 'block' });
  const got = [];
  const warnings = [];
  home.on('request', (r) => got.push(new URL(r.url()).pathname.slice(1)));
  home.on('console', (m) => { if (m.type() === 'warning') warnings.push(m.text()); });
  await home.goto(server.url + '/');
  await ready(home);
  await home.waitForTimeout(3500); // Chromium warns of an unused preload 3 s after load.
  const wanted = await home.evaluate(() => {
    const s = [...document.querySelectorAll('script:not([type])')].map((e) => e.textContent).find((t) => t.includes('_split_app.wasm'));
    return JSON.parse(s.match(/for \(const f of (\[[^\]]*\])/)[1]);
  });
  // They are what the chunk loader says the app split needs: its own file, and each shared
  // chunk whose comment names `app`.
  const loader = await home.evaluate(async () => {
    const href = document.querySelector('link[rel="modulepreload"][href$="_split.js"]').href;
    return (await fetch(href)).text();
  });
  const needs = [...loader.matchAll(/\/\* ([^*]+) \*\/\nconst __chunk_\d+ = makeLoad\(\(\) => \{\n\s*const src = fetch\(new URL\("\.\/([^"]+)"/g)]
    .filter((m) => m[1].split(', ').includes('app')).map((m) => m[2]);
  const app = loader.match(/"\.\/([^"]+_split_app\.wasm)"/)[1];
  assert.ok(needs.length >= 1, loader.slice(0, 2000));
  assert.deepEqual([...wanted].sort(), [...needs, app].sort());
  for (const f of wanted) assert.equal(got.filter((g) => g === f).length, 1, f);
  assert.deepEqual(warnings.filter((w) => /preload/i.test(w)), []);
  await home.context().close();
  // Shared link: its first result is in the document when the chunk loader asks for the
  // calculator (its `fetch` call, recorded as it is made), and nothing asked for it before.
  const shared = await newPage(browser, { serviceWorkers: 'block' });
  await shared.addInitScript(() => {
    const fetch = window.fetch;
    window.__appFetches = [];
    window.fetch = function (url, ...rest) {
      if (String(url).includes('_split_app.wasm')) window.__appFetches.push(!!document.querySelector('#vf-first [data-testid="verdict"]'));
      return fetch.call(this, url, ...rest);
    };
  });
  await shared.goto(`${server.url}/?model=qwen2.5-7b&gpu=l40s`);
  await ready(shared);
  const t = await shared.evaluate(() => ({
    fetches: window.__appFetches,
    requests: performance.getEntriesByType('resource').filter((r) => r.name.endsWith('_split_app.wasm')).length,
  }));
  assert.deepEqual(t, { fetches: [true], requests: 1 });
  await shared.context().close();
});

test('a page whose code does not come, is cut short or does not compile or instantiate says so, as text, instead of keeping the build\'s first result', async () => {
  // The connection drops inside the page's wasm (in the page, a character per byte,
  // scripts/main_chunk.py): inside a character of two bytes (the decoder ends the text with
  // U+FFFD), or between characters (bytes that do not make a module): the page ends there.
  const cuts = ['inside a character', 'between characters'];
  for (const how of ['404', 'glue cut short', 'loader cut short', ...cuts, 'compile', 'instantiate']) {
    const page = await newPage(browser, { serviceWorkers: 'block' });
    if (how === '404') await page.route(/\/vramfit-web-[0-9a-f]+\.js$/, (r) => r.fulfill({ status: 404, body: 'gone' }));
    // The glue, or the chunk loader it imports, comes but not whole (a 200 cut short, as a
    // proxy can): it does not parse, and the start script never runs.
    else if (how === 'glue cut short' || how === 'loader cut short') {
      await page.route(how === 'glue cut short' ? /\/vramfit-web-[0-9a-f]+\.js$/ : /\/vramfit-web-[0-9a-f]+_split\.js$/, async (route) => {
        const r = await route.fetch();
        const js = await r.text();
        await route.fulfill({ response: r, body: js.slice(0, js.length >> 1) });
      });
    }
    else if (cuts.includes(how)) {
      await page.route((u) => u.pathname === '/', async (route) => {
        const r = await route.fetch();
        const body = await r.body();
        const at = body.indexOf('id="vf-wasm">') + 'id="vf-wasm">'.length;
        const end = body.indexOf('</script>', at);
        assert.ok(at > 20 && end - at > 1000, 'the page holds its wasm');
        // From the middle, the next first byte of a two-byte character (C2–C4), cut after it;
        // or the next one-byte character, cut before it.
        let cut = at + ((end - at) >> 1);
        const inside = how === 'inside a character';
        while (inside ? !(body[cut] >= 0xc2 && body[cut] <= 0xc4) : body[cut] >= 0x80) cut++;
        await route.fulfill({ response: r, body: body.subarray(0, inside ? cut + 1 : cut) });
      });
    }
    // An error whose message looks like markup: it must show as text.
    else if (how === 'compile') await page.addInitScript(() => { WebAssembly.compile = () => Promise.reject(new Error('<b>x</b>')); });
    else await page.addInitScript(() => { WebAssembly.instantiate = () => Promise.reject(new Error('<b>x</b>')); });
    await page.goto(server.url + '/');
    await page.getByTestId('start-failed').waitFor();
    const failed = await page.getByTestId('start-failed').evaluate((p) => ({ role: p.getAttribute('role'), text: p.textContent, children: p.children.length }));
    assert.equal(failed.role, 'alert');
    assert.match(failed.text, /^vramfit could not start \(.+\)\. Check the connection and reload the page\.$/);
    if (how === 'compile' || how === 'instantiate') assert.ok(failed.text.includes('(<b>x</b>)'), failed.text);
    // The JS did not come, or does not parse: the start script never ran, and the page says
    // so once the document is parsed, with the browser's error when there was one.
    if (how === '404') assert.ok(failed.text.includes('(its code did not load)'), failed.text);
    if (typeof how === 'string' && how.endsWith('cut short')) assert.match(failed.text, /SyntaxError/, failed.text);
    // Cut between characters, the bytes decode but do not make a module: the compile says so.
    if (how === 'between characters') assert.match(failed.text, /WebAssembly/, failed.text);
    if (how === 'inside a character') assert.ok(failed.text.includes('the page\'s wasm is not whole'), failed.text);
    assert.equal(failed.children, 0);
    // Said once, however many ways the failure was seen.
    await page.waitForTimeout(300);
    assert.equal(await page.getByTestId('start-failed').count(), 1, String(how));
    assert.equal(await page.locator('#vf-first').count(), 0);
    assert.equal(await page.getByTestId('verdict').count(), 0);
    await page.context().close();
  }
});

test('the page\'s wasm comes in the page, a character per byte: decoded, then taken out of the document', async () => {
  // The page as served: its block decodes to a module (the magic `\0asm`, whose NUL is one of
  // the escaped bytes) and holds no NUL, CR or `<` (pageWasm checks each character).
  const wasm = pageWasm(await (await fetch(server.url + '/')).text());
  assert.deepEqual([...wasm.subarray(0, 4)], [0x00, 0x61, 0x73, 0x6d]);
  assert.ok(WebAssembly.validate(wasm), 'the block is a whole module');
  // It holds every byte value (so every escape), as the chunk of 2026-12-05 did: the check
  // below then covers the HTML parser's reading of each.
  assert.equal(new Set(wasm).size, 256);
  const page = await newPage(browser, { serviceWorkers: 'block' });
  // The bytes the page compiles, by their SHA-256: the block's, as the parser gave them.
  await page.addInitScript(() => {
    const compile = WebAssembly.compile;
    const hex = (d) => Array.from(new Uint8Array(d), (x) => x.toString(16).padStart(2, '0')).join('');
    window.__compiled = [];
    WebAssembly.compile = function (bytes, ...rest) {
      window.__compiled.push(crypto.subtle.digest('SHA-256', bytes).then(hex));
      return compile.call(this, bytes, ...rest);
    };
  });
  // Every wasm the page fetches is one of the chunks index.html names, none the main chunk.
  const wasmFiles = [];
  page.on('request', (r) => { if (/\.wasm$/.test(new URL(r.url()).pathname)) wasmFiles.push(new URL(r.url()).pathname.slice(1)); });
  await page.goto(`${server.url}/?model=qwen2.5-7b&gpu=l40s`);
  await ready(page);
  const e = cli(['plan', 'qwen2.5-7b', '--gpu', 'l40s', '--max-model-len', '8192']);
  assert.equal(await page.getByTestId('weights-per-gpu').textContent(), gib(e.per_gpu.weights_bytes));
  assert.equal(await page.evaluate(() => document.getElementById('vf-wasm')), null);
  const compiled = await page.evaluate(() => Promise.all(window.__compiled));
  assert.ok(compiled.includes(crypto.createHash('sha256').update(wasm).digest('hex')), 'the page compiled the block\'s bytes');
  const chunks = (await page.evaluate(() => document.querySelector('meta[name="vramfit-chunks"]').content)).split(' ');
  assert.ok(wasmFiles.length > 0, 'the calculator\'s chunks are fetched');
  assert.deepEqual(wasmFiles.filter((f) => !chunks.includes(f)), [], 'no main wasm file is fetched');
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('a page whose catalog does not come says so, and the build\'s first result does not stay', async () => {
  const page = await newPage(browser, { serviceWorkers: 'block' });
  await page.route(/\/catalog-[0-9a-f]{16}\.json$/, (r) => r.fulfill({ status: 503, body: 'down' }));
  await page.goto(server.url + '/');
  await page.getByTestId('catalog-missing').waitFor();
  assert.equal(await page.locator('#vf-first').count(), 0);
  assert.equal(await page.getByTestId('verdict').count(), 0);
  await page.context().close();
});
