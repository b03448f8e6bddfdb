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
"""

import ctypes
import json as _json
import operator

from ._lib import FNPTR, lib
from ._cdecls import CONSTANTS

__all__ = [
    "AgtError", "Registry", "Session", "Schema", "Diff", "Changes", "Cron", "Result",
    "Call", "Hook", "version", "CONSTANTS",
]

globals().update(CONSTANTS)
__all__ += list(CONSTANTS)

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


def _members(prefix, explicit):
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
__all__ += list(_ENUMS)


def _enum_arg(cls, value, what):
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

    def __init__(self, message, code=None):
        super().__init__(message)
        if code is not None:
            self.code = code
        self.message = message


def _err(name, code, doc):
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


def _s(b):
    return None if b is None else b.decode("utf-8", "replace")


def _b(s):
    if s is None:
        return None
    if isinstance(s, bytes):
        return s
    return str(s).encode("utf-8")


def _json_text(obj):
    if isinstance(obj, (str, bytes)):
        return _b(obj)
    return _json.dumps(obj, ensure_ascii=False).encode("utf-8")


def error_for(code, message=None):
    if message is None:
        message = _s(lib.agt_error_message()) or _s(lib.agt_status_string(code))
    cls = _ERRORS.get(code, AgtError)
    return cls(message, code)


def _check(rc):
    if rc < 0:
        raise error_for(rc)
    return rc


def _take(ptr):
    """Copies and frees a char * out value; returns str (None for NULL)."""
    if not ptr.value:
        return None
    try:
        return ctypes.string_at(ptr.value).decode("utf-8", "replace")
    finally:
        lib.agt_free(ptr.value)


def _take_bytes(ptr, n):
    if not ptr.value:
        return None
    try:
        return ctypes.string_at(ptr.value, n)
    finally:
        lib.agt_free(ptr.value)


def _out_json(fn, *args):
    out = ctypes.c_void_p()
    _check(fn(*args, ctypes.byref(out)))
    text = _take(out)
    return None if text is None else _json.loads(text)


_INT = (-(2 ** 31), 2 ** 31 - 1)
_INT64 = (-(2 ** 63), 2 ** 63 - 1)


def _clamp(v, bounds):
    """An integer argument for a C int/int64_t: a value past the C type's
    range becomes its nearest end (ctypes would wrap it silently), so the
    library's own range check refuses it with its message."""
    lo, hi = bounds
    v = operator.index(v)
    return lo if v < lo else hi if v > hi else v


def version():
    return _s(lib.agt_version())


def sandbox_probe():
    """What this kernel offers the sandbox (dict; see sandbox.h)."""
    return _out_json(lib.agt_sandbox_probe)


def sandbox_mode_name(mode):
    return _s(lib.agt_sandbox_mode_name(mode))


def sandbox_mode_parse(name):
    out = ctypes.c_int()
    _check(lib.agt_sandbox_mode_parse(_b(name), ctypes.byref(out)))
    return out.value


class _Guard:
    """Holds an exception raised inside a callback until the C call returns."""

    def __init__(self):
        self.exc = None

    def keep(self, exc):
        if self.exc is None:
            self.exc = exc

    def reraise(self):
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

    _free = None

    def __init__(self):
        self._h = None  # what Python calls may use; None once closed
        self._c = None  # the C object, until it is really freed
        self._free_fn = None
        self._users = 0  # live handles that depend on this one
        self._deps = []  # the handles this one depends on
        self._closing = False

    def _own(self, h, *deps, free=True):
        """Takes the C object h, which needs deps to outlive it. The free
        function is looked up now: at interpreter exit the module's globals
        may be gone when the finaliser runs."""
        self._h = self._c = h
        self._free_fn = getattr(lib, self._free) if free and self._free else None
        for d in deps:
            self._depend(d)

    def _depend(self, d):
        if d is not None:
            d._users += 1
            self._deps.append(d)

    def _undepend(self, d):
        if d is not None and d in self._deps:
            self._deps.remove(d)
            d._users -= 1
            d._release()

    def close(self):
        self._h = None
        self._closing = True
        self._release()

    def _release(self):
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

    def _freed(self):
        """Called once the C object is gone (drop what only it needed)."""

    def _handle(self):
        if not self._h:
            raise InvalidArgumentError("%s is closed" % type(self).__name__, -3)
        return self._h

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


# ---- results and calls ------------------------------------------------------


class Result:
    """A tool result, copied out of the library (the C handle is freed at once)."""

    def __init__(self, ptr):
        self.text = _s(lib.agt_result_text(ptr)) or ""
        self.is_error = bool(lib.agt_result_is_error(ptr))
        self.status = lib.agt_result_status(ptr)
        j = lib.agt_result_json(ptr)
        self.json = _json.loads(j.decode("utf-8")) if j is not None else None
        self.call_id = _s(lib.agt_result_call_id(ptr)) or ""
        self.tool = _s(lib.agt_result_tool(ptr)) or ""
        self.exception = None
        lib.agt_result_free(ptr)

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "Result(tool=%r, is_error=%r, text=%r)" % (self.tool, self.is_error, self.text[:60])


