#!/usr/bin/env bash
# Packages the published crates as `cargo publish` would, without building them again.
#
#   scripts/package.sh            what CI runs: `cargo package --no-verify`, then the checks below
#   scripts/package.sh --verify   the full `cargo package`, which builds each package from its
#                                 .crate in target/package (every dependency anew: far slower)
#
# Verification is left out of CI because it rebuilds the whole dependency tree a second time
# in target/package. Without it, what verification would catch is checked from each
# package's file list (`cargo package --list`): its README and manifest are in it, and so is
# every file its sources `include_str!`/`include_bytes!` (a path outside the crate's folder
# is a build that works in the workspace and fails from crates.io).
set -euo pipefail
cd "$(dirname "$0")/.."

crates=(toolnexus-macros toolnexus toolnexus-inbox toolnexus-mcp toolnexus-otel toolnexus-a2a toolnexus-agui toolnexus-temporal)

say() { printf 'package.sh: %s\n' "$*" >&2; }

packages=()
for crate in "${crates[@]}"; do packages+=(-p "$crate"); done

if [ "${1:-}" = "--verify" ]; then
    cargo package --locked "${packages[@]}"
    exit 0
fi
cargo package --locked --no-verify "${packages[@]}"

status=0
for crate in "${crates[@]}"; do
    list=$(cargo package --locked --list -p "$crate")
    for needed in Cargo.toml README.md src/lib.rs; do
        grep -qx "$needed" <<<"$list" || { say "$crate: $needed is not in the package"; status=1; }
    done
    while IFS=: read -r file _ path; do
        resolved=$(realpath -m --relative-to="$crate" "$(dirname "$file")/$path")
        grep -qxF "$resolved" <<<"$list" \
            || { say "$crate: $file includes $path, which is not in the package"; status=1; }
    done < <(grep -rnoE 'include_(str|bytes)!\("[^"]+"\)' --include='*.rs' "$crate/src" \
        | sed -E 's/include_(str|bytes)!\("([^"]+)"\)/\2/')
done
[ "$status" = 0 ] && say "${#crates[@]} packages, each with its README and every file it includes"
exit "$status"
