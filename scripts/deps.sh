#!/usr/bin/env bash
# What building the workspace needs from the system, installed with apt when absent. Run it
# before the first cargo command of a fresh machine (.ci/run does, before clippy):
#
#   protoc      Debian's protobuf-compiler: the Temporal SDK's build script compiles the
#               Temporal API's protobuf files with it (a `PROTOC` already set is used as is),
#               and libprotobuf-dev, whose well-known types (google/protobuf/*.proto) they import.
#
# scripts/test.sh sources this file for its `say`, `die` and `apt_install` too, and calls
# `build_deps` before its first cargo command.

say() { printf '%s: %s\n' "$(basename "$0")" "$*" >&2; }
die() { say "$*"; exit 1; }

apt_updated=no
apt_install() {
    if [ "$(id -u)" != 0 ]; then
        die "missing $*: install it (apt-get install $*) or run this script as root so it can"
    fi
    command -v apt-get >/dev/null || die "missing $* and no apt-get here: install $* by hand"
    if [ "$apt_updated" = no ]; then
        say "apt-get update"
        apt-get update -qq >/dev/null || die "apt-get update failed; install $* by hand"
        apt_updated=yes
    fi
    say "apt-get install $*"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null \
        || die "apt-get install $* failed; install it by hand"
}

build_deps() {
    local missing=()
    if [ -z "${PROTOC:-}" ] && ! command -v protoc >/dev/null; then
        missing+=(protobuf-compiler)
    fi
    if [ -z "${PROTOC_INCLUDE:-}" ] && [ ! -f /usr/include/google/protobuf/field_mask.proto ]; then
        missing+=(libprotobuf-dev)
    fi
    if [ "${#missing[@]}" -gt 0 ]; then
        apt_install "${missing[@]}"
    fi
}

# Run rather than sourced: install what is missing.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -euo pipefail
    build_deps
fi
