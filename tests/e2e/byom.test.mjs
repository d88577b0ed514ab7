// Bring your own model: local files read header-only (a 20 GB sparse shard in well under a
// second), shards checked against the index and combined with config.json, the result equal
// to the CLI's for the same folder; Hugging Face import over HTTP Range from a local server,
// with clear errors for gated, missing, offline and Range-ignoring servers.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { launch, startServer, newPage, ready, cli, gib, text, ROOT } from './helpers.mjs';

let browser, server, tmp;

/** Writes a safetensors file: real header, sparse data (ftruncate), so 20 GB costs nothing. */
function writeShard(file, tensors) {
  let off = 0;
  const header = {};
  for (const [name, dtype, shape] of tensors) {
    const bytes = shape.reduce((a, b) => a * b, 1) * { BF16: 2, F32: 4, U8: 1 }[dtype];
    header[name] = { dtype, shape, data_offsets: [off, off + bytes] };
    off += bytes;
  }
  header.__metadata__ = { format: 'pt' };
  let json = Buffer.from(JSON.stringify(header));
  const pad = (8 - (json.length % 8)) % 8;
  json = Buffer.concat([json, Buffer.alloc(pad, 0x20)]);
  const fd = fs.openSync(file, 'w');
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  fs.writeSync(fd, len);
  fs.writeSync(fd, json);
  fs.ftruncateSync(fd, 8 + json.length + off);
  fs.closeSync(fd);
  return Object.keys(header).filter((k) => k !== '__metadata__');
}

/** Tensors of a Llama/Qwen2-style checkpoint from its config. */
function tensorsOf(c) {
  const h = c.hidden_size, i = c.intermediate_size, hd = c.head_dim || h / c.num_attention_heads;
  const q = c.num_attention_heads * hd, kv = c.num_key_value_heads * hd, t = [];
  t.push(['model.embed_tokens.weight', 'BF16', [c.vocab_size, h]]);
  for (let l = 0; l < c.num_hidden_layers; l++) {
    const p = `model.layers.${l}.`;
    t.push([p + 'self_attn.q_proj.weight', 'BF16', [q, h]], [p + 'self_attn.q_proj.bias', 'BF16', [q]]);
    t.push([p + 'self_attn.k_proj.weight', 'BF16', [kv, h]], [p + 'self_attn.k_proj.bias', 'BF16', [kv]]);
    t.push([p + 'self_attn.v_proj.weight', 'BF16', [kv, h]], [p + 'self_attn.v_proj.bias', 'BF16', [kv]]);
    t.push([p + 'self_attn.o_proj.weight', 'BF16', [h, q]]);
    t.push([p + 'mlp.gate_proj.weight', 'BF16', [i, h]], [p + 'mlp.up_proj.weight', 'BF16', [i, h]], [p + 'mlp.down_proj.weight', 'BF16', [h, i]]);
    t.push([p + 'input_layernorm.weight', 'BF16', [h]], [p + 'post_attention_layernorm.weight', 'BF16', [h]]);
  }
  t.push(['model.norm.weight', 'BF16', [h]], ['lm_head.weight', 'BF16', [c.vocab_size, h]]);
  return t;
}

function makeModelDir(dir, config) {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config));
  const all = tensorsOf(config);
  const half = Math.ceil(all.length / 2);
  const shards = ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors'];
  const weight_map = {};
  let total = 0;
  [all.slice(0, half), all.slice(half)].forEach((part, k) => {
    for (const n of writeShard(path.join(dir, shards[k]), part)) weight_map[n] = shards[k];
    total += part.reduce((a, [, , s]) => a + s.reduce((x, y) => x * y, 1) * 2, 0);
  });
  fs.writeFileSync(path.join(dir, 'model.safetensors.index.json'), JSON.stringify({ metadata: { total_size: total }, weight_map }));
  return { shards, count: all.length };
}

const QWEN = JSON.parse(fs.readFileSync(path.join(ROOT, 'crates/vramfit-core/src/catalog/models/qwen.json'), 'utf8')).find((m) => m.id === 'qwen2.5-7b').config;

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'vramfit-byom-'));
  makeModelDir(path.join(tmp, 'qwen'), QWEN);
  // Hub layout: <endpoint>/<owner>/<name>/resolve/main/<file>
  const hub = path.join(tmp, 'hub');
  makeModelDir(path.join(hub, 'acme', 'qwen-copy', 'resolve', 'main'), QWEN);
  const single = path.join(hub, 'acme', 'no-range', 'resolve', 'main');
  fs.mkdirSync(single, { recursive: true });
  fs.writeFileSync(path.join(single, 'config.json'), JSON.stringify(QWEN));
  writeShard(path.join(single, 'model.safetensors'), [['w', 'BF16', [25_000_000]]]);
  writeShard(path.join(tmp, 'big.safetensors'), [['model.embed_tokens.weight', 'BF16', [100_000, 100_000]]]); // 20 GB
  browser = await launch();
  server = await startServer({
    mounts: { '/hub/': hub },
    ignoreRange: new Set(['/hub/acme/no-range/resolve/main/model.safetensors']),
    status: { '/hub/acme/gated/': 401 },
  });
});
after(async () => { await browser?.close(); await server?.close(); fs.rmSync(tmp, { recursive: true, force: true }); });

