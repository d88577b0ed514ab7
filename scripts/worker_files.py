#!/usr/bin/env python3
"""Names the import worker's files by their content and tells the page where they are.

Trunk builds the worker (`crates/vramfit-worker`, `data-type="worker"` in index.html) without content
hashes, because a worker's URL is chosen at run time. An unhashed file would let the service
worker's cache-first rule serve an old worker to a new page, so this post-build step
(scripts/post_build.py):
- renames `vramfit-worker.js` and `vramfit-worker_bg.wasm` to `vramfit-worker-<hash>…`,
  the hash taken over both and the loader;
- writes the loader `vramfit-worker-<hash>_loader.js` (a classic worker script that holds
  the page's first messages until the wasm has started);
- adds `<meta name="vramfit-worker" content="<loader>" data-js=… data-wasm=…>` to
  index.html: the page reads the loader's name from it (src/worker_client.rs), and the
  service worker pre-caches every file it names, so the worker works offline too.
Writes into $TRUNK_STAGING_DIR, or into the directory given as the first argument.
"""
import hashlib
import os
import pathlib
import sys

out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else os.environ["TRUNK_STAGING_DIR"])
js, wasm = out / "vramfit-worker.js", out / "vramfit-worker_bg.wasm"
for f in (js, wasm):
    if not f.is_file():
        sys.exit(f"worker_files.py: {f} is missing; is the worker link in index.html?")
# Messages that arrive while the wasm compiles are held, then handed to the handler that
# `main` installs; a failed start is rethrown so the page's `onerror` hears it.
LOADER = (
    "const held=[];self.onmessage=(e)=>held.push(e);"
    'importScripts("./{base}.js");'
    'wasm_bindgen({{module_or_path:"./{base}_bg.wasm"}})'
    ".then(()=>{{for(const e of held.splice(0))self.onmessage(e);}})"
    ".catch((e)=>setTimeout(()=>{{throw e;}}));\n"
)
digest = hashlib.sha256(js.read_bytes() + wasm.read_bytes() + LOADER.encode()).hexdigest()[:16]
base = f"vramfit-worker-{digest}"
js.rename(out / f"{base}.js")
wasm.rename(out / f"{base}_bg.wasm")
(out / f"{base}_loader.js").write_text(LOADER.format(base=base), encoding="utf-8")
index = out / "index.html"
html = index.read_text(encoding="utf-8")
meta = (
    f'<meta name="vramfit-worker" content="{base}_loader.js" '
    f'data-js="{base}.js" data-wasm="{base}_bg.wasm">'
)
if 'name="vramfit-worker"' in html:
    sys.exit("worker_files.py: index.html already names a worker")
if "</head>" not in html:
    sys.exit("worker_files.py: index.html has no </head>")
index.write_text(html.replace("</head>", meta + "</head>", 1), encoding="utf-8")
