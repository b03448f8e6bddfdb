#!/usr/bin/env python3
"""Extracts fuzz seeds from the C string literals of the unit tests.

usage: extract_seeds.py OUT_DIR SOURCE.c FUNCTION ARG[,ARG...] [SEP]
For every call FUNCTION(...) in SOURCE.c whose arguments ARG (0-based
indexes) are all C string literals (adjacent literals concatenated), writes
one seed file OUT_DIR/<sha1 prefix> holding those arguments joined by SEP
(a Python escape, default "\\0": the fuzz targets' separator). Used once to
fill tests/fuzz/corpus/; the seeds are committed, so the fuzz build does not
need it.
"""
import hashlib
import os
import re
import sys

ESC = {"n": b"\n", "t": b"\t", "r": b"\r", "0": b"\0", "\\": b"\\", '"': b'"',
       "'": b"'", "a": b"\a", "b": b"\b", "f": b"\f", "v": b"\v", "?": b"?"}


def literal(src, i):
    """Parses the literal at src[i] == '"'; returns (bytes, index after)."""
    out = bytearray()
    i += 1
    while src[i] != '"':
        c = src[i]
        if c == "\\":
            n = src[i + 1]
            if n == "x":
                m = re.match(r"[0-9a-fA-F]+", src[i + 2:])
                out.append(int(m.group(0), 16) & 0xFF)
                i += 2 + len(m.group(0))
                continue
            if n in "01234567":
                m = re.match(r"[0-7]{1,3}", src[i + 1:])
                out.append(int(m.group(0), 8) & 0xFF)
                i += 1 + len(m.group(0))
                continue
            if n == "u":
                out += chr(int(src[i + 2:i + 6], 16)).encode()
                i += 6
                continue
            out += ESC.get(n, n.encode())
            i += 2
            continue
        out += c.encode()
        i += 1
    return bytes(out), i + 1


def args_of(src, i):
    """Splits the arguments of the call whose '(' is at src[i]; each argument
    is bytes (string literals only) or None (anything else)."""
    args, cur, depth, only_str = [], bytearray(), 0, True
    other = False
    i += 1
    while True:
        c = src[i]
        if c == '"':
            s, i = literal(src, i)
            cur += s
            continue
        if c == "'":
            j = src.index("'", i + 2 if src[i + 1] == "\\" else i + 1)
            other = True
            i = j + 1
            continue
        if src.startswith("/*", i):
            i = src.index("*/", i) + 2
            continue
        if c in "([{":
            depth += 1
            other = True
        elif c in ")]}":
            if depth == 0:
                args.append(None if other else bytes(cur))
                return args
            depth -= 1
        elif c == "," and depth == 0:
            args.append(None if other else bytes(cur))
            cur, other = bytearray(), False
            i += 1
            continue
        elif not c.isspace():
            other = True
        i += 1


def main():
    out_dir, source, func, idx = sys.argv[1:5]
    sep = sys.argv[5].encode().decode("unicode_escape").encode("latin-1") if len(sys.argv) > 5 else b"\0"
    want = [int(x) for x in idx.split(",")]
    src = open(source, encoding="utf-8", errors="surrogateescape").read()
    os.makedirs(out_dir, exist_ok=True)
    n = 0
    for m in re.finditer(r"\b%s\s*\(" % re.escape(func), src):
        try:
            a = args_of(src, m.end() - 1)
        except (ValueError, IndexError, AttributeError):
            continue
        if any(k >= len(a) or a[k] is None for k in want):
            continue
        data = sep.join(a[k] for k in want)
        if len(data) > 4096:
            continue
        name = hashlib.sha1(data).hexdigest()[:16]
        with open(os.path.join(out_dir, name), "wb") as f:
            f.write(data)
        n += 1
    print("%s: %d seeds from %s %s()" % (out_dir, n, source, func))


if __name__ == "__main__":
    main()
