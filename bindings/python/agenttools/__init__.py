"""Python bindings for libagenttools (pure ctypes, standard library only).

    import agenttools as agt
    with agt.Registry("chat") as reg, agt.Session(reg, "/path/to/repo") as s:
        r = s.dispatch("TodoList", {"todos": [{"title": "x", "status": "pending"}]})
        print(r.text, r.is_error)

Strings go in and come out as str (UTF-8); JSON documents go in and come out
as Python objects (a str argument is passed through as JSON text). Failures
raise AgtError subclasses carrying the status code and agt_error_message().
Every char * the library hands out is copied and released with agt_free().

Callbacks (providers, approver, hooks, schema resolver, diff relocator,
session clock) keep their ctypes function objects on the object that
installed them. A Python exception never crosses into C: it is caught,
turned into the error code the C callback contract defines, kept, and
re-raised once the C call returns, except for providers, whose exception
becomes the error result the model sees (Result.exception holds it).

Every public function and method carries type hints (the package ships a
py.typed marker); the enumerations and error classes are built from the
headers' constants at import time and declared for type checkers below.
"""

from __future__ import annotations

import ctypes
import json as _json
import operator
from typing import (TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Optional, Tuple,
                    TypeVar, Union)

from ._lib import FNPTR, lib
from ._cdecls import CONSTANTS

__all__ = [
    "AgtError", "Registry", "Session", "Schema", "Diff", "Changes", "Cron", "Result",
    "Call", "Hook", "version", "CONSTANTS",
]

from ._cdecls import *  # noqa: F401,F403  the AGT_* constants as names (see _cdecls.__all__)
__all__ += list(CONSTANTS)

# ---- type aliases -------------------------------------------------------------
JSON = Any
"""A JSON document as Python objects (dict, list, str, int, float, bool, None)."""
JSONInput = Any
"""A JSON document as Python objects, or its JSON text (str or bytes), which
is passed through as it is."""
ProviderFn = Callable[["Call"], Any]
"""A tool provider: fn(call) -> str | dict | list | None (see Registry.set_provider)."""
ApproverFn = Callable[[JSON], Any]
"""An approver: fn(request) -> decision | (decision, reason) | (decision, reason, rule)."""
HookFn = Callable[["Hook"], Any]
"""A pre- or post-tool-use hook: fn(hook); its return value is not used."""
RelocatorFn = Callable[[Optional[str], Optional[str], Optional[str], Optional[str]],
                       Optional[str]]
"""A review comment relocator: fn(path, file_diff, snippet, suggestion) -> snippet | None."""
_H = TypeVar("_H", bound="_Handle")


# ---- enumerations -----------------------------------------------------------
# The C enums as enum.IntEnum classes (agt.Mode.YOLO, agt.Decision.REJECT);
# the AGT_* names above stay as aliases of the same values. A method that
# takes one of them accepts a member, its int value or its name in any case
# ("yolo"), and raises ValueError naming the bad value and the choices.
import enum as _enum

# class name: (constant prefix, {member name: constant}) for the mixed ones
_ENUMS = {
    "Status": ("AGT_E", None),
    "Mode": ("AGT_MODE_", None),
    "Decision": ("AGT_DECISION_", None),
    "RuleKind": ("AGT_RULE_", None),
    "Phase": ("AGT_PHASE_", None),
    "Access": ("AGT_ACCESS_", None),
    "ChangesMode": ("AGT_CHANGES_", None),
    "DiffStatus": ("AGT_DIFF_", None),
    "Protocol": ("AGT_PROTOCOL_", None),
    "StreamKind": ("AGT_STREAM_", None),
    "AgentEvent": ("AGT_AGENT_", None),
    "FileLimit": ("AGT_FILE_LIMIT_", None),
    "Hardlinks": ("AGT_HARDLINKS_", None),
    "Draft": ("AGT_DRAFT_", None),
    "MaxTokensField": ("AGT_", {"MAX_TOKENS": "AGT_MAX_TOKENS",
                               "MAX_COMPLETION_TOKENS": "AGT_MAX_COMPLETION_TOKENS"}),
    "SandboxMode": ("AGT_SANDBOX_", {"OFF": "AGT_SANDBOX_OFF", "READ_ONLY": "AGT_SANDBOX_READ_ONLY",
                                     "WORKSPACE_WRITE": "AGT_SANDBOX_WORKSPACE_WRITE"}),
    "SandboxNetwork": ("AGT_SANDBOX_", {"OFF": "AGT_SANDBOX_NETWORK_OFF",
                                        "ON": "AGT_SANDBOX_NETWORK_ON"}),
    "SandboxEnforce": ("AGT_SANDBOX_", {"BEST_EFFORT": "AGT_SANDBOX_BEST_EFFORT",
                                        "REQUIRE": "AGT_SANDBOX_REQUIRE"}),
}


def _members(prefix: str, explicit: Optional[Dict[str, str]]) -> Dict[str, int]:
    if explicit is not None:
        return {k: CONSTANTS[v] for k, v in explicit.items() if v in CONSTANTS}
    out = {}
    for name, value in CONSTANTS.items():
        if name.startswith(prefix):
            key = name[len(prefix):]
            if prefix == "AGT_E":
                if not key.isalpha():
                    continue
                key = "E" + key
            if key[:1].isdigit():  # AGT_DRAFT_7 -> Draft.V7
                key = "V" + key
            out[key] = value
    if prefix == "AGT_E":
        out = dict([("OK", CONSTANTS["AGT_OK"]), ("ERROR", CONSTANTS["AGT_ERROR"])] +
                   [(k, v) for k, v in out.items() if k != "EERROR"])
    return out


for _name, (_prefix, _explicit) in _ENUMS.items():
    globals()[_name] = _enum.IntEnum(_name, _members(_prefix, _explicit))
    globals()[_name].__module__ = __name__
    globals()[_name].__doc__ = ("The %s* constants of the C headers as an IntEnum "
                                "(the AGT_ names stay as aliases)." % _prefix)
__all__ += list(_ENUMS)

if TYPE_CHECKING:  # the classes built above from the headers' constants, for type checkers
    # (tests/test_typing.py checks that these declarations match the built ones)

    class Status(_enum.IntEnum):
        OK = 0
        ERROR = -1
        ENOMEM = -2
        EINVAL = -3
        EINVALID = -4
        ENOTFOUND = -5
        EEXISTS = -6
        EPENDING = -7
        EFROZEN = -8
        EPARSE = -9
        EIO = -10
        EDENIED = -11
        ETIMEOUT = -12
        ECANCELLED = -13
        EUNSUPPORTED = -14
        ELIMIT = -15
        EGIT = -16
        ENET = -17
        EAMBIGUOUS = -18
        ESTATE = -19

    class Mode(_enum.IntEnum):
        MANUAL = 0
        PLAN = 1
        YOLO = 2
        AUTO = 3

    class Decision(_enum.IntEnum):
        APPROVE = 0
        APPROVE_SESSION = 1
        REJECT = 2

    class RuleKind(_enum.IntEnum):
        ALLOW = 0
        ASK = 1
        DENY = 2

    class Phase(_enum.IntEnum):
        ALL = 0
        PLAN = 1
        MAIN = 2

    class Access(_enum.IntEnum):
        READ = 0
        WRITE = 1
        EXECUTE = 2
        NETWORK = 3
        HOST = 4

    class ChangesMode(_enum.IntEnum):
        WORKSPACE = 0
        RANGE = 1
        COMMIT = 2

    class DiffStatus(_enum.IntEnum):
        MODIFIED = 0
        ADDED = 1
        DELETED = 2
        RENAMED = 3
        COPIED = 4

    class Protocol(_enum.IntEnum):
        OPENAI = 0
        ANTHROPIC = 1

    class StreamKind(_enum.IntEnum):
        TEXT = 0
        THINKING = 1
        TOOL_CALL = 2

    class AgentEvent(_enum.IntEnum):
        TEXT = 0
        THINKING = 1
        TOOL_STARTED = 2
        TOOL_FINISHED = 3
        APPROVAL = 4
        USAGE = 5
        NOTIFICATION = 6
        COMPACTED = 7

    class FileLimit(_enum.IntEnum):
        READ_LINES = 1
        READ_BYTES = 2
        LINE_CHARS = 3
        GLOB_RESULTS = 4
        GREP_HEAD = 5
        MEDIA_BYTES = 6

    class Hardlinks(_enum.IntEnum):
        BREAK = 0
        IN_PLACE = 1

    class Draft(_enum.IntEnum):
        AUTO = 0
        V7 = 7
        V2020_12 = 2020
        V4 = 4
        V6 = 6
        V2019_09 = 2019

    class MaxTokensField(_enum.IntEnum):
        MAX_TOKENS = 0
        MAX_COMPLETION_TOKENS = 1

    class SandboxMode(_enum.IntEnum):
        OFF = 0
        READ_ONLY = 1
        WORKSPACE_WRITE = 2

    class SandboxNetwork(_enum.IntEnum):
        OFF = 0
        ON = 1

    class SandboxEnforce(_enum.IntEnum):
        BEST_EFFORT = 0
        REQUIRE = 1


def _enum_arg(cls: Any, value: Any, what: str) -> Any:
    """value as a member of cls: a member, its int value or its name (any case)."""
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, str):
        key = value.strip().upper().replace("-", "_")
        if key in cls.__members__:
            return cls.__members__[key]
    elif isinstance(value, int):
        try:
            return cls(value)
        except ValueError:
            pass
    raise ValueError("%s: %r is not one of %s" % (
        what, value, ", ".join("%s (%d)" % (m.name.lower(), m.value) for m in cls)))

# ---- errors -----------------------------------------------------------------


class AgtError(Exception):
    """A failed libagenttools call: .code (AGT_E*), .message (the library's)."""

    code = -1
    call_id: str  # PendingError only: the id of the call that waits

    def __init__(self, message: Optional[str], code: Optional[int] = None) -> None:
        """Makes the error.

        Args:
            message: the library's message (agt_error_message()) or your own.
            code: the AGT_E* status; None keeps the class's code.
        """
        super().__init__(message)
        if code is not None:
            self.code = code
        self.message = message


def _err(name: str, code: int, doc: str) -> type:
    cls = type(name, (AgtError,), {"code": code, "__doc__": doc})
    globals()[name] = cls
    __all__.append(name)
    return cls


_ERRORS = {
    -1: _err("GenericError", -1, "AGT_ERROR"),
    -2: _err("NoMemoryError", -2, "AGT_ENOMEM"),
    -3: _err("InvalidArgumentError", -3, "AGT_EINVAL"),
    -4: _err("ValidationError", -4, "AGT_EINVALID"),
    -5: _err("NotFoundError", -5, "AGT_ENOTFOUND"),
    -6: _err("ExistsError", -6, "AGT_EEXISTS"),
    -7: _err("PendingError", -7, "AGT_EPENDING: the call waits for approval (.call_id)"),
    -8: _err("FrozenError", -8, "AGT_EFROZEN"),
    -9: _err("ParseError", -9, "AGT_EPARSE"),
    -10: _err("AgtIOError", -10, "AGT_EIO"),
    -11: _err("DeniedError", -11, "AGT_EDENIED"),
    -12: _err("TimeoutError_", -12, "AGT_ETIMEOUT"),
    -13: _err("CancelledError", -13, "AGT_ECANCELLED"),
    -14: _err("UnsupportedError", -14, "AGT_EUNSUPPORTED"),
    -15: _err("LimitError", -15, "AGT_ELIMIT"),
    -16: _err("GitError", -16, "AGT_EGIT"),
    -17: _err("NetError", -17, "AGT_ENET"),
    -18: _err("AmbiguousError", -18, "AGT_EAMBIGUOUS"),
    -19: _err("StateError", -19, "AGT_ESTATE"),
}

