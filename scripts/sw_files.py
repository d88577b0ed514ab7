#!/usr/bin/env python3
"""Writes this build's file list and cache name into the service worker (sw.js).

The service worker pre-caches the whole build into a cache of its own, `vramfit-<BUILD>`,
and deletes every other cache of the app when it activates (public/sw.js). This step, the
last of scripts/post_build.py (a Trunk post-build hook), replaces sw.js's `const BUILD = …`
line with:
- BUILD: a hash over every file's name and content (index.html included), so a new build
  means a new sw.js (which the browser takes as an update) and a new cache; it is also
  written into index.html (`<meta name="vramfit-build">`, left out of the hash), which the
  service worker checks before it caches a page;
- HASHED: the files named by their content (Trunk's hashes, page_wasm.py's,
  module_files.py's, catalog_sources.py's): the same name is the same bytes, so the service worker may take
  them from an older build's cache or from the HTTP cache. Every one must be named in
  index.html: the service worker checks that the page it caches names them all;
- PLAIN: the other files (web manifest, icons), which it revalidates;
- LATER: those the first load does not fetch, which the service worker caches when the page
  asks, after its first result: the hashed files index.html names only in a `<meta>` (the
  views chunk, the import worker, the catalog's sources) and the plain files it does not
  name at all (the install icons, which only the manifest names).
It also drops the template's whole-line comments (sw.js is part of the first load).
Idempotent: run again on a changed build folder, it rewrites the line. Writes into
$TRUNK_STAGING_DIR, or into the directory given as the first argument.
"""
import hashlib
import json
import os
import pathlib
import re
import sys

import main_chunk

out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else os.environ["TRUNK_STAGING_DIR"])
sw, index = out / "sw.js", out / "index.html"
# Trunk writes its file hash as unpadded hex (a leading zero digit is dropped): 12-16 digits.
HASHED_NAME = re.compile(r"-[0-9a-f]{12,16}(?=[._])")
files = sorted(
    f.relative_to(out).as_posix() for f in out.rglob("*") if f.is_file() and f != sw
)
# index.html carries the build's id (`<meta name="vramfit-build">`), so that the service worker
# can tell this build's page from another one that names the same content-hashed files (an
# index.html-only change: its inline CSS, its script, the home page's first result). The id
# hashes index.html without that tag (a second run replaces it).
BUILD_META = re.compile(r'<meta name="vramfit-build" content="[0-9a-f]*">')
html = BUILD_META.sub("", index.read_text(encoding="utf-8"))
build = hashlib.sha256()
for name in files:
    data = html.encode("utf-8") if name == "index.html" else (out / name).read_bytes()
    build.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
hashed = [n for n in files if HASHED_NAME.search(n)]
# Names are looked for in the page's markup, not in the main chunk's bytes inside it
# (scripts/main_chunk.py), which hold some as text.
markup = main_chunk.outside(html)
plain = [n for n in files if n != "index.html" and n not in hashed]
missing = [n for n in hashed if n not in markup]
if missing:
    sys.exit(f"sw_files.py: index.html does not name {', '.join(missing)}")
# What the page loads at once is named outside the `<meta>` tags (links, scripts).
outside_meta = re.sub(r"<meta\b[^>]*>", "", markup)
later = [n for n in hashed if n not in outside_meta] + [n for n in plain if n not in markup]
line = "const BUILD = {}, HASHED = {}, PLAIN = {}, LATER = {};".format(
    *(json.dumps(v, separators=(",", ":")) for v in (build.hexdigest()[:16], hashed, plain, later))
)
src = sw.read_text(encoding="utf-8")
src, n = re.subn(r"^const BUILD = .*$", lambda _: line, src, count=1, flags=re.M)
if n != 1:
    sys.exit("sw_files.py: sw.js has no `const BUILD = …` line")
src = "".join(l for l in src.splitlines(keepends=True) if not l.lstrip().startswith("//"))
sw.write_text(src, encoding="utf-8")
if "</head>" not in html:
    sys.exit("sw_files.py: index.html has no </head>")
meta = '<meta name="vramfit-build" content="{}">'.format(build.hexdigest()[:16])
index.write_text(html.replace("</head>", meta + "</head>", 1), encoding="utf-8")
