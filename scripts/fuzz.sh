#!/usr/bin/env bash
# Fuzzes nerve's front end and pipelines (tools/nerve-fuzz) with libFuzzer
# under AddressSanitizer and UndefinedBehaviorSanitizer, seeded with every
# .mlir of examples/ and test/.
#
#   scripts/fuzz.sh [SECONDS]     (default 600; the corpus grows in
#                                  build-fuzz/corpus, crashes land in
#                                  build-fuzz/crashes)
set -u
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export NERVE_BUILD_DIR="${NERVE_BUILD_DIR:-$root/build-fuzz}"
export NERVE_CMAKE_ARGS="${NERVE_CMAKE_ARGS:-} -DNERVE_ENABLE_SANITIZERS=ON -DNERVE_ENABLE_FUZZER=ON"
source "$root/scripts/common.sh"
nerve_install_deps
nerve_build nerve-fuzz
seconds="${1:-600}"
corpus="$NERVE_BUILD_DIR/corpus"
crashes="$NERVE_BUILD_DIR/crashes"
mkdir -p "$corpus" "$crashes"
find "$root/examples" "$root/test" -name '*.mlir' -exec cp {} "$corpus/" \;
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:allow_user_poisoning=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
say "fuzzing for $seconds s (corpus: $corpus, crashes: $crashes)"
"$NERVE_BUILD_DIR/bin/nerve-fuzz" "$corpus" -artifact_prefix="$crashes/" \
  -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -max_len=16384 \
  -print_final_stats=1
