#!/usr/bin/env python3
"""What the page's main chunk holds, by crate (issue 19; docs/PERFORMANCE.md, "What the main
chunk holds now"). Run by hand after a release build, not by the suite:

    python3 scripts/chunk_profile.py [LINKED_WASM]

LINKED_WASM defaults to the release link that scripts/page_wasm.py splits
(target/wasm32-unknown-unknown/release/vramfit-web.wasm, which keeps its name section). The
script splits it with `wasm-split-cli` as page_wasm.py does, into a scratch folder, and sums
the code-section body sizes of the main chunk by the crate in each function's mangled name
(legacy `_ZN` names by their first path segment, the crate and module for ours; a generic
`impl` instance under the first crate named in its `<…>`; v0 `_R` names by the first known
crate they name). wasm-bindgen's describe functions and `__wbg_` shims are a row of their own:
wasm-bindgen drops the describe functions, so the shipped chunk is smaller than this total.
Prints a Markdown table whose rows add up to the total, and the data segments' size.
scripts/size_profile.sh profiles the unsplit link with twiggy, which cannot read the split
chunks (twiggy 0.7.0: "invalid flags byte in element segment"); hence this reader.
"""
import collections
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
LINKED = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "target/wasm32-unknown-unknown/release/vramfit-web.wasm"
LEPTOS = {"tachys", "reactive_graph", "leptos", "leptos_dom", "either_of", "any_spawner", "or_poisoned",
          "slotmap", "guardian", "throw_error", "oco_ref", "send_wrapper", "server_fn", "wasm_split_helpers",
          "hydration_context", "next_tuple", "reactive_stores", "leptos_server"}
STD = {"core", "alloc", "std", "hashbrown", "dlmalloc", "indexmap", "compiler_builtins"}
BINDINGS = {"js_sys", "web_sys", "wasm_bindgen", "wasm_bindgen_futures"}
DATA = [0]  # bytes of the data section, read by functions()


def leb(b, i):
    r = s = 0
    while True:
        x = b[i]
        i += 1
        r |= (x & 0x7F) << s
        s += 7
        if x < 0x80:
            return r, i


def functions(b):
    """(name, body size) of every function defined in the module."""
    i, imported, bodies, names = 8, 0, [], {}
    while i < len(b):
        sid = b[i]
        size, i = leb(b, i + 1)
        end = i + size
        if sid == 2:  # imports: count the imported functions (they come first in the index space)
            n, j = leb(b, i)
            for _ in range(n):
                for _ in range(2):
                    ln, j = leb(b, j)
                    j += ln
                kind = b[j]
                j += 1
                if kind == 0:
                    _, j = leb(b, j)
                    imported += 1
                elif kind in (1, 2):  # table (reftype + limits) or memory (limits)
                    j += kind == 1
                    flags = b[j]
                    _, j = leb(b, j + 1)
                    if flags & 1:
                        _, j = leb(b, j)
                elif kind == 3:
                    j += 2
        elif sid == 10:
            n, j = leb(b, i)
            for _ in range(n):
                ln, k = leb(b, j)
                bodies.append(ln + (k - j))
                j = k + ln
        elif sid == 11:
            DATA[0] += size
        elif sid == 0:
            ln, j = leb(b, i)
            if b[j:j + ln] == b"name":
                j += ln
                while j < end:
                    sub = b[j]
                    sl, j = leb(b, j + 1)
                    if sub == 1:
                        n, k = leb(b, j)
                        for _ in range(n):
                            idx, k = leb(b, k)
                            nl, k = leb(b, k)
                            names[idx] = b[k:k + nl].decode("utf-8", "replace")
                            k += nl
                    j += sl
        i = end
    return [(names.get(imported + k, "?"), size) for k, size in enumerate(bodies)]


def crate_of(name):
    if name.startswith(("__wbindgen_describe", "__wbg_")):
        return "wasm-bindgen describe functions and shims"
    if name.startswith("_ZN"):
        segs, i = [], 3
        while i < len(name) and name[i].isdigit():
            j = i
            while name[j].isdigit():
                j += 1
            n = int(name[i:j])
            segs.append(name[j:j + n])
            i = j + n
        if not segs:
            return "other"
        first = segs[0]
        if first.startswith("_$LT$"):
            m = re.search(r"([a-z_][a-z0-9_]*)\.\.", first)
            first = m.group(1) if m else "impl"
            return family(first, segs, generic=True)
        return family(first, segs)
    if name.startswith("_R"):
        m = re.search(r"\d+(vramfit_[a-z]+|tachys|reactive_graph|serde_json|core|alloc|std|leptos|js_sys|web_sys|wasm_bindgen|dlmalloc|hashbrown)", name)
        return family(m.group(1) if m else "other", [])
    return "other"


def family(crate, segs, generic=False):
    if crate in STD:
        return "std (core, alloc, hashbrown, dlmalloc, indexmap)"
    if crate in LEPTOS:
        return "Leptos (tachys, reactive_graph, leptos, …)" + (" generic instances" if generic else "")
    if crate in BINDINGS:
        return "js-sys, web-sys, wasm-bindgen"
    if crate.startswith("vramfit_"):
        module = segs[1] if len(segs) > 1 and not generic else ""
        return f"{crate}::{module}" if module else crate
    return crate


def main():
    if not LINKED.is_file():
        sys.exit(f"chunk_profile.py: {LINKED} is missing: run `trunk build --release` first")
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run(["wasm-split-cli", str(LINKED), tmp, "--out-name", "vramfit-web", "--target", "web"],
                           stdout=subprocess.DEVNULL)
        if r.returncode != 0:
            sys.exit("chunk_profile.py: wasm-split-cli failed")
        fns = functions((pathlib.Path(tmp) / "vramfit-web.wasm").read_bytes())
    by = collections.Counter()
    for name, size in fns:
        by[crate_of(name)] += size
    total = sum(by.values())
    print("| part | bytes | share |\n|---|---|---|")
    for part, size in by.most_common():
        print(f"| {part} | {size:,} | {100 * size / total:.1f} % |")
    print(f"| total (code) | {total:,} | 100 % |")
    print(f"\ndata section (strings, tables): {DATA[0]:,} B")


main()
