#!/usr/bin/env python3
"""ABI gate: the exported dynamic symbols of libagenttools.so, the AGT_EXTERN
declarations of the public headers and the linker version script must be the
same set. Prints TAP.

usage: check_symbols.py SOURCE_DIR SHARED_LIBRARY
"""
import os
import re
import subprocess
import sys

DECL = re.compile(r"AGT_EXTERN\b[^;{]*?\b(agt_[A-Za-z0-9_]+)\s*\(", re.S)


def header_symbols(src):
    names = set()
    inc = os.path.join(src, "include", "agenttools")
    for f in sorted(os.listdir(inc)):
        if f.endswith(".h"):
            text = open(os.path.join(inc, f), encoding="utf-8").read()
            text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
            text = text.replace("#define AGT_EXTERN", "")
            names.update(DECL.findall(text))
    return names


def map_symbols(src):
    text = open(os.path.join(src, "lib", "libagenttools.map"), encoding="utf-8").read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    names = set()
    for block in re.findall(r"global:(.*?)(?:local:|\})", text, re.S):
        names.update(re.findall(r"\b(agt_[A-Za-z0-9_]+)\s*;", block))
    return names


def exported_symbols(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True,
                         capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] in "TtWwDdBbRrVv":
            name = parts[2].split("@")[0]
            if name.startswith("AGENTTOOLS_"):
                continue
            names.add(name)
    return names


def main():
    src, lib = sys.argv[1], sys.argv[2]
    h, m, e = header_symbols(src), map_symbols(src), exported_symbols(lib)
    n = 0
    failed = 0

    def check(ok, name, extra=None):
        nonlocal n, failed
        n += 1
        print(("ok" if ok else "not ok"), n, "-", name)
        if not ok:
            failed += 1
            if extra:
                print("# " + extra)

    check(len(h) > 0, "headers declare AGT_EXTERN functions (%d)" % len(h))
    check(h == m, "headers == version script",
          "only in headers: %s; only in map: %s" % (sorted(h - m), sorted(m - h)))
    check(e == m, "exported == version script",
          "exported but not in map: %s; in map but not exported: %s"
          % (sorted(e - m), sorted(m - e)))
    bad = sorted(x for x in e if not x.startswith("agt_"))
    check(not bad, "every export has the agt_ prefix", "leaked: %s" % bad)
    vers = subprocess.run(["objdump", "-T", lib], check=True, capture_output=True,
                          text=True).stdout
    unversioned = [l.split()[-1] for l in vers.splitlines()
                   if " agt_" in l and "AGENTTOOLS_" not in l]
    check(not unversioned, "every export carries a version node",
          "unversioned: %s" % unversioned)
    soname = subprocess.run(["objdump", "-p", lib], check=True, capture_output=True,
                            text=True).stdout
    check("SONAME               libagenttools.so.1" in soname, "SONAME is libagenttools.so.1")
    print("1..%d" % n)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
