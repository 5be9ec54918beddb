#!/usr/bin/env bash
# `cairn -p hi` with and without checkpoints, alternating, in an empty project against
# `cairn mock-server` (one-turn script); medians of the wall time of each.
# Usage: scripts/bench-checkpoints.sh BIN [RUNS] [PROJECT_DIR]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=$1; runs=${2:-30}; proj=${3:-}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
"$bin" mock-server --script $repo/assets/bench/one-turn.json --port 0 >"$work/s.log" 2>&1 &
for _ in $(seq 100); do port=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/s.log"|head -1); [ -n "$port" ] && break; sleep 0.05; done
export CAIRN_DATA_DIR=$work/data HOME=$work/home ANTHROPIC_BASE_URL=http://127.0.0.1:$port ANTHROPIC_API_KEY=bench
mkdir -p $HOME
[ -z "$proj" ] && { proj=$work/proj; mkdir -p $proj; }
cd "$proj"
for i in $(seq $runs); do
  for mode in on off; do
    if [ $mode = off ]; then export CAIRN_CHECKPOINTS=off; else unset CAIRN_CHECKPOINTS; fi
    s=$(date +%s%N); "$bin" -p hi >/dev/null; e=$(date +%s%N)
    echo "$mode $(( (e-s)/1000 ))"
  done
done > $work/t
for mode in on off; do
  grep "^$mode " $work/t | awk '{print $2}' | sort -n | awk -v m=$mode '{a[NR]=$1} END {printf "%s: median %.2f ms (min %.2f, max %.2f, n=%d)\n", m, a[int((NR+1)/2)]/1000, a[1]/1000, a[NR]/1000, NR}'
done
echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