class Call:
    """A tool call handed to a Python provider; valid only during the call."""

    def __init__(self, ptr):
        self._p = ptr
        self.id = _s(lib.agt_call_id(ptr))
        self.tool = _s(lib.agt_call_tool(ptr))
        self.args = _json.loads(_s(lib.agt_call_args(ptr)) or "{}")
        self.answered = False

    def set_text(self, text):
        _check(lib.agt_call_set_text(self._p, _b(text)))
        self.answered = True

    def set_error(self, text):
        _check(lib.agt_call_set_error(self._p, _b(text)))
        self.answered = True

    def set_json(self, obj):
        t = _json_text(obj)
        _check(lib.agt_call_set_json(self._p, t, len(t)))


class Hook:
    """A call seen by a pre- or post-tool-use hook; valid only during the hook."""

    def __init__(self, ptr):
        self._p = ptr
        self.tool = _s(lib.agt_hook_tool(ptr))
        self.call_id = _s(lib.agt_hook_call_id(ptr))
        self.args = _json.loads(_s(lib.agt_hook_args(ptr)) or "{}")
        self.result_text = _s(lib.agt_hook_result_text(ptr))
        self.result_is_error = bool(lib.agt_hook_result_is_error(ptr))

    def deny(self, reason=None):
        _check(lib.agt_hook_deny(self._p, _b(reason)))

    def rewrite(self, args):
        _check(lib.agt_hook_rewrite(self._p, _json_text(args)))

    def append(self, text):
        _check(lib.agt_hook_append(self._p, _b(text)))


# ---- registry ---------------------------------------------------------------


class Registry(_Handle):
    """A tool catalogue. Registry("chat") loads a built-in set at once."""

    _free = "agt_registry_free"

    def __init__(self, *sets):
        super().__init__()
        h = ctypes.c_void_p()
        _check(lib.agt_registry_new(ctypes.byref(h)))
        self._own(h.value)
        self._providers = {}  # name -> (CFUNCTYPE object, python function)
        try:
            for s in sets:
                self.load_builtin(s)
        except BaseException:
            self.close()
            raise

    def load_builtin(self, set_name):
        _check(lib.agt_registry_load_builtin(self._handle(), _b(set_name)))

    def load_json(self, tools):
        t = _json_text(tools)
        _check(lib.agt_registry_load_json(self._handle(), t, len(t)))

    def add(self, entry):
        t = _json_text(entry)
        _check(lib.agt_registry_add_json(self._handle(), t, len(t)))

    def set_provider(self, name, fn):
        """fn(call: Call) -> str (result text) | dict/list (JSON result) | None.

        Raising makes the call an error result with the exception's text; the
        exception is kept on the Result (Result.exception)."""
        if fn is None:
            _check(lib.agt_registry_set_provider(self._handle(), _b(name), None, None))
            self._providers.pop(name, None)
            return
        reg = self

        def trampoline(call_ptr, _payload):
            try:
                call = Call(call_ptr)
                out = fn(call)
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

    def remove(self, name):
        _check(lib.agt_registry_remove(self._handle(), _b(name)))

    def set_description(self, name, description):
        _check(lib.agt_registry_set_description(self._handle(), _b(name), _b(description)))

    def freeze(self):
        _check(lib.agt_registry_freeze(self._handle()))

    @property
    def frozen(self):
        return bool(lib.agt_registry_is_frozen(self._handle()))

    def names(self):
        h = self._handle()
        return [_s(lib.agt_registry_name_at(h, i)) for i in range(lib.agt_registry_count(h))]

    def __len__(self):
        return lib.agt_registry_count(self._handle())

    def is_offered(self, name, phase=0):
        return bool(lib.agt_registry_is_offered(self._handle(), _b(name), phase))

    def access(self, name):
        return _check(lib.agt_registry_access(self._handle(), _b(name)))

    def export(self, fmt="native", phase=0):
        return _out_json(lib.agt_registry_export, self._handle(), _b(fmt), phase)


# ---- session ----------------------------------------------------------------


