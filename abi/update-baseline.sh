#!/bin/sh
# Regenerates abi/libagenttools.abi from a build. Run it only when a release
# adds to the ABI on purpose (additions only; never remove or change).
# usage: abi/update-baseline.sh [BUILD_DIR]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
abidw --headers-dir "$top/include/agenttools" --drop-private-types --no-show-locs \
    --out-file "$top/abi/libagenttools.abi" "$build/lib/libagenttools.so.1"
echo "wrote $top/abi/libagenttools.abi"
