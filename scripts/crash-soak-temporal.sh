#!/usr/bin/env bash
# The Temporal crash harness at length: KILLS worker processes SIGKILLed (default 1000),
# LANES runs at once (default 16), with plans drawn from SEED (default: the clock; the
# harness prints the seed it used, so a failing session can be replayed). It runs under the
# test command, which starts the Temporal dev server.
#
#   scripts/crash-soak-temporal.sh [KILLS] [LANES] [SEED]
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { echo "usage: scripts/crash-soak-temporal.sh [KILLS] [LANES] [SEED]" >&2; exit 2; }
kills=${1:-1000}
lanes=${2:-16}
for n in "$kills" "$lanes" ${3:+"$3"}; do
    case "$n" in '' | *[!0-9]*) usage ;; esac
done
export TOOLNEXUS_TEMPORAL_KILLS="$kills" TOOLNEXUS_TEMPORAL_KILLS_LANES="$lanes"
if [ -n "${3:-}" ]; then export TOOLNEXUS_TEMPORAL_KILLS_SEED="$3"; fi
# The test command builds the whole workspace, where toolnexus-inbox has a `kills` suite
# too: the filter picks this one.
exec scripts/test.sh -p toolnexus-temporal --test kills -- kills::temporal