async function openByom(page) {
  await page.goto(server.url + '/?gpu=h100-sxm&len=8192');
  await ready(page);
  await page.locator('.vf-byom summary').click();
}

test('a 20 GB shard is read header-only, in well under a second', async () => {
  const page = await newPage(browser);
  await openByom(page);
  const big = path.join(tmp, 'big.safetensors');
  assert.equal(fs.statSync(big).size > 20e9, true);
  const t0 = Date.now();
  await page.getByTestId('file-input').setInputFiles(big);
  await page.getByTestId('file-report').waitFor();
  const ms = Date.now() - t0;
  assert.ok(ms < 3000, `took ${ms} ms`);
  assert.match(await text(page, 'file-report'), /1 tensors, 10,000,000,000 parameters/);
  assert.match(await text(page, 'file-report'), /Quantization: none\./);
  assert.match(await text(page, 'file-report'), /Add its config\.json/);
  assert.deepEqual(page.errors, []);
});

test('dropped shards + index + config.json are sized exactly as the CLI sizes the folder', async () => {
  const page = await newPage(browser);
  await openByom(page);
  const dir = path.join(tmp, 'qwen');
  // A model folder's other JSON files, ahead of config.json in the drop: not read as the
  // config, and no error (a whole Hugging Face folder can be dropped).
  const extra = path.join(tmp, 'extra');
  fs.mkdirSync(extra, { recursive: true });
  fs.writeFileSync(path.join(extra, 'generation_config.json'), JSON.stringify({ bos_token_id: 151643, eos_token_id: 151645 }));
  fs.writeFileSync(path.join(extra, 'tokenizer_config.json'), JSON.stringify({ model_max_length: 131072 }));
  const others = ['generation_config.json', 'tokenizer_config.json'].map((f) => path.join(extra, f));
  await page.getByTestId('file-input').setInputFiles([...others, ...fs.readdirSync(dir).map((f) => path.join(dir, f))]);
  await page.getByTestId('compare-catalog').waitFor();
  assert.equal(await page.getByTestId('file-error').count(), 0);
  const e = cli(['plan', dir, '--gpu', 'h100-sxm', '--max-model-len', '8192']);
  await page.waitForFunction((v) => document.querySelector('[data-testid="weights-per-gpu"]')?.textContent.trim() === v, gib(e.per_gpu.weights_bytes));
  assert.equal(await text(page, 'kv-pool-per-gpu'), gib(e.per_gpu.kv_pool_bytes));
  assert.match(await text(page, 'file-report'), /339 tensors/);
  // The weights come from the headers, and the page says so (issue 16).
  assert.match(await text(page, 'provenance'), /weights: headers/);
  assert.equal(e.weights_source.source, 'headers');
  assert.match(await text(page, 'file-progress'), /2 shard/);
  // "Compare with the catalog's version" switches to the catalog entry.
  await page.getByTestId('compare-catalog').click();
  await page.waitForURL(/model=qwen2\.5-7b/);
  assert.deepEqual(page.errors, []);
});

