#!/usr/bin/env bash
# Time from start to the first model request in the TUI (`cairn hi` in tmux), with no MCP server
# and with the two reference servers configured (server-everything and server-filesystem over
# stdio). Servers connect in the background, so the two should match. The figure is read from the
# log: the first frame's line gives the start (`N ms after start (unix_ms=U)`), the line
# `first model request sent (unix_ms=R)` the request; R - U + N is printed per run, then medians.
# Needs: tmux, jq, node, and the servers installed in $CARGO_TARGET_DIR/mcp-servers (as .ci/run
# does). Builds a release binary. Usage: scripts/bench-mcp-start.sh [runs]  (default 15 each)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-15}
target=${CARGO_TARGET_DIR:-target}
cargo build --release --quiet
bin=$target/release/cairn
servers=$(cd "$target/mcp-servers/node_modules/@modelcontextprotocol" && pwd)
work=$(mktemp -d)
trap 'tmux -L cairnbench kill-server 2>/dev/null || true; kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

"$bin" mock-server --script assets/bench/one-turn.json --port 0 >"$work/server.log" 2>&1 &
for _ in $(seq 100); do
  port=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/server.log" | head -1)
  [ -n "$port" ] && break
  sleep 0.05
done
mkdir -p "$work/home" "$work/proj"
cfg=$(jq -nc --arg ev "$servers/server-everything/dist/index.js" \
  --arg fs "$servers/server-filesystem/dist/index.js" --arg dir "$work/proj" \
  '{mcpServers: {ev: {command: "node", args: [$ev]}, fs: {command: "node", args: [$fs, $dir]}}}')

one() { # with|without -> ms from start to the first model request
  local data="$work/data.$1.$2" log
  log="$data/logs/cairn.log"
  local args=()
  [ "$1" = with ] && args=(--mcp-config "$cfg")
  tmux -L cairnbench new-session -d -x 120 -y 36 -c "$work/proj" \
    env HOME="$work/home" CAIRN_DATA_DIR="$data" CAIRN_LOG=info CAIRN_TRACE_FIRST_FRAME=1 \
    ANTHROPIC_BASE_URL="http://127.0.0.1:$port" ANTHROPIC_API_KEY=bench \
    "$bin" hi "${args[@]}"
  for _ in $(seq 200); do
    grep -q "first model request sent" "$log" 2>/dev/null && break
    sleep 0.05
  done
  tmux -L cairnbench kill-server 2>/dev/null || true
  local frame request
  frame=$(grep -m1 "first frame drawn" "$log" || true)
  request=$(grep -m1 "first model request sent" "$log" | sed 's/.*unix_ms=\([0-9]*\).*/\1/' || true)
  if [ -z "$frame" ] || [ -z "$request" ]; then
    echo "run $2 $1 MCP servers: no first frame or no request in $log" >&2
    return
  fi
  echo "$frame" | sed 's/.*drawn \([0-9.]*\) ms after start (unix_ms=\([0-9]*\)).*/\1 \2/' |
    awk -v r="$request" '{ printf "%.1f\n", r - $2 + $1 }'
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
for i in $(seq "$runs"); do
  for arm in without with; do
    t=$(one $arm "$i")
    [ -n "$t" ] && echo "$arm $t" >>"$work/times"
  done
done
for arm in without with; do
  grep "^$arm " "$work/times" | awk '{print $2}' | sort -n |
    awk -v arm="$arm" '{a[NR]=$1} END {printf "%s MCP servers: median %s ms (min %s, max %s, %d runs)\n", arm, a[int((NR+1)/2)], a[1], a[NR], NR}'
done
