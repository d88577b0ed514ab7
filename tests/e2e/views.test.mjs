// Every view, as a user would use it: numbers equal the CLI's, no console errors, no axe-core
// violations, screenshots in light and dark at desktop and phone widths.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import fs from 'node:fs';
import os from 'node:os';
import { launch, startServer, newPage, ready, cli, text, shot, ROOT } from './helpers.mjs';

let browser, server;
before(async () => { browser = await launch(); server = await startServer(); });
after(async () => { await browser?.close(); await server?.close(); });

const AXE = path.join(ROOT, 'tests', 'e2e', 'node_modules', 'axe-core', 'axe.min.js');
async function axe(page) {
  await page.addScriptTag({ path: AXE });
  const r = await page.evaluate(async () => await window.axe.run(document, { resultTypes: ['violations'] }));
  return r.violations.map((v) => `${v.id}: ${v.help} (${v.nodes.length} nodes: ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')})`);
}

const VIEWS = ['size', 'quant', 'budget', 'scaling', 'oom', 'catalog', 'accuracy'];

test('every view renders in light and dark, desktop and phone, with no axe violations', async () => {
  for (const scheme of ['light', 'dark']) {
    for (const [device, width, height] of [['desktop', 1280, 900], ['phone', 390, 844]]) {
      const page = await newPage(browser, { width, height, colorScheme: scheme });
      await page.goto(`${server.url}/?model=qwen3-8b&gpu=l40s&users=8`);
      await ready(page);
      for (const v of VIEWS) {
        await page.getByTestId(`tab-${v}`).click();
        await page.waitForURL(v === 'size' ? /^(?!.*view=)/ : new RegExp(`view=${v}`));
        await page.waitForTimeout(50);
        await shot(page, `${v}-${scheme}-${device}`);
        if (device === 'desktop') assert.deepEqual(await axe(page), [], `${v} ${scheme}`);
      }
      assert.deepEqual(page.errors, [], `${scheme} ${device}`);
      await page.context().close();
    }
  }
});

test('quantization view: every format, and the GPU counts the CLI gives', async () => {
  const page = await newPage(browser);
  await page.goto(`${server.url}/?model=llama-3.1-70b&gpu=a100-80gb-sxm&len=32768&view=quant`);
  await page.getByTestId('quant-table').waitFor();
  for (const [fmt, flag] of [['bf16', 'bf16'], ['fp8', 'fp8'], ['int4-awq', 'awq']]) {
    const e = cli(['plan', 'llama-3.1-70b', '--gpu', 'a100-80gb-sxm', '--max-model-len', '32768', '--quantization', flag]);
    const row = page.getByTestId(`quant-${fmt}`);
    assert.equal((await row.locator('td').nth(2).textContent()).trim(), String(e.gpus_needed), fmt);
  }
  assert.equal(await page.locator('[data-testid^="quant-"] >> nth=0').count(), 1);
  assert.deepEqual(page.errors, []);
});

test('hardware budget ranks GPUs, sorts, and exports CSV', async () => {
  const page = await newPage(browser);
  await page.goto(`${server.url}/?model=llama-3.1-8b&users=32&view=budget`);
  await page.getByTestId('budget-table').waitFor();
  const rows = page.locator('[data-testid="budget-table"] tbody tr');
  assert.ok((await rows.count()) >= 10);
  // The first row is the CLI's first option (ranked by TCO).
  const first = await rows.first().getAttribute('data-testid');
  const expected = cli(['budget', 'llama-3.1-8b', '--users', '32', '--max-model-len', '8192']);
  assert.equal(first, `budget-${expected.options[0].gpu}`);
  const firstTco = await rows.first().evaluate((tr) => tr.children[7].textContent);
  assert.equal(firstTco, `$${Math.round(expected.options[0].tco_usd).toLocaleString('en-US')}`);
  await page.getByRole('button', { name: '$/hour' }).click();
  const hourly = await rows.evaluateAll((trs) => trs.filter((tr) => !tr.classList.contains('vf-muted')).map((tr) => tr.children[10].textContent));
  const nums = hourly.filter((h) => h !== '–').map((h) => Number(h.replace(/[$,]/g, '')));
  assert.deepEqual(nums, [...nums].sort((a, b) => a - b));
  const href = await page.getByTestId('budget-csv').getAttribute('href');
  const csv = decodeURIComponent(href.slice(href.indexOf(',') + 1));
  assert.match(csv.split('\n')[0], /^gpu,gpu_name,platform,engine,gpus,gpus_used,nodes,racks,layout,purchase_usd/);
  assert.ok(csv.split('\n').length > 10);
  assert.match(await page.getByTestId('budget-price-age').textContent(), /Prices dated \d{4}/);
  assert.deepEqual(page.errors, []);
});

