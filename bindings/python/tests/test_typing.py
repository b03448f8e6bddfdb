"""Type hints and docstrings of the public API (issue 21): every public
function, class, method and property of the agenttools package has a
docstring that names its parameters and says what it returns, and full
annotations; the declarations the package makes for type checkers (the
enumerations, error classes and AGT_* constants built at import time)
match what import builds; mypy, when installed, finds no error in the
package and catches wrong uses of it.
"""

import ast
import enum
import inspect
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PKG = os.path.normpath(os.path.join(HERE, ".."))
sys.path.insert(0, PKG)

import agenttools as agt  # noqa: E402
from agenttools import _cdecls  # noqa: E402

# dunder methods a user calls (through with, len(), repr(), the constructor)
DUNDERS = {"__init__", "__enter__", "__exit__", "__len__", "__repr__"}


def _ours(obj):
    return (getattr(obj, "__module__", "") or "").startswith("agenttools")


def public_callables():
    """(qualified name, function) of every public function, method and
    property accessor the package defines."""
    out = []
    names = list(agt.__all__) + sorted(n for n in vars(agt) if not n.startswith("_")
                                       and n not in agt.__all__)
    for name in names:
        obj = getattr(agt, name)
        if inspect.isfunction(obj) and _ours(obj):
            out.append((name, obj))
        elif inspect.isclass(obj) and _ours(obj) and not issubclass(obj, enum.Enum):
            seen = set()
            for klass in obj.__mro__:
                if not _ours(klass):
                    continue
                for attr, value in vars(klass).items():
                    if attr in seen or (attr.startswith("_") and attr not in DUNDERS):
                        continue
                    seen.add(attr)
                    q = "%s.%s" % (name, attr)
                    if isinstance(value, property):
                        for role, fn in (("get", value.fget), ("set", value.fset)):
                            if fn is not None:
                                out.append(("%s (%s)" % (q, role), fn))
                    elif isinstance(value, (staticmethod, classmethod)):
                        out.append((q, value.__func__))
                    elif inspect.isfunction(value):
                        out.append((q, value))
    return out


class TestDocsAndHints(unittest.TestCase):
    def test_walk_finds_the_api(self):
        names = {q for q, _ in public_callables()}
        # a few of each kind, so that an empty walk cannot pass the checks below
        for q in ("version", "error_for", "sandbox_probe", "Session.dispatch", "Session.mode (get)",
                  "Session.mode (set)", "Session.close", "Session.__enter__", "Registry.__len__",
                  "Model.replay", "Model.parse_response", "Hook.add_context", "AgtError.__init__",
                  "Agent.run", "Schema.validate"):
            self.assertIn(q, names)
        self.assertGreater(len(names), 190)

    def test_every_public_class_has_a_docstring(self):
        missing = []
        for name in agt.__all__:
            obj = getattr(agt, name)
            if inspect.isclass(obj) and not (inspect.getdoc(obj) or "").strip():
                missing.append(name)
        self.assertEqual(missing, [])

    def test_every_callable_has_a_docstring(self):
        missing = [q for q, fn in public_callables() if not (fn.__doc__ or "").strip()]
        self.assertEqual(missing, [])

    def test_every_callable_is_annotated(self):
        bad = []
        for q, fn in public_callables():
            sig = inspect.signature(fn)
            for p in sig.parameters.values():
                if p.name in ("self", "cls"):
                    continue
                if p.annotation is inspect.Parameter.empty:
                    bad.append("%s: parameter %s" % (q, p.name))
            if sig.return_annotation is inspect.Signature.empty:
                bad.append("%s: return" % q)
        self.assertEqual(bad, [])

    def test_docstrings_name_params_and_returns(self):
        bad = []
        for q, fn in public_callables():
            doc = fn.__doc__ or ""
            sig = inspect.signature(fn)
            for p in sig.parameters.values():
                if p.name in ("self", "cls") or p.name.startswith("_"):
                    continue
                if not re.search(r"\b%s\b" % re.escape(p.name), doc):
                    bad.append("%s: parameter %s not described" % (q, p.name))
            ret = sig.return_annotation
            if ret not in ("None", None, inspect.Signature.empty) and "(set)" not in q:
                if not re.search(r"\bReturns\b|\breturns\b", doc):
                    bad.append("%s: return value (%s) not described" % (q, ret))
        self.assertEqual(bad, [])

    def test_py_typed_marker(self):
        self.assertTrue(os.path.isfile(os.path.join(PKG, "agenttools", "py.typed")))


