#!/usr/bin/env python3
"""Prints the byte rank table of lib/search/literal.c.

The literal finder compares the two rarest bytes of a needle first; which
bytes are rare comes from this table: each byte's position (0 = rarest) in
the byte counts of a body of source code and text. The table in literal.c
was made with

    bench/search/byte_ranks.py /usr/lib/python3.11 /usr/share/perl

(Python's standard library and Perl's: code, comments and documentation
in two languages, and neither the C headers nor the documents the Grep
benchmark searches, so the table is not fitted to the benchmark.)

usage: byte_ranks.py DIR...
"""
import os
import sys


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    counts = [0] * 256
    for top in sys.argv[1:]:
        for dirpath, _, names in os.walk(top):
            for name in names:
                if not name.endswith((".py", ".pm", ".pod", ".pl", ".txt", ".rst")):
                    continue
                try:
                    with open(os.path.join(dirpath, name), "rb") as f:
                        data = f.read()
                except OSError:
                    continue
                if b"\0" in data[:8192]:
                    continue
                for b, c in enumerate(data.count(bytes([b])) for b in range(256)):
                    counts[b] += c
    order = sorted(range(256), key=lambda b: (counts[b], b))
    rank = [0] * 256
    for r, b in enumerate(order):
        rank[b] = r
    print("static const unsigned char byte_rank[256] = {")
    for i in range(0, 256, 16):
        print("    " + ", ".join("%3d" % r for r in rank[i:i + 16]) + ",")
    print("};")


if __name__ == "__main__":
    main()
