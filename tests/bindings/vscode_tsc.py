#!/usr/bin/env python3
"""Type-checks and compiles examples/vscode with tsc (Debian's node-typescript)
against @types/vscode, fetched with npm into CACHE_DIR; prints TAP.

usage: vscode_tsc.py SOURCE_DIR CACHE_DIR OUT_DIR

Skipped, with the reason, when tsc or npm is missing or the install fails.
"""

import json
import os
import re
import shutil
import subprocess
import sys

TYPES_VSCODE = "1.74.0"  # the examples/vscode engines.vscode floor; TypeScript 4.8 reads it


def skip(reason):
    print("1..0 # SKIP " + reason)
    return 0


def main():
    src, cache, out = sys.argv[1], os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
    tsc, npm = shutil.which("tsc"), shutil.which("npm")
    if not tsc:
        return skip("tsc is not installed (scripts/install-deps.sh installs node-typescript)")
    if not npm:
        return skip("npm is not installed, so @types/vscode cannot be fetched")
    ext = os.path.join(src, "examples", "vscode")
    types = os.path.join(cache, "node_modules", "@types", "vscode", "package.json")
    have = None
    if os.path.exists(types):
        with open(types, encoding="utf-8") as f:
            have = json.load(f).get("version")
    if have != TYPES_VSCODE:
        os.makedirs(cache, exist_ok=True)
        p = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--no-save", "--ignore-scripts",
                            "--prefix", cache, "@types/vscode@" + TYPES_VSCODE],
                           capture_output=True, text=True, timeout=280)
        if p.returncode != 0 or not os.path.exists(types):
            lines = (p.stderr.strip() or p.stdout.strip() or "?").splitlines()
            return skip("npm install @types/vscode@%s failed: %s" % (TYPES_VSCODE, lines[-1]))
    n, failed = 0, 0

    def ok(cond, name, diag=""):
        nonlocal n, failed
        n += 1
        failed += 0 if cond else 1
        print("%s %d - %s" % ("ok" if cond else "not ok", n, name))
        if not cond:
            for l in diag.splitlines():
                print("# " + l)

    shutil.rmtree(out, ignore_errors=True)
    p = subprocess.run([tsc, "-p", ext, "--outDir", out, "--typeRoots",
                        os.path.join(cache, "node_modules", "@types")],
                       capture_output=True, text=True, timeout=280)
    ok(p.returncode == 0 and p.stdout.strip() == "",
       "tsc type-checks and compiles examples/vscode/src/extension.ts (strict) against the binding's index.d.ts",
       p.stdout + p.stderr)
    js = os.path.join(out, "extension.js")
    text = open(js, encoding="utf-8").read() if os.path.exists(js) else ""
    ok(re.search(r"exports\.activate = activate;", text) is not None
       and re.search(r"exports\.deactivate = deactivate;", text) is not None,
       "the compiled extension.js exports activate and deactivate")
    with open(os.path.join(ext, "package.json"), encoding="utf-8") as f:
        manifest = json.load(f)
    contributed = sorted(c["command"] for c in manifest["contributes"]["commands"])
    with open(os.path.join(ext, "src", "extension.ts"), encoding="utf-8") as f:
        registered = sorted(re.findall(r"registerCommand\('([^']+)'", f.read()))
    ok(contributed == registered and contributed == ["agenttools.grep", "agenttools.reviewPreview"],
       "package.json contributes exactly the commands extension.ts registers",
       "contributed %s, registered %s" % (contributed, registered))
    props = sorted(manifest["contributes"]["configuration"]["properties"])
    with open(os.path.join(ext, "src", "extension.ts"), encoding="utf-8") as f:
        used = sorted("agenttools." + k for k in re.findall(r"config\.get<[^>]+>\('([^']+)'", f.read()))
    ok(props == used, "the settings extension.ts reads are the ones package.json declares",
       "declared %s, read %s" % (props, used))
    print("1..%d" % n)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