if TYPE_CHECKING:  # the classes _err() built above, for type checkers
    class GenericError(AgtError): ...
    class NoMemoryError(AgtError): ...
    class InvalidArgumentError(AgtError): ...
    class ValidationError(AgtError): ...
    class NotFoundError(AgtError): ...
    class ExistsError(AgtError): ...
    class PendingError(AgtError): ...
    class FrozenError(AgtError): ...
    class ParseError(AgtError): ...
    class AgtIOError(AgtError): ...
    class DeniedError(AgtError): ...
    class TimeoutError_(AgtError): ...
    class CancelledError(AgtError): ...
    class UnsupportedError(AgtError): ...
    class LimitError(AgtError): ...
    class GitError(AgtError): ...
    class NetError(AgtError): ...
    class AmbiguousError(AgtError): ...
    class StateError(AgtError): ...


def _s(b: Optional[bytes]) -> Optional[str]:
    return None if b is None else b.decode("utf-8", "replace")


def _b(s: Any) -> Optional[bytes]:
    if s is None:
        return None
    if isinstance(s, bytes):
        return s
    return str(s).encode("utf-8")


def _bytes(s: Any, what: str) -> bytes:
    """s as UTF-8 bytes for a text argument that may not be None."""
    out = _b(s)
    if out is None:
        raise TypeError("%s is None; give a str (or bytes)" % what)
    return out


def _json_text(obj: Any) -> bytes:
    if isinstance(obj, bytes):
        return obj
    if isinstance(obj, str):
        return obj.encode("utf-8")
    return _json.dumps(obj, ensure_ascii=False).encode("utf-8")


def _take_json(ptr: ctypes.c_void_p) -> Any:
    """_take() of a JSON text, parsed (None for NULL)."""
    text = _take(ptr)
    return None if text is None else _json.loads(text)


def error_for(code: int, message: Optional[str] = None) -> AgtError:
    """The AgtError subclass instance for a status code.

    Args:
        code: an AGT_E* status (negative).
        message: the message; None takes the library's last error message
            (or the status's name when there is none).

    Returns:
        An instance of the subclass for code (AgtError for an unknown code),
        not raised.
    """
    if message is None:
        message = _s(lib.agt_error_message()) or _s(lib.agt_status_string(code))
    cls = _ERRORS.get(code, AgtError)
    return cls(message, code)


def _check(rc: int) -> int:
    if rc < 0:
        raise error_for(rc)
    return rc


def _take(ptr: ctypes.c_void_p) -> Optional[str]:
    """Copies and frees a char * out value; returns str (None for NULL)."""
    if not ptr.value:
        return None
    try:
        return ctypes.string_at(ptr.value).decode("utf-8", "replace")
    finally:
        lib.agt_free(ptr.value)


def _take_bytes(ptr: ctypes.c_void_p, n: int) -> Optional[bytes]:
    if not ptr.value:
        return None
    try:
        return ctypes.string_at(ptr.value, n)
    finally:
        lib.agt_free(ptr.value)


def _out_json(fn: Any, *args: Any) -> Any:
    out = ctypes.c_void_p()
    _check(fn(*args, ctypes.byref(out)))
    text = _take(out)
    return None if text is None else _json.loads(text)


_INT = (-(2 ** 31), 2 ** 31 - 1)
_INT64 = (-(2 ** 63), 2 ** 63 - 1)


def _clamp(v: int, bounds: Tuple[int, int]) -> int:
    """An integer argument for a C int/int64_t: a value past the C type's
    range becomes its nearest end (ctypes would wrap it silently), so the
    library's own range check refuses it with its message."""
    lo, hi = bounds
    v = operator.index(v)
    return lo if v < lo else hi if v > hi else v


def version() -> str:
    """The library's version, e.g. "1.0.0".

    Returns:
        The version text of the loaded libagenttools.
    """
    return _s(lib.agt_version()) or ""


def sandbox_probe() -> JSON:
    """What this kernel offers the sandbox.

    Returns:
        A dict (see include/agenttools/sandbox.h, agt_sandbox_probe).

    Raises:
        AgtError: when the probe fails.
    """
    return _out_json(lib.agt_sandbox_probe)


def sandbox_mode_name(mode: int) -> Optional[str]:
    """The name of a sandbox mode.

    Args:
        mode: an AGT_SANDBOX_* mode (a SandboxMode).

    Returns:
        "off", "read-only" or "workspace-write"; None for an unknown mode.
    """
    return _s(lib.agt_sandbox_mode_name(mode))


def sandbox_mode_parse(name: str) -> int:
    """The sandbox mode a name stands for.

    Args:
        name: "off", "read-only" or "workspace-write".

    Returns:
        The AGT_SANDBOX_* value.

    Raises:
        InvalidArgumentError: for any other name (the message lists them).
    """
    out = ctypes.c_int()
    _check(lib.agt_sandbox_mode_parse(_b(name), ctypes.byref(out)))
    return out.value


class _Guard:
    """Holds an exception raised inside a callback until the C call returns."""

    def __init__(self) -> None:
        self.exc: Optional[BaseException] = None

    def keep(self, exc: BaseException) -> None:
        if self.exc is None:
            self.exc = exc

    def reraise(self) -> None:
        exc, self.exc = self.exc, None
        if exc is not None:
            raise exc


class _Handle:
    """An owned C handle. A handle that others depend on (a Registry under a
    Session, a Session and a Model under an Agent, Changes under a Session
    or a Diff) is freed only after every one of them: close() makes it
    unusable from Python at once, and the C object goes when the last
    dependent is gone. So any order of close() and of finalisation (the
    garbage collector at interpreter exit runs finalisers in no particular
    order, whatever the references) is safe."""

    _free: Optional[str] = None

    def __init__(self) -> None:
        self._h = None  # what Python calls may use; None once closed
        self._c = None  # the C object, until it is really freed
        self._free_fn = None
        self._users = 0  # live handles that depend on this one
        self._deps: List[_Handle] = []  # the handles this one depends on
        self._closing = False

    def _own(self, h: Any, *deps: Optional["_Handle"], free: bool = True) -> None:
        """Takes the C object h, which needs deps to outlive it. The free
        function is looked up now: at interpreter exit the module's globals
        may be gone when the finaliser runs."""
        self._h = self._c = h
        self._free_fn = getattr(lib, self._free) if free and self._free else None
        for d in deps:
            self._depend(d)

    def _depend(self, d: Optional["_Handle"]) -> None:
        if d is not None:
            d._users += 1
            self._deps.append(d)

    def _undepend(self, d: Optional["_Handle"]) -> None:
        if d is not None and d in self._deps:
            self._deps.remove(d)
            d._users -= 1
            d._release()

    def close(self) -> None:
        """Closes the object: it is unusable from Python at once; the C object
        is freed once nothing that depends on it is left. Closing twice is
        harmless.
        """
        self._h = None
        self._closing = True
        self._release()

    def _release(self) -> None:
        if not self._closing or self._users > 0 or self._c is None:
            return
        c, self._c = self._c, None
        if self._free_fn is not None:
            self._free_fn(c)
        self._freed()
        deps, self._deps = self._deps, []
        for d in deps:
            d._users -= 1
            d._release()

    def _freed(self) -> None:
        """Called once the C object is gone (drop what only it needed)."""

    def _handle(self) -> int:
        if not self._h:
            raise InvalidArgumentError("%s is closed" % type(self).__name__, -3)
        return self._h

    def __enter__(self: _H) -> _H:
        """Enters a with block.

        Returns:
            The object itself (closed when the block ends).
        """
        return self

    def __exit__(self, *exc: Any) -> None:
        """Leaves a with block: closes the object.

        Args:
            *exc: the exception information of the block (not used).
        """
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


# ---- results and calls ------------------------------------------------------


class Result:
    """A tool result, copied out of the library (the C handle is freed at once)."""

    def __init__(self, ptr: Any) -> None:
        """Copies a C result out and frees it (used by the library's wrappers).

        Args:
            ptr: an agt_result * the caller owns; freed here.
        """
        self.text = _s(lib.agt_result_text(ptr)) or ""
        self.is_error = bool(lib.agt_result_is_error(ptr))
        self.status = lib.agt_result_status(ptr)
        j = lib.agt_result_json(ptr)
        self.json = _json.loads(j.decode("utf-8")) if j is not None else None
        self.call_id = _s(lib.agt_result_call_id(ptr)) or ""
        self.tool = _s(lib.agt_result_tool(ptr)) or ""
        self.exception = None
        lib.agt_result_free(ptr)

    def close(self) -> None:
        """Does nothing (the C result was freed when the Result was made); kept
        so a Result works in a with block like the other objects.
        """
        pass

    def __enter__(self) -> Result:
        """Enters a with block.

        Returns:
            The result itself.
        """
        return self

    def __exit__(self, *exc: Any) -> None:
        """Leaves a with block (nothing to free).

        Args:
            *exc: the exception information of the block (not used).
        """
        self.close()

    def __repr__(self) -> str:
        """A short text for debugging.

        Returns:
            Result(tool=..., is_error=..., text=<its first 60 characters>).
        """
        return "Result(tool=%r, is_error=%r, text=%r)" % (self.tool, self.is_error, self.text[:60])


class Call:
    """A tool call handed to a Python provider; valid only during the call."""

    def __init__(self, ptr: Any) -> None:
        """Wraps the call a provider gets (made by Registry.set_provider).

        Args:
            ptr: the agt_call *, valid only during the provider call.
        """
        self._p = ptr
        self.id = _s(lib.agt_call_id(ptr))
        self.tool = _s(lib.agt_call_tool(ptr))
        self.args = _json.loads(_s(lib.agt_call_args(ptr)) or "{}")
        self.answered = False

    def set_text(self, text: str) -> None:
        """Answers the call with a (successful) result text.

        Args:
            text: the text the model reads.

        Raises:
            AgtError: when the library refuses it (e.g. out of memory).
        """
        _check(lib.agt_call_set_text(self._p, _b(text)))
        self.answered = True

    def set_error(self, text: str) -> None:
        """Answers the call with an error result.

        Args:
            text: the error text the model reads.

        Raises:
            AgtError: when the library refuses it.
        """
        _check(lib.agt_call_set_error(self._p, _b(text)))
        self.answered = True

    def set_json(self, obj: JSONInput) -> None:
        """Attaches a JSON document to the result (the text stays as set).

        Args:
            obj: a JSON value as Python objects, or its JSON text.

        Raises:
            ParseError: when obj is text that is not JSON.
        """
        t = _json_text(obj)
        _check(lib.agt_call_set_json(self._p, t, len(t)))


