#!/usr/bin/env bash
# Memory per agent-loop run in flight, ours against the floor, measured in one session.
#
# Each client runs N `weather` runs at once against bench_loop's scripted endpoint, which
# answers every request after 200 ms, so all N are in flight together; each run is also
# one connection. Peak RSS per run in flight = (peak RSS at N - peak RSS at 1) / N, the
# two peaks from separate processes, so the client's fixed cost (runtime, TLS roots,
# code) cancels. Each figure is measured REPEAT times; the script prints every value and
# the median.
#
#   bench/inflight.sh [N] [REPEAT]        (defaults: 1000 5)
#   CLIENTS="floor ours ours-anthropic" bench/inflight.sh
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${1:-1000}
repeat=${2:-5}
clients=${CLIENTS:-floor ours}

cargo build --release --quiet -p toolnexus-examples --example bench_loop
cargo build --release --quiet --manifest-path bench/floor/Cargo.toml --target-dir target/bench-floor
ours_bin=target/release/examples/bench_loop
floor_bin=target/bench-floor/release/bench_floor

tmp=$(mktemp -d)
mock_pid=""
trap 'exec 3>&- 2>/dev/null; [ -n "$mock_pid" ] && wait "$mock_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
mkfifo "$tmp/in"
BENCH_MOCK_DELAY_MS=200 "$ours_bin" mock <"$tmp/in" >"$tmp/url" &
mock_pid=$!
exec 3>"$tmp/in"
for _ in $(seq 100); do [ -s "$tmp/url" ] && break; sleep 0.05; done
url=$(head -n1 "$tmp/url")

peak() { # client n -> peak RSS in kB
  local bin=$ours_bin
  [ "$1" = floor ] && bin=$floor_bin
  "$bin" inflight "$1" "$2" --url "$url" | sed -n 's/.*peak RSS \([0-9]*\) kB.*/\1/p'
}

printf '%-15s %12s %12s %14s\n' client "peak at 1" "peak at $runs" "KB per run"
for client in $clients; do
  per_run=()
  for _ in $(seq "$repeat"); do
    one=$(peak "$client" 1)
    many=$(peak "$client" "$runs")
    kb=$(awk -v a="$many" -v b="$one" -v n="$runs" 'BEGIN { printf "%.1f", (a - b) / n }')
    per_run+=("$kb")
    printf '%-15s %9d kB %9d kB %14s\n' "$client" "$one" "$many" "$kb"
  done
  median=$(printf '%s\n' "${per_run[@]}" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
  printf '%-15s %40s %s KB per run (median of %d)\n' "$client" "" "$median" "$repeat"
done
