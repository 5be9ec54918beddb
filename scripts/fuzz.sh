#!/usr/bin/env bash
# Runs every fuzz target (the tests in tests/fuzz_*.rs) for a given time each, on stable Rust.
#   scripts/fuzz.sh [SECONDS] [FILE...]    e.g. scripts/fuzz.sh 600, scripts/fuzz.sh 60 fuzz_sse
# FUZZ_JOBS=N runs N targets at once (default 1); FUZZ_PROFILE=release builds optimised (default:
# the test profile, which shares the build of `cargo test`). A failure prints the shrunk input
# and the script exits non-zero; every target's case count goes to target/fuzz-report.txt.
set -euo pipefail
cd "$(dirname "$0")/.."

secs=${1:-600}
[ $# -gt 0 ] && shift
files=("$@")
if [ ${#files[@]} -eq 0 ]; then
  for f in tests/fuzz_*.rs; do files+=("$(basename "$f" .rs)"); done
fi
profile=()
[ "${FUZZ_PROFILE:-}" = release ] && profile=(--release)
jobs=${FUZZ_JOBS:-1}

args=()
for f in "${files[@]}"; do args+=(--test "$f"); done
# Build once, then run the test binaries themselves, so no cargo lock is held while fuzzing.
declare -A bin
while IFS= read -r line; do
  if [[ $line =~ Executable\ tests/([a-z0-9_]+)\.rs\ \((.*)\) ]]; then
    bin[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
  fi
done < <(cargo test "${profile[@]}" --no-run "${args[@]}" 2>&1)

targets=()
for f in "${files[@]}"; do
  exe=${bin[$f]:-}
  [ -n "$exe" ] || { echo "no test binary for $f" >&2; exit 1; }
  while IFS= read -r name; do
    targets+=("$exe $name")
  done < <("$exe" --list 2>/dev/null | sed -n 's/: test$//p')
done

report=target/fuzz-report.txt
: >"$report"
echo "fuzzing ${#targets[@]} targets for ${secs}s each, ${jobs} at a time"
printf '%s\n' "${targets[@]}" | CAIRN_FUZZ_SECS=$secs xargs -P "$jobs" -L 1 sh -c '
  out=$("$0" --exact "$1" --nocapture --test-threads=1 2>&1)
  status=$?
  line=$(printf "%s\n" "$out" | grep -oE "fuzz target .*" | tail -n 1)
  if [ $status -eq 0 ]; then
    echo "ok   $(basename "$0" | sed "s/-[0-9a-f]*$//")::$1 ${line#fuzz target }" | tee -a '"$report"'
  else
    printf "%s\n" "$out" >&2
    echo "FAIL $(basename "$0")::$1" | tee -a '"$report"'
    exit 255
  fi
'
echo "all ${#targets[@]} targets ran ${secs}s without a failure (report: $report)"