def _type_checking_classes():
    """{class name: {member: value} or None} declared under `if TYPE_CHECKING:`
    in the package's __init__.py."""
    with open(os.path.join(PKG, "agenttools", "__init__.py")) as f:
        tree = ast.parse(f.read())
    out = {}
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and \
                node.test.id == "TYPE_CHECKING":
            for c in node.body:
                if isinstance(c, ast.ClassDef):
                    members = {}
                    for st in c.body:
                        if isinstance(st, ast.Assign) and isinstance(st.value, ast.Constant):
                            members[st.targets[0].id] = st.value.value
                        elif isinstance(st, ast.Assign) and isinstance(st.value, ast.UnaryOp):
                            members[st.targets[0].id] = -st.value.operand.value
                    bases = [b.id if isinstance(b, ast.Name) else b.attr for b in c.bases]
                    out[c.name] = (bases, members)
    return out


class TestStaticDeclarations(unittest.TestCase):
    def test_enums_declared_as_built(self):
        declared = _type_checking_classes()
        for name in agt._ENUMS:
            self.assertIn(name, declared, "%s is not declared for type checkers" % name)
            bases, members = declared[name]
            self.assertEqual(bases, ["IntEnum"], name)
            built = {m.name: m.value for m in getattr(agt, name)}
            self.assertEqual(members, built, "%s: the declaration differs from the headers" % name)

    def test_errors_declared_as_built(self):
        declared = _type_checking_classes()
        for code, cls in agt._ERRORS.items():
            self.assertIn(cls.__name__, declared, "%s is not declared" % cls.__name__)
            self.assertEqual(declared[cls.__name__][0], ["AgtError"], cls.__name__)
        n_enums = len(agt._ENUMS)
        self.assertEqual(len(declared), n_enums + len(agt._ERRORS), "nothing else is declared")

    def test_constants_as_names(self):
        self.assertEqual(_cdecls.__all__, list(_cdecls.CONSTANTS))
        for name, value in _cdecls.CONSTANTS.items():
            self.assertEqual(getattr(_cdecls, name), value, name)
            self.assertEqual(getattr(agt, name), value, name)

    def test_missing_function_names_itself(self):
        with self.assertRaises(AttributeError) as cm:
            agt.lib.agt_no_such_function
        self.assertIn("agt_no_such_function is not a function of ", str(cm.exception))


def _python_with_mypy():
    for exe in (sys.executable, shutil.which("python3"), "/usr/bin/python3"):
        if exe and os.path.exists(exe):
            r = subprocess.run([exe, "-c", "import mypy"], capture_output=True)
            if r.returncode == 0:
                return exe
    return None


MYPY_ARGS = ["-m", "mypy", "--check-untyped-defs", "--warn-unused-ignores"]

USE_OK = '''
import agenttools as agt

def use(s: agt.Session, reg: agt.Registry) -> str:
    s.mode = agt.Mode.YOLO
    s.deny("*")
    mode: agt.Mode = s.mode
    r = s.dispatch("Read", {"path": "a.txt"}, call_id="c1")
    n: int = agt.AGT_MODE_YOLO + len(reg) + mode
    reg.set_provider("Ping", lambda call: "pong")
    s.set_pre_hook(lambda h: h.add_context("x"))
    try:
        s.dispatch("Write", {"path": "a", "content": "b"})
    except agt.PendingError as e:
        return e.call_id + str(n)
    return r.text
'''

USE_BAD = '''
import agenttools as agt

def use(s: agt.Session) -> int:
    s.mode = 2.5
    s.add_rule(agt.RuleKind.DENY, 7)
    agt.Sesion
    return s.dispatch("Read").text
'''


class TestMypy(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.py = _python_with_mypy()
        # one cache for the runs of this class (the standard library's stubs
        # are read once), removed afterwards
        cls.cache = tempfile.mkdtemp(prefix="agt-mypy-cache-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.cache, ignore_errors=True)

    def setUp(self):
        if self.py is None:
            self.skipTest("mypy is not installed (Debian: python3-mypy)")

    def run_mypy(self, *paths):
        env = dict(os.environ, MYPYPATH=PKG)
        return subprocess.run([self.py] + MYPY_ARGS + ["--cache-dir", self.cache] + list(paths),
                              capture_output=True, text=True, cwd=PKG, env=env)

    def test_package_type_checks(self):
        r = self.run_mypy("agenttools")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("Success: no issues found", r.stdout)

    def test_uses_of_the_package(self):
        with tempfile.TemporaryDirectory(prefix="agt-mypy-") as d:
            ok, bad = os.path.join(d, "use_ok.py"), os.path.join(d, "use_bad.py")
            with open(ok, "w") as f:
                f.write(USE_OK)
            with open(bad, "w") as f:
                f.write(USE_BAD)
            r = self.run_mypy(ok)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            r = self.run_mypy(bad)
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
            lines = sorted(int(m.group(1)) for m in
                           re.finditer(r"use_bad\.py:(\d+): error:", r.stdout))
            # a float mode, an int rule, a misspelt class, a str returned as int
            self.assertEqual(lines, [5, 6, 7, 8], r.stdout)


if __name__ == "__main__":
    unittest.main()
