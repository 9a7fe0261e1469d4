#!/usr/bin/env bash
# Installs what is missing, builds nerve, and runs every test: the lit suite
# (FileCheck and end-to-end tests), the GoogleTest unit tests under CTest,
# the Python package's pytest suite (Debian's Python and PyTorch; the GPU
# cases skip without a GPU) and a bounded fuzz run.
# Ends with one summary line; exits non-zero if any test failed.
set -u
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

nerve_install_deps
nerve_build all nerve-test-depends nerve-unittests

lit_rc=0
say "running the lit suite"
"$NERVE_LLVM_BIN/lit" -sv --xunit-xml-output "$NERVE_LOG_DIR/lit.xml" \
  "$NERVE_BUILD_DIR/test" || lit_rc=$?

unit_rc=0
say "running the unit tests"
ctest --test-dir "$NERVE_BUILD_DIR" --output-on-failure -j "$(nproc)" \
  --output-junit "$NERVE_LOG_DIR/ctest.xml" || unit_rc=$?

py_rc=0
say "running the Python tests"
PYTHONPATH="$NERVE_BUILD_DIR/python" /usr/bin/python3 -m pytest -q -p no:cacheprovider \
  --junitxml="$NERVE_LOG_DIR/pytest.xml" "$NERVE_ROOT/test/python" || py_rc=$?

# A bounded fuzz run (scripts/fuzz.sh: its own ASan+UBSan+libFuzzer build in
# build-fuzz/, the regression inputs of test/fuzz/, then libFuzzer for
# $NERVE_FUZZ_SECONDS, default 90; 0 skips it, said in the summary).
fuzz_rc=0
fuzz_report=()
fuzz_seconds="${NERVE_FUZZ_SECONDS:-90}"
if [ "$fuzz_seconds" -gt 0 ] 2>/dev/null; then
  rm -f "$NERVE_LOG_DIR/fuzz.xml"
  NERVE_FUZZ_REPORT="$NERVE_LOG_DIR/fuzz.xml" "$NERVE_ROOT/scripts/fuzz.sh" "$fuzz_seconds" || fuzz_rc=$?
  fuzz_report=("fuzz=$NERVE_LOG_DIR/fuzz.xml")
else
  say "fuzzing skipped (NERVE_FUZZ_SECONDS=$fuzz_seconds)"
fi

/usr/bin/python3 "$NERVE_ROOT/scripts/test-summary.py" \
  "lit=$NERVE_LOG_DIR/lit.xml" "unit=$NERVE_LOG_DIR/ctest.xml" \
  "python=$NERVE_LOG_DIR/pytest.xml" "${fuzz_report[@]}" || exit 1
[ "$lit_rc" -eq 0 ] && [ "$unit_rc" -eq 0 ] && [ "$py_rc" -eq 0 ] && [ "$fuzz_rc" -eq 0 ]