def _apply_decision(req, out):
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

    def __init__(self, registry, root):
        super().__init__()
        h = ctypes.c_void_p()
        _check(lib.agt_session_new(ctypes.byref(h), registry._handle(), _b(root)))
        self._own(h.value, registry)
        self.registry = registry  # freed after the session (_Handle)
        self._cbs = {}
        self._guard = _Guard()
        self._changes = None

    # -- state
    @property
    def root(self):
        return _s(lib.agt_session_root(self._handle()))

    @property
    def mode(self):
        """The approval mode, a Mode."""
        return Mode(lib.agt_session_mode(self._handle()))

    @mode.setter
    def mode(self, m):
        _check(lib.agt_session_set_mode(self._handle(), _enum_arg(Mode, m, "Session.mode")))

    @property
    def phase(self):
        """The review phase whose tools are offered, a Phase."""
        return Phase(lib.agt_session_phase(self._handle()))

    @phase.setter
    def phase(self, p):
        _check(lib.agt_session_set_phase(self._handle(), _enum_arg(Phase, p, "Session.phase")))

    def set_edit_options(self, flags):
        """AGT_EDIT_* flags (AGT_EDIT_STRICT: Edit matches byte for byte only)."""
        _check(lib.agt_session_set_edit_options(self._handle(), flags))

    def todos(self):
        return _out_json(lib.agt_session_todos, self._handle())

    # -- calls
    def _result(self, rc, out):
        self._guard_after()
        if rc < 0:
            raise error_for(rc)
        r = Result(out.value)
        exc = getattr(self.registry, "_provider_exc", None)
        if exc is not None:
            self.registry._provider_exc = None
            r.exception = exc
        return r

    def _guard_after(self):
        self._guard.reraise()

    def dispatch(self, tool, args=None, call_id=None):
        """Runs a tool call. Returns a Result (which may be an error result);
        raises PendingError (with .call_id) when the call waits for approval."""
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

    def pending(self):
        return _out_json(lib.agt_session_pending, self._handle())

    def answer(self, call_id, decision, reason=None):
        out = ctypes.c_void_p()
        self.registry._provider_exc = None
        decision = _enum_arg(Decision, decision, "Session.answer: decision")
        rc = lib.agt_session_answer(self._handle(), _b(call_id), decision, _b(reason),
                                    ctypes.byref(out))
        return self._result(rc, out)

    def answer_rule(self, call_id, rule, reason=None):
        out = ctypes.c_void_p()
        self.registry._provider_exc = None
        rc = lib.agt_session_answer_rule(self._handle(), _b(call_id), _b(rule), _b(reason),
                                         ctypes.byref(out))
        return self._result(rc, out)

    # -- rules
    def add_rule(self, kind, rule):
        """Adds an allow/ask/deny rule (kind: a RuleKind, e.g. "deny")."""
        _check(lib.agt_session_add_rule(self._handle(), _enum_arg(RuleKind, kind,
                                                                  "Session.add_rule: kind"),
                                        _b(rule)))

    def allow(self, rule):
        self.add_rule(0, rule)

    def ask(self, rule):
        self.add_rule(1, rule)

    def deny(self, rule):
        self.add_rule(2, rule)

    def load_rules(self, rules):
        t = _json_text(rules)
        _check(lib.agt_session_load_rules(self._handle(), t, len(t)))

    def rules(self):
        return _out_json(lib.agt_session_rules, self._handle())

    # -- callbacks
    def set_approver(self, fn):
        """fn(request: dict) -> decision | (decision, reason) | (decision, reason, rule).
        An exception rejects the call and is re-raised after dispatch returns."""
        if fn is None:
            _check(lib.agt_session_set_approver(self._handle(), None, None))
            self._cbs.pop("approver", None)
            return
        guard = self._guard

        def trampoline(req, _payload):
            try:
                return _apply_decision(req, fn(_json.loads(_s(lib.agt_approval_json(req)))))
            except BaseException as e:
                guard.keep(e)
                return 2  # AGT_DECISION_REJECT

        cfn = FNPTR["agt_approver_fn"](trampoline)
        _check(lib.agt_session_set_approver(self._handle(), cfn, None))
        self._cbs["approver"] = cfn

    def _set_hook(self, which, setter, fn):
        if fn is None:
            _check(setter(self._handle(), None, None))
            self._cbs.pop(which, None)
            return
        guard = self._guard

        def trampoline(h, _payload):
            try:
                fn(Hook(h))
                return 0
            except BaseException as e:
                guard.keep(e)
                return -1

        cfn = FNPTR["agt_hook_fn"](trampoline)
        _check(setter(self._handle(), cfn, None))
        self._cbs[which] = cfn

    def set_pre_hook(self, fn):
        """fn(hook: Hook) may hook.deny(reason) or hook.rewrite(args)."""
        self._set_hook("pre", lib.agt_session_set_pre_hook, fn)

    def set_post_hook(self, fn):
        """fn(hook: Hook) may hook.append(text)."""
        self._set_hook("post", lib.agt_session_set_post_hook, fn)

    def set_hook_budget(self, ms):
        _check(lib.agt_session_set_hook_budget(self._handle(), ms))

    def set_tool_output_callback(self, fn):
        """fn(call_id: str, tool: str, data: bytes | None): the live output of
        a running foreground Bash call (bytes as the command wrote them),
        None for a heartbeat about every 100 ms; a truthy return interrupts
        the call (its result then reads "Command was interrupted by the
        user: ..."). None removes it. An exception interrupts the call and is
        re-raised after dispatch returns."""
        if fn is None:
            _check(lib.agt_session_set_tool_output_callback(self._handle(), None, None))
            self._cbs.pop("tool_output", None)
            return
        guard = self._guard

        def trampoline(call_id, tool, data, n, _payload):
            try:
                chunk = ctypes.string_at(data, n) if data is not None else None
                return 1 if fn(_s(call_id), _s(tool), chunk) else 0
            except BaseException as e:
                guard.keep(e)
                return 1

        cfn = FNPTR["agt_tool_output_fn"](trampoline)
        _check(lib.agt_session_set_tool_output_callback(self._handle(), cfn, None))
        self._cbs["tool_output"] = cfn

    def set_clock(self, fn):
        """fn() -> milliseconds since the epoch; None restores the real clock.
        An exception is kept (re-raised after the next call) and reads as 0."""
        if fn is None:
            _check(lib.agt_session_set_clock(self._handle(), None, None))
            self._cbs.pop("clock", None)
            return
        guard = self._guard

        def trampoline(_payload):
            try:
                return int(fn())
            except BaseException as e:
                guard.keep(e)
                return 0

        cfn = FNPTR["agt_clock_fn"](trampoline)
        _check(lib.agt_session_set_clock(self._handle(), cfn, None))
        self._cbs["clock"] = cfn

    def set_relocator(self, fn, max_attempts=1):
        """fn(path, file_diff, snippet, suggestion) -> new snippet (str) or None."""
        if fn is None:
            _check(lib.agt_session_set_relocator(self._handle(), None, 1, None))
            self._cbs.pop("relocator", None)
            return
        cfn = _relocator(fn, self._guard)
        _check(lib.agt_session_set_relocator(self._handle(), cfn, max_attempts, None))
        self._cbs["relocator"] = cfn

    # -- plan, save, tasks
    def set_plan_file(self, path):
        _check(lib.agt_session_set_plan_file(self._handle(), _b(path)))

    @property
    def plan_file(self):
        return _s(lib.agt_session_plan_file(self._handle()))

    def save(self):
        return _out_json(lib.agt_session_save, self._handle())

    def restore(self, state):
        t = _json_text(state)
        _check(lib.agt_session_restore(self._handle(), t, len(t)))

    def set_idle(self, idle):
        _check(lib.agt_session_set_idle(self._handle(), 1 if idle else 0))

    def tick(self, now_ms=-1):
        ev = _out_json(lib.agt_session_tick, self._handle(), now_ms)
        self._guard_after()
        return ev

    # -- scheduled prompts, the host's own view (no model call, no approval)
    def cron_list(self):
        """The cron jobs: a list of dicts with id, cron, prompt, recurring,
        paused, created, last_fire and next_fire (unix seconds or None)."""
        return _out_json(lib.agt_session_cron_list, self._handle())

    def cron_delete(self, job_id):
        """Deletes a cron job; raises the AGT_ENOTFOUND error for an unknown id."""
        _check(lib.agt_session_cron_delete(self._handle(), _b(job_id)))

    def cron_set_paused(self, job_id, paused=True):
        """Pauses (or with paused=False resumes) a cron job."""
        _check(lib.agt_session_cron_set_paused(self._handle(), _b(job_id), 1 if paused else 0))

    def poll_fds(self):
        n = ctypes.c_size_t()
        _check(lib.agt_session_poll_fds(self._handle(), None, 0, ctypes.byref(n)))
        arr = (ctypes.c_int * max(n.value, 1))()
        _check(lib.agt_session_poll_fds(self._handle(), arr, n.value, ctypes.byref(n)))
        return list(arr[: n.value])

    def next_deadline(self, now_ms=-1):
        out = ctypes.c_int64()
        _check(lib.agt_session_next_deadline(self._handle(), now_ms, ctypes.byref(out)))
        return None if out.value == -1 else out.value

    def set_task_log_dir(self, path):
        _check(lib.agt_session_set_task_log_dir(self._handle(), _b(path)))

    def set_max_tasks(self, n):
        _check(lib.agt_session_set_max_tasks(self._handle(), n))

    # -- what the tools may show and reach
    def add_sensitive_pattern(self, pattern):
        """Adds a sensitive-file pattern ('!' first: an exception)."""
        _check(lib.agt_session_add_sensitive_pattern(self._handle(), _b(pattern)))

    def remove_sensitive_pattern(self, pattern):
        """Removes a built-in or added pattern by its text (NotFoundError if absent)."""
        _check(lib.agt_session_remove_sensitive_pattern(self._handle(), _b(pattern)))

    def sensitive_patterns(self):
        return _out_json(lib.agt_session_sensitive_patterns, self._handle())

    def check_sensitive(self, path, content=None):
        """The reason path (and content: str or bytes) is sensitive, or None."""
        c = None if content is None else (content if isinstance(content, bytes)
                                          else content.encode("utf-8"))
        why = ctypes.c_void_p()
        rc = lib.agt_session_check_sensitive(self._handle(), _b(path), c,
                                             0 if c is None else len(c), ctypes.byref(why))
        if rc < 0:
            _check(rc)
        return _s(ctypes.string_at(why.value)) if rc == 1 and why.value else None

    def set_fetch_private(self, allow):
        """Lets FetchURL reach loopback, link-local and private addresses."""
        _check(lib.agt_session_set_fetch_private(self._handle(), 1 if allow else 0))

    def set_background_on_timeout(self, on):
        _check(lib.agt_session_set_background_on_timeout(self._handle(), 1 if on else 0))

    # -- sandbox
    def set_sandbox(self, mode, network=0, enforce=0):
        """mode: AGT_SANDBOX_* or its name ("read-only", "workspace-write", "off")."""
        if isinstance(mode, str):
            mode = sandbox_mode_parse(mode)
        _check(lib.agt_session_set_sandbox(self._handle(), _clamp(mode, (-2**31, 2**31 - 1)),
                                           _clamp(network, (-2**31, 2**31 - 1)),
                                           _clamp(enforce, (-2**31, 2**31 - 1))))

    def sandbox(self):
        """(mode, network, enforce) in force."""
        m, n, e = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
        _check(lib.agt_session_sandbox(self._handle(), ctypes.byref(m), ctypes.byref(n),
                                       ctypes.byref(e)))
        return m.value, n.value, e.value

    def add_writable_root(self, path):
        _check(lib.agt_session_add_writable_root(self._handle(), _b(path)))

    def set_sandbox_auto_allow(self, on):
        _check(lib.agt_session_set_sandbox_auto_allow(self._handle(), 1 if on else 0))

    def sandbox_status(self):
        return _out_json(lib.agt_session_sandbox_status, self._handle())

    # -- review
    def open_review(self, repo_path=None, mode=0, from_rev=None, to_rev=None):
        _check(lib.agt_session_open_review(self._handle(), _b(repo_path), mode, _b(from_rev),
                                           _b(to_rev)))
        old, self._changes = self._changes, None
        self._undepend(old)

    def set_changes(self, changes):
        _check(lib.agt_session_set_changes(self._handle(),
                                           None if changes is None else changes._handle()))
        old, self._changes = self._changes, changes  # borrowed: freed after the session
        self._depend(changes)
        self._undepend(old)

    def set_review_file(self, path):
        _check(lib.agt_session_set_review_file(self._handle(), _b(path)))

    @property
    def review_file(self):
        return _s(lib.agt_session_review_file(self._handle()))

    def set_turn_thinking(self, text):
        _check(lib.agt_session_set_turn_thinking(self._handle(), _b(text)))

    @property
    def review_done(self):
        return bool(lib.agt_session_review_done(self._handle()))

    @property
    def review_state(self):
        return _s(lib.agt_session_review_state(self._handle()))

    def comments(self):
        return _out_json(lib.agt_session_comments, self._handle())

    def clear_comments(self):
        _check(lib.agt_session_clear_comments(self._handle()))

    def _freed(self):
        self._cbs = {}  # the C session is gone: nothing calls them any more


