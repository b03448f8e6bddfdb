#!/usr/bin/env python3
"""Model server for the sub-agent approval tests (test_subapproval_bg.c):
fake_server.py's server with one more scenario, "appr".

A sub-agent (its system prompt says so) whose last message is the user's:
"write NAME" makes it call Write(path=NAME, content="w") with id call_0
(every sub-agent uses that id: the qualified ids keep them apart); anything
else is answered "answer: <prompt>". After a tool result it answers
"after: <first line of the result>". The parent answers "parent saw N
notifications" (the <system-notification> user messages it got), or
"parent done"; its first turn with "swarm" in the prompt calls AgentSwarm
over x, write y.txt, write z.txt (in the background when the prompt says
"background").
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fake_server as fs  # noqa: E402


class Handler(fs.Handler):
    EXTRA = {"appr": "appr"}

    def appr(self, body):
        msgs = (body or {}).get("messages", [])
        system = " ".join(m.get("content") or "" for m in msgs if m.get("role") == "system")
        users = [m.get("content") or "" for m in msgs if m.get("role") == "user"]
        last = msgs[-1] if msgs else {}
        if "You are a sub-agent" in system:
            if last.get("role") == "user" and last.get("content", "").startswith("write "):
                self.stream(fs.tool_call_turn("Write", {"path": last["content"][6:],
                                                        "content": "w"}))
                return
            if last.get("role") == "tool":
                text = "after: " + (last.get("content") or "").split("\n")[0]
            else:
                text = "answer: " + users[-1]
            self.stream(fs.text_turn(text))
            return
        seen = sum(1 for u in users if "<system-notification>" in u)
        if "swarm" in users[0] and last.get("role") == "user" and len(users) == 1:
            self.stream(fs.tool_call_turn("AgentSwarm", {
                "prompt_template": "{{item}}", "items": ["x", "write y.txt", "write z.txt"],
                "run_in_background": "background" in users[0]}, call_id="sw"))
            return
        text = "parent saw %d notifications" % seen if seen else "parent done"
        self.stream(fs.text_turn(text))


def main():
    fs.serve(Handler)


if __name__ == "__main__":
    main()
