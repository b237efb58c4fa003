#!/usr/bin/env bash
# The crash harness at length: KILLS worker processes SIGKILLed per engine (default 2000),
# on SQLite and on PostgreSQL, at points drawn from SEED (default: the clock; the harness
# prints the seed it used, so a failing session can be replayed). It runs under the test
# command, which starts the throwaway PostgreSQL.
#
#   scripts/crash-soak.sh [KILLS] [SEED]
set -euo pipefail
cd "$(dirname "$0")/.."

kills=${1:-2000}
case "$kills" in
    '' | *[!0-9]*) echo "usage: scripts/crash-soak.sh [KILLS] [SEED]" >&2; exit 2 ;;
esac
export TOOLNEXUS_KILLS="$kills"
if [ -n "${2:-}" ]; then export TOOLNEXUS_KILLS_SEED="$2"; fi
# The test command builds the whole workspace, where toolnexus-temporal has a `kills` suite
# too: the filters pick the inbox's two sessions.
exec scripts/test.sh -p toolnexus-inbox --test kills -- kills::sqlite kills::postgres
