#!/usr/bin/env python3
"""Adds up TAP results from meson test logs.

usage: summary.py BUILD_DIR [BUILD_DIR ...]
Reads BUILD_DIR/meson-logs/testlog.json of each build, counts every TAP case
("ok", "not ok", "# SKIP", "# TODO" — skipped and TODO cases count as skipped), counts a failed test that printed no failing case
as one failure, and prints the closing line "N passed, N failed, N skipped".
Exit status 1 when anything failed or no test ran.
"""
import json
import os
import re
import sys

OK = re.compile(r"^ok\b")
NOT_OK = re.compile(r"^not ok\b")
SKIP = re.compile(r"#\s*SKIP", re.I)
# What a TAP 13 stream may hold besides test lines; anything else (a check
# name that spilled a multi-line text, stray prints) makes meson warn
# "Unknown TAP output lines" and hides what comes after it, so it fails.
TAP_OTHER = re.compile(r"^(#|1\.\.\d+|TAP version \d+|Bail out!|\s|$)")
TODO = re.compile(r"#\s*TODO", re.I)


def main():
    passed = failed = skipped = 0
    for build in sys.argv[1:]:
        path = os.path.join(build, "meson-logs", "testlog.json")
        if not os.path.exists(path):
            print("summary: %s has no test log" % build)
            failed += 1
            continue
        for line in open(path, encoding="utf-8", errors="replace"):
            line = line.strip()
            if not line:
                continue
            t = json.loads(line)
            out = t.get("stdout") or ""
            p = f = s = 0
            tap = t.get("protocol", "tap") == "tap"
            for l in out.splitlines():
                if tap and not (OK.match(l) or NOT_OK.match(l) or TAP_OTHER.match(l)):
                    f += 1
                    print("summary: %s (%s) printed a line that is not TAP: %r"
                          % (t.get("name"), build, l[:80]))
                elif NOT_OK.match(l):
                    if TODO.search(l):
                        s += 1  # TAP: a known, listed gap, not a failure
                    else:
                        f += 1
                elif OK.match(l):
                    if SKIP.search(l):
                        s += 1
                    else:
                        p += 1
            ok = t.get("result") in ("OK", "EXPECTEDFAIL", "SKIP")
            if not ok and f == 0:
                f = 1
                print("summary: %s (%s) failed: %s" % (t.get("name"), build, t.get("result")))
            if p + f + s == 0 and ok:
                p = 1  # a test that speaks no TAP and passed counts once
            passed += p
            failed += f
            skipped += s
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 1 if failed or passed == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