class Hook:
    """A call seen by a pre- or post-tool-use hook; valid only during the hook."""

    def __init__(self, ptr: Any) -> None:
        """Wraps the call a hook sees (made by Session.set_pre_hook/set_post_hook).

        Args:
            ptr: the agt_hook *, valid only during the hook.
        """
        self._p = ptr
        self.tool = _s(lib.agt_hook_tool(ptr))
        self.call_id = _s(lib.agt_hook_call_id(ptr))
        self.args = _json.loads(_s(lib.agt_hook_args(ptr)) or "{}")
        self.result_text = _s(lib.agt_hook_result_text(ptr))
        self.result_is_error = bool(lib.agt_hook_result_is_error(ptr))

    def deny(self, reason: Optional[str] = None) -> None:
        """Pre-tool-use: blocks the call; the model reads the refusal with reason.

        Args:
            reason: why (None: no reason given).

        Raises:
            StateError: in a post-tool-use hook (the call has run).
        """
        _check(lib.agt_hook_deny(self._p, _b(reason)))

    def rewrite(self, args: JSONInput) -> None:
        """Pre-tool-use: replaces the call's arguments (checked again against the
        tool's schema, the deny rules and plan mode).

        Args:
            args: the new arguments, a dict or its JSON text.

        Raises:
            ParseError: text that is not JSON.
            ValidationError: not a JSON object.
            StateError: in a post-tool-use hook.
        """
        _check(lib.agt_hook_rewrite(self._p, _json_text(args)))

    def append(self, text: str) -> None:
        """Post-tool-use: appends text to the result the model reads (after a
        blank line).

        Args:
            text: the text to add.

        Raises:
            StateError: in a pre-tool-use hook (use add_context there).
        """
        _check(lib.agt_hook_append(self._p, _b(text)))

    def add_context(self, text: str) -> None:
        """Pre-tool-use: adds context for the model, which reaches it with the
        call's result (after the tool's text, before what a post hook
        appends; also with a refusal).

        Args:
            text: the context; several calls are joined by newlines.

        Raises:
            StateError: in a post-tool-use hook (use append there).
        """
        _check(lib.agt_hook_add_context(self._p, _b(text)))


# ---- registry ---------------------------------------------------------------


class Registry(_Handle):
    """A tool catalogue. Registry("chat") loads a built-in set at once."""

    _free = "agt_registry_free"

    def __init__(self, *sets: str) -> None:
        """Makes an empty registry and loads the named built-in sets.

        Args:
            *sets: built-in set names ("chat", "review") to load at once.

        Raises:
            NotFoundError: an unknown set name (the registry is closed again).
        """
        super().__init__()
        h = ctypes.c_void_p()
        _check(lib.agt_registry_new(ctypes.byref(h)))
        self._own(h.value)
        self._providers: Dict[str, Tuple[Any, ProviderFn]] = {}  # name -> (CFUNCTYPE, fn)
        self._provider_exc: Optional[BaseException] = None  # the last provider's exception
        try:
            for s in sets:
                self.load_builtin(s)
        except BaseException:
            self.close()
            raise

    def load_builtin(self, set_name: str) -> None:
        """Loads a built-in tool set.

        Args:
            set_name: "chat" or "review".

        Raises:
            NotFoundError: an unknown set.
            FrozenError: the registry is frozen.
        """
        _check(lib.agt_registry_load_builtin(self._handle(), _b(set_name)))

    def load_json(self, tools: JSONInput) -> None:
        """Loads a tools.json document (the review tools' override format).

        Args:
            tools: the document (list or dict) or its JSON text.

        Raises:
            ParseError: not JSON.
            ValidationError: an entry is malformed (the message names it).
            FrozenError: the registry is frozen.
        """
        t = _json_text(tools)
        _check(lib.agt_registry_load_json(self._handle(), t, len(t)))

    def add(self, entry: JSONInput) -> None:
        """Adds one tool entry ({"name", "access", "definition", ...}).

        Args:
            entry: the entry as a dict or its JSON text.

        Raises:
            ValidationError: a malformed entry or one without a provider.
            FrozenError: the registry is frozen.
        """
        t = _json_text(entry)
        _check(lib.agt_registry_add_json(self._handle(), t, len(t)))

    def set_provider(self, name: str, fn: Optional[ProviderFn]) -> None:
        """Sets (or with None removes) the Python provider of a tool.

        fn(call) returns the result: a str (its text), a dict or list (a
        JSON result, its text the JSON), None (what fn set on the call), or
        anything else (its str()). Raising makes the call an error result
        with the exception's text; the exception is kept on the Result
        (Result.exception).

        Args:
            name: the tool name.
            fn: the provider, or None to remove it.

        Raises:
            FrozenError: the registry is frozen.
            InvalidArgumentError: an empty name.
        """
        if fn is None:
            _check(lib.agt_registry_set_provider(self._handle(), _b(name), None, None))
            self._providers.pop(name, None)
            return
        reg = self
        cb = fn  # not None here (a name of its own, so type checkers see it)

        def trampoline(call_ptr, _payload):
            try:
                call = Call(call_ptr)
                out = cb(call)
                if isinstance(out, str):
                    call.set_text(out)
                elif isinstance(out, (dict, list)):
                    call.set_json(out)
                    call.set_text(_json.dumps(out, ensure_ascii=False))
                elif out is not None:
                    call.set_text(str(out))
                return 0
            except BaseException as e:  # never unwind through C
                reg._provider_exc = e
                try:
                    lib.agt_call_set_error(call_ptr, _b("%s: %s" % (type(e).__name__, e)))
                except BaseException:
                    pass
                return -1

        cfn = FNPTR["agt_provider_fn"](trampoline)
        _check(lib.agt_registry_set_provider(self._handle(), _b(name), cfn, None))
        self._providers[name] = (cfn, fn)

    def remove(self, name: str) -> None:
        """Removes a tool.

        Args:
            name: the tool name.

        Raises:
            NotFoundError: no such tool.
            FrozenError: the registry is frozen.
        """
        _check(lib.agt_registry_remove(self._handle(), _b(name)))

    def set_description(self, name: str, description: str) -> None:
        """Replaces the description the model reads for a tool.

        Args:
            name: the tool name.
            description: the new description.

        Raises:
            NotFoundError: no such tool.
            FrozenError: the registry is frozen.
        """
        _check(lib.agt_registry_set_description(self._handle(), _b(name), _b(description)))

    def freeze(self) -> None:
        """Freezes the registry (no more changes; needed for concurrent use).

        Raises:
            AgtError: the library refused it.
        """
        _check(lib.agt_registry_freeze(self._handle()))

    @property
    def frozen(self) -> bool:
        """Whether the registry is frozen.

        Returns:
            True after freeze().
        """
        return bool(lib.agt_registry_is_frozen(self._handle()))

    def names(self) -> List[str]:
        """The tool names in registry order.

        Returns:
            A list of names.
        """
        h = self._handle()
        return [_s(lib.agt_registry_name_at(h, i)) or ""
                for i in range(lib.agt_registry_count(h))]

    def __len__(self) -> int:
        """The number of tools.

        Returns:
            How many tools the registry holds.
        """
        return lib.agt_registry_count(self._handle())

    def is_offered(self, name: str, phase: Union[int, str] = 0) -> bool:
        """Whether a tool is offered to the model in a phase.

        Args:
            name: the tool name.
            phase: a Phase (0: any).

        Returns:
            True when the tool exists and is offered in that phase.
        """
        return bool(lib.agt_registry_is_offered(self._handle(), _b(name), phase))

    def access(self, name: str) -> int:
        """A tool's access class.

        Args:
            name: the tool name.

        Returns:
            An AGT_ACCESS_* value (an Access).

        Raises:
            NotFoundError: no such tool.
        """
        return _check(lib.agt_registry_access(self._handle(), _b(name)))

    def export(self, fmt: str = "native", phase: int = 0) -> JSON:
        """The tool definitions for a model API.

        Args:
            fmt: "native", "openai", "anthropic" or "mcp".
            phase: a Phase whose tools to export (0: all).

        Returns:
            The exported list as Python objects.

        Raises:
            NotFoundError: an unknown format.
        """
        return _out_json(lib.agt_registry_export, self._handle(), _b(fmt), phase)


# ---- session ----------------------------------------------------------------


def _apply_decision(req: Any, out: Any) -> int:
    """An approver's answer, decision | (decision, reason) | (decision,
    reason, rule): sets the reason and rule on req, returns the decision."""
    reason = rule = None
    if isinstance(out, tuple):
        decision = out[0]
        reason = out[1] if len(out) > 1 else None
        rule = out[2] if len(out) > 2 else None
    else:
        decision = out
    if reason is not None:
        lib.agt_approval_set_reason(req, _b(reason))
    if rule is not None:
        lib.agt_approval_set_rule(req, _b(rule))
    return int(decision)


