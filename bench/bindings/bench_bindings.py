#!/usr/bin/env python3
"""bench-bindings: the per-call cost of agt_session_dispatch from C, from the
Node binding (koffi) and from the Python binding (ctypes), side by side.

Two calls: TodoList (dispatch only) and Shout, a provider written in each
language that upper-cases its text (dispatch plus a callback into it). The
three programs print the first result of each first; they must agree. Then
ROUNDS rounds alternate C, Node and Python (N calls each); the medians per
call are printed, with the binding overhead (binding minus C) and the ratio
of Node's overhead to Python's.

usage: bench_bindings.py SOURCE_DIR BUILD_DIR BENCH_DISPATCH [N ROUNDS]
Needs node and koffi: the node test's cache (BUILD_DIR/tests/bindings/node-cache,
filled by `meson test -C build node`) or NODE_PATH.
"""

import os
import shutil
import statistics
import subprocess
import sys
import tempfile

NODE = r"""
const agt = require(process.argv[1]);
const root = process.argv[2], n = Number(process.argv[4]);
const SHOUT = JSON.parse(process.argv[3]);
const reg = new agt.Registry('chat');
reg.setProvider('Shout', (call) => call.args.text.toUpperCase());
reg.add(SHOUT);
const s = new agt.Session(reg, root);
const out = [];
for (const [tool, args] of [['TodoList', { todos: [{ title: 'bench', status: 'pending' }] }], ['Shout', { text: 'hello' }]]) {
  console.log(tool + ': ' + s.dispatch(tool, args).text);
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) s.dispatch(tool, args);
  out.push(Number(process.hrtime.bigint() - t0) / n);
}
console.log('ns ' + out.map((x) => x.toFixed(1)).join(' '));
s.close(); reg.close();
"""

PY = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import agenttools as agt
root, n, shout = sys.argv[2], int(sys.argv[4]), json.loads(sys.argv[3])
reg = agt.Registry("chat")
reg.set_provider("Shout", lambda call: call.args["text"].upper())
reg.add(shout)
s = agt.Session(reg, root)
out = []
for tool, args in (("TodoList", {"todos": [{"title": "bench", "status": "pending"}]}), ("Shout", {"text": "hello"})):
    print(tool + ": " + s.dispatch(tool, args).text)
    t0 = time.perf_counter_ns()
    for _ in range(n):
        s.dispatch(tool, args)
    out.append((time.perf_counter_ns() - t0) / n)
print("ns " + " ".join("%.1f" % x for x in out))
s.close(); reg.close()
"""

SHOUT = ('{"name":"Shout","plan_task":true,"main_task":true,"access":"read","definition":{"name":"Shout",'
         '"description":"Upper-cases text.","parameters":{"type":"object","properties":{"text":'
         '{"type":"string"}},"required":["text"]}}}')


def run(cmd, env):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    if p.returncode != 0:
        sys.exit("bench-bindings: %s failed: %s" % (cmd[0], p.stderr.strip()))
    lines = p.stdout.strip().splitlines()
    return lines[:-1], [float(x) for x in lines[-1].split()[1:]]


def main():
    src, build, cbench = sys.argv[1:4]
    n = int(sys.argv[4]) if len(sys.argv) > 4 else 20000
    rounds = int(sys.argv[5]) if len(sys.argv) > 5 else 7
    lib = os.path.join(build, "lib", "libagenttools.so.1")
    cache = os.path.join(build, "tests", "bindings", "node-cache", "node_modules")
    env = dict(os.environ, AGENTTOOLS_LIB=lib, PYTHONDONTWRITEBYTECODE="1")
    env["NODE_PATH"] = os.pathsep.join(x for x in (cache, os.environ.get("NODE_PATH", "")) if x)
    root = tempfile.mkdtemp(prefix="agt-bench-bind-")
    try:
        progs = {
            "C": [cbench, root, str(n)],
            "Node": ["node", "-e", NODE, os.path.join(src, "bindings", "node"), root, SHOUT, str(n)],
            "Python": [sys.executable, "-c", PY, os.path.join(src, "bindings", "python"), root, SHOUT, str(n)],
        }
        first = {k: run(v[:-1] + ["1"], env)[0] for k, v in progs.items()}
        if not (first["C"] == first["Node"] == first["Python"]):
            sys.exit("bench-bindings: the outputs differ: %r" % first)
        print("outputs agree: " + " | ".join(first["C"]))
        times = {k: [] for k in progs}
        for _ in range(rounds):
            for k, v in progs.items():
                times[k].append(run(v, env)[1])
    finally:
        shutil.rmtree(root, ignore_errors=True)
    med = {k: [statistics.median(r[i] for r in t) for i in range(2)] for k, t in times.items()}
    print("%d calls x %d alternating rounds; median ns per call" % (n, rounds))
    print("%-26s %10s %10s %10s %14s %14s %8s" % ("call", "C", "Node", "Python", "Node overhead",
                                                  "Py overhead", "Node/Py"))
    for i, name in enumerate(["TodoList (dispatch)", "Shout (dispatch+callback)"]):
        c, nd, py = med["C"][i], med["Node"][i], med["Python"][i]
        print("%-26s %10.0f %10.0f %10.0f %14.0f %14.0f %8.2f" % (name, c, nd, py, nd - c, py - c,
                                                                  (nd - c) / (py - c)))


if __name__ == "__main__":
    main()
