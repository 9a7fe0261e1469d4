#!/usr/bin/env bash
# nerve's main job: installs what is missing, builds nerve, and compiles the
# example spec.
set -u
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

nerve_install_deps
nerve_build all
"$NERVE_BUILD_DIR/bin/nerve-opt" --version
say "compiling examples/scale.mlir with nerve-opt --canonicalize"
"$NERVE_BUILD_DIR/bin/nerve-opt" --canonicalize "$NERVE_ROOT/examples/scale.mlir"
