#!/usr/bin/env bash
# Instructions per agent-loop run, counted by callgrind in the client process only.
#
# Each variant runs N1 and then N2 times; (I(N2) - I(N1)) / (N2 - N1) cancels start-up,
# the TLS/runtime set-up and the warm-up runs, leaving the steady-state cost of one run.
# The scripted endpoint runs in its own process, which callgrind does not follow.
#
#   scripts/bench-instructions.sh [N1] [N2]      (defaults: 50 150)
set -euo pipefail
cd "$(dirname "$0")/.."

n1=${1:-50}
n2=${2:-150}
command -v valgrind >/dev/null || { echo "valgrind is required (apt-get install valgrind)" >&2; exit 1; }

cargo build --profile perf --quiet --example bench_loop
bin=target/perf/examples/bench_loop

tmp=$(mktemp -d)
mkfifo "$tmp/in"
"$bin" mock <"$tmp/in" >"$tmp/url" &
mock_pid=$!
exec 3>"$tmp/in"
cleanup() { exec 3>&-; wait "$mock_pid" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
for _ in $(seq 100); do [ -s "$tmp/url" ] && break; sleep 0.05; done
url=$(head -n1 "$tmp/url")

instructions() { # client scenario runs
  valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$bin" run "$1" "$2" "$3" --url "$url" \
    2>"$tmp/vg.err" >/dev/null || { cat "$tmp/vg.err" >&2; exit 1; }
  sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$tmp/vg.err"
}

printf '%-15s %-8s %14s\n' client scenario "instr/run"
for scenario in weather approve; do
  for client in floor ours ours-anthropic ours-responses ours-gemini; do
    i1=$(instructions "$client" "$scenario" "$n1")
    i2=$(instructions "$client" "$scenario" "$n2")
    printf '%-15s %-8s %14d\n' "$client" "$scenario" $(( (i2 - i1) / (n2 - n1) ))
  done
done
