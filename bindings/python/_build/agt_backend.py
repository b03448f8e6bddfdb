"""A PEP 517 build backend that needs only the standard library.

`pip install bindings/python` must work offline on a machine that has pip but
not the `wheel` package (setuptools before 70.1 needs it to build wheels).
The package is pure Python, so its wheel is a zip of agenttools/ plus the
.dist-info files of the wheel format (PEP 427, core metadata 2.1).
"""

import base64
import hashlib
import os
import tarfile
import zipfile

NAME = "agenttools"
VERSION = "1.0.0"
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TAG = "py3-none-any"

METADATA = """Metadata-Version: 2.1
Name: {name}
Version: {version}
Summary: ctypes bindings for libagenttools, the tool layer of an LLM coding agent
License: MIT
Requires-Python: >=3.8
Classifier: Programming Language :: Python :: 3
Classifier: Operating System :: POSIX :: Linux
""".format(name=NAME, version=VERSION)

WHEEL = """Wheel-Version: 1.0
Generator: agt_backend
Root-Is-Purelib: true
Tag: {tag}
""".format(tag=TAG)


def _files():
    pkg = os.path.join(HERE, NAME)
    for name in sorted(os.listdir(pkg)):
        if (name.endswith(".py") and name != "_origin.py") or name == "py.typed":
            yield os.path.join(pkg, name), NAME + "/" + name


def _origin():
    """agenttools/_origin.py of the wheel: where the package was built from,
    so that an installed copy (the README's venv) finds the library built in
    that source tree (or in $AGT_BUILD_DIR at install time) without
    AGENTTOOLS_LIB."""
    src = os.path.normpath(os.path.join(HERE, "..", ".."))
    if not os.path.exists(os.path.join(src, "include", "agenttools", "common.h")):
        src = None
    build = os.environ.get("AGT_BUILD_DIR") or None
    return ("# Written by the build backend at install time.\nSOURCE_DIR = %r\nBUILD_DIR = %r\n"
            % (src, build)).encode()


def _digest(data):
    h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "sha256=" + h


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def _dist_info():
    return "%s-%s.dist-info" % (NAME, VERSION)


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    d = os.path.join(metadata_directory, _dist_info())
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "METADATA"), "w") as f:
        f.write(METADATA)
    with open(os.path.join(d, "WHEEL"), "w") as f:
        f.write(WHEEL)
    return _dist_info()


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    fname = "%s-%s-%s.whl" % (NAME, VERSION, TAG)
    record = []
    with zipfile.ZipFile(os.path.join(wheel_directory, fname), "w", zipfile.ZIP_DEFLATED) as z:
        entries = [(arc, open(src, "rb").read()) for src, arc in _files()]
        entries.append((NAME + "/_origin.py", _origin()))
        entries.append((_dist_info() + "/METADATA", METADATA.encode()))
        entries.append((_dist_info() + "/WHEEL", WHEEL.encode()))
        for arc, data in entries:
            z.writestr(arc, data)
            record.append("%s,%s,%d" % (arc, _digest(data), len(data)))
        record.append(_dist_info() + "/RECORD,,")
        z.writestr(_dist_info() + "/RECORD", "\n".join(record) + "\n")
    return fname


def build_sdist(sdist_directory, config_settings=None):
    base = "%s-%s" % (NAME, VERSION)
    fname = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, fname), "w:gz") as t:
        for rel in ["pyproject.toml", "README.md", "_build/agt_backend.py"]:
            t.add(os.path.join(HERE, rel), base + "/" + rel)
        for src, arc in _files():
            t.add(src, base + "/" + arc)
        info = tarfile.TarInfo(base + "/PKG-INFO")
        data = METADATA.encode()
        info.size = len(data)
        import io
        t.addfile(info, io.BytesIO(data))
    return fname
