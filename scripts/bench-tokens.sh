#!/usr/bin/env bash
# Request sizes side by side (issue 28's token rows): the bytes of every model request cairn,
# Claude Code and Codex send for the same scripted sessions, with and without 30 realistic MCP
# tools configured (tests/fixtures/mcp/fake_server.py --tools 30), and an estimate of tokens
# as bytes / 4, the same estimator for every program (no tokenizer runs offline). Requests
# pass through scripts/record-requests.py, which counts them and forwards them to
# `cairn mock-server`.
#
# Shapes: one-turn `hi` for all three; the 3-turn read -> edit session for cairn and Claude
# Code, and for Codex when the mock can script its tools (CODEX_THREE=script.json).
# The peers are npm packages installed outside the repository (see scripts/bench-peers.sh);
# no real keys: every program talks to 127.0.0.1.
# Usage: [CAIRN_BIN=…] [PEERS=/work/peers] scripts/bench-tokens.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$(mktemp -d)
. scripts/bench-common.sh
programs_from_env
trap cleanup EXIT
scratch_home
server=$root/tests/fixtures/mcp/fake_server.py
mcp_json="{\"mcpServers\":{\"tracker\":{\"command\":\"python3\",\"args\":[\"$server\",\"--tools\",\"30\"]}}}"

# Run one program on one script; print the request count and bytes.
measure() { # program script prompt mcp(yes|no)
  local program=$1 script=$2 prompt=$3 mcp=$4 log=$work/requests.$RANDOM
  local mock=$log.mock
  : >"$mock"; : >"$log.port"
  "$bin" mock-server --script "$script" --port 0 >"$mock" 2>&1 &
  local mock_pid=$!
  python3 "$root/scripts/record-requests.py" "$(port_of "$mock")" "$log" >"$log.port" &
  local proxy_pid=$!
  local port
  port=$(port_of "$log.port")
  : >"$log"
  printf 'def f():\n    return 1\n' >"$work/proj/lib.py"
  (
    cd "$work/proj"
    case $program in
      cairn)
        extra=(); [ "$mcp" = yes ] && extra=(--mcp-config "$mcp_json")
        ANTHROPIC_BASE_URL=http://127.0.0.1:$port ANTHROPIC_API_KEY=bench \
          "$bin" -p "$prompt" --permission-mode acceptEdits "${extra[@]}" ;;
      claude)
        extra=(); [ "$mcp" = yes ] && extra=(--mcp-config "$mcp_json")
        ANTHROPIC_BASE_URL=http://127.0.0.1:$port ANTHROPIC_API_KEY=bench DISABLE_TELEMETRY=1 \
          DISABLE_AUTOUPDATER=1 "$claude" -p "$prompt" --permission-mode acceptEdits "${extra[@]}" ;;
      codex)
        extra=(); [ "$mcp" = yes ] && extra=(-c 'mcp_servers.tracker.command="python3"' \
          -c "mcp_servers.tracker.args=[\"$server\",\"--tools\",\"30\"]")
        OPENAI_API_KEY=bench "$codex" exec --skip-git-repo-check -s workspace-write \
          -c model_provider=mock -c model_providers.mock.name=mock \
          -c "model_providers.mock.base_url=http://127.0.0.1:$port/v1" \
          -c model_providers.mock.wire_api=responses -c model_providers.mock.env_key=OPENAI_API_KEY \
          "${extra[@]}" "$prompt" ;;
    esac
  ) >"$work/answer" 2>&1 || echo "($program failed: $(tail -1 "$work/answer"))" >&2
  kill "$proxy_pid" "$mock_pid" 2>/dev/null || true
  wait "$proxy_pid" "$mock_pid" 2>/dev/null || true
  python3 -c '
import json, sys
sizes = [json.loads(line)["bytes"] for line in open(sys.argv[1])]
print(len(sizes), sum(sizes))' "$log"
}

programs="cairn"
[ -x "$claude" ] && programs="$programs claude" || echo "(Claude Code not installed in $peers: skipped)"
[ -x "$codex" ] && programs="$programs codex" || echo "(Codex not installed in $peers: skipped)"
echo "machine: $(nproc) cores; cairn $("$bin" --version)"
printf '%-8s %-9s %-9s %9s %12s %10s\n' program shape mcp requests bytes "~tokens"
for shape in one three; do
  for program in $programs; do
    script=assets/bench/one-turn.json prompt=hi
    if [ $shape = three ]; then
      script=assets/bench/read-edit.json prompt=go
      if [ $program = codex ]; then
        [ -n "${CODEX_THREE:-}" ] || { echo "codex    three     (no script for Codex's tools: CODEX_THREE unset)"; continue; }
        script=$CODEX_THREE
      fi
    fi
    for mcp in no yes; do
      read -r count bytes < <(measure "$program" "$root/$script" "$prompt" "$mcp")
      printf '%-8s %-9s %-9s %9s %12s %10s\n' "$program" "$shape" "$mcp" "$count" "$bytes" $((bytes / 4))
    done
  done
done
