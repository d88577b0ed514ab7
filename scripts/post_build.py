#!/usr/bin/env python3
"""Trunk's post-build hook (Trunk.toml): the steps that name files by their content and
write the names where the app reads them, in order, then the home page's first result
(prerender.mjs, which loads the built page in headless Chromium) and the service worker's
file list. Trunk runs the hooks of one stage at the same time, and these edit the same
index.html (and the last reads what the others wrote), so they are one hook. Each step also
runs alone on a build folder: `python3 scripts/<step>.py DIR`, `node scripts/prerender.mjs DIR`.
"""
import os
import pathlib
import subprocess
import sys

here = pathlib.Path(__file__).resolve().parent
out = sys.argv[1] if len(sys.argv) > 1 else os.environ["TRUNK_STAGING_DIR"]
for step in ("page_wasm.py", "catalog_sources.py", "catalog_file.py", "module_files.py", "page_head.py", "prerender.mjs", "sw_files.py"):
    runner = ["node"] if step.endswith(".mjs") else [sys.executable]
    subprocess.run([*runner, str(here / step), out], check=True)
