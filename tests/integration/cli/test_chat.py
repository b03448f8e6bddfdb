#!/usr/bin/env python3
"""agt-chat end to end against the scripted OpenAI-compatible server.

1. Print mode (-p), approvals answered on stdin: the model Reads a file,
   Edits it (approved once), runs Bash (rejected with a reason, then approved
   for the session, then the same command runs without asking), starts a
   background task and gets its notification in a further turn.
2. The line mode on a pipe: slash commands /mode, /todo, /save, then
   --resume restores the mode and the conversation.
3. In a pseudo-terminal (libedit): a prompt, an approval, Ctrl-C at the
   prompt does not end the program, Ctrl-C during a turn cancels it, a
   background task's notification starts a turn while the prompt is idle,
   /quit ends the program.

usage: test_chat.py AGT_CHAT SCRIPTED_SERVER
"""
import json
import os
import pty
import select
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tap import Tap  # noqa: E402


def call(cid, name, args):
    return {"id": cid, "name": name, "arguments": json.dumps(args)}


def turn(*calls, content=""):
    return {"content": content, "tool_calls": list(calls),
            "finish_reason": "tool_calls" if calls else "stop"}


class Server:
    def __init__(self, script_path, lines, server):
        with open(script_path, "w") as f:
            for ln in lines:
                f.write(json.dumps(ln) + "\n")
        self.log = script_path + ".requests"
        self.proc = subprocess.Popen([sys.executable, server, script_path],
                                     stdout=subprocess.PIPE, stdin=subprocess.PIPE, text=True)
        self.url = "http://127.0.0.1:%s/v1" % self.proc.stdout.readline().strip()

    def requests(self):
        with open(self.log) as f:
            return [json.loads(ln) for ln in f if ln.strip()]

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


def print_mode(t, exe, server, tmp):
    ws = os.path.join(tmp, "ws")
    os.makedirs(ws)
    with open(os.path.join(ws, "notes.txt"), "w") as f:
        f.write("alpha\nbeta\ngamma\n")
    srv = Server(os.path.join(tmp, "print.jsonl"), [
        turn(call("1", "Read", {"path": "notes.txt"}), content="Reading."),
        turn(call("2", "Edit", {"path": "notes.txt", "old_string": "beta",
                                "new_string": "BETA"})),
        turn(call("3", "Bash", {"command": "echo hi"})),
        turn(call("4", "Bash", {"command": "echo hi"})),
        turn(call("5", "Bash", {"command": "echo hi"})),
        turn(call("6", "Bash", {"command": "sleep 0.3; echo done-bg", "run_in_background": True,
                                "description": "bg job"})),
        turn(content="Started the job."),
        turn(content="The job is done."),
    ], server)
    p = subprocess.run([exe, "--root", ws, "--model", "m", "--base-url", srv.url, "-p",
                        "capitalise beta", "--no-color"],
                       input="y\nn\nnot now\na\ny\n", capture_output=True, text=True, timeout=60)
    srv.close()
    t.eq(p.returncode, 0, "print mode exits 0" + ("" if p.returncode == 0 else ": " + p.stderr))
    with open(os.path.join(ws, "notes.txt")) as f:
        t.eq(f.read(), "alpha\nBETA\ngamma\n", "the approved Edit changed the file")
    t.eq(p.stdout, "Reading.\nStarted the job.\nThe job is done.\n",
         "stdout has the streamed answers only")
    t.ok("--- notes.txt\n+++ notes.txt\n@@ -1,3 +1,3 @@\n alpha\n-beta\n+BETA\n gamma\n"
         in p.stderr, "the Edit approval shows a unified diff")
    t.eq(p.stderr.count("? Bash wants approval"), 3,
         "Bash asked three times: rejected, approved for the session, background job")
    t.ok("  $ echo hi\n" in p.stderr, "the Bash approval shows the command")
    t.ok("calls in parallel" not in p.stderr, "calls one after the other are no group")
    reqs = srv.requests()
    t.eq(len(reqs), 8, "eight model requests")
    msgs = reqs[-1]["messages"] if reqs else []
    tool = {m["tool_call_id"]: m["content"] for m in msgs if m.get("role") == "tool"}
    t.ok("alpha" in tool.get("1", "") and "beta" in tool.get("1", ""), "Read result has the file")
    t.ok(tool.get("3", "").startswith("The user declined this Bash call: not now."),
         "rejected Bash: the model gets the reason")
    t.ok(tool.get("4", "").startswith("hi"), "Bash approved for the session ran")
    t.ok(tool.get("5", "").startswith("hi"), "the same command ran again without asking")
    t.ok("bg job" in tool.get("6", "") and "bash-" in tool.get("6", ""),
         "background task started")
    users = [m["content"] for m in msgs if m.get("role") == "user"]
    t.ok(len(users) == 2 and "bash-" in users[-1] and "done-bg" in users[-1],
         "the task notification reached the model as a new turn")
    t.ok(any(x.get("function", {}).get("name") == "Bash" for x in reqs[0].get("tools", [])),
         "the chat tools were offered")


