#!/usr/bin/env bash
# First-load transfer budget: html + js + wasm + css + manifest of dist/, gzip -9.
# The budget lives in scripts/size_budget.txt (bytes); lower it as the bundle shrinks.
set -euo pipefail
cd "$(dirname "$0")/.."
budget=$(tr -dc 0-9 < scripts/size_budget.txt)
total=0
printf '%-48s %10s %10s\n' file raw gzip-9
for f in dist/index.html dist/*.js dist/*.wasm dist/*.css dist/manifest.webmanifest; do
  [ -f "$f" ] || continue
  raw=$(stat -c %s "$f"); gz=$(gzip -9 -c "$f" | wc -c)
  total=$((total + gz))
  printf '%-48s %10d %10d\n' "$(basename "$f")" "$raw" "$gz"
done
printf '%-48s %10s %10d  (budget %d)\n' total "" "$total" "$budget"
[ "$total" -le "$budget" ] || { echo "first-load transfer $total B exceeds the budget $budget B"; exit 1; }