test('budget: constraints grey options with reasons, the link carries the inputs, the chart crosses', async () => {
  const page = await newPage(browser);
  await page.goto(`${server.url}/?model=llama-3.1-70b&users=8&view=budget&maxkw=5&vendor=nvidia&apiin=0.23&apiout=0.4`);
  await page.getByTestId('budget-table').waitFor();
  const hgx = page.locator('[data-testid^="budget-h100-sxm"]', { hasText: '8-GPU HGX H100' }).first();
  assert.ok(await hgx.evaluate((tr) => tr.classList.contains('vf-muted')));
  assert.match(await hgx.textContent(), /draws 10\.2 kW at load; the cap is 5\.0 kW/);
  const mi = page.locator('[data-testid^="budget-mi300x"]').first();
  assert.match(await mi.textContent(), /amd GPU; only nvidia asked/);
  // Typing a value lands in the URL (the share link reproduces it).
  await page.getByTestId('years').fill('3');
  await page.waitForFunction(() => location.search.includes('years=3'));
  assert.ok(page.url().includes('maxkw=5'));
  // The crossover chart draws the four lines for the chosen option.
  await page.getByTestId('budget-chart').locator('svg').waitFor();
  assert.match(await page.getByTestId('budget-chart').textContent(), /API/);
  assert.match(await page.getByTestId('budget-crossover').textContent(), /buying beats renting on demand|has no on-demand price/);
  // The same numbers as the CLI.
  const e = cli(['budget', 'llama-3.1-70b', '--users', '8', '--max-model-len', '8192', '--max-power-kw', '5', '--vendor', 'nvidia', '--api-input-price', '0.23', '--api-output-price', '0.4', '--years', '3']);
  const first = await page.locator('[data-testid="budget-table"] tbody tr').first().getAttribute('data-testid');
  assert.equal(first, `budget-${e.options[0].gpu}`);
  assert.deepEqual(page.errors, []);
});

