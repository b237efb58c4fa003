#!/usr/bin/env bash
# Lints the workspace against the newest semver-compatible versions of its dependencies,
# so a deprecation or a new lint in a dependency's next release is seen the day it ships,
# not on the day someone runs `cargo update`. The build itself stays on Cargo.lock.
#
#   scripts/newest.sh       copy the tracked files to target/newest/src, `cargo update`
#                           there, then `cargo clippy --workspace --all-features --examples
#                           -D warnings`
#
# The copy shares the workspace's target directory: a dependency whose newest version is the
# locked one is not checked again, so the cost is the crates that moved and the workspace's
# own crates; when none moved, that lint is the one already run on the lock, and is skipped.
# It needs the crates.io index (as any `cargo update` does).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
. "$root/scripts/deps.sh"

target=${CARGO_TARGET_DIR:-$root/target}
copy="$target/newest/src"
rm -rf "$copy"
mkdir -p "$copy"
# The work tree as it stands (tracked files, edited or not), not the last commit.
git ls-files -z | tar --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -xf - -C "$copy"

build_deps
cd "$copy"
say "cargo update (the newest semver-compatible versions)"
# Its output names each dependency that moved ("Updating rustls v0.23.46 -> v0.23.48").
cargo update
# Nothing moved: the graph is the locked one, which .ci/run's own clippy has just linted.
if cmp -s Cargo.lock "$root/Cargo.lock"; then
    say "every dependency is at its newest compatible version already: nothing more to lint"
    exit 0
fi
say "cargo clippy against them"
# With the examples, the dependencies' features resolve as in .ci/run's clippy (dev-dependencies
# included), so a dependency that did not move, and none of its own did, is not checked again.
CARGO_TARGET_DIR="$target" cargo clippy --workspace --all-features --examples -- -D warnings
