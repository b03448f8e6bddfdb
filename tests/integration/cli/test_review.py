#!/usr/bin/env python3
"""agt-review end to end on a real repository built in a temp dir.

History: C1 initial files; C2 edits src/calc.c; C3 renames old_name.py to
new_name.py (with an edit) and deletes doomed.txt; C4 changes a binary file
and adds a lock file.  The range C1...HEAD is reviewed with a scripted model:
a replay file (--model replay:FILE) or, with --http, the same script served
by scripted_server.py as an OpenAI-compatible endpoint.

The expected line numbers were worked out by hand from the file contents
below (see the comments next to each expectation).

usage: test_review.py AGT_REVIEW [SCRIPTED_SERVER]
"""
import json
import os
import subprocess
import sys
import tempfile
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tap import Tap  # noqa: E402

CALC_OLD = """#include <stdio.h>

int legacy_mode = 1;

int add(int a, int b)
{
    return a + b;
}

int compute_total(const int *items, int n)
{
    int t = 0;
    for (int i = 0; i < n; i++)
        t += items[i];
    return t;
}
"""

# New side, by line:
#  1 #include   2 blank   3 int add   4 {   5 return a + b;   6 }   7 blank
#  8 int compute_total   9 {   10 int total = 0;   11 if (items == NULL)
# 12 return 0;   13 for (... <= n ...)   14 total += items[i];
# 15 if (total < 0)   16 return 0;   17 return total;   18 }
CALC_NEW = """#include <stdio.h>

int add(int a, int b)
{
    return a + b;
}

int compute_total(const int *items, int n)
{
    int total = 0;
    if (items == NULL)
        return 0;
    for (int i = 0; i <= n; i++)
        total += items[i];
    if (total < 0)
        return 0;
    return total;
}
"""

PY_OLD = 'def greet(name):\n    return "hello " + name\n\n\ndef unused():\n    pass\n'
PY_NEW = 'def greet(name):\n    return f"hello {name}"\n\n\ndef unused():\n    pass\n'


def git(repo, *args):
    subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True)


def git_init(repo):
    """An empty repository on branch main with a committer set."""
    os.makedirs(repo, exist_ok=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "t@example.com")
    git(repo, "config", "user.name", "T")


def write(repo, path, data, mode="w"):
    full = os.path.join(repo, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, mode) as f:
        f.write(data)


def build_repo(repo):
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "t@example.com")
    git(repo, "config", "user.name", "T")
    write(repo, "src/calc.c", CALC_OLD)
    write(repo, "old_name.py", PY_OLD)
    write(repo, "doomed.txt", "this file goes away\n")
    write(repo, "logo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR" + bytes(64), "wb")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "C1")
    write(repo, "src/calc.c", CALC_NEW)
    git(repo, "commit", "-q", "-am", "C2: compute_total checks")
    git(repo, "mv", "old_name.py", "new_name.py")
    write(repo, "new_name.py", PY_NEW)
    git(repo, "rm", "-q", "doomed.txt")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "C3: rename and delete")
    write(repo, "logo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR" + bytes(60) + b"\x01\x02\x03\x04",
          "wb")
    write(repo, "package-lock.json", '{"lockfileVersion": 3}\n')
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "C4: binary and lock")
    out = subprocess.run(["git", "-C", repo, "rev-list", "--max-parents=0", "HEAD"],
                         check=True, capture_output=True, text=True)
    return out.stdout.strip()


def call(cid, name, args):
    return {"id": cid, "name": name, "arguments": json.dumps(args)}


