#!/usr/bin/env python3
"""Names the import worker's files by their content and tells the page where they are.

Trunk builds the import worker (`crates/vramfit-worker`, src/worker_client.rs) without a
content hash, because the page chooses at run time when to start it (`data-type="worker"`
in index.html, wasm-bindgen's `no-modules` output). An unhashed file would let the service
worker's cache-first rule serve an old module to a new page, so this post-build step
(scripts/post_build.py):
- minifies `<stem>.js` in release builds (terser, as scripts/page_wasm.py does the page's glue);
- renames `<stem>.js` and `<stem>_bg.wasm` to `<stem>-<hash>…`, the hash taken over both
  and the start code;
- writes the start code, the worker's loader `<stem>-<hash>_loader.js` (a classic worker
  script that holds the page's first messages until the wasm has started);
- adds `<meta name="<stem>" content="<the loader>" data-js=… data-wasm=…>` to index.html:
  the page reads the loader's name from it, and the service worker caches the files it
  names after the first result (public/sw.js, scripts/sw_files.py).
The page's own chunks are named by scripts/page_wasm.py.
Writes into $TRUNK_STAGING_DIR, or into the directory given as the first argument.
"""
import hashlib
import os
import pathlib
import sys

import main_chunk
from page_wasm import minify

# A failed start is rethrown so the console (the page's `onerror`, for the worker) hears it.
START = 'wasm_bindgen({{module_or_path:"./{base}_bg.wasm"}})'
RETHROW = ".catch((e)=>setTimeout(()=>{{throw e;}}));\n"
# stem -> (what it is, for errors; the loader's code)
MODULES = {
    # Messages that arrive while the wasm compiles are held, then handed to the handler
    # that `main` installs.
    "vramfit-worker": (
        "a worker",
        "const held=[];self.onmessage=(e)=>held.push(e);"
        'importScripts("./{base}.js");' + START
        + ".then(()=>{{for(const e of held.splice(0))self.onmessage(e);}})" + RETHROW,
    ),
}


def name_by_content(out, stem, what, start):
    js, wasm = out / f"{stem}.js", out / f"{stem}_bg.wasm"
    for f in (js, wasm):
        if not f.is_file():
            sys.exit(f"module_files.py: {f} is missing; is the {stem} link in index.html?")
    if os.environ.get("TRUNK_PROFILE", "release") == "release":
        minify(js, module=False)  # wasm-bindgen's `no-modules` glue, a classic script
    body = js.read_bytes()
    digest = hashlib.sha256(body + wasm.read_bytes() + start.encode()).hexdigest()[:16]
    base = f"{stem}-{digest}"
    code = start.format(base=base).encode()
    (out / f"{base}_loader.js").write_bytes(code)
    (out / f"{base}.js").write_bytes(body)
    script = f"{base}_loader.js"
    js.unlink()
    wasm.rename(out / f"{base}_bg.wasm")
    index = out / "index.html"
    html = index.read_text(encoding="utf-8")
    if f'name="{stem}"' in main_chunk.outside(html):
        sys.exit(f"module_files.py: index.html already names {what}")
    if "</head>" not in html:
        sys.exit("module_files.py: index.html has no </head>")
    meta = (
        f'<meta name="{stem}" content="{script}" '
        f'data-js="{base}.js" data-wasm="{base}_bg.wasm">'
    )
    index.write_text(html.replace("</head>", meta + "</head>", 1), encoding="utf-8")


out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else os.environ["TRUNK_STAGING_DIR"])
for stem, (what, start) in MODULES.items():
    name_by_content(out, stem, what, start)
