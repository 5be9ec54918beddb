#!/usr/bin/env bash
# Side by side with Claude Code and Codex on this machine, against the same scripted model
# (`cairn mock-server`), interleaved: one-turn `-p hi` and the 3-turn read -> edit session,
# wall time (hyperfine) and peak RSS (GNU time), plus cairn with a 5 s MCP server, the one-line
# edit of a 49 MB file, and at the end request sizes (bench-tokens.sh) and the first request's
# delay with a slow MCP server (bench-first-request.sh): every row of issue 28 in one command.
#
# The peers are npm packages installed OUTSIDE the repository (never committed):
#   npm install --prefix /work/peers @anthropic-ai/claude-code @openai/codex
# PEERS=/work/peers by default. No real keys: every program is pointed at 127.0.0.1.
# Codex 0.171 speaks only the Responses API (`POST /v1/responses`, served by the mock). Its one
# tool that touches files is `exec`, a freeform (custom) tool running JavaScript in which
# `tools.exec_command` and `tools.apply_patch` are called: the mock streams it as a
# `custom_tool_call`, so Codex gets its own scripts of the same shapes (`*-codex.json`: `cat`
# or `sed -n` for the Read, `apply_patch` for the Edit). Claude Code 2.1 answers the mock and
# uses the same tool names as cairn (Read, Edit), so it runs cairn's scripts.
# Check each program's answer below (`== check`) before trusting a figure.
# Needs: hyperfine, GNU time, jq, python3. Usage: [CAIRN_BIN=…] scripts/bench-peers.sh [runs] (default 20)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20}
# CAIRN_BIN: a cairn binary to use as it is (else a release build is made).
. scripts/bench-common.sh
programs_from_env
# Peak RSS counts the binary's pages the kernel maps, and how many it maps around each page
# touched depends on how the file sits in the page cache: the same binary read ~2 MiB higher
# just after a copy, and ~0.5 MiB lower just after the link, than once read back from disk.
# Drop it from the cache first, so every figure is of the state after a reboot (the first run
# reads it back).
python3 -c 'import os, sys; os.posix_fadvise(os.open(sys.argv[1], os.O_RDONLY), 0, 0, os.POSIX_FADV_DONTNEED)' "$bin"
work=$(mktemp -d)
# The servers start inside `$(serve ...)` subshells, so they are not this shell's jobs: their
# pids are kept in a file for the exit trap.
trap 'kill $(jobs -p) $(cat "$work/pids" 2>/dev/null) 2>/dev/null || true; rm -rf "$work"' EXIT

serve() { # script name -> port
  : >"$work/server.$2.log"
  "$bin" mock-server --script "$1" --port 0 >"$work/server.$2.log" 2>&1 &
  echo $! >>"$work/pids"
  for _ in $(seq 100); do
    port=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/server.$2.log" | head -1)
    [ -n "$port" ] && { echo "$port"; return; }
    sleep 0.05
  done
  echo "mock server did not start" >&2; exit 1
}

export HOME=$work/home CAIRN_DATA_DIR=$work/data
mkdir -p "$HOME" "$work/proj"
p1=$(serve assets/bench/one-turn.json one)
p3=$(serve assets/bench/read-edit.json three)
p3c=$(serve assets/bench/read-edit-codex.json three-codex)
reset="printf 'def f():\n    return 1\n' > $work/proj/lib.py"

# The command line of each program for a prompt against the mock on port $1.
cmd() { # program port prompt
  case $1 in
    cairn) echo "env ANTHROPIC_BASE_URL=http://127.0.0.1:$2 ANTHROPIC_API_KEY=bench $bin -p $3 --permission-mode acceptEdits" ;;
    claude) echo "env ANTHROPIC_BASE_URL=http://127.0.0.1:$2 ANTHROPIC_API_KEY=bench DISABLE_TELEMETRY=1 DISABLE_AUTOUPDATER=1 $claude -p $3 --permission-mode acceptEdits" ;;
    codex) echo "env OPENAI_API_KEY=bench $codex exec --skip-git-repo-check -s workspace-write -c model_provider=mock -c model_providers.mock.name=mock -c model_providers.mock.base_url=http://127.0.0.1:$2/v1 -c model_providers.mock.wire_api=responses -c model_providers.mock.env_key=OPENAI_API_KEY $3" ;;
  esac
}

