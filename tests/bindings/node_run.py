#!/usr/bin/env python3
"""Runs the Node binding's tests with `node --test` (TAP reporter).

usage: node_run.py SOURCE_DIR CACHE_DIR TEST_FILE...

koffi, at the version bindings/node/package.json pins, is installed once
with npm into CACHE_DIR (in the build tree: `npm install --prefix CACHE_DIR`)
and found through NODE_PATH, as is this checkout's bindings/node (under the
name agenttools, as an installed package). The run is skipped, with the reason, only when
node (18 or newer), npm or the koffi install is really unavailable.
"""

import json
import os
import shutil
import subprocess
import sys


def skip(reason):
    print("1..0 # SKIP " + reason)
    return 0


def koffi_pin(src):
    with open(os.path.join(src, "bindings", "node", "package.json"), encoding="utf-8") as f:
        return json.load(f)["dependencies"]["koffi"]


def ensure_koffi(npm, cache, pin):
    """'' when koffi@pin is in cache (installed now or before), else the reason."""
    pkg = os.path.join(cache, "node_modules", "koffi", "package.json")
    if os.path.exists(pkg):
        with open(pkg, encoding="utf-8") as f:
            if json.load(f).get("version") == pin:
                return ""
    os.makedirs(cache, exist_ok=True)
    # --ignore-scripts: koffi ships prebuilt binaries for every platform; its
    # install script only checks them (npm 11 skips it anyway)
    p = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--no-save", "--ignore-scripts",
                        "--prefix", cache, "koffi@" + pin], capture_output=True, text=True,
                       timeout=280)
    if p.returncode != 0 or not os.path.exists(pkg):
        lines = (p.stderr.strip() or p.stdout.strip() or "?").splitlines()
        return "npm install koffi@%s failed (exit %d): %s" % (pin, p.returncode, lines[-1])
    return ""


def main():
    src, cache, files = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3:]
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node:
        return skip("node is not installed (scripts/install-deps.sh installs nodejs)")
    v = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip()
    try:
        major = int(v.lstrip("v").split(".")[0])
    except ValueError:
        major = 0
    if major < 18:
        return skip("node %s is too old: node --test --test-reporter=tap needs 18 or newer" % v)
    if not npm:
        return skip("npm is not installed, so koffi cannot be fetched (scripts/install-deps.sh installs npm)")
    pin = koffi_pin(src)
    why = ensure_koffi(npm, cache, pin)
    if why:
        return skip(why)
    link = os.path.join(cache, "link")
    os.makedirs(link, exist_ok=True)
    target = os.path.join(os.path.abspath(src), "bindings", "node")
    pkg = os.path.join(link, "agenttools")
    if not os.path.islink(pkg) or os.readlink(pkg) != target:
        if os.path.lexists(pkg):
            os.remove(pkg)
        os.symlink(target, pkg)
    env = dict(os.environ, NODE_PATH=os.path.join(cache, "node_modules") + os.pathsep + link)
    env.pop("NODE_OPTIONS", None)
    p = subprocess.run([node, "--test", "--test-reporter=tap"] + files, env=env)
    return p.returncode


if __name__ == "__main__":
    sys.exit(main())
