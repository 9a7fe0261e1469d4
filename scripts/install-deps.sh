#!/usr/bin/env bash
# Installs the Debian packages nerve needs to build and test, skipping those
# already installed. Safe to run any number of times. Nothing is downloaded
# from anywhere but Debian's archive.
set -u

packages=(
  cmake ninja-build ccache git patchelf xz-utils
  g++ python3 python3-numpy python3-torch python3-pytest python3-sklearn libgtest-dev
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  clang-22 lld-22 libclang-rt-22-dev
  libomp-dev
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [ "$status" = "install ok installed" ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
else
  echo "nerve: error: missing Debian packages (${missing[*]}); run this script as root or install them with apt-get" >&2
  exit 1
fi

log=$(mktemp /tmp/nerve-install-deps.XXXXXX.log)
echo "nerve: installing ${missing[*]} (log: $log)"
if ! "${sudo[@]}" apt-get update >"$log" 2>&1; then
  echo "nerve: error: apt-get update failed: $(grep -m1 -E '^(E|W):' "$log") (full log: $log)" >&2
  exit 1
fi
if ! "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
    "${missing[@]}" >>"$log" 2>&1; then
  echo "nerve: error: could not install ${missing[*]}: $(grep -m1 -E '^E:' "$log") (full log: $log)" >&2
  exit 1
fi
