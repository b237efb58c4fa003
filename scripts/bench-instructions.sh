#!/usr/bin/env bash
# Instructions per agent-loop run, counted by callgrind in the client process only, and
# each client's ratio to the transport limit and to the floor.
#
# The limit (bench/limit) sends the requests one run of ours sends, byte for byte
# (`bench_loop wire`), on one kept-alive hyper connection and reads each reply into
# borrowed structs: the wire and the parse alone, what no client can go under. The floor
# (bench/floor) is the hand-written loop on raw reqwest + `Value`: the current reqwest with
# the features a user picks, serde_json with its defaults. Both are crates of their own,
# outside the workspace and with their own locks. Ours is the example package's
# bench_loop, whose scripted endpoint every client talks to.
#
# Each variant runs N1 and then N2 times; (I(N2) - I(N1)) / (N2 - N1) cancels start-up,
# the TLS/runtime set-up and the warm-up runs, leaving the steady-state cost of one run.
# The scripted endpoint runs in its own process, which callgrind does not follow.
#
# Two profiles: `release` (a plain `cargo build --release`, what users build; its ratios
# are the figures a change must not move, see BENCHMARKS.md) and `perf` (fat LTO, one
# codegen unit).
#
#   scripts/bench-instructions.sh [N1] [N2]      (defaults: 50 150)
#   PROFILES=release CLIENTS="floor ours" SCENARIOS=approve scripts/bench-instructions.sh
set -euo pipefail
cd "$(dirname "$0")/.."

n1=${1:-50}
n2=${2:-150}
profiles=${PROFILES:-release perf}
clients=${CLIENTS:-limit floor ours ours-anthropic ours-responses ours-gemini}
scenarios=${SCENARIOS:-weather approve}
command -v valgrind >/dev/null || { echo "valgrind is required (apt-get install valgrind)" >&2; exit 1; }

tmp=$(mktemp -d)
mock_pid=""
stop_mock() {
  if [ -n "$mock_pid" ]; then exec 3>&-; wait "$mock_pid" 2>/dev/null || true; mock_pid=""; fi
}
trap 'stop_mock; rm -rf "$tmp"' EXIT

instructions() { # bin url client scenario runs [extra arguments]
  valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$1" run "$3" "$4" "$5" --url "$2" \
    "${@:6}" 2>"$tmp/vg.err" >/dev/null || { cat "$tmp/vg.err" >&2; exit 1; }
  sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$tmp/vg.err"
}

printf '%-8s %-15s %-8s %12s %10s %10s\n' profile client scenario "instr/run" "vs limit" "vs floor"
for profile in $profiles; do
  # The example package alone, as an app on the core builds it: built from the root, the
  # features the other examples turn on (sqlx turns on tracing's `log`) would be measured too.
  cargo build --profile "$profile" --quiet -p toolnexus-examples --example bench_loop
  cargo build --profile "$profile" --quiet --manifest-path bench/floor/Cargo.toml \
    --target-dir target/bench-floor
  cargo build --profile "$profile" --quiet --manifest-path bench/limit/Cargo.toml \
    --target-dir target/bench-limit
  bin=target/$profile/examples/bench_loop
  floor_bin=target/bench-floor/$profile/bench_floor
  limit_bin=target/bench-limit/$profile/bench_limit
  rm -f "$tmp/in" "$tmp/url"
  mkfifo "$tmp/in"
  "$bin" mock <"$tmp/in" >"$tmp/url" &
  mock_pid=$!
  exec 3>"$tmp/in"
  for _ in $(seq 100); do [ -s "$tmp/url" ] && break; sleep 0.05; done
  url=$(head -n1 "$tmp/url")
  for scenario in $scenarios; do
    floor=""
    limit=""
    "$bin" wire "$scenario" >"$tmp/wire-$scenario"
    for client in $clients; do
      client_bin=$bin
      extra=()
      [ "$client" = floor ] && client_bin=$floor_bin
      [ "$client" = limit ] && { client_bin=$limit_bin; extra=(--wire "$tmp/wire-$scenario"); }
      i1=$(instructions "$client_bin" "$url" "$client" "$scenario" "$n1" "${extra[@]}")
      i2=$(instructions "$client_bin" "$url" "$client" "$scenario" "$n2" "${extra[@]}")
      per_run=$(( (i2 - i1) / (n2 - n1) ))
      [ "$client" = floor ] && floor=$per_run
      [ "$client" = limit ] && limit=$per_run
      ratio() { [ -n "$1" ] && awk -v a="$per_run" -v b="$1" 'BEGIN { printf "%.2fx", a / b }' || echo -; }
      printf '%-8s %-15s %-8s %12d %10s %10s\n' "$profile" "$client" "$scenario" "$per_run" \
        "$(ratio "$limit")" "$(ratio "$floor")"
    done
  done
  stop_mock
done
