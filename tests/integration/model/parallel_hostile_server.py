#!/usr/bin/env python3
"""Model server for test_parallel_hostile.c: fake_server.py's server with one
more scenario, "par", and GET /slow/<ms>/<tag> (answers "slow <tag>" after
<ms> milliseconds).

A sub-agent (its system prompt says so) whose last message is the user's
calls FetchURL four times in one turn (ids f1..f4) on /slow/300/<prompt>-<i>
of this server; after the tool results it answers "after: <n> results".
The parent's first turn calls AgentSwarm over a, b, c when its prompt says
"swarm", else Agent with the prompt "solo"; after the tool result it
answers "parent done".
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fake_server as fs  # noqa: E402


def calls_turn(calls):
    return [fs.oa({"role": "assistant", "content": None, "tool_calls": [
        {"index": i, "id": cid, "type": "function",
         "function": {"name": name, "arguments": json.dumps(args)}}
        for i, (cid, name, args) in enumerate(calls)]}),
        fs.oa({}, finish="tool_calls"), "data: [DONE]\n\n"]


class Handler(fs.Handler):
    EXTRA = {"par": "par"}

    def do_GET(self):
        parts = self.path.strip("/").split("/")
        if len(parts) == 3 and parts[0] == "slow":
            time.sleep(int(parts[1]) / 1000.0)
            self.send_raw(200, "text/plain", ("slow " + parts[2]).encode())
            return
        super().do_GET()

    def par(self, body):
        msgs = (body or {}).get("messages", [])
        system = " ".join(m.get("content") or "" for m in msgs if m.get("role") == "system")
        users = [m.get("content") or "" for m in msgs if m.get("role") == "user"]
        last = msgs[-1] if msgs else {}
        port = self.server.server_address[1]
        if "You are a sub-agent" in system:
            if last.get("role") == "user":
                tag = users[-1].replace(" ", "_")
                self.stream(calls_turn([
                    ("f%d" % i, "FetchURL",
                     {"url": "http://127.0.0.1:%d/slow/300/%s-%d" % (port, tag, i)})
                    for i in range(1, 5)]))
                return
            n = sum(1 for m in msgs if m.get("role") == "tool")
            self.stream(fs.text_turn("after: %d results" % n))
            return
        if last.get("role") == "user" and len(users) == 1:
            if "swarm" in users[0]:
                self.stream(calls_turn([("sw", "AgentSwarm", {
                    "prompt_template": "{{item}}", "items": ["a", "b", "c"]})]))
            else:
                self.stream(calls_turn([("ag", "Agent", {
                    "prompt": "solo", "description": "solo"})]))
            return
        self.stream(fs.text_turn("parent done"))


def main():
    fs.serve(Handler)


if __name__ == "__main__":
    main()
