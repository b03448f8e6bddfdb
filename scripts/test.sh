#!/bin/sh
# Builds libagenttools (warnings are errors) and runs every test suite.
# usage: scripts/test.sh [BUILD_DIR] [extra meson setup options...]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
[ $# -gt 0 ] && shift
if [ ! -f "$build/build.ninja" ]; then
    meson setup "$build" "$top" -Dwerror=true "$@"
fi
ninja -C "$build"
status=0
meson test -C "$build" --print-errorlogs --num-processes 2 || status=$?
python3 "$top/.ci/summary.py" "$build" || status=1
exit $status
