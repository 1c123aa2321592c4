#!/usr/bin/env bash
# Makes bench/gpu/bundle/: gpurig built here (Debian 12) with the shared
# libraries it needs beyond glibc, for a GPU machine whose image has no
# hwloc, jansson, ncurses or libmicrohttpd development files. The device
# tool carries it (carry: ["bench/gpu/bundle"]); run.sh uses it when no build
# can be made there. usage: bench/gpu/bundle.sh [BUILD_DIR]   (default build)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
out=bench/gpu/bundle
[ -x "$build/gpurig" ] || { echo "bundle.sh: $build/gpurig is not built (./setup.sh run builds it)" >&2; exit 2; }
rm -rf "$out"
mkdir -p "$out/lib"
cp "$build/gpurig" "$out/"
cp -r data "$out/data"
# every library ldd resolves, except the C library's own (the device has a newer glibc)
ldd "$build/gpurig" | awk '$3 ~ /^\// {print $3}' | while read -r lib; do
  case $(basename "$lib") in
    libc.so.*|libm.so.*|ld-linux*|libpthread.so.*|libdl.so.*|librt.so.*) ;;
    *) cp -L "$lib" "$out/lib/" ;;
  esac
done
du -sh "$out" | awk '{print "bundle.sh: " $2 " is " $1}'
