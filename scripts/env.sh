# Sourced by the scripts: puts the project's tools on PATH (npm's wasm-opt first).
VF_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$VF_ROOT/tests/e2e/node_modules/.bin:$HOME/.cargo/bin:$PATH"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
