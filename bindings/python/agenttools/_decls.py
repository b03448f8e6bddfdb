"""C declaration parsing shared by the ctypes loader and the binding tests.

Declarations are plain C prototypes as they appear in include/agenttools/*.h
(optionally prefixed with AGT_EXTERN). normalise() turns one into
(return type, [parameter types]) with parameter names, ``struct`` keywords
and white space differences removed, so the headers, the Python table and
the Lua cdef can be compared.
"""

import re

_QUALIFIERS = {"const", "struct", "unsigned", "signed", "volatile", "enum"}
_PROTO = re.compile(
    r"(?:AGT_EXTERN\s+)?([A-Za-z_][\w\s\*]*?[\s\*])(agt_\w+)\s*\(([^()]*)\)\s*;", re.S
)


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def _norm_type(t, drop_name):
    toks = re.findall(r"[A-Za-z_]\w*|\*", t)
    idents = [x for x in toks if x != "*" and x not in _QUALIFIERS]
    if drop_name and toks and toks[-1] != "*" and len(idents) >= 2:
        toks = toks[:-1]
    toks = [x for x in toks if x != "struct"]
    out = ""
    for x in toks:
        if x == "*":
            out += "*"
        else:
            out += (" " if out and out[-1] != "*" else (" " if out else "")) + x
    return out.replace(" *", "*").replace("*", " *").replace("  ", " ").strip()


def parse(text, extern_only=True):
    """Return {name: (ret, [params])} for every prototype in text."""
    text = strip_comments(text)
    decls = {}
    for m in _PROTO.finditer(text):
        whole = m.group(0)
        if extern_only and not whole.lstrip().startswith("AGT_EXTERN"):
            continue
        ret = m.group(1)
        # the regex may swallow a preceding statement's tail; keep the last line-ish part
        ret = re.split(r"[;{}]|\)\s*", ret)[-1]
        ret = ret.replace("AGT_EXTERN", "")
        if "typedef" in ret:
            continue
        params = [p.strip() for p in m.group(3).split(",")]
        if params == ["void"] or params == [""]:
            params = []
        decls[m.group(2)] = (_norm_type(ret, False), [_norm_type(p, True) for p in params])
    return decls


def parse_headers(paths):
    decls = {}
    for p in paths:
        with open(p, encoding="utf-8") as f:
            decls.update(parse(f.read(), extern_only=True))
    return decls