# ---- schema -----------------------------------------------------------------


class Schema(_Handle):
    """A compiled JSON Schema. Schema(obj_or_text, draft=0, format_assertion=False,
    resources={uri: doc}, resolver=fn(uri) -> doc or None)."""

    _free = "agt_schema_free"

    def __init__(self, schema, draft=0, format_assertion=False, resources=None, resolver=None):
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

                def trampoline(uri, res, _payload):
                    try:
                        doc = resolver(_s(uri))
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

    def validate(self, instance):
        """[] when valid, else the list of violations (dicts)."""
        t = _json_text(instance)
        out = ctypes.c_void_p()
        rc = lib.agt_schema_validate(self._handle(), t, len(t), ctypes.byref(out))
        errors = _take(out)
        if rc == 0:
            return []
        if rc == -4:
            return _json.loads(errors) if errors else [{"message": _s(lib.agt_error_message())}]
        raise error_for(rc)

    def is_valid(self, instance):
        return not self.validate(instance)


# ---- diff, changes ----------------------------------------------------------


def _relocator(fn, guard):
    def trampoline(path, file_diff, snippet, suggestion, r, _payload):
        try:
            new = fn(_s(path), _s(file_diff), _s(snippet), _s(suggestion))
            if new is not None:
                t = _b(new)
                _check(lib.agt_diff_relocation_provide(r, t, len(t)))
            return 0
        except BaseException as e:
            guard.keep(e)
            return 1

    return FNPTR["agt_diff_relocate_fn"](trampoline)


