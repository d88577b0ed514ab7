# Sourced by the scripts: puts the project's tools on PATH (npm's wasm-opt first).
VF_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$VF_ROOT/tests/e2e/node_modules/.bin:$HOME/.cargo/bin:$PATH"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
# Path-independent wasm: the checkout's and cargo's paths (in panic locations) are remapped,
# so a clone at another path builds the same bytes (ARCHITECTURE.md, "Bundle policy").
# Setting the variable replaces .cargo/config.toml's rustflags for the target, so the
# `erase_components` cfg is repeated here.
export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS="--cfg erase_components --remap-path-prefix=$VF_ROOT=/vramfit --remap-path-prefix=${CARGO_HOME:-$HOME/.cargo}=/cargo"
