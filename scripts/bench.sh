#!/usr/bin/env bash
# Whole-process benchmarks against the scripted model server on this machine.
# Needs: hyperfine and GNU time (apt-get install -y hyperfine time). Builds a release binary.
# Usage: scripts/bench.sh [runs]   (default 30 runs each; figures go to stdout)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-30}
cargo build --release --quiet
bin=${CARGO_TARGET_DIR:-$PWD/target}/release/cairn
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

serve() { # script -> port
  "$bin" mock-server --script "$1" --port 0 >"$work/server.$2.log" 2>&1 &
  for _ in $(seq 100); do
    port=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/server.$2.log" | head -1)
    [ -n "$port" ] && { echo "$port"; return; }
    sleep 0.05
  done
  echo "mock server did not start" >&2; exit 1
}

export CAIRN_DATA_DIR=$work/data HOME=$work/home
mkdir -p "$HOME" "$work/proj"
p1=$(serve assets/bench/one-turn.json one)
p3=$(serve assets/bench/read-edit.json three)

peak_rss() { # command... -> median peak RSS in KiB over 20 runs ($PREPARE runs before each)
  for _ in $(seq 20); do
    [ -n "${PREPARE:-}" ] && sh -c "$PREPARE"
    /usr/bin/time -f '%M' "$@" 2>&1 >/dev/null | tail -1
  done | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "== cairn --version"
hyperfine -N --warmup 5 --runs "$runs" --export-json "$work/v.json" "$bin --version" >/dev/null
jq -r '.results[0] | "median \(.median*1000|.*1000|round/1000) ms"' "$work/v.json"

echo "== one-turn text answer (-p, Anthropic format)"
one="env ANTHROPIC_BASE_URL=http://127.0.0.1:$p1 ANTHROPIC_API_KEY=bench $bin -p hi"
(cd "$work/proj" && hyperfine -N --warmup 5 --runs "$runs" --export-json "$work/one.json" "$one" >/dev/null)
jq -r '.results[0] | "median \(.median*1000|.*1000|round/1000) ms"' "$work/one.json"
(cd "$work/proj" && echo "peak RSS median $(peak_rss env ANTHROPIC_BASE_URL=http://127.0.0.1:$p1 ANTHROPIC_API_KEY=bench "$bin" -p hi) KiB")

echo "== 3-turn read -> edit -> done (-p, acceptEdits)"
reset="printf 'def f():\n    return 1\n' > $work/proj/lib.py"
three="env ANTHROPIC_BASE_URL=http://127.0.0.1:$p3 ANTHROPIC_API_KEY=bench $bin -p go --permission-mode acceptEdits"
(cd "$work/proj" && hyperfine -N --warmup 3 --runs "$runs" --prepare "sh -c \"$reset\"" --export-json "$work/three.json" "$three" >/dev/null)
jq -r '.results[0] | "median \(.median*1000|.*1000|round/1000) ms"' "$work/three.json"
(cd "$work/proj" && echo "peak RSS median $(PREPARE=$reset peak_rss env ANTHROPIC_BASE_URL=http://127.0.0.1:$p3 ANTHROPIC_API_KEY=bench "$bin" -p go --permission-mode acceptEdits) KiB")
