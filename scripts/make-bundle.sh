#!/usr/bin/env bash
# Builds nerve and packs the portable bundle
#   $NERVE_BUILD_DIR/nerve-<version>-linux-x86_64.tar.xz
# with bin/ (nerve's tools, stripped) and lib/ (nerve's shared libraries and
# every non-system shared library they load), all with RPATH $ORIGIN/../lib
# or $ORIGIN, so it runs on any x86-64 Linux with glibc >= Debian 12's and no
# LLVM installed. Prints the bundle's path last.
set -u
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

nerve_install_deps
nerve_build all nerve-unittests nerve-bench-latency

version=$(sed -n 's/^#define NERVE_VERSION_STRING "\(.*\)"/\1/p' "$NERVE_BUILD_DIR/include/nerve/NerveVersion.inc")
name="nerve-$version-linux-x86_64"
stage="$NERVE_BUILD_DIR/bundle/$name"
rm -rf "$NERVE_BUILD_DIR/bundle" && mkdir -p "$stage/lib"

cmake --install "$NERVE_BUILD_DIR" --prefix "$stage" --strip >"$NERVE_LOG_DIR/bundle.log" 2>&1 ||
  die "install into the bundle failed (log: $NERVE_LOG_DIR/bundle.log)"

# Debian's LLVM/MLIR, LLVM's OpenMP runtime (the CPU target's threads) and what they
# pull in that a stock Linux lacks; the rest
# (libc, libstdc++, zlib, zstd, libxml2, libffi, libtinfo) is on every system.
carried=(libMLIR.so.22.1 libLLVM.so.22.1 libz3.so.4 libedit.so.2 libbsd.so.0 libmd.so.0 libomp.so.5)
for lib in "${carried[@]}"; do
  path=$(ldconfig -p | awk -v l="$lib" '$1 == l { print $NF; exit }')
  [ -n "$path" ] || path="/usr/lib/llvm-22/lib/$lib"
  [ -f "$path" ] || die "cannot find $lib to carry in the bundle"
  cp -L "$path" "$stage/lib/$lib"
  chmod u+w "$stage/lib/$lib"
  patchelf --set-rpath '$ORIGIN' "$stage/lib/$lib" || die "patchelf failed on $lib"
done

# Every executable and library must find the rest inside the bundle.
for f in "$stage"/bin/* "$stage"/lib/*.so*; do
  missing=$(env -u LD_LIBRARY_PATH ldd "$f" 2>/dev/null | grep 'not found' || true)
  [ -z "$missing" ] || die "$(basename "$f") does not resolve inside the bundle: $missing"
done

say "compressing $name.tar.xz"
tar -C "$NERVE_BUILD_DIR/bundle" -cf - "$name" | xz -9 -T"$(nproc)" >"$NERVE_BUILD_DIR/$name.tar.xz" ||
  die "compressing the bundle failed"
size=$(du -m "$NERVE_BUILD_DIR/$name.tar.xz" | cut -f1)
[ "$size" -le 60 ] || die "bundle is ${size} MiB, over the 60 MiB limit"
say "bundle: $NERVE_BUILD_DIR/$name.tar.xz (${size} MiB)"

# The test tools (lit, FileCheck, not), to run the test suite from the
# bundle on a machine without LLVM: unpacked over the bundle, they use its lib/.
tools="$NERVE_BUILD_DIR/bundle/test-tools"
mkdir -p "$tools/bin" "$tools/share"
for tool in FileCheck not count; do
  cp "$NERVE_LLVM_BIN/$tool" "$tools/bin/" && chmod u+w "$tools/bin/$tool"
  patchelf --set-rpath '$ORIGIN/../lib' "$tools/bin/$tool"
done
# The GoogleTest binaries, so the GPU cases of the unit tests run there too.
mkdir -p "$tools/unittests"
for test in "$NERVE_BUILD_DIR"/unittests/Nerve*Tests; do
  strip -o "$tools/unittests/$(basename "$test")" "$test"
  patchelf --set-rpath '$ORIGIN/../lib' "$tools/unittests/$(basename "$test")"
done
# The latency benchmark (links nerve statically, like the tools).
mkdir -p "$tools/bench"
strip -o "$tools/bench/nerve-bench-latency" "$NERVE_BUILD_DIR/bin/nerve-bench-latency"
patchelf --set-rpath '$ORIGIN/../lib' "$tools/bench/nerve-bench-latency"
mkdir -p "$tools/share/lit"
cp -r /usr/lib/llvm-22/utils/lit/lit "$tools/share/lit/lit"
find "$tools/share/lit" -name '__pycache__' -prune -exec rm -rf {} +
cat >"$tools/share/lit/lit.py" <<'LIT'
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lit.main import main
main()
LIT
tar -C "$tools" -cJf "$NERVE_BUILD_DIR/nerve-test-tools.tar.xz" bin share unittests bench ||
  die "packing the test tools failed"
say "test tools: $NERVE_BUILD_DIR/nerve-test-tools.tar.xz"
