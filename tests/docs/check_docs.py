#!/usr/bin/env python3
"""Public docs describe what ships: every file or folder they point at
(markdown links, and backticked paths under the repository's top folders)
exists in the repository, and none cites a document that does not ship
(design notes, reference documents kept outside the repository).

usage: check_docs.py SOURCE_DIR
"""
import glob
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration", "cli"))
from tap import Tap  # noqa: E402

TOP = ("lib", "include", "tests", "examples", "bindings", "docs", "scripts", "bench", "abi",
       ".ci")
# Names of documents that live outside the repository.
OUTSIDE = re.compile(r"\b(TOOLS\.md|ARCHITECTURE\.md|STYLE\.md|DEVELOPERS\.md)|\.\./shared\b|"
                     r"\bshared/(corpus|seeds|design)\b|\bseeds/")
# Placeholders in a path that stands for a family of files (corpus/TARGET/).
PLACEHOLDER = re.compile(r"(?<![A-Za-z])(TARGET|NAME|FILE|DIR|PATH|TOOL|ENGINE|N)(?![a-z])")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
TICK = re.compile(r"`([^`\s]+)`")


def pages(src):
    out = [os.path.join(src, "README.md")]
    out += sorted(glob.glob(os.path.join(src, "docs", "**", "*.md"), recursive=True))
    out += sorted(glob.glob(os.path.join(src, "bindings", "*", "README.md")))
    out += sorted(glob.glob(os.path.join(src, "examples", "**", "*.md"), recursive=True))
    return [p for p in out if os.path.exists(p)]


def exists(src, base, ref):
    ref = ref.split("#", 1)[0].rstrip(".,:;")
    if not ref:
        return True
    for root in (os.path.dirname(base), src):
        cand = os.path.normpath(os.path.join(root, ref))
        if any(ch in ref for ch in "*?[") and glob.glob(cand, recursive=True):
            return True
        if os.path.exists(cand):
            return True
    return False


def main():
    src = sys.argv[1]
    t = Tap()
    for page in pages(src):
        rel = os.path.relpath(page, src)
        text = open(page, encoding="utf-8").read()
        bad_out = sorted(set(m.group(0) for m in OUTSIDE.finditer(text)))
        t.ok(not bad_out, "%s cites nothing outside the repository%s"
             % (rel, "" if not bad_out else " (cites: %s)" % ", ".join(bad_out)))
        missing = []
        for m in LINK.finditer(text):
            ref = m.group(1)
            if re.match(r"^[a-z]+:", ref) or ref.startswith("#"):
                continue
            if not exists(src, page, ref):
                missing.append(ref)
        for m in TICK.finditer(text):
            ref = m.group(1)
            first = ref.split("/", 1)[0]
            if ("/" not in ref or first not in TOP or "<" in ref or "{" in ref
                    or PLACEHOLDER.search(ref)):
                continue
            if not exists(src, page, ref):
                missing.append(ref)
        t.ok(not missing, "%s: every path it names exists%s"
             % (rel, "" if not missing else " (missing: %s)" % ", ".join(sorted(set(missing)))))
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
