#!/usr/bin/env bash
# Native benchmarks: the Rust core (crates/vramfit-core/examples/bench.rs) and, on the same
# 200k-tensor safetensors header, the reference `safetensors` Python package.
#   scripts/bench.sh            BENCH_FILE=/tmp/... to place the 1.6 GB sparse checkpoint
# Python packages go to a venv under target/bench-venv (pinned, installed when missing).
# Results: docs/PERFORMANCE.md ("Native benchmarks").
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
SAFETENSORS_VERSION="0.8.0"
NUMPY_VERSION="2.4.6"
VENV="target/bench-venv"
FILE="${BENCH_FILE:-/tmp/vramfit-bench-200k.safetensors}"
SPEED_TARGET=20
log() { printf '[bench] %s\n' "$*"; }

# 1. The reference package, pinned, in a venv.
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
have="$("$VENV/bin/python" -c 'import safetensors, numpy; print(safetensors.__version__, numpy.__version__)' 2>/dev/null || true)"
if [ "$have" != "$SAFETENSORS_VERSION $NUMPY_VERSION" ]; then
  log "installing safetensors $SAFETENSORS_VERSION and numpy $NUMPY_VERSION into $VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check \
    "safetensors==$SAFETENSORS_VERSION" "numpy==$NUMPY_VERSION"
fi

# 2. Python writes the checkpoint (when missing) and times the reference.
log "python: safetensors.safe_open on $FILE"
PY_OUT="$("$VENV/bin/python" scripts/bench_safetensors.py "$FILE")"
echo "$PY_OUT"

# 3. Rust: the core benchmarks; checks that FILE holds the very header it parses.
log "rust: cargo run --profile native -p vramfit-core --example bench"
RS_OUT="$(cargo run --quiet --profile native -p vramfit-core --example bench -- --compare-file "$FILE")"
echo "$RS_OUT"

# 4. Ratios.
get() { printf '%s\n' "$PY_OUT" "$RS_OUT" | grep -oE "(^| )$1=[^ ]+" | head -1 | cut -d= -f2; }
rs_ms="$(get parse_median_ms)"; py_ms="$(get py_median_ms)"
rs_kib="$(get parse_peak_delta_kib)"; py_kib="$(get py_peak_delta_kib)"
awk -v rs="$rs_ms" -v py="$py_ms" -v rk="$rs_kib" -v pk="$py_kib" -v t="$SPEED_TARGET" 'BEGIN {
  speed = py / rs
  printf "[bench] 200k-tensor header: rust %.1f ms vs python safetensors %.1f ms: %.1fx faster (%s, target >= %dx)\n",
    rs, py, speed, (speed >= t ? "PASS" : "FAIL"), t
  if (rk > 0) printf "[bench] peak RSS growth: rust %.1f MiB vs python %.1f MiB: python uses %.2fx\n",
    rk / 1024, pk / 1024, pk / rk
}'
log "$(date -u +%Y-%m-%d), $(nproc) cores, $(rustc --version)"
