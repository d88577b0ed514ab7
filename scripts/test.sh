#!/usr/bin/env bash
# The whole test suite: format, lints, native tests, release build, browser tests.
# Prints one summary line per step and a final "N passed, N failed" line.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
mkdir -p target/e2e
# Disk: a clean clone's run leaves ~2.4 GB in target/ (README, "Development"). Say what is
# free, so that a "No space left on device" further down is not a surprise.
need_gb=4
free_gb=$(df -Pk . | awk 'NR == 2 { print int($4 / 1048576) }')
echo "disk: ${free_gb} GB free for target/ (a clean run needs about ${need_gb} GB)"
if [ "${free_gb:-0}" -lt "$need_gb" ]; then
  echo "warning: less than ${need_gb} GB free: builds may fail with \"No space left on device\"" >&2
fi
passed=0; failed=0; failed_steps=()
step() {
  local name="$1"; shift
  echo "=== $name"
  local t0=$SECONDS
  if "$@"; then
    passed=$((passed + 1)); echo "--- PASS $name ($((SECONDS - t0)) s)"
  else
    failed=$((failed + 1)); failed_steps+=("$name"); echo "--- FAIL $name ($((SECONDS - t0)) s)"
  fi
}
step "cargo fmt --check" cargo fmt --all -- --check
step "cargo clippy" cargo clippy --workspace --all-targets -j2 -- -D warnings
step "cargo test" cargo test --workspace -j2
# The core as the page builds it (no embedded catalog, no import, no OOM reader): its own tests
# compile and pass; those that read the embedded catalog need `bundled`.
step "cargo test (core, no features)" cargo test -p vramfit-core --no-default-features -j2
step "cargo clippy (core, no features)" cargo clippy -p vramfit-core --no-default-features --all-targets -j2 -- -D warnings
step "cli build" cargo build -p vramfit-cli -j2
step "accuracy report and held-out targets" cargo run --release -q -p vramfit-cli -j2 -- accuracy --check docs/ACCURACY.md
step "trunk build --release" trunk build --release
step "size budget" bash scripts/size_budget.sh
# --test-timeout: a test file that hangs (a failed assertion that left a server open keeps node
# alive) fails after 10 minutes instead of running into CI's limit.
step "browser tests" bash -c 'cd tests/e2e && node --test --test-concurrency=1 --test-timeout=600000 ./*.test.mjs'
echo
if [ "$failed" -gt 0 ]; then
  echo "FAILED steps: ${failed_steps[*]}"
fi
echo "steps: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