class Session(_Handle):
    """A session over a registry and a workspace root."""

    _free = "agt_session_free"

    def __init__(self, registry: Registry, root: str) -> None:
        """Makes a session over a registry and a workspace (manual mode).

        Args:
            registry: the tool registry; kept alive while the session lives.
            root: the workspace folder (an existing directory).

        Raises:
            NotFoundError: root does not exist or is not a directory.
        """
        super().__init__()
        h = ctypes.c_void_p()
        _check(lib.agt_session_new(ctypes.byref(h), registry._handle(), _b(root)))
        self._own(h.value, registry)
        self.registry = registry  # freed after the session (_Handle)
        self._cbs: Dict[str, Any] = {}
        self._guard = _Guard()
        self._changes: Optional[Changes] = None

    # -- state
    @property
    def root(self) -> str:
        """The workspace root (absolute, real path).

        Returns:
            The root folder.
        """
        return _s(lib.agt_session_root(self._handle())) or ""

    @property
    def mode(self) -> Mode:
        """The approval mode.

        Returns:
            A Mode member. Setting it takes a Mode, its int value or its name
            ("yolo"); type checkers see the Mode type only.
        """
        return Mode(lib.agt_session_mode(self._handle()))

    @mode.setter
    def mode(self, m: Union[Mode, int, str]) -> None:
        """Sets the approval mode.

        Args:
            m: a Mode, its int value or its name ("yolo").

        Raises:
            ValueError: not a mode (the message lists them).
        """
        _check(lib.agt_session_set_mode(self._handle(), _enum_arg(Mode, m, "Session.mode")))

    @property
    def phase(self) -> Phase:
        """The review phase whose tools are offered.

        Returns:
            A Phase member.
        """
        return Phase(lib.agt_session_phase(self._handle()))

    @phase.setter
    def phase(self, p: Union[Phase, int, str]) -> None:
        """Sets the review phase.

        Args:
            p: a Phase, its int value or its name.

        Raises:
            ValueError: not a phase.
        """
        _check(lib.agt_session_set_phase(self._handle(), _enum_arg(Phase, p, "Session.phase")))

    def set_edit_options(self, flags: int) -> None:
        """Sets how the edit tools work (AGT_EDIT_* flags, or-ed).

        Args:
            flags: AGT_EDIT_STRICT (Edit matches byte for byte only),
                AGT_EDIT_NO_STALE_CHECK (change files that changed on disk
                since they were read), AGT_EDIT_REQUIRE_READ (change only
                files read first), or 0 (the defaults).

        Raises:
            InvalidArgumentError: unknown flags.
        """
        _check(lib.agt_session_set_edit_options(self._handle(), flags))

    def todos(self) -> JSON:
        """The session's todo list.

        Returns:
            A list of {"title", "status"} dicts.
        """
        return _out_json(lib.agt_session_todos, self._handle())

    # -- calls
    def _result(self, rc: int, out: ctypes.c_void_p) -> Result:
        self._guard_after()
        if rc < 0:
            raise error_for(rc)
        r = Result(out.value)
        exc = getattr(self.registry, "_provider_exc", None)
        if exc is not None:
            self.registry._provider_exc = None
            r.exception = exc
        return r

    def _guard_after(self) -> None:
        self._guard.reraise()

    def dispatch(self, tool: str, args: JSONInput = None, call_id: Optional[str] = None) -> Result:
        """Runs a tool call through approval, hooks and the provider.

        Args:
            tool: the tool name.
            args: the arguments as a dict or JSON text (None: {}).
            call_id: the model's call id (needed to answer a pending call).

        Returns:
            The Result, which may be an error result (bad arguments, a
            refusal): the model reads it either way.

        Raises:
            PendingError: the call waits for approval (.call_id); answer it
                with answer() or answer_rule().
            AgtError: the call could not be made (e.g. a duplicate call id);
                an exception raised by a hook or the approver is re-raised.
        """
        out = ctypes.c_void_p()
        self.registry._provider_exc = None
        a = None if args is None else _json_text(args)
        rc = lib.agt_session_dispatch(self._handle(), _b(call_id), _b(tool), a, ctypes.byref(out))
        if rc == -7:
            self._guard_after()
            e = error_for(rc)
            e.call_id = call_id or ""
            raise e
        return self._result(rc, out)

    def pending(self) -> JSON:
        """The calls waiting for approval.

        Returns:
            A list of {"call_id", "tool", "arguments", "reason",
            "suggested_rule"} dicts.
        """
        return _out_json(lib.agt_session_pending, self._handle())

    def answer(self, call_id: str, decision: Union[Decision, int, str], reason: Optional[str] = None) -> Result:
        """Answers a pending call; an approved call runs now.

        Args:
            call_id: the pending call's id.
            decision: a Decision, its int value or its name ("approve").
            reason: the user's words, passed to the model.

        Returns:
            The call's Result (a rejection is an error result).

        Raises:
            ValueError: not a decision.
            NotFoundError: no pending call with that id.
        """
        out = ctypes.c_void_p()
        self.registry._provider_exc = None
        decision = _enum_arg(Decision, decision, "Session.answer: decision")
        rc = lib.agt_session_answer(self._handle(), _b(call_id), decision, _b(reason),
                                    ctypes.byref(out))
        return self._result(rc, out)

    def answer_rule(self, call_id: str, rule: str, reason: Optional[str] = None) -> Result:
        """Approves a pending call and stores rule as a session allow rule.

        Args:
            call_id: the pending call's id.
            rule: the allow rule to keep for the session (e.g. "Bash(git *)").
            reason: the user's words.

        Returns:
            The call's Result.

        Raises:
            NotFoundError: no pending call with that id.
            ValidationError: a malformed rule (the call stays pending).
        """
        out = ctypes.c_void_p()
        self.registry._provider_exc = None
        rc = lib.agt_session_answer_rule(self._handle(), _b(call_id), _b(rule), _b(reason),
                                         ctypes.byref(out))
        return self._result(rc, out)

    # -- rules
    def add_rule(self, kind: Union[RuleKind, int, str], rule: str) -> None:
        """Adds an allow, ask or deny rule.

        Args:
            kind: a RuleKind, its int value or its name ("deny").
            rule: Tool, Tool(pattern), or * (every tool).

        Raises:
            ValueError: not a rule kind.
            ValidationError: a malformed rule (the message says why).
        """
        _check(lib.agt_session_add_rule(self._handle(), _enum_arg(RuleKind, kind,
                                                                  "Session.add_rule: kind"),
                                        _b(rule)))

    def allow(self, rule: str) -> None:
        """Adds an allow rule.

        Args:
            rule: Tool, Tool(pattern) or *.

        Raises:
            ValidationError: a malformed rule.
        """
        self.add_rule(0, rule)

    def ask(self, rule: str) -> None:
        """Adds an ask rule.

        Args:
            rule: Tool, Tool(pattern) or *.

        Raises:
            ValidationError: a malformed rule.
        """
        self.add_rule(1, rule)

    def deny(self, rule: str) -> None:
        """Adds a deny rule.

        Args:
            rule: Tool, Tool(pattern) or *.

        Raises:
            ValidationError: a malformed rule.
        """
        self.add_rule(2, rule)

    def load_rules(self, rules: JSONInput) -> None:
        """Adds the rules of {"allow": [...], "ask": [...], "deny": [...]}, all or
        nothing.

        Args:
            rules: the document as a dict or its JSON text.

        Raises:
            ParseError: not JSON.
            ValidationError: not an object, a list that is not an array of
                strings, or a malformed rule (none is added).
        """
        t = _json_text(rules)
        _check(lib.agt_session_load_rules(self._handle(), t, len(t)))

    def rules(self) -> JSON:
        """The rule lists.

        Returns:
            {"allow", "ask", "deny", "session"}: lists of rule texts.
        """
        return _out_json(lib.agt_session_rules, self._handle())

    # -- callbacks
    def set_approver(self, fn: Optional[ApproverFn]) -> None:
        """Sets (or with None removes) the synchronous approver.

        fn(request) gets the pending-item dict and returns a decision, or
        (decision, reason), or (decision, reason, rule). An exception
        rejects the call and is re-raised after dispatch() returns.

        Args:
            fn: the approver, or None (calls then wait as pending).
        """
        if fn is None:
            _check(lib.agt_session_set_approver(self._handle(), None, None))
            self._cbs.pop("approver", None)
            return
        guard = self._guard
        cb = fn  # not None here (a name of its own, so type checkers see it)

        def trampoline(req, _payload):
            try:
                return _apply_decision(req, cb(_json.loads(_s(lib.agt_approval_json(req)) or "{}")))
            except BaseException as e:
                guard.keep(e)
                return 2  # AGT_DECISION_REJECT

        cfn = FNPTR["agt_approver_fn"](trampoline)
        _check(lib.agt_session_set_approver(self._handle(), cfn, None))
        self._cbs["approver"] = cfn

    def _set_hook(self, which: str, setter: Any, fn: Optional[HookFn]) -> None:
        if fn is None:
            _check(setter(self._handle(), None, None))
            self._cbs.pop(which, None)
            return
        guard = self._guard
        cb = fn  # not None here (a name of its own, so type checkers see it)

        def trampoline(h, _payload):
            try:
                cb(Hook(h))
                return 0
            except BaseException as e:
                guard.keep(e)
                return -1

        cfn = FNPTR["agt_hook_fn"](trampoline)
        _check(setter(self._handle(), cfn, None))
        self._cbs[which] = cfn

    def set_pre_hook(self, fn: Optional[HookFn]) -> None:
        """Sets (or with None removes) the pre-tool-use hook.

        fn(hook) may call hook.deny(), hook.rewrite() or hook.add_context().
        An exception counts as a failed hook (the call goes on, the result
        carries a note) and is re-raised after dispatch() returns.

        Args:
            fn: the hook, or None.
        """
        self._set_hook("pre", lib.agt_session_set_pre_hook, fn)

    def set_post_hook(self, fn: Optional[HookFn]) -> None:
        """Sets (or with None removes) the post-tool-use hook.

        fn(hook) may call hook.append(). An exception counts as a failed
        hook and is re-raised after dispatch() returns.

        Args:
            fn: the hook, or None.
        """
        self._set_hook("post", lib.agt_session_set_post_hook, fn)

    def set_hook_budget(self, ms: int) -> None:
        """Sets the time budget of one hook call.

        Args:
            ms: milliseconds, 1 or more (default 5000); a hook that returns
                later is ignored as failed.

        Raises:
            InvalidArgumentError: ms below 1.
        """
        _check(lib.agt_session_set_hook_budget(self._handle(), ms))

    def set_tool_output_callback(
            self, fn: Optional[Callable[[str, str, Optional[bytes]], Any]]) -> None:
        """Sets (or with None removes) the live-output callback of tool calls.

        fn(call_id, tool, data) gets the output of a running foreground Bash
        call as the command wrote it (bytes), or None for a heartbeat about
        every 100 ms; a truthy return interrupts the call (its result then
        reads "Command was interrupted by the user: ..."). An exception
        interrupts the call and is re-raised after dispatch returns.

        Args:
            fn: the callback, or None to remove it.
        """
        if fn is None:
            _check(lib.agt_session_set_tool_output_callback(self._handle(), None, None))
            self._cbs.pop("tool_output", None)
            return
        guard = self._guard
        cb: Callable[[str, str, Optional[bytes]], Any] = fn

        def trampoline(call_id: Any, tool: Any, data: Any, n: int, _payload: Any) -> int:
            try:
                chunk = ctypes.string_at(data, n) if data is not None else None
                return 1 if cb(_s(call_id) or "", _s(tool) or "", chunk) else 0
            except BaseException as e:
                guard.keep(e)
                return 1

        cfn = FNPTR["agt_tool_output_fn"](trampoline)
        _check(lib.agt_session_set_tool_output_callback(self._handle(), cfn, None))
        self._cbs["tool_output"] = cfn

    def set_clock(self, fn: Optional[Callable[[], int]]) -> None:
        """Sets (or with None restores) the clock of timers and cron.

        fn() returns milliseconds since the epoch. An exception is kept
        (re-raised after the next call) and reads as 0.

        Args:
            fn: the clock, or None for the real clock.
        """
        if fn is None:
            _check(lib.agt_session_set_clock(self._handle(), None, None))
            self._cbs.pop("clock", None)
            return
        guard = self._guard
        cb = fn  # not None here (a name of its own, so type checkers see it)

        def trampoline(_payload):
            try:
                return int(cb())
            except BaseException as e:
                guard.keep(e)
                return 0

        cfn = FNPTR["agt_clock_fn"](trampoline)
        _check(lib.agt_session_set_clock(self._handle(), cfn, None))
        self._cbs["clock"] = cfn

    def set_relocator(self, fn: Optional[RelocatorFn], max_attempts: int = 1) -> None:
        """Sets (or with None removes) the review comments' relocator.

        fn(path, file_diff, snippet, suggestion) returns a new snippet to
        try, or None to give up.

        Args:
            fn: the relocator, or None.
            max_attempts: how many times it may be asked per comment.

        Raises:
            InvalidArgumentError: max_attempts out of range.
        """
        if fn is None:
            _check(lib.agt_session_set_relocator(self._handle(), None, 1, None))
            self._cbs.pop("relocator", None)
            return
        cfn = _relocator(fn, self._guard)
        _check(lib.agt_session_set_relocator(self._handle(), cfn, max_attempts, None))
        self._cbs["relocator"] = cfn

    # -- plan, save, tasks
    def set_plan_file(self, path: str) -> None:
        """Sets the plan file of plan mode.

        Args:
            path: absolute, or relative to the root.

        Raises:
            DeniedError: a symbolic link, or a way out of the root through one.
            InvalidArgumentError: a folder, a special file or an empty path.
        """
        _check(lib.agt_session_set_plan_file(self._handle(), _b(path)))

    @property
    def plan_file(self) -> Optional[str]:
        """The plan file.

        Returns:
            Its absolute path; None until set or chosen by EnterPlanMode.
        """
        return _s(lib.agt_session_plan_file(self._handle()))

    def save(self) -> JSON:
        """The session's state (mode, rules, todo list, plan file, cron, ...).

        Returns:
            A dict for restore().
        """
        return _out_json(lib.agt_session_save, self._handle())

    def restore(self, state: JSONInput) -> None:
        """Restores a state from save(), all or nothing.

        Args:
            state: the dict or its JSON text.

        Raises:
            ParseError: not a valid state document (nothing changed).
            UnsupportedError: a "format" newer than this library reads.
        """
        t = _json_text(state)
        _check(lib.agt_session_restore(self._handle(), t, len(t)))

    def set_idle(self, idle: bool) -> None:
        """Tells the session whether the user is idle (cron fires wait for it).

        Args:
            idle: True when no turn is running.
        """
        _check(lib.agt_session_set_idle(self._handle(), 1 if idle else 0))

    def tick(self, now_ms: int = -1) -> JSON:
        """Runs due timers: background task ends and cron fires.

        Args:
            now_ms: the time in ms since the epoch (-1: the session's clock).

        Returns:
            The list of events (dicts) that happened.
        """
        ev = _out_json(lib.agt_session_tick, self._handle(), now_ms)
        self._guard_after()
        return ev

    # -- scheduled prompts, the host's own view (no model call, no approval)
    def cron_list(self) -> JSON:
        """The cron jobs, as the host sees them (no model call, no approval).

        Returns:
            A list of dicts with id, cron, prompt, recurring, paused, created,
            last_fire and next_fire (unix seconds or None).
        """
        return _out_json(lib.agt_session_cron_list, self._handle())

    def cron_delete(self, job_id: str) -> None:
        """Deletes a cron job.

        Args:
            job_id: the job's 8-hex-digit id.

        Raises:
            NotFoundError: no such job.
        """
        _check(lib.agt_session_cron_delete(self._handle(), _b(job_id)))

    def cron_set_paused(self, job_id: str, paused: bool = True) -> None:
        """Pauses or resumes a cron job.

        Args:
            job_id: the job's id.
            paused: True to pause, False to resume (missed fires dropped).

        Raises:
            NotFoundError: no such job.
        """
        _check(lib.agt_session_cron_set_paused(self._handle(), _b(job_id), 1 if paused else 0))

    def poll_fds(self) -> List[int]:
        """The file descriptors to poll for background task output.

        Returns:
            A list of descriptors (read side).
        """
        n = ctypes.c_size_t()
        _check(lib.agt_session_poll_fds(self._handle(), None, 0, ctypes.byref(n)))
        arr = (ctypes.c_int * max(n.value, 1))()
        _check(lib.agt_session_poll_fds(self._handle(), arr, n.value, ctypes.byref(n)))
        return list(arr[: n.value])

    def next_deadline(self, now_ms: int = -1) -> Optional[int]:
        """When tick() next has work to do.

        Args:
            now_ms: the time in ms since the epoch (-1: the session's clock).

        Returns:
            The deadline in ms since the epoch, or None when nothing waits.
        """
        out = ctypes.c_int64()
        _check(lib.agt_session_next_deadline(self._handle(), now_ms, ctypes.byref(out)))
        return None if out.value == -1 else out.value

    def set_task_log_dir(self, path: str) -> None:
        """Sets the folder of background task logs.

        Args:
            path: an absolute folder.

        Raises:
            InvalidArgumentError: an empty or relative path.
            StateError: a command already ran.
        """
        _check(lib.agt_session_set_task_log_dir(self._handle(), _b(path)))

    def set_max_tasks(self, n: int) -> None:
        """Caps how many background tasks run at once.

        Args:
            n: the cap (see include/agenttools/session.h for the range).

        Raises:
            InvalidArgumentError: n out of range.
            StateError: a command already ran.
        """
        _check(lib.agt_session_set_max_tasks(self._handle(), n))

    # -- what the tools may show and reach
    def add_sensitive_pattern(self, pattern: str) -> None:
        """Adds a sensitive-file pattern (a leading '!' makes an exception).

        Args:
            pattern: a gitignore-style pattern.

        Raises:
            InvalidArgumentError: an empty or malformed pattern.
        """
        _check(lib.agt_session_add_sensitive_pattern(self._handle(), _b(pattern)))

    def remove_sensitive_pattern(self, pattern: str) -> None:
        """Removes a built-in or added pattern by its text.

        Args:
            pattern: the pattern's text.

        Raises:
            NotFoundError: no such pattern.
        """
        _check(lib.agt_session_remove_sensitive_pattern(self._handle(), _b(pattern)))

    def sensitive_patterns(self) -> JSON:
        """The sensitive-file patterns in force.

        Returns:
            A list of pattern texts.
        """
        return _out_json(lib.agt_session_sensitive_patterns, self._handle())

    def check_sensitive(self, path: str, content: Union[str, bytes, None] = None) -> Optional[str]:
        """Whether a file would be withheld as sensitive.

        Args:
            path: the file's path.
            content: its content (str or bytes), or None to judge by name.

        Returns:
            The reason it is sensitive, or None.
        """
        c = None if content is None else (content if isinstance(content, bytes)
                                          else content.encode("utf-8"))
        why = ctypes.c_void_p()
        rc = lib.agt_session_check_sensitive(self._handle(), _b(path), c,
                                             0 if c is None else len(c), ctypes.byref(why))
        if rc < 0:
            _check(rc)
        return _s(ctypes.string_at(why.value)) if rc == 1 and why.value else None

    def set_fetch_private(self, allow: bool) -> None:
        """Lets FetchURL reach loopback, link-local and private addresses.

        Args:
            allow: True to allow them (default False).
        """
        _check(lib.agt_session_set_fetch_private(self._handle(), 1 if allow else 0))

    def set_background_on_timeout(self, on: bool) -> None:
        """Whether a foreground Bash command that times out moves to the
        background instead of being stopped.

        Args:
            on: True to move it.
        """
        _check(lib.agt_session_set_background_on_timeout(self._handle(), 1 if on else 0))

    # -- sandbox
    def set_sandbox(self, mode: Union[int, str], network: int = 0, enforce: int = 0) -> None:
        """Sets the sandbox Bash runs in.

        Args:
            mode: a SandboxMode or its name ("read-only", "workspace-write",
                "off").
            network: a SandboxNetwork.
            enforce: a SandboxEnforce (REQUIRE: fail when unavailable).

        Raises:
            InvalidArgumentError: a value out of range.
            UnsupportedError: no sandbox support, or REQUIRE when the kernel
                lacks a piece the mode needs.
        """
        if isinstance(mode, str):
            mode = sandbox_mode_parse(mode)
        _check(lib.agt_session_set_sandbox(self._handle(), _clamp(mode, (-2**31, 2**31 - 1)),
                                           _clamp(network, (-2**31, 2**31 - 1)),
                                           _clamp(enforce, (-2**31, 2**31 - 1))))

    def sandbox(self) -> Tuple[int, int, int]:
        """The sandbox settings in force.

        Returns:
            (mode, network, enforce).
        """
        m, n, e = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
        _check(lib.agt_session_sandbox(self._handle(), ctypes.byref(m), ctypes.byref(n),
                                       ctypes.byref(e)))
        return m.value, n.value, e.value

    def add_writable_root(self, path: str) -> None:
        """Adds a folder the workspace-write sandbox may write besides the root.

        Args:
            path: an absolute, existing directory.

        Raises:
            InvalidArgumentError: a relative path.
            NotFoundError: not an existing directory.
        """
        _check(lib.agt_session_add_writable_root(self._handle(), _b(path)))

    def add_readable_root(self, path: str) -> None:
        """Adds a folder the file tools read (not write) without asking.

        Args:
            path: an absolute, existing directory.

        Raises:
            InvalidArgumentError: a relative path.
            NotFoundError: not an existing directory.
        """
        _check(lib.agt_session_add_readable_root(self._handle(), _b(path)))

    def set_sandbox_auto_allow(self, on: bool) -> None:
        """Whether Bash commands run inside the sandbox without asking.

        Args:
            on: True to run them without asking.
        """
        _check(lib.agt_session_set_sandbox_auto_allow(self._handle(), 1 if on else 0))

    def sandbox_status(self) -> JSON:
        """The sandbox's state and what the kernel offers.

        Returns:
            A dict (see include/agenttools/sandbox.h).
        """
        return _out_json(lib.agt_session_sandbox_status, self._handle())

    # -- review
    def open_review(self, repo_path: Optional[str] = None, mode: int = 0, from_rev: Optional[str] = None, to_rev: Optional[str] = None) -> None:
        """Opens the change set the review tools read.

        Args:
            repo_path: the repository (None: the root).
            mode: a ChangesMode.
            from_rev: the base revision (for the modes that take one).
            to_rev: the target revision.

        Raises:
            NotFoundError: no such repository or revision.
            GitError: git failed.
            LimitError: the change set is too large.
        """
        _check(lib.agt_session_open_review(self._handle(), _b(repo_path), mode, _b(from_rev),
                                           _b(to_rev)))
        old, self._changes = self._changes, None
        self._undepend(old)

    def set_changes(self, changes: Optional[Changes]) -> None:
        """Sets (or with None clears) the change set of the review tools.

        Args:
            changes: an open Changes, kept alive while the session uses it.
        """
        _check(lib.agt_session_set_changes(self._handle(),
                                           None if changes is None else changes._handle()))
        old, self._changes = self._changes, changes  # borrowed: freed after the session
        self._depend(changes)
        self._undepend(old)

    def set_review_file(self, path: str) -> None:
        """Sets the file the review is about (for file_read of the main task).

        Args:
            path: the file's path in the change set.

        Raises:
            InvalidArgumentError: an empty path.
        """
        _check(lib.agt_session_set_review_file(self._handle(), _b(path)))

    @property
    def review_file(self) -> Optional[str]:
        """The file under review.

        Returns:
            Its path, or None.
        """
        return _s(lib.agt_session_review_file(self._handle()))

    def set_turn_thinking(self, text: Optional[str]) -> None:
        """Sets the model's thinking of this turn (kept with its comments).

        Args:
            text: the thinking text, or None.
        """
        _check(lib.agt_session_set_turn_thinking(self._handle(), _b(text)))

    @property
    def review_done(self) -> bool:
        """Whether task_done was called.

        Returns:
            True once the review is done.
        """
        return bool(lib.agt_session_review_done(self._handle()))

    @property
    def review_state(self) -> Optional[str]:
        """The review's state as text.

        Returns:
            The state name.
        """
        return _s(lib.agt_session_review_state(self._handle()))

    def comments(self) -> JSON:
        """The review comments made so far.

        Returns:
            A list of comment dicts.
        """
        return _out_json(lib.agt_session_comments, self._handle())

    def clear_comments(self) -> None:
        """Drops the review comments made so far."""
        _check(lib.agt_session_clear_comments(self._handle()))

    def _freed(self) -> None:
        self._cbs = {}  # the C session is gone: nothing calls them any more


