# Sourced by the bench scripts that drive programs against `cairn mock-server` (bench-tokens,
# bench-first-request, link-order): the programs, a scratch home with a trusted project, and
# the port a server prints. Needs `work` set to a scratch directory first.

# $bin (CAIRN_BIN, else a release build is made) and the peers' $claude and $codex (npm
# packages under PEERS, default /work/peers; see scripts/bench-peers.sh).
programs_from_env() {
  peers=${PEERS:-/work/peers}
  bin=${CAIRN_BIN:-}
  if [ -z "$bin" ]; then
    cargo build --release --quiet
    bin=${CARGO_TARGET_DIR:-$PWD/target}/release/cairn
  fi
  claude=$peers/node_modules/.bin/claude
  codex=$peers/node_modules/.bin/codex
}

# A fresh HOME and data dir under $work, and $work/proj trusted as the folder-trust question
# records it (~/.claude.json), so the TUI opens on the conversation.
scratch_home() {
  export HOME=$work/home CAIRN_DATA_DIR=$work/data
  mkdir -p "$HOME" "$work/proj"
  printf '{"projects": {"%s": {"hasTrustDialogAccepted": true}}}\n' "$(realpath "$work/proj")" \
    >"$HOME/.claude.json"
}

# The port a server printed ("127.0.0.1:PORT") in its log file, waiting up to 5 s for it.
port_of() { # log file
  local port
  for _ in $(seq 100); do
    port=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\).*/\1/p' "$1" 2>/dev/null | head -1)
    [ -n "$port" ] && { echo "$port"; return; }
    sleep 0.05
  done
  echo "did not start: $1" >&2
  exit 1
}

# Start `$bin mock-server` on a script in the background; print its port. It runs in a command
# substitution's subshell, so it is not the script's job: its pid is kept for `cleanup`.
serve() { # script name
  "$bin" mock-server --script "$1" --port 0 >"$work/mock.$2.log" 2>&1 &
  echo $! >>"$work/pids"
  port_of "$work/mock.$2.log"
}

# For `trap cleanup EXIT`: stop the servers, the jobs and the tmux server ($socket, if set),
# and remove $work.
cleanup() {
  if [ -n "${socket:-}" ]; then tmux -S "$socket" kill-server 2>/dev/null || true; fi
  kill $(cat "$work/pids" 2>/dev/null) $(jobs -p) 2>/dev/null || true
  rm -rf "$work"
}
