// vramfit service worker: makes the app work offline after one visit.
// On install it reads index.html and pre-caches every asset it names (Trunk emits them
// with content hashes, so a new build means new names and a new cache), including the
// import worker's files (named in a <meta>, fetched by the page only on first use), plus the
// catalog's sources (fetched by the Catalog view, not by the first load). Navigations are
// network-first with the cached page as fallback; assets are cache-first.
const CACHE = 'vramfit-v1';
const ASSET = /["'](\/?[^"'\s]+\.(?:js|wasm|css|webmanifest|svg|png))["']/g;

self.addEventListener('install', (event) => {
  event.waitUntil((async () => {
    const cache = await caches.open(CACHE);
    const res = await fetch('./', { cache: 'no-store' });
    const html = await res.clone().text();
    await cache.put('./', res);
    const urls = new Set(['manifest.webmanifest', 'icon.svg', 'icon-192.png', 'icon-512.png', 'catalog-sources.json']);
    for (const m of html.matchAll(ASSET)) urls.add(m[1]);
    await Promise.all([...urls].map(async (u) => {
      try {
        const r = await fetch(u, { cache: 'no-store' });
        if (r.ok) await cache.put(u, r);
      } catch (_) { /* offline during install: skip */ }
    }));
    await self.skipWaiting();
  })());
});

self.addEventListener('activate', (event) => {
  event.waitUntil((async () => {
    for (const k of await caches.keys()) if (k !== CACHE) await caches.delete(k);
    await self.clients.claim();
  })());
});

self.addEventListener('fetch', (event) => {
  const req = event.request;
  if (req.method !== 'GET' || new URL(req.url).origin !== self.location.origin) return;
  if (req.mode === 'navigate') {
    event.respondWith((async () => {
      try {
        const fresh = await fetch(req);
        const cache = await caches.open(CACHE);
        cache.put('./', fresh.clone());
        return fresh;
      } catch (_) {
        return (await caches.match('./')) || Response.error();
      }
    })());
    return;
  }
  event.respondWith((async () => {
    const hit = await caches.match(req, { ignoreSearch: true });
    if (hit) return hit;
    const res = await fetch(req);
    if (res.ok) (await caches.open(CACHE)).put(req, res.clone());
    return res;
  })());
});
