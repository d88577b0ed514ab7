#!/usr/bin/env python3
"""Puts the catalog beside the page's wasm: the file the wasm fetches, and a preload of it.

The page does not embed the catalog (the web crate builds the core without its `bundled`
feature). The core's build script writes the web copy, one JSON object of every catalog file
without its provenance, named by its content (`catalog-<hash>.json`, crates/vramfit-core/
build.rs), and compiles that name into the wasm (`vramfit_core::catalog::WEB_FILE`). This step
(scripts/post_build.py, after Trunk has built the wasm):
- reads the name from the page's main wasm chunk, which index.html holds as text (the views
  chunk shares its memory);
- copies that file from the core's build output (under the cargo target directory: the
  name is the content's hash, so any copy with that name is these bytes);
- adds `<link rel="preload" as="fetch" crossorigin>` for it to index.html's head, before the
  app's script, so the browser fetches it while the page and its code download, and a script that asks
  for its bytes at once (`window.vfCatalog`: a promise of an `ArrayBuffer`, or of `null` when
  it did not come; bytes, which the wasm copies in at once, not a string), taking the
  preloaded response; the wasm reads that promise when it starts
  (src/state.rs `early_catalog`), and fetches the file itself only when it came to nothing.
  The service worker caches it with the first load's files (scripts/sw_files.py: named
  outside a `<meta>`).
Writes into $TRUNK_STAGING_DIR, or into the directory given as the first argument.
"""
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import main_chunk

root = pathlib.Path(__file__).resolve().parent.parent
out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else os.environ["TRUNK_STAGING_DIR"])
NAME = re.compile(rb"catalog-[0-9a-f]{16}\.json")


index = out / "index.html"
html = index.read_text(encoding="utf-8")
# The main chunk is in the page (scripts/main_chunk.py).
names = set(NAME.findall(main_chunk.read(html, f"catalog_file.py: {index}")))
if len(names) != 1:
    sys.exit(f"catalog_file.py: the main chunk names {len(names)} catalog files: {sorted(names)}")
name = names.pop().decode()
# Cargo's target directory as cargo itself resolves it (env, config), as Trunk does.
meta = subprocess.run(["cargo", "metadata", "--format-version", "1", "--no-deps", "--offline"],
                      cwd=root, capture_output=True, text=True)
if meta.returncode != 0:
    sys.exit(f"catalog_file.py: cargo metadata failed: {meta.stderr.strip()}")
target = pathlib.Path(json.loads(meta.stdout)["target_directory"])
# Cargo's layout (<triple>/<profile>/build/<package>-<hash>/out), else anywhere below.
copies = sorted(target.glob(f"*/*/build/vramfit-core-*/out/web/{name}")) or sorted(
    target.rglob(f"vramfit-core-*/out/web/{name}"))
if not copies:
    sys.exit(f"catalog_file.py: no {name} under {target} (the core's build script writes it "
             "to OUT_DIR/web)")
shutil.copyfile(copies[0], out / name)
if name in main_chunk.outside(html):
    sys.exit(f"catalog_file.py: index.html already names {name}")
link = (f'<link rel="preload" href="{name}" as="fetch" crossorigin>'
        # As the page's own fetch would ask (CORS mode, same-origin credentials), so that it
        # takes the preloaded response.
        f"<script>window.vfCatalog = fetch('{name}').then((r) => r.ok ? r.arrayBuffer() : null).catch(() => null);</script>")
html, n = re.subn(r"</title>", lambda m: m.group(0) + "\n    " + link, html, count=1)
if n != 1:
    sys.exit("catalog_file.py: index.html has no </title>")
index.write_text(html, encoding="utf-8")
