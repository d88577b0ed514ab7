#!/usr/bin/env python3
"""Writes the catalog's sources for the web bundle: each catalog entry's `source`, by id.

The wasm bundle embeds the catalog without these long strings (crates/vramfit-core/build.rs);
the Catalog view fetches this file when it opens, and the service worker pre-caches it for
offline use. The file is named by its content, `catalog-sources-<hash>.json` (an unchanged
name would let a returning visitor's cache keep old sources), and named in index.html by
`<meta name="vramfit-sources" content=…>`, which the Catalog view reads
(src/components/catalog_view.rs). Run by scripts/post_build.py (a Trunk post-build hook);
writes into $TRUNK_STAGING_DIR, or into the directory given as the first argument.
"""
import hashlib
import json
import os
import pathlib
import sys

import main_chunk

root = pathlib.Path(__file__).resolve().parent.parent / "crates/vramfit-core/src/catalog"
out_dir = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else os.environ["TRUNK_STAGING_DIR"])
sources = {}
for kind in ("gpus", "models"):
    sources[kind] = {}
    for f in sorted((root / kind).glob("*.json")):
        for entry in json.loads(f.read_text(encoding="utf-8")):
            sources[kind][entry["id"]] = entry.get("source", "")
body = json.dumps(sources, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
name = f"catalog-sources-{hashlib.sha256(body).hexdigest()[:16]}.json"
(out_dir / name).write_bytes(body)
index = out_dir / "index.html"
html = index.read_text(encoding="utf-8")
if 'name="vramfit-sources"' in main_chunk.outside(html):
    sys.exit("catalog_sources.py: index.html already names the catalog's sources")
if "</head>" not in html:
    sys.exit("catalog_sources.py: index.html has no </head>")
meta = f'<meta name="vramfit-sources" content="{name}">'
index.write_text(html.replace("</head>", meta + "</head>", 1), encoding="utf-8")
