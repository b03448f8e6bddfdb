#!/usr/bin/env python3
"""agt-review's repository configuration: .agenttools/review.json checked
against examples/review/review-config.schema.json (unknown keys named with
the file), its excludes, language, instructions, min_severity and model, and
the review instructions of REVIEW.md or of AGENTS.md's review section as the
model receives them (through the scripted OpenAI-compatible server).

usage: test_review_config.py AGT_REVIEW SCRIPTED_SERVER
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tap import Tap  # noqa: E402

KEY_VARS = ["AGT_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "KIMI_API_KEY", "AGT_MODEL",
            "AGT_BASE_URL", "OPENAI_BASE_URL", "AGT_PROTOCOL"]


def git(repo, *args):
    subprocess.run(["git", "-C", repo, "-c", "user.name=T", "-c", "user.email=t@e"] + list(args),
                   check=True, capture_output=True)


def write(repo, path, text):
    full = os.path.join(repo, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as f:
        f.write(text)


def call(cid, name, args):
    return {"id": cid, "name": name, "arguments": json.dumps(args)}


def turn(*calls):
    return {"content": "", "tool_calls": list(calls), "finish_reason": "tool_calls"}


def main():
    exe, server = sys.argv[1], sys.argv[2]
    t = Tap()
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if k not in KEY_VARS}
        env["XDG_CONFIG_HOME"] = os.path.join(tmp, "cfg")

        def run(args, cwd, **extra):
            e = dict(env)
            e.update(extra)
            p = subprocess.run([exe] + args, cwd=cwd, capture_output=True, text=True, env=e,
                               timeout=120)
            return p.returncode, p.stdout, p.stderr

        repo = os.path.join(tmp, "repo")
        os.makedirs(repo)
        git(repo, "init", "-q")
        write(repo, "src/a.c", "int a;\n")
        write(repo, "docs/guide.md", "old\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "one")
        write(repo, "src/a.c", "int a;\nint b = a / 0;\n")
        write(repo, "docs/guide.md", "new\n")

        def config(doc):
            write(repo, ".agenttools/review.json", json.dumps(doc) if isinstance(doc, dict)
                  else doc)

        # no config: both files reviewed
        rc, out, err = run(["--preview", "--format", "json"], repo)
        t.eq(sorted((f["path"], f["review"]) for f in json.loads(out)["files"]),
             [("docs/guide.md", True), ("src/a.c", True)], "without a config: both files")
        t.ok("settings from" not in err, "without a config: no settings line")

        config({"exclude": ["docs/"], "language": "German", "min_severity": "high",
                "instructions": "Flag every division."})
        rc, out, err = run(["--preview", "--format", "json"], repo)
        files = {f["path"]: f["skip_reason"] for f in json.loads(out)["files"]} if rc == 0 else {}
        # (the untracked config file is part of the working tree's change)
        t.eq(files, {"docs/guide.md": "excluded by .agenttools/review.json: docs/",
                     ".agenttools/review.json": None, "src/a.c": None},
             "config exclude: the file skipped, the reason names it")
        t.ok("agt-review: settings from .agenttools/review.json\n" in err,
             "the settings file is named on stderr")
        rc, out, err = run(["--preview", "--format", "json", "--exclude", "src/*"], repo)
        files = {f["path"]: f["skip_reason"] for f in json.loads(out)["files"]} if rc == 0 else {}
        t.eq(files, {"docs/guide.md": "excluded by .agenttools/review.json: docs/",
                     ".agenttools/review.json": None, "src/a.c": "excluded by --exclude src/*"},
             "--exclude adds to the config's excludes")

        bad = [
            ({"exlude": ["x"]}, 'agt-review: .agenttools/review.json: unknown key "exlude" at '
                                'the top level (allowed: $schema, exclude, language, '),
            ({"min_severity": "urgent"},
             "agt-review: .agenttools/review.json: at /min_severity: "),
            ({"exclude": "docs/"}, "agt-review: .agenttools/review.json: at /exclude: "),
            ('{"exclude": [', "agt-review: .agenttools/review.json: line 1: "),
            ({"instructions_file": "../outside.md"},
             'agt-review: .agenttools/review.json: "instructions_file" must be a path inside '
             'the repository'),
            ({"instructions_file": "nope.md"},
             'agt-review: nope.md ("instructions_file" of .agenttools/review.json): no such '
             'file'),
        ]
        for doc, want in bad:
            config(doc)
            rc, out, err = run(["--preview"], repo)
            t.ok(rc == 1 and err.startswith(want) and err.count("\n") == 1 and out == "",
                 "bad config %s: exit 1, %r" % (json.dumps(doc), want))
            if not (rc == 1 and err.startswith(want)):
                print("#   got: %r %r" % (rc, err))

        # model: used with a key, alone it does not turn the preview into a review
        config({"model": "repo-model"})
        rc, out, err = run(["--show-config"], repo, OPENAI_API_KEY="sk-x")
        t.eq(out.strip(), "repo-model at https://api.openai.com/v1 (openai protocol, key from "
                          "OPENAI_API_KEY)", "config model with an environment key")
        rc, out, err = run(["--show-config", "--model", "cli-model"], repo, OPENAI_API_KEY="sk-x")
        t.ok(out.startswith("cli-model at "), "--model beats the config's model")
        rc, out, err = run([], repo)
        t.ok(rc == 0 and "no model configured" in err, "config model without a key: preview")

        # a review through the scripted server: what the model is told
        script = os.path.join(tmp, "s.jsonl")
        comments = [
            {"content": "Division by zero.", "existing_code": "int b = a / 0;",
             "category": "bug", "severity": "critical"},
            {"content": "Name b better.", "existing_code": "int b = a / 0;",
             "category": "style", "severity": "low"},
        ]
        with open(script, "w") as f:
            for x in [turn(call("1", "code_comment", {"comments": comments})),
                      turn(call("2", "task_done", {}))] * 3:
                f.write(json.dumps(x) + "\n")
        srv = subprocess.Popen([sys.executable, server, script], stdout=subprocess.PIPE,
                               stdin=subprocess.PIPE, text=True)
        port = srv.stdout.readline().strip()
        model = ["--model", "m", "--base-url", "http://127.0.0.1:%s/v1" % port, "--format", "json"]

        def reset():
            subprocess.run([sys.executable, "-c", "import urllib.request as u; u.urlopen(u.Request("
                            "'http://127.0.0.1:%s/reset', data=b'', method='POST'))" % port],
                           check=True)
            if os.path.exists(script + ".requests"):
                os.remove(script + ".requests")

        def requests():
            with open(script + ".requests") as f:
                return [json.loads(ln) for ln in f if ln.strip()]

        def system_of(r):
            return next(m["content"] for m in r["messages"] if m["role"] == "system")

        def user_of(r):
            return next(m["content"] for m in r["messages"] if m["role"] == "user")

        review_md = "# Review rules\n\nPrefer early returns.\n\n\n"
        write(repo, "REVIEW.md", review_md)
        config({"exclude": ["docs/", "REVIEW.md", ".agenttools/"], "language": "German",
                "min_severity": "high", "instructions": "Flag every division."})
        reset()
        rc, out, err = run(model, repo)
        res = json.loads(out) if rc == 0 else {"comments": []}
        t.eq(rc, 0, "review with the config exits 0" + ("" if rc == 0 else ": " + err))
        t.eq([(c["content"], c["severity"]) for c in res["comments"]],
             [("Division by zero.", "critical")], "min_severity high drops the low comment")
        reqs = requests()
        sysmsg = system_of(reqs[0]) if reqs else ""
        t.ok(sysmsg.endswith("\n\nThe repository gives these review instructions (from "
                             ".agenttools/review.json and REVIEW.md). Follow them where they do "
                             "not contradict the rules above:\n\nFlag every division.\n\n"
                             "# Review rules\n\nPrefer early returns."),
             "the model gets the config's instructions, then REVIEW.md's (trailing blank lines "
             "dropped)")
        t.ok(reqs and "Write the comments in German." in user_of(reqs[0]),
             "the config's language reaches the prompt")
        t.ok("agt-review: review instructions from .agenttools/review.json and REVIEW.md "
             "(59 bytes)\n" in err, "stderr names where the instructions come from, and their size")

        reset()
        rc, out, err = run(model + ["--language", "French"], repo)
        reqs = requests()
        t.ok(rc == 0 and reqs and "Write the comments in French." in user_of(reqs[0]),
             "--language beats the config's")

        # AGENTS.md's review section when there is no REVIEW.md
        os.remove(os.path.join(repo, "REVIEW.md"))
        agents = ("# Agents\n\nBuild with meson.\n\n## Code review\n\nCheck the error paths.\n"
                  "```\n# not a heading: inside a fence\n```\n### Details\n\nNo magic numbers.\n"
                  "\n## Testing\n\nRun meson test.\n")
        write(repo, "AGENTS.md", agents)
        config({"exclude": ["docs/", "AGENTS.md", ".agenttools/"]})
        reset()
        rc, out, err = run(model, repo)
        reqs = requests()
        want_section = ("## Code review\n\nCheck the error paths.\n```\n# not a heading: inside "
                        "a fence\n```\n### Details\n\nNo magic numbers.")
        t.ok(rc == 0 and reqs and system_of(reqs[0]).endswith(
             "(from the review section of AGENTS.md). Follow them where they do not contradict "
             "the rules above:\n\n" + want_section),
             "AGENTS.md: from the heading with 'review' to the next heading of its level")
        t.ok(reqs and "Run meson test." not in system_of(reqs[0]) and
             "Build with meson." not in system_of(reqs[0]), "AGENTS.md: the other sections left out")

        # instructions_file replaces the REVIEW.md / AGENTS.md look-up
        write(repo, "docs/review-guide.md", "Guide: keep functions short.\n")
        config({"exclude": ["docs/", "AGENTS.md", ".agenttools/"],
                "instructions_file": "docs/review-guide.md"})
        reset()
        rc, out, err = run(model, repo)
        reqs = requests()
        t.ok(rc == 0 and reqs and system_of(reqs[0]).endswith(
             "(from docs/review-guide.md). Follow them where they do not contradict the rules "
             "above:\n\nGuide: keep functions short."), "instructions_file is read instead")
        srv.stdin.close()
        srv.wait(timeout=10)

        # a subfolder as --repo finds the top's config
        config({"exclude": ["src/"]})
        rc, out, err = run(["--repo", os.path.join(repo, "src"), "--preview", "--format", "json"],
                           tmp)
        files = {f["path"]: f["skip_reason"] for f in json.loads(out)["files"]} if rc == 0 else {}
        t.eq(files.get("src/a.c"), "excluded by .agenttools/review.json: src/",
             "--repo SUBDIR reads the config at the top of the working tree")
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