def line_mode(t, exe, server, tmp):
    ws = os.path.join(tmp, "ws2")
    os.makedirs(ws)
    srv = Server(os.path.join(tmp, "line.jsonl"), [
        turn(call("t1", "TodoList", {"todos": [{"title": "write tests", "status": "in_progress"},
                                                {"title": "ship", "status": "pending"}]})),
        turn(content="Noted."),
        turn(content="Still here."),
    ], server)
    save = os.path.join(tmp, "chat.json")
    p = subprocess.run([exe, "--root", ws, "--model", "m", "--base-url", srv.url, "--no-color"],
                       input="plan the work\n/todo\n/mode plan\n/mode\n/save %s\n/quit\n" % save,
                       capture_output=True, text=True, timeout=60)
    t.eq(p.returncode, 0, "line mode exits 0 after /quit")
    t.ok("[>] write tests\n[ ] ship\n" in p.stdout, "/todo shows the list")
    t.ok("mode: plan\nmode: plan\n" in p.stdout, "/mode switches to plan mode")
    with open(save) as f:
        doc = json.load(f)
    t.eq(doc.get("format"), "agt-chat/1", "/save writes the conversation and the session")
    p = subprocess.run([exe, "--root", ws, "--model", "m", "--base-url", srv.url, "--no-color",
                        "--resume", save], input="/mode\nare you there?\n", capture_output=True,
                       text=True, timeout=60)
    srv.close()
    t.ok(p.returncode == 0 and "mode: plan\n" in p.stdout, "--resume restores plan mode")
    reqs = srv.requests()
    last = reqs[-1]["messages"] if reqs else []
    t.eq([m["content"] for m in last if m["role"] == "user"], ["plan the work", "are you there?"],
         "--resume continues the saved conversation")


def read_until(fd, text, timeout=10.0):
    buf = b""
    end = time.time() + timeout
    while time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            buf += chunk
            if text.encode() in buf:
                return buf.decode(errors="replace")
    return None


def reap(pid, fd, timeout=30.0):
    """Waits for the child on the pty, reading what it still writes (so it
    cannot block on a full terminal), and kills it after TIMEOUT seconds: a
    failed check must not leave the test waiting for ever. Returns the wait
    status (SIGKILL's when it had to be killed)."""
    end = time.time() + timeout
    while time.time() < end:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return status
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try:
                os.read(fd, 4096)
            except OSError:
                pass
    os.kill(pid, signal.SIGKILL)
    return os.waitpid(pid, 0)[1]


def pty_mode(t, exe, server, tmp):
    ws = os.path.join(tmp, "ws3")
    os.makedirs(ws)
    srv = Server(os.path.join(tmp, "pty.jsonl"), [
        turn(call("w1", "Write", {"path": "hello.txt", "content": "hello\n"})),
        turn(content="Wrote hello.txt."),
        dict(turn(content="too late"), delay=3),
        turn(content="Back again."),
        turn(call("b1", "Bash", {"command": "sleep 0.5; echo bg-done", "run_in_background": True,
                                 "description": "slow job"})),
        turn(content="Started it."),
        turn(content="The slow job is done."),
    ], server)
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["TERM"] = "dumb"
        os.execv(exe, [exe, "--root", ws, "--model", "m", "--base-url", srv.url, "--no-color"])
    t.ok(read_until(fd, "> ") is not None, "pty: the prompt appears")
    os.write(fd, b"write hello\r")
    out = read_until(fd, "[n] no")
    t.ok(out is not None and "+hello" in out, "pty: the Write approval shows the new file")
    os.write(fd, b"y")  # one key, no Enter
    t.ok(read_until(fd, "Wrote hello.txt.") is not None,
         "pty: one key answers the approval; the answer streams")
    os.write(fd, b"\x03")
    time.sleep(0.3)
    os.write(fd, b"/mode\r")
    t.ok(read_until(fd, "mode: manual") is not None, "pty: Ctrl-C at the prompt keeps it running")
    os.write(fd, b"take your time\r")
    time.sleep(0.5)
    os.write(fd, b"\x03")
    out = read_until(fd, "(cancelled)")
    t.ok(out is not None and "too late" not in out, "pty: Ctrl-C cancels the running turn")
    os.write(fd, b"hello again\r")
    t.ok(read_until(fd, "Back again.") is not None, "pty: the next prompt works after a cancel")
    os.write(fd, b"/mode yolo\r")
    t.ok(read_until(fd, "mode: yolo") is not None, "pty: /mode yolo")
    os.write(fd, b"run the slow job\r")
    out = read_until(fd, "The slow job is done.", timeout=15)
    t.ok(out is not None and "Started it." in out and "[task bash-" in out,
         "pty: a background task's notification starts a turn while the prompt is idle")
    os.write(fd, b"/quit\r")
    status = reap(pid, fd)
    os.close(fd)
    srv.close()
    t.eq(os.waitstatus_to_exitcode(status), 0, "pty: /quit exits 0")
    with open(os.path.join(ws, "hello.txt")) as f:
        t.eq(f.read(), "hello\n", "pty: the approved Write created the file")
    hist = os.path.join(os.environ["XDG_STATE_HOME"], "agenttools", "history")
    with open(hist) as f:
        # libedit's history file: a header, then each line with spaces as \040
        t.eq(f.read().splitlines(), ["_HiStOrY_V2_", "write\\040hello", "/mode",
                                     "take\\040your\\040time", "hello\\040again",
                                     "/mode\\040yolo", "run\\040the\\040slow\\040job", "/quit"],
             "pty: the lines go to $XDG_STATE_HOME/agenttools/history")


def sleepers(tag):
    """pids of processes whose command line is `sleep TAG`."""
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                if f.read().split(b"\0")[:2] == [b"sleep", tag.encode()]:
                    found.append(int(d))
        except OSError:
            pass
    return found


