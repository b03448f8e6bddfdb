#!/usr/bin/env python3
"""Writes raw JSON-RPC lines to agt-mcp and checks every answer (TAP).
Bad requests must get JSON-RPC errors (JSON-RPC 2.0 section 5.1 codes) and
the server must keep serving; EOF ends it with status 0.

usage: mcp_raw.py AGT_MCP
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

n = failed = 0


def check(ok, name, detail=None):
    global n, failed
    n += 1
    if not ok:
        failed += 1
    print("%s %d - %s" % ("ok" if ok else "not ok", n, name))
    if not ok and detail is not None:
        print("# " + repr(detail))


class Server:
    def __init__(self, exe, ws, *args, cwd=None, stderr=None):
        root = ["--root", ws] if ws is not None else []
        self.p = subprocess.Popen([exe] + root + list(args), stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, encoding="utf-8", cwd=cwd,
                                  stderr=stderr)

    def read(self):
        return json.loads(self.p.stdout.readline())

    def send_raw(self, text):
        self.p.stdin.write(text)
        self.p.stdin.flush()

    def ask(self, line):
        self.send_raw(line + "\n")
        return json.loads(self.p.stdout.readline())

    def close(self):
        self.p.stdin.close()
        rest = self.p.stdout.read()
        return self.p.wait(timeout=20), rest


def req(id_, method, params=None):
    m = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        m["params"] = params
    return json.dumps(m)


def err_code(resp):
    return (resp.get("id"), resp.get("error", {}).get("code"))


def main():
    exe = os.path.abspath(sys.argv[1])
    ws = tempfile.mkdtemp(prefix="agt-mcp-raw-")
    try:
        with open(os.path.join(ws, "a.txt"), "w") as f:
            f.write("alpha\nbeta\n")
        for name in (".env.prod", "prod.tfstate"):
            with open(os.path.join(ws, name), "w") as f:
                f.write("TOKEN=sk-live-123\n")
        s = Server(exe, ws)
        r = s.ask(req(1, "initialize", {"protocolVersion": "2025-03-26", "capabilities": {},
                                        "clientInfo": {"name": "raw", "version": "0"}}))
        check(r["result"]["protocolVersion"] == "2025-03-26", "supported version is echoed", r)
        check(r["result"]["capabilities"]["tools"] == {"listChanged": False}, "tools capability", r)
        check(r["result"]["serverInfo"]["name"] == "agt-mcp", "serverInfo", r)
        r = s.ask(req(2, "initialize", {"protocolVersion": "1999-01-01"}))
        check(r["result"]["protocolVersion"] == "2025-06-18", "unknown version -> newest", r)
        r = s.ask(req(3, "initialize", {"protocolVersion": "2024-11-05"}))
        check(r["result"]["protocolVersion"] == "2024-11-05", "2024-11-05 is echoed", r)
        s.send_raw(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        s.send_raw(json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled",
                               "params": {"requestId": 3}}) + "\n")
        r = s.ask(req(4, "ping"))
        check(r == {"jsonrpc": "2.0", "id": 4, "result": {}}, "notifications unanswered; ping", r)

        r = s.ask("this is not json")
        check(err_code(r) == (None, -32700), "garbage line -> -32700 parse error", r)
        r = s.ask('{"jsonrpc":"2.0","id":5,"method":"tools/list"')
        check(err_code(r) == (None, -32700), "truncated object -> -32700", r)
        r = s.ask(req(6, "resources/list"))
        check(err_code(r) == (6, -32601), "unknown method -> -32601", r)
        r = s.ask(json.dumps({"jsonrpc": "1.0", "id": 7, "method": "ping"}))
        check(err_code(r) == (7, -32600), "jsonrpc 1.0 -> -32600", r)
        r = s.ask(json.dumps({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}))
        check(err_code(r) == (None, -32600), "object id -> -32600", r)
        r = s.ask(json.dumps({"jsonrpc": "2.0", "id": 8}))
        check(err_code(r) == (8, -32600), "no method -> -32600", r)
        r = s.ask("[1,2]")
        check(isinstance(r, list) and [err_code(x) for x in r] == [(None, -32600)] * 2,
              "batch of non-objects -> two -32600", r)
        r = s.ask("[]")
        # JSON-RPC 2.0 section 7 (examples): "rpc call with an empty Array"
        # is answered with a single error object, not an array.
        check(isinstance(r, dict) and err_code(r) == (None, -32600),
              "empty batch -> one -32600 object", r)
        r = s.ask(req(9, "tools/call", {"arguments": {}}))
        check(err_code(r) == (9, -32602), "tools/call without name -> -32602", r)
        r = s.ask(req(10, "tools/call", {"name": "Read", "arguments": [1]}))
        check(err_code(r) == (10, -32602), "tools/call arguments not an object -> -32602", r)
        r = s.ask(req(11, "tools/call", {"name": "Nope", "arguments": {}}))
        check(err_code(r) == (11, -32602), "unknown tool -> -32602", r)
        r = s.ask(req(12, "initialize", {}))
        check(err_code(r) == (12, -32602), "initialize without protocolVersion -> -32602", r)
        r = s.ask(req("s-13", "tools/list", {"cursor": 5}))
        check(err_code(r) == ("s-13", -32602), "string id kept; bad cursor -> -32602", r)

        r = s.ask(req(14, "tools/list"))
        names = [t["name"] for t in r["result"]["tools"]]
        check("Read" in names and "Edit" in names, "tools/list after errors", names)
        r = s.ask(req(15, "tools/call", {"name": "Read", "arguments": {"path": "a.txt", "n_lines": 1}}))
        res = r["result"]
        check(res["isError"] is False and res["content"][0]["type"] == "text"
              and res["content"][0]["text"].startswith("1\talpha\n")
              and "2\tbeta" not in res["content"][0]["text"], "Read n_lines 1", r)
        # the library's sensitive-file policy holds through the MCP server
        for k, (name, tool, args) in enumerate([
                (".env.prod", "Read", {"path": ".env.prod"}),
                ("prod.tfstate", "Read", {"path": "prod.tfstate"}),
                (".env.prod", "Grep", {"pattern": "TOKEN", "output_mode": "content"}),
                (".env.prod", "Glob", {"pattern": "*prod*"})]):
            r = s.ask(req(150 + k, "tools/call", {"name": tool, "arguments": args}))
            text = r["result"]["content"][0]["text"]
            check("sk-live-123" not in text and "sensitive" in text,
                  "MCP %s: %s not shown" % (tool, name), r)
        # the host's patterns from the command line
        with open(os.path.join(ws, "app.secret"), "w") as f:
            f.write("KEY=sk-live-123\n")
        with open(os.path.join(ws, "cert.pem"), "w") as f:
            f.write("public cert\n")
        s2 = Server(exe, ws, "--sensitive", "*.secret", "--not-sensitive", "*.pem")
        r = s2.ask(req(1, "tools/call", {"name": "Read", "arguments": {"path": "app.secret"}}))
        t = r["result"]["content"][0]["text"]
        check(r["result"]["isError"] is True and "sk-live-123" not in t and "sensitive" in t,
              "--sensitive '*.secret': Read refused", r)
        r = s2.ask(req(2, "tools/call", {"name": "Read", "arguments": {"path": "cert.pem"}}))
        check(r["result"]["isError"] is False and "public cert" in r["result"]["content"][0]["text"],
              "--not-sensitive '*.pem': Read shows it", r)
        s2.p.stdin.close()
        s2.p.wait(timeout=30)
        p3 = subprocess.run([exe, "--root", ws, "--not-sensitive", "*.nothing"],
                            capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=30)
        check(p3.returncode == 1 and "--not-sensitive *.nothing" in p3.stderr,
              "--not-sensitive of an unknown pattern: exit 1 naming it", p3.stderr)
        r = s.ask(req(16, "tools/call", {"name": "Read", "arguments": {"path": "a.txt", "bogus": 1}}))
        check(r["result"]["isError"] is True, "schema violation -> isError result", r)
        r = s.ask(req(17, "tools/call", {"name": "Write", "arguments": {"path": "b.txt",
                                                                         "content": "x"}}))
        t = r["result"]["content"][0]["text"]
        check(r["result"]["isError"] is True and "--allow 'Write(./b.txt)'" in t,
              "call needing approval is refused with the rule to pass", r)
        check(not os.path.exists(os.path.join(ws, "b.txt")), "refused Write wrote nothing")

        # A message split over two writes, and a 1 MiB message.
        s.send_raw('{"jsonrpc":"2.0","id":18,')
        r = s.ask('"method":"ping"}')
        check(r == {"jsonrpc": "2.0", "id": 18, "result": {}}, "message split across writes", r)
        big = "x" * (1 << 20)
        r = s.ask(req(19, "tools/call", {"name": "TodoList",
                                         "arguments": {"todos": [{"title": big,
                                                                  "status": "pending"}]}}))
        check(r["result"]["isError"] is False, "1 MiB message", r["result"]["isError"])
        # Over 256 MiB without a newline: one -32700, the rest of that line
        # dropped, the server goes on (it buffered until memory ran out).
        s.send_raw('{"jsonrpc":"2.0","id":20,"method":"ping","params":{"x":"')
        chunk = "y" * (1 << 20)
        for _ in range(257):
            s.send_raw(chunk)
        r = json.loads(s.p.stdout.readline())
        check(err_code(r) == (None, -32700) and "longer than 256 MiB" in r["error"]["message"],
              "message over 256 MiB -> -32700", r)
        s.send_raw('"}}\n')  # the end of that line: dropped, no answer
        r = s.ask(req(21, "ping"))
        check(r == {"jsonrpc": "2.0", "id": 21, "result": {}}, "next message served", r)
        rc, rest = s.close()
        check(rc == 0 and rest == "", "EOF ends the server with status 0", (rc, rest[:200]))

        # --yolo runs what would need approval; deny rules still win.
        s = Server(exe, ws, "--yolo", "--deny", "Write(secret.txt)")
        r = s.ask(req(1, "tools/call", {"name": "Write", "arguments": {"path": "b.txt",
                                                                        "content": "yolo\n"}}))
        check(r["result"]["isError"] is False, "--yolo runs Write", r)
        with open(os.path.join(ws, "b.txt")) as f:
            check(f.read() == "yolo\n", "--yolo Write wrote the file")
        r = s.ask(req(2, "tools/call", {"name": "Write", "arguments": {"path": "secret.txt",
                                                                        "content": "x"}}))
        check(r["result"]["isError"] is True and not os.path.exists(os.path.join(ws, "secret.txt")),
              "--deny beats --yolo", r)
        rc, _ = s.close()
        check(rc == 0, "second server exits 0")

        # Tools that cannot work over MCP are not offered; annotations from access.
        s = Server(exe, ws)
        r = s.ask(req(1, "tools/list"))
        tools = {t["name"]: t for t in r["result"]["tools"]}
        left = ["CronCreate", "CronList", "CronDelete", "EnterPlanMode", "ExitPlanMode"]
        check([x for x in left if x in tools] == [], "cron and plan-mode tools are left out",
              sorted(tools))
        check(sorted(tools) == ["Bash", "Edit", "FetchURL", "Glob", "Grep", "MultiEdit", "NotebookEdit", "Read",
                                "ReadMediaFile", "TaskList", "TaskOutput", "TaskStop", "TodoList", "Write",
                                "apply_patch"],
              "the chat set's other offered tools are there", sorted(tools))
        r = s.ask(req(2, "tools/call", {"name": "CronCreate", "arguments": {}}))
        check(err_code(r) == (2, -32602) and "not offered over MCP" in r["error"]["message"],
              "calling a left-out tool: -32602 saying why", r)
        check(tools["Read"].get("annotations") == {
            "title": "Read", "readOnlyHint": True, "destructiveHint": False,
            "idempotentHint": True, "openWorldHint": False}, "Read annotations: read-only",
            tools["Read"].get("annotations"))
        check(tools["Write"].get("annotations") == {
            "title": "Write", "readOnlyHint": False, "destructiveHint": True,
            "idempotentHint": False, "openWorldHint": False}, "Write annotations: destructive",
            tools["Write"].get("annotations"))
        check(tools["Bash"].get("annotations") == {
            "title": "Bash", "readOnlyHint": False, "destructiveHint": True,
            "idempotentHint": False, "openWorldHint": True}, "Bash annotations: open world",
            tools["Bash"].get("annotations"))
        check(tools["ReadMediaFile"]["annotations"]["title"] == "Read media file",
              "title from a CamelCase name", tools["ReadMediaFile"]["annotations"])
        s.close()

        # Approval through elicitation when the client declares it.
        s = Server(exe, ws, "--deny", "Write(never.txt)")
        s.ask(req(1, "initialize", {"protocolVersion": "2025-06-18",
                                    "capabilities": {"elicitation": {}}}))
        s.send_raw(req(2, "tools/call", {"name": "Write", "arguments": {
            "path": "e1.txt", "content": "one\n"}}) + "\n")
        e = s.read()
        params = e.get("params", {})
        props = params.get("requestedSchema", {}).get("properties", {})
        check(e.get("method") == "elicitation/create" and "id" in e and "result" not in e,
              "a call needing approval sends elicitation/create", e)
        check(props.get("decision", {}).get("enum") == ["allow", "allow_session", "reject"]
              and props["decision"].get("enumNames") == [
                  "Allow once", "Allow for this session: Write(./e1.txt)", "Reject"]
              and params["requestedSchema"].get("required") == ["decision"]
              and props.get("reason", {}).get("type") == "string",
              "the form: once, for the session (with the suggested rule), reject; a reason", e)
        check(params.get("message", "").startswith("agt-mcp: run Write? ")
              and '"path":"e1.txt"' in params.get("message", ""),
              "the question names the tool and its arguments", params.get("message"))
        check(not os.path.exists(os.path.join(ws, "e1.txt")), "nothing written before the answer")
        r = s.ask(json.dumps({"jsonrpc": "2.0", "id": e["id"], "result": {
            "action": "accept", "content": {"decision": "allow"}}}))
        check(r.get("id") == 2 and r.get("result", {}).get("isError") is False,
              "allow once: the tools/call is answered with the result", r)
        with open(os.path.join(ws, "e1.txt")) as f:
            check(f.read() == "one\n", "allow once: the file is written")

        s.send_raw(req(3, "tools/call", {"name": "Write", "arguments": {
            "path": "e2.txt", "content": "two\n"}}) + "\n")
        e = s.read()
        r = s.ask(json.dumps({"jsonrpc": "2.0", "id": e["id"], "result": {
            "action": "accept", "content": {"decision": "reject", "reason": "not today"}}}))
        t = r.get("result", {}).get("content", [{}])[0].get("text", "")
        check(r.get("id") == 3 and r["result"]["isError"] is True
              and t.startswith("The user declined this Write call: not today."),
              "reject: an error result with the user's reason", r)
        check(not os.path.exists(os.path.join(ws, "e2.txt")), "reject: nothing written")

        s.send_raw(req(4, "tools/call", {"name": "Write", "arguments": {
            "path": "e3.txt", "content": "3"}}) + "\n")
        e = s.read()
        r = s.ask(json.dumps({"jsonrpc": "2.0", "id": e["id"], "result": {"action": "decline"}}))
        check(r.get("id") == 4 and r["result"]["isError"] is True and "declined in the MCP client"
              in r["result"]["content"][0]["text"], "decline: rejected", r)
        s.send_raw(req(5, "tools/call", {"name": "Write", "arguments": {
            "path": "e3.txt", "content": "3"}}) + "\n")
        e = s.read()
        r = s.ask(json.dumps({"jsonrpc": "2.0", "id": e["id"],
                              "error": {"code": -32601, "message": "no"}}))
        check(r.get("id") == 5 and r["result"]["isError"] is True
              and "--allow 'Write(./e3.txt)'" in r["result"]["content"][0]["text"],
              "an error answer: refused as without elicitation, naming the rule", r)

        # two calls waiting at once, answered in the other order
        s.send_raw(req(6, "tools/call", {"name": "Write", "arguments": {
            "path": "e4.txt", "content": "4"}}) + "\n")
        e6 = s.read()
        s.send_raw(req(7, "tools/call", {"name": "Write", "arguments": {
            "path": "e5.txt", "content": "5"}}) + "\n")
        e7 = s.read()
        r = s.ask(req(8, "ping"))
        check(r == {"jsonrpc": "2.0", "id": 8, "result": {}} and e6["id"] != e7["id"],
              "the server keeps serving while calls wait for their answers", r)
        r7 = s.ask(json.dumps({"jsonrpc": "2.0", "id": e7["id"], "result": {
            "action": "accept", "content": {"decision": "allow_session"}}}))
        r6 = s.ask(json.dumps({"jsonrpc": "2.0", "id": e6["id"], "result": {"action": "cancel"}}))
        check(e7["params"]["requestedSchema"]["properties"]["decision"]["enumNames"][1]
              == "Allow for this session: Write(./e5.txt)", "the suggested rule of e5.txt", e7)
        check(r7.get("id") == 7 and r7["result"]["isError"] is False and r6.get("id") == 6
              and r6["result"]["isError"] is True, "answers matched to their calls", (r6, r7))
        check(os.path.exists(os.path.join(ws, "e5.txt"))
              and not os.path.exists(os.path.join(ws, "e4.txt")), "only the allowed call ran")
        r = s.ask(req(9, "tools/call", {"name": "Write", "arguments": {
            "path": "e5.txt", "content": "5 again"}}))
        check(r.get("id") == 9 and r.get("result", {}).get("isError") is False,
              "after 'for this session' (rule Write(./e5.txt)) the next Write runs without "
              "asking", r)
        r = s.ask(req(10, "tools/call", {"name": "Write", "arguments": {
            "path": "never.txt", "content": "x"}}))
        check(r.get("id") == 10 and r["result"]["isError"] is True
              and not os.path.exists(os.path.join(ws, "never.txt")),
              "a --deny rule refuses without asking", r)
        rc, rest = s.close()
        check(rc == 0 and rest == "", "elicitation server exits 0", (rc, rest[:200]))

        # Roots: without --root, the client's first file:// root is the workspace.
        spaced = os.path.join(ws, "with space")
        os.makedirs(spaced)
        with open(os.path.join(spaced, "r.txt"), "w") as f:
            f.write("in the root\n")
        elsewhere = tempfile.mkdtemp(prefix="agt-mcp-cwd-")
        errf = tempfile.TemporaryFile(mode="w+")
        s = Server(exe, None, cwd=elsewhere, stderr=errf)
        s.ask(req(1, "initialize", {"protocolVersion": "2025-06-18",
                                    "capabilities": {"roots": {"listChanged": True}}}))
        s.send_raw(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        q = s.read()
        check(q.get("method") == "roots/list" and "id" in q, "roots/list after initialized", q)
        # a call before the answer waits for it
        s.send_raw(req(2, "tools/call", {"name": "Read", "arguments": {"path": "r.txt"}}) + "\n")
        uri = "file://" + spaced.replace(" ", "%20")
        r = s.ask(json.dumps({"jsonrpc": "2.0", "id": q["id"], "result": {"roots": [
            {"uri": "https://example.com/x", "name": "web"},
            {"uri": "file:///nonexistent-agt-root", "name": "gone"},
            {"uri": uri, "name": "ws"}]}}))
        check(r.get("id") == 2 and r.get("result", {}).get("content", [{}])[0].get("text", "")
              .startswith("1\tin the root"), "the held call runs in the client's root", r)
        s.send_raw(json.dumps({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})
                   + "\n")
        q = s.read()
        check(q.get("method") == "roots/list", "roots/list again after list_changed", q)
        s.send_raw(json.dumps({"jsonrpc": "2.0", "id": q["id"], "result": {"roots": [
            {"uri": "file://localhost" + ws}]}}) + "\n")
        r = s.ask(req(3, "tools/call", {"name": "Read", "arguments": {"path": "a.txt"}}))
        check(r["result"]["content"][0]["text"].startswith("1\talpha"),
              "a changed root (file://localhost/...) moves the workspace", r)
        rc, _ = s.close()
        errf.seek(0)
        log = errf.read()
        check(("agt-mcp: workspace root: %s (the client's first root, %s)\n" % (spaced, uri)) in log
              and ("agt-mcp: workspace root: %s (the client's first root, file://localhost%s)\n"
                   % (ws, ws)) in log, "stderr says which root is used and why", log)

        # The client's other roots are writable roots of the session: the file
        # tools and the sandboxed Bash write there; a folder that is no root
        # is outside (asks: without elicitation it is refused); a root the
        # client takes back (list_changed) is outside again.
        extra = tempfile.mkdtemp(prefix="agt-mcp-extra-")
        notroot = tempfile.mkdtemp(prefix="agt-mcp-notroot-")
        with open(os.path.join(extra, "x.txt"), "w") as f:
            f.write("extra root\n")
        errf = tempfile.TemporaryFile(mode="w+")
        s = Server(exe, None, "--allow", "Write", "--allow", "Bash", cwd=elsewhere, stderr=errf)
        s.ask(req(1, "initialize", {"protocolVersion": "2025-06-18",
                                    "capabilities": {"roots": {"listChanged": True}}}))
        s.send_raw(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        q = s.read()
        s.send_raw(json.dumps({"jsonrpc": "2.0", "id": q["id"], "result": {"roots": [
            {"uri": "file://" + ws}, {"uri": "file://" + extra},
            {"uri": "file:///nonexistent-agt-root"}]}}) + "\n")
        xr = os.path.join(extra, "x.txt")
        r = s.ask(req(2, "tools/call", {"name": "Read", "arguments": {"path": xr}}))
        check(r.get("id") == 2 and r["result"]["isError"] is False
              and r["result"]["content"][0]["text"].startswith("1\textra root\n"),
              "a second client root is read without asking", r)
        r = s.ask(req(3, "tools/call", {"name": "Write", "arguments": {
            "path": os.path.join(extra, "w.txt"), "content": "w\n"}}))
        check(r["result"]["isError"] is False and open(os.path.join(extra, "w.txt")).read()
              == "w\n", "Write in a second client root", r)
        r = s.ask(req(4, "tools/call", {"name": "Bash", "arguments": {
            "command": "echo b > %s/b.txt && cat %s/b.txt" % (extra, extra)}}))
        check(r["result"]["isError"] is False
              and r["result"]["content"][0]["text"].startswith("b\n"),
              "Bash writes in a second client root (sandboxed where the kernel can)", r)
        r = s.ask(req(5, "tools/call", {"name": "Write", "arguments": {
            "path": os.path.join(notroot, "n.txt"), "content": "n\n"}}))
        check(r["result"]["isError"] is True and not os.path.exists(os.path.join(notroot, "n.txt")),
              "a folder that is no root is outside: asked, refused without elicitation", r)
        s.send_raw(json.dumps({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})
                   + "\n")
        q = s.read()
        check(q.get("method") == "roots/list", "roots/list after list_changed", q)
        s.send_raw(json.dumps({"jsonrpc": "2.0", "id": q["id"], "result": {"roots": [
            {"uri": "file://" + ws}]}}) + "\n")
        r = s.ask(req(6, "tools/call", {"name": "Write", "arguments": {
            "path": os.path.join(extra, "late.txt"), "content": "l\n"}}))
        check(r["result"]["isError"] is True and not os.path.exists(os.path.join(extra, "late.txt")),
              "a root the client took back is outside again", r)
        r = s.ask(req(7, "tools/call", {"name": "Read", "arguments": {"path": "a.txt"}}))
        check(r["result"]["content"][0]["text"].startswith("1\talpha"),
              "the workspace stays the first root", r)
        rc, _ = s.close()
        errf.seek(0)
        log = errf.read()
        rextra = os.path.realpath(extra)
        check(("agt-mcp: writable root: %s (one of the client's roots)\n" % rextra) in log
              and ("agt-mcp: workspace root: %s (a new session: the client no longer lists a "
                   "root it had)\n" % ws) in log, "stderr says which roots are used", log)
        shutil.rmtree(extra, ignore_errors=True)
        shutil.rmtree(notroot, ignore_errors=True)

        # Neither --root nor roots: the current directory, and stderr says so.
        errf = tempfile.TemporaryFile(mode="w+")
        with open(os.path.join(elsewhere, "c.txt"), "w") as f:
            f.write("cwd\n")
        s = Server(exe, None, cwd=elsewhere, stderr=errf)
        s.ask(req(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}}))
        s.send_raw(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        r = s.ask(req(2, "tools/call", {"name": "Read", "arguments": {"path": "c.txt"}}))
        check(r.get("id") == 2 and r["result"]["content"][0]["text"].startswith("1\tcwd"),
              "no roots capability: no roots/list, the current directory", r)
        s.close()
        errf.seek(0)
        log = errf.read()
        check("agt-mcp: workspace root: %s (the current directory: no --root, and the client "
              "offers no roots)\n" % os.path.realpath(elsewhere) in log,
              "stderr names the current directory as the root", log)
        # --root wins over the client's roots: no roots/list is sent
        s = Server(exe, ws)
        s.ask(req(1, "initialize", {"protocolVersion": "2025-06-18",
                                    "capabilities": {"roots": {}}}))
        s.send_raw(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        r = s.ask(req(2, "ping"))
        check(r == {"jsonrpc": "2.0", "id": 2, "result": {}}, "--root: the roots are not asked for",
              r)
        s.close()
        shutil.rmtree(elsewhere, ignore_errors=True)

        p = subprocess.run([exe, "--root", ws, "--allow", "Bash("], capture_output=True, text=True,
                           timeout=20)
        check(p.returncode != 0 and "Bash(" in p.stderr, "malformed --allow rule is refused",
              p.stderr)
        p = subprocess.run([exe, "--root", os.path.join(ws, "nope")], capture_output=True,
                           text=True, timeout=20)
        check(p.returncode != 0 and "nope" in p.stderr, "missing --root is refused", p.stderr)
    finally:
        shutil.rmtree(ws, ignore_errors=True)
    print("1..%d" % n)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