class Diff(_Handle):
    """A parsed unified diff (Diff(text)) or a repository's (Diff.from_repo())."""

    _free = "agt_diff_free"

    def __init__(self, text=None, _borrowed=None, _owner=None):
        super().__init__()
        self._guard = _Guard()
        self._reloc = None
        if _borrowed is not None:
            self._own(_borrowed, _owner, free=False)  # the owner frees it
            self._owner = _owner
            return
        t = _b(text or "")
        h = ctypes.c_void_p()
        _check(lib.agt_diff_parse(ctypes.byref(h), t, len(t)))
        self._own(h.value)

    @classmethod
    def from_repo(cls, repo_path, mode=0, from_rev=None, to_rev=None):
        h = ctypes.c_void_p()
        _check(lib.agt_diff_from_repo(ctypes.byref(h), _b(repo_path), mode, _b(from_rev),
                                      _b(to_rev)))
        d = cls.__new__(cls)
        _Handle.__init__(d)
        d._guard, d._reloc = _Guard(), None
        d._own(h.value)
        return d

    def to_json(self):
        return _out_json(lib.agt_diff_to_json, self._handle())

    def files(self):
        h = self._handle()
        out = []
        for i in range(lib.agt_diff_file_count(h)):
            out.append({"path": _s(lib.agt_diff_file_path(h, i)),
                        "old_path": _s(lib.agt_diff_file_old_path(h, i)),
                        "new_path": _s(lib.agt_diff_file_new_path(h, i)),
                        "status": lib.agt_diff_file_status(h, i),
                        "binary": bool(lib.agt_diff_file_is_binary(h, i))})
        return out

    def __len__(self):
        return lib.agt_diff_file_count(self._handle())

    def file_index(self, path):
        out = ctypes.c_size_t()
        _check(lib.agt_diff_file_index(self._handle(), _b(path), ctypes.byref(out)))
        return out.value

    def file_text(self, path):
        out = ctypes.c_void_p()
        _check(lib.agt_diff_file_text(self._handle(), _b(path), ctypes.byref(out)))
        return _take(out)

    def set_content(self, path, text):
        t = _b(text)
        _check(lib.agt_diff_set_content(self._handle(), _b(path), t, len(t)))

    def content(self, path):
        p = ctypes.c_void_p()
        n = ctypes.c_size_t()
        _check(lib.agt_diff_content(self._handle(), _b(path), ctypes.byref(p), ctypes.byref(n)))
        return ctypes.string_at(p.value, n.value).decode("utf-8", "replace")

    def anchor(self, path, snippet):
        out = ctypes.c_void_p()
        rc = lib.agt_diff_anchor(self._handle(), _b(path), _b(snippet), ctypes.byref(out))
        self._guard.reraise()
        _check(rc)
        return _json.loads(_take(out))

    def anchor_batch(self, comments):
        t = _json_text(comments)
        out = ctypes.c_void_p()
        rc = lib.agt_diff_anchor_batch(self._handle(), t, len(t), ctypes.byref(out))
        self._guard.reraise()
        _check(rc)
        return _json.loads(_take(out))

    def set_relocator(self, fn, max_attempts=1):
        """fn(path, file_diff, snippet, suggestion) -> new snippet or None;
        an exception cancels the anchoring and is re-raised from anchor()."""
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

    def __init__(self, repo_path, mode=0, from_rev=None, to_rev=None):
        super().__init__()
        h = ctypes.c_void_p()
        _check(lib.agt_changes_open(ctypes.byref(h), _b(repo_path), mode, _b(from_rev),
                                    _b(to_rev)))
        self._own(h.value)

    @property
    def diff(self):
        """The change set's diff, borrowed: valid while this object is open."""
        return Diff(_borrowed=lib.agt_changes_diff(self._handle()), _owner=self)

    def info(self):
        return _out_json(lib.agt_changes_info, self._handle())

    def list_files(self):
        return _out_json(lib.agt_changes_list_files, self._handle())

    def read_file(self, path):
        out = ctypes.c_void_p()
        n = ctypes.c_size_t()
        _check(lib.agt_changes_read_file(self._handle(), _b(path), ctypes.byref(out),
                                         ctypes.byref(n)))
        return _take_bytes(out, n.value).decode("utf-8", "replace")


