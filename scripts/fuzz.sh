#!/usr/bin/env bash
# Fuzzes nerve's front end and pipelines (tools/nerve-fuzz) with libFuzzer
# under AddressSanitizer and UndefinedBehaviorSanitizer, seeded with every
# .mlir of examples/ and test/, after replaying every input of test/fuzz/
# (inputs that once crashed nerve, kept as regression tests).
#
#   scripts/fuzz.sh [SECONDS]     (default 600; the corpus grows in
#                                  build-fuzz/corpus, crashes land in
#                                  build-fuzz/crashes)
#
# $NERVE_FUZZ_BUILD_DIR moves the build (default build-fuzz/);
# $NERVE_FUZZ_REPORT names a JUnit XML file to write the outcome to (the
# test suite's bounded run, scripts/run-tests.sh, reads it).
set -u
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-600}"
report="${NERVE_FUZZ_REPORT:-}"
export NERVE_BUILD_DIR="${NERVE_FUZZ_BUILD_DIR:-$root/build-fuzz}"
export NERVE_CMAKE_ARGS="-DNERVE_ENABLE_SANITIZERS=ON -DNERVE_ENABLE_FUZZER=ON"
source "$root/scripts/common.sh"
nerve_install_deps
nerve_build nerve-fuzz

corpus="$NERVE_BUILD_DIR/corpus"
crashes="$NERVE_BUILD_DIR/crashes"
mkdir -p "$corpus" "$crashes"
find "$root/examples" "$root/test" -name '*.mlir' -exec cp {} "$corpus/" \;
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:allow_user_poisoning=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
fuzzer="$NERVE_BUILD_DIR/bin/nerve-fuzz"
# A hang is an input past 60 s: under the sanitizers a seed that compiles
# tensor-core products (test/Dialect/GPUMap/contract.mlir,
# test/Dialect/Tdim/ops.mlir) takes 15-17 s, which at 10 s failed runs
# whose window reached it.
options=(-timeout=60 -rss_limit_mb=4096 -max_len=16384)

cases=() # JUnit test cases, as XML
xml_escape() { sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g' -e 's/"/\&quot;/g'; }
add_case() { # name, failure message (empty: passed)
  local name body=""
  name=$(printf '%s' "$1" | xml_escape)
  [ -n "$2" ] && body="<failure message=\"$(printf '%s' "$2" | xml_escape)\"/>"
  cases+=("<testcase classname=\"fuzz\" name=\"$name\">$body</testcase>")
}

failed=0
for input in "$root"/test/fuzz/*; do
  [ -f "$input" ] && [ "$(basename "$input")" != README.md ] || continue
  log="$NERVE_LOG_DIR/fuzz-regression-$(basename "$input").log"
  if "$fuzzer" "${options[@]}" "$input" >"$log" 2>&1; then
    add_case "regression $(basename "$input")" ""
  else
    failed=1
    say "regression input test/fuzz/$(basename "$input") fails again (log: $log)"
    add_case "regression $(basename "$input")" "$(grep -m1 -E 'ERROR|error|runtime error' "$log")"
  fi
done

log="$NERVE_LOG_DIR/fuzz.log"
say "fuzzing for $seconds s (corpus: $corpus, crashes: $crashes, log: $log)"
"$fuzzer" "$corpus" -artifact_prefix="$crashes/" -max_total_time="$seconds" "${options[@]}" \
  -print_final_stats=1 >"$log" 2>&1
rc=$?
runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$')
if [ $rc -eq 0 ]; then
  say "fuzzing: ${runs:-?} inputs in $seconds s, no crash, hang or sanitizer report"
  add_case "libFuzzer ${seconds} s (${runs:-?} inputs)" ""
else
  failed=1
  artifact=$(grep -oE "Test unit written to [^ ]+" "$log" | tail -1 | cut -d' ' -f5)
  say "fuzzing found a failure: ${artifact:-see the log}; fix it and keep the input in test/fuzz/ (log: $log)"
  add_case "libFuzzer ${seconds} s" "$(grep -m1 -E '==ERROR|runtime error|ALARM|deadly signal|out-of-memory' "$log") (input: ${artifact:-none})"
fi

if [ -n "$report" ]; then
  {
    echo '<?xml version="1.0" encoding="UTF-8"?>'
    echo "<testsuites><testsuite name=\"fuzz\" tests=\"${#cases[@]}\">"
    printf '%s\n' "${cases[@]}"
    echo '</testsuite></testsuites>'
  } >"$report"
fi
exit $failed
