#!/usr/bin/env bash
# Regenerate screenshots/*.png from real runs of cairn.
#
# The release binary runs in tmux at 120x36 against the scripted model server (`cairn mock-server`)
# playing assets/screenshots/<name>.json, in a scratch copy of assets/screenshots/project/. Keys go
# in with send-keys; `tmux capture-pane -e -p` gives the screen with its colours; aha turns that
# into HTML; headless Chromium renders the HTML to a PNG cropped to the terminal.
#
# Usage: scripts/screenshots.sh [NAME...]     (default: every shot; names are listed in SHOTS)
# Environment:
#   CAIRN_BIN         use this binary instead of building target/release/cairn
#   CARGO_TARGET_DIR  where cargo builds (as for cargo itself)
#   OUT               output directory (default: screenshots/)
#   KEEP=1            keep the scratch directory (the .ans and .html files) for inspection
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
ASSETS="$ROOT/assets/screenshots"
OUT=${OUT:-$ROOT/screenshots}
COLS=120
ROWS=36
# The font metrics behind the crop: DejaVu Sans Mono at 14px is 8.43px wide per cell; rows are
# 17px. PAD is the margin around the terminal, in px.
FONT_PX=14
CELL_W=8.43
CELL_H=17
PAD=10
MODEL=claude-sonnet-4-5
SHOTS=(conversation edit-unified edit-side-by-side hunk-rejected edit-cell session-diff bash-prompt
    plan-approval compaction mcp-detail)

