#!/usr/bin/env bash
# When the first model request leaves, with one MCP server that takes 5 s to start configured
# (tests/fixtures/mcp/fake_server.py --delay 5): in `cairn -p`, in the TUI (in tmux, the prompt
# given on the command line), and in the peers' headless modes for reference. The time is from
# just before the program is started to the request's arrival at scripts/record-requests.py,
# which forwards it to `cairn mock-server`. Median of RUNS runs (default 5).
# Needs tmux and python3. Usage: [CAIRN_BIN=…] [PEERS=/work/peers] [RUNS=5] scripts/bench-first-request.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
runs=${RUNS:-5}
work=$(mktemp -d)
socket=$work/tmux.sock
. scripts/bench-common.sh
programs_from_env
trap cleanup EXIT
scratch_home
mock_port=$(serve assets/bench/one-turn.json one)
server=$root/tests/fixtures/mcp/fake_server.py
mcp_json="{\"mcpServers\":{\"slow\":{\"command\":\"python3\",\"args\":[\"$server\",\"--delay\",\"5\"]}}}"
tmux -S "$socket" new-session -d -s bench -x 120 -y 40

# One run: start the program, wait for its first request, print the delay in ms.
first_request() { # program
  local log=$work/requests.$RANDOM
  : >"$log"; : >"$log.port"
  python3 "$root/scripts/record-requests.py" "$mock_port" "$log" >"$log.port" &
  local proxy=$! port
  port=$(port_of "$log.port")
  local anthropic="ANTHROPIC_BASE_URL=http://127.0.0.1:$port ANTHROPIC_API_KEY=bench"
  local start pid=
  start=$(python3 -c 'import time; print(time.time())')
  case $1 in
    cairn-p) (cd "$work/proj" && env $anthropic "$bin" -p hi --mcp-config "$mcp_json" >/dev/null 2>&1) & pid=$! ;;
    cairn-tui) tmux -S "$socket" new-window -t bench -c "$work/proj" \
        "env HOME=$HOME CAIRN_DATA_DIR=$CAIRN_DATA_DIR $anthropic $bin hi --mcp-config '$mcp_json'" ;;
    claude-p) (cd "$work/proj" && env $anthropic DISABLE_TELEMETRY=1 DISABLE_AUTOUPDATER=1 \
        "$claude" -p hi --mcp-config "$mcp_json" >/dev/null 2>&1) & pid=$! ;;
    codex-p) (cd "$work/proj" && OPENAI_API_KEY=bench "$codex" exec --skip-git-repo-check \
        -c model_provider=mock -c model_providers.mock.name=mock \
        -c "model_providers.mock.base_url=http://127.0.0.1:$port/v1" \
        -c model_providers.mock.wire_api=responses -c model_providers.mock.env_key=OPENAI_API_KEY \
        -c 'mcp_servers.slow.command="python3"' -c "mcp_servers.slow.args=[\"$server\",\"--delay\",\"5\"]" \
        hi >/dev/null 2>&1) & pid=$! ;;
  esac
  for _ in $(seq 300); do [ -s "$log" ] && break; sleep 0.05; done
  python3 -c '
import json, sys
lines = open(sys.argv[1]).read().splitlines()
print(round((json.loads(lines[0])["t"] - float(sys.argv[2])) * 1000) if lines else "none")' "$log" "$start"
  tmux -S "$socket" kill-window -t bench:1 2>/dev/null || true
  [ -n "$pid" ] && { wait "$pid" 2>/dev/null || true; }
  kill "$proxy" 2>/dev/null || true
}

programs="cairn-p cairn-tui"
[ -x "$claude" ] && programs="$programs claude-p"
[ -x "$codex" ] && programs="$programs codex-p"
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); first request after start, ms (median of $runs)"
for p in $programs; do
  for _ in $(seq "$runs"); do first_request "$p"; done \
    | sort -n | awk -v p="$p" '{a[NR]=$1} END {printf "%-10s %s  (all: ", p, a[int((NR+1)/2)]; for (i=1;i<=NR;i++) printf "%s ", a[i]; print ")"}'
done