# ---- cron -------------------------------------------------------------------


class Cron(_Handle):
    """A parsed 5-field cron expression."""

    _free = "agt_cron_free"

    def __init__(self, expr):
        super().__init__()
        h = ctypes.c_void_p()
        _check(lib.agt_cron_parse(ctypes.byref(h), _b(expr)))
        self._own(h.value)

    def next(self, after_unix_s, tz=None):
        """First fire time strictly after after_unix_s (seconds since the epoch),
        in the process time zone or the IANA zone tz."""
        out = ctypes.c_int64()
        if tz is None:
            _check(lib.agt_cron_next(self._handle(), int(after_unix_s), ctypes.byref(out)))
        else:
            _check(lib.agt_cron_next_tz(self._handle(), int(after_unix_s), _b(tz),
                                        ctypes.byref(out)))
        return out.value

    def describe(self):
        out = ctypes.c_void_p()
        _check(lib.agt_cron_describe(self._handle(), ctypes.byref(out)))
        return _take(out)

    @property
    def expression(self):
        return _s(lib.agt_cron_expression(self._handle()))


# ---- model and agent ----------------------------------------------------------


class Model(_Handle):
    """A model client. Model(protocol) is an HTTP model (AGT_PROTOCOL_OPENAI or
    AGT_PROTOCOL_ANTHROPIC); Model.replay(path) answers from a JSONL file;
    Model.host(fn) calls fn(request: dict) -> canonical response (dict or JSON
    text). An exception in fn fails the request with its text (AGT_ERROR) and
    is re-raised when the C call (complete() or Agent.run()) returns."""

    _free = "agt_model_free"

    def __init__(self, protocol=0, base_url=None, api_key=None, name=None, _h=None):
        super().__init__()
        self._guard = _Guard()
        self._cbs = {}
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
    def replay(cls, path):
        h = ctypes.c_void_p()
        _check(lib.agt_model_new_replay(ctypes.byref(h), _b(path)))
        return cls(_h=h.value)

    @classmethod
    def host(cls, fn):
        m = cls.__new__(cls)
        _Handle.__init__(m)
        m._guard, m._cbs = _Guard(), {}
        guard = m._guard

        def trampoline(reply, request, _payload):
            try:
                out = fn(_json.loads(_s(request)))
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

    def set_base_url(self, url):
        _check(lib.agt_model_set_base_url(self._handle(), _b(url)))

    def set_api_key(self, key):
        _check(lib.agt_model_set_api_key(self._handle(), _b(key)))

    def set_name(self, name):
        _check(lib.agt_model_set_name(self._handle(), _b(name)))

    def set_timeouts(self, connect_ms, total_ms, low_speed_ms):
        _check(lib.agt_model_set_timeouts(self._handle(), connect_ms, total_ms, low_speed_ms))

    def set_retries(self, retries, backoff_ms, backoff_max_ms):
        _check(lib.agt_model_set_retries(self._handle(), retries, backoff_ms, backoff_max_ms))

    def set_max_tokens(self, tokens, field=0):
        _check(lib.agt_model_set_max_tokens(self._handle(), tokens, field))

    def set_extra_body(self, obj):
        t = _json_text(obj)
        _check(lib.agt_model_set_extra_body(self._handle(), t, len(t)))

    def set_extra_headers(self, headers):
        """Extra HTTP headers of every request: a dict of name -> value (or its
        JSON text); a header named like one the client sends replaces it; None clears."""
        if headers is None:
            _check(lib.agt_model_set_extra_headers(self._handle(), None, 0))
            return
        t = _json_text(headers)
        _check(lib.agt_model_set_extra_headers(self._handle(), t, len(t)))

    def set_stream(self, on):
        _check(lib.agt_model_set_stream(self._handle(), 1 if on else 0))

    def set_stream_callback(self, fn):
        """fn(kind: AGT_STREAM_*, text: str) -> truthy to cancel."""
        if fn is None:
            _check(lib.agt_model_set_stream_callback(self._handle(), None, None))
            self._cbs.pop("stream", None)
            return
        guard = self._guard

        def trampoline(kind, text, n, _payload):
            try:
                return 1 if fn(kind, ctypes.string_at(text, n).decode("utf-8", "replace")) else 0
            except BaseException as e:
                guard.keep(e)
                return 1

        cfn = FNPTR["agt_stream_fn"](trampoline)
        _check(lib.agt_model_set_stream_callback(self._handle(), cfn, None))
        self._cbs["stream"] = cfn

    def set_cancel_callback(self, fn):
        """fn() -> truthy to cancel the running request."""
        if fn is None:
            _check(lib.agt_model_set_cancel_callback(self._handle(), None, None))
            self._cbs.pop("cancel", None)
            return
        guard = self._guard

        def trampoline(_payload):
            try:
                return 1 if fn() else 0
            except BaseException as e:
                guard.keep(e)
                return 1

        cfn = FNPTR["agt_cancel_fn"](trampoline)
        _check(lib.agt_model_set_cancel_callback(self._handle(), cfn, None))
        self._cbs["cancel"] = cfn

    def cancel(self):
        lib.agt_model_cancel(self._handle())

    @property
    def http_status(self):
        return lib.agt_model_http_status(self._handle())

    @property
    def attempts(self):
        return lib.agt_model_attempts(self._handle())

    def complete(self, messages, tools=None):
        """One request; returns the canonical response as a dict."""
        m = _json_text(messages)
        t = None if tools is None else _json_text(tools)
        out = ctypes.c_void_p()
        rc = lib.agt_model_complete(ctypes.byref(out), self._handle(), m, len(m), t,
                                    0 if t is None else len(t))
        self._guard.reraise()
        _check(rc)
        return _response(out.value)

    @staticmethod
    def parse_response(text):
        """Parses a canonical response (also OpenAI tool-call shapes); returns a dict."""
        t = _b(text)
        out = ctypes.c_void_p()
        _check(lib.agt_model_response_parse(ctypes.byref(out), t, len(t)))
        return _response(out.value)


