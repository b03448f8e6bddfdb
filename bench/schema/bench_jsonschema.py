#!/usr/bin/python3
"""Validations per second with python3-jsonschema (Debian) on the cases the C
benchmark wrote: [{"schema": {...}, "instances": ["<json text>", ...]}].
Each validation parses the instance text and asks is_valid(), like the C side;
with a third argument "parsed" the instances are parsed once beforehand.
Prints: rate <validations per second>"""
import json
import sys
import time

import jsonschema


def main():
    cases = json.load(open(sys.argv[1]))
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
    parsed = len(sys.argv) > 3 and sys.argv[3] == "parsed"
    work = []
    for c in cases:
        cls = jsonschema.validators.validator_for(c["schema"], default=jsonschema.Draft202012Validator)
        v = cls(c["schema"])
        for text in c["instances"]:
            work.append((v, json.loads(text) if parsed else text))
    n = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        for v, text in work:
            v.is_valid(text if parsed else json.loads(text))
        n += len(work)
    elapsed = time.perf_counter() - start
    print("rate %.1f" % (n / elapsed))


if __name__ == "__main__":
    main()