def pty_interrupt(t, exe, server, tmp):
    """Ctrl-C during a foreground Bash call kills it (its process group, the
    grace period) and the model sees the interrupted result; the output
    streams into the card while the command runs; two Ctrl-C at the idle
    prompt quit."""
    ws = os.path.join(tmp, "ws8")
    os.makedirs(ws)
    cmd = "echo started; sleep 30.017; echo never"
    srv = Server(os.path.join(tmp, "intr.jsonl"), [
        turn(call("s1", "Bash", {"command": cmd})),
        turn(content="Stopped as you asked."),
    ], server)
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["TERM"] = "dumb"
        os.execv(exe, [exe, "--root", ws, "--model", "m", "--base-url", srv.url, "--no-color",
                       "--yolo"])
    read_until(fd, "> ")
    os.write(fd, b"run the slow one\r")
    out = read_until(fd, "  | started\r\n", timeout=20)
    t.ok(out is not None and "never" not in out,
         "pty interrupt: the output streams into the card while the command runs")
    for _ in range(100):  # the shell may not have started sleep yet
        if sleepers("30.017"):
            break
        time.sleep(0.1)
    t.ok(len(sleepers("30.017")) == 1, "pty interrupt: the command is running")
    start = time.time()
    os.write(fd, b"\x03")
    out = read_until(fd, "(cancelled)", timeout=20)
    took = time.time() - start
    t.ok(out is not None and took < 15,
         "pty interrupt: Ctrl-C ends the call within the grace period (%.1f s)" % took)
    lines = (out or "").split("\r\n")
    t.ok("^C" in lines and "x Bash %s: started" % cmd in lines,
         "pty interrupt: the card collapses to its summary")
    t.eq(sleepers("30.017"), [], "pty interrupt: the command's process is gone")
    os.write(fd, b"what happened?\r")
    t.ok(read_until(fd, "Stopped as you asked.") is not None, "pty interrupt: the next turn runs")
    reqs = srv.requests()
    msgs = reqs[-1]["messages"] if reqs else []
    res = {m["tool_call_id"]: m["content"] for m in msgs if m.get("role") == "tool"}
    t.eq(res.get("s1"), "started\nCommand was interrupted by the user: its process group was sent "
         "SIGTERM (SIGKILL after the grace period if it had not ended). Do not run it again "
         "unless the user asks.", "pty interrupt: the model sees the interrupted result")
    t.eq([m["content"] for m in msgs if m["role"] == "user"],
         ["run the slow one", "[The user interrupted the previous turn.]", "what happened?"],
         "pty interrupt: the model is told the turn was interrupted")
    os.write(fd, b"\x03")
    t.ok(read_until(fd, "(Ctrl-C again to quit)") is not None,
         "pty interrupt: one Ctrl-C at the idle prompt says how to quit")
    os.write(fd, b"\x03")
    status = reap(pid, fd)
    os.close(fd)
    srv.close()
    t.eq(os.waitstatus_to_exitcode(status), 0, "pty interrupt: a second Ctrl-C quits, exit 0")


def pty_keys(t, exe, server, tmp):
    """On a terminal the plan's option is chosen by one key, and Ctrl-C at an
    approval prompt declines the call and interrupts the turn."""
    ws = os.path.join(tmp, "ws13")
    os.makedirs(ws)
    plan = os.path.join(tmp, "plan13.md")
    opts = [{"label": "Small steps", "description": "one file at a time"},
            {"label": "Big bang", "description": "all at once"}]
    srv = Server(os.path.join(tmp, "keys.jsonl"), [
        turn(call("w1", "Write", {"path": plan, "content": "# Plan\n\n1. go\n"})),
        turn(call("e1", "ExitPlanMode", {"options": opts})),
        turn(call("b1", "Bash", {"command": "echo never"}), content="Planned."),
        turn(content="Understood."),
    ], server)
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["TERM"] = "dumb"
        os.execv(exe, [exe, "--root", ws, "--model", "m", "--base-url", srv.url, "--no-color",
                       "--plan", "--plan-file", plan])
    read_until(fd, "> ")
    os.write(fd, b"make a plan\r")
    out = read_until(fd, "[n] reject: ")
    t.ok(out is not None and "  [2] Big bang: all at once\r\n" in out,
         "pty keys: the plan's options are offered")
    os.write(fd, b"2")
    out = read_until(fd, "[n] no: ")
    t.ok(out is not None and "* ExitPlanMode: The user approved the plan." in out,
         "pty keys: the key 2 approved the plan at once")
    os.write(fd, b"\x03")
    t.ok(read_until(fd, "(cancelled)") is not None,
         "pty keys: Ctrl-C at an approval prompt interrupts the turn")
    os.write(fd, b"ok?\r")
    t.ok(read_until(fd, "Understood.") is not None, "pty keys: the next turn runs")
    os.write(fd, b"/quit\r")
    reap(pid, fd)
    os.close(fd)
    srv.close()
    res = tool_results(srv)
    t.ok(res.get("e1", "").endswith("\nThe user chose the option: Big bang"),
         "pty keys: the key 2 chose the second option")
    t.ok(res.get("b1", "").startswith("The user declined this Bash call: interrupted by the "
                                      "user."), "pty keys: the model is told the call was declined")