# ---- schema -----------------------------------------------------------------


class Schema(_Handle):
    """A compiled JSON Schema. Schema(obj_or_text, draft=0, format_assertion=False,
    resources={uri: doc}, resolver=fn(uri) -> doc or None)."""

    _free = "agt_schema_free"

    def __init__(self, schema: JSONInput, draft: int = 0, format_assertion: bool = False, resources: Optional[Dict[str, JSONInput]] = None, resolver: Optional[Callable[[str], Any]] = None) -> None:
        """Compiles a JSON Schema.

        Args:
            schema: the schema as Python objects or JSON text.
            draft: a Draft used when the schema has no $schema (0: auto).
            format_assertion: check "format" as an assertion.
            resources: {uri: document} for $ref to other documents.
            resolver: resolver(uri) returns the document for uri, or None.

        Raises:
            ParseError: not JSON.
            ValidationError: not a valid schema (the message points into it).
            NotFoundError: an unresolvable $ref.
            Exception: an exception of the resolver is re-raised.
        """
        super().__init__()
        t = _json_text(schema)
        h = ctypes.c_void_p()
        if not draft and not format_assertion and not resources and resolver is None:
            _check(lib.agt_schema_compile(ctypes.byref(h), t, len(t)))
            self._own(h.value)
            return
        opts = ctypes.c_void_p()
        _check(lib.agt_schema_options_new(ctypes.byref(opts)))
        guard = _Guard()
        try:
            if draft:
                _check(lib.agt_schema_options_set_draft(opts, draft))
            if format_assertion:
                _check(lib.agt_schema_options_set_format_assertion(opts, 1))
            for uri, doc in (resources or {}).items():
                d = _json_text(doc)
                _check(lib.agt_schema_options_add_resource(opts, _b(uri), d, len(d)))
            cfn = None
            if resolver is not None:
                cb = resolver  # not None here (a name of its own, so type checkers see it)

                def trampoline(uri, res, _payload):
                    try:
                        doc = cb(_s(uri) or "")
                        if doc is not None:
                            d = _json_text(doc)
                            _check(lib.agt_schema_resolution_provide(res, d, len(d)))
                        return 0
                    except BaseException as e:
                        guard.keep(e)
                        return 1

                cfn = FNPTR["agt_schema_resolve_fn"](trampoline)
                _check(lib.agt_schema_options_set_resolver(opts, cfn, None))
            rc = lib.agt_schema_compile_with(ctypes.byref(h), t, len(t), opts)
            guard.reraise()
            _check(rc)
            self._own(h.value)
        finally:
            lib.agt_schema_options_free(opts)

    def validate(self, instance: JSONInput) -> List[Dict[str, Any]]:
        """Validates an instance.

        Args:
            instance: the instance as Python objects or JSON text.

        Returns:
            [] when valid, else the violations (dicts with instance_path,
            message, ...).

        Raises:
            ParseError: instance text that is not JSON.
        """
        t = _json_text(instance)
        out = ctypes.c_void_p()
        rc = lib.agt_schema_validate(self._handle(), t, len(t), ctypes.byref(out))
        errors = _take(out)
        if rc == 0:
            return []
        if rc == -4:
            return _json.loads(errors) if errors else [{"message": _s(lib.agt_error_message())}]
        raise error_for(rc)

    def is_valid(self, instance: JSONInput) -> bool:
        """Whether an instance is valid.

        Args:
            instance: the instance as Python objects or JSON text.

        Returns:
            True when it has no violations.

        Raises:
            ParseError: instance text that is not JSON.
        """
        return not self.validate(instance)


