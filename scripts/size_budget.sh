#!/usr/bin/env bash
# Transfer budgets, gzip -9, with a per-file table:
# - first load: index.html (with the css and the main wasm chunk inline, a character per byte:
#   scripts/page_wasm.py), the service worker and every file index.html names outside its
#   `<meta>` tags but the calculator's (the app's js, the chunk loader, catalog file, manifest
#   and icon): what a shared link's first result waits for (src/first.rs);
# - the calculator: the app split (`_split_app.wasm`, src/lib.rs `mount`: Leptos, the shell,
#   the inputs, the first view's top) and the shared chunks it needs, which the home page
#   fetches beside the first load and a shared link right after its first result
#   (scripts/page_wasm.py);
# - the rest of "Size it": the first view's chunk below the first result and the shared
#   chunks it needs (`_split_size_rest.wasm`, `_chunk_<n>.wasm`; src/views.rs), which the
#   page fetches as soon as the live page's first result is painted; then the first visit's
#   total, all three together. Which split modules need a shared chunk, the chunk loader (`_split.js`,
#   written by wasm-split-cli) says in the comment above it (`/* size_rest, views */`);
# - the views chunk of the page's wasm (src/views.rs: every view but "Size it", the command
#   checker's results; scripts/page_wasm.py) and the shared chunks it needs beyond the first
#   visit's, fetched when one of them is first shown;
# - the import worker (crates/vramfit-worker: safetensors import, OOM diagnosis) and the page's
#   client of it (`_split_worker_client.wasm`, src/worker_client.rs, with the shared chunks it
#   needs beyond the first visit's), fetched on first use of those features.
# A shared chunk that two of the last two need is in both tables: either may come first.
# The last two, and the catalog's sources (fetched when the Catalog view opens), are named only
# in a `<meta>`, and the service worker caches them a moment after the first result.
# Budgets (bytes) live in scripts/size_budget.txt, app_budget.txt, size_rest_budget.txt, views_budget.txt and worker_budget.txt, each set
# with >= 3 % headroom over the measured size (ARCHITECTURE.md, "Bundle policy"), so that
# routine work does not fail here; lower them as the bundle shrinks.
# Also: the build is path-independent (no checkout or cargo path in any wasm).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f dist/index.html ] || { echo "dist/index.html is missing: run trunk build --release first"; exit 1; }
first=(dist/index.html dist/sw.js)
app=()
views=()
rest=()
worker=()
# The page's markup (without the main chunk's bytes, which hold some names as text:
# scripts/main_chunk.py `outside`), less its <meta> tags.
outside_meta=$(python3 scripts/main_chunk.py --outside dist/index.html | sed -E 's/<meta\b[^>]*>//g')
# The split modules that need each shared chunk, from the comment above its loader.
declare -A chunk_users
while read -r id users; do chunk_users[$id]=$users; done < <(awk '
  /^\/\* [^*]+ \*\/$/ { u = $0; gsub(/^\/\* | \*\/$|,/, "", u); next }
  /^const __chunk_[0-9]+ = makeLoad/ { match($0, /__chunk_[0-9]+/); print substr($0, RSTART + 8, RLENGTH - 8), u }
  { u = "" }' dist/vramfit-web-*_split.js)
for f in dist/*; do
  n=$(basename "$f")
  case "$n" in index.html | sw.js) continue ;; esac
  case "$n" in
    vramfit-web-*_split_app.wasm) app+=("$f") ;;
    vramfit-web-*_split_views.wasm) views+=("$f") ;;
    vramfit-web-*_split_size_rest.wasm) rest+=("$f") ;;
    vramfit-web-*_split_worker_client.wasm) worker+=("$f") ;;
    vramfit-web-*_split_*.wasm) echo "$n: a split module this script does not know"; exit 1 ;;
    vramfit-web-*_chunk_*.wasm)
      id=${n##*_chunk_}; users=${chunk_users[${id%.wasm}]:-}
      [ -n "$users" ] || { echo "$n: the chunk loader does not say which modules need it"; exit 1; }
      if [[ " $users " == *" app "* ]]; then app+=("$f")
      elif [[ " $users " == *" size_rest "* ]]; then rest+=("$f")
      elif [[ " $users " == *" views "* || " $users " == *" worker_client "* ]]; then
        [[ " $users " == *" views "* ]] && views+=("$f")
        [[ " $users " == *" worker_client "* ]] && worker+=("$f")
      else echo "$n: needed by $users, which no table here counts"; exit 1
      fi ;;
    vramfit-worker*) worker+=("$f") ;;
    *) grep -qF "$n" <<< "$outside_meta" && first+=("$f") ;;
  esac
done
fail=0
sum=0
table() { # title budget-file files...
  local title=$1 budget total=0 raw gz f
  budget=$(tr -dc 0-9 < "$2")
  shift 2
  printf '%s\n%-56s %10s %10s\n' "$title" file raw gzip-9
  for f in "$@"; do
    raw=$(stat -c %s "$f"); gz=$(gzip -9 -c "$f" | wc -c)
    total=$((total + gz))
    printf '%-56s %10d %10d\n' "$(basename "$f")" "$raw" "$gz"
  done
  printf '%-56s %10s %10d  (budget %d)\n\n' total "" "$total" "$budget"
  sum=$total
  [ "$total" -le "$budget" ] || { echo "$title: $total B exceeds the budget $budget B"; fail=1; }
}
table "first load (before a shared link's first result)" scripts/size_budget.txt "${first[@]}"
before=$sum
[ ${#app[@]} -ge 1 ] || { echo "expected the calculator (vramfit-web-*_split_app.wasm) in dist/"; exit 1; }
table "the calculator (beside the first load on the home page, after the first result on a shared link)" scripts/app_budget.txt "${app[@]}"
before=$((before + sum))
[ ${#rest[@]} -ge 1 ] || { echo "expected the rest of \"Size it\" (vramfit-web-*_split_size_rest.wasm) in dist/"; exit 1; }
table "rest of \"Size it\" (right after the first result)" scripts/size_rest_budget.txt "${rest[@]}"
printf 'first visit, all three: %d B gzip\n\n' $((before + sum))
[ "$(printf '%s\n' "${worker[@]}" | grep -c 'vramfit-worker-')" -eq 3 ] || { echo "expected the import worker's loader, js and wasm in index.html"; exit 1; }
printf '%s\n' "${worker[@]}" | grep -q '_split_worker_client\.wasm$' || { echo "expected the worker's client chunk (vramfit-web-*_split_worker_client.wasm) in dist/"; exit 1; }
printf '%s\n' "${views[@]}" | grep -q '_split_views\.wasm$' || { echo "expected the views chunk (vramfit-web-*_split_views.wasm) in dist/"; exit 1; }
for f in "${views[@]}" "${rest[@]}" "${worker[@]}"; do
  grep -qF "$(basename "$f")" <<< "$outside_meta" && { echo "index.html names $(basename "$f") outside its <meta>: the first load would fetch it before the first result"; exit 1; }
done
table "views chunk (when another view is first shown)" scripts/views_budget.txt "${views[@]}"
table "import worker and its client (on first use)" scripts/worker_budget.txt "${worker[@]}"
root=$(pwd)
# The main chunk is in index.html (scripts/main_chunk.py): checked decoded, as the others.
main_chunk=$(mktemp)
trap 'rm -f "$main_chunk"' EXIT
python3 scripts/main_chunk.py dist/index.html "$main_chunk"
for f in dist/*.wasm "$main_chunk"; do
  name=$(basename "$f")
  [ "$f" = "$main_chunk" ] && name="index.html's main chunk"
  for p in "$root" "${CARGO_HOME:-$HOME/.cargo}"; do
    if grep -qaF "$p" "$f"; then
      echo "$name embeds the build path $p: build through scripts/env.sh (--remap-path-prefix)"
      fail=1
    fi
  done
done
exit $fail