test('TP scaling view shows the curve and matches the CLI', async () => {
  const page = await newPage(browser);
  await page.goto(`${server.url}/?model=llama-3.1-70b&gpu=h100-sxm&prompt=2048&output=128&view=scaling`);
  await page.getByTestId('scaling-chart').locator('svg').waitFor();
  const e = cli(['scale', 'llama-3.1-70b', '--gpu', 'h100-sxm', '--input-len', '2048', '--output-len', '128', '--max-model-len', '8192']);
  const tp8 = e.points.find((p) => p.tensor_parallel_size === 8 && p.pipeline_parallel_size === 1);
  const cells = await page.locator('[data-testid="scaling-table"] tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
  const row8 = cells.find((c) => c[0] === '8' && c[1] === '1');
  assert.equal(row8[2], tp8.tokens_per_s_total.toFixed(0));
  assert.match(await text(page, 'scaling-summary'), /TP 8/);
  assert.deepEqual(page.errors, []);
});

test('the throughput-versus-latency chart has a line per layout and matches the CLI', async () => {
  const page = await newPage(browser);
  await page.goto(`${server.url}/?model=llama-3.1-8b&gpu=h100-sxm&view=scaling`);
  await page.getByTestId('latency-chart').locator('svg').waitFor();
  const svg = await page.getByTestId('latency-chart').innerHTML();
  assert.match(svg, /TP 1/);
  assert.match(svg, /TP 8/);
  const e = cli(['scale', 'llama-3.1-8b', '--gpu', 'h100-sxm', '--concurrency', '1', '--max-model-len', '8192']);
  assert.equal(e.load, 'concurrency');
  const tp1 = e.points.find((p) => p.tensor_parallel_size === 1 && p.pipeline_parallel_size === 1);
  const cells = await page.locator('[data-testid="latency-table"] tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
  const row = cells.find((c) => c[0] === '1' && c[1] === '1');
  assert.equal(row[2], tp1.tokens_per_s_per_user.toFixed(1));
  assert.equal(row[4], tp1.itl_ms.toFixed(1));
  assert.equal(row[6], tp1.limited_by);
  // Every scaling row names its limit.
  const limits = await page.getByTestId('scaling-limit').allTextContents();
  assert.ok(limits.length >= 7 && limits.every((l) => l.length > 0));
  assert.deepEqual(page.errors, []);
});

test('the OOM explainer reads a real PyTorch message and explains it', async () => {
  const page = await newPage(browser);
  const requested = [];
  page.on('request', (r) => requested.push(r.url()));
  await page.goto(`${server.url}/?view=oom`);
  await page.getByTestId('oom-input').waitFor();
  // The import worker (OOM reader, header parser) is not part of the first load...
  assert.deepEqual(requested.filter((u) => u.includes('vramfit-worker')), []);
  // pytorch/pytorch#16417-style message (PyTorch 2.x wording).
  const msg = 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 23.65 GiB of which 3.06 MiB is free. Process 1234 has 23.64 GiB memory in use. Of the allocated memory 16.97 GiB is allocated by PyTorch, and 6.27 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.';
  await page.getByTestId('oom-input').fill(msg);
  await page.getByTestId('oom-finding').first().waitFor();
  // ...it is fetched when first needed: its loader, its JS glue and its wasm.
  assert.deepEqual(requested.filter((u) => u.includes('vramfit-worker')).map((u) => u.replace(/.*vramfit-worker-[0-9a-f]{12,16}/, '')).sort(), ['.js', '_bg.wasm', '_loader.js']);
  const report = await text(page, 'oom-report');
  assert.match(report, /Message\s*PyTorch CUDA out of memory/);
  assert.match(report, /Tried to allocate\s*20 MiB/);
  assert.match(report, /Total capacity\s*23\.65 GiB/);
  const findings = await text(page, 'oom-findings');
  assert.match(findings, /expandable_segments:True/);
  // The same findings as the CLI for the same text and model.
  const file = path.join(os.tmpdir(), `vramfit-oom-${process.pid}.txt`);
  fs.writeFileSync(file, msg);
  const e = cli(['oom', file, '--model', 'llama-3.1-8b']);
  const shown = await page.locator('[data-testid="oom-finding"] h3').allTextContents();
  assert.deepEqual(shown, e.findings.map((f) => f.headline));
  // Switching tabs keeps what the user typed.
  await page.getByTestId('tab-size').click();
  await page.getByTestId('tab-oom').click();
  assert.equal(await page.getByTestId('oom-input').inputValue(), msg);
  await page.getByTestId('oom-input').fill('hello world');
  await page.getByTestId('oom-error').waitFor();
  assert.deepEqual(page.errors, []);
});

test('while the worker loads on a slow network, the OOM view says it is reading', async () => {
  const slow = await startServer({ delay: { '/vramfit-worker-': 1500 } });
  const page = await newPage(browser);
  await page.goto(`${slow.url}/?view=oom`);
  await page.getByTestId('oom-input').fill('RuntimeError: CUDA error: out of memory');
  await page.getByTestId('oom-pending').waitFor({ timeout: 1000 });
  await page.getByTestId('oom-finding').first().waitFor();
  assert.equal(await page.getByTestId('oom-pending').count(), 0);
  assert.deepEqual(page.errors, []);
  await page.context().close();
  await slow.close();
});

test('a worker that cannot load is reported, and the next request starts a fresh one', async () => {
  const page = await newPage(browser);
  await page.goto(`${server.url}/?view=oom`);
  await page.getByTestId('oom-input').waitFor();
  // Point the page at a worker file the server does not have (as if offline before first use).
  const real = await page.evaluate(() => {
    const m = document.querySelector('meta[name=vramfit-worker]');
    const was = m.content;
    m.content = 'vramfit-worker-0000000000000000_loader.js';
    return was;
  });
  const msg = 'RuntimeError: CUDA error: out of memory';
  await page.getByTestId('oom-input').fill(msg);
  await page.getByTestId('oom-error').waitFor();
  assert.match(await text(page, 'oom-error'), /import worker stopped: it could not be loaded/);
  assert.equal(await page.getByTestId('oom-input').inputValue(), msg);
  await page.evaluate((u) => { document.querySelector('meta[name=vramfit-worker]').content = u; }, real);
  await page.getByTestId('oom-input').fill(msg + ' ');
  await page.getByTestId('oom-finding').first().waitFor();
  assert.equal(await page.getByTestId('oom-error').count(), 0);
  // Chromium logs the failed script fetch; nothing else may go wrong.
  assert.deepEqual(page.errors.filter((x) => !/Failed to load resource/.test(x)), []);
});

test('the catalog is searchable and every entry shows its source', async () => {
  const page = await newPage(browser);
  await page.goto(`${server.url}/?view=catalog`);
  // The sources are fetched when the view opens (catalog-sources.json), not on first load.
  await page.locator('[data-testid="catalog-models"][data-sources="ready"]').waitFor();
  const gpuSources = await page.locator('[data-testid="catalog-gpus"] tbody tr').evaluateAll((trs) => trs.map((tr) => tr.lastElementChild.textContent));
  assert.ok(gpuSources.length >= 35 && gpuSources.every((s) => s.trim().length > 10 && !/loading source|no source recorded/.test(s)));
  await page.getByTestId('catalog-search').fill('deepseek');
  const models = page.locator('[data-testid="catalog-models"] tbody tr');
  const n = await models.count();
  assert.ok(n >= 3, `${n} deepseek models`);
  for (const src of await models.evaluateAll((trs) => trs.map((tr) => tr.lastElementChild.textContent))) {
    assert.ok(src.trim().length > 10 && !/loading source|no source recorded|unavailable/.test(src), src);
  }
  // A config assembled from corroborating copies says so.
  await page.getByTestId('catalog-search').fill('llama-3.1-405b');
  assert.equal(await page.locator('[data-testid="catalog-models"] [data-testid="config-reconstructed"]').count(), 1);
  await page.getByTestId('catalog-search').fill('llama-3.1-8b');
  assert.equal(await page.locator('[data-testid="catalog-models"] [data-testid="config-reconstructed"]').count(), 0);
  await page.getByTestId('catalog-search').fill('141');
  assert.ok((await page.locator('[data-testid="catalog-gpus"] tbody tr').count()) >= 1, 'H200 by memory');
  // Spaces around a search are not part of it; a search that leaves a table empty says so.
  await page.getByTestId('catalog-search').fill(' deepseek ');
  assert.equal(await models.count(), n);
  assert.ok(await page.getByTestId('catalog-models-none').isHidden());
  assert.equal(await text(page, 'catalog-gpus-none'), 'No GPU matches \u201cdeepseek\u201d.');
  await page.getByTestId('catalog-search').fill('h100');
  assert.ok(await page.getByTestId('catalog-gpus-none').isHidden());
  await page.getByTestId('catalog-search').fill(' <b>zz</b> ');
  assert.ok(await page.getByTestId('catalog-models-none').isVisible());
  assert.equal(await text(page, 'catalog-models-none'), 'No model matches \u201c<b>zz</b>\u201d.');
  assert.equal(await text(page, 'catalog-gpus-none'), 'No GPU matches \u201c<b>zz</b>\u201d.');
  assert.equal(await page.locator('main b').count(), 0);
  assert.equal(await page.locator('[data-testid="catalog-gpus"] tbody tr').count(), 0);
  assert.deepEqual(page.errors, []);
});

test('fully usable by keyboard: tabs, selects and inputs', async () => {
  const page = await newPage(browser);
  await page.goto(`${server.url}/`);
  await ready(page);
  // Reach the "Quantization" tab with Tab presses only, open it with Enter.
  let found = false;
  for (let i = 0; i < 40 && !found; i++) {
    await page.keyboard.press('Tab');
    found = await page.evaluate(() => document.activeElement?.dataset?.testid === 'tab-quant');
  }
  assert.ok(found, 'tab-quant is reachable with Tab');
  await page.keyboard.press('Enter');
  await page.waitForURL(/view=quant/);
  await page.getByTestId('quant-table').waitFor();
  // Change the model with the keyboard.
  await page.getByTestId('tab-size').focus();
  await page.keyboard.press('Enter');
  await page.getByTestId('model').focus();
  const before = await page.getByTestId('model').inputValue();
  await page.keyboard.press('ArrowDown');
  await page.waitForFunction((b) => document.querySelector('[data-testid="model"]').value !== b, before);
  await page.getByTestId('context-length').focus();
  await page.keyboard.press('Control+A');
  await page.keyboard.type('16384');
  await page.waitForURL(/len=16384/);
  // Every interactive element has a visible focus style.
  const outline = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
  assert.notEqual(outline, 'none');
  assert.deepEqual(page.errors, []);
});

test('check my command: the issue example, the share link carries it, text stays text', async () => {
  const page = await newPage(browser);
  await page.goto(`${server.url}/?gpu=h100-sxm`);
  await ready(page);
  const issue = 'vllm serve meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size 4 --quantization awq';
  await page.getByTestId('command-input').fill(issue);
  const checks = page.getByTestId('command-checks');
  await checks.waitFor();
  assert.equal(await checks.getAttribute('data-state'), 'will-not-start');
  const items = page.getByTestId('command-check');
  assert.equal(await items.count(), 1);
  assert.equal(await items.first().getAttribute('data-id'), 'quantization_mismatch');
  assert.match(await items.first().textContent(), /hugging-quants\/Meta-Llama-3\.1-70B-Instruct-AWQ-INT4/);
  await shot(page, 'command-check');
  // The link carries the command: a fresh page shows the same box and the same answer.
  await page.waitForURL(/cmd=vllm%20serve/);
  const again = await newPage(browser);
  await again.goto(page.url());
  await again.getByTestId('command-checks').waitFor();
  assert.equal(await again.getByTestId('command-input').inputValue(), issue);
  assert.equal(await again.getByTestId('command-check').first().getAttribute('data-id'), 'quantization_mismatch');
  // A command that starts: the same checks as `vramfit check --command`.
  const ok = 'vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192 --enable-lora --port 8000';
  await page.getByTestId('command-input').fill(ok);
  await page.waitForFunction(() => document.querySelector('[data-testid="command-checks"]')?.dataset.state === 'starts');
  const e = cli(['check', '--command', ok, '--gpu', 'h100-sxm']);
  assert.equal(e.starts, true);
  const ids = await page.getByTestId('command-check').evaluateAll((els) => els.map((x) => x.dataset.id));
  assert.deepEqual(ids, e.command_checks.map((c) => c.id));
  // Pasted markup is shown as text, never run or rendered.
  await page.getByTestId('command-input').fill('vllm serve <img src=x onerror="window.pwned=1"><script>window.pwned=2</script>');
  await page.waitForFunction(() => document.querySelector('[data-testid="command-checks"]')?.dataset.state === 'error');
  assert.match(await checks.textContent(), /unknown model `<img/);
  assert.equal(await page.locator('[data-testid="command-checks"] img, [data-testid="command-checks"] script').count(), 0);
  assert.equal(await page.evaluate(() => window.pwned), undefined);
  // A paste longer than a command may be (8,000 characters) stays in the box and says so;
  // the checks of the last command are not shown beside it as if they were its own.
  await page.getByTestId('command-input').fill(ok);
  await page.waitForFunction(() => document.querySelector('[data-testid="command-checks"]')?.dataset.state === 'starts');
  const long = `${ok} ${'x'.repeat(9000)}`;
  await page.getByTestId('command-input').fill(long);
  const err = page.getByTestId('command-error');
  await err.waitFor();
  assert.equal((await err.textContent()).trim(), `the pasted text is ${(long.length).toLocaleString('en-US')} characters, more than the 8,000 a command may have: it is not checked`);
  assert.equal(await page.getByTestId('command-input').inputValue(), long);
  assert.equal(await page.getByTestId('command-input').getAttribute('aria-invalid'), 'true');
  assert.equal(await checks.count(), 0);
  await page.getByTestId('command-input').fill(ok);
  await page.waitForFunction(() => document.querySelector('[data-testid="command-checks"]')?.dataset.state === 'starts');
  assert.equal(await err.count(), 0);
  assert.deepEqual(page.errors, []);
  assert.deepEqual(again.errors, []);
  await again.context().close();
});

// The charts' geometry, as the browser lays them out: the legend (the `*-legend` group) is a
// strip under everything else the chart draws; every bar row of the memory chart has its name
// just above it; the GPU-memory line and its label are there; the colours are the theme's;
// the text is legible and the chart fits at phone width.
async function chartGeometry(page, id) {
  return page.getByTestId(id).evaluate((el, id) => {
    const svg = el.querySelector('svg');
    const legend = svg.querySelector(`[data-testid="${id.replace('-chart', '-legend')}"]`);
    const box = (e) => { const r = e.getBoundingClientRect(); return { left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width, height: r.height }; };
    const outside = (sel) => [...svg.querySelectorAll(sel)].filter((e) => !legend?.contains(e));
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    const rgb = (c) => c.match(/\d+(\.\d+)?/g).slice(0, 3).map(Number);
    return {
      legend: legend && box(legend),
      legendTexts: legend ? [...legend.querySelectorAll('text')].map((t) => t.textContent.trim()) : [],
      drawn: outside('rect, polyline, line, circle, text').map(box).filter((b) => b.width > 0 || b.height > 0),
      bars: outside('rect').map(box).filter((b) => b.width > 0),
      gpuLine: outside('polyline[stroke="#FF0000"]').map(box),
      texts: outside('text').map((t) => ({ text: t.textContent.trim(), ...box(t) })),
      minFontPx: Math.min(...[...svg.querySelectorAll('text')].map((t) => parseFloat(t.getAttribute('font-size')))) * scale,
      svg: box(svg),
      container: { scrollWidth: el.scrollWidth, clientWidth: el.clientWidth },
      background: rgb(getComputedStyle(svg).backgroundColor),
      ink: rgb(getComputedStyle(svg.querySelector('text')).fill),
      html: svg.outerHTML,
    };
  }, id);
}

function luminance([r, g, b]) {
  const c = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
  return 0.2126 * c(r) + 0.7152 * c(g) + 0.0722 * c(b);
}
const contrast = (a, b) => { const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
const overlaps = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;

test('the memory chart: legend under the bars, every bar named, the GPU-memory line labelled, themed, phone width', async () => {
  for (const scheme of ['light', 'dark']) {
    for (const width of [1280, 375]) {
      const page = await newPage(browser, { width, height: 900, colorScheme: scheme });
      await page.goto(`${server.url}/?model=llama-3.1-70b&gpu=a100-80gb-sxm&len=32768`);
      await ready(page);
      await page.getByTestId('memory-chart').locator('svg').waitFor();
      const g = await chartGeometry(page, 'memory-chart');
      const at = `${scheme} ${width}px`;
      assert.ok(g.legend, `${at}: the legend group`);
      assert.deepEqual(g.legendTexts, ['weights', 'activation', 'non-torch', 'KV pool', 'CUDA graphs', 'context', 'GPU memory'], at);
      // The legend is a strip under everything else: it covers no bar, line or label.
      for (const b of g.drawn) assert.ok(b.bottom <= g.legend.top + 0.5 && !overlaps(b, g.legend), `${at}: ${JSON.stringify(b)} reaches into the legend ${JSON.stringify(g.legend)}`);
      // Every bar row is named just above it, with its format as the formats table lists it.
      const formats = await page.locator('[data-testid="formats"] tbody tr th').allTextContents();
      const rows = [...new Set(g.bars.map((b) => Math.round(b.top)))];
      assert.equal(rows.length, formats.length, at);
      const names = g.texts.filter((t) => /TP\d+×PP\d+/.test(t.text));
      assert.deepEqual(names.map((t) => t.text.split(' · ')[0]), formats, at);
      for (const top of rows) assert.ok(names.some((n) => Math.abs(n.bottom - top) < 12 && n.left < g.svg.left + 40), `${at}: no name above the bar at ${top}: ${JSON.stringify(names)}`);
      // The GPU-memory line runs across the rows, and is labelled with the GPU's memory.
      assert.equal(g.gpuLine.length, 1, at);
      assert.ok(g.gpuLine[0].height >= rows.length * 20, at);
      const label = g.texts.find((t) => /^GPU memory \d/.test(t.text));
      assert.ok(label, at);
      assert.ok(!names.some((n) => overlaps(n, label)), `${at}: the line's label covers a bar's name`);
      // Theme: the page's card behind the chart, its text colour for the ink.
      const bg = luminance(g.background);
      assert.ok(scheme === 'dark' ? bg < 0.1 : bg > 0.8, `${at}: background ${g.background}`);
      assert.ok(contrast(g.ink, g.background) >= 7, `${at}: ink ${g.ink} on ${g.background}`);
      assert.ok(!/#000000|#FFFFFF/.test(g.html), `${at}: a colour that ignores the theme`);
      // Fits the column without scrolling; text at least 10 CSS px.
      assert.ok(g.container.scrollWidth <= g.container.clientWidth && g.svg.right <= width, `${at}: ${JSON.stringify([g.container, g.svg])}`);
      assert.ok(g.minFontPx >= 10, `${at}: text of ${g.minFontPx.toFixed(1)} px`);
      if (width === 375) await shot(page, `memory-chart-${scheme}-phone`);
      assert.deepEqual(page.errors, [], at);
      await page.context().close();
    }
  }
});

test('the scaling and latency charts: legend under the plot, themed, phone width', async () => {
  for (const scheme of ['light', 'dark']) {
    const page = await newPage(browser, { width: 375, height: 900, colorScheme: scheme });
    await page.goto(`${server.url}/?model=llama-3.1-8b&gpu=h100-sxm&view=scaling`);
    await page.getByTestId('latency-chart').locator('svg').waitFor();
    for (const [id, keys] of [['scaling-chart', /^total, .*\|total, PCIe\|ideal linear$/], ['latency-chart', /^TP 1\|TP 2\|TP 4\|TP 8$/]]) {
      const g = await chartGeometry(page, id);
      const at = `${id} ${scheme}`;
      assert.match(g.legendTexts.join('|'), keys, at);
      for (const b of g.drawn) assert.ok(b.bottom <= g.legend.top + 0.5, `${at}: ${JSON.stringify(b)} reaches into the legend ${JSON.stringify(g.legend)}`);
      const bg = luminance(g.background);
      assert.ok(scheme === 'dark' ? bg < 0.1 : bg > 0.8, `${at}: background ${g.background}`);
      assert.ok(contrast(g.ink, g.background) >= 7, at);
      assert.ok(g.container.scrollWidth <= g.container.clientWidth && g.svg.right <= 375, at);
      assert.ok(g.minFontPx >= 10, `${at}: text of ${g.minFontPx.toFixed(1)} px`);
    }
    await shot(page, `scaling-charts-${scheme}-phone`);
    assert.deepEqual(page.errors, [], scheme);
    await page.context().close();
  }
});

test('quoted flags and names in messages are code, never a literal backtick, never markup', async () => {
  const page = await newPage(browser);
  const evil = encodeURIComponent('<script>window.__pwned=1</script>');
  await page.goto(`${server.url}/?len=abc&model=${evil}`);
  await ready(page);
  const notice = page.getByTestId('url-notice');
  assert.ok((await notice.locator('li code').allTextContents()).includes('abc'));
  assert.ok((await notice.locator('li code').allTextContents()).includes('<script>window.__pwned=1</script>'));
  assert.ok(!(await notice.textContent()).includes('`'));
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  // An OOM explanation: its fixes quote flags.
  await page.getByTestId('tab-oom').click();
  await page.getByTestId('oom-input').fill('torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 23.65 GiB of which 3.06 MiB is free. Of the allocated memory 16.97 GiB is allocated by PyTorch, and 6.27 GiB is reserved by PyTorch but unallocated.');
  await page.getByTestId('oom-finding').first().waitFor();
  const findings = page.getByTestId('oom-findings');
  assert.ok((await findings.locator('code').count()) > 0);
  assert.ok(!(await findings.textContent()).includes('`'));
  assert.deepEqual(page.errors, []);
});

test('the verdict shows its flags as code', async () => {
  const page = await newPage(browser);
  await page.goto(`${server.url}/?model=llama-3.1-70b&gpu=rtx-4090&tp=1&len=8192`);
  await ready(page);
  assert.ok((await page.getByTestId('verdict').locator('code').count()) > 0);
  assert.ok(!(await text(page, 'verdict')).includes('`'));
});

/** A page (service worker blocked) whose first fetch of the chunk matching `file` fails, as
 * on a connection that drops; later fetches go through. `tries()` counts the fetches. */
async function losingFirstFetch(file) {
  const page = await newPage(browser, { serviceWorkers: 'block' });
  let tries = 0;
  await page.route(file, (route) => (++tries === 1 ? route.abort('internetdisconnected') : route.continue()));
  return { page, tries: () => tries };
}

/** The page's errors other than the failed fetch's (a panic would be one). */
const beyondTheFetch = (page) => page.errors.filter((e) => !/Failed to fetch|ERR_INTERNET_DISCONNECTED|Failed to load resource/.test(e));

test('a views chunk that does not come is said in its place, the page goes on, and opening a tab again loads it', async () => {
  const { page, tries } = await losingFirstFetch(/_split_views\.wasm$/);
  await page.goto(`${server.url}/?model=qwen2.5-7b&gpu=l40s`);
  await ready(page);
  await page.getByTestId('tab-quant').click();
  const failed = page.getByTestId('lazy-status').filter({ hasText: 'could not be downloaded' });
  await failed.first().waitFor();
  assert.equal(await failed.first().textContent(), "the view's code could not be downloaded; check the connection, then try again");
  assert.equal(await page.getByTestId('quant-table').count(), 0);
  // The page itself is untouched: "Size it" still answers, as the CLI does.
  await page.getByTestId('tab-size').click();
  const before = await text(page, 'weights-per-gpu');
  assert.ok(before.length > 0);
  const expected = cli(['plan', 'qwen2.5-7b', '--gpu', 'l40s', '--max-model-len', '8192']);
  assert.equal(await text(page, 'gpus-needed'), `${expected.needed.gpus} (TP ${expected.needed.tensor_parallel_size})`);
  await page.getByTestId('tab-quant').click();
  await page.getByTestId('quant-table').waitFor();
  assert.equal(tries(), 2, 'one failed fetch, one that loaded');
  assert.equal(await failed.count(), 0);
  // The only errors are the failed fetch's; no panic.
  assert.ok(page.errors.length > 0);
  assert.deepEqual(beyondTheFetch(page), []);
  await page.context().close();
});

test('the rest of "Size it" that does not come is said below the first result, which stays, and "Try again" loads it', async () => {
  const { page, tries } = await losingFirstFetch(/_split_size_rest\.wasm$/);
  await page.goto(`${server.url}/?model=qwen2.5-7b&gpu=l40s`);
  await page.getByTestId('verdict').waitFor();
  const failed = page.getByTestId('lazy-status').filter({ hasText: 'could not be downloaded' });
  await failed.first().waitFor();
  assert.equal(await page.getByTestId('formats').count(), 0);
  // The first result is there and follows the inputs.
  const expected = cli(['plan', 'qwen2.5-7b', '--gpu', 'l40s', '--max-model-len', '8192']);
  assert.equal(await text(page, 'gpus-needed'), `${expected.needed.gpus} (TP ${expected.needed.tensor_parallel_size})`);
  await page.getByTestId('lazy-retry').click();
  await page.getByTestId('formats').waitFor();
  await page.getByTestId('commands').waitFor();
  assert.equal(tries(), 2, 'one failed fetch, one that loaded');
  assert.equal(await failed.count(), 0);
  assert.equal(await page.getByTestId('lazy-retry').count(), 0);
  assert.deepEqual(beyondTheFetch(page), []);
  await page.context().close();
});

test('the import worker\'s client chunk that does not come answers the request with that, and the next request loads it', async () => {
  const { page, tries } = await losingFirstFetch(/_split_worker_client\.wasm$/);
  await page.goto(`${server.url}/?view=oom`);
  const msg = 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.';
  await page.getByTestId('oom-input').fill(msg);
  await page.getByTestId('oom-error').waitFor();
  assert.equal(await text(page, 'oom-error'), "the import worker's client could not be downloaded; check the connection, then try again");
  assert.equal(await page.getByTestId('oom-input').inputValue(), msg);
  await page.getByTestId('oom-input').fill('RuntimeError: CUDA error: out of memory');
  await page.getByTestId('oom-finding').first().waitFor();
  assert.equal(tries(), 2, 'one failed fetch, one that loaded');
  assert.equal(await page.getByTestId('oom-error').count(), 0);
  assert.deepEqual(beyondTheFetch(page), []);
  await page.context().close();
});

test('accuracy view: the never-fitted GPUs are the report\'s figures', async () => {
  // docs/ACCURACY.md is the report `vramfit accuracy --check` regenerates and compares; its
  // headline row for the GPUs outside the calibration set (accuracy/unseen.rs) is what the
  // page's paragraph must say, rounded to one decimal.
  const report = fs.readFileSync(path.join(ROOT, 'docs', 'ACCURACY.md'), 'utf8');
  const m = report.match(/\| output tokens\/s, GPUs outside the calibration set \(never fitted\) \| (\d+) \| ([\d.]+)% \| ([\d.]+)% \|/);
  assert.ok(m, 'headline row in docs/ACCURACY.md');
  const [rows, median, p90] = [m[1], Number(m[2]), Number(m[3])];
  const page = await newPage(browser);
  await page.goto(`${server.url}/?view=accuracy`);
  const p = page.getByTestId('unseen-gpus');
  await p.waitFor();
  const t = await p.textContent();
  assert.match(t, new RegExp(`(^|\\D)${rows} rows`), t);
  // The page shows one decimal of the value the report shows with two: within rounding.
  const shown = (label) => Number(t.match(new RegExp(`${label} ([\\d.]+)%`))?.[1]);
  assert.ok(Math.abs(shown('median error') - median) <= 0.051, `${median} in: ${t}`);
  assert.ok(Math.abs(shown('90th percentile') - p90) <= 0.051, `${p90} in: ${t}`);
  // Every GPU of the report's per-GPU table, by catalog id, as a whole item of the list.
  const section = report.slice(report.indexOf('### GPUs outside the calibration set'));
  const table = section.slice(0, section.indexOf('| all |'));
  const ids = [...table.matchAll(/^\| ([a-z0-9.-]+) \| \d+ \|/gm)].map((x) => x[1]);
  assert.ok(ids.length >= 6, ids.join());
  const listed = t.slice(t.indexOf('(') + 1, t.indexOf(';')).split(', ');
  assert.deepEqual(listed, ids);
  assert.deepEqual(page.errors, []);
});