def _response(ptr):
    try:
        return _json.loads(_s(lib.agt_model_response_json(ptr)))
    finally:
        lib.agt_model_response_free(ptr)


class Agent(_Handle):
    """The agent loop over a Session and a Model (both kept alive by the agent)."""

    _free = "agt_agent_free"

    def __init__(self, session, model, system_prompt=None):
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

    def set_system_prompt(self, text):
        _check(lib.agt_agent_set_system_prompt(self._handle(), _b(text)))

    def add_user_message(self, text):
        _check(lib.agt_agent_add_user_message(self._handle(), _b(text)))

    def set_event_callback(self, fn):
        """fn(kind: AGT_AGENT_*, data) with data a str for AGT_AGENT_TEXT and
        AGT_AGENT_THINKING, a dict otherwise; truthy return cancels the run.
        An exception cancels the run and is re-raised by run()/resume()."""
        if fn is None:
            _check(lib.agt_agent_set_event_callback(self._handle(), None, None))
            self._cb = None
            return
        guard = self._guard

        def trampoline(kind, data, n, _payload):
            try:
                text = ctypes.string_at(data, n).decode("utf-8", "replace")
                if kind not in (0, 1):
                    text = _json.loads(text)
                return 1 if fn(kind, text) else 0
            except BaseException as e:
                guard.keep(e)
                return 1

        cfn = FNPTR["agt_agent_event_fn"](trampoline)
        _check(lib.agt_agent_set_event_callback(self._handle(), cfn, None))
        self._cb = cfn

    def set_max_turns(self, n):
        _check(lib.agt_agent_set_max_turns(self._handle(), n))

    def set_token_budget(self, tokens):
        _check(lib.agt_agent_set_token_budget(self._handle(), tokens))

    def set_context_window(self, tokens, percent=80):
        _check(lib.agt_agent_set_context_window(self._handle(), tokens, percent))

    # -- sub-agents and concurrency (see agent.h)
    def enable_subagents(self):
        """Offers the Agent and AgentSwarm tools, backed by sub-agents of this
        agent: sets their providers in the session's registry, so call it
        before Registry.freeze(). Raises FrozenError when the registry is
        frozen."""
        _check(lib.agt_agent_enable_subagents(self._handle()))

    def add_subagent_profile(self, name, description, tools=None, system_prompt_addition=None):
        """Adds (or replaces) a sub-agent profile that Agent's and
        AgentSwarm's subagent_type can name: tools is a list of tool names
        (None: every tool), system_prompt_addition text added to the
        sub-agent's system prompt. Built in: coder, explore, plan. Raises
        InvalidArgumentError for a bad name (1..64 of a-z 0-9 _ -), an empty
        description or a bad tools list."""
        tj = None if tools is None else _json.dumps(list(tools))
        _check(lib.agt_agent_add_subagent_profile(self._handle(), _b(name), _b(description),
                                                  _b(tj), _b(system_prompt_addition)))

    def set_swarm_concurrency(self, max_threads):
        """Caps how many sub-agents one AgentSwarm call runs at once: the
        concurrency ramps up (5 at once, then one more every 700 ms) to this
        cap; 0 (the default) = no cap, 1 = one after the other, at most 128
        (concurrently only with a frozen registry and an HTTP model). Raises
        InvalidArgumentError outside 0..128."""
        _check(lib.agt_agent_set_swarm_concurrency(self._handle(), _clamp(max_threads, _INT)))

    def set_parallel_tools(self, max_calls):
        """How many read-only tool calls (Read, Glob, Grep, ReadMediaFile,
        FetchURL) of one model turn run at once: 1..64 (default 4; 1 runs
        them one after the other). Sub-agents follow this value. Raises
        InvalidArgumentError outside 1..64."""
        _check(lib.agt_agent_set_parallel_tools(self._handle(), _clamp(max_calls, _INT)))

    def set_subagent_timeout(self, ms):
        """The time limit of one sub-agent run (Agent call, swarm item,
        background task, resume), in milliseconds of working time (approval
        pauses and approvers not counted): 0 (no limit) or 1..2592000000 (30
        days); default 1800000 (30 minutes). The root agent's value applies
        at every depth. Raises InvalidArgumentError when negative or over 30
        days."""
        _check(lib.agt_agent_set_subagent_timeout(self._handle(), _clamp(ms, _INT64)))

    def set_subagent_approver(self, fn):
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

        def trampoline(agent_id, req, _payload):
            try:
                return _apply_decision(
                    req, fn(_s(agent_id), _json.loads(_s(lib.agt_approval_json(req)))))
            except BaseException as e:
                guard.keep(e)
                return 2  # AGT_DECISION_REJECT

        cfn = FNPTR["agt_subagent_approver_fn"](trampoline)
        _check(lib.agt_agent_set_subagent_approver(self._handle(), cfn, None))
        self._sub_approver = cfn

    def _after(self, rc):
        self._guard.reraise()
        self.model._guard.reraise()
        self.session._guard.reraise()
        if rc in (0, -7, -15):  # done, paused for approval, budget used up
            return self.stop_reason
        raise error_for(rc)

    def run(self):
        """Runs until the loop stops; returns the stop reason (AGT_AGENT_STOP_*).
        Approval pauses and used-up budgets are stop reasons, not exceptions."""
        return self._after(lib.agt_agent_run(self._handle()))

    def resume(self):
        return self._after(lib.agt_agent_resume(self._handle()))

    def answer(self, call_id, decision, reason=None):
        decision = _enum_arg(Decision, decision, "Agent.answer: decision")
        _check(lib.agt_agent_answer(self._handle(), _b(call_id), decision, _b(reason)))

    def cancel(self):
        lib.agt_agent_cancel(self._handle())

    @property
    def stop_reason(self):
        return lib.agt_agent_stop_reason(self._handle())

    @property
    def turns(self):
        return lib.agt_agent_turns(self._handle())

    @property
    def tokens_used(self):
        return lib.agt_agent_tokens_used(self._handle())

    @property
    def text(self):
        return _s(lib.agt_agent_text(self._handle()))

    def messages(self):
        return _out_json(lib.agt_agent_messages, self._handle())

    def save(self):
        return _out_json(lib.agt_agent_save, self._handle())

    def restore(self, state):
        t = _json_text(state)
        _check(lib.agt_agent_restore(self._handle(), t, len(t)))


__all__ += ["Model", "Agent"]
