#!/usr/bin/env python3
"""The README's Python steps as a user takes them: a venv, pip install of
bindings/python, then `import agenttools` with no AGENTTOOLS_LIB. The
installed copy once raised ImportError unless AGENTTOOLS_LIB was set; it
now finds the library built in the tree it was installed from (the build
directory pip saw in AGT_BUILD_DIR, or <tree>/build). A failed lookup names
every place it tried.

usage: test_venv.py SOURCE_DIR BUILD_DIR
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration", "cli"))
from tap import Tap  # noqa: E402


def main():
    src, build = sys.argv[1], sys.argv[2]
    t = Tap()
    tmp = tempfile.mkdtemp(prefix="agt-venv-")
    try:
        venv = os.path.join(tmp, "venv")
        r = subprocess.run([sys.executable, "-m", "venv", venv], capture_output=True, text=True)
        if r.returncode != 0:
            print("ok 1 # SKIP python3 -m venv is not available: %s" % r.stderr.strip()[:200])
            print("1..1")
            return 0
        py = os.path.join(venv, "bin", "python")
        env = {k: v for k, v in os.environ.items()
               if k not in ("AGENTTOOLS_LIB", "AGT_BUILD_DIR", "PYTHONPATH", "LD_LIBRARY_PATH")}
        r = subprocess.run([py, "-m", "pip", "install", "-q", "--no-build-isolation",
                            "--no-index", os.path.join(src, "bindings", "python")],
                           capture_output=True, text=True, cwd=tmp,
                           env=dict(env, AGT_BUILD_DIR=build))
        if not t.ok(r.returncode == 0, "pip install bindings/python into a venv (offline)"):
            print("# " + (r.stdout + r.stderr).strip()[-1500:].replace("\n", "\n# "))
            return t.done()
        probe = ("import agenttools, os; print(agenttools.version()); "
                 "print(os.path.realpath(agenttools._lib.lib.path))")
        r = subprocess.run([py, "-c", probe], capture_output=True, text=True, cwd=tmp, env=env)
        lines = r.stdout.splitlines()
        t.eq((r.returncode, lines[:1]), (0, ["1.0.0"]),
             "import agenttools works without AGENTTOOLS_LIB" +
             ("" if r.returncode == 0 else ": " + r.stderr.strip()[-300:]))
        want = os.path.realpath(os.path.join(build, "lib", "libagenttools.so.1"))
        t.eq(lines[1:2], [want], "it loaded the library of the build it was installed from")
        # an installed copy whose tree and build are gone: the error says what was tried
        site = subprocess.run([py, "-c", "import agenttools, os; "
                               "print(os.path.dirname(agenttools.__file__))"],
                              capture_output=True, text=True, cwd=tmp, env=env).stdout.strip()
        t.ok(os.path.exists(os.path.join(site, "py.typed")),
             "the installed package carries the py.typed marker")
        with open(os.path.join(site, "_origin.py"), "w") as f:
            f.write("SOURCE_DIR = None\nBUILD_DIR = %r\n" % os.path.join(tmp, "gone"))
        r = subprocess.run([py, "-c", "import agenttools"], capture_output=True, text=True,
                           cwd=tmp, env=dict(env, LD_LIBRARY_PATH=os.path.join(tmp, "none"),
                                             PKG_CONFIG_PATH=os.path.join(tmp, "none")))
        installed = subprocess.run(["pkg-config", "--exists", "agenttools"]).returncode == 0 \
            if shutil.which("pkg-config") else False
        if installed or os.path.exists("/usr/local/lib/libagenttools.so.1") or \
                os.path.exists("/usr/lib/libagenttools.so.1"):
            print("ok %d # SKIP libagenttools is installed on this machine" % (t.n + 1))
            t.n += 1
        else:
            err = r.stderr
            t.ok(r.returncode != 0 and "libagenttools not found" in err and
                 os.path.join(tmp, "gone", "lib", "libagenttools.so.1") + ": no such file" in err
                 and "libagenttools.so.1:" in err,
                 "without a library the ImportError names each place tried")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
