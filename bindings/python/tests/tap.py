#!/usr/bin/env python3
"""Runs the unittest suites in this folder and reports each case as TAP
(meson protocol 'tap'; .ci/summary.py counts the cases).

usage: tap.py [TEST_MODULE_PATTERN]   (default test_*.py)
"""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))


class TapResult(unittest.TestResult):
    def __init__(self):
        super().__init__()
        self.n = 0

    def _line(self, ok, test, extra=""):
        self.n += 1
        print("%s %d - %s%s" % ("ok" if ok else "not ok", self.n, test.id(), extra), flush=True)

    def addSuccess(self, test):
        super().addSuccess(test)
        self._line(True, test)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._line(False, test)
        for l in self._exc_info_to_string(err, test).splitlines():
            print("# " + l)

    def addError(self, test, err):
        super().addError(test, err)
        self._line(False, test)
        for l in self._exc_info_to_string(err, test).splitlines():
            print("# " + l)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._line(True, test, " # SKIP " + reason)

    # TAP: a TODO case that fails is "not ok ... # TODO"; meson reads
    # "ok ... # TODO" as an unexpected pass, which fails the suite.
    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._line(False, test, " # TODO expected failure")

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._line(False, test, " (unexpected success)")


def main():
    pattern = sys.argv[1] if len(sys.argv) > 1 else "test_*.py"
    sys.path.insert(0, HERE)
    suite = unittest.defaultTestLoader.discover(HERE, pattern=pattern, top_level_dir=HERE)
    res = TapResult()
    suite.run(res)
    print("1..%d" % res.n)
    return 0 if res.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
