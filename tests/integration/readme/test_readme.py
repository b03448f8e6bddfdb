#!/usr/bin/env python3
"""The README's C example, compiled as it stands and run: a Write in manual
mode goes through the pending path (the example once passed a NULL result on),
an unknown tool comes back as an error result.

usage: test_readme.py SOURCE_DIR BUILD_DIR CC
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "cli"))
from tap import Tap  # noqa: E402

HOST = r"""
#include <stdio.h>
#include <string.h>
static int asked;
void send_to_model(const char *call_id, const char *text, int is_error)
{
    printf("%s|%d|%s\n", call_id, is_error, strncmp(text, "Tool 'NoSuchTool' is not available here.", 40) == 0 ? "not-available" : "other");
}
int ask_user(const char *pending_json)
{
    asked += strstr(pending_json, "\"call_id\":\"w1\"") != NULL;
    return AGT_DECISION_APPROVE;
}
int main(int argc, char **argv)
{
    agt_registry *reg = NULL;
    agt_session *s = NULL;
    char *tools = NULL;
    if (argc < 2 || setup(argv[1], &reg, &s, &tools) != AGT_OK)
        return 2;
    handle_call(s, "w1", "Write", "{\"path\":\"hello.txt\",\"content\":\"hi\\n\"}");
    handle_call(s, "u1", "NoSuchTool", "{}");
    printf("asked %d\n", asked);
    agt_free(tools);
    agt_session_free(s);
    agt_registry_free(reg);
    return 0;
}
"""


def main():
    src, build, cc = sys.argv[1], sys.argv[2], sys.argv[3]
    t = Tap()
    text = open(os.path.join(src, "README.md"), encoding="utf-8").read()
    m = re.search(r"## Using it from C\n.*?```c\n(.*?)```", text, re.S)
    if not t.ok(m is not None, "README has a C example under 'Using it from C'"):
        return t.done()
    tmp = tempfile.mkdtemp(prefix="agt-readme-")
    try:
        c = os.path.join(tmp, "readme.c")
        with open(c, "w") as f:
            f.write(m.group(1) + HOST)
        exe = os.path.join(tmp, "readme")
        r = subprocess.run(cc.split() + ["-std=c11", "-Wall", "-Wextra", "-Werror",
                                         "-I", os.path.join(src, "include"), c, "-o", exe,
                                         "-L", os.path.join(build, "lib"), "-lagenttools"],
                           capture_output=True, text=True)
        if not t.ok(r.returncode == 0, "the example compiles with -Wall -Wextra -Werror"):
            print("# " + r.stderr.strip().replace("\n", "\n# "))
            return t.done()
        ws = os.path.join(tmp, "ws")
        os.mkdir(ws)
        env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(build, "lib"))
        r = subprocess.run([exe, ws], capture_output=True, text=True, env=env)
        t.eq(r.returncode, 0, "it runs")
        lines = r.stdout.splitlines()
        t.eq(lines, ["w1|0|other", "u1|1|not-available", "asked 1"],
             "the Write waited for the user, then ran; the unknown tool is an error result")
        p = os.path.join(ws, "hello.txt")
        t.eq(open(p).read() if os.path.exists(p) else None, "hi\n", "the approved Write wrote the file")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