def cron_commands(t, exe, server, tmp):
    """/cron delete|pause|resume ID act on the session's cron table through the
    host API (once, /cron delete ID only printed the list again)."""
    ws = os.path.join(tmp, "ws4")
    os.makedirs(ws)
    srv = Server(os.path.join(tmp, "cron.jsonl"), [
        turn(call("c1", "CronCreate", {"cron": "*/10 * * * *", "prompt": "check the build"})),
        turn(content="Scheduled."),
    ], server)
    save = os.path.join(tmp, "cron.json")
    p = subprocess.run([exe, "--root", ws, "--model", "m", "--base-url", srv.url, "--no-color",
                        "--yolo"], input="watch the build\n/save %s\n/quit\n" % save,
                       capture_output=True, text=True, timeout=60)
    srv.close()
    with open(save) as f:
        doc = json.load(f)
    jobs = []

    def find(v):
        if isinstance(v, dict):
            if isinstance(v.get("cron"), list):
                jobs.extend(v["cron"])
            for x in v.values():
                find(x)
    find(doc)
    if not t.eq(len(jobs), 1, "the model's CronCreate made one job, saved with the session"):
        return
    jid = jobs[0]["id"]
    p = subprocess.run([exe, "--root", ws, "--model", "m", "--base-url", srv.url, "--no-color",
                        "--resume", save],
                       input="/cron pause %s\n/cron\n/cron resume %s\n/cron delete %s\n/cron\n"
                             "/cron delete %s\n/cron stop %s\n/quit\n" % ((jid,) * 5),
                       capture_output=True, text=True, timeout=60)
    t.eq(p.returncode, 0, "/cron commands: exits 0")
    out = p.stdout
    t.ok(("cron job %s paused\n" % jid) in out, "/cron pause ID")
    t.ok("paused: true (by the user: it does not fire until resumed)" in out,
         "/cron lists it as paused")
    t.ok(("cron job %s resumed\n" % jid) in out, "/cron resume ID")
    t.ok(("cron job %s deleted\nNo scheduled cron jobs.\n" % jid) in out,
         "/cron delete ID, then the list is empty")
    t.ok(("/cron delete: agt_session_cron_delete: no cron job with id '%s' "
          "(agt_session_cron_list shows them)\n" % jid) in out, "deleting it again: not found")
    t.ok("/cron: unknown action 'stop' (list, delete, pause, resume)\n" in out,
         "an unknown action is named")


def run_print(exe, srv, ws, prompt, answers, *extra):
    return subprocess.run([exe, "--root", ws, "--model", "m", "--base-url", srv.url, "-p", prompt,
                           "--no-color"] + list(extra),
                          input=answers, capture_output=True, text=True, timeout=60)


def tool_results(srv):
    reqs = srv.requests()
    msgs = reqs[-1]["messages"] if reqs else []
    return {m["tool_call_id"]: m["content"] for m in msgs if m.get("role") == "tool"}


def parallel_cards(t, exe, server, tmp):
    """Three parallel read-only calls of one turn: each card carries its own
    arguments (once, all three were labelled with the last call's: the
    finished events were not matched to their started events by id)."""
    ws = os.path.join(tmp, "ws5")
    os.makedirs(ws)
    with open(os.path.join(ws, "notes.txt"), "w") as f:
        f.write("alpha\nbeta\n")
    srv = Server(os.path.join(tmp, "par.jsonl"), [
        turn(call("p1", "Read", {"path": "notes.txt"}), call("p2", "Glob", {"pattern": "*.txt"}),
             call("p3", "Grep", {"pattern": "beta"})),
        turn(content="Looked."),
    ], server)
    p = run_print(exe, srv, ws, "look around", "")
    srv.close()
    t.eq(p.returncode, 0, "parallel calls: exits 0")
    cards = [ln.split(":")[0] for ln in p.stderr.splitlines()
             if ln.startswith("* ") or ln.startswith("(")]
    t.eq(cards, ["(3 calls in parallel)", "* Read notes.txt", "* Glob *.txt", "* Grep beta"],
         "parallel calls: shown as a group, each card with its own call's arguments")
    res = tool_results(srv)
    t.ok("alpha" in res.get("p1", "") and "notes.txt" in res.get("p2", "") and
         "notes.txt" in res.get("p3", ""),
         "parallel calls: the model got each result under its own id")


def cron_wording(t, exe, server, tmp):
    """The CronCreate approval says what the call does (once: "changes files
    (access: write)") and shows the schedule and the prompt."""
    ws = os.path.join(tmp, "ws6")
    os.makedirs(ws)
    srv = Server(os.path.join(tmp, "cronw.jsonl"), [
        turn(call("c1", "CronCreate", {"cron": "*/10 * * * *", "prompt": "check the build",
                                       "recurring": False})),
        turn(content="Scheduled."),
    ], server)
    p = run_print(exe, srv, ws, "remind me", "n\n\n")
    srv.close()
    t.ok("\n? CronCreate wants approval: CronCreate schedules a prompt (access: write) and the "
         "session is in manual mode\n  schedule: */10 * * * * (once)\n  prompt: check the build\n"
         in p.stderr, "CronCreate approval: schedules a prompt, with the schedule and the prompt")
    t.ok(tool_results(srv).get("c1", "").startswith("The user declined this CronCreate call."),
         "CronCreate declined without a reason")