# ---- diff, changes ----------------------------------------------------------


def _relocator(fn: RelocatorFn, guard: _Guard) -> Any:
    cb = fn  # not None here (a name of its own, so type checkers see it)
    def trampoline(path, file_diff, snippet, suggestion, r, _payload):
        try:
            new = cb(_s(path), _s(file_diff), _s(snippet), _s(suggestion))
            if new is not None:
                t = _bytes(new, "the relocator's new snippet")
                _check(lib.agt_diff_relocation_provide(r, t, len(t)))
            return 0
        except BaseException as e:
            guard.keep(e)
            return 1

    return FNPTR["agt_diff_relocate_fn"](trampoline)


class Diff(_Handle):
    """A parsed unified diff (Diff(text)) or a repository's (Diff.from_repo())."""

    _free = "agt_diff_free"

    def __init__(self, text: Union[str, bytes, None] = None, _borrowed: Any = None, _owner: Optional[Changes] = None) -> None:
        """Parses a unified diff.

        Args:
            text: the diff text (None: empty).
            _borrowed: internal (a diff owned by a Changes).
            _owner: internal (that Changes).

        Raises:
            ParseError: malformed diff.
            LimitError: 4 GiB or more.
        """
        super().__init__()
        self._guard = _Guard()
        self._reloc = None
        if _borrowed is not None:
            self._own(_borrowed, _owner, free=False)  # the owner frees it
            self._owner = _owner
            return
        t = _bytes(text or "", "Diff: text")
        h = ctypes.c_void_p()
        _check(lib.agt_diff_parse(ctypes.byref(h), t, len(t)))
        self._own(h.value)

    @classmethod
    def from_repo(cls, repo_path: str, mode: int = 0, from_rev: Optional[str] = None, to_rev: Optional[str] = None) -> Diff:
        """The diff of a repository's changes.

        Args:
            repo_path: the repository.
            mode: a ChangesMode.
            from_rev: the base revision.
            to_rev: the target revision.

        Returns:
            A new Diff.

        Raises:
            InvalidArgumentError: an unknown mode or revisions that do not fit
                it.
            NotFoundError: not inside a repository, or a revision that does
                not resolve.
            GitError: git failed.
        """
        h = ctypes.c_void_p()
        _check(lib.agt_diff_from_repo(ctypes.byref(h), _b(repo_path), mode, _b(from_rev),
                                      _b(to_rev)))
        d = cls.__new__(cls)
        _Handle.__init__(d)
        d._guard, d._reloc = _Guard(), None
        d._own(h.value)
        return d

    def to_json(self) -> JSON:
        """The diff as a document.

        Returns:
            A dict of files and hunks.
        """
        return _out_json(lib.agt_diff_to_json, self._handle())

    def files(self) -> List[Dict[str, Any]]:
        """The files of the diff.

        Returns:
            A list of {"path", "old_path", "new_path", "status", "binary"}.
        """
        h = self._handle()
        out = []
        for i in range(lib.agt_diff_file_count(h)):
            out.append({"path": _s(lib.agt_diff_file_path(h, i)),
                        "old_path": _s(lib.agt_diff_file_old_path(h, i)),
                        "new_path": _s(lib.agt_diff_file_new_path(h, i)),
                        "status": lib.agt_diff_file_status(h, i),
                        "binary": bool(lib.agt_diff_file_is_binary(h, i))})
        return out

    def __len__(self) -> int:
        """The number of files.

        Returns:
            How many files the diff has.
        """
        return lib.agt_diff_file_count(self._handle())

    def file_index(self, path: str) -> int:
        """The index of a file.

        Args:
            path: the file's path.

        Returns:
            Its position in files().

        Raises:
            NotFoundError: not in the diff.
        """
        out = ctypes.c_size_t()
        _check(lib.agt_diff_file_index(self._handle(), _b(path), ctypes.byref(out)))
        return out.value

    def file_text(self, path: str) -> Optional[str]:
        """One file's part of the diff as text.

        Args:
            path: the file's path.

        Returns:
            The text.

        Raises:
            NotFoundError: not in the diff.
        """
        out = ctypes.c_void_p()
        _check(lib.agt_diff_file_text(self._handle(), _b(path), ctypes.byref(out)))
        return _take(out)

    def set_content(self, path: str, text: Union[str, bytes]) -> None:
        """Sets a file's new content (for anchoring outside the hunks).

        Args:
            path: the file's path.
            text: its content.

        Raises:
            InvalidArgumentError: an empty path.
            LimitError: text over 4 GiB.
        """
        t = _bytes(text, "Diff.set_content: text")
        _check(lib.agt_diff_set_content(self._handle(), _b(path), t, len(t)))

    def content(self, path: str) -> str:
        """A file's content as set or read.

        Args:
            path: the file's path.

        Returns:
            The content (invalid UTF-8 replaced).

        Raises:
            NotFoundError: no content for that file.
        """
        p = ctypes.c_void_p()
        n = ctypes.c_size_t()
        _check(lib.agt_diff_content(self._handle(), _b(path), ctypes.byref(p), ctypes.byref(n)))
        if not p.value:
            return ""
        return ctypes.string_at(p.value, n.value).decode("utf-8", "replace")

    def anchor(self, path: str, snippet: str) -> JSON:
        """Anchors a comment's code snippet to lines of a file.

        Args:
            path: the file's path.
            snippet: the code the comment quotes.

        Returns:
            The anchoring result (dict).

        Raises:
            CancelledError: the relocator gave up (returned non-zero).
            Exception: an exception of the relocator is re-raised.
        """
        out = ctypes.c_void_p()
        rc = lib.agt_diff_anchor(self._handle(), _b(path), _b(snippet), ctypes.byref(out))
        self._guard.reraise()
        _check(rc)
        return _take_json(out)

    def anchor_batch(self, comments: JSONInput) -> JSON:
        """Anchors several comments at once.

        Args:
            comments: a list of {"path", "existing_code", ...} or its JSON text.

        Returns:
            The list of anchoring results.

        Raises:
            ParseError: not JSON.
            CancelledError: the relocator gave up.
            Exception: an exception of the relocator is re-raised.
        """
        t = _json_text(comments)
        out = ctypes.c_void_p()
        rc = lib.agt_diff_anchor_batch(self._handle(), t, len(t), ctypes.byref(out))
        self._guard.reraise()
        _check(rc)
        return _take_json(out)

    def set_relocator(self, fn: Optional[RelocatorFn], max_attempts: int = 1) -> None:
        """Sets (or with None removes) the relocator of this diff.

        fn(path, file_diff, snippet, suggestion) returns a new snippet or
        None; an exception cancels the anchoring and is re-raised from
        anchor().

        Args:
            fn: the relocator, or None.
            max_attempts: how many times it may be asked per comment.

        Raises:
            InvalidArgumentError: max_attempts out of range.
        """
        if fn is None:
            _check(lib.agt_diff_set_relocator(self._handle(), None, 1, None))
            self._reloc = None
            return
        cfn = _relocator(fn, self._guard)
        _check(lib.agt_diff_set_relocator(self._handle(), cfn, max_attempts, None))
        self._reloc = cfn


class Changes(_Handle):
    """A git change set: Changes(repo_path, mode=AGT_CHANGES_WORKSPACE, from_rev, to_rev)."""

    _free = "agt_changes_free"

    def __init__(self, repo_path: str, mode: int = 0, from_rev: Optional[str] = None, to_rev: Optional[str] = None) -> None:
        """Opens a git change set.

        Args:
            repo_path: the repository.
            mode: a ChangesMode (0: the workspace against HEAD).
            from_rev: the base revision.
            to_rev: the target revision.

        Raises:
            InvalidArgumentError: an unknown mode or revisions that do not fit
                it.
            NotFoundError: not inside a repository, or a revision that does
                not resolve.
            GitError: git failed.
        """
        super().__init__()
        h = ctypes.c_void_p()
        _check(lib.agt_changes_open(ctypes.byref(h), _b(repo_path), mode, _b(from_rev),
                                    _b(to_rev)))
        self._own(h.value)

    @property
    def diff(self) -> Diff:
        """The change set's diff, borrowed: valid while this object is open.

        Returns:
            A Diff that keeps this Changes alive.
        """
        return Diff(_borrowed=lib.agt_changes_diff(self._handle()), _owner=self)

    def info(self) -> JSON:
        """What the change set compares.

        Returns:
            A dict (mode, revisions, ...).
        """
        return _out_json(lib.agt_changes_info, self._handle())

    def list_files(self) -> JSON:
        """The changed files.

        Returns:
            A list of file dicts.
        """
        return _out_json(lib.agt_changes_list_files, self._handle())

    def read_file(self, path: str) -> str:
        """A file's content on the new side.

        Args:
            path: the file's path.

        Returns:
            The content (invalid UTF-8 replaced).

        Raises:
            NotFoundError: not a file of the reviewed tree.
            LimitError: over 64 MiB.
            AgtIOError: the file could not be read.
        """
        out = ctypes.c_void_p()
        n = ctypes.c_size_t()
        _check(lib.agt_changes_read_file(self._handle(), _b(path), ctypes.byref(out),
                                         ctypes.byref(n)))
        return (_take_bytes(out, n.value) or b"").decode("utf-8", "replace")


