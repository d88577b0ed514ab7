// vramfit service worker: the app offline after one visit, each file downloaded once.
// scripts/sw_files.py (build time) rewrites the BUILD line: the build's id (a hash over all
// its files) and its files, HASHED (named by their content) and PLAIN (manifest, icons), and
// LATER: those the first load does not fetch (the views chunk, the import worker, the
// catalog's sources, the install icons). Each build has its own cache, vramfit-<BUILD>;
// activating deletes the app's other caches.
// Install caches what the first load fetched, without downloading it again: a hashed file
// comes from an older build's cache or from the HTTP cache (`force-cache`: a name that
// carries its content's hash is the same bytes at any age); index.html and the plain files
// are revalidated (`no-cache`). A page that does not name this build's files (a deploy under
// way) or a failed fetch fails the install: the old worker stays.
// On a first visit LATER waits until the page asks (`warm`, sent after the first result and a
// quiet moment, src/state.rs), so that it does not compete with the first load on a slow
// link; the answer `warmed` tells the page that every view works offline. A file of LATER the
// page needs before that is cached as it is fetched. An update caches LATER at install.
// Fetch: this build's files cache-first; navigations to the app network-first with the
// page cached at install as the fallback; anything else goes to the network untouched.
const BUILD = "dev", HASHED = [], PLAIN = [], LATER = [];
const CACHE = 'vramfit-' + BUILD;
const abs = (u) => new URL(u, self.location).href;
const OWN = new Set([...HASHED, ...PLAIN].map(abs));
const PAGES = new Set([abs('./'), abs('./index.html')]);
const now = (list) => list.filter((u) => !LATER.includes(u));
const fresh = (u) => fetch(u, { cache: HASHED.includes(u) ? 'force-cache' : 'no-cache' });

const put = async (cache, url, res) => {
  if (!res?.ok) throw new Error(`${url}: ${res?.status}`);
  await cache.put(url, res);
};

// This build's page, whole: index.html names every content-hashed file, carries BUILD
// (scripts/sw_files.py writes `<meta name="vramfit-build">`) and ends (the main wasm chunk is
// last in its body, scripts/page_wasm.py: a page cut short in it would not start).
const ours = (html) => HASHED.every((u) => html.includes(u)) && html.includes(`content="${BUILD}"`) && html.trimEnd().endsWith('</html>');
// The page to cache as './', with its text. Every address of the app is the same index.html
// (the scenario is in the query), and the page that registers the worker has just been
// fetched: a first visit through a shared link (`/?model=…`) takes that response from the
// HTTP cache (`only-if-cached`: a miss costs no download) if it is this build's. Otherwise
// './', revalidated.
const thisPage = async () => {
  for (const c of await self.clients.matchAll({ type: 'window', includeUncontrolled: true })) {
    if (!PAGES.has(c.url.split(/[?#]/)[0])) continue;
    const res = await fetch(c.url.split('#')[0], { cache: 'only-if-cached', mode: 'same-origin' }).catch(() => null);
    const html = res?.ok ? await res.clone().text() : '';
    if (html && ours(html)) return [res, html];
  }
  const res = await fetch('./', { cache: 'no-cache' });
  return [res, await res.clone().text()];
};

self.addEventListener('install', (event) => {
  event.waitUntil((async () => {
    // An update (an older build's cache exists) takes LATER at once: its visitor has been
    // offline-ready, and most of LATER comes from that older cache.
    const update = (await caches.keys()).some((k) => k.startsWith('vramfit-') && k !== CACHE);
    const first = (list) => (update ? list : now(list));
    const cache = await caches.open(CACHE);
    const [page, html] = await thisPage();
    if (!ours(html)) throw new Error(`index.html is not build ${BUILD}'s`);
    await Promise.all([
      put(cache, './', page),
      ...first(HASHED).map(async (u) => put(cache, u, (await caches.match(u)) || (await fresh(u)))),
      ...first(PLAIN).map(async (u) => put(cache, u, await fresh(u))),
    ]);
    await self.skipWaiting();
  })());
});

self.addEventListener('activate', (event) => {
  event.waitUntil((async () => {
    for (const k of await caches.keys()) if (k.startsWith('vramfit-') && k !== CACHE) await caches.delete(k);
    await self.clients.claim();
  })());
});

self.addEventListener('message', (event) => {
  if (event.data !== 'warm') return;
  event.waitUntil((async () => {
    const cache = await caches.open(CACHE);
    await Promise.all(LATER.map(async (u) => (await cache.match(u)) || put(cache, u, (await caches.match(u)) || (await fresh(u)))));
    event.source?.postMessage('warmed');
  })());
});

self.addEventListener('fetch', (event) => {
  const req = event.request;
  const url = req.url.split('?')[0];
  if (req.method !== 'GET') return;
  if (OWN.has(url)) {
    event.respondWith((async () => {
      const cache = await caches.open(CACHE);
      const hit = await cache.match(url);
      if (hit) return hit;
      const res = await fetch(req);
      if (res.status === 200) cache.put(url, res.clone());
      return res;
    })());
  } else if (req.mode === 'navigate' && PAGES.has(url)) {
    event.respondWith(fetch(req).catch(async () => (await (await caches.open(CACHE)).match('./')) || Response.error()));
  }
});
