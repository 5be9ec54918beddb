#!/usr/bin/env bash
# Regenerate assets/link-order.txt, the functions typical sessions run, which build.rs hands to
# the linker so they sit together at the front of the binary (see build.rs for why). Runs a
# `dist` build that keeps its symbols under valgrind's callgrind, against `cairn mock-server`
# on 127.0.0.1, in four sessions: `-p hi`, the 3-turn read -> edit session
# (assets/bench/read-edit.json), Grep, Glob, Bash and Write (assets/bench/tools.json), and the
# TUI answering a prompt in tmux. Every function of the
# binary that ran is listed, in the order the sessions met them.
# Needs valgrind, tmux, python3. Usage: scripts/link-order.sh [binary with symbols]
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
bin=${1:-}
if [ -z "$bin" ]; then
  cargo rustc --profile dist --locked --bin cairn --quiet -- -C strip=none
  bin=${CARGO_TARGET_DIR:-$PWD/target}/dist/cairn
fi
work=$(mktemp -d)
socket=$work/tmux.sock
. scripts/bench-common.sh
trap cleanup EXIT
scratch_home
one=$(serve assets/bench/one-turn.json one)
three=$(serve assets/bench/read-edit.json three)
tools=$(serve assets/bench/tools.json tools)
grind="valgrind --tool=callgrind --demangle=no --callgrind-out-file"
cd "$work/proj"
ANTHROPIC_BASE_URL=http://127.0.0.1:$one ANTHROPIC_API_KEY=bench \
  $grind="$work/1.out" "$bin" -p hi >/dev/null 2>"$work/1.err"
printf 'def f():\n    return 1\n' >lib.py
ANTHROPIC_BASE_URL=http://127.0.0.1:$three ANTHROPIC_API_KEY=bench \
  $grind="$work/2.out" "$bin" -p go --permission-mode acceptEdits >/dev/null 2>"$work/2.err"
grep -q 'return 2' lib.py || { echo "the read -> edit session did not edit" >&2; exit 1; }
ANTHROPIC_BASE_URL=http://127.0.0.1:$tools ANTHROPIC_API_KEY=bench \
  $grind="$work/4.out" "$bin" -p go --permission-mode acceptEdits --allowedTools Bash \
  >/dev/null 2>"$work/4.err"
[ -f notes.md ] || { echo "the tools session did not write" >&2; exit 1; }
tmux -S "$socket" new-session -d -x 120 -y 40 -c "$work/proj" \
  "env HOME=$HOME CAIRN_DATA_DIR=$CAIRN_DATA_DIR ANTHROPIC_BASE_URL=http://127.0.0.1:$one ANTHROPIC_API_KEY=bench $grind=$work/3.out $bin hi 2>$work/3.err"
for _ in $(seq 600); do
  tmux -S "$socket" capture-pane -p | grep -q 'that works' && break
  sleep 0.1
done
tmux -S "$socket" capture-pane -p | grep -q 'that works' || { echo "the TUI did not answer" >&2; exit 1; }
tmux -S "$socket" send-keys C-d
for _ in $(seq 300); do [ -s "$work/3.out" ] && break; sleep 0.1; done
sleep 1
cd "$root"
python3 - "$bin" "$work"/1.out "$work"/2.out "$work"/4.out "$work"/3.out >assets/link-order.txt <<'PY'
import os, re, sys
binary = os.path.realpath(sys.argv[1])
seen, order = set(), []
for path in sys.argv[2:]:
    objects, functions = {}, {}
    ob = cob = None
    for line in open(path, errors="replace"):
        kind, _, rest = line.rstrip("\n").partition("=")
        if kind not in ("ob", "cob", "fn", "cfn"):
            continue
        m = re.match(r"\((\d+)\)(?: (.*))?", rest)
        if not m:
            continue
        table = objects if kind in ("ob", "cob") else functions
        if m.group(2) is not None:
            table[m.group(1)] = m.group(2)
        name = table.get(m.group(1))
        if kind == "ob":
            ob = cob = name
        elif kind == "cob":
            cob = name
        else:
            owner = ob if kind == "fn" else cob
            if kind == "cfn":
                cob = ob
            # Callgrind names a function without a symbol by its address: nothing to order.
            if name and name.startswith("0x"):
                continue
            if owner and os.path.realpath(owner) == binary and name not in seen:
                seen.add(name)
                order.append(name)
print("\n".join(order))
PY
echo "assets/link-order.txt: $(wc -l <assets/link-order.txt) functions"
