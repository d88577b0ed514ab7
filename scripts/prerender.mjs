// The home page's first result, written into index.html at build time (issue 19): a step of
// scripts/post_build.py, after the page's start and the catalog are in index.html and before
// the service worker's file list (which hashes index.html).
//
// It loads the built page at `/` (no query: the default scenario, `Inputs::default()`) in
// headless Chromium, exactly as a visitor would, and takes what the page's own mount attached
// to the body at the moment the verdict arrived: the first paint's DOM, before anything built
// after it (src/components/later.rs). So the snapshot is the wasm's own output from this
// build's catalog, not a second renderer; prerendering by a browser is what react-snap and
// prerender-spa-plugin do. Form controls keep what they showed (their `value`, `checked` and
// `selected` properties written as attributes) and are `disabled`, inside an `inert` wrapper
// (`.vf-first-page`): nothing can be typed into a control that the mount replaces. Beside it,
// outside the inert part, a `role="status"` note says the calculator is loading (style/main.css
// shows it only after 0.6 s, so a fast start never flashes it). Both are in `#vf-first`, where a
// shared link's page puts its own first result instead (src/first.rs).
//
// index.html holds it in `<template id="vf-first-html">`, which the inline script after it
// puts into the body whole only when the address has no query: a shared link (any query) is
// another scenario, and gets the loading note alone until its own result (src/first.rs). The
// calculator's mount (`vramfit_web::mount`) removes `#vf-first` in the task that mounts it, so no frame
// shows both, and the mount's first paint is the same DOM, now live; a page whose wasm does
// not start removes it too and says why (scripts/page_wasm.py's `vfStartFailed`).
//
// In `trunk serve` builds, index.html carries Trunk's autoreload script, whose WebSocket
// address is filled in only when Trunk serves the page; the capture loads the page without it.
//
// Usage: node scripts/prerender.mjs DIR (a built folder; rewrites DIR/index.html in place,
// idempotently). Fails, naming why, when the page shows no verdict within 30 s or panics.
import fs from 'node:fs';
import path from 'node:path';
import { launch, startServer, newPage } from '../tests/e2e/helpers.mjs';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node scripts/prerender.mjs DIR');
  process.exit(2);
}
const index = path.join(dir, 'index.html');
const TEMPLATE = /(<template id="vf-first-html">)[\s\S]*?(<\/template>)/;
const html = fs.readFileSync(index, 'utf8');
if (!TEMPLATE.test(html)) {
  console.error('prerender.mjs: index.html has no <template id="vf-first-html">');
  process.exit(1);
}

const browser = await launch();
const server = await startServer({}, dir);
let snapshot;
try {
  const page = await newPage(browser, { serviceWorkers: 'block' });
  await page.route(server.url + '/', async (route) => {
    const res = await route.fetch();
    const body = (await res.text()).replace(/<script[^>]*>(?:(?!<\/script>)[\s\S])*\{\{__TRUNK_ADDRESS__\}\}[\s\S]*?<\/script>/g, '');
    await route.fulfill({ response: res, body });
  });
  await page.addInitScript(() => {
    // The same DOM with what its form controls show as attributes, every control disabled.
    const freeze = (node) => {
      const copy = node.cloneNode(true);
      if (node.nodeType !== Node.ELEMENT_NODE) return copy;
      // Leptos's markers (empty comments) place its views in the live page; the snapshot is
      // never hydrated, so they are only bytes here (~1.8 KB of the page's text).
      const comments = document.createTreeWalker(copy, NodeFilter.SHOW_COMMENT);
      const dead = [];
      while (comments.nextNode()) dead.push(comments.currentNode);
      for (const c of dead) c.remove();
      const from = node.querySelectorAll('input, select, textarea, button');
      const to = copy.querySelectorAll('input, select, textarea, button');
      from.forEach((c, i) => {
        const d = to[i];
        if (c.tagName === 'INPUT' && (c.type === 'checkbox' || c.type === 'radio')) d.toggleAttribute('checked', c.checked);
        else if (c.tagName === 'INPUT') d.setAttribute('value', c.value);
        else if (c.tagName === 'TEXTAREA') d.textContent = c.value;
        else if (c.tagName === 'SELECT') [...c.options].forEach((o, j) => d.options[j].toggleAttribute('selected', o.selected));
        d.setAttribute('disabled', '');
      });
      return copy;
    };
    new MutationObserver((_, o) => {
      // The mount's verdict (not one of an earlier snapshot, when DIR was prerendered before).
      if (![...document.querySelectorAll('[data-testid="verdict"]')].some((v) => !v.closest('#vf-first'))) return;
      o.disconnect();
      const first = document.createElement('div');
      first.id = 'vf-first';
      const status = document.createElement('p');
      status.className = 'vf-first-status';
      status.setAttribute('role', 'status');
      status.textContent = 'Loading the calculator…';
      const wrap = document.createElement('div');
      wrap.className = 'vf-first-page';
      wrap.setAttribute('inert', '');
      for (const n of document.body.childNodes) {
        if (n.nodeType === Node.ELEMENT_NODE && ['NOSCRIPT', 'SCRIPT', 'TEMPLATE'].includes(n.tagName)) continue;
        if (n.nodeType === Node.ELEMENT_NODE && n.id === 'vf-first') continue;
        if (n.nodeType === Node.COMMENT_NODE) continue;
        wrap.append(freeze(n));
      }
      first.append(status, wrap);
      window.__vfFirst = first.outerHTML;
    }).observe(document, { childList: true, subtree: true });
  });
  await page.goto(server.url + '/');
  await page.waitForFunction(() => window.__vfFirst, null, { timeout: 30000 }).catch(() => {
    throw new Error(`the page at / showed no verdict within 30 s${page.errors.length ? `: ${page.errors.join('; ')}` : ''}`);
  });
  snapshot = await page.evaluate(() => window.__vfFirst);
  if (page.errors.length) throw new Error(`the page logged errors: ${page.errors.join('; ')}`);
  if (/<template|<script/i.test(snapshot)) throw new Error('the first result holds a <template> or <script>');
} catch (e) {
  console.error(`prerender.mjs: ${e.message}`);
  process.exitCode = 1;
} finally {
  await browser.close();
  await server.close();
}
if (snapshot) {
  fs.writeFileSync(index, html.replace(TEMPLATE, (_, open, close) => open + snapshot + close));
  console.log(`prerender.mjs: the home page's first result, ${snapshot.length} characters, in ${index}`);
}
