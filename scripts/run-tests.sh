#!/usr/bin/env bash
# Installs what is missing, builds nerve, and runs every test: the lit suite
# (FileCheck and end-to-end tests) and the GoogleTest unit tests under CTest.
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

/usr/bin/python3 "$NERVE_ROOT/scripts/test-summary.py" \
  "lit=$NERVE_LOG_DIR/lit.xml" "unit=$NERVE_LOG_DIR/ctest.xml" || exit 1
[ "$lit_rc" -eq 0 ] && [ "$unit_rc" -eq 0 ]
