#!/usr/bin/env python3
"""index.html's head as it ships: the tab's icon as a data: URL, the source's comments dropped.

**The icon.** Chromium asks for a page's icon again after every same-document navigation: each
`history.pushState`/`replaceState` the page makes (src/state.rs `UrlWrites`, at most one every
120 ms while inputs change) fetched `icon.svg` once more, and decoding an SVG icon builds an SVG
document on the renderer's main thread. Measured (CDP `Performance.getMetrics` TaskDuration,
30 length changes 100–150 ms apart; docs/PERFORMANCE.md, "Issue 19, step 15"): 21.3–25.9 ms of
main-thread time per change with `icon.svg` as a file, 19.3–23.5 ms with the same SVG as a
data: URL, 15.4–16.9 ms with a 32×32 PNG as a data: URL; one icon request per change with
either file, none with a data: URL. The same re-request is known from other sites
(angular/angular#26544; girder/girder#3707, which inlined its icon too). public/icon-32.png is
public/icon.svg drawn at 32×32 in Chromium and written again without filters (344 B);
icon.svg stays the install icon in the web manifest. The step replaces the `href` of
`<link rel="icon" … data-vf-inline>` with the data: URL and drops the marker.

**The comments.** index.html's comments say why each Trunk link is there; the page is the
first load, so they go (~230 B gzip). The main chunk's block (scripts/main_chunk.py) is left
as it is: its text is bytes, not markup.

Writes into $TRUNK_STAGING_DIR, or into the directory given as the first argument. A second
run finds no marker and no comment, and leaves the page as it is.
"""
import base64
import os
import pathlib
import re
import sys

import main_chunk

out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else os.environ["TRUNK_STAGING_DIR"])
index = out / "index.html"
png = (pathlib.Path(__file__).resolve().parent.parent / "public" / "icon-32.png").read_bytes()
if not png.startswith(b"\x89PNG\r\n\x1a\n"):
    sys.exit("page_head.py: public/icon-32.png is not a PNG")
html = index.read_text(encoding="utf-8")
head_end = html.find("</head>")
if head_end < 0:
    sys.exit("page_head.py: index.html has no </head>")
head, rest = html[:head_end], html[head_end:]
LINK = re.compile(r'<link rel="icon" type="image/png" sizes="32x32" href="icon-32\.png" data-vf-inline\s*/?>')
if LINK.search(head):
    url = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
    head = LINK.sub(lambda _: f'<link rel="icon" type="image/png" sizes="32x32" href="{url}">', head, count=1)
elif 'rel="icon" type="image/png" sizes="32x32" href="data:image/png;base64,' not in head:
    sys.exit('page_head.py: index.html has no <link rel="icon" … href="icon-32.png" data-vf-inline>')
# The head's comments, each with the line it stands on, outside the main chunk's block.
if main_chunk.outside(head) != head:
    sys.exit("page_head.py: the main chunk's block is in the head; its text would be read as markup")
head = re.sub(r"\n[ \t]*<!--(?:(?!-->)[\s\S])*-->[ \t]*(?=\n)", "", head)
index.write_text(head + rest, encoding="utf-8")
