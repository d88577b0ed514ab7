#!/usr/bin/env python3
"""Builds the page's wasm as chunks: the first post-build step (scripts/post_build.py).

The page (the `vramfit-web` bin) has split points (`#[wasm_split]`: src/lib.rs `mount`, src/views.rs): functions
whose code lives in a chunk of its own, fetched on first call, sharing the main chunk's memory
and table (wasm_split_cli_support 0.2.4, the splitter Leptos's `#[lazy]` is built for). The
split runs on the linked wasm, before wasm-bindgen, and needs the linker's relocations; Trunk
0.21.14's rust pipeline has no step there, so this step builds the page itself:
1. `cargo rustc -p vramfit-web --bin vramfit-web --target wasm32-unknown-unknown
   [--release] -- -C link-args=--emit-relocs` (the flag on the final crate only; in
   release, with the stack size below), taking the
   linked wasm's path from cargo's artifact message;
2. `wasm-split-cli`: the main chunk, one `<name>.wasm` per split module, and
   `__wasm_split.js`, the loader the main chunk's JS imports;
3. `wasm-bindgen --target web --weak-refs --keep-lld-exports` on the main chunk (the chunks
   import its `__indirect_function_table`);
4. release only: `wasm-opt -Oz` on every chunk, with the features rustc's output uses (and,
   once step 5 has rewritten it, terser on the glue);
5. names every file by one hash over all of them (`vramfit-web-<hash>…`), rewrites the names
   the files give each other, and adds to index.html the page's start (preloads of the main
   JS and the loader, and on the home page of the calculator's chunks, the app split of
   src/lib.rs and the shared chunks it needs; the head script that defines the main chunk's
   decode and compile and says a start that failed; the module script that starts it; the
   `TrunkApplicationStarted` event and `window.wasmBindings` that Trunk's loader gave) and
   `<meta name="vramfit-chunks">`, which names the chunks so that the service worker caches
   them after the first result (scripts/sw_files.py: named only in a `<meta>`, so LATER);
6. puts the main chunk itself in index.html, as text (a character per byte,
   scripts/main_chunk.py), last in the body (`#vf-wasm`, followed
   by the script that starts its compile), instead of a file beside it: see `blob` below. A
   debug build's main chunk is several MB, so its
   page is too; `./dev serve` builds release.
A binary with split points does not instantiate unsplit (it imports from
`__wasm_split_placeholder__`), so debug builds (`trunk serve`) go through here too.
Writes into $TRUNK_STAGING_DIR, or into the directory given as the first argument.
"""
import hashlib
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

import main_chunk

STEM = "vramfit-web"
# The main chunk's stack in release builds (issue 19: JS heap + wasm memory after load).
# rustc's default for wasm32 is 1 MiB, placed first in memory (`--stack-first`: an overflow
# runs below address 0 and traps; it corrupts nothing). The deepest the release page's stack
# went, over every view, the OOM view's model check, the command checker and a config.json
# nested 127 deep, was 60,880 B on 2026-12-05 and 64,088 B on 2026-12-06 (the command
# checker; the stack region painted with a pattern, then the lowest byte changed:
# tests/e2e/memory.test.mjs). 256 KiB until 2026-12-06; 160 KiB since, 2.56 times the
# deepest, and the test fails if a change takes it past half: Chromium 156.0.8078.114 reads
# 0.12 MB more JS heap + wasm memory for the same page than .73 did, which took the page past
# the 3 MB of issue 19 (docs/PERFORMANCE.md, fifteenth session). Every page holds 864 KiB
# less than at the default. Debug
# builds (`trunk serve` without --release), whose frames are several times larger, keep the
# default. (`--initial-memory` to skip the start's 13 `memory.grow`s was measured and
# dropped: Rust's dlmalloc takes new memory only from `memory.grow`, so the memory between
# the heap's base and a larger initial size is never used, and the page held 2.5 MiB instead
# of 2.2 MiB.)
STACK_BYTES = 160 * 1024
FEATURES = [
    "--enable-bulk-memory", "--enable-nontrapping-float-to-int", "--enable-sign-ext",
    "--enable-mutable-globals", "--enable-reference-types", "--enable-multivalue",
]


def run(*cmd, **kwargs):
    """Runs a build tool; exits naming it when it fails or is not installed."""
    me = pathlib.Path(sys.argv[0]).name
    try:
        r = subprocess.run(cmd, **kwargs)
    except FileNotFoundError:
        sys.exit(f"{me}: `{cmd[0]}` is not on PATH: run `./dev setup` (scripts/setup.sh)")
    if r.returncode != 0:
        sys.exit(f"{me}: `{' '.join(cmd)}` failed ({r.returncode})")
    return r


