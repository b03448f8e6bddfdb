#!/usr/bin/env python3
"""agt-review --post github|gitlab end to end, against the fakes of
fake_forge.py, with the scripted model server; plus --fail-on, --max-files,
--format rdjson (checked against reviewdog's schema with the library's
validator, agt-tools validate) and the shallow-clone message.

A real repository: main has C1; the pull request (branch feature) adds P1
(src/calc.c) and P2 (lib/util.py); P3 is pushed later for --incremental.
Line numbers below were worked out by hand from the file texts.

The SARIF output is validated against the SARIF 2.1.0 schema of the npm
package @microsoft/jest-sarif (lib/schemas/sarif-2.1.0-rtm.5.json), installed
once into NODE_DIR (the build tree); that check is skipped with the reason
when npm is missing or the install fails.

usage: test_review_post.py AGT_REVIEW SCRIPTED_SERVER AGT_TOOLS [NODE_DIR]
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fake_forge  # noqa: E402
from tap import Tap  # noqa: E402

TOP = """#include <stdio.h>
#include <stdlib.h>

/* Totals and helpers. */
static int verbose = 0;

int add(int a, int b)
{
    return a + b;
}

int sub(int a, int b)
{
    return a - b;
}

int mul(int a, int b)
{
    return a * b;
}
"""
CALC_V1 = TOP + """
int legacy_mode = 1;

int compute_total(const int *items, int n)
{
    int t = 0;
    for (int i = 0; i < n; i++)
        t += items[i];
    return t;
}
"""
# new side: 1-20 TOP, 21 blank, 22 int compute_total, 23 {, 24 int total = 0;
# 25 if (items == NULL)  26 return 0;  27 for (<= n)  28 total +=
# 29 if (total < 0)  30 return 0;  31 return total;  32 }
CALC_V2 = TOP + """
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
CALC_V3 = CALC_V2.replace("    return a + b;", "    return (a + b) / 1;")
UTIL_V1 = 'def greet(name):\n    return "hello " + name\n\n\ndef shout(name):\n    return greet(name).upper()\n'
UTIL_V2 = UTIL_V1.replace('"hello " + name', 'f"hello {name}"')


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def write(repo, path, data):
    full = os.path.join(repo, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as f:
        f.write(data)


def call(cid, name, args):
    return {"id": cid, "name": name, "arguments": json.dumps(args)}


def turn(*calls):
    return {"content": "", "tool_calls": list(calls),
            "finish_reason": "tool_calls" if calls else "stop",
            "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}}


CALC_COMMENTS = [
    {"content": "Off by one: reads items[n].", "existing_code": "    for (int i = 0; i <= n; i++)",
     "suggestion_code": "    for (int i = 0; i < n; i++)", "category": "bug", "severity": "high"},
    {"content": "A negative total is an overflow; say so.",
     "existing_code": "    if (total < 0)\n        return 0;",
     "suggestion_code": "    if (total < 0)\n        return -1;", "category": "bug",
     "severity": "medium"},
    {"content": "legacy_mode was exported; callers may still use it.",
     "existing_code": "int legacy_mode = 1;", "category": "maintainability", "severity": "medium"},
    {"content": "Returning 0 hides the error.", "existing_code": "        return 0;",
     "category": "bug", "severity": "low"},
    {"content": "Overflow is possible in the sum.", "existing_code": "total = sum(items)",
     "category": "security", "severity": "critical"},
    {"content": "verbose is never read.", "existing_code": "static int verbose = 0;",
     "suggestion_code": "", "category": "maintainability", "severity": "low"},
]
UTIL_COMMENTS = [
    {"content": "greet has no docstring.", "existing_code": "def greet(name):",
     "category": "documentation", "severity": "low"},
    {"content": "shout could call upper() once.", "existing_code": "    return greet(name).upper()",
     "category": "style", "severity": "low"},
]


def script(calc_comments, util_comments):
    lines = []
    if calc_comments is not None:
        k = "Review the modified file src/calc.c"
        lines += [dict(turn(call("c1", "code_comment", {"comments": calc_comments})), key=k),
                  dict(turn(call("c2", "task_done", {})), key=k)]
    if util_comments is not None:
        k = "Review the modified file lib/util.py"
        lines += [dict(turn(call("u1", "code_comment", {"comments": util_comments})), key=k),
                  dict(turn(call("u2", "task_done", {})), key=k)]
    # relocation sub-requests: nothing fits
    for _ in range(4):
        lines.append({"key": "The quoted code that was not found", "content": "NONE",
                      "finish_reason": "stop"})
    return lines


class Model:
    def __init__(self, server, path, lines):
        with open(path, "w") as f:
            for ln in lines:
                f.write(json.dumps(ln) + "\n")
        self.proc = subprocess.Popen([sys.executable, server, path], stdout=subprocess.PIPE,
                                     stdin=subprocess.PIPE, text=True)
        self.port = self.proc.stdout.readline().strip()
        self.args = ["--model", "m", "--base-url", "http://127.0.0.1:%s/v1" % self.port]

    def reset(self):
        urllib.request.urlopen(urllib.request.Request(
            "http://127.0.0.1:%s/reset" % self.port, data=b"", method="POST")).read()

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


def run(cmd, env_extra=None, cwd=None):
    env = dict(os.environ)
    for k in ("GITHUB_TOKEN", "GITHUB_REPOSITORY", "GITHUB_EVENT_PATH", "GITHUB_API_URL",
              "GITLAB_TOKEN", "CI_API_V4_URL", "CI_PROJECT_ID", "CI_MERGE_REQUEST_IID"):
        env.pop(k, None)
    env.update(env_extra or {})
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env, cwd=cwd)
    return p.returncode, p.stdout, p.stderr


def sarif_schema(node_dir):
    """The SARIF 2.1.0 schema file, or (None, why not)."""
    if not node_dir:
        return None, "no NODE_DIR given"
    path = os.path.join(node_dir, "node_modules", "@microsoft", "jest-sarif", "lib", "schemas",
                        "sarif-2.1.0-rtm.5.json")
    if os.path.exists(path):
        return path, None
    npm = shutil.which("npm")
    if not npm:
        return None, "npm is needed to fetch the SARIF 2.1.0 schema (@microsoft/jest-sarif)"
    os.makedirs(node_dir, exist_ok=True)
    p = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix", node_dir,
                        "@microsoft/jest-sarif"], capture_output=True, text=True, timeout=280)
    if p.returncode != 0 or not os.path.exists(path):
        return None, "npm install @microsoft/jest-sarif failed: " + \
            (p.stderr.strip().splitlines() or ["?"])[-1]
    return path, None


