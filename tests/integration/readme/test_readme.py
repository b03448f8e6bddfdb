#!/usr/bin/env python3
"""The README's C example, compiled as it stands and run: a Write in manual
mode goes through the pending path (the example once passed a NULL result on),
an unknown tool comes back as an error result.

usage: test_readme.py SOURCE_DIR BUILD_DIR CC
"""
import json
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


REPLAY1 = [
    {"content": "", "finish_reason": "tool_calls", "tool_calls": [
        {"id": "w1", "name": "Write", "arguments": json.dumps({"path": "hello.txt", "content": "hi\n"})}]},
    {"content": "", "finish_reason": "tool_calls", "tool_calls": [
        {"id": "w2", "name": "Write", "arguments": json.dumps({"path": "no.txt", "content": "x"})}]},
    {"content": "Wrote hello.txt.", "finish_reason": "stop"},
]
REPLAY2 = [
    {"content": "", "finish_reason": "tool_calls", "tool_calls": [
        {"id": "r1", "name": "Read", "arguments": json.dumps({"path": "hello.txt"})}]},
    {"content": "It says hi.", "finish_reason": "stop"},
]


def embedding_host(t, src, build, cc, tmp):
    """docs/embedding.md's complete host, compiled as it stands and run twice."""
    text = open(os.path.join(src, "docs", "embedding.md"), encoding="utf-8").read()
    m = re.search(r"## A complete host\n.*?```c\n(.*?)```", text, re.S)
    if not t.ok(m is not None, "docs/embedding.md has the complete host"):
        return
    c = os.path.join(tmp, "host.c")
    with open(c, "w") as f:
        f.write(m.group(1))
    exe = os.path.join(tmp, "host")
    jansson = subprocess.run(["pkg-config", "--cflags", "--libs", "jansson"], capture_output=True,
                             text=True).stdout.split()
    r = subprocess.run(cc.split() + ["-std=c11", "-Wall", "-Wextra", "-Werror", "-I",
                                     os.path.join(src, "include"), c, "-o", exe, "-L",
                                     os.path.join(build, "lib"), "-lagenttools"] + jansson,
                       capture_output=True, text=True)
    if not t.ok(r.returncode == 0, "the host compiles with -Wall -Wextra -Werror"):
        print("# " + r.stderr.strip().replace("\n", "\n# "))
        return
    ws = os.path.join(tmp, "hostws")
    os.mkdir(ws)
    state = os.path.join(tmp, "state.json")
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(build, "lib"))
    paths = []
    for i, lines in enumerate((REPLAY1, REPLAY2)):
        p = os.path.join(tmp, "replay%d.jsonl" % i)
        with open(p, "w") as f:
            f.write("".join(json.dumps(x) + "\n" for x in lines))
        paths.append(p)
    r = subprocess.run([exe, ws, paths[0], state, "write hello"], input="y\nn\n",
                       capture_output=True, text=True, env=env, timeout=60)
    t.eq(r.returncode, 0, "first run exits 0" + ("" if r.returncode == 0 else ": " + r.stderr))
    ask = "(Write changes files (access: write) and the session is in manual mode): approve? [y/a/N] "
    t.eq(r.stdout, 'Write {"path":"hello.txt","content":"hi\\n"} ' + ask +
         'Write {"path":"no.txt","content":"x"} ' + ask + "Wrote hello.txt.\n",
         "each Write asked the user, then the model's answer")
    t.eq(sorted(os.listdir(ws)), ["hello.txt"], "the approved Write ran, the rejected one did not")
    r = subprocess.run([exe, ws, paths[1], state, "what does it say"], input="",
                       capture_output=True, text=True, env=env, timeout=60)
    t.eq((r.returncode, r.stdout), (0, "It says hi.\n"), "the restored run reads the file")
    with open(state) as f:
        msgs = json.load(f)["agent"]["messages"]
    t.eq([m["role"] for m in msgs],
         ["user", "assistant", "tool", "assistant", "tool", "assistant",
          "user", "assistant", "tool", "assistant"],
         "the saved conversation holds both runs")
    t.ok(msgs[4]["content"].startswith("The user declined this Write call: not now."),
         "the model was told of the rejection, with the reason")


def status_table(t, src):
    """Every status code of common.h has its row in docs/embedding.md."""
    common = open(os.path.join(src, "include", "agenttools", "common.h")).read()
    codes = re.findall(r"^\s+(AGT_E[A-Z]+|AGT_ERROR) = (-\d+)", common, re.M)
    doc = open(os.path.join(src, "docs", "embedding.md"), encoding="utf-8").read()
    rows = dict(re.findall(r"^\| `(AGT_E[A-Z]+|AGT_ERROR)` \| (-\d+) \|", doc, re.M))
    t.eq(dict(codes), rows, "the status table lists every AGT_E* code with its value")


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
        embedding_host(t, src, build, cc, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    status_table(t, src)
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