def turn(*calls, content=""):
    return {"content": content, "tool_calls": list(calls),
            "finish_reason": "tool_calls" if calls else "stop",
            "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}}


def script_for(path):
    """The model's answers for one file, in the order they are asked for."""
    if path == "src/calc.c":
        comments = [
            {"content": "Off by one: reads items[n].",
             "existing_code": "    for (int i = 0; i <= n; i++)",
             "suggestion_code": "    for (int i = 0; i < n; i++)",
             "category": "bug", "severity": "high"},
            {"content": "Rename is fine, but check NULL first.",
             "existing_code": "+    int total = 0;\n+    if (items == NULL)",
             "category": "style", "severity": "low"},
            {"content": "legacy_mode was exported; callers may still use it.",
             "existing_code": "int legacy_mode = 1;",
             "category": "maintainability", "severity": "medium"},
            {"content": "Returning 0 hides the error.",
             "existing_code": "        return 0;", "category": "bug", "severity": "medium"},
            {"content": "Overflow is possible in the sum.",
             "existing_code": "total = sum(items)", "category": "bug",
             "severity": "critical"},
        ]
        return [
            turn(call("c1", "file_read_diff", {"path_array": ["src/calc.c"]}),
                 call("c2", "code_search", {"search_text": "compute_total"})),
            turn(call("c3", "code_comment", {"comments": comments})),
            # the relocation sub-request for "total = sum(items)"
            {"content": "```c\n        total += items[i];\n```", "finish_reason": "stop",
             "usage": {"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55}},
            turn(call("c4", "task_done", {})),
        ]
    if path == "new_name.py":
        return [
            turn(call("p1", "code_comment", {"comments": [
                {"content": "f-string: fine, but name may be None.",
                 "existing_code": '    return f"hello {name}"',
                 "category": "other", "severity": "low"}]})),
            turn(call("p2", "task_done", {"state": "DONE"})),
        ]
    raise AssertionError("unexpected file " + path)


def grouped_script(order):
    """Both files in one session (default --group-lines 40: 2 + 14 lines); the
    first file of the change set (new_name.py, paths sort) leads the group."""
    calc = script_for("src/calc.c")
    py = script_for("new_name.py")
    comments = [dict(c, path="src/calc.c") for c in
                json.loads(calc[1]["tool_calls"][0]["arguments"])["comments"]]
    comments += [dict(c, path="new_name.py") for c in
                 json.loads(py[0]["tool_calls"][0]["arguments"])["comments"]]
    key = "Review these 2 small files"
    return [
        dict(turn(call("g1", "file_read_diff", {"path_array": order})), key=key),
        dict(turn(call("g2", "code_comment", {"comments": comments})), key=key),
        dict(calc[2], key="File: src/calc.c"),  # the relocation sub-request
        dict(turn(call("g3", "task_done", {})), key=key),
    ]


def run(cmd, cwd):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def find(comments, content_prefix):
    for c in comments:
        if c["content"].startswith(content_prefix):
            return c
    return None


def main():
    exe = sys.argv[1]
    server = sys.argv[2] if len(sys.argv) > 2 else None
    t = Tap()
    with tempfile.TemporaryDirectory() as tmp:
        repo = os.path.join(tmp, "repo")
        os.makedirs(repo)
        c1 = build_repo(repo)

        rc, out, err = run([exe, "--repo", repo, "--from", c1, "--preview", "--format", "json"],
                           tmp)
        t.eq(rc, 0, "preview exits 0")
        prev = json.loads(out)
        by_path = {f["path"]: f for f in prev["files"]}
        t.eq(sorted(by_path), ["doomed.txt", "logo.png", "new_name.py", "package-lock.json",
                               "src/calc.c"], "preview lists the five changed files")
        t.eq(by_path["doomed.txt"]["skip_reason"], "deleted file", "deleted file skipped")
        t.eq(by_path["logo.png"]["skip_reason"], "binary file", "binary file skipped")
        t.eq(by_path["package-lock.json"]["skip_reason"], "lock file", "lock file skipped")
        t.eq((by_path["new_name.py"]["status"], by_path["new_name.py"]["old_path"],
              by_path["new_name.py"]["added"], by_path["new_name.py"]["deleted"]),
             ("renamed", "old_name.py", 1, 1), "rename with one line changed")
        # calc.c: removed legacy_mode + blank, and lines 12-15 old -> 10-17 new:
        # -int t = 0; -for (< n) -t += -return t;  (4) and 7 added + ... see CALC_NEW
        numstat = subprocess.run(["git", "-C", repo, "diff", "--numstat", c1 + "...HEAD", "--",
                                  "src/calc.c"], check=True, capture_output=True,
                                 text=True).stdout.split()
        t.eq((by_path["src/calc.c"]["added"], by_path["src/calc.c"]["deleted"]),
             (int(numstat[0]), int(numstat[1])), "calc.c counts as git diff --numstat gives them")
        t.eq(prev["summary"]["to_review"], 2, "two files to review")

        rc, out, err = run([exe, "--repo", repo, "--from", c1, "--preview", "--exclude",
                            "*.py"], tmp)
        t.ok(rc == 0 and "excluded by --exclude *.py" in out, "--exclude names the glob")

        order = [f["path"] for f in prev["files"] if f["review"]]
        lines = []
        for p in order:
            # "key" lets the scripted server answer each file from its own
            # queue, whatever order parallel workers ask in (replay ignores it)
            lines += [dict(x, key=p) for x in script_for(p)]
        script = os.path.join(tmp, "script.jsonl")
        with open(script, "w") as f:
            for ln in lines:
                f.write(json.dumps(ln) + "\n")

        proc = None
        if server is not None:
            proc = subprocess.Popen([sys.executable, server, script], stdout=subprocess.PIPE,
                                    stdin=subprocess.PIPE, text=True)
            port = proc.stdout.readline().strip()
            model = ["--model", "scripted", "--base-url", "http://127.0.0.1:%s/v1" % port]
        else:
            model = ["--model", "replay:" + script]

        def review(fmt):
            if proc is not None:
                urllib.request.urlopen(urllib.request.Request(
                    "http://127.0.0.1:%s/reset" % port, data=b"", method="POST")).read()
            return run([exe, "--repo", repo, "--from", c1, "--format", fmt, "--group-lines", "0"]
                       + model, tmp)

        rc, out, err = review("json")
        t.eq(rc, 0, "review exits 0" + ("" if rc == 0 else ": " + err))
        res = json.loads(out) if rc == 0 else {"comments": [], "summary": {}}
        cs = res["comments"]
        t.eq(res["summary"].get("files_reviewed"), 2, "summary: 2 files reviewed")
        t.eq(res["summary"].get("files_skipped"), 3, "summary: 3 files skipped")
        t.eq(res["summary"].get("comments"), 6, "summary: 6 comments")
        # 5 turns x 110 + relocation 55 tokens
        t.eq(res["summary"].get("total_tokens"), 5 * 110 + 55, "summary: tokens add up")
        c = find(cs, "Off by one") or {}
        t.eq((c.get("path"), c.get("start_line"), c.get("end_line"), c.get("side"),
              c.get("method")), ("src/calc.c", 13, 13, "new", "hunk_new"), "exact snippet: line 13")
        c = find(cs, "Rename is fine") or {}
        t.eq((c.get("start_line"), c.get("end_line"), c.get("side")), (10, 11, "new"),
             "snippet with + markers: lines 10-11")
        c = find(cs, "legacy_mode") or {}
        t.eq((c.get("start_line"), c.get("end_line"), c.get("side"), c.get("method")),
             (3, 3, "old", "hunk_old"), "deleted line: old side line 3")
        c = find(cs, "Returning 0") or {}
        t.eq((c.get("start_line"), c.get("ambiguous"), c.get("candidates")),
             (0, True, [[12, 12], [16, 16]]), "ambiguous snippet: not pinned, candidates 12 and 16")
        c = find(cs, "Overflow") or {}
        t.eq((c.get("start_line"), c.get("end_line"), c.get("relocated")), (14, 14, True),
             "relocated by the model's re-quote: line 14")
        c = find(cs, "f-string") or {}
        t.eq((c.get("path"), c.get("start_line"), c.get("side")), ("new_name.py", 2, "new"),
             "renamed file: line 2")

        rc, out, err = review("sarif")
        t.eq(rc, 0, "sarif review exits 0")
        sarif = json.loads(out) if rc == 0 else {"runs": [{"results": [], "tool": {}}]}
        t.eq(sarif.get("version"), "2.1.0", "SARIF version 2.1.0")
        run0 = sarif["runs"][0]
        t.eq(run0["tool"].get("driver", {}).get("name"), "agt-review", "driver name")
        rule_ids = [r["id"] for r in run0["tool"].get("driver", {}).get("rules", [])]
        regions = []
        for r in run0["results"]:
            t.ok(r["ruleId"] in rule_ids and rule_ids[r["ruleIndex"]] == r["ruleId"],
                 "ruleId %s is a declared rule" % r["ruleId"])
            regs = []
            for loc in r["locations"]:
                reg = loc["physicalLocation"].get("region")
                regs.append((reg["startLine"], reg["endLine"]) if reg else None)
            regions.append((r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
                            r["ruleId"], r["level"], regs[0] if len(regs) == 1 else regs))
        t.eq(sorted(regions, key=repr), sorted([
            ("src/calc.c", "bug", "error", (13, 13)),
            ("src/calc.c", "style", "note", (10, 11)),
            # old line 3 (removed) in hunk @@ -1,7 +1,5 @@: shown at new line 1 + (3 - 1)
            ("src/calc.c", "maintainability", "warning", (3, 3)),
            # ambiguous: one location per candidate
            ("src/calc.c", "bug", "warning", [(12, 12), (16, 16)]),
            ("src/calc.c", "bug", "error", (14, 14)),             # critical -> error
            ("new_name.py", "other", "note", (2, 2)),
        ], key=repr), "SARIF results: rule, level and region per comment")

        gscript = os.path.join(tmp, "grouped.jsonl")
        with open(gscript, "w") as f:
            for x in grouped_script(order):
                f.write(json.dumps(x) + "\n")
        if server is not None:
            gp = subprocess.Popen([sys.executable, server, gscript], stdout=subprocess.PIPE,
                                  stdin=subprocess.PIPE, text=True)
            gmodel = ["--model", "m", "--base-url",
                      "http://127.0.0.1:%s/v1" % gp.stdout.readline().strip()]
        else:
            gmodel = ["--model", "replay:" + gscript]
        rc, out, err = run([exe, "--repo", repo, "--from", c1, "--format", "json"] + gmodel, tmp)
        if server is not None:
            gp.stdin.close()
            gp.wait(timeout=10)
        gres = json.loads(out) if rc == 0 else {"files": [], "comments": []}
        t.eq(sorted((f["path"], f["group"], f["outcome"]) for f in gres["files"]),
             [("new_name.py", None, "done"), ("src/calc.c", "new_name.py", "done")],
             "small files reviewed in one session (--group-lines default)")
        t.eq(sorted((c["path"], c["start_line"], c["end_line"], c["side"], c["ambiguous"])
                    for c in gres["comments"]),
             sorted((c["path"], c["start_line"], c["end_line"], c["side"], c["ambiguous"])
                    for c in cs), "grouped review anchors the same comments")

        hunk = subprocess.run(["git", "-C", repo, "diff", c1 + "...HEAD", "--", "src/calc.c"],
                              check=True, capture_output=True, text=True).stdout
        t.ok("@@ -1,7 +1,5 @@" in hunk, "git agrees on the first hunk of src/calc.c")
        amb = [r for r in run0["results"] if "Returning 0" in r["message"]["text"]]
        t.ok(len(amb) == 1 and "matches lines 12-12, 16-16" in amb[0]["message"]["text"],
             "SARIF: the ambiguous comment names its candidates")

        rc, out, err = review("text")
        t.ok(rc == 0 and "src/calc.c:13 [bug, high]" in out and
             "    for (int i = 0; i < n; i++)" in out, "text output: location and suggestion")
        # the candidates [[12, 12], [16, 16]] of the JSON output, as the text shows them
        t.ok(rc == 0 and "\nsrc/calc.c (ambiguous: lines 12, 16) [bug" in out,
             "text output: an ambiguous comment lists its candidate lines")
        t.ok("[2/2]" in err, "progress on stderr")
        def anchors(res):
            return sorted((c["path"], c["start_line"], c["end_line"], c["side"], c["method"],
                           c["ambiguous"]) for c in res["comments"])

        if proc is not None:
            first = anchors(res)
            urllib.request.urlopen(urllib.request.Request(
                "http://127.0.0.1:%s/reset" % port, data=b"", method="POST")).read()
            rc, out, err = run([exe, "--repo", repo, "--from", c1, "--format", "json",
                                "--concurrency", "2", "--group-lines", "0"] + model, tmp)
            t.ok(rc == 0 and anchors(json.loads(out)) == first,
                 "--concurrency 2 gives the same anchored comments")
            proc.stdin.close()
            proc.wait(timeout=10)

            # --plan-threshold 10: calc.c (14 changed lines) gets a plan phase with
            # the read-only tools, new_name.py (2) does not; --language reaches the prompt.
            planned = os.path.join(tmp, "plan.jsonl")
            with open(planned, "w") as f:
                f.write(json.dumps({"key": "src/calc.c", "content": "Plan: check the loop bounds.",
                                    "finish_reason": "stop"}) + "\n")
                for p in order:
                    for x in script_for(p):
                        f.write(json.dumps(dict(x, key=p)) + "\n")
            pp = subprocess.Popen([sys.executable, server, planned], stdout=subprocess.PIPE,
                                  stdin=subprocess.PIPE, text=True)
            pport = pp.stdout.readline().strip()
            rc, out, err = run([exe, "--repo", repo, "--from", c1, "--format", "json",
                                "--plan-threshold", "10", "--language", "French",
                                "--group-lines", "0", "--model", "m",
                                "--base-url", "http://127.0.0.1:%s/v1" % pport], tmp)
            pp.stdin.close()
            pp.wait(timeout=10)
            res2 = json.loads(out) if rc == 0 else {"files": [], "comments": []}
            t.eq({f["path"]: f["planned"] for f in res2["files"]},
                 {"src/calc.c": True, "new_name.py": False}, "plan phase only for the large file")
            t.eq(anchors(res2), first, "same anchored comments after a plan phase")
            with open(planned + ".requests") as f:
                reqs = [json.loads(ln) for ln in f if ln.strip()]

            def user_of(r):
                return next(m["content"] for m in r["messages"] if m["role"] == "user")
            calc = [r for r in reqs if "Review the modified file src/calc.c" in user_of(r)]
            t.eq(sorted(x["function"]["name"] for x in calc[0]["tools"]) if calc else None,
                 ["code_search", "file_find", "file_read_diff"], "plan phase offers read-only tools")
            main_calc = [r for r in calc if "Plan: check the loop bounds." in user_of(r)]
            t.ok(len(main_calc) >= 1 and "task_done" in
                 [x["function"]["name"] for x in main_calc[0]["tools"]],
                 "main phase gets the plan and the full tool set")
            t.ok(all("Write the comments in French." in user_of(r) for r in calc + main_calc),
                 "--language reaches the prompt")

            # --timeout: the model takes 3 s for calc.c; the limit is 1 s.
            slow = os.path.join(tmp, "slow.jsonl")
            with open(slow, "w") as f:
                for p in order:
                    for x in script_for(p):
                        x = dict(x, key=p)
                        if p == "src/calc.c":
                            x["delay"] = 3
                        f.write(json.dumps(x) + "\n")
            sp = subprocess.Popen([sys.executable, server, slow], stdout=subprocess.PIPE,
                                  stdin=subprocess.PIPE, text=True)
            sport = sp.stdout.readline().strip()
            rc, out, err = run([exe, "--repo", repo, "--from", c1, "--format", "json",
                                "--timeout", "1", "--group-lines", "0", "--model", "m", "--base-url",
                                "http://127.0.0.1:%s/v1" % sport], tmp)
            sp.stdin.close()
            sp.wait(timeout=10)
            outcomes = {f["path"]: f["outcome"] for f in json.loads(out)["files"]} if rc == 0 \
                else {}
            t.eq(outcomes, {"src/calc.c": "timeout", "new_name.py": "done"},
                 "--timeout stops the slow file only")

        # secrets never reach the model: a staged .env.prod (and a key under a
        # name no pattern knows, found by the diff's content) are skipped
        # with the reason; only app.py is left to review
        srepo = os.path.join(tmp, "srepo")
        git_init(srepo)
        write(srepo, "README", "base\n")
        git(srepo, "add", "-A")
        git(srepo, "commit", "-q", "-m", "base")
        write(srepo, ".env.prod", "TOKEN=sk-live-123\n")
        write(srepo, "deploy_identity", "-----BEGIN " + "OPENSSH PRIVATE KEY-----\nb3Bl\n"
              "-----END OPENSSH PRIVATE KEY-----\n")
        write(srepo, "app.py", "print('hi')\n")
        git(srepo, "add", "-A")
        # a hard link (untracked) to an ignored .env: another name of it
        write(srepo, ".gitignore", ".env\n")
        write(srepo, ".env", "TOKEN=sk-hard-456\n")
        os.link(os.path.join(srepo, ".env"), os.path.join(srepo, "notes.txt"))
        rc, out, err = run([exe, "--repo", srepo, "--preview", "--format", "json"], tmp)
        t.eq(rc, 0, "sensitive preview exits 0")
        sp = {f["path"]: f for f in json.loads(out)["files"]}
        t.eq(sp[".env.prod"]["skip_reason"],
             "sensitive file (environment file (.env)): its content is not sent",
             "staged .env.prod skipped as sensitive")
        t.eq(sp["deploy_identity"]["skip_reason"],
             "sensitive file (private key (a PRIVATE KEY block in the content)): its content "
             "is not sent", "a key found in the diff's content skipped")
        t.eq(sp["app.py"]["skip_reason"], None, "app.py still reviewed")
        t.eq(sp["notes.txt"]["skip_reason"],
             "sensitive file (a hard link to a sensitive file): its content is not sent",
             "a hard link to .env skipped")
        # a hard link whose other name is outside the repository: its names
        # are not known, so it is skipped all the same
        outside = os.path.join(tmp, "outside-secret")
        write(tmp, "outside-secret", "TOKEN=sk-out-000\n")
        os.link(outside, os.path.join(srepo, "linked.txt"))
        rc, out, err = run([exe, "--repo", srepo, "--preview", "--format", "json"], tmp)
        sp = {f["path"]: f for f in json.loads(out)["files"]}
        t.eq(sp["linked.txt"]["skip_reason"],
             "hard link (another name of the file may be a sensitive file): its content is "
             "not sent", "a hard link to a file outside skipped")
        t.ok("sk-out-000" not in out, "no secret of the outside file in the preview")
        t.ok("sk-live-123" not in out and "b3Bl" not in out and "sk-hard-456" not in out,
             "no secret in the preview")

        # a plain mv of a tracked .env (git sees a deletion and an untracked
        # addition, never a rename): the new name is skipped too
        mrepo = os.path.join(tmp, "mrepo")
        git_init(mrepo)
        write(mrepo, ".env", "TOKEN=sk-moved-789\nURL=https://db.example.com/prod\n")
        write(mrepo, "app.py", "print('hi')\n")
        git(mrepo, "add", "-A")
        git(mrepo, "commit", "-q", "-m", "base")
        os.rename(os.path.join(mrepo, ".env"), os.path.join(mrepo, "notes.txt"))
        write(mrepo, "app.py", "print('hello')\n")
        rc, out, err = run([exe, "--repo", mrepo, "--preview", "--format", "json"], tmp)
        mp = {f["path"]: f for f in json.loads(out)["files"]} if rc == 0 else {}
        t.eq(mp.get("notes.txt", {}).get("skip_reason"),
             "sensitive file (holds most of a sensitive file (moved or copied)): its content is "
             "not sent", "a plain mv of .env skipped by its new name")
        t.eq(mp.get("app.py", {}).get("skip_reason"), None, "app.py still reviewed")
        t.ok("sk-moved-789" not in out, "no moved secret in the preview")

        bad_tools = os.path.join(tmp, "tools.json")
        with open(bad_tools, "w") as f:
            f.write('[{"name": "no_such_tool", "definition": {"name": "no_such_tool"}}]')
        rc, out, err = run([exe, "--repo", repo, "--from", c1, "--tools", bad_tools, "--model",
                            "replay:" + script], tmp)
        t.ok(rc == 1 and "--tools" in err, "a bad --tools file: exit 1 naming it")
        rc, out, err = run([exe, "--repo", os.path.join(tmp, "nope"), "--model",
                            "replay:" + script], tmp)
        t.ok(rc == 1 and "cannot open the change set" in err, "bad --repo: exit 1 with the reason")
        rc, out, err = run([exe, "--repo", repo, "--model", "replay:" + os.path.join(tmp, "x")],
                           tmp)
        t.ok(rc == 1 and "replay model" in err, "missing replay file: exit 1 with the reason")
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
