#!/usr/bin/env bash
# Builds nerve with AddressSanitizer and UndefinedBehaviorSanitizer in
# $NERVE_BUILD_DIR (default build-sanitize/) and runs the whole test suite
# under them; any sanitizer report fails the test that triggered it.
# Ends with the same summary line as run-tests.sh.
set -u
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export NERVE_BUILD_DIR="${NERVE_BUILD_DIR:-$root/build-sanitize}"
export NERVE_CMAKE_ARGS="${NERVE_CMAKE_ARGS:-} -DNERVE_ENABLE_SANITIZERS=ON"
# LLVM's and MLIR's libraries are not instrumented: their allocators do not
# unpoison what nerve's instrumented inline code poisons, so manual
# poisoning is off (every real overflow, use-after-free and leak is still
# reported).
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allow_user_poisoning=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# The suite's fuzz run is an ASan+UBSan build already (build-fuzz/).
export NERVE_FUZZ_SECONDS="${NERVE_FUZZ_SECONDS:-0}"
exec "$root/scripts/run-tests.sh"
