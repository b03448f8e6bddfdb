"""A tiny TAP writer for the CLI integration tests."""
import sys


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, cond, name):
        self.n += 1
        if not cond:
            self.failed += 1
        print("%sok %d - %s" % ("" if cond else "not ", self.n, name))
        sys.stdout.flush()
        return cond

    def eq(self, got, want, name):
        good = self.ok(got == want, name)
        if not good:
            print("#   got:  %r\n#   want: %r" % (got, want))
        return good

    def skip(self, name, reason):
        self.n += 1
        print("ok %d - %s # SKIP %s" % (self.n, name, reason))
        sys.stdout.flush()

    def done(self):
        print("1..%d" % self.n)
        return 1 if self.failed else 0