test('a shard missing from the folder is named; a broken file gets a precise error', async () => {
  const page = await newPage(browser);
  await openByom(page);
  const dir = path.join(tmp, 'qwen');
  await page.getByTestId('file-input').setInputFiles([path.join(dir, 'config.json'), path.join(dir, 'model.safetensors.index.json'), path.join(dir, 'model-00001-of-00002.safetensors')]);
  await page.getByTestId('file-report').waitFor();
  assert.match(await text(page, 'file-report'), /model-00002-of-00002\.safetensors/);
  const bad = path.join(tmp, 'bad.safetensors');
  fs.writeFileSync(bad, Buffer.from([1, 2, 3]));
  await page.getByTestId('file-input').setInputFiles(bad);
  await page.getByTestId('file-error').waitFor();
  assert.match(await text(page, 'file-error'), /bad\.safetensors/);
  // The model in use stays the one before, and "Size it" says its numbers are not the
  // dropped files'.
  await page.getByTestId('stale-note').waitFor();
  assert.match(await text(page, 'stale-note'), /^Not updated: vramfit could not use what is in the model you brought/);
  // A config.json that does not read as a model: the page reads it (once) and names the field.
  const cfgDir = path.join(tmp, 'badcfg');
  fs.mkdirSync(cfgDir, { recursive: true });
  const cfg = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
  cfg.hidden_size = 'wide';
  fs.writeFileSync(path.join(cfgDir, 'config.json'), JSON.stringify(cfg));
  await page.getByTestId('file-input').setInputFiles([path.join(cfgDir, 'config.json'), path.join(dir, 'model-00001-of-00002.safetensors')]);
  await page.waitForFunction(() => /hidden_size/.test(document.querySelector('[data-testid="file-error"]')?.textContent ?? ''));
  // Any .json beside the shards is taken as the config: a message about it names that file.
  fs.writeFileSync(path.join(cfgDir, 'my-model.json'), '{"hidden_size": 4096,');
  await page.getByTestId('file-input').setInputFiles([path.join(cfgDir, 'my-model.json'), path.join(dir, 'model-00001-of-00002.safetensors')]);
  await page.waitForFunction(() => /^my-model\.json is not valid JSON: /.test(document.querySelector('[data-testid="file-error"]')?.textContent ?? ''));
  // A config alone, under another name: the model is called by that file.
  fs.copyFileSync(path.join(dir, 'config.json'), path.join(cfgDir, 'renamed.json'));
  await page.getByTestId('file-input').setInputFiles([path.join(cfgDir, 'renamed.json')]);
  await page.waitForFunction(() => /Your model: renamed\.json/.test(document.querySelector('[data-testid="file-report"]')?.textContent ?? ''));
  assert.equal(await page.getByTestId('stale-note').count(), 0);
  assert.deepEqual(page.errors, []);
});

test('Hugging Face import reads only the headers over HTTP Range', async () => {
  const page = await newPage(browser);
  await openByom(page);
  await page.getByTestId('hf-endpoint').fill(server.url + '/hub');
  await page.getByTestId('hf-repo').fill('acme/qwen-copy');
  const from = server.stats.requests.length;
  await page.getByTestId('hf-import').click();
  await page.getByTestId('file-report').waitFor();
  assert.match(await text(page, 'file-progress'), /imported acme\/qwen-copy/);
  const shardReqs = server.stats.requests.filter((r) => r.url.includes('qwen-copy') && r.url.endsWith('.safetensors'));
  assert.equal(shardReqs.length, 4);
  assert.ok(shardReqs.every((r) => r.status === 206), JSON.stringify(shardReqs));
  // Two 7.6 B-parameter shards are 15 GB; the import moved only headers (~39 KB) and JSON
  // (~26 KB). Counted from the Hub's requests alone: the page's own files (the import
  // worker, and what the service worker caches a moment after the first result) are not
  // the import's.
  const hub = server.stats.requests.slice(from).filter((r) => r.url.startsWith('/hub/'));
  const sent = hub.reduce((n, r) => {
    if (!r.range) return n + (r.gzip ?? r.bytes);
    const [a, b] = r.range.slice('bytes='.length).split('-').map(Number);
    return n + b - a + 1;
  }, 0);
  assert.ok(sent > 60_000 && sent < 100_000, `${sent} bytes: ${JSON.stringify(hub)}`);
  assert.deepEqual(page.errors, []);
});

test('Hugging Face import errors: gated, missing, Range ignored, offline', async () => {
  const page = await newPage(browser);
  await openByom(page);
  const cases = [
    [server.url + '/hub', 'acme/gated', /gated or private/],
    [server.url + '/hub', 'acme/nothing-here', /not found \(404\)/],
    [server.url + '/hub', 'acme/no-range', /ignored the Range request/],
    ['http://127.0.0.1:9', 'acme/qwen-copy', /network error/],
    [server.url + '/hub', 'not a repo', /not a repo id/],
  ];
  for (const [ep, repo, re] of cases) {
    await page.getByTestId('hf-endpoint').fill(ep);
    await page.getByTestId('hf-repo').fill(repo);
    await page.getByTestId('hf-import').click();
    await page.waitForFunction((src) => new RegExp(src).test(document.querySelector('[data-testid="file-error"]')?.textContent || ''), re.source, { timeout: 10000 });
  }
  // The aborted no-range download stopped early: far less than the 50 MB file was sent.
  const nr = server.stats.requests.filter((r) => r.url.includes('no-range') && r.url.endsWith('.safetensors'));
  assert.equal(nr[0].status, 200);
  // Chromium logs failed fetches (401/404, refused connection) to the console; those are the
  // expected network errors of this test, not page errors.
  assert.deepEqual(page.errors.filter((e) => !/Failed to load resource|net::ERR_/.test(e)), []);
});
