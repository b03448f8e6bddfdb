#!/bin/sh
# One command for a fresh Debian 12 machine: install the dependencies, build,
# and run the main job (agt-tools demo: load the chat tool set, export it for
# a model, dispatch real tool calls, show a schema error result).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
sh "$top/scripts/install-deps.sh"
[ -f "$top/build/build.ninja" ] || meson setup "$top/build" "$top" -Dwerror=true
ninja -C "$top/build"
"$top/build/examples/tools/agt-tools" --root "$top" demo
