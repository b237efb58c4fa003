#!/usr/bin/env bash
# Ours (bench_temporal, the shop agent on toolnexus-temporal) against the floor (the same
# run written by hand as a Temporal workflow, bench/temporal-floor), on one Temporal dev
# server and one scripted model, measured alternately.
#
# Each takes RUNS runs of "buy a gpu" to their approval, then answers them CONCURRENCY at a
# time while its in-process worker resumes them. The script prints every round, then the
# medians and the ratios, each read so that 1.0 is parity and more is better for ours:
#   resumes/s           ours / floor
#   answer to result p50  floor / ours
#   answer to result p99  floor / ours
#   worker CPU per run  ours / floor  (here less is better: the goal is at most 1.5)
#
#   bench/temporal.sh [RUNS] [REPEAT] [CONCURRENCY]      (defaults: 200 5 8)
#   NO_BUILD=1 bench/temporal.sh …                       (the binaries as last built)
#
# The server: a dev server of its own, on a free port, started with the Temporal CLI at
# $TOOLNEXUS_TEST_TEMPORAL_CLI (or `temporal` on the PATH), so other work on a shared
# server does not disturb it; or, with neither, the server at $TOOLNEXUS_TEST_TEMPORAL.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${1:-200}
repeat=${2:-5}
concurrency=${3:-8}

# The workspace's own build of the example (every feature on, as its suites build it);
# NO_BUILD=1 measures the binaries as they are.
if [ -z "${NO_BUILD:-}" ]; then
  cargo build --release --quiet --workspace --all-features --example bench_temporal
  cargo build --release --quiet --manifest-path bench/temporal-floor/Cargo.toml \
    --target-dir target/bench-temporal-floor
fi
ours_bin=target/release/examples/bench_temporal
floor_bin=target/bench-temporal-floor/release/bench_temporal_floor

tmp=$(mktemp -d)
server_pid=""
mock_pid=""
cleanup() {
  exec 3>&- 2>/dev/null || true
  [ -n "$mock_pid" ] && wait "$mock_pid" 2>/dev/null || true
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

cli=${TOOLNEXUS_TEST_TEMPORAL_CLI:-$(command -v temporal || true)}
if [ -n "$cli" ]; then
  port=""
  for _ in $(seq 50); do
    p=$((20000 + RANDOM % 20000))
    if ! listening "$p" && ! listening $((p + 1)); then port=$p; break; fi
  done
  [ -n "$port" ] || { echo "no free port found" >&2; exit 1; }
  "$cli" server start-dev --headless --ip 127.0.0.1 --port "$port" --http-port $((port + 1)) \
    --log-level error >"$tmp/server.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 300); do listening "$port" && break; sleep 0.1; done
  listening "$port" || { echo "the dev server did not start:" >&2; cat "$tmp/server.log" >&2; exit 1; }
  address=127.0.0.1:$port
  # The default namespace is registered just after the port opens.
  sleep 2
elif [ -n "${TOOLNEXUS_TEST_TEMPORAL:-}" ]; then
  address=$TOOLNEXUS_TEST_TEMPORAL
else
  echo "set TOOLNEXUS_TEST_TEMPORAL_CLI (a Temporal CLI) or TOOLNEXUS_TEST_TEMPORAL (HOST:PORT)" >&2
  exit 1
fi

# One scripted model for both, outside both processes, alive while fd 3 is open.
mkfifo "$tmp/in"
"$ours_bin" mock <"$tmp/in" >"$tmp/url" &
mock_pid=$!
exec 3>"$tmp/in"
for _ in $(seq 100); do [ -s "$tmp/url" ] && break; sleep 0.05; done
model=$(head -n1 "$tmp/url")
[ -n "$model" ] || { echo "the scripted model did not start" >&2; exit 1; }

echo "server $address, model $model, $runs runs, concurrency $concurrency, $repeat rounds"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

# One run of a client -> "resumes/s p50 p99 cpu halted/s"
measure() {
  local bin=$ours_bin
  [ "$1" = floor ] && bin=$floor_bin
  local out
  out=$("$bin" --address "$address" --model "$model" --runs "$runs" --concurrency "$concurrency")
  local halted resumes p50 p99 cpu
  halted=$(sed -n 's/^started and halted: \([0-9.]*\) runs\/s.*/\1/p' <<<"$out")
  resumes=$(sed -n 's/^answered and resumed: \([0-9.]*\) resumes\/s.*/\1/p' <<<"$out")
  p50=$(sed -n 's/^answer to result: p50 \([0-9.]*\) ms.*/\1/p' <<<"$out")
  p99=$(sed -n 's/.*, p99 \([0-9.]*\) ms$/\1/p' <<<"$out")
  cpu=$(sed -n 's/^worker CPU per run: \([0-9.]*\) ms.*/\1/p' <<<"$out")
  echo "$resumes $p50 $p99 $cpu $halted"
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf '%-6s %5s %11s %9s %9s %12s %10s %8s\n' client round resumes/s "p50 ms" "p99 ms" "CPU ms/run" halted/s load1
: >"$tmp/ours"
: >"$tmp/floor"
for round in $(seq "$repeat"); do
  # Alternate which goes first, so neither always meets the server fresher.
  if [ $((round % 2)) = 1 ]; then order="ours floor"; else order="floor ours"; fi
  for client in $order; do
    row=$(measure "$client")
    echo "$row" >>"$tmp/$client"
    read -r resumes p50 p99 cpu halted <<<"$row"
    printf '%-6s %5d %11s %9s %9s %12s %10s %8s\n' "$client" "$round" "$resumes" "$p50" "$p99" \
      "$cpu" "$halted" "$(cut -d' ' -f1 /proc/loadavg)"
  done
done

col() { awk -v c="$2" '{ print $c }' "$tmp/$1" | median; }
echo
echo "medians of $repeat rounds (load average at end: $(cut -d' ' -f1-3 /proc/loadavg))"
printf '%-24s %10s %10s %8s  %s\n' "" ours floor ratio "how the ratio reads"
row() { # label column ratio-direction goal
  local o f r
  o=$(col ours "$2")
  f=$(col floor "$2")
  if [ "$3" = up ]; then
    r=$(awk -v a="$o" -v b="$f" 'BEGIN { printf "%.2f", a / b }')
  else
    r=$(awk -v a="$o" -v b="$f" 'BEGIN { printf "%.2f", b / a }')
  fi
  printf '%-24s %10s %10s %8s  %s\n' "$1" "$o" "$f" "$r" "$4"
}
row "resumes/s" 1 up "ours / floor, goal >= 0.8"
row "answer to result p50 ms" 2 down "floor / ours, goal >= 0.8"
row "answer to result p99 ms" 3 down "floor / ours, goal >= 0.8"
row "worker CPU ms per run" 4 up "ours / floor, goal <= 1.5"
row "runs halted/s" 5 up "ours / floor"