# terser (npm, pinned in tests/e2e/package-lock.json) on release builds' JS glue
# (docs/PERFORMANCE.md, "Issue 19, step 14"); `--module` for an ES module, whose exports keep
# their names. A classic script (the import worker's `no-modules` glue) keeps its top-level
# names, such as the global `wasm_bindgen`, without it.
TERSER_OPTIONS = ["--compress", "--mangle"]  # after the input: each takes an optional value


def minify(path, module):
    run("terser", str(path), *(["--module"] if module else []), *TERSER_OPTIONS, "-o", str(path))


def terser_id():
    """terser's version line and options: what, besides its input, decides its output."""
    return run("terser", "--version", stdout=subprocess.PIPE).stdout + " ".join(TERSER_OPTIONS).encode()


def build_linked(release):
    """Builds the page's bin and returns the linked wasm, as cargo names it (its artifact
    message), so the target directory and profile layout need no guessing."""
    cmd = ["cargo", "rustc", "-p", STEM, "--bin", STEM, "--target", "wasm32-unknown-unknown",
           "--message-format=json-render-diagnostics"]
    if release:
        cmd.append("--release")
    cmd += ["--", "-C", "link-args=--emit-relocs"]
    if release:
        cmd += ["-C", f"link-arg=-zstack-size={STACK_BYTES}"]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)  # diagnostics go to stderr
    if r.returncode != 0:
        sys.exit(f"page_wasm.py: `{' '.join(cmd)}` failed ({r.returncode})")
    for line in r.stdout.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg["target"]["name"] == STEM \
                and "bin" in msg["target"]["kind"]:
            wasm = [f for f in msg["filenames"] if f.endswith(".wasm")]
            if len(wasm) == 1:
                return pathlib.Path(wasm[0])
    sys.exit(f"page_wasm.py: cargo named no wasm for the {STEM} bin")