log() { printf 'screenshots: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

# --- tools ----------------------------------------------------------------------------------

ensure_tools() {
    local missing=()
    command -v tmux >/dev/null || missing+=(tmux)
    command -v aha >/dev/null || missing+=(aha)
    command -v chromium >/dev/null || missing+=(chromium)
    fc-list 2>/dev/null | grep -q "DejaVu Sans Mono" || missing+=(fonts-dejavu-core)
    [ ${#missing[@]} -eq 0 ] && return
    log "installing ${missing[*]}"
    local sudo=()
    [ "$(id -u)" -ne 0 ] && sudo=(sudo)
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
}

ensure_binary() {
    if [ -n "${CAIRN_BIN:-}" ]; then
        # Absolute: cairn runs with the scratch project as its working directory.
        BIN=$(command -v "$CAIRN_BIN" || true)
        [ -n "$BIN" ] || die "CAIRN_BIN=$CAIRN_BIN is not an executable"
        BIN=$(realpath "$BIN")
    else
        log "building the release binary"
        (cd "$ROOT" && cargo build --release --quiet --bin cairn)
        BIN="${CARGO_TARGET_DIR:-$ROOT/target}/release/cairn"
    fi
    [ -x "$BIN" ] || die "no binary at $BIN"
}

# --- one session: a mock server and cairn in tmux -------------------------------------------

WORK=$(mktemp -d)
SOCK="$WORK/tmux.sock"
SERVER_PID=

cleanup() {
    stop_session
    if [ "${KEEP:-0}" = 1 ]; then log "scratch files kept in $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

tm() { tmux -S "$SOCK" "$@"; }

# A fresh project in a fake home, so the header reads ~/inventory on branch main. The path is
# kept short: some views (Grep matches, the Bash prompt's directory) show it absolute.
make_project() {
    DEMO_HOME="$WORK"
    PROJECT="$DEMO_HOME/inventory"
    rm -rf "$PROJECT" "$DEMO_HOME/.local"
    mkdir -p "$PROJECT"
    cp -R "$ASSETS/project/." "$PROJECT/"
    git -C "$PROJECT" init -q -b main
    git -C "$PROJECT" -c user.name=demo -c user.email=demo@example.com add -A
    git -C "$PROJECT" -c user.name=demo -c user.email=demo@example.com commit -qm "inventory"
    trust_project
}

# The fake home has trusted the project once (as the folder-trust question records it in
# ~/.claude.json), so the shots open on the conversation rather than that question.
trust_project() {
    local key
    key=$(realpath "$PROJECT")
    printf '{"projects": {"%s": {"hasTrustDialogAccepted": true}}}\n' "$key" \
        >"$DEMO_HOME/.claude.json"
}

# start_session SCRIPT [cairn args...]: in a fresh project.
start_session() {
    make_project
    start_session_here "$@"
}

# start_session_here SCRIPT [cairn args...]: in the project as it is.
start_session_here() {
    local script="$ASSETS/$1.json"
    shift
    # A file of its own per session: reading a reused one could find the last server's port.
    local out
    out=$(mktemp -p "$WORK" server.XXXXXX)
    "$BIN" mock-server --script "$script" >"$out" 2>&1 &
    SERVER_PID=$!
    local base=''
    for _ in $(seq 100); do
        base=$(sed -n 's/^listening on \(http:[^ ]*\).*/\1/p' "$out")
        [ -n "$base" ] && break
        sleep 0.1
    done
    [ -n "$base" ] || die "mock server did not start: $(cat "$out")"
    local cmd
    cmd="env -i PATH=$PATH HOME=$DEMO_HOME TERM=xterm-256color COLORTERM=truecolor"
    cmd+=" CAIRN_DATA_DIR=$DEMO_HOME/.local/share/cairn ANTHROPIC_BASE_URL=$base"
    cmd+=" ANTHROPIC_API_KEY=demo $BIN --model $MODEL $*"
    tm -f /dev/null new-session -d -s shot -x "$COLS" -y "$ROWS" -c "$PROJECT" "$cmd; sleep 60"
    wait_for "$MODEL"
}

stop_session() {
    tm kill-server 2>/dev/null || true
    if [ -n "$SERVER_PID" ]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
        SERVER_PID=
    fi
}

screen() { tm capture-pane -p -t shot; }
keys() { tm send-keys -t shot "$@"; }
type_text() { tm send-keys -t shot -l "$1"; }

# wait_for TEXT [SECONDS]: until the screen shows TEXT.
wait_for() {
    local deadline=$((SECONDS + ${2:-20}))
    until screen | grep -qF -- "$1"; do
        [ $SECONDS -lt $deadline ] || die "timed out waiting for '$1'; screen:
$(screen)"
        sleep 0.1
    done
}

# Until two captures 300 ms apart agree (at most 3 s: a spinner may keep ticking).
settle() {
    local prev='' now
    for _ in $(seq 10); do
        now=$(tm capture-pane -e -p -t shot)
        [ "$now" = "$prev" ] && return
        prev=$now
        sleep 0.3
    done
}

submit() {
    type_text "$1"
    keys Enter
}

# --- the picture ----------------------------------------------------------------------------

# The 16 base colours, as a dark terminal theme would show them (0-7 normal, 8-15 bright).
PALETTE="40;44;52 224;108;117 152;195;121 229;192;123 81;154;224 198;120;221 86;182;194 171;178;191"
PALETTE+=" 127;135;148 255;123;134 181;232;144 255;214;138 130;196;255 222;152;240 127;214;224 255;255;255"

# Rewrite every base colour (30-37, 90-97, 40-47, 100-107, 38;5;0-15, 48;5;0-15) as RGB. aha
# mishandles its own classes for them: a background reset after a bright colour drops the
# "bright" (grey text turns black), and an RGB foreground on a class background yields a broken
# style attribute. RGB colours it writes as plain inline styles.
to_rgb() {
    PALETTE="$PALETTE" perl -pe '
        BEGIN { @c = split / /, $ENV{PALETTE}; }
        s{\e\[([0-9;]*)m}{
            my @p = split /;/, $1, -1; my @o;
            while (@p) {
                my $x = shift @p;
                if (($x eq "38" || $x eq "48") && @p >= 2 && $p[0] eq "5" && $p[1] < 16) {
                    push @o, $x, 2, $c[$p[1]]; splice @p, 0, 2;
                } elsif (($x eq "38" || $x eq "48") && @p && $p[0] eq "5") {
                    push @o, $x, splice(@p, 0, 2);
                } elsif (($x eq "38" || $x eq "48") && @p && $p[0] eq "2") {
                    push @o, $x, splice(@p, 0, 4);
                } elsif ($x =~ /^(3|4|9|10)([0-7])$/) {
                    my ($kind, $n) = ($1, $2);
                    my $bg = ($kind eq "4" || $kind eq "10");
                    $n += 8 if ($kind eq "9" || $kind eq "10");
                    push @o, ($bg ? 48 : 38), 2, $c[$n];
                } else {
                    push @o, $x;
                }
            }
            "\e[" . join(";", @o) . "m"
        }ge'
}

# shoot NAME: the screen as it is now -> $OUT/NAME.png
shoot() {
    local name=$1
    settle
    # -N keeps trailing spaces: they may carry a background (a diff line to the right edge).
    tm capture-pane -e -N -p -t shot >"$WORK/$name.ans"
    {
        cat <<EOF
<!DOCTYPE html>
<html><head><meta charset="utf-8"><style>
html, body { margin: 0; background: #1b1d23; }
pre { margin: 0; padding: ${PAD}px; color: #d4d7dd; background: #1b1d23;
      font: ${FONT_PX}px/${CELL_H}px "DejaVu Sans Mono", monospace; font-variant-ligatures: none; }
.reset { color: #d4d7dd; } .bg-reset { background-color: #1b1d23; }
.inverted { color: #1b1d23; } .bg-inverted { background-color: #d4d7dd; }
.underline { text-decoration: underline; } .bold { font-weight: bold; }
.italic { font-style: italic; } .crossed-out { text-decoration: line-through; }
</style></head><body><pre>
EOF
        # Colours arrive as RGB (to_rgb) and become inline styles; -s keeps attributes as classes.
        # DejaVu has no U+23BF (the elbow before tool output); the box corner is what terminal
        # fonts draw for it.
        to_rgb <"$WORK/$name.ans" | aha -s -n | sed 's#⎿#└#g'
        printf '</pre></body></html>\n'
    } >"$WORK/$name.html"
    local w h
    w=$(awk -v c="$COLS" -v cw="$CELL_W" -v p="$PAD" 'BEGIN { printf "%d", c * cw + 2 * p + 0.999 }')
    h=$((ROWS * CELL_H + 2 * PAD))
    chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --hide-scrollbars --user-data-dir="$(mktemp -d -p "$WORK")" \
        --screenshot="$OUT/$name.png" --window-size="$w,$h" "file://$WORK/$name.html" \
        >"$WORK/chromium.log" 2>&1 || die "chromium failed: $(tail -5 "$WORK/chromium.log")"
    [ -s "$OUT/$name.png" ] || die "no $OUT/$name.png"
    log "wrote $OUT/$name.png"
}

# --- the shots ------------------------------------------------------------------------------

wanted() {
    [ ${#ONLY[@]} -eq 0 ] && return 0
    local n
    for n in "${ONLY[@]}"; do [ "$n" = "$1" ] && return 0; done
    return 1
}

shot_conversation() {
    start_session conversation
    submit "Where are the TODOs in this crate, and how big is it?"
    wait_for "Want me to fix all three?"
    shoot conversation
    stop_session
}

# One session gives five shots: the edit prompt unified, side by side, with a hunk rejected,
# and after approving every hunk, the edit's cell and /diff.
shot_edit() {
    start_session edit
    submit "Fix the TODOs in src/inventory.rs"
    wait_for "Allow this?"
    wanted edit-unified && shoot edit-unified
    if wanted edit-side-by-side; then
        keys v
        sleep 0.3
        shoot edit-side-by-side
        keys v
        sleep 0.3
    fi
    if wanted hunk-rejected; then
        keys Tab
        sleep 0.2
        keys Space
        wait_for "rejected"
        shoot hunk-rejected
    fi
    if wanted edit-cell || wanted session-diff; then
        keys 1
        wait_for "Done."
    fi
    wanted edit-cell && shoot edit-cell
    if wanted session-diff; then
        submit "/diff"
        wait_for "Session diff"
        shoot session-diff
    fi
    stop_session
}

shot_bash() {
    start_session bash
    submit "Run the tests"
    wait_for "Allow this?"
    shoot bash-prompt
    stop_session
}

shot_plan() {
    start_session plan --permission-mode plan
    submit "Plan how to make Inventory safe to use"
    wait_for "keep planning"
    shoot plan-approval
    stop_session
}

# A turn, then /compact: the compaction's row, expanded with Ctrl+O to show the summary.
shot_compaction() {
    start_session compact
    submit "What does Inventory keep, and what can go wrong with it?"
    wait_for "on the shelf."
    submit "/compact"
    wait_for "Conversation compacted"
    keys C-o
    wait_for "## Next" 5 || true
    shoot compaction
    stop_session
}

# A project server that fails at start (approved in the local settings): /mcp, then Enter on
# it: why in plain words, its stderr, its log file, and the actions.
shot_mcp() {
    start_session conversation
    stop_session
    cat >"$PROJECT/.mcp.json" <<'JSON'
{"mcpServers": {"orders-db": {"command": "sh", "args": ["-c",
  "echo 'orders-db: cannot open /var/lib/orders/orders.db: no such file' >&2; echo 'hint: set ORDERS_DB to the database path' >&2; exit 3"]}}}
JSON
    mkdir -p "$PROJECT/.claude"
    printf '{"enabledMcpjsonServers": ["orders-db"]}\n' >"$PROJECT/.claude/settings.local.json"
    start_session_here conversation
    wait_for "MCP server failed"
    submit "/mcp"
    wait_for "MCP servers"
    keys Enter
    wait_for "hint: set ORDERS_DB"
    shoot mcp-detail
    stop_session
}

ONLY=("$@")
for n in "${ONLY[@]}"; do
    printf '%s\n' "${SHOTS[@]}" | grep -qx -- "$n" || die "unknown shot '$n' (known: ${SHOTS[*]})"
done
ensure_tools
ensure_binary
mkdir -p "$OUT"
wanted conversation && shot_conversation
if wanted edit-unified || wanted edit-side-by-side || wanted hunk-rejected \
    || wanted edit-cell || wanted session-diff; then
    shot_edit
fi
wanted bash-prompt && shot_bash
wanted plan-approval && shot_plan
wanted compaction && shot_compaction
wanted mcp-detail && shot_mcp
log "done"
