// Issue 18: the deployment features in the page — each control is a row of the input table,
// rides in the link, and the features table shows the CLI's bytes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, startServer, newPage, ready, cli, gib } from './helpers.mjs';

let browser, server;
before(async () => { browser = await launch(); server = await startServer(); });
after(async () => { await browser?.close(); await server?.close(); });

test('multimodal: the note says what the reservation costs, images 0 frees it', async () => {
  const page = await newPage(browser);
  await page.goto(`${server.url}/?model=gemma-3-27b&gpu=h100-sxm&len=8192`);
  await ready(page);
  await page.getByTestId('features').locator('summary').click();
  const e = cli(['plan', 'gemma-3-27b', '--gpu', 'h100-sxm', '--max-model-len', '8192']);
  assert.match(await page.getByTestId('mm-note').textContent(), /multimodal profiling reservation takes/);
  assert.equal(
    (await page.getByTestId('feature-mm_reserved_bytes').locator('td').first().textContent()).trim(),
    gib(e.mm_reserved_bytes),
  );
  await page.getByTestId('mm-images').fill('0');
  await page.waitForURL(/img=0/);
  await page.getByTestId('feature-mm_reserved_bytes').waitFor({ state: 'detached' });
  assert.equal((await page.getByTestId('mm-note').textContent()).trim(), '');
  assert.deepEqual(page.errors, []);
});

test('LoRA, speculative decoding and eager mode ride in the link and match the CLI', async () => {
  const page = await newPage(browser);
  await page.goto(`${server.url}/?model=llama-3.1-8b&gpu=h100-sxm&len=8192`);
  await ready(page);
  await page.getByTestId('features').locator('summary').click();
  await page.getByTestId('lora').check();
  await page.waitForURL(/lora=1/);
  await page.getByTestId('max-loras').fill('4');
  await page.waitForURL(/loras=4/);
  await page.getByTestId('spec-method').selectOption('eagle3');
  await page.waitForURL(/spec=eagle3/);
  await page.getByTestId('enforce-eager').check();
  await page.waitForURL(/eager=1/);
  const e = cli(['plan', 'llama-3.1-8b', '--gpu', 'h100-sxm', '--max-model-len', '8192', '--enable-lora', '--max-loras', '4',
    '--speculative-method', 'eagle3', '--enforce-eager']);
  const cell = async (id) => (await page.getByTestId(id).locator('td').first().textContent()).trim();
  assert.equal(await cell('feature-lora_bytes'), gib(e.lora_bytes));
  assert.equal(await cell('feature-draft_weights_bytes'), gib(e.draft_weights_bytes));
  const cmd = await page.getByTestId('command-vllm').textContent();
  for (const flag of ['--enable-lora', '--max-loras 4', '--speculative-config', '--enforce-eager']) {
    assert.ok(cmd.includes(flag), `${flag} in ${cmd}`);
  }
  // The link reproduces it.
  const again = await newPage(browser);
  await again.goto(page.url());
  await ready(again);
  assert.equal(
    (await again.getByTestId('feature-lora_bytes').locator('td').first().textContent()).trim(),
    gib(e.lora_bytes),
  );
  // A bad value is refused with the table's message, and what was typed stays.
  await page.getByTestId('max-loras').fill('0');
  assert.equal(await page.getByTestId('max-loras').inputValue(), '0');
  assert.deepEqual(page.errors, []);
  assert.deepEqual(again.errors, []);
});