def plan_approval(t, exe, server, tmp):
    """ExitPlanMode: the approval shows the plan file and the model's options;
    [r] revises (the model stays in plan mode with the user's words), a digit
    approves with that option (ExitPlanMode reports it to the model)."""
    ws = os.path.join(tmp, "ws7")
    os.makedirs(ws)
    plan = os.path.join(tmp, "plan.md")
    opts = [{"label": "Small steps", "description": "one file at a time"},
            {"label": "Big bang", "description": "all at once"}]
    srv = Server(os.path.join(tmp, "plan.jsonl"), [
        turn(call("w1", "Write", {"path": plan, "content": "# Plan\n\n1. rename x\n"})),
        turn(call("e1", "ExitPlanMode", {"options": opts})),
        turn(call("w2", "Write", {"path": plan, "content": "# Plan\n\n1. rename x\n2. test\n"})),
        turn(call("e2", "ExitPlanMode", {"options": opts})),
        turn(content="Planned."),
    ], server)
    p = run_print(exe, srv, ws, "plan it", "r\nadd a test step\n2\n", "--plan", "--plan-file",
                  plan)
    srv.close()
    t.eq(p.returncode, 0, "plan approval: exits 0" + ("" if p.returncode == 0 else p.stderr))
    want = ("--- plan (%s) ---\n# Plan\n\n1. rename x\n2. test\n---\n"
            "  [1] Small steps: one file at a time\n  [2] Big bang: all at once\n"
            "[y] approve  [1-2] approve with that option  [r] revise  [n] reject: " % plan)
    t.ok(want in p.stderr, "plan approval: the plan file and the options are shown")
    t.ok('"options"' not in p.stderr, "plan approval: no options JSON")
    res = tool_results(srv)
    t.eq(res.get("e1"), "The user rejected the plan: add a test step. You are still in plan "
         "mode: revise the plan file %s and call ExitPlanMode again." % plan,
         "plan approval: [r] sends the user's revision")
    t.ok(res.get("e2", "").endswith("\nThe user chose the option: Big bang"),
         "plan approval: [2] approves with the second option")


