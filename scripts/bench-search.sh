#!/usr/bin/env bash
# Compare cairn's Grep and Glob tools with rg and fd over a large tree, and measure the Bash
# tool's overhead for `true`. Needs: apt-get install -y ripgrep fd-find hyperfine.
# Usage: scripts/bench-search.sh [tree]   (default: ~/.cargo/registry/src)
set -euo pipefail
cd "$(dirname "$0")/.."
TREE=${1:-$(echo ~/.cargo/registry/src)}
RUNS=${RUNS:-10}
OUT=${OUT:-target/bench-search}
mkdir -p "$OUT"
cargo build --release --example search_bench
BIN=${CARGO_TARGET_DIR:-target}/release/examples/search_bench
FD=$(command -v fdfind || command -v fd)

echo "tree: $TREE ($(find "$TREE" -type f | wc -l) files, $(du -sh "$TREE" | cut -f1))"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "rg: $(rg --version | head -1), fd: $($FD --version)"

# rg and fd honour .gitignore only inside git repositories unless told otherwise; cairn
# honours it everywhere. --no-require-git makes rg do the same work (fd 8 has no such flag).
hyperfine --warmup 2 --runs "$RUNS" --export-json "$OUT/grep-literal.json" \
  -n 'rg -l literal' "rg -l --no-require-git 'unsafe fn' $TREE" \
  -n 'cairn Grep literal' "$BIN grep 'unsafe fn' $TREE"
hyperfine --warmup 2 --runs "$RUNS" --export-json "$OUT/grep-regex.json" \
  -n 'rg -l regex' "rg -l --no-require-git '[A-Z][a-z]+Error\\b' $TREE" \
  -n 'cairn Grep regex' "$BIN grep '[A-Z][a-z]+Error\\b' $TREE"
hyperfine --warmup 2 --runs "$RUNS" --export-json "$OUT/grep-content.json" \
  -n 'rg -n content' "rg -n --no-require-git 'unsafe fn' $TREE" \
  -n 'cairn Grep content' "$BIN grep 'unsafe fn' $TREE content"
hyperfine --warmup 2 --runs "$RUNS" --export-json "$OUT/glob.json" \
  -n 'fd -g *.rs' "$FD -g '*.rs' $TREE" \
  -n 'cairn Glob **/*.rs' "$BIN glob '**/*.rs' $TREE"

# Medians (hyperfine's summary shows means, which one busy neighbour can skew).
for f in grep-literal grep-regex grep-content glob; do
  python3 - "$OUT/$f.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
ours, theirs = r[1], r[0]
print(f"{theirs['command'][:24]:24} median {theirs['median']*1e3:7.1f} ms | "
      f"{ours['command'][:24]:24} median {ours['median']*1e3:7.1f} ms | "
      f"ratio {ours['median']/theirs['median']:.2f}")
PY
done
"$BIN" bash-overhead 50
