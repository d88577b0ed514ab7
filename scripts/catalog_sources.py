#!/usr/bin/env python3
"""Writes catalog-sources.json for the web bundle: each catalog entry's `source`, by id.

The wasm bundle embeds the catalog without these long strings (crates/vramfit-core/build.rs);
the Catalog view fetches this file when it opens, and the service worker pre-caches it for
offline use. Run by Trunk as a post-build hook (Trunk.toml); writes into $TRUNK_STAGING_DIR,
or into the directory given as the first argument.
"""
import json
import os
import pathlib
import sys

root = pathlib.Path(__file__).resolve().parent.parent / "crates/vramfit-core/src/catalog"
out_dir = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else os.environ["TRUNK_STAGING_DIR"])
sources = {}
for kind in ("gpus", "models"):
    sources[kind] = {}
    for f in sorted((root / kind).glob("*.json")):
        for entry in json.loads(f.read_text(encoding="utf-8")):
            sources[kind][entry["id"]] = entry.get("source", "")
(out_dir / "catalog-sources.json").write_text(
    json.dumps(sources, ensure_ascii=False, separators=(",", ":")), encoding="utf-8"
)
