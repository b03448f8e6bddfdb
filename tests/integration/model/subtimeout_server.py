#!/usr/bin/env python3
"""Model server for the sub-agent time limit tests (test_subtimeout.c):
fake_server.py's server with one more scenario, "slow".

A sub-agent (its system prompt says so) whose last message is the user's:
"hold" holds the response until the client goes away (a cancelled request)
and never answers before; after HOLD_MAX seconds it gives up and answers
"server gave up", which makes the test fail instead of hang. "write NAME"
calls Write(path=NAME, content="w"); "agent PROMPT" calls Agent(prompt=
PROMPT, description="inner"); "slowtool" calls Bash (sleep 1, then writes
bash.txt) and Write(late.txt) in one turn; "report" is answered "inner was: <the last
tool result in its conversation>"; anything else "answer: <prompt>".
After a tool result it answers "after: <first line of the result>".

The root agent, on its first turn: "agent PROMPT" calls Agent(prompt=PROMPT,
description="d"); "swarm A,B" calls AgentSwarm over the items A and B.
After a tool result it answers "root saw: <first line of the result>",
else "root done".
"""
import json
import os
import select
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fake_server as fs  # noqa: E402

HOLD_MAX = 30.0


class Handler(fs.Handler):
    EXTRA = {"slow": "slow"}

    def hold(self):
        """Waits until the client closes the connection: True, or gives up."""
        end = time.monotonic() + HOLD_MAX
        conn = self.connection
        while time.monotonic() < end:
            r, _, _ = select.select([conn], [], [], 0.05)
            if r:
                try:
                    if not conn.recv(1, socket.MSG_PEEK):
                        return True
                except OSError:
                    return True
        return False

    def slow(self, body):
        msgs = (body or {}).get("messages", [])
        system = " ".join(m.get("content") or "" for m in msgs if m.get("role") == "system")
        users = [m.get("content") or "" for m in msgs if m.get("role") == "user"]
        last = msgs[-1] if msgs else {}
        lc = last.get("content") or ""
        if last.get("role") == "tool":
            head = "after: " if "You are a sub-agent" in system else "root saw: "
            return self.stream(fs.text_turn(head + lc.split("\n")[0]))
        if "You are a sub-agent" in system:
            if last.get("role") == "user" and lc == "hold":
                if self.hold():
                    self.close_connection = True
                    return None
                return self.stream(fs.text_turn("server gave up"))
            if last.get("role") == "user" and lc.startswith("write "):
                return self.stream(fs.tool_call_turn("Write", {"path": lc[6:], "content": "w"}))
            if last.get("role") == "user" and lc.startswith("agent "):
                return self.stream(fs.tool_call_turn("Agent", {"prompt": lc[6:],
                                                       "description": "inner"}))
            if last.get("role") == "user" and lc == "slowtool":
                calls = [("Bash", {"command": "sleep 1; echo ran > bash.txt",
                                   "description": "slow"}),
                         ("Write", {"path": "late.txt", "content": "w"})]
                return self.stream([fs.oa({"role": "assistant", "content": None, "tool_calls": [
                    {"index": i, "id": "call_%d" % i, "type": "function",
                     "function": {"name": n, "arguments": json.dumps(a)}}
                    for i, (n, a) in enumerate(calls)]}),
                    fs.oa({}, finish="tool_calls"), "data: [DONE]\n\n"])
            if last.get("role") == "user" and lc == "report":
                tools = [m.get("content") or "" for m in msgs if m.get("role") == "tool"]
                return self.stream(fs.text_turn("inner was: " + (tools[-1] if tools else "")))
            return self.stream(fs.text_turn("answer: " + (users[-1] if users else "")))
        if last.get("role") == "user" and lc.startswith("agent "):
            return self.stream(fs.tool_call_turn("Agent", {"prompt": lc[6:], "description": "d"}))
        if last.get("role") == "user" and lc.startswith("swarm "):
            return self.stream(fs.tool_call_turn("AgentSwarm", {"prompt_template": "{{item}}",
                                                        "items": lc[6:].split(",")}))
        return self.stream(fs.text_turn("root done"))

def main():
    fs.serve(Handler)


if __name__ == "__main__":
    main()
