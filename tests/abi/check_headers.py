#!/usr/bin/env python3
"""ABI gate: every public header compiles on its own, as C11 -pedantic and as
C++, with warnings as errors. Prints TAP.

usage: check_headers.py SOURCE_DIR CC CXX
"""
import os
import subprocess
import sys
import tempfile


def main():
    # The C compiler comes last as a whole command (meson's cc.cmd_array():
    # ["ccache", "cc"] when ccache is in use, which must stay together).
    src, cxx, cc = sys.argv[1], sys.argv[2], sys.argv[3:]
    inc = os.path.join(src, "include")
    headers = sorted(f for f in os.listdir(os.path.join(inc, "agenttools")) if f.endswith(".h"))
    n = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for h in headers:
            for lang, compiler, flags, ext in (
                    ("C11", cc, ["-std=c11", "-pedantic", "-Wall", "-Wextra", "-Werror"], "c"),
                    ("C++", [cxx], ["-std=c++11", "-pedantic", "-Wall", "-Wextra", "-Werror"], "cpp")):
                path = os.path.join(tmp, "t_%s.%s" % (h.replace(".", "_"), ext))
                with open(path, "w") as f:
                    f.write("#include <agenttools/%s>\nint agt_header_test_dummy;\n" % h)
                r = subprocess.run(compiler + flags + ["-I", inc, "-fsyntax-only", path],
                                   capture_output=True, text=True)
                n += 1
                ok = r.returncode == 0
                failed += not ok
                print("%s %d - %s compiles alone as %s" % ("ok" if ok else "not ok", n, h, lang))
                if not ok:
                    for line in (r.stderr or r.stdout).splitlines()[:20]:
                        print("# " + line)
    print("1..%d" % n)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
