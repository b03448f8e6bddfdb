#!/usr/bin/env python3
"""What every example program answers without a model: --version (the
program name and agt_version(), which is the project version of meson.build),
agt-review --help naming every option and the debug variable, and agt-chat
--resume of a file that is not there.

usage: test_basics.py AGT_REVIEW AGT_CHAT AGT_MCP AGT_TOOLS
"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tap import Tap  # noqa: E402


def run(args, cwd=None):
    p = subprocess.run(args, capture_output=True, text=True, timeout=60, cwd=cwd,
                       stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout, p.stderr


def main():
    review, chat, mcp, tools = sys.argv[1:5]
    t = Tap()
    with open(os.path.join(os.environ["AGT_SOURCE_DIR"], "meson.build")) as f:
        version = re.search(r"version:\s*'([^']+)'", f.read()).group(1)
    for name, exe in (("agt-review", review), ("agt-chat", chat), ("agt-mcp", mcp),
                      ("agt-tools", tools)):
        t.eq(run([exe, "--version"]), (0, "%s %s\n" % (name, version), ""),
             "%s --version prints its name and the library version" % name)
        rc, out, err = run([exe, "--help"])
        t.ok(rc == 0 and "--version" in out, "%s --help lists --version" % name)

    rc, out, err = run([review, "--help"])
    # every option the parser takes is in the help text
    with open(os.path.join(os.environ["AGT_SOURCE_DIR"], "examples", "review",
                           "agt-review.c")) as f:
        src = f.read()
    parsed = sorted(set(re.findall(r'strcmp\(a, "(--[a-z-]+)"\) == 0', src)))
    missing = [o for o in parsed if o not in out]
    t.eq(missing, [], "agt-review --help lists every option it parses (%d)" % len(parsed))
    t.ok("--group-lines N" in out, "agt-review --help lists --group-lines")
    t.ok("AGT_REVIEW_DEBUG" in out, "agt-review --help names AGT_REVIEW_DEBUG")

    with tempfile.TemporaryDirectory() as tmp:
        missing_file = os.path.join(tmp, "nonexistent")
        rc, out, err = run([chat, "--model", "replay:/dev/null", "--resume", missing_file, "-p",
                            "hi"], cwd=tmp)
        t.eq((rc, err.strip()),
             (1, "agt-chat: --resume %s: cannot open the file: No such file or directory "
                 "(give a file written by /save FILE)" % missing_file),
             "--resume of a missing file says it cannot be opened, and why")
        notjson = os.path.join(tmp, "notes.txt")
        with open(notjson, "w") as f:
            f.write("hello\n")
        rc, out, err = run([chat, "--model", "replay:/dev/null", "--resume", notjson, "-p", "hi"],
                           cwd=tmp)
        t.ok(rc == 1 and err.startswith("agt-chat: --resume %s: not JSON (line 1: " % notjson),
             "--resume of a file that is not JSON says so")
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
