#!/usr/bin/env python3
"""A scripted OpenAI-compatible server for the CLI integration tests.

usage: scripted_server.py SCRIPT.jsonl

Each POST to /v1/chat/completions answers with the next line of the script
(a canonical response: content, tool_calls [{id,name,arguments}],
finish_reason, usage) rendered as an OpenAI chat.completion object; POST
/reset starts the script over. Prints the port on stdout and serves until
stdin closes. Requests are logged as JSON lines to SCRIPT.requests, and
their headers ({lower-case name: value}) to SCRIPT.headers.

A line with "key": K belongs to the queue of K: a request whose first user
message contains K is answered from that queue (so parallel reviews of
several files each get their own script); other lines form the default
queue. A line with "delay": S waits S seconds before answering (for
cancellation and timeout tests).
"""
import http.server
import json
import socketserver
import sys
import threading
import time

LOCK = threading.Lock()
POS = {}


def render(line):
    msg = {"role": "assistant", "content": line.get("content") or None}
    calls = line.get("tool_calls") or []
    if calls:
        msg["tool_calls"] = [{"id": c["id"], "type": "function",
                              "function": {"name": c["name"], "arguments": c["arguments"]}}
                             for c in calls]
    body = {"id": "chatcmpl-x", "object": "chat.completion", "created": 1, "model": "scripted",
            "choices": [{"index": 0, "message": msg,
                         "finish_reason": line.get("finish_reason") or "stop"}]}
    if "usage" in line:
        body["usage"] = line["usage"]
    return body


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_POST(self):
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n)
        if self.path == "/reset":
            with LOCK:
                POS.clear()
            self.send_response(204)
            self.end_headers()
            return
        if not self.path.endswith("/chat/completions"):
            self.send_error(404)
            return
        try:
            req = json.loads(raw)
        except ValueError:
            req = {}
        first_user = next((m.get("content") or "" for m in req.get("messages", [])
                           if m.get("role") == "user"), "")
        key = next((k for k in QUEUES if k is not None and k in first_user), None)
        with LOCK:
            i = POS.get(key, 0)
            POS[key] = i + 1
            with open(sys.argv[1] + ".requests", "a") as f:
                f.write(raw.decode() + "\n")
            with open(sys.argv[1] + ".headers", "a") as f:
                f.write(json.dumps({k.lower(): v for k, v in self.headers.items()}) + "\n")
        queue = QUEUES.get(key, [])
        if i >= len(queue):
            data = json.dumps({"error": {"message": "script exhausted"}}).encode()
            self.send_response(500)
        else:
            if queue[i].get("delay"):
                time.sleep(float(queue[i]["delay"]))
            data = json.dumps(render(queue[i])).encode()
            self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


with open(sys.argv[1]) as f:
    SCRIPT = [json.loads(ln) for ln in f if ln.strip()]
QUEUES = {}
for line in SCRIPT:
    QUEUES.setdefault(line.get("key"), []).append(line)
srv = Server(("127.0.0.1", 0), Handler)
threading.Thread(target=srv.serve_forever, daemon=True).start()
print(srv.server_address[1], flush=True)
sys.stdin.read()
srv.shutdown()