def main():
    exe, server, tools = sys.argv[1], sys.argv[2], sys.argv[3]
    node_dir = sys.argv[4] if len(sys.argv) > 4 else None
    shared = os.environ.get("AGT_SHARED_DIR") or os.path.join(HERE, "..", "..", "..", "..", "shared")
    corpus = os.path.join(shared, "corpus", "rdjson")
    t = Tap()
    with tempfile.TemporaryDirectory() as tmp:
        repo = os.path.join(tmp, "repo")
        os.makedirs(repo)
        git(repo, "init", "-q", "-b", "main")
        git(repo, "config", "user.email", "t@example.com")
        git(repo, "config", "user.name", "T")
        write(repo, "src/calc.c", CALC_V1)
        write(repo, "lib/util.py", UTIL_V1)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "C1")
        base = git(repo, "rev-parse", "HEAD")
        git(repo, "checkout", "-q", "-b", "feature")
        write(repo, "src/calc.c", CALC_V2)
        git(repo, "commit", "-q", "-am", "P1")
        write(repo, "lib/util.py", UTIL_V2)
        git(repo, "commit", "-q", "-am", "P2")
        head = git(repo, "rev-parse", "HEAD")

        # shallow clone (file:// so that git really cuts the history)
        shallow = os.path.join(tmp, "shallow")
        subprocess.run(["git", "clone", "-q", "--depth", "1", "--branch", "feature",
                        "file://" + repo, shallow], check=True, capture_output=True)
        rc, out, err = run([exe, "--repo", shallow, "--commit", "HEAD", "--preview"])
        t.ok(rc == 1 and "shallow clone" in err and "git fetch --deepen=1" in err and
             "fetch-depth: 0" in err, "shallow clone: exit 1 naming the fix (%s)" % err.strip())
        subprocess.run(["git", "-C", shallow, "fetch", "-q", "--deepen=1"], check=True,
                       capture_output=True)
        rc, out, err = run([exe, "--repo", shallow, "--commit", "HEAD", "--preview"])
        t.ok(rc == 0 and "lib/util.py" in out, "shallow clone after --deepen=1: previews P2")

        model = Model(server, os.path.join(tmp, "s1.jsonl"), script(CALC_COMMENTS, UTIL_COMMENTS))
        common = [exe, "--repo", repo, "--group-lines", "0"] + model.args

        # guards and gating, without posting
        rc, out, err = run(common + ["--from", base, "--max-files", "1"])
        t.ok(rc == 1 and "2 files to review, over --max-files 1" in err,
             "--max-files 1: exit 1 with the count")
        rc, out, err = run(common + ["--from", base, "--max-lines", "5"])
        t.ok(rc == 1 and "over --max-lines 5" in err, "--max-lines 5: exit 1")
        rc, out, err = run(common + ["--from", base, "--fail-on", "bogus"])
        t.eq(rc, 2, "--fail-on bogus: usage error")
        model.reset()
        rc, out, err = run(common + ["--from", base, "--format", "rdjson", "--fail-on",
                                     "critical"])
        t.eq(rc, 3, "--fail-on critical with a critical comment: exit 3")
        t.ok("1 comment at or above --fail-on critical" in err, "--fail-on names the count")
        rd = json.loads(out) if out.strip().startswith("{") else {"diagnostics": []}
        rdfile = os.path.join(tmp, "out.rdjson")
        with open(rdfile, "w") as f:
            f.write(out)
        p = subprocess.run([tools, "validate", os.path.join(corpus, "DiagnosticResult.json"),
                            rdfile], capture_output=True, text=True)
        t.ok(p.returncode == 0, "rdjson output is valid against reviewdog's DiagnosticResult "
             "schema (%s)" % (p.stdout + p.stderr).strip()[:200])
        by_msg = {d["message"].split("\n")[0]: d for d in rd["diagnostics"]}
        d = by_msg.get("Off by one: reads items[n].", {})
        t.eq((d.get("location"), d.get("severity"), d.get("code"), d.get("suggestions")),
             ({"path": "src/calc.c", "range": {"start": {"line": 27}, "end": {"line": 27}}},
              "ERROR", {"value": "bug"},
              [{"range": {"start": {"line": 27}, "end": {"line": 27}},
                "text": "    for (int i = 0; i < n; i++)"}]), "rdjson: new-side comment")
        d = by_msg.get("Returning 0 hides the error.", {})
        t.eq((d.get("location"), [r["location"]["range"]["start"]["line"]
                                  for r in d.get("related_locations", [])]),
             ({"path": "src/calc.c"}, [26, 30]), "rdjson: ambiguous comment, both candidates")
        d = by_msg.get("Overflow is possible in the sum.", {})
        t.eq(d.get("location"), {"path": "src/calc.c"}, "rdjson: unanchored at file level")
        d = by_msg.get("legacy_mode was exported; callers may still use it.", {})
        t.ok("removed lines 22-22" in d.get("message", "") and "suggestions" not in d,
             "rdjson: old-side comment says so")

        model.reset()
        rc, out, err = run(common + ["--from", base, "--format", "sarif"])
        sarif_file = os.path.join(tmp, "out.sarif")
        with open(sarif_file, "w") as f:
            f.write(out)
        schema, why = sarif_schema(node_dir)
        if schema is None:
            t.skip("SARIF output valid against the SARIF 2.1.0 schema", why)
        else:
            p = subprocess.run([tools, "validate", schema, sarif_file], capture_output=True,
                               text=True)
            t.ok(rc == 0 and p.returncode == 0, "SARIF output valid against the SARIF 2.1.0 "
                 "schema (%s)" % (p.stdout + p.stderr).strip()[:300])
        sarif = json.loads(out) if rc == 0 else {"runs": [{"results": [], "tool": {"driver": {}}}]}
        run0 = sarif["runs"][0]
        rules = {r["id"]: r for r in run0["tool"]["driver"].get("rules", [])}
        sec = rules.get("security", {})
        t.ok(sec.get("properties", {}).get("tags") == ["agt-review", "security"] and
             sec["properties"].get("security-severity") == "8.0" and
             sec.get("fullDescription", {}).get("text") and sec.get("help", {}).get("markdown"),
             "SARIF rule: tags, security-severity, fullDescription, help")
        res = {r["message"]["text"].split("\n")[0]: r for r in run0["results"]}
        amb = res.get("Returning 0 hides the error.", {"locations": []})
        t.eq([loc["physicalLocation"]["region"]["startLine"] for loc in amb["locations"]],
             [26, 30], "SARIF: an ambiguous comment at every candidate")
        una = res.get("Overflow is possible in the sum.", {"locations": [{}]})
        t.eq((una["locations"][0].get("physicalLocation"),
              una.get("properties", {}).get("security-severity")),
             ({"artifactLocation": {"uri": "src/calc.c", "uriBaseId": "%SRCROOT%"}}, "9.5"),
             "SARIF: an unanchored comment at file level (no region); critical security 9.5")
        fps = [r.get("partialFingerprints", {}).get("agtReviewAnchor/v1", "")
               for r in run0["results"]]
        t.ok(len(fps) == 8 and len(set(fps)) == 8 and all(
            fp.startswith("anchor=") for fp in fps), "SARIF: 8 distinct partialFingerprints")

        # ---- GitHub ----
        forge = fake_forge.Forge(repo, "ghs_secret")
        forge.pr = {"repo": "acme/calc", "number": 7, "head": head, "base": base}
        srv, api = fake_forge.start("github", forge)
        event = os.path.join(tmp, "event.json")
        with open(event, "w") as f:
            json.dump({"pull_request": {"number": 7, "head": {"sha": head},
                                        "base": {"sha": base}}}, f)
        gh_env = {"GITHUB_TOKEN": "ghs_secret", "GITHUB_REPOSITORY": "acme/calc",
                  "GITHUB_EVENT_PATH": event, "GITHUB_API_URL": api,
                  "GITHUB_SHA": "0" * 40}
        rc, out, err = run(common + ["--post", "github"], dict(gh_env, GITHUB_TOKEN=""))
        t.ok(rc == 1 and "$GITHUB_TOKEN" in err, "--post github without a token: exit 1")
        model.reset()
        rc, out, err = run(common + ["--post", "github", "--format", "json"], gh_env)
        t.eq(rc, 0, "--post github: exit 0" + ("" if rc == 0 else ": " + err))
        posts = [r for r in forge.requests if r["method"] == "POST" and
                 r["path"].endswith("/reviews")]
        t.eq(len(posts), 1, "one review posted")
        review = posts[0]["body"] if posts else {"comments": [], "body": ""}
        print("# posted review request body:")
        for ln in json.dumps(review, indent=2).split("\n"):
            print("#   " + ln)
        t.eq(review.get("commit_id"), head, "commit_id is the PR head, not GITHUB_SHA")
        t.ok(all(r["headers"].get("User-Agent", "").startswith("agt-review/")
                 for r in forge.requests), "every request has a User-Agent")
        got = sorted((c["path"], c.get("start_line", 0), c["line"], c["side"],
                      "```suggestion" in c["body"]) for c in review["comments"])
        t.eq(got, sorted([
            ("src/calc.c", 0, 27, "RIGHT", True),      # added line, suggestion block
            ("src/calc.c", 29, 30, "RIGHT", True),     # range of added lines
            ("src/calc.c", 0, 22, "LEFT", False),      # removed line
            ("lib/util.py", 0, 1, "RIGHT", False),     # context line
        ]), "inline comments: lines, sides, ranges, suggestion blocks")
        body = review.get("body", "")
        t.ok("**src/calc.c** (the quoted code matches lines 26, 30)" in body,
             "review body: the ambiguous comment with its candidates")
        t.ok("**src/calc.c** (file level)" in body and "Overflow is possible" in body,
             "review body: the unanchored comment at file level")
        t.ok("**src/calc.c:5** (outside the diff)" in body and
             "**lib/util.py:6** (outside the diff)" in body,
             "review body: comments found outside the diff hunks, with file and line")
        t.eq(body.count("<!-- agt-review:comment anchor="), 4, "review body: 4 markers")
        t.eq(sum("<!-- agt-review:comment anchor=" in c["body"] for c in review["comments"]), 4,
             "each inline comment has a marker")
        t.eq(len(forge.issue_comments), 1, "one summary comment created")
        summ = forge.issue_comments[0]["body"] if forge.issue_comments else ""
        t.ok(summ.startswith("<!-- agt-review:summary head=%s -->" % head) and
             "| critical | 1 |" in summ and "8 new comments" in summ,
             "summary: head marker and counts")

        # second run: nothing new, summary updated in place, pagination followed
        nreq = len(forge.requests)
        model.reset()
        rc, out, err = run(common + ["--post", "github"], gh_env)
        t.eq(rc, 0, "re-run: exit 0" + ("" if rc == 0 else ": " + err))
        later = forge.requests[nreq:]
        t.eq(sum(1 for r in later if r["method"] == "POST"), 0, "re-run: nothing posted again")
        t.ok(any("page=2" in r["path"] and "/pulls/7/comments" in r["path"] for r in later),
             "re-run: review comments read page after page (Link)")
        t.eq([r["method"] for r in later if "/issues/comments/" in r["path"]], ["PATCH"],
             "re-run: the summary is PATCHed")
        t.ok(len(forge.issue_comments) == 1 and "8 already posted" in
             forge.issue_comments[0]["body"], "re-run: one summary, updated")

        # push P3, review --incremental
        write(repo, "src/calc.c", CALC_V3)
        git(repo, "commit", "-q", "-am", "P3")
        head3 = git(repo, "rev-parse", "HEAD")
        forge.pr["head"] = head3
        with open(event, "w") as f:
            json.dump({"pull_request": {"number": 7, "head": {"sha": head3},
                                        "base": {"sha": base}}}, f)
        model.close()
        inc = CALC_COMMENTS[:1] + [
            {"content": "Dividing by 1 does nothing.", "existing_code": "    return (a + b) / 1;",
             "suggestion_code": "    return a + b;", "category": "style", "severity": "low"}]
        model = Model(server, os.path.join(tmp, "s2.jsonl"), script(inc, None))
        common = [exe, "--repo", repo, "--group-lines", "0"] + model.args
        nreq = len(forge.requests)
        rc, out, err = run(common + ["--post", "github", "--incremental", "--format", "json"],
                           gh_env)
        t.eq(rc, 0, "--incremental: exit 0" + ("" if rc == 0 else ": " + err))
        res = json.loads(out) if rc == 0 else {"files": []}
        t.eq([f["path"] for f in res["files"]], ["src/calc.c"],
             "--incremental reviews only what P3 changed")
        later = [r for r in forge.requests[nreq:] if r["method"] == "POST"]
        t.eq([(c["path"], c["line"], c["side"]) for r in later if r["path"].endswith("/reviews")
              for c in r["body"]["comments"]], [("src/calc.c", 9, "RIGHT")],
             "--incremental posts the new comment only (the repeated one is already there)")
        t.ok(forge.issue_comments[0]["body"].startswith(
            "<!-- agt-review:summary head=%s -->" % head3) and
             "the commits since `%s`" % head[:12] in forge.issue_comments[0]["body"],
             "--incremental: the summary records the new head")
        rc, out, err = run(common + ["--post", "github", "--incremental"], gh_env)
        t.ok(rc == 0 and "nothing new since" in err, "--incremental again: nothing new")
        srv.shutdown()

        # ---- GitLab ----
        model.close()
        git(repo, "checkout", "-q", head)  # the MR as it was at P2
        model = Model(server, os.path.join(tmp, "s3.jsonl"), script(CALC_COMMENTS, UTIL_COMMENTS))
        common = [exe, "--repo", repo, "--group-lines", "0"] + model.args
        gl = fake_forge.Forge(repo, "glpat-secret")
        gl.mr = {"project": "42", "iid": 3, "base": base, "start": base, "head": head}
        gsrv, gapi = fake_forge.start("gitlab", gl)
        gl_env = {"GITLAB_TOKEN": "glpat-secret", "CI_API_V4_URL": gapi, "CI_PROJECT_ID": "42",
                  "CI_MERGE_REQUEST_IID": "3"}
        rc, out, err = run(common + ["--post", "gitlab"], gl_env)
        t.eq(rc, 0, "--post gitlab: exit 0" + ("" if rc == 0 else ": " + err))
        disc = [r["body"] for r in gl.requests if r["method"] == "POST" and
                r["path"].endswith("/discussions")]
        pos = sorted((d["position"]["new_path"], d["position"].get("old_line", 0),
                      d["position"].get("new_line", 0)) for d in disc if "position" in d)
        t.eq(pos, sorted([("src/calc.c", 0, 27), ("src/calc.c", 0, 30),
                          ("src/calc.c", 22, 0), ("lib/util.py", 1, 1)]),
             "gitlab: positions (added: new_line, removed: old_line, unchanged: both)")
        rng = [d for d in disc if d.get("position", {}).get("new_line") == 30]
        t.ok(len(rng) == 1 and "```suggestion:-1+0\n    if (total < 0)\n        return -1;\n```"
             in rng[0]["body"], "gitlab: a range's suggestion reaches up to its first line")
        t.eq(sum(1 for d in disc if "position" not in d), 4,
             "gitlab: 4 general discussions for what is not on a line")
        t.ok(disc and all(d.get("position", {}).get("head_sha", head) == head for d in disc),
             "gitlab: head_sha from diff_refs")
        n_disc = len(disc)
        model.reset()
        rc, out, err = run(common + ["--post", "gitlab"], gl_env)
        disc2 = [r for r in gl.requests if r["method"] == "POST" and
                 r["path"].endswith("/discussions")]
        t.ok(rc == 0 and len(disc2) == n_disc, "gitlab re-run: no duplicate discussions")
        t.eq([r["method"] for r in gl.requests if "/notes" in r["path"]], ["POST", "PUT"],
             "gitlab: the summary note is created, then updated in place")
        gsrv.shutdown()
        model.close()
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
