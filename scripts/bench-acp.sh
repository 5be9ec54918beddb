#!/usr/bin/env bash
# `cairn acp` against `cairn -p` (issue 23): time to the first model request and to the first
# session/update, and the RSS a second concurrent session adds. Builds a release binary and
# installs the ACP SDK (tests/acp/package*.json) into target/acp-client.
# Usage: scripts/bench-acp.sh [runs]   (default 20; figures go to stdout)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20}
cargo build --release --quiet
target=${CARGO_TARGET_DIR:-target}
acp_dir="$target/acp-client"
mkdir -p "$acp_dir"
cp tests/acp/package.json tests/acp/package-lock.json "$acp_dir/"
npm ci --prefix "$acp_dir" --no-audit --no-fund --loglevel=error >/dev/null
cp scripts/bench-acp.mjs "$acp_dir/bench-acp.mjs"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
CAIRN_BIN="$(realpath "$target/release/cairn")" RUNS="$runs" node "$acp_dir/bench-acp.mjs"
