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
    def __init__(self, exe, ws, *args):
        self.p = subprocess.Popen([exe, "--root", ws] + list(args), stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, encoding="utf-8")

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
