#!/bin/sh
# One command for a fresh Debian 12 machine: install the dependencies, build,
# and run the main job: agt-review on this repository's last commit (the
# change set preview when no model is configured; a full review with
# AGT_API_KEY/--model set, see docs/cli.md), after agt-tools demo (the chat
# tool set exported and real tool calls dispatched, good and bad).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
sh "$top/scripts/install-deps.sh"
[ -f "$top/build/build.ninja" ] || meson setup "$top/build" "$top" -Dwerror=true
ninja -C "$top/build"
"$top/build/examples/tools/agt-tools" --root "$top" demo
echo
if git -C "$top" rev-parse -q --verify HEAD >/dev/null 2>&1; then
    "$top/build/examples/review/agt-review" --repo "$top" --commit HEAD "$@"
fi
