#!/usr/bin/env python3
"""The page's main wasm chunk inside index.html: how scripts/page_wasm.py writes it and how the
other build steps read it back (issue 19, docs/PERFORMANCE.md "Issue 19, step 9").

The chunk is hex in a data block last in the body, `<script type="text/plain" id="vf-wasm">`,
followed only by the script that decodes and compiles it (page_wasm.py writes both). One definition of the
block for its writer and its readers: scripts/catalog_file.py (the catalog's name in the
chunk) and scripts/size_budget.sh (the build-path check). The browser tests parse it on their
own, on purpose.

    python3 scripts/main_chunk.py INDEX_HTML OUT_WASM   writes the decoded chunk to OUT_WASM
"""
import re
import sys

ID = "vf-wasm"
"""The block's element id, which the page's start (page_wasm.py) looks the block up by."""
_BLOCK = re.compile(rf'<script type="text/plain" id="{ID}">([0-9a-f]*)</script>')


def block(wasm: bytes) -> str:
    """The data block that carries `wasm` in index.html."""
    return f'<script type="text/plain" id="{ID}">{wasm.hex()}</script>'


def read(html: str, where: str = "index.html") -> bytes:
    """The main chunk's bytes from index.html's text; exits naming `where` if it holds none."""
    m = _BLOCK.search(html)
    if m is None:
        sys.exit(f"{where} holds no main chunk (#vf-wasm, scripts/page_wasm.py)")
    return bytes.fromhex(m.group(1))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: main_chunk.py INDEX_HTML OUT_WASM")
    with open(sys.argv[1], encoding="utf-8") as f:
        chunk = read(f.read(), sys.argv[1])
    with open(sys.argv[2], "wb") as f:
        f.write(chunk)
