#!/usr/bin/env bash
# Size profile of the first-load wasm (issue 19): what each crate and core module costs,
# from twiggy over the release build before wasm-bindgen and wasm-opt (the function names
# are still there). Not part of `./dev test`; run by hand: bash scripts/size_profile.sh
# This is the unsplit link: everything the page can load. What the first load fetches is
# the main chunk after the split; twiggy 0.7.0 cannot read the split chunks ("invalid flags
# byte in element segment"), so scripts/chunk_profile.py reads those.
# Installs twiggy 0.7.0 from crates.io (pinned) if it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
command -v twiggy >/dev/null || cargo install twiggy --version 0.7.0 --locked
cargo build --release -p vramfit-web --target wasm32-unknown-unknown -j2 -q
wasm=target/wasm32-unknown-unknown/release/vramfit-web.wasm
twiggy top -n 1000000 --format csv "$wasm" > target/size_profile.csv
python3 - target/size_profile.csv <<'PY'
import csv, re, sys, collections
rows = list(csv.DictReader(open(sys.argv[1])))
agg = collections.Counter()
for r in rows:
    n, size = r["Name"], int(r["ShallowSize"])
    if "custom section" in n or "function names" in n or "wbindgen_describe" in n:
        continue  # stripped by wasm-bindgen (its describe functions) and wasm-opt
    if n.startswith("data["):
        key = "data segments (catalog, strings)"
    else:
        m = re.search(r"(vramfit_core|vramfit_web|vramfit_protocol|[a-z_]+)::([a-z_0-9]+)?", n)
        key = "other"
        if m:
            crate = m.group(1)
            key = f"{crate}::{m.group(2)}" if crate.startswith("vramfit") and m.group(2) else crate
        elif n.startswith("export") or "wbindgen" in n:
            key = "wasm-bindgen glue"
    agg[key] += size
total = sum(agg.values())
print(f"| part | bytes before wasm-opt | share |\n|---|---|---|")
for k, v in agg.most_common(30):
    print(f"| {k} | {v:,} | {100 * v / total:.1f} % |")
print(f"| total (code and data) | {total:,} | 100 % |")
PY
