#!/usr/bin/env python3
"""Adds up TAP results from meson test logs.

usage: summary.py BUILD_DIR|TAP_FILE [...]
Reads BUILD_DIR/meson-logs/testlog.json of each build, or a TAP file (such
as the fuzz.tap that scripts/fuzz.sh writes: one case per fuzz target),
counts every TAP case
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


def count_tap(text, name):
    """(passed, failed, skipped) of the TAP cases in text; a line that is not
    TAP counts as a failure of the test called name."""
    p = f = s = 0
    for l in text.splitlines():
        if not (OK.match(l) or NOT_OK.match(l) or TAP_OTHER.match(l)):
            f += 1
            print("summary: %s printed a line that is not TAP: %r" % (name, l[:80]))
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
    return p, f, s


def main():
    passed = failed = skipped = 0
    for build in sys.argv[1:]:
        if os.path.isfile(build):
            p, f, s = count_tap(open(build, encoding="utf-8", errors="replace").read(), build)
            if p + f + s == 0:
                print("summary: %s has no TAP cases" % build)
                f = 1
            passed += p
            failed += f
            skipped += s
            continue
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
            p, f, s = count_tap(t.get("stdout") or "", "%s (%s)" % (t.get("name"), build))
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