# ---- cron -------------------------------------------------------------------


class Cron(_Handle):
    """A parsed 5-field cron expression."""

    _free = "agt_cron_free"

    def __init__(self, expr: str) -> None:
        """Parses a 5-field cron expression.

        Args:
            expr: minute hour day-of-month month day-of-week.

        Raises:
            ParseError: malformed or never fires (the message names the field
                and the token).
        """
        super().__init__()
        h = ctypes.c_void_p()
        _check(lib.agt_cron_parse(ctypes.byref(h), _b(expr)))
        self._own(h.value)

    def next(self, after_unix_s: int, tz: Optional[str] = None) -> int:
        """The first fire time strictly after a time.

        Args:
            after_unix_s: seconds since the epoch.
            tz: an IANA zone (None: the process's time zone).

        Returns:
            The fire time in seconds since the epoch.

        Raises:
            InvalidArgumentError: after_unix_s out of range, or a time the
                system cannot convert.
            NotFoundError: an unknown zone (tz), or nothing fires within 400
                years.
        """
        out = ctypes.c_int64()
        if tz is None:
            _check(lib.agt_cron_next(self._handle(), int(after_unix_s), ctypes.byref(out)))
        else:
            _check(lib.agt_cron_next_tz(self._handle(), int(after_unix_s), _b(tz),
                                        ctypes.byref(out)))
        return out.value

    def describe(self) -> Optional[str]:
        """The schedule in words.

        Returns:
            E.g. "every 5 minutes".
        """
        out = ctypes.c_void_p()
        _check(lib.agt_cron_describe(self._handle(), ctypes.byref(out)))
        return _take(out)

    @property
    def expression(self) -> Optional[str]:
        """The expression as parsed.

        Returns:
            The expression's text.
        """
        return _s(lib.agt_cron_expression(self._handle()))


# ---- model and agent ----------------------------------------------------------


class Model(_Handle):
    """A model client. Model(protocol) is an HTTP model (AGT_PROTOCOL_OPENAI or
    AGT_PROTOCOL_ANTHROPIC); Model.replay(path) answers from a JSONL file;
    Model.host(fn) calls fn(request: dict) -> canonical response (dict or JSON
    text). An exception in fn fails the request with its text (AGT_ERROR) and
    is re-raised when the C call (complete() or Agent.run()) returns."""

    _free = "agt_model_free"

    def __init__(self, protocol: int = 0, base_url: Optional[str] = None, api_key: Optional[str] = None, name: Optional[str] = None, _h: Any = None) -> None:
        """Makes an HTTP model client.

        Args:
            protocol: a Protocol (OPENAI or ANTHROPIC).
            base_url: the API's base URL.
            api_key: the API key.
            name: the model name.
            _h: internal (an agt_model * to take).

        Raises:
            InvalidArgumentError: an unknown protocol, or a base_url that is not
                http:// or https://.
        """
        super().__init__()
        self._guard = _Guard()
        self._cbs: Dict[str, Any] = {}
        if _h is not None:
            self._own(_h)
            return
        h = ctypes.c_void_p()
        _check(lib.agt_model_new(ctypes.byref(h), protocol))
        self._own(h.value)
        if base_url is not None:
            self.set_base_url(base_url)
        if api_key is not None:
            self.set_api_key(api_key)
        if name is not None:
            self.set_name(name)

    @classmethod
    def replay(cls, path: str) -> Model:
        """A model that answers from a JSONL file, one line per request.

        Args:
            path: the file.

        Returns:
            A new Model.

        Raises:
            AgtIOError: the file cannot be read.
            ParseError: a line is not a JSON object.
        """
        h = ctypes.c_void_p()
        _check(lib.agt_model_new_replay(ctypes.byref(h), _b(path)))
        return cls(_h=h.value)

    @classmethod
    def host(cls, fn: Callable[[JSON], JSONInput]) -> Model:
        """A model whose answers come from fn(request) -> canonical response.

        Args:
            fn: gets the request dict, returns a response dict or its JSON
                text; an exception fails the request and is re-raised when
                complete() or Agent.run() returns.

        Returns:
            A new Model.
        """
        m = cls.__new__(cls)
        _Handle.__init__(m)
        m._guard, m._cbs = _Guard(), {}
        guard = m._guard
        cb = fn  # not None here (a name of its own, so type checkers see it)

        def trampoline(reply, request, _payload):
            try:
                out = cb(_json.loads(_s(request) or "{}"))
                t = _json_text(out)
                return lib.agt_model_reply_set(reply, t, len(t))
            except BaseException as e:
                guard.keep(e)
                try:
                    lib.agt_model_reply_set_error(reply, _b("%s: %s" % (type(e).__name__, e)))
                except BaseException:
                    pass
                return -1

        cfn = FNPTR["agt_model_host_fn"](trampoline)
        h = ctypes.c_void_p()
        _check(lib.agt_model_new_host(ctypes.byref(h), cfn, None))
        m._own(h.value)
        m._cbs["host"] = cfn  # C calls it until the model is freed
        return m

    def set_base_url(self, url: str) -> None:
        """Sets the API's base URL.

        Args:
            url: an http or https URL.

        Raises:
            InvalidArgumentError: not such a URL.
        """
        _check(lib.agt_model_set_base_url(self._handle(), _b(url)))

    def set_api_key(self, key: str) -> None:
        """Sets the API key.

        Args:
            key: the key.
        """
        _check(lib.agt_model_set_api_key(self._handle(), _b(key)))

    def set_name(self, name: str) -> None:
        """Sets the model name sent with each request.

        Args:
            name: the name.
        """
        _check(lib.agt_model_set_name(self._handle(), _b(name)))

    def set_timeouts(self, connect_ms: int, total_ms: int, low_speed_ms: int) -> None:
        """Sets the request time limits.

        Args:
            connect_ms: connecting, in ms.
            total_ms: a whole request, in ms.
            low_speed_ms: how long a stalled transfer may go on, in ms.

        Raises:
            InvalidArgumentError: a negative value.
        """
        _check(lib.agt_model_set_timeouts(self._handle(), connect_ms, total_ms, low_speed_ms))

    def set_retries(self, retries: int, backoff_ms: int, backoff_max_ms: int) -> None:
        """Sets the retries of failed requests.

        Args:
            retries: how many times to retry.
            backoff_ms: the first wait, in ms (doubled each time).
            backoff_max_ms: the longest wait, in ms.

        Raises:
            InvalidArgumentError: a negative value.
        """
        _check(lib.agt_model_set_retries(self._handle(), retries, backoff_ms, backoff_max_ms))

    def set_max_tokens(self, tokens: int, field: int = 0) -> None:
        """Sets the answer's token limit.

        Args:
            tokens: the limit (0: none sent).
            field: a MaxTokensField (which request field carries it).

        Raises:
            InvalidArgumentError: a negative limit or an unknown field.
        """
        _check(lib.agt_model_set_max_tokens(self._handle(), tokens, field))

    def set_extra_body(self, obj: JSONInput) -> None:
        """Sets fields merged into every request body.

        Args:
            obj: a dict or its JSON text.

        Raises:
            ParseError: not a JSON object.
        """
        t = _json_text(obj)
        _check(lib.agt_model_set_extra_body(self._handle(), t, len(t)))

    def set_extra_headers(self, headers: Union[Dict[str, str], str, bytes, None]) -> None:
        """Sets extra HTTP headers of every request.

        Args:
            headers: a dict of name -> value (or its JSON text); a header named
                like one the client sends replaces it; None clears them.

        Raises:
            ParseError: not a JSON object.
            ValidationError: a bad header name or value.
        """
        if headers is None:
            _check(lib.agt_model_set_extra_headers(self._handle(), None, 0))
            return
        t = _json_text(headers)
        _check(lib.agt_model_set_extra_headers(self._handle(), t, len(t)))

    def set_stream(self, on: bool) -> None:
        """Whether requests stream (server-sent events).

        Args:
            on: True to stream.
        """
        _check(lib.agt_model_set_stream(self._handle(), 1 if on else 0))

    def set_stream_callback(self, fn: Optional[Callable[[int, str], Any]]) -> None:
        """Sets (or with None removes) the streaming callback.

        fn(kind, text) gets each piece (kind: a StreamKind) and returns
        truthy to cancel. An exception cancels and is re-raised.

        Args:
            fn: the callback, or None.
        """
        if fn is None:
            _check(lib.agt_model_set_stream_callback(self._handle(), None, None))
            self._cbs.pop("stream", None)
            return
        guard = self._guard
        cb = fn  # not None here (a name of its own, so type checkers see it)

        def trampoline(kind, text, n, _payload):
            try:
                return 1 if cb(kind, ctypes.string_at(text, n).decode("utf-8", "replace")) else 0
            except BaseException as e:
                guard.keep(e)
                return 1

        cfn = FNPTR["agt_stream_fn"](trampoline)
        _check(lib.agt_model_set_stream_callback(self._handle(), cfn, None))
        self._cbs["stream"] = cfn

    def set_cancel_callback(self, fn: Optional[Callable[[], Any]]) -> None:
        """Sets (or with None removes) the cancel poll.

        fn() returns truthy to cancel the running request.

        Args:
            fn: the callback, or None.
        """
        if fn is None:
            _check(lib.agt_model_set_cancel_callback(self._handle(), None, None))
            self._cbs.pop("cancel", None)
            return
        guard = self._guard
        cb = fn  # not None here (a name of its own, so type checkers see it)

        def trampoline(_payload):
            try:
                return 1 if cb() else 0
            except BaseException as e:
                guard.keep(e)
                return 1

        cfn = FNPTR["agt_cancel_fn"](trampoline)
        _check(lib.agt_model_set_cancel_callback(self._handle(), cfn, None))
        self._cbs["cancel"] = cfn

    def cancel(self) -> None:
        """Cancels the running request (from any thread)."""
        lib.agt_model_cancel(self._handle())

    @property
    def http_status(self) -> int:
        """The HTTP status of the last request.

        Returns:
            The status (0: none yet).
        """
        return lib.agt_model_http_status(self._handle())

    @property
    def attempts(self) -> int:
        """How many attempts the last request took.

        Returns:
            The count.
        """
        return lib.agt_model_attempts(self._handle())

    def complete(self, messages: JSONInput, tools: JSONInput = None) -> JSON:
        """Makes one request.

        Args:
            messages: the canonical messages (list) or their JSON text.
            tools: the tool definitions, or None.

        Returns:
            The canonical response as a dict.

        Raises:
            InvalidArgumentError: an HTTP model without a model name.
            ParseError: messages or tools not JSON arrays, or an answer that
                could not be read.
            NetError: the connection failed or the server answered an error.
            TimeoutError_: a time limit ran out.
            CancelledError: cancelled.
            Exception: an exception of a host model's fn is re-raised.
        """
        m = _json_text(messages)
        t = None if tools is None else _json_text(tools)
        out = ctypes.c_void_p()
        rc = lib.agt_model_complete(ctypes.byref(out), self._handle(), m, len(m), t,
                                    0 if t is None else len(t))
        self._guard.reraise()
        _check(rc)
        return _response(out.value)

    @staticmethod
    def parse_response(text: Union[str, bytes]) -> JSON:
        """Parses a canonical response (also OpenAI tool-call shapes).

        Args:
            text: the response's JSON text.

        Returns:
            The canonical response as a dict.

        Raises:
            ParseError: not a JSON object, or a field of the wrong type.
        """
        t = _bytes(text, "Model.parse_response: text")
        out = ctypes.c_void_p()
        _check(lib.agt_model_response_parse(ctypes.byref(out), t, len(t)))
        return _response(out.value)


