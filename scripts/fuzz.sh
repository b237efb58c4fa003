#!/usr/bin/env bash
# Fuzzes the parsers and decoders that read untrusted bytes, one target at a time.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#
# SECONDS_PER_TARGET defaults to 300; TARGETs default to all of them:
#   openai_reply     the OpenAI chat-completions reply parser
#   anthropic_reply  the Anthropic messages reply parser
#   responses_reply  the Responses reply parser
#   gemini_reply     the Gemini generateContent reply parser
#   tool_args        argument decoding (Args::take, Toolkit::execute)
#   wire_types       the Request / Answer / ToolResult / Message / RunResult deserializers
#
# Toolchain. cargo-fuzz passes nightly-only flags (-Zsanitizer=address and friends). This
# project builds with the machine's stable Rust and no other toolchain can be fetched, so
# the script sets RUSTC_BOOTSTRAP=1, which makes a stable rustc accept -Z flags; the stable
# toolchain ships the AddressSanitizer runtime, so `--sanitizer address` works as it would
# on nightly (checked with rustc 1.95.0). Set FUZZ_TOOLCHAIN=nightly to use an installed
# nightly instead, or FUZZ_SANITIZER=none to fuzz without a sanitizer (faster; this crate
# has no unsafe code, so panics are what the fuzzers find either way).
#
# Builds keep debug assertions on (`-a`), so arithmetic overflow is a finding too.
# The first build compiles every dependency with instrumentation: ~15 minutes on 2 cores.
#
# New inputs go to fuzz/corpus/TARGET (not committed), seeded from fuzz/seeds/TARGET;
# crashes to fuzz/artifacts/TARGET. Exits non-zero when a target finds a crash.
set -euo pipefail

cd "$(dirname "$0")/../fuzz"

seconds="${1:-300}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(openai_reply anthropic_reply responses_reply gemini_reply tool_args wire_types)
fi
sanitizer="${FUZZ_SANITIZER:-address}"

if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi

toolchain=()
if [ -n "${FUZZ_TOOLCHAIN:-}" ]; then
    toolchain=("+${FUZZ_TOOLCHAIN}")
elif ! rustc --version | grep -q nightly; then
    export RUSTC_BOOTSTRAP=1
fi

# One job and one worker: the machine's cores are shared.
status=0
for target in "${targets[@]}"; do
    mkdir -p "corpus/$target"
    log="$(mktemp)"
    echo "== $target: ${seconds}s, sanitizer $sanitizer"
    if cargo "${toolchain[@]}" fuzz run --debug-assertions --sanitizer "$sanitizer" \
        "$target" "corpus/$target" "seeds/$target" -- \
        -max_total_time="$seconds" -dict=json.dict -max_len=16384 -rss_limit_mb=2048 \
        -print_final_stats=1 >"$log" 2>&1; then
        result="no crash"
    else
        result="CRASH (see fuzz/artifacts/$target)"
        status=1
        tail -n 60 "$log"
    fi
    execs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)"
    cov="$(grep -Eo 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+/[0-9]+[a-zA-Z]*' "$log" | tail -n 1 || true)"
    echo "== $target: $result; executions: ${execs:-?}; last $cov; corpus $(ls "corpus/$target" | wc -l) files"
    rm -f "$log"
done
exit "$status"
