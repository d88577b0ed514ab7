#!/usr/bin/env python3
"""The page's main wasm chunk inside index.html: how scripts/page_wasm.py writes it and how the
other build steps read it back (issue 19, docs/PERFORMANCE.md "Issue 19, step 9").

The chunk is text in a data block last in the body, `<script type="text/plain" id="vf-wasm">`,
followed only by the script that decodes and compiles it (page_wasm.py writes both). Each byte
is one character: byte b is U+00bb, except the three bytes the HTML parser would not give back
as they are, which are U+01bb:
- 0x00: the parser replaces NUL in a script's text with U+FFFD;
- 0x0D: it turns CR and CR LF into LF;
- 0x3C (`<`): `</script` would end the block.
index.html is UTF-8, so bytes 0x80–0xFF and the three escapes take two bytes there, the others
one. The page decodes it by storing each character's code into a `Uint8Array`, which keeps the
low byte; a character above U+01FF (U+FFFD, where the transfer stopped inside a character)
means the text is not whole. GNU gzip -9 of this text is 162 KB for the 351 KB chunk of
2026-12-05, against 175 KB for the chunk in hex (a byte two characters) and 154 KB for the bytes
themselves; the HTML parser reads 351 K characters instead of 702 K (docs/PERFORMANCE.md,
"Issue 19, step 14").

One definition of the block for its writer and its readers: scripts/catalog_file.py (the
catalog's name in the chunk) and scripts/size_budget.sh (the build-path check); and of the
page without it (`outside`), where the build's steps look for the names they write in
index.html. The browser tests parse it on their own, on purpose (tests/e2e/helpers.mjs
`pageWasm`).

    python3 scripts/main_chunk.py INDEX_HTML OUT_WASM   writes the decoded chunk to OUT_WASM
    python3 scripts/main_chunk.py --outside INDEX_HTML  prints the page without the block's text
"""
import re
import sys

ID = "vf-wasm"
"""The block's element id, which the page's start (page_wasm.py) looks the block up by."""
_BLOCK = re.compile(rf'<script type="text/plain" id="{ID}">([^<]*)</script>')
ESCAPED = (0x00, 0x0D, 0x3C)
"""The bytes written as U+0100 + byte: NUL, CR and `<` (above)."""
_CHAR = [chr(0x100 + b if b in ESCAPED else b) for b in range(256)]


def encode(wasm: bytes) -> str:
    """The block's text for `wasm`: one character per byte (above)."""
    return "".join(map(_CHAR.__getitem__, wasm))


def decode(text: str) -> bytes:
    """The bytes of a block's text; ValueError if a character is none that `encode` writes."""
    codes = [ord(c) for c in text]
    bad = next((i for i, c in enumerate(codes) if c > 0x1FF or (c > 0xFF) != ((c & 0xFF) in ESCAPED)), None)
    if bad is not None:
        raise ValueError(f"character {bad} (U+{codes[bad]:04X}) is not one of the main chunk's")
    return bytes(c & 0xFF for c in codes)


def block(wasm: bytes) -> str:
    """The data block that carries `wasm` in index.html."""
    return f'<script type="text/plain" id="{ID}">{encode(wasm)}</script>'


def outside(html: str, where: str = "index.html") -> str:
    """index.html without the block's text: the page's own markup, where the build's steps
    look for the names they write (the chunk's bytes are text too, and hold some of them).
    The page before page_wasm.py has written the block is its markup; a block this module
    cannot read exits, naming `where`, rather than leave the chunk's text in."""
    m = _BLOCK.search(html)
    if m is None:
        if f'id="{ID}"' in html:
            sys.exit(f"{where}: #vf-wasm is not a block scripts/main_chunk.py can read")
        return html
    return html[: m.start(1)] + html[m.end(1):]


def read(html: str, where: str = "index.html") -> bytes:
    """The main chunk's bytes from index.html's text; exits naming `where` if it holds none."""
    m = _BLOCK.search(html)
    if m is None:
        sys.exit(f"{where} holds no main chunk (#vf-wasm, scripts/page_wasm.py)")
    try:
        return decode(m.group(1))
    except ValueError as e:
        sys.exit(f"{where}'s main chunk does not decode: {e}")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--outside":
        with open(sys.argv[2], encoding="utf-8") as f:
            sys.stdout.buffer.write(outside(f.read(), sys.argv[2]).encode("utf-8"))
        sys.exit()
    if len(sys.argv) != 3:
        sys.exit("usage: main_chunk.py INDEX_HTML OUT_WASM | main_chunk.py --outside INDEX_HTML")
    with open(sys.argv[1], encoding="utf-8") as f:
        chunk = read(f.read(), sys.argv[1])
    with open(sys.argv[2], "wb") as f:
        f.write(chunk)
