// Issue 15: the OOM explainer uses what the page knows (the chosen model and GPU), and the
// pasted short messages of the seed get numbers, the same as the CLI's.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import fs from 'node:fs';
import os from 'node:os';
import { launch, startServer, newPage, cli } from './helpers.mjs';

let browser, server;
before(async () => { browser = await launch(); server = await startServer(); });
after(async () => { await browser?.close(); await server?.close(); });

test('a short OOM message with the chosen 70B says the weights alone do not fit, with planned fixes', async () => {
  const page = await newPage(browser);
  await page.goto(`${server.url}/?view=oom&model=llama-3.1-70b&gpu=a100-80gb-sxm`);
  await page.getByTestId('oom-input').waitFor();
  const msg = 'RuntimeError: CUDA out of memory. Tried to allocate 4.50 GiB (GPU 0; 79.15 GiB total capacity)';
  await page.getByTestId('oom-input').fill(msg);
  await page.getByTestId('oom-finding').first().waitFor();
  const shown = await page.locator('[data-testid="oom-finding"] h3').allTextContents();
  assert.equal(shown[0], 'Llama 3.1 70B needs 131.45 GiB in bf16: the weights alone do not fit in 79.15 GiB');
  const findings = await page.getByTestId('oom-findings').textContent();
  assert.match(findings, /--tensor-parallel-size 2/);
  assert.match(findings, /hugging-quants\/Meta-Llama-3\.1-70B-Instruct-AWQ-INT4/);
  // The CLI with the same model and GPU says the same first thing.
  const file = path.join(os.tmpdir(), `vramfit-oom-short-${process.pid}.txt`);
  fs.writeFileSync(file, msg);
  const e = cli(['oom', file, '--model', 'llama-3.1-70b', '--gpu', 'a100-80gb-sxm']);
  assert.equal(e.findings[0].headline, shown[0]);
  assert.equal(e.weights_fit, false);
  assert.deepEqual(page.errors, []);
});
