// Issue 19: the release page's wasm runs on a 160 KiB stack instead of rustc's 1 MiB
// (scripts/page_wasm.py, STACK_BYTES). This test is the guard for that choice: it takes the
// page through its deepest paths (every view, the OOM view's model check, which runs on the
// page while the message reader runs in the worker, the command checker with many flags, a
// model of the catalog's largest kind, a brought config.json nested 127 deep, serde_json's
// limit being 128) and checks that the stack never went past half its size.
// The stack is the first region of the memory (`--stack-first`) and grows down from its top
// (the initial `__stack_pointer`, read from the wasm file). Memory starts zeroed, so after
// the load the lowest non-zero byte below the top is as deep as the stack has been. Then,
// while no wasm runs (between JS calls the stack is empty), the whole region is painted with
// a pattern, and each later step reads the lowest byte that is no longer the pattern (a
// frame that writes zeros counts too).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { launch, startServer, newPage, ready, pageWasm, DIST } from './helpers.mjs';

let browser, server;
before(async () => { browser = await launch(); server = await startServer(); });
after(async () => { await browser?.close(); await server?.close(); });

/** The initial value of a wasm module's first global (the linker's `__stack_pointer`). */
function stackTop(bytes) {
  let i = 8;
  const leb = (signed) => {
    let r = 0, shift = 0, b;
    do { b = bytes[i++]; r |= (b & 0x7f) << shift; shift += 7; } while (b & 0x80);
    return signed && shift < 32 && (b & 0x40) ? r | (-1 << shift) : r;
  };
  while (i < bytes.length) {
    const id = bytes[i++];
    const size = leb(false);
    const end = i + size;
    if (id === 6) { // global section: count, then (valtype, mut, init expr)
      leb(false);
      i += 2;
      assert.equal(bytes[i++], 0x41, 'the first global starts with i32.const');
      return leb(true);
    }
    i = end;
  }
  throw new Error('no global section');
}

test('the page\'s deepest stack, over every view and its deepest inputs, stays within half of its 160 KiB', async () => {
  // The main chunk is in the page, a character per byte (scripts/main_chunk.py).
  const top = stackTop(pageWasm(fs.readFileSync(path.join(DIST, 'index.html'), 'utf8')));
  assert.equal(top, 160 * 1024, 'the stack is 160 KiB and first in memory');

  const page = await newPage(browser, { serviceWorkers: 'block' });
  // The page's memory, as it is instantiated (the first module that exports one).
  await page.addInitScript(() => {
    const grab = (r) => { const m = (r?.instance ?? r)?.exports?.memory; if (m && !window.__mem) window.__mem = m; return r; };
    const streaming = WebAssembly.instantiateStreaming;
    WebAssembly.instantiateStreaming = (...a) => streaming(...a).then(grab);
    const plain = WebAssembly.instantiate;
    WebAssembly.instantiate = (...a) => plain(...a).then(grab);
  });
  const PATTERN = 0xa5;
  const deepest = (fill = PATTERN) => page.evaluate(([top, fill]) => {
    const u = new Uint8Array(window.__mem.buffer, 0, top);
    let k = 0;
    while (k < top && u[k] === fill) k++;
    return top - k;
  }, [top, fill]);
  const paint = () => page.evaluate(([top, fill]) => new Uint8Array(window.__mem.buffer, 0, top).fill(fill), [top, PATTERN]);
  const seen = {};
  await page.goto(server.url + '/?model=qwen2.5-7b&gpu=h100-sxm');
  await ready(page);
  seen.load = await deepest(0);
  await paint();
  for (const v of ['quant', 'budget', 'scaling', 'catalog', 'accuracy', 'oom']) {
    await page.getByTestId(`tab-${v}`).click();
    await page.locator('[data-lazy="view"]').waitFor();
  }
  await page.getByTestId('oom-input').fill('torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 23.65 GiB of which 3.06 MiB is free. Process 1234 has 23.64 GiB memory in use.');
  await page.getByTestId('oom-finding').first().waitFor();
  seen.views = await deepest();
  await page.getByTestId('tab-size').click();
  await page.getByTestId('formats').waitFor();
  await page.getByTestId('model').selectOption('deepseek-v3');
  await page.getByTestId('command-input').fill('vllm serve meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size 4 --quantization awq --max-model-len 9999 --enable-lora --max-loras 4 --speculative-config \'{"method":"ngram","num_speculative_tokens":5}\' --limit-mm-per-prompt \'{"image":2}\'');
  await page.getByTestId('command-checks').waitFor();
  seen.command = await deepest();
  let nested = '1';
  for (let i = 0; i < 126; i++) nested = `{"a":${nested}}`;
  const config = `{"architectures":["LlamaForCausalLM"],"hidden_size":4096,"num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":8,"intermediate_size":14336,"vocab_size":128256,"max_position_embeddings":131072,"x":${nested}}`;
  await page.getByTestId('file-input').setInputFiles([{ name: 'config.json', mimeType: 'application/json', buffer: Buffer.from(config) }]);
  await page.waitForFunction(() => /Your model: config\.json/.test(document.body.textContent));
  seen.config = await deepest();
  console.log(`stack bytes used (of ${top}): ${JSON.stringify(seen)}`);
  assert.ok(Math.max(...Object.values(seen)) <= top / 2, `stack bytes used: ${JSON.stringify(seen)} of ${top}`);
  assert.ok(seen.command > 0, 'the measure reads the stack');
  assert.deepEqual(page.errors, []);
  await page.context().close();
});
