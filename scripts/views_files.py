#!/usr/bin/env python3
"""Names the views module's files by their content and tells the page where they are.

Trunk builds the views module (the `vramfit-views` bin of the web crate, `data-type="worker"`
in index.html: wasm-bindgen's `no-modules` output, which a classic `<script>` can load) without
content hashes, because the page chooses at run time when to load it (src/lazy.rs). An
unhashed file would let the service worker's cache-first rule serve an old module to a new
page, so this post-build step (scripts/post_build.py):
- appends the start call to `vramfit-views.js` (it runs the module's `main`,
  src/views.rs) and renames it and `vramfit-views_bg.wasm` to `vramfit-views-<hash>…`, the
  hash taken over both;
- adds `<meta name="vramfit-views" content="<js>" data-wasm=…>` to index.html: the page
  reads the script's name from it, and the service worker caches the files it names after
  the first result (public/sw.js, scripts/sw_files.py).
Writes into $TRUNK_STAGING_DIR, or into the directory given as the first argument.
"""
import hashlib
import os
import pathlib
import sys

out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else os.environ["TRUNK_STAGING_DIR"])
js, wasm = out / "vramfit-views.js", out / "vramfit-views_bg.wasm"
for f in (js, wasm):
    if not f.is_file():
        sys.exit(f"views_files.py: {f} is missing; is the views link in index.html?")
# A failed start is rethrown so the console shows it; the page's <script> error event covers
# a failed download.
START = (
    '\nwasm_bindgen({{module_or_path:"./{base}_bg.wasm"}})'
    ".catch((e)=>setTimeout(()=>{{throw e;}}));\n"
)
body = js.read_bytes()
digest = hashlib.sha256(body + wasm.read_bytes() + START.encode()).hexdigest()[:16]
base = f"vramfit-views-{digest}"
(out / f"{base}.js").write_bytes(body + START.format(base=base).encode())
js.unlink()
wasm.rename(out / f"{base}_bg.wasm")
index = out / "index.html"
html = index.read_text(encoding="utf-8")
meta = f'<meta name="vramfit-views" content="{base}.js" data-wasm="{base}_bg.wasm">'
if 'name="vramfit-views"' in html:
    sys.exit("views_files.py: index.html already names a views module")
if "</head>" not in html:
    sys.exit("views_files.py: index.html has no </head>")
index.write_text(html.replace("</head>", meta + "</head>", 1), encoding="utf-8")
