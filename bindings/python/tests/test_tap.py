"""The TAP lines tap.py writes for each unittest outcome, as meson's TAP
reader (protocol 'tap', mesonbuild/mtest.py TAPParser) and TAP 13 classify
them: an expected failure must be "not ok ... # TODO" (meson: EXPECTEDFAIL),
an unexpected success a plain "not ok" (a failure)."""

import contextlib
import io
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tap  # noqa: E402


class TestTapLines(unittest.TestCase):
    def test_each_outcome(self):
        # defined here, not at module level, so that discovery of this
        # module does not run these cases (one of them fails on purpose)
        class _Inner(unittest.TestCase):
            def test_a_pass(self):
                pass

            @unittest.expectedFailure
            def test_b_expected_failure(self):
                self.assertEqual(1, 2)

            @unittest.expectedFailure
            def test_c_unexpected_success(self):
                pass

            @unittest.skip("not here")
            def test_d_skip(self):
                pass

        out = io.StringIO()
        result = tap.TapResult()
        suite = unittest.TestLoader().loadTestsFromTestCase(_Inner)
        with contextlib.redirect_stdout(out):
            suite.run(result)
        name = __name__ + ".TestTapLines.test_each_outcome.<locals>._Inner."
        self.assertEqual(out.getvalue().splitlines(), [
            "ok 1 - " + name + "test_a_pass",
            "not ok 2 - " + name + "test_b_expected_failure # TODO expected failure",
            "not ok 3 - " + name + "test_c_unexpected_success (unexpected success)",
            "ok 4 - " + name + "test_d_skip # SKIP not here",
        ])


if __name__ == "__main__":
    unittest.main()
