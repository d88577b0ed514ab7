#!/usr/bin/env bash
# Installs what vramfit needs, at pinned versions, from crates.io, npm and Debian only.
# Idempotent: every step checks first and skips what is already there.
#   setup.sh build   tools to build the app (wasm target, trunk, wasm-bindgen-cli, wasm-split-cli, wasm-opt,
#                    playwright-core and Chromium, which prerender the home page's first result)
#   setup.sh all     build tools plus chromedriver
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
MODE="${1:-all}"
TRUNK_VERSION="0.21.14"   # 0.22 needs rustc >= 1.96.1
# wasm-bindgen-cli must equal the wasm-bindgen that Cargo.lock resolves.
WBG_VERSION="$(awk '/^name = "wasm-bindgen"$/{getline; gsub(/version = |"/,""); print; exit}' Cargo.lock)"
log() { printf '[setup] %s\n' "$*"; }

# 1. Rust toolchain and wasm target (rust-toolchain.toml pins both).
# The pin names a version ("1.95.0"); the machine's one toolchain is installed as "stable".
# Where that stable is the pinned version, it is registered under the pin's name too, so
# that rustup uses it instead of fetching a second copy (`+stable` and `toolchain list`
# select or list without installing).
PIN="$(sed -n 's/^channel = "\(.*\)"$/\1/p' rust-toolchain.toml)"
if ! rustup toolchain list 2>/dev/null | grep -q "^$PIN-" \
  && [ "$(rustc +stable --version 2>/dev/null | awk '{print $2}')" = "$PIN" ]; then
  HOST="$(rustc +stable -vV | sed -n 's/^host: //p')"
  TOOLCHAINS="${RUSTUP_HOME:-$HOME/.rustup}/toolchains"
  log "registering the installed stable ($PIN) as toolchain $PIN"
  ln -s "$TOOLCHAINS/stable-$HOST" "$TOOLCHAINS/$PIN-$HOST"
fi
if ! rustup target list --installed 2>/dev/null | grep -q '^wasm32-unknown-unknown$'; then
  log "adding wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

# Python 3 runs the Trunk post-build hook that writes catalog-sources.json (Trunk.toml).
if ! command -v python3 >/dev/null; then
  log "python3 is required (Debian: apt-get install python3) for scripts/catalog_sources.py"
  exit 1
fi

# A C compiler: `ring` (rustls, the CLI's Hub client) and trunk's dependencies build C.
if ! command -v cc >/dev/null; then
  log "installing Debian gcc (ring, the CLI's TLS, builds C)"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q gcc libc6-dev
fi

# 2. trunk
if [ "$(trunk --version 2>/dev/null | awk '{print $2}')" != "$TRUNK_VERSION" ]; then
  log "installing trunk $TRUNK_VERSION (about 15 minutes on 2 cores)"
  cargo install --locked trunk --version "$TRUNK_VERSION"
else
  log "trunk $TRUNK_VERSION present"
fi

# 3. wasm-bindgen-cli (without --locked: a locked dependency is missing from the registry)
if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$WBG_VERSION" ]; then
  log "installing wasm-bindgen-cli $WBG_VERSION"
  cargo install wasm-bindgen-cli --version "$WBG_VERSION"
else
  log "wasm-bindgen-cli $WBG_VERSION present"
fi

# 3b. wasm-split-cli: splits the page's wasm into chunks (scripts/page_wasm.py); its section
# names must match the wasm_split_helpers that Cargo.lock resolves (0.2.3 pairs with 0.2.4).
SPLIT_VERSION="0.2.4"
if ! cargo install --list 2>/dev/null | grep -q "^wasm_split_cli_support v$SPLIT_VERSION:" || ! command -v wasm-split-cli >/dev/null; then
  log "installing wasm_split_cli_support $SPLIT_VERSION (wasm-split-cli)"
  cargo install wasm_split_cli_support --version "$SPLIT_VERSION" --features build-binary --locked
else
  log "wasm-split-cli $SPLIT_VERSION present"
fi

# 4. npm tools: binaryen's wasm-opt (Debian's is too old for Rust 1.95 output), terser (the
#    release build's JS glue), playwright-core (drives Debian's Chromium; never downloads a
#    browser), axe-core. Exact pins in package-lock.
if [ ! -x tests/e2e/node_modules/.bin/wasm-opt ] || [ ! -x tests/e2e/node_modules/.bin/terser ] || [ tests/e2e/package-lock.json -nt tests/e2e/node_modules/.package-lock.json ]; then
  log "installing npm tools (tests/e2e)"
  (cd tests/e2e && npm ci --no-audit --no-fund)
else
  log "npm tools present"
fi

# 5. Crates for the offline Trunk build.
cargo fetch --locked >/dev/null

# 6. Chromium (Debian's): the build prerenders the home page's first result in it
#    (scripts/prerender.mjs, a post-build step), and the browser tests drive it.
#    chromedriver only for `all` (no step uses it; kept for WebDriver-based debugging).
if [ ! -x /usr/bin/chromium ] || { [ "$MODE" = "all" ] && [ ! -x /usr/bin/chromedriver ]; }; then
  log "installing Debian chromium"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -q
  pkgs="chromium"; [ "$MODE" = "all" ] && pkgs="chromium chromium-driver"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q $pkgs
else
  log "chromium present"
fi
log "done"
