// Static server for the browser tests: serves a folder on 127.0.0.1 (random port), with
// HTTP Range support (206 / 416) and correct MIME types. `routes` can add extra folders
// (for the Hugging Face import tests), a switch to ignore Range, and `delay` (ms by path
// prefix) to play a slow network. Cache headers as a static host sends them: a file named by
// its content hash (`name-<16 hex>.ext`) is `immutable`, anything else (index.html, sw.js,
// manifest, icons) `no-cache` with an ETag, answered 304 when it still matches; `cache:
// 'none'` sends `no-cache` and no validator for everything. `setRoot` swaps the folder (a
// new deploy); `stats.wire()` is every byte written to the sockets, headers included.
// `gzip: true` sends whole-file answers gzip -9 encoded when the client accepts it, as a
// static host does (the benchmark's throttled and byte-counting runs use it).
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const MIME = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript',
  '.wasm': 'application/wasm', '.css': 'text/css', '.json': 'application/json',
  '.webmanifest': 'application/manifest+json', '.svg': 'image/svg+xml', '.png': 'image/png',
};

const HASHED = /-[0-9a-f]{12,16}(?=[._])/;

export function serve(root, { mounts = {}, ignoreRange = new Set(), cors = true, status = {}, delay = {}, cache = 'http', gzip = false } = {}) {
  const gzCache = new Map();
  const sockets = new Set();
  const stats = { requests: [], bytesSent: 0, wire: () => [...sockets].reduce((n, s) => n + s.bytesWritten, 0) };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    const wait = Object.entries(delay).find(([prefix]) => url.pathname.startsWith(prefix));
    if (wait && !req.delayed) { req.delayed = true; setTimeout(() => server.emit('request', req, res), wait[1]); return; }
    let file = null;
    let base = root;
    let rel = decodeURIComponent(url.pathname);
    for (const [prefix, dir] of Object.entries(mounts)) {
      if (rel.startsWith(prefix)) { base = dir; rel = rel.slice(prefix.length); break; }
    }
    file = path.join(base, path.normalize('/' + rel));
    if (!file.startsWith(base)) { res.writeHead(403).end(); return; }
    try { if (fs.statSync(file).isDirectory()) file = path.join(file, 'index.html'); } catch { /* 404 below */ }
    if (cors) {
      res.setHeader('Access-Control-Allow-Origin', '*');
      res.setHeader('Access-Control-Allow-Headers', 'Range, Authorization');
      res.setHeader('Access-Control-Expose-Headers', 'Content-Range, Content-Length, Accept-Ranges');
    }
    if (req.method === 'OPTIONS') { res.writeHead(204).end(); return; }
    for (const [prefix, code] of Object.entries(status)) {
      if (url.pathname.startsWith(prefix)) { res.writeHead(code).end(); stats.requests.push({ url: req.url, status: code }); return; }
    }
    let st;
    try { st = fs.statSync(file); } catch { res.writeHead(404).end('not found'); stats.requests.push({ url: req.url, status: 404 }); return; }
    const type = MIME[path.extname(file)] || 'application/octet-stream';
    const range = req.headers.range;
    if (range && !ignoreRange.has(url.pathname)) {
      const m = /^bytes=(\d+)-(\d*)$/.exec(range);
      const start = m ? Number(m[1]) : NaN;
      const end = m && m[2] ? Math.min(Number(m[2]), st.size - 1) : st.size - 1;
      if (!m || start >= st.size || start > end) {
        res.writeHead(416, { 'Content-Range': `bytes */${st.size}` }).end();
        stats.requests.push({ url: req.url, status: 416 });
        return;
      }
      res.writeHead(206, { 'Content-Type': type, 'Content-Length': end - start + 1, 'Content-Range': `bytes ${start}-${end}/${st.size}`, 'Accept-Ranges': 'bytes' });
      stats.bytesSent += end - start + 1;
      stats.requests.push({ url: req.url, status: 206, range });
      fs.createReadStream(file, { start, end }).pipe(res);
      return;
    }
    const headers = { 'Content-Type': type, 'Content-Length': st.size, 'Cache-Control': 'no-cache' };
    if (cache === 'http') {
      if (HASHED.test(path.basename(file))) headers['Cache-Control'] = 'public, max-age=31536000, immutable';
      headers.ETag = `"${st.size.toString(16)}-${Math.floor(st.mtimeMs).toString(16)}"`;
      if (req.headers['if-none-match'] === headers.ETag) {
        res.writeHead(304, { ETag: headers.ETag, 'Cache-Control': headers['Cache-Control'] }).end();
        stats.requests.push({ url: req.url, status: 304 });
        return;
      }
    }
    if (gzip && /\bgzip\b/.test(req.headers['accept-encoding'] || '')) {
      const key = `${file}:${st.mtimeMs}`;
      if (!gzCache.has(key)) gzCache.set(key, zlib.gzipSync(fs.readFileSync(file), { level: 9 }));
      const body = gzCache.get(key);
      res.writeHead(200, { ...headers, 'Content-Encoding': 'gzip', 'Content-Length': body.length, Vary: 'Accept-Encoding' });
      stats.requests.push({ url: req.url, status: 200, bytes: st.size, gzip: body.length });
      stats.bytesSent += body.length;
      res.end(body);
      return;
    }
    res.writeHead(200, headers);
    stats.requests.push({ url: req.url, status: 200, bytes: st.size });
    const s = fs.createReadStream(file);
    s.on('data', (c) => { stats.bytesSent += c.length; });
    s.on('error', () => res.destroy());
    res.on('close', () => s.destroy());
    s.pipe(res);
  });
  // Neither the server nor its connections keep node running: a test that fails before it
  // closes its server does not leave its test file hanging once the browser is gone.
  server.on('connection', (s) => { sockets.add(s); s.unref(); });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      server.unref();
      const { port } = server.address();
      resolve({ url: `http://127.0.0.1:${port}`, port, stats, setRoot: (dir) => { root = dir; }, close: () => new Promise((r) => { server.closeAllConnections?.(); server.close(() => r()); }) });
    });
  });
}
