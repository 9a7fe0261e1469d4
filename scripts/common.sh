# Shared helpers for nerve's scripts: sourced, never run.
# Every step logs in full to $NERVE_BUILD_DIR/logs and, on failure, prints one
# line saying what went wrong and what to do, then exits non-zero.

NERVE_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NERVE_BUILD_DIR="${NERVE_BUILD_DIR:-$NERVE_ROOT/build}"
NERVE_LOG_DIR="$NERVE_BUILD_DIR/logs"
NERVE_LLVM_BIN=/usr/lib/llvm-22/bin

say() { printf 'nerve: %s\n' "$*"; }
die() { printf 'nerve: error: %s\n' "$*" >&2; exit 1; }

# The first line of a log that looks like a compiler, CMake or linker error.
first_error() {
  grep -m1 -E '(error|Error|ERROR)[: ]|undefined reference|FAILED:' "$1" 2>/dev/null | cut -c1-300
}

# Installs whatever Debian packages nerve needs and are missing.
nerve_install_deps() {
  "$NERVE_ROOT/scripts/install-deps.sh" || exit 1
}

# Configures (once) and builds the given ninja targets (default: all).
nerve_build() {
  mkdir -p "$NERVE_LOG_DIR"
  local cc=clang-22 cxx=clang++-22
  command -v "$cxx" >/dev/null 2>&1 || { cc=cc; cxx=c++; }
  if [ ! -f "$NERVE_BUILD_DIR/build.ninja" ]; then
    say "configuring $NERVE_BUILD_DIR (log: $NERVE_LOG_DIR/configure.log)"
    if ! cmake -G Ninja -S "$NERVE_ROOT" -B "$NERVE_BUILD_DIR" \
        -DCMAKE_BUILD_TYPE="${NERVE_BUILD_TYPE:-Release}" \
        -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
        ${NERVE_CMAKE_ARGS:-} >"$NERVE_LOG_DIR/configure.log" 2>&1; then
      local why
      why=$(grep -m1 -oE 'nerve: .*' "$NERVE_LOG_DIR/configure.log" || first_error "$NERVE_LOG_DIR/configure.log")
      rm -f "$NERVE_BUILD_DIR/build.ninja"
      die "configuring failed: ${why:-see the log} (full log: $NERVE_LOG_DIR/configure.log)"
    fi
  fi
  local start=$SECONDS
  say "building ${*:-all} (log: $NERVE_LOG_DIR/build.log)"
  if ! ninja -C "$NERVE_BUILD_DIR" "$@" >"$NERVE_LOG_DIR/build.log" 2>&1; then
    die "build failed: $(first_error "$NERVE_LOG_DIR/build.log") (full log: $NERVE_LOG_DIR/build.log)"
  fi
  say "built in $((SECONDS - start)) s"
}
