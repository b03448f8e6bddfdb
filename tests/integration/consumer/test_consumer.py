#!/usr/bin/env python3
"""libagenttools used the two ways integrators build against a source tree:
through the uninstalled pkg-config file of a build, and as a meson
subproject. Each consumer program calls the library and prints its version.

usage: test_consumer.py SOURCE_DIR BUILD_DIR CC [subproject]
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "cli"))
from tap import Tap  # noqa: E402

PROGRAM = r"""
#include <agenttools/agenttools.h>
#include <stdio.h>
int main(void)
{
    agt_registry *reg = NULL;
    if (agt_registry_new(&reg) != AGT_OK)
        return 2;
    int rc = agt_registry_load_builtin(reg, "chat");
    printf("%s %d\n", agt_version(), rc);
    agt_registry_free(reg);
    return rc == AGT_OK ? 0 : 3;
}
"""


def project_version(src):
    for line in open(os.path.join(src, "meson.build")):
        line = line.strip()
        if line.startswith("version:"):
            return line.split("'")[1]
    return None


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def uninstalled_pc(t, src, build, cc, tmp):
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(build, "meson-uninstalled"))
    r = run(["pkg-config", "--cflags", "--libs", "agenttools-uninstalled"], env=env)
    if not t.ok(r.returncode == 0, "pkg-config finds agenttools-uninstalled"):
        print("# " + r.stderr.strip().replace("\n", "\n# "))
        return
    c = os.path.join(tmp, "consumer.c")
    with open(c, "w") as f:
        f.write(PROGRAM)
    exe = os.path.join(tmp, "consumer")
    r = run(cc.split() + ["-std=c11", "-Wall", "-Werror", c, "-o", exe] + r.stdout.split())
    if not t.ok(r.returncode == 0, "a consumer compiles and links with its Cflags and Libs"):
        print("# " + r.stderr.strip().replace("\n", "\n# "))
        return
    r = run([exe], env=dict(os.environ, LD_LIBRARY_PATH=os.path.join(build, "lib")))
    t.eq(r.stdout.strip(), "%s 0" % project_version(src), "the consumer runs against the built library")


def subproject(t, src, tmp):
    proj = os.path.join(tmp, "sub")
    os.makedirs(os.path.join(proj, "subprojects"))
    os.symlink(src, os.path.join(proj, "subprojects", "libagenttools"))
    with open(os.path.join(proj, "meson.build"), "w") as f:
        f.write("project('consumer', 'c', default_options: ['c_std=c11'])\n"
                "agt = dependency('agenttools', fallback: ['libagenttools', 'agenttools_dep'])\n"
                "exe = executable('consumer', 'consumer.c', dependencies: agt)\n"
                "test('consumer', exe)\n")
    with open(os.path.join(proj, "consumer.c"), "w") as f:
        f.write(PROGRAM)
    b = os.path.join(proj, "b")
    r = run(["meson", "setup", b, proj, "--wrap-mode=nodownload"])
    if not t.ok(r.returncode == 0, "meson setup with libagenttools as a subproject"):
        print("# " + (r.stdout + r.stderr).strip()[-2000:].replace("\n", "\n# "))
        return
    r = run(["meson", "introspect", "--tests", b])
    names = sorted(x["name"] for x in json.loads(r.stdout)) if r.returncode == 0 else None
    t.eq(names, ["consumer"], "the consumer's build registers only its own tests")
    r = run(["meson", "introspect", "--benchmarks", b])
    benches = json.loads(r.stdout) if r.returncode == 0 else None
    t.eq(benches, [], "and none of the library's benchmarks")
    r = run(["ninja", "-C", b, "consumer"])
    if not t.ok(r.returncode == 0, "the consumer builds against the subproject"):
        print("# " + r.stdout.strip()[-2000:].replace("\n", "\n# "))
        return
    r = run([os.path.join(b, "consumer")])
    t.eq(r.stdout.strip(), "%s 0" % project_version(src), "the consumer runs")


def main():
    src, build, cc = sys.argv[1], sys.argv[2], sys.argv[3]
    t = Tap()
    tmp = tempfile.mkdtemp(prefix="agt-consumer-")
    try:
        uninstalled_pc(t, src, build, cc, tmp)
        if len(sys.argv) > 4 and sys.argv[4] == "subproject":
            subproject(t, src, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
