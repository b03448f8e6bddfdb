#!/usr/bin/env python3
"""Endpoint configuration of the example CLIs: command line, config file
providers and environment keys, resolved with --show-config; one-line errors
for bad or missing settings; keys never printed.

usage: test_config.py AGT_REVIEW AGT_CHAT
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tap import Tap  # noqa: E402

SECRETS = ["sk-open-SECRET1", "sk-ant-SECRET2", "kimi-SECRET3", "agt-SECRET4", "mine-SECRET5",
           "file-SECRET6"]
KEY_VARS = ["AGT_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "KIMI_API_KEY",
            "AGT_BASE_URL", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "KIMI_BASE_URL",
            "AGT_MODEL", "AGT_PROTOCOL", "MYKEY"]


class Runner:
    def __init__(self, exe, cfg_home, cwd):
        self.exe = exe
        self.cfg_home = cfg_home
        self.cwd = cwd
        self.outputs = []

    def __call__(self, args, **env):
        e = {k: v for k, v in os.environ.items() if k not in KEY_VARS}
        e["XDG_CONFIG_HOME"] = self.cfg_home
        e.update(env)
        p = subprocess.run([self.exe] + args, capture_output=True, text=True, env=e,
                           cwd=self.cwd, timeout=60)
        self.outputs.append(p.stdout + p.stderr)
        return p.returncode, p.stdout.strip(), p.stderr.strip()


def main():
    review, chat = sys.argv[1], sys.argv[2]
    t = Tap()
    with tempfile.TemporaryDirectory() as tmp:
        repo = os.path.join(tmp, "repo")
        os.makedirs(repo)
        subprocess.run(["git", "init", "-q", repo], check=True)
        with open(os.path.join(repo, "a.txt"), "w") as f:
            f.write("one\n")
        subprocess.run(["git", "-C", repo, "add", "a.txt"], check=True)
        subprocess.run(["git", "-C", repo, "-c", "user.name=T", "-c", "user.email=t@e", "commit",
                        "-q", "-m", "one"], check=True)
        with open(os.path.join(repo, "a.txt"), "w") as f:
            f.write("one\ntwo\n")
        cfg_home = os.path.join(tmp, "cfg")
        os.makedirs(os.path.join(cfg_home, "agenttools"))
        r = Runner(review, cfg_home, repo)
        c = Runner(chat, cfg_home, repo)

        rc, out, err = r([])
        t.ok(rc == 0 and "modified" in out and "no model configured" in err,
             "no settings: preview and how to connect a model")
        rc, out, err = r([], OPENAI_API_KEY=SECRETS[0])
        t.ok(rc == 0 and "no model configured" in err, "a key alone is not a model: preview")

        show = ["--show-config"]
        rc, out, err = r(show + ["--model", "gpt-x"], OPENAI_API_KEY=SECRETS[0])
        t.eq((rc, out), (0, "gpt-x at https://api.openai.com/v1 (openai protocol, key from "
                            "OPENAI_API_KEY)"), "OPENAI_API_KEY with its default base URL")
        rc, out, err = r(show + ["--model", "claude-x"], ANTHROPIC_API_KEY=SECRETS[1])
        t.eq(out, "claude-x at https://api.anthropic.com/v1 (anthropic protocol, key from "
                  "ANTHROPIC_API_KEY)", "ANTHROPIC_API_KEY selects the anthropic protocol")
        rc, out, err = r(show + ["--model", "kimi-k2"], KIMI_API_KEY=SECRETS[2],
                         KIMI_BASE_URL="https://kimi.example/v1")
        t.eq(out, "kimi-k2 at https://kimi.example/v1 (openai protocol, key from KIMI_API_KEY)",
             "KIMI_API_KEY with KIMI_BASE_URL")
        rc, out, err = r(show, AGT_API_KEY=SECRETS[3], OPENAI_API_KEY=SECRETS[0],
                         AGT_MODEL="m", AGT_BASE_URL="https://agt.example/v1")
        t.eq(out, "m at https://agt.example/v1 (openai protocol, key from AGT_API_KEY)",
             "AGT_API_KEY wins over the vendor keys; AGT_MODEL and AGT_BASE_URL")
        rc, out, err = r(show + ["--model", "m", "--protocol", "anthropic"],
                         OPENAI_API_KEY=SECRETS[0])
        t.ok(rc == 1 and err.startswith("agt-review: no API key for https://api.anthropic.com/v1"),
             "--protocol anthropic skips OPENAI_API_KEY: missing key named")
        rc, out, err = r(show + ["--model", "m", "--base-url", "http://127.0.0.1:8080/v1"])
        t.eq(out, "m at http://127.0.0.1:8080/v1 (openai protocol, no key)",
             "a local server needs no key")
        rc, out, err = r(show + ["--model", "m"])
        t.ok(rc == 1 and "no API key" in err and "AGT_API_KEY" in err and "\n" not in err,
             "missing key: one line saying how to set it")
        rc, out, err = r(show + ["--model", "m", "--protocol", "grpc"])
        t.eq((rc, err), (1, 'agt-review: unknown protocol "grpc": use --protocol openai or '
                            '--protocol anthropic'), "bad protocol named")
        rc, out, err = r(show + ["--model", "m", "--base-url", "ftp://x"],
                         OPENAI_API_KEY=SECRETS[0])
        t.ok(rc == 1 and "ftp://x" in err and "http://" in err, "bad base URL named")
        rc, out, err = r(show + ["--model"])
        t.eq((rc, err), (2, "agt-review: --model needs a value"), "--model without a value")
        rc, out, err = r(show + ["--model", "replay:/x.jsonl"])
        t.eq(out, "replay model /x.jsonl", "replay:FILE needs no key")

        cfg = {"default": "work", "providers": {
            "work": {"base_url": "https://llm.example/v1", "model": "w1", "api_key_env": "MYKEY"},
            "claude": {"protocol": "anthropic", "model": "c1", "api_key": SECRETS[5]},
            "nomodel": {"base_url": "http://localhost:1/v1"}}}
        with open(os.path.join(cfg_home, "agenttools", "config.json"), "w") as f:
            json.dump(cfg, f)
        rc, out, err = r(show, MYKEY=SECRETS[4])
        t.eq(out, "w1 at https://llm.example/v1 (openai protocol, key from MYKEY, provider work)",
             "config file: the default provider, key from its api_key_env")
        rc, out, err = r(show)
        t.ok(rc == 1 and "$MYKEY" in err and "not set" in err,
             "api_key_env naming an unset variable: said so")
        rc, out, err = r(show + ["--provider", "claude"])
        t.eq(out, "c1 at https://api.anthropic.com/v1 (anthropic protocol, key from config file, "
                  "provider claude)", "--provider picks an entry; protocol from the file")
        rc, out, err = r(show + ["--provider", "claude", "--model", "c2"])
        t.ok(out.startswith("c2 at"), "the command line beats the config file")
        rc, out, err = r(show + ["--provider", "nomodel"])
        t.ok(rc == 1 and 'add "model" to provider "nomodel"' in err, "provider without a model")
        def cfg_file(name, doc):
            p = os.path.join(tmp, name)
            with open(p, "w") as f:
                json.dump(doc, f)
            return p

        # The file is checked against examples/common/cli-config.schema.json.
        p = cfg_file("typo.json", {"providers": {"work": {"modle": "w1"}}})
        rc, out, err = r(show + ["--config", p])
        t.ok(rc == 1 and err.startswith('agt-review: config file %s: unknown key "modle" in '
                                        '/providers/work (allowed: base_url, model, ' % p)
             and "\n" not in err, "a misspelt provider key is an error naming the key and file")
        p = cfg_file("typo2.json", {"defualt": "work", "providers": {}})
        rc, out, err = r(show + ["--config", p])
        t.ok(rc == 1 and err.startswith('agt-review: config file %s: unknown key "defualt" at '
                                        'the top level (allowed: default, providers, '
                                        'permissions)' % p),
             "a misspelt top-level key is an error naming it")
        p = cfg_file("type.json", {"providers": {"bad": {"model": 7}}})
        rc, out, err = r(show + ["--config", p, "--provider", "bad"])
        t.ok(rc == 1 and err.startswith("agt-review: config file %s: at /providers/bad/model: "
                                        % p) and "string" in err,
             "provider field of the wrong type: its place named")
        p = cfg_file("type2.json", {"providers": {"bad": {"model": "m", "max_tokens": 0}}})
        rc, out, err = r(show + ["--config", p, "--provider", "bad"])
        t.ok(rc == 1 and "at /providers/bad/max_tokens: " in err, "max_tokens 0 refused")
        rc, out, err = c(show + ["--config", cfg_file("typo3.json", {"providers": {"w": {
            "model": "m", "heders": {}}}})])
        t.ok(rc == 1 and err.startswith("agt-chat: config file ") and '"heders"' in err,
             "agt-chat checks the file the same way")
        rc, out, err = r(show + ["--provider", "nope"])
        t.ok(rc == 1 and 'provider "nope" is not defined' in err, "unknown provider named")
        bad = os.path.join(tmp, "bad.json")
        with open(bad, "w") as f:
            f.write('{"providers": {,}}')
        rc, out, err = r(show + ["--config", bad])
        t.ok(rc == 1 and "bad.json: line 1" in err, "malformed config file: file and line")
        rc, out, err = r(show + ["--config", os.path.join(tmp, "missing.json")])
        t.ok(rc == 1 and "does not exist" in err, "--config naming a missing file")

        rc, out, err = c(show, MYKEY=SECRETS[4])
        t.eq(out, "w1 at https://llm.example/v1 (openai protocol, key from MYKEY, provider work)",
             "agt-chat resolves the same settings")
        os.remove(os.path.join(cfg_home, "agenttools", "config.json"))
        rc, out, err = c([])
        t.ok(rc == 1 and "no model configured" in err, "agt-chat without a model: says how")

        # max_tokens, extra_body and headers of a provider reach the request.
        here = os.path.dirname(os.path.abspath(__file__))
        script = os.path.join(tmp, "s.jsonl")
        with open(script, "w") as f:
            f.write(json.dumps({"content": "", "tool_calls": [
                {"id": "1", "name": "task_done", "arguments": "{}"}],
                "finish_reason": "tool_calls"}) + "\n")
        srv = subprocess.Popen([sys.executable, os.path.join(here, "scripted_server.py"), script],
                               stdout=subprocess.PIPE, stdin=subprocess.PIPE, text=True)
        port = srv.stdout.readline().strip()
        p = cfg_file("req.json", {"providers": {"loc": {
            "base_url": "http://127.0.0.1:%s/v1" % port, "model": "m1", "max_tokens": 512,
            "max_tokens_field": "max_completion_tokens",
            "extra_body": {"temperature": 0.5, "seed": 7},
            "headers": {"X-Team": "tools", "OpenAI-Organization": "org-1"}}}})
        rc, out, err = r(show + ["--config", p, "--provider", "loc"])
        t.eq(out, "m1 at http://127.0.0.1:%s/v1 (openai protocol, no key, provider loc, "
                  "max_completion_tokens 512, extra body fields, extra headers)" % port,
             "--show-config names the request settings (not the header values)")
        rc, out, err = r(["--config", p, "--provider", "loc", "--commit", "HEAD",
                          "--format", "json"])
        srv.stdin.close()
        srv.wait(timeout=10)
        t.eq(rc, 0, "a review with the provider's request settings" + ("" if rc == 0 else err))
        with open(script + ".requests") as f:
            body = json.loads(f.readline())
        with open(script + ".headers") as f:
            hdrs = json.loads(f.readline())
        t.eq((body.get("max_completion_tokens"), body.get("max_tokens"), body.get("temperature"),
              body.get("seed"), body.get("model")), (512, None, 0.5, 7, "m1"),
             "max_tokens (in its field) and extra_body fields in the request body")
        t.eq((hdrs.get("x-team"), hdrs.get("openai-organization")), ("tools", "org-1"),
             "the provider's headers sent")

        # A real request with a key to an endpoint that refuses the connection:
        # the error and the progress lines must not show the key.
        rc, out, err = r(["--commit", "HEAD", "--model", "m", "--base-url",
                          "http://127.0.0.1:9/v1"], AGT_API_KEY=SECRETS[3])
        t.ok(rc == 1 and "key from AGT_API_KEY" in err and "127.0.0.1:9" in err,
             "an unreachable endpoint: exit 1 with the reason")
        leaked = [s for s in SECRETS for o in r.outputs + c.outputs if s in o]
        t.eq(leaked, [], "no key appears in any output")
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