def main():
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else os.environ["TRUNK_STAGING_DIR"])
    release = os.environ.get("TRUNK_PROFILE", "release") == "release"
    linked = build_linked(release)
    with tempfile.TemporaryDirectory() as tmp:
        split, bound = pathlib.Path(tmp) / "split", pathlib.Path(tmp) / "bound"
        run("wasm-split-cli", str(linked), str(split), "--out-name", STEM, "--target", "web")
        main_wasm = split / f"{STEM}.wasm"
        loader = split / "__wasm_split.js"
        chunks = sorted(p for p in split.glob("*.wasm") if p != main_wasm)
        if not main_wasm.is_file() or not loader.is_file() or not chunks:
            sys.exit(f"page_wasm.py: wasm-split-cli wrote no main chunk, loader or chunk in {split}")
        # --keep-lld-exports: the chunks import the main chunk's function table
        # (`__indirect_function_table`, an export the linker makes), which wasm-bindgen drops
        # otherwise; a chunk then fails to instantiate ("table import requires a
        # WebAssembly.Table"). cargo-leptos passes the same option when it splits.
        run("wasm-bindgen", "--target", "web", "--weak-refs", "--no-typescript", "--keep-lld-exports",
            "--out-name", STEM, "--out-dir", str(bound), str(main_wasm))
        files = {  # role -> (built file, name suffix after the hash)
            "js": (bound / f"{STEM}.js", ".js"),
            "wasm": (bound / f"{STEM}_bg.wasm", "_bg.wasm"),
            "loader": (loader, "_split.js"),
        }
        for c in chunks:
            files[c.name] = (c, f"_{c.stem}.wasm")
        if release:
            for role, (path, _) in files.items():
                if path.suffix == ".wasm":
                    run("wasm-opt", "-Oz", *FEATURES, str(path), "-o", str(path))
        digest = hashlib.sha256()
        for role in sorted(files):
            digest.update(role.encode() + b"\0" + files[role][0].read_bytes())
        if release:
            # The glue is minified after its name is given (below): the name also covers the
            # minifier, so that a new terser's output never comes under a name a cache holds.
            digest.update(b"terser\0" + terser_id())
        base = f"{STEM}-{digest.hexdigest()[:16]}"
        name = {role: base + suffix for role, (_, suffix) in files.items()}

        def rewrite(text, old, new, what):
            if text.count(old) < 1:
                sys.exit(f"page_wasm.py: {what} does not name {old}; has wasm-split-cli changed?")
            return text.replace(old, new)

        js = files["js"][0].read_text(encoding="utf-8")
        # Only the import statement: the wasm's own import module keeps the name `./__wasm_split.js`
        # (the key of the imports object the glue builds).
        js = rewrite(js, 'from "./__wasm_split.js"', f'from "./{name["loader"]}"', "the main JS")
        link = loader.read_text(encoding="utf-8")
        link = rewrite(link, f'"./{STEM}.js"', f'"./{name["js"]}"', "__wasm_split.js")
        for c in chunks:
            link = rewrite(link, f'"./{c.name}"', f'"./{name[c.name]}"', "__wasm_split.js")
        (out / name["js"]).write_text(js, encoding="utf-8")
        (out / name["loader"]).write_text(link, encoding="utf-8")
        for role, (path, _) in files.items():
            if path.suffix == ".wasm" and role != "wasm":
                shutil.copyfile(path, out / name[role])
        # The glue's default URL for its wasm (used only when its init is given none) is left
        # as wasm-bindgen wrote it: no file has it; the start hands the glue the compiled main
        # chunk, which is in index.html (step 6).
        # The block, and the script that starts its compile as soon as the parser has read it
        # (`vfCompile`, below), while the glue is evaluated.
        blob = main_chunk.block(files["wasm"][0].read_bytes()) + (
            "<script>window.vfWasm = vfCompile(); vfWasm.catch(() => {});</script>")
    index = out / "index.html"
    html = index.read_text(encoding="utf-8")
    if "</head>" not in html:
        sys.exit("page_wasm.py: index.html has no </head>")
    if 'name="vramfit-chunks"' in html:
        sys.exit("page_wasm.py: index.html already names the page's chunks")
    # Trunk keeps the skipped link (data-trunk-skip, index.html) in its output: drop it.
    html, n = re.subn(r'<link data-trunk rel="rust" data-bin="vramfit-web"[^>]*>\s*', "", html)
    if n != 1:
        sys.exit(f"page_wasm.py: index.html has {n} skipped links for the page's wasm, not one")
    chunk_names = " ".join(name[c.name] for c in chunks)
    # The calculator (the app split, src/lib.rs `mount`) and the shared chunks it needs: which
    # split modules need a chunk, the loader says in the comment above it (`/* app, views */`).
    link = (out / name["loader"]).read_text(encoding="utf-8")
    users = {chunk: who.split(", ") for who, chunk in re.findall(r"/\* ([^*]+) \*/\nconst __(chunk_\d+) = makeLoad", link)}
    unread = [c.name for c in chunks if c.stem.startswith("chunk_") and c.stem not in users]
    if unread:
        sys.exit(f"page_wasm.py: the chunk loader does not say which modules need {unread}; has wasm-split-cli changed?")
    app = [name[c.name] for c in chunks if c.stem == "split_app" or "app" in users.get(c.stem, [])]
    if not any(n.endswith("_split_app.wasm") for n in app):
        sys.exit("page_wasm.py: wasm-split-cli wrote no split_app.wasm (src/lib.rs `mount`)")
    if release:
        # The glue, minified (`minify`): 8.9 → 6.7 KB gzip. After the rewrite above, which
        # looks for the glue's import of the loader as wasm-bindgen wrote it. The loader stays
        # as wasm-split-cli wrote it (1.1 KB gzip): its comments say which split modules need
        # each chunk, which this step and scripts/size_budget.sh read.
        minify(out / name["js"], module=True)
    # As the chunk loader fetches them (`fetch(url)`: CORS mode, same-origin credentials).
    preload = ("for (const f of " + json.dumps(app) + ") { const l = document.createElement('link');"
               " l.rel = 'preload'; l.as = 'fetch'; l.crossOrigin = ''; l.href = f; document.head.append(l); }")
    head = (
        f'<link rel="modulepreload" href="{name["js"]}">'
        f'<link rel="modulepreload" href="{name["loader"]}">'
        f'<meta name="vramfit-chunks" content="{chunk_names}">'
        # The calculator's chunks: the home page's first result is in the HTML
        # (scripts/prerender.mjs), so they are fetched beside the main chunk, and compiled as
        # soon as it starts (src/lib.rs). A shared link's first result waits for the main chunk
        # (src/first.rs), so its page fetches them only once that result is shown (the chunk
        # loader, when the page mounts the calculator): on a slow link they would share its
        # bandwidth, and on a fast one its CPU (issue 19; docs/PERFORMANCE.md, "Issue 19,
        # step 7": preloading them once the main chunk had started took the first result from
        # 142–154 ms to 173–175 ms on loopback).
        "<script>if (!location.search) " + preload + "</script>"
        # The main chunk is in the page itself (`#vf-wasm`, below), a character per byte
        # (scripts/main_chunk.py): decoded (each character's code, less U+0100 for the three
        # escaped bytes), taken out of the document, and compiled (`vfCompile`), by the
        # script that follows it (`vfWasm`, a promise of the module), as soon as the parser
        # has read it; by the start, if that script never ran (the page was cut short). A page
        # that cannot start (its JS did not come or does not parse or link, its wasm is cut
        # short or does not compile or instantiate) says so, as text, once, instead of the home page's first result from
        # the build (`#vf-first`, prerender.mjs) with controls that never come alive
        # (`vfStartFailed`): the start calls it on an error; when the start script never ran
        # (its module graph failed: the glue or the loader did not come, or came cut short
        # and does not parse), `DOMContentLoaded`, which follows module scripts run or failed,
        # does, with the error the window last reported before, if any.
        "<script>function vfStartFailed(why) {"
        "if (document.querySelector('[data-testid=\"start-failed\"]')) return;"
        "const p = document.createElement('p');"
        "p.className = 'vf-verdict vf-bad'; p.setAttribute('role', 'alert'); p.dataset.testid = 'start-failed';"
        "p.textContent = `vramfit could not start (${why}). Check the connection and reload the page.`;"
        "document.body.append(p);"
        "document.getElementById('vf-first')?.remove(); }"
        "addEventListener('error', (e) => { window.vfStarted || (window.vfError = e.message); });"
        "addEventListener('DOMContentLoaded', () => { window.vfStarted || vfStartFailed(window.vfError ?? 'its code did not load'); });"
        # A function of its own, so that neither the text (351 K characters) nor the bytes are
        # held once compiled. `async`, so that it never throws: a failure is the promise's,
        # handled where it is awaited (its body still runs at once, up to the compile it returns).
        "async function vfCompile() {"
        f"const blob = document.getElementById('{main_chunk.ID}');"
        "if (!blob) throw new Error('the page holds no wasm');"
        "const text = blob.textContent; blob.remove();"
        "const b = new Uint8Array(text.length); let above = 0;"
        "for (let i = 0; i < b.length; i++) { const c = text.charCodeAt(i); above |= c >> 9; b[i] = c; }"
        # A character above U+01FF: the transfer stopped inside a character (U+FFFD), or
        # the page was read in another encoding than UTF-8 (most of its bytes 0x80–0x9F).
        "if (above) throw new SyntaxError('the page\\'s wasm is not whole, or the page was not read as UTF-8');"
        "return WebAssembly.compile(b); }</script>"
        # The glue is imported statically, not with `import()` once the page is parsed: the
        # parser meets this script in the head, so the glue (modulepreloaded above) is fetched
        # and compiled while the page's bytes are still being parsed, and is evaluated as soon
        # as they are (the page's `DOMContentLoaded` and `load` now wait for it), while the
        # wasm compiles. With `import()` after the parse, and the compile started in this
        # script, a shared link's first result came 14–18 ms later on loopback
        # (docs/PERFORMANCE.md, "Issue 19, step 12").
        '<script type="module">'
        f"import * as bindings from './{name['js']}';"
        "window.vfStarted = true;"
        "try {"
        "const module = window.vfWasm ?? vfCompile(); delete window.vfWasm;"
        "const wasm = await bindings.default({module_or_path: await module});"
        "window.wasmBindings = bindings;"
        'dispatchEvent(new CustomEvent("TrunkApplicationStarted", {detail: {wasm}}));'
        "} catch (e) {"
        "let why = 'unknown error';"
        "try { why = String(e?.message ?? e); } catch {}"
        "vfStartFailed(why);"
        "throw e;"
        "}"
        "</script>"
    )
    if html.count("</body>") != 1:
        sys.exit("page_wasm.py: index.html has no single </body>")
    # The main chunk, in the page (issue 19; docs/PERFORMANCE.md, "Issue 19, step 9"): a
    # shared link's first result no longer waits for a second round trip after the HTML, only
    # for the page's bytes (one latency less, 0.44 s under Fast 3G). Last in the body, after the
    # home page's first result and the script that shows it, so that the home page's result is
    # not held back by these bytes. A character per byte, not hex or base64: gzip finds the
    # same repeats as in the bytes (a byte is always one character, of one or two bytes in
    # UTF-8), so it costs 162 KB gzip against the file's 154 KB; hex cost 175 KB, base64
    # 201 KB (docs/PERFORMANCE.md, "Issue 19, step 14"). A data block (`type="text/plain"`):
    # the HTML parser reads it as raw text up to `</script`, which the block cannot hold
    # (scripts/main_chunk.py).
    html = html.replace("</head>", head + "</head>", 1).replace("</body>", blob + "\n  </body>", 1)
    index.write_text(html, encoding="utf-8")


if __name__ == "__main__":  # module_files.py imports `minify`
    main()
