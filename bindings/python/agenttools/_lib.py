"""Loads libagenttools.so.1 and declares every public function for ctypes.

The prototypes come from _cdecls.DECLS (generated from the headers by
bindings/tools/gen_decls.py); each C type maps to one ctypes type below, so
argtypes/restype are set for every function the headers declare. A function
the loaded library does not export (an older library) is left out; calling
it through the high-level classes raises AttributeError naming it.

Search order for the library:
  1. $AGENTTOOLS_LIB: a path to the .so file, or a directory holding it
     (when set, nothing else is tried);
  2. $AGT_BUILD_DIR/lib (meson's build tree);
  3. the build trees of the source tree this package lives in, or was
     installed from (<repo>/build/lib, <repo>/build-*/lib; an installed copy
     records it in _origin.py, with the $AGT_BUILD_DIR of the install);
  4. the libdir pkg-config gives for agenttools (an installed library);
  5. the system loader ("libagenttools.so.1"), the standard library folders
     (/usr/local/lib, /usr/lib, with the multiarch folder), then
     ctypes.util.find_library.
The ImportError lists every place tried and why each failed.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import os
import re
from typing import Any, Dict

from . import _cdecls

SONAME = "libagenttools.so.1"

_SCALARS: Dict[str, Any] = {
    "void": None,
    "int": ctypes.c_int,
    "unsigned": ctypes.c_uint,
    "unsigned int": ctypes.c_uint,
    "long": ctypes.c_long,
    "unsigned long": ctypes.c_ulong,
    "double": ctypes.c_double,
    "size_t": ctypes.c_size_t,
    "ssize_t": ctypes.c_ssize_t,
    "int32_t": ctypes.c_int32,
    "uint32_t": ctypes.c_uint32,
    "int64_t": ctypes.c_int64,
    "uint64_t": ctypes.c_uint64,
    "uint8_t": ctypes.c_uint8,
    "_Bool": ctypes.c_bool,
    "bool": ctypes.c_bool,
}
_SCALAR_PTRS = {k: ctypes.POINTER(v) for k, v in _SCALARS.items() if v is not None}


def _split_decl(decl):
    """'const char *name' -> ('const char *', 'name')."""
    decl = decl.strip()
    m = re.match(r"^(.*?)(\b[A-Za-z_]\w*)$", decl)
    if m and m.group(1).strip() and m.group(1).strip() not in ("const", "struct", "unsigned"):
        return m.group(1).strip(), m.group(2)
    return decl, None


def _base(t):
    t = t.replace("const", " ").replace("struct", " ")
    stars = t.count("*")
    return " ".join(t.replace("*", " ").split()), stars


def _nullable(fnptr):
    """A parameter type for a callback: a CFUNCTYPE object as usual, and None
    as a NULL function pointer (ctypes refuses None for a CFUNCTYPE argtype,
    yet every agt_*_set_* callback setter clears with fn NULL)."""

    class _FnOrNull(ctypes.c_void_p):
        @classmethod
        def from_param(cls, obj):
            if obj is None:
                return ctypes.c_void_p(None)
            return fnptr.from_param(obj)

    _FnOrNull.__name__ = "%s_or_NULL" % getattr(fnptr, "__name__", "fn")
    return _FnOrNull


def ctype_of(t, fnptrs, is_return=False):
    name, stars = _base(t)
    if name in fnptrs and stars == 0:
        return fnptrs[name] if is_return else _nullable(fnptrs[name])
    if stars == 0:
        if name not in _SCALARS:
            raise TypeError("no ctypes mapping for C type %r" % t)
        return _SCALARS[name]
    if stars == 1:
        if name == "char":
            return ctypes.c_char_p
        if name in _SCALAR_PTRS:
            return _SCALAR_PTRS[name]
        return ctypes.c_void_p  # handles and void *
    if stars == 2:
        return ctypes.POINTER(ctypes.c_void_p)  # char **, const char **, agt_x **
    raise TypeError("no ctypes mapping for C type %r" % t)


def _params(text):
    text = text.strip()
    if text in ("", "void"):
        return []
    return [_split_decl(p)[0] for p in text.split(",")]


UNMAPPED = []  # declarations with a C type this module cannot map (left unbound)


def parse_cdecls(decls_text):
    """Returns (fnptr ctypes types by typedef name, {function: (restype, argtypes)})."""
    fnptrs: Dict[str, Any] = {}
    funcs: Dict[str, Any] = {}
    try_map = _try_map(fnptrs)
    for line in decls_text.splitlines():
        line = line.strip()
        if not line or line.startswith("/*") or line.startswith("typedef struct"):
            continue
        m = re.match(r"typedef\s+(.+?)\(\s*\*\s*(\w+)\s*\)\s*\((.*)\)\s*;$", line)
        if m:
            sig = try_map(line, m.group(1), m.group(3), callback=True)
            if sig is not None:
                fnptrs[m.group(2)] = ctypes.CFUNCTYPE(sig[0], *sig[1])
            continue
        m = re.match(r"(.+?)\b(agt_\w+)\s*\((.*)\)\s*;$", line)
        if not m:
            UNMAPPED.append(line)
            continue
        sig = try_map(line, m.group(1), m.group(3))
        if sig is not None:
            funcs[m.group(2)] = sig
    return fnptrs, funcs


def _counted(types, ps):
    """A callback's `const char *data, size_t len` is a counted buffer, not a
    C string: c_void_p, so that the trampoline reads len bytes with
    ctypes.string_at (c_char_p would hand over a copy cut at the first NUL,
    and reading len bytes of it would read past its end)."""
    for i in range(len(ps) - 1):
        if _base(ps[i]) == ("char", 1) and _base(ps[i + 1]) == ("size_t", 0):
            types[i] = ctypes.c_void_p
    return types


def _try_map(fnptrs):
    def try_map(line, ret, params, callback=False):
        try:
            ps = _params(params)
            types = [ctype_of(p, fnptrs) for p in ps]
            if callback:
                types = _counted(types, ps)
            return (ctype_of(ret, fnptrs, True), types)
        except TypeError:
            UNMAPPED.append(line)
            return None

    return try_map


FNPTR, SIGNATURES = parse_cdecls(_cdecls.DECLS)


def _candidates():
    env = os.environ.get("AGENTTOOLS_LIB")
    if env:
        if os.path.isdir(env):
            yield os.path.join(env, SONAME)
            yield os.path.join(env, "libagenttools.so")
        else:
            yield env
        return
    bdir = os.environ.get("AGT_BUILD_DIR")
    if bdir:
        yield os.path.join(bdir, "lib", SONAME)
    here = os.path.dirname(os.path.abspath(__file__))
    repos = [os.path.normpath(os.path.join(here, "..", "..", ".."))]
    try:
        from . import _origin  # type: ignore[attr-defined]  # written into an installed copy
        if _origin.BUILD_DIR:
            yield os.path.join(_origin.BUILD_DIR, "lib", SONAME)
        if _origin.SOURCE_DIR:
            repos.append(_origin.SOURCE_DIR)
    except ImportError:
        pass
    for repo in repos:
        if os.path.exists(os.path.join(repo, "include", "agenttools", "common.h")):
            yield os.path.join(repo, "build", "lib", SONAME)
            for p in sorted(glob.glob(os.path.join(repo, "build-*", "lib", SONAME))):
                yield p
    libdir = _pkg_config_libdir()
    if libdir:
        yield os.path.join(libdir, SONAME)
    yield SONAME
    arch = _multiarch()
    for d in ("/usr/local/lib", "/usr/lib"):
        if arch:
            yield os.path.join(d, arch, SONAME)
        yield os.path.join(d, SONAME)
    found = ctypes.util.find_library("agenttools")
    if found:
        yield found


def _pkg_config_libdir():
    import subprocess
    try:
        r = subprocess.run(["pkg-config", "--variable=libdir", "agenttools"],
                           capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout.strip() or None if r.returncode == 0 else None


def _multiarch():
    import sysconfig
    return sysconfig.get_config_var("MULTIARCH") or None


def load():
    errors = []
    for cand in _candidates():
        if os.sep in cand and not os.path.exists(cand):
            errors.append("%s: no such file" % cand)
            continue
        try:
            return ctypes.CDLL(cand), cand
        except OSError as e:
            errors.append("%s: %s" % (cand, e))
    raise ImportError("libagenttools not found; install it (meson install), build it in the "
                      "source tree this package came from, or set AGENTTOOLS_LIB to the "
                      "library's path. Tried: " + "; ".join(errors))


class _Lib:
    """The loaded library with every declared function typed."""

    def __init__(self):
        self.dll, self.path = load()
        self.missing = []
        for name, (ret, args) in SIGNATURES.items():
            try:
                fn = getattr(self.dll, name)
            except AttributeError:
                self.missing.append(name)
                continue
            fn.restype = ret
            fn.argtypes = args
            setattr(self, name, fn)

    def __getattr__(self, name: str) -> Any:
        """A function the headers declare but the loaded library does not
        export (an older library), or no such function: AttributeError
        naming it and the library."""
        why = ("is declared by the headers but not exported by" if name in SIGNATURES
               else "is not a function of")
        raise AttributeError("%s %s %s" % (name, why, self.__dict__.get("path", SONAME)))


lib = _Lib()