def script_output(t, exe, server, tmp):
    """-p with --output-format json and stream-json: the final message, the
    tool calls and the token counts as JSON on stdout (stream-json: one event
    per line first); the exit status says whether the turn failed."""
    ws = os.path.join(tmp, "ws9")
    os.makedirs(ws)
    with open(os.path.join(ws, "notes.txt"), "w") as f:
        f.write("alpha\nbeta\n")
    lines = [
        dict(turn(call("r1", "Read", {"path": "notes.txt"}), content="Reading."),
             usage={"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}),
        dict(turn(content="Done: **beta** found."),
             usage={"prompt_tokens": 12, "completion_tokens": 4, "total_tokens": 16}),
    ]
    for fmt in ("json", "stream-json"):
        srv = Server(os.path.join(tmp, "out-%s.jsonl" % fmt), lines, server)
        p = run_print(exe, srv, ws, "find beta", "", "--output-format", fmt)
        srv.close()
        t.eq(p.returncode, 0, "--output-format %s: exits 0" % fmt)
        try:
            events = [json.loads(ln) for ln in p.stdout.splitlines()]
        except ValueError:
            events = []
        t.ok(len(events) >= 1, "--output-format %s: every stdout line is JSON" % fmt)
        read_result = tool_results(srv).get("r1")
        want = {"type": "result", "result": "Done: **beta** found.", "is_error": False,
                "stop_reason": "done", "error": None, "turns": 2,
                "tool_calls": [{"id": "r1", "name": "Read", "arguments": {"path": "notes.txt"},
                                "is_error": False, "preview": read_result}],
                "usage": {"prompt_tokens": 19, "completion_tokens": 7}}
        t.eq(events[-1] if events else None, want, "--output-format %s: the result" % fmt)
        if fmt == "json":
            t.eq(len(events), 1, "--output-format json: one object")
        else:
            t.eq([e.get("type") for e in events],
                 ["text", "tool_started", "tool_finished", "text", "result"],
                 "--output-format stream-json: one event per line, in order")
            t.eq([e.get("text") for e in events if e.get("type") == "text"],
                 ["Reading.", "Done: **beta** found."], "stream-json: the text events")
            t.eq(events[1], {"type": "tool_started", "id": "r1", "name": "Read",
                             "arguments": {"path": "notes.txt"}}, "stream-json: tool_started")
    # a model request that fails: exit 1 and an error result
    srv = Server(os.path.join(tmp, "out-fail.jsonl"), [], server)
    p = run_print(exe, srv, ws, "find beta", "", "--output-format", "json")
    srv.close()
    r = json.loads(p.stdout) if p.stdout.strip() else {}
    t.ok(p.returncode == 1 and r.get("is_error") is True and r.get("stop_reason") == "error" and
         "script exhausted" in (r.get("error") or ""),
         "a failed model request: exit 1, an error result naming it")
    # the turn budget runs out: the turn did not finish
    srv = Server(os.path.join(tmp, "out-turns.jsonl"), lines, server)
    p = run_print(exe, srv, ws, "find beta", "", "--output-format", "json", "--max-turns", "1")
    srv.close()
    r = json.loads(p.stdout) if p.stdout.strip() else {}
    t.eq((p.returncode, r.get("stop_reason"), r.get("error")),
         (1, "max_turns", "stopped after 1 model turns (--max-turns)"),
         "--max-turns reached: exit 1, stop_reason max_turns")
    p = subprocess.run([exe, "--model", "m", "--output-format", "json"], capture_output=True,
                       text=True, stdin=subprocess.DEVNULL, timeout=60)
    t.eq((p.returncode, p.stderr),
         (2, "agt-chat: --output-format is for print mode: add -p PROMPT\n"),
         "--output-format without -p is refused")
    p = subprocess.run([exe, "--model", "m", "-p", "x", "--output-format", "xml"],
                       capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
    t.eq((p.returncode, p.stderr),
         (2, "agt-chat: --output-format \"xml\": use text, json or stream-json\n"),
         "an unknown format is named")


def stored_rules(t, exe, server, tmp):
    """--allow / --deny, the config file's "permissions", the project's
    .agenttools/settings.json, [p] storing a rule there, and /permissions."""
    ws = os.path.join(tmp, "ws10")
    os.makedirs(os.path.join(ws, ".agenttools"))
    for name in ("notes.txt", "secret.txt"):
        with open(os.path.join(ws, name), "w") as f:
            f.write(name + "\n")
    settings = os.path.join(ws, ".agenttools", "settings.json")
    with open(settings, "w") as f:
        json.dump({"permissions": {"allow": ["Bash(echo *)"]}, "other": 1}, f)
    cfg = os.path.join(tmp, "rules-config.json")
    with open(cfg, "w") as f:
        json.dump({"permissions": {"deny": ["Read(secret.txt)"]}}, f)
    srv = Server(os.path.join(tmp, "rules.jsonl"), [
        turn(call("r1", "Bash", {"command": "echo from-project"})),
        turn(call("r2", "Read", {"path": "secret.txt"})),
        turn(call("r3", "Bash", {"command": "rm -f notes.txt"})),
        turn(call("r4", "Write", {"path": "out/a.txt", "content": "a\n"})),
        turn(call("r5", "Bash", {"command": "wc -l notes.txt"})),
        turn(content="Done."),
        turn(call("r6", "Bash", {"command": "wc -l secret.txt"})),
        turn(content="Again."),
    ], server)
    flags = ["--config", cfg, "--deny", "Bash(rm *)", "--allow", "Write(out/**)"]
    p = run_print(exe, srv, ws, "go", "p\n", *flags)
    t.eq(p.returncode, 0, "rules: exits 0" + ("" if p.returncode == 0 else p.stderr))
    t.eq(p.stderr.count("wants approval"), 1, "rules: only the call no rule covers asked")
    res = tool_results(srv)
    t.ok(res.get("r1", "").startswith("from-project\n"), "rules: the project's allow rule")
    t.ok(res.get("r2", "").startswith("Read call refused: the rule 'Read(secret.txt)' in the deny "
                                      "list forbids it."), "rules: the config file's deny rule")
    t.ok(res.get("r3", "").startswith("Bash call refused: the rule 'Bash(rm *)' in the deny list"),
         "rules: --deny")
    t.ok(os.path.exists(os.path.join(ws, "notes.txt")), "rules: the denied rm did not run")
    t.ok(os.path.exists(os.path.join(ws, "out", "a.txt")), "rules: --allow let the Write run")
    with open(settings) as f:
        doc = json.load(f)
    t.eq(doc, {"permissions": {"allow": ["Bash(echo *)", "Bash(wc *)"]}, "other": 1},
         "rules: [p] added the suggested rule to the project's settings, the rest kept")
    t.ok("allowed in this project: Bash(wc *) (%s)\n" % settings in p.stderr,
         "rules: [p] says where the rule went")
    p = subprocess.run([exe, "--root", ws, "--model", "m", "--base-url", srv.url, "--no-color"]
                       + flags, input="again\n/permissions\n/quit\n", capture_output=True,
                       text=True, timeout=60)
    srv.close()
    t.eq(p.stderr.count("wants approval"), 0, "rules: the stored rule holds in the next session")
    t.ok(("allow: Bash(echo *), Bash(wc *), Write(out/**)\nask: (none)\n"
          "deny: Read(secret.txt), Bash(rm *)\nsession: (none)\n"
          "user rules: %s\nproject rules: %s\n" % (cfg, settings)) in p.stdout,
         "/permissions lists the rules and their files")
    p = subprocess.run([exe, "--root", ws, "--model", "m", "--base-url", srv.url, "-p", "x",
                        "--allow", "Bash("], capture_output=True, text=True, timeout=60,
                       stdin=subprocess.DEVNULL)
    t.ok(p.returncode == 1 and p.stderr.startswith("agt-chat: --allow Bash(: "),
         "a malformed --allow rule is named: " + p.stderr.strip())
    with open(settings, "w") as f:
        f.write('{"permissions": {"allow": "Bash(ls)"}}')
    p = subprocess.run([exe, "--root", ws, "--model", "m", "--base-url", srv.url, "-p", "x"],
                       capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    t.ok(p.returncode == 1 and p.stderr.startswith("agt-chat: %s: permissions: " % settings),
         "a bad project settings file is named: " + p.stderr.strip())


def git(cwd, *args):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com"] + list(args),
                   cwd=cwd, check=True, capture_output=True)


def project_context(t, exe, server, tmp):
    """The system prompt carries the environment (cwd, platform, date, git
    branch and status) and the AGENTS.md files from the repository's root
    down to the workspace root (CLAUDE.md where a folder has no AGENTS.md);
    nothing from above the repository."""
    outer = os.path.join(tmp, "outer")
    repo = os.path.join(outer, "repo")
    ws = os.path.join(repo, "pkg", "app")
    os.makedirs(ws)
    files = {os.path.join(outer, "AGENTS.md"): "Outside the repository.\n",
             os.path.join(repo, "AGENTS.md"): "Use tabs.\n",
             os.path.join(repo, "pkg", "CLAUDE.md"): "Claude rules for pkg.",
             os.path.join(ws, "AGENTS.md"): "App rules.\n",
             os.path.join(ws, "CLAUDE.md"): "Not read: AGENTS.md is there.\n",
             os.path.join(repo, "tracked.txt"): "one\n"}
    for path, text in files.items():
        with open(path, "w") as f:
            f.write(text)
    git(repo, "init", "-q", "-b", "trunk")
    git(repo, "add", "tracked.txt", "AGENTS.md")
    git(repo, "commit", "-q", "-m", "one")
    with open(os.path.join(repo, "tracked.txt"), "a") as f:
        f.write("two\n")
    srv = Server(os.path.join(tmp, "ctx.jsonl"), [turn(content="Hi.")], server)
    day = time.strftime("%Y-%m-%d")
    p = run_print(exe, srv, ws, "hello", "")
    srv.close()
    reqs = srv.requests()
    system = reqs[0]["messages"][0]["content"] if reqs else ""
    u = os.uname()
    # untracked: pkg/ (CLAUDE.md and app/ below it, shown as one folder)
    env = ("<environment>\nWorking directory: %s\nPlatform: %s %s (%s)\nDate: %s\n"
           "Git: branch trunk, 1 changed file, 1 untracked file\n</environment>\n"
           % (ws, u.sysname, u.release, u.machine, day))
    t.ok(p.returncode == 0 and env in system, "context: the environment block")
    want = ('\n<project-instructions path="%s/AGENTS.md">\nUse tabs.\n</project-instructions>\n'
            '\n<project-instructions path="%s/pkg/CLAUDE.md">\nClaude rules for pkg.\n'
            '</project-instructions>\n'
            '\n<project-instructions path="%s/AGENTS.md">\nApp rules.\n</project-instructions>\n'
            % (repo, repo, ws))
    t.ok(system.endswith(env + want), "context: AGENTS.md from the repository root down, "
         "CLAUDE.md as the fallback")
    t.ok("Outside the repository." not in system and "Not read" not in system,
         "context: nothing above the repository, no CLAUDE.md beside an AGENTS.md")
    # outside any repository: only the workspace's own file
    lone = os.path.join(tmp, "lone")
    os.makedirs(lone)
    with open(os.path.join(lone, "CLAUDE.md"), "w") as f:
        f.write("Lone rules.\n")
    srv = Server(os.path.join(tmp, "ctx2.jsonl"), [turn(content="Hi.")], server)
    p = run_print(exe, srv, lone, "hello", "")
    srv.close()
    reqs = srv.requests()
    system = reqs[0]["messages"][0]["content"] if reqs else ""
    t.ok("Git: not a git repository\n</environment>\n\n<project-instructions path=\"%s/CLAUDE.md\">"
         "\nLone rules.\n</project-instructions>\n" % lone in system,
         "context: outside a repository, the workspace's own file and no git state")


def pty_output(argv, env=None):
    """Runs argv in a pseudo-terminal; its whole output with \r\n as \n."""
    pid, fd = pty.fork()
    if pid == 0:
        if env:
            os.environ.update(env)
        os.execv(argv[0], argv)
    buf = b""
    while True:
        try:
            d = os.read(fd, 4096)
        except OSError:
            break
        if not d:
            break
        buf += d
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), buf.decode(errors="replace").replace("\r\n", "\n")


MARKDOWN = ("# Plan\n\nSome **bold** and `code`, see [docs](https://example.com/d).\n\n"
            "- one\n- two\n  - nested\n\n| a | bb |\n|---|---:|\n| 1 | 22 |\n| 333 | 4 |\n\n"
            "```python\ndef f(x):\n    return 42  # yes\n```\n")


def markdown(t, exe, server, tmp):
    """Answers are rendered as markdown on a terminal (md4c): colours and
    layout; under NO_COLOR the layout without escape sequences; to a pipe
    the text as the model wrote it."""
    ws = os.path.join(tmp, "ws11")
    os.makedirs(ws)
    srv = Server(os.path.join(tmp, "md.jsonl"), [turn(content=MARKDOWN)] * 3, server)
    argv = [exe, "--root", ws, "--model", "m", "--base-url", srv.url, "-p", "show"]
    rc, out = pty_output(argv, {"TERM": "xterm"})
    want = ("\033[1;4mPlan\033[0m\n\n"
            "Some \033[1mbold\033[0m and \033[36mcode\033[0m, see \033[4;34mdocs\033[0m "
            "(https://example.com/d).\n\n"
            "• one\n• two\n  • nested\n\n"
            "\033[1ma\033[0m   │ \033[1mbb\033[0m\n────┼───\n1   │ 22\n333 │  4\n\n"
            "    \033[1;35mdef\033[0m f(x):\n"
            "        \033[1;35mreturn\033[0m \033[33m42\033[0m  \033[2m# yes\033[0m\n")
    t.eq((rc, out), (0, want), "markdown: rendered with colours on a terminal")
    rc, out = pty_output(argv, {"TERM": "xterm", "NO_COLOR": "1"})
    want = ("# Plan\n\nSome bold and `code`, see docs (https://example.com/d).\n\n"
            "- one\n- two\n  - nested\n\n"
            "a   │ bb\n────┼───\n1   │ 22\n333 │  4\n\n"
            "    def f(x):\n        return 42  # yes\n")
    t.eq((rc, out), (0, want), "markdown: NO_COLOR keeps the layout, no escape sequences")
    p = subprocess.run(argv, capture_output=True, text=True, timeout=60,
                       stdin=subprocess.DEVNULL)
    srv.close()
    t.eq(p.stdout, MARKDOWN, "markdown: to a pipe, the text as the model wrote it")


def commands(t, exe, server, tmp):
    """/diff, /undo (a file edited and a file created come back as they were,
    and the model is told), /cost with the provider's prices, /model, /clear,
    /compact."""
    ws = os.path.join(tmp, "ws12")
    os.makedirs(ws)
    with open(os.path.join(ws, "notes.txt"), "w") as f:
        f.write("alpha\nbeta\ngamma\n")

    def u(p, c):
        return {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}
    srv = Server(os.path.join(tmp, "cmd.jsonl"), [
        dict(turn(call("e1", "Edit", {"path": "notes.txt", "old_string": "alpha",
                                      "new_string": "ALPHA"}),
                  call("w1", "Write", {"path": "new.txt", "content": "new\n"})), usage=u(10, 2)),
        dict(turn(content="Changed."), usage=u(20, 3)),
        dict(turn(content="Undone, I see."), usage=u(30, 4)),
        dict(turn(content="On the other model."), usage=u(5, 1)),
        dict(turn(content="Fresh start."), usage=u(6, 1)),
        dict(turn(content="SUMMARY: user said fresh."), usage=u(7, 2)),
        dict(turn(content="Continuing."), usage=u(8, 1)),
    ], server)
    cfg = os.path.join(tmp, "cmd-config.json")
    with open(cfg, "w") as f:
        json.dump({"providers": {"p": {"base_url": srv.url, "model": "m",
                                       "prices": {"input_per_mtok": 3,
                                                  "output_per_mtok": 15}}}}, f)
    script = ("change things\n/diff\n/undo\n/diff\n/undo\nwhat now?\n/cost\n/model other\n"
              "last\n/clear\nfresh\n/compact\nafter\n/quit\n")
    p = subprocess.run([exe, "--root", ws, "--config", cfg, "--provider", "p", "--yolo",
                        "--no-color"], input=script, capture_output=True, text=True, timeout=60)
    srv.close()
    out = p.stdout
    t.eq(p.returncode, 0, "commands: exit 0" + ("" if p.returncode == 0 else p.stderr))
    t.ok("--- notes.txt\n+++ notes.txt\n@@ -1,3 +1,3 @@\n-alpha\n+ALPHA\n beta\n gamma\n" in out
         and "--- /dev/null\n+++ new.txt\n" in out and "\n+new\n" in out,
         "/diff shows the session's changes")
    t.ok("restored notes.txt\nremoved new.txt (the turn created it)\n"
         "(no file changes in this session)\n/undo: no file changes to undo\n" in out,
         "/undo restores, then /diff has nothing, a second /undo nothing to undo")
    with open(os.path.join(ws, "notes.txt")) as f:
        t.eq(f.read(), "alpha\nbeta\ngamma\n", "/undo: the edited file is as it was")
    t.ok(not os.path.exists(os.path.join(ws, "new.txt")), "/undo: the created file is gone")
    reqs = srv.requests()
    users = [m["content"] for m in reqs[2]["messages"] if m["role"] == "user"] if len(reqs) > 2 \
        else []
    t.eq(users[-2:], ["[The user undid the file changes of the last turn (restored: notes.txt; "
                      "removed: new.txt). The files are as they were before that turn.]",
                      "what now?"], "/undo: the model is told")
    t.ok("turn 1: 30 in, 5 out\nturn 2: 30 in, 4 out\ntotal: 60 in, 9 out\n"
         "cost: 0.000315 (3 per million in, 15 per million out)\n" in out,
         "/cost: tokens per turn, in all, and the price")
    t.ok("model: other\n" in out and len(reqs) > 3 and reqs[3]["model"] == "other",
         "/model other: the next request names it")
    t.ok("conversation cleared\n" in out and len(reqs) > 4 and
         [m["role"] for m in reqs[4]["messages"]] == ["system", "user"] and
         reqs[4]["messages"][1]["content"] == "fresh", "/clear: a new conversation")
    comp = reqs[5]["messages"] if len(reqs) > 5 else []
    t.ok([m["role"] for m in comp] == ["system", "user", "assistant", "user"] and
         comp[-1]["content"].startswith("Summarise this conversation") and
         "compacted 3 messages into a summary of 25 bytes\n" in out,
         "/compact: the model summarises the conversation")
    last = reqs[6]["messages"] if len(reqs) > 6 else []
    t.eq([m["content"] for m in last[1:]],
         ["<conversation-summary>\nSUMMARY: user said fresh.\n</conversation-summary>\nThe "
          "conversation so far, summarised; go on from here.", "after"],
         "/compact: the summary replaces the conversation")


def main():
    exe, server = sys.argv[1], sys.argv[2]
    t = Tap()
    with tempfile.TemporaryDirectory() as tmp:
        # the line history goes to $XDG_STATE_HOME/agenttools/history: here
        os.environ["XDG_STATE_HOME"] = os.path.join(tmp, "state")
        # and the sessions' folders (task logs, the commands' tmp) go here
        tmpdir = os.path.join(tmp, "tmpdir")
        os.makedirs(tmpdir)
        os.environ["TMPDIR"] = tmpdir
        print_mode(t, exe, server, tmp)
        line_mode(t, exe, server, tmp)
        pty_mode(t, exe, server, tmp)
        pty_interrupt(t, exe, server, tmp)
        pty_keys(t, exe, server, tmp)
        cron_commands(t, exe, server, tmp)
        parallel_cards(t, exe, server, tmp)
        cron_wording(t, exe, server, tmp)
        plan_approval(t, exe, server, tmp)
        script_output(t, exe, server, tmp)
        stored_rules(t, exe, server, tmp)
        project_context(t, exe, server, tmp)
        markdown(t, exe, server, tmp)
        commands(t, exe, server, tmp)
        t.eq(os.listdir(tmpdir), [], "every agt-chat removed its session folder at exit")
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