programs="cairn"
[ -x "$claude" ] && programs="$programs claude" || echo "(Claude Code not installed in $peers: skipped)"
[ -x "$codex" ] && programs="$programs codex" || echo "(Codex not installed in $peers: skipped)"
tool_programs=$programs # the shapes with Read and Edit
# The port of a shape's script for a program: Codex has its own scripts (see above).
port_for() { # program port codex-port
  if [ "$1" = codex ]; then echo "$3"; else echo "$2"; fi
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), load $(cut -d' ' -f1-3 /proc/loadavg)"
for p in $programs; do
  echo "== check: $p"
  (cd "$work/proj" && $(cmd "$p" "$p1" hi) 2>&1 | tail -1) || echo "$p failed"
done
for p in $tool_programs; do
  echo "== check: $p, read -> edit"
  (cd "$work/proj" && sh -c "$reset" && $(cmd "$p" "$(port_for "$p" "$p3" "$p3c")" go) 2>&1 | tail -3; cat lib.py) || echo "$p failed"
done

peak() { # command... -> median peak RSS (KiB) of 10 runs
  for _ in $(seq 10); do
    sh -c "$reset"
    /usr/bin/time -f '%M' "$@" 2>&1 >/dev/null | tail -1
  done | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

for shape in one three; do
  port=$p1; cport=$p1; prompt=hi; these=$programs
  [ $shape = three ] && { port=$p3; cport=$p3c; prompt=go; these=$tool_programs; }
  args=()
  for p in $these; do args+=(-n "$p" "$(cmd "$p" "$(port_for "$p" "$port" "$cport")" "$prompt")"); done
  echo "== $shape-turn (interleaved: hyperfine runs the commands in turn)"
  (cd "$work/proj" && hyperfine -N --warmup 2 --runs "$runs" --prepare "sh -c \"$reset\"" \
    --export-json "$work/$shape.json" "${args[@]}" >/dev/null)
  jq -r '.results[] | "\(.command): median \(.median*1000|.*10|round/10) ms"' "$work/$shape.json"
  for p in $these; do
    # shellcheck disable=SC2046
    echo "$p peak RSS median $(cd "$work/proj" && peak $(cmd "$p" "$(port_for "$p" "$port" "$cport")" "$prompt")) KiB"
  done
done

echo "== cairn -p hi with one MCP server that takes 5 s to start"
cfg=$(jq -nc --arg s "$PWD/tests/fixtures/mcp/fake_server.py" \
  '{mcpServers: {slow: {command: "python3", args: [$s, "--delay", "5"]}}}')
(cd "$work/proj" && hyperfine -N --warmup 1 --runs 5 --export-json "$work/mcp.json" \
  "env ANTHROPIC_BASE_URL=http://127.0.0.1:$p1 ANTHROPIC_API_KEY=bench $bin -p hi --mcp-config '$cfg'" >/dev/null)
jq -r '.results[0] | "median \(.median*1000|.*10|round/10) ms (the whole run)"' "$work/mcp.json"

echo "== one-line Edit of a 49.4 MB file (Read 5 lines at an offset, Edit one): wall and peak RSS, 3 runs each, alternating"
pb=$(serve assets/bench/big-edit.json big)
pbc=$(serve assets/bench/big-edit-codex.json big-codex)
python3 -c "import sys; sys.stdout.writelines('l%07d the quick brown fox jumps over the lazy dog, 0123456789\n' % i for i in range(760000))" > "$work/big.orig"
ls -l "$work/big.orig" | awk '{print "file: " $5 " bytes"}'
for _ in 1 2 3; do
  for p in $tool_programs; do
    cp "$work/big.orig" "$work/proj/big.txt"
    # shellcheck disable=SC2046
    (cd "$work/proj" && /usr/bin/time -f "$p %e s %M KiB" $(cmd "$p" "$(port_for "$p" "$pb" "$pbc")" go) 2>&1 >/dev/null | tail -1)
    grep -c 'THE QUICK' "$work/proj/big.txt" | sed "s/^/$p edited lines: /"
  done
done

# The issue's other rows, with the same binary: request sizes and when the first request leaves
# with a slow MCP server (each script says what it measures).
echo "== request bytes (scripts/bench-tokens.sh)"
CAIRN_BIN=$bin PEERS=$peers CODEX_THREE=assets/bench/read-edit-codex.json scripts/bench-tokens.sh
echo "== first request with a 5 s MCP server (scripts/bench-first-request.sh)"
CAIRN_BIN=$bin PEERS=$peers RUNS=${FIRST_RUNS:-7} scripts/bench-first-request.sh