def _response(ptr: Any) -> JSON:
    try:
        return _json.loads(_s(lib.agt_model_response_json(ptr)) or "null")
    finally:
        lib.agt_model_response_free(ptr)


class Agent(_Handle):
    """The agent loop over a Session and a Model (both kept alive by the agent)."""

    _free = "agt_agent_free"

    def __init__(self, session: Session, model: Model, system_prompt: Optional[str] = None) -> None:
        """Makes an agent loop over a session and a model (both kept alive).

        Args:
            session: the session whose tools the model calls.
            model: the model.
            system_prompt: the system prompt, or None.
        """
        super().__init__()
        h = ctypes.c_void_p()
        _check(lib.agt_agent_new(ctypes.byref(h), session._handle(), model._handle()))
        self._own(h.value, session, model)  # both freed after the agent
        self.session, self.model = session, model
        self._guard = _Guard()
        self._cb = None
        self._sub_approver = None  # the ctypes object C calls; lives as long as the agent
        if system_prompt is not None:
            self.set_system_prompt(system_prompt)

    def set_system_prompt(self, text: str) -> None:
        """Sets the system prompt.

        Args:
            text: the prompt.
        """
        _check(lib.agt_agent_set_system_prompt(self._handle(), _b(text)))

    def add_user_message(self, text: str) -> None:
        """Adds a user message to the conversation.

        Args:
            text: the message.

        Raises:
            StateError: the agent waits for an approval.
        """
        _check(lib.agt_agent_add_user_message(self._handle(), _b(text)))

    def set_event_callback(self, fn: Optional[Callable[[int, Any], Any]]) -> None:
        """Sets (or with None removes) the event callback.

        fn(kind, data) gets each AgentEvent; data is a str for TEXT and
        THINKING, a dict otherwise; a truthy return cancels the run. An
        exception cancels the run and is re-raised by run()/resume().

        Args:
            fn: the callback, or None.
        """
        if fn is None:
            _check(lib.agt_agent_set_event_callback(self._handle(), None, None))
            self._cb = None
            return
        guard = self._guard
        cb = fn  # not None here (a name of its own, so type checkers see it)

        def trampoline(kind, data, n, _payload):
            try:
                text = ctypes.string_at(data, n).decode("utf-8", "replace")
                if kind not in (0, 1):
                    text = _json.loads(text)
                return 1 if cb(kind, text) else 0
            except BaseException as e:
                guard.keep(e)
                return 1

        cfn = FNPTR["agt_agent_event_fn"](trampoline)
        _check(lib.agt_agent_set_event_callback(self._handle(), cfn, None))
        self._cb = cfn

    def set_max_turns(self, n: int) -> None:
        """Caps the model calls of one run.

        Args:
            n: the cap.

        Raises:
            InvalidArgumentError: negative.
        """
        _check(lib.agt_agent_set_max_turns(self._handle(), n))

    def set_token_budget(self, tokens: int) -> None:
        """Caps the tokens of one run.

        Args:
            tokens: the budget (0: none).

        Raises:
            InvalidArgumentError: negative.
        """
        _check(lib.agt_agent_set_token_budget(self._handle(), tokens))

    def set_context_window(self, tokens: int, percent: int = 80) -> None:
        """Sets the model's context window and when to compact.

        Args:
            tokens: the window.
            percent: compact at this share of it.

        Raises:
            InvalidArgumentError: a negative window or percent out of range.
        """
        _check(lib.agt_agent_set_context_window(self._handle(), tokens, percent))

    # -- sub-agents and concurrency (see agent.h)
    def enable_subagents(self) -> None:
        """Offers the Agent and AgentSwarm tools, backed by sub-agents of this
        agent: sets their providers in the session's registry, so call it
        before Registry.freeze(). Raises FrozenError when the registry is
        frozen."""
        _check(lib.agt_agent_enable_subagents(self._handle()))

    def add_subagent_profile(self, name: str, description: str, tools: Optional[Iterable[str]] = None, system_prompt_addition: Optional[str] = None) -> None:
        """Adds (or replaces) a sub-agent profile that Agent's and
        AgentSwarm's subagent_type can name: tools is a list of tool names
        (None: every tool), system_prompt_addition text added to the
        sub-agent's system prompt. Built in: coder, explore, plan. Raises
        InvalidArgumentError for a bad name (1..64 of a-z 0-9 _ -), an empty
        description or a bad tools list."""
        tj = None if tools is None else _json.dumps(list(tools))
        _check(lib.agt_agent_add_subagent_profile(self._handle(), _b(name), _b(description),
                                                  _b(tj), _b(system_prompt_addition)))

    def set_swarm_concurrency(self, max_threads: int) -> None:
        """Caps how many sub-agents one AgentSwarm call runs at once.

        The concurrency ramps up (5 at once, then one more every 700 ms) to
        the cap (concurrently only with a frozen registry and an HTTP model).

        Args:
            max_threads: the cap: 0 (the default) = no cap, 1 = one after the
                other, at most 128.

        Raises:
            InvalidArgumentError: outside 0..128.
        """
        _check(lib.agt_agent_set_swarm_concurrency(self._handle(), _clamp(max_threads, _INT)))

    def set_parallel_tools(self, max_calls: int) -> None:
        """How many read-only tool calls (Read, Glob, Grep, ReadMediaFile,
        FetchURL) of one model turn run at once. Sub-agents follow this value.

        Args:
            max_calls: 1..64 (default 4; 1 runs them one after the other).

        Raises:
            InvalidArgumentError: outside 1..64.
        """
        _check(lib.agt_agent_set_parallel_tools(self._handle(), _clamp(max_calls, _INT)))

    def set_subagent_timeout(self, ms: int) -> None:
        """Sets the time limit of one sub-agent run (Agent call, swarm item,
        background task, resume). The root agent's value applies at every
        depth.

        Args:
            ms: milliseconds of working time (approval pauses and approvers
                not counted): 0 (no limit) or 1..2592000000 (30 days);
                default 1800000 (30 minutes).

        Raises:
            InvalidArgumentError: negative or over 30 days.
        """
        _check(lib.agt_agent_set_subagent_timeout(self._handle(), _clamp(ms, _INT64)))

    def set_subagent_approver(self, fn: Optional[Callable[[str, JSON], Any]]) -> None:
        """fn(agent_id: str, request: dict) -> decision | (decision, reason)
        | (decision, reason, rule): decides a sub-agent's tool call that needs
        approval, instead of the agent's own approval channel. agent_id is
        "agent-N"; request is the agt_session_pending() item shape (call_id
        is the sub-agent's own id, no "agent_id"). AGT_DECISION_APPROVE_SESSION
        stores the rule in that sub-agent's session only; any other value
        than APPROVE, APPROVE_SESSION or REJECT rejects. fn runs on the
        sub-agent's thread (a swarm worker or a background task: it must be
        thread-safe). An exception rejects the call and is re-raised by the
        next run()/resume() (at once for a foreground sub-agent). None clears
        it. Raises StateError while a sub-agent runs in the background."""
        if fn is None:
            _check(lib.agt_agent_set_subagent_approver(self._handle(), None, None))
            self._sub_approver = None
            return
        guard = self._guard
        cb = fn  # not None here (a name of its own, so type checkers see it)

        def trampoline(agent_id, req, _payload):
            try:
                return _apply_decision(
                    req, cb(_s(agent_id) or "", _json.loads(_s(lib.agt_approval_json(req)) or "{}")))
            except BaseException as e:
                guard.keep(e)
                return 2  # AGT_DECISION_REJECT

        cfn = FNPTR["agt_subagent_approver_fn"](trampoline)
        _check(lib.agt_agent_set_subagent_approver(self._handle(), cfn, None))
        self._sub_approver = cfn

    def _after(self, rc: int) -> int:
        self._guard.reraise()
        self.model._guard.reraise()
        self.session._guard.reraise()
        if rc in (0, -7, -15):  # done, paused for approval, budget used up
            return self.stop_reason
        raise error_for(rc)

    def run(self) -> int:
        """Runs the loop until it stops.

        Returns:
            The stop reason (AGT_AGENT_STOP_*): approval pauses and used-up
            budgets are stop reasons, not exceptions.

        Raises:
            AgtError: the run failed; an exception of a callback is re-raised.
        """
        return self._after(lib.agt_agent_run(self._handle()))

    def resume(self) -> int:
        """Goes on after the pending calls were answered.

        Returns:
            The stop reason (AGT_AGENT_STOP_*).

        Raises:
            StateError: a call still waits for approval.
            AgtError: the run failed.
        """
        return self._after(lib.agt_agent_resume(self._handle()))

    def answer(self, call_id: str, decision: Union[Decision, int, str], reason: Optional[str] = None) -> None:
        """Answers a pending call of the agent or a sub-agent ("agent-N/<id>").

        Args:
            call_id: the pending call's id.
            decision: a Decision, its int value or its name.
            reason: the user's words.

        Raises:
            ValueError: not a decision.
            NotFoundError: no call with that id waits.
        """
        decision = _enum_arg(Decision, decision, "Agent.answer: decision")
        _check(lib.agt_agent_answer(self._handle(), _b(call_id), decision, _b(reason)))

    def cancel(self) -> None:
        """Cancels the running loop (from any thread)."""
        lib.agt_agent_cancel(self._handle())

    @property
    def stop_reason(self) -> int:
        """Why the last run stopped.

        Returns:
            An AGT_AGENT_STOP_* value.
        """
        return lib.agt_agent_stop_reason(self._handle())

    @property
    def turns(self) -> int:
        """The model calls of the last run.

        Returns:
            The count.
        """
        return lib.agt_agent_turns(self._handle())

    @property
    def tokens_used(self) -> int:
        """The tokens the runs used.

        Returns:
            The count.
        """
        return lib.agt_agent_tokens_used(self._handle())

    @property
    def text(self) -> Optional[str]:
        """The model's last answer text.

        Returns:
            The text, or None.
        """
        return _s(lib.agt_agent_text(self._handle()))

    def messages(self) -> JSON:
        """The conversation.

        Returns:
            The list of canonical messages.
        """
        return _out_json(lib.agt_agent_messages, self._handle())

    def save(self) -> JSON:
        """The agent's state (conversation, sub-agents, waiting calls).

        Returns:
            A dict for restore().
        """
        return _out_json(lib.agt_agent_save, self._handle())

    def restore(self, state: JSONInput) -> None:
        """Restores a state from save(), all or nothing.

        Args:
            state: the dict or its JSON text.

        Raises:
            ParseError: not a valid state document.
        """
        t = _json_text(state)
        _check(lib.agt_agent_restore(self._handle(), t, len(t)))


__all__ += ["Model", "Agent"]
