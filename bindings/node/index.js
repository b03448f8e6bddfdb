'use strict';
/*
 * Node.js bindings for libagenttools, on koffi (no compiler at install).
 *
 *   const agt = require('agenttools');
 *   const reg = new agt.Registry('chat');
 *   const s = new agt.Session(reg, '/path/to/repo');
 *   const r = s.dispatch('TodoList', { todos: [{ title: 'x', status: 'pending' }] });
 *   console.log(r.text, r.isError);
 *   s.close(); reg.close();
 *
 * The same shape as the Python package. Strings go in and come out as JS
 * strings (UTF-8); JSON documents go in as objects (a string argument is
 * passed through as JSON text) and come out as objects. A failed call
 * throws an AgtError subclass carrying .code (AGT_E*) and the library's
 * message. Every char * the library hands out is copied and released with
 * agt_free().
 *
 * Handles: close() makes an object unusable at once; the C object is freed
 * once nothing that depends on it is left (a Registry under a Session, a
 * Session and a Model under an Agent, Changes under a Session or a Diff).
 * An object that is never closed is freed by a FinalizationRegistry when it
 * is garbage collected, in the same dependency order, so any order of
 * close() and of collection is safe.
 *
 * Callbacks (providers, approver, hooks, clock, model host function, event
 * callback, relocators) are koffi registered callbacks, unregistered when
 * the C object that calls them is freed. A JS exception never crosses into
 * C: it is caught, turned into the error code the C callback contract
 * defines, kept, and re-thrown once the C call returns (providers: the
 * model sees an error result; Result.exception holds the exception).
 *
 * Blocking calls have Promise variants (Session.dispatchAsync and
 * answerAsync, Agent.runAsync and resumeAsync, Model.completeAsync) that run
 * the C call on a worker thread of the libuv pool; callbacks it makes are
 * delivered on the JS thread while the Promise is pending. While one runs,
 * the objects it uses are busy: a synchronous call on them throws a
 * StateError (a C session, agent or model is used by one thread at a time).
 */

const { koffi, F, CALLBACK, path: libraryPath, missing, decls } = require('./lib/native.js');

const C = decls.CONSTANTS;
const ENUMS = {};
for (const [name, members] of Object.entries(decls.ENUMS)) ENUMS[name] = Object.freeze({ ...members });

// ---- errors -----------------------------------------------------------------

class AgtError extends Error {
  constructor(message, code) {
    super(message);
    this.name = new.target.name;
    this.code = code === undefined ? new.target.CODE : code;
  }
}
AgtError.CODE = -1;

const ERRORS = {};
function defineError(name, code) {
  const cls = { [name]: class extends AgtError {} }[name];
  cls.CODE = code;
  ERRORS[code] = cls;
  return cls;
}
const GenericError = defineError('GenericError', -1);
const NoMemoryError = defineError('NoMemoryError', -2);
const InvalidArgumentError = defineError('InvalidArgumentError', -3);
const ValidationError = defineError('ValidationError', -4);
const NotFoundError = defineError('NotFoundError', -5);
const ExistsError = defineError('ExistsError', -6);
const PendingError = defineError('PendingError', -7);
const FrozenError = defineError('FrozenError', -8);
const ParseError = defineError('ParseError', -9);
const AgtIOError = defineError('AgtIOError', -10);
const DeniedError = defineError('DeniedError', -11);
const TimeoutError = defineError('TimeoutError', -12);
const CancelledError = defineError('CancelledError', -13);
const UnsupportedError = defineError('UnsupportedError', -14);
const LimitError = defineError('LimitError', -15);
const GitError = defineError('GitError', -16);
const NetError = defineError('NetError', -17);
const AmbiguousError = defineError('AmbiguousError', -18);
const StateError = defineError('StateError', -19);

function errorFor(code, message) {
  if (message === undefined || message === null) {
    message = F.agt_error_message() || F.agt_status_string(code);
  }
  const cls = ERRORS[code] || AgtError;
  return new cls(message, code);
}

function check(rc) {
  if (rc < 0) throw errorFor(rc);
  return rc;
}

// The error of a call that ran on a worker thread: agt_error_message() is
// per thread (the worker's, not the JS thread's), so the library keeps the
// message with the handle the call was made on; kept() reads it there
// (agt_session_error_message and the agent's and model's). A library
// without those functions gives the status text and says why.
function asyncError(rc, what, kept) {
  const msg = typeof kept === 'function' ? kept() : '';
  if (msg) return errorFor(rc, msg);
  return errorFor(rc, what + ': ' + F.agt_status_string(rc) + ' (the call ran on a worker ' +
    'thread and this library keeps no message for it)');
}

// The kept message of handle h through the library function name, or null
// when the library does not export it (an older library).
function keptMessage(name, h) {
  const fn = F[name];
  return fn ? () => fn(h) : null;
}

function need(name) {
  const fn = F[name];
  if (!fn) throw new TypeError('agenttools: ' + name + ' is not exported by ' + libraryPath);
  return fn;
}

// ---- values in and out ----------------------------------------------------------

function jsonText(v) {
  if (typeof v === 'string') return v;
  if (Buffer.isBuffer(v)) return v.toString('utf8');
  return JSON.stringify(v);
}

function str(v, what) {
  if (v === null || v === undefined) return null;
  if (typeof v !== 'string') throw new TypeError(what + ': expected a string, got ' + typeof v);
  return v;
}

function bytes(s) {
  return Buffer.byteLength(s, 'utf8');
}

// A char * out value (an External or null): its text, then agt_free.
function take(ptr) {
  if (ptr === null || ptr === undefined) return null;
  try {
    return koffi.decode(ptr, 'char', -1);
  } finally {
    F.agt_free(ptr);
  }
}

function takeN(ptr, n) {
  if (ptr === null || ptr === undefined) return null;
  try {
    return n === 0 ? '' : Buffer.from(koffi.decode(ptr, 'uint8_t', n)).toString('utf8');
  } finally {
    F.agt_free(ptr);
  }
}

function parseJson(text) {
  return text === null ? null : JSON.parse(text);
}

function outJson(fn, ...args) {
  const out = [null];
  check(fn(...args, out));
  return parseJson(take(out[0]));
}

const INT = [-(2 ** 31), 2 ** 31 - 1];
const INT64 = [-(2n ** 63n), 2n ** 63n - 1n];

// An integer for a C int / int64_t: a value past the C type's range becomes
// its nearest end (so the library's own range check refuses it with its
// message, instead of a wrapped value being taken).
function intArg(v, what, wide) {
  if (typeof v === 'bigint') {
    const [lo, hi] = wide ? INT64 : [BigInt(INT[0]), BigInt(INT[1])];
    const c = v < lo ? lo : v > hi ? hi : v;
    return wide ? c : Number(c);
  }
  if (typeof v === 'boolean') v = v ? 1 : 0;
  if (typeof v !== 'number' || !Number.isInteger(v)) {
    throw new TypeError(what + ': expected an integer, got ' + (typeof v === 'number' ? v : typeof v));
  }
  if (wide) {
    if (!Number.isSafeInteger(v)) return BigInt(v) < INT64[0] ? INT64[0] : BigInt(v) > INT64[1] ? INT64[1] : BigInt(v);
    return v;
  }
  return v < INT[0] ? INT[0] : v > INT[1] ? INT[1] : v;
}

// value as a member of an enum object: a member value or its name (any case).
function enumArg(en, value, what) {
  const members = ENUMS[en];
  if (typeof value === 'boolean') value = value ? 1 : 0;
  if (typeof value === 'string') {
    const key = value.trim().toUpperCase().replace(/-/g, '_');
    if (Object.prototype.hasOwnProperty.call(members, key)) return members[key];
  } else if (typeof value === 'number') {
    if (Object.values(members).includes(value)) return value;
  }
  const choices = Object.entries(members).map(([k, v]) => k.toLowerCase() + ' (' + v + ')').join(', ');
  throw new RangeError(what + ': ' + JSON.stringify(value) + ' is not one of ' + choices);
}

// ---- handles ----------------------------------------------------------------------

const stats = { created: 0, freed: 0 };

// The C side of a handle: kept apart from the JS wrapper so a
// FinalizationRegistry can free it after the wrapper is collected. A core
// holds the cores it depends on; it is freed once it is closing and no
// other core (and no running async call) uses it.
class Core {
  constructor(kind, ptr, free, deps) {
    this.kind = kind;
    this.ptr = ptr;
    this.free = free;
    this.users = 0;
    this.busy = 0;
    this.deps = [];
    this.closing = false;
    this.cbs = new Map(); // name -> registered koffi callback
    this.exc = null; // an exception kept from a callback
    this.providerExc = null;
    stats.created++;
    for (const d of deps) this.depend(d);
  }

  depend(d) {
    if (!d) return;
    d.users++;
    this.deps.push(d);
  }

  undepend(d) {
    if (!d) return;
    const i = this.deps.indexOf(d);
    if (i < 0) return;
    this.deps.splice(i, 1);
    d.users--;
    d.release();
  }

  keep(e) {
    if (this.exc === null) this.exc = e;
  }

  reraise() {
    const e = this.exc;
    this.exc = null;
    if (e !== null) throw e;
  }

  setCallback(name, cb) {
    const old = this.cbs.get(name);
    if (cb) this.cbs.set(name, cb);
    else this.cbs.delete(name);
    if (old) koffi.unregister(old);
  }

  release() {
    if (!this.closing || this.users > 0 || this.busy > 0 || this.ptr === null) return;
    const p = this.ptr;
    this.ptr = null;
    if (this.free) this.free(p);
    stats.freed++;
    for (const cb of this.cbs.values()) koffi.unregister(cb);
    this.cbs.clear();
    const deps = this.deps;
    this.deps = [];
    for (const d of deps) {
      d.users--;
      d.release();
    }
  }
}

const finalizer = new FinalizationRegistry((core) => {
  core.closing = true;
  core.release();
});

class Handle {
  _own(kind, ptr, free, ...deps) {
    this._core = new Core(kind, ptr, free, deps);
    this._open = true;
    finalizer.register(this, this._core, this);
  }

  _handle() {
    if (!this._open) throw new InvalidArgumentError(this.constructor.name + ' is closed', -3);
    if (this._core.busy > 0) {
      throw new StateError(this.constructor.name + ' is busy: an async call runs on it (await it first)', -19);
    }
    return this._core.ptr;
  }

  /** Makes the object unusable; frees the C object once nothing depends on it. */
  close() {
    if (!this._core) return;
    this._open = false;
    finalizer.unregister(this);
    this._core.closing = true;
    this._core.release();
  }

  get closed() {
    return !this._open;
  }
}

// Runs a koffi async call with cores marked busy; resolves with its status.
function runAsync(cores, fn, args) {
  for (const c of cores) c.busy++;
  return new Promise((resolve, reject) => {
    try {
      fn.async(...args, (err, rc) => {
        for (const c of cores) {
          c.busy--;
          c.release();
        }
        if (err) reject(err);
        else resolve(rc);
      });
    } catch (e) {
      for (const c of cores) c.busy--;
      reject(e);
    }
  });
}

// A callback that never lets a JS exception reach C: onError(e) gives the
// value C gets.
function register(type, fn, onError) {
  return koffi.register((...args) => {
    try {
      return fn(...args);
    } catch (e) {
      return onError(e);
    }
  }, CALLBACK[type]);
}

// ---- results, calls, hooks --------------------------------------------------------

class Result {
  constructor(ptr) {
    this.text = F.agt_result_text(ptr) || '';
    this.isError = F.agt_result_is_error(ptr) !== 0;
    this.status = F.agt_result_status(ptr);
    const j = F.agt_result_json(ptr);
    this.json = j === null ? null : JSON.parse(j);
    this.callId = F.agt_result_call_id(ptr) || '';
    this.tool = F.agt_result_tool(ptr) || '';
    this.exception = null;
    F.agt_result_free(ptr);
  }
}

class Call {
  constructor(ptr) {
    this._p = ptr;
    this.id = F.agt_call_id(ptr);
    this.tool = F.agt_call_tool(ptr);
    this.args = JSON.parse(F.agt_call_args(ptr) || '{}');
    this.answered = false;
  }

  setText(text) {
    check(F.agt_call_set_text(this._p, str(text, 'Call.setText')));
    this.answered = true;
  }

  setError(text) {
    check(F.agt_call_set_error(this._p, str(text, 'Call.setError')));
    this.answered = true;
  }

  setJson(v) {
    const t = jsonText(v);
    check(F.agt_call_set_json(this._p, t, bytes(t)));
  }
}

class Hook {
  constructor(ptr) {
    this._p = ptr;
    this.tool = F.agt_hook_tool(ptr);
    this.callId = F.agt_hook_call_id(ptr);
    this.args = JSON.parse(F.agt_hook_args(ptr) || '{}');
    this.resultText = F.agt_hook_result_text(ptr);
    this.resultIsError = F.agt_hook_result_is_error(ptr) !== 0;
  }

  deny(reason) {
    check(F.agt_hook_deny(this._p, str(reason, 'Hook.deny')));
  }

  rewrite(args) {
    check(F.agt_hook_rewrite(this._p, jsonText(args)));
  }

  append(text) {
    check(F.agt_hook_append(this._p, str(text, 'Hook.append')));
  }
}

function version() {
  return F.agt_version();
}

function sandboxProbe() {
  return outJson(F.agt_sandbox_probe);
}

function sandboxModeName(mode) {
  return F.agt_sandbox_mode_name(intArg(mode, 'sandboxModeName'));
}

function sandboxModeParse(name) {
  const out = [0];
  check(F.agt_sandbox_mode_parse(str(name, 'sandboxModeParse'), out));
  return out[0];
}

// ---- registry ---------------------------------------------------------------------

class Registry extends Handle {
  /** new Registry('chat') loads built-in sets at once. */
  constructor(...sets) {
    super();
    const out = [null];
    check(F.agt_registry_new(out));
    this._own('registry', out[0], F.agt_registry_free);
    try {
      for (const s of sets) this.loadBuiltin(s);
    } catch (e) {
      this.close();
      throw e;
    }
  }

  loadBuiltin(set) {
    check(F.agt_registry_load_builtin(this._handle(), str(set, 'Registry.loadBuiltin')));
  }

  loadJson(tools) {
    const t = jsonText(tools);
    check(F.agt_registry_load_json(this._handle(), t, bytes(t)));
  }

  add(entry) {
    const t = jsonText(entry);
    check(F.agt_registry_add_json(this._handle(), t, bytes(t)));
  }

  /**
   * fn(call) -> string (result text) | object/array (JSON result) | undefined.
   * A thrown exception makes the call an error result with its text; it is
   * kept on the Result (Result.exception).
   */
  setProvider(name, fn) {
    const h = this._handle();
    name = str(name, 'Registry.setProvider');
    const key = 'provider:' + name;
    if (fn === null || fn === undefined) {
      check(F.agt_registry_set_provider(h, name, null, null));
      this._core.setCallback(key, null);
      return;
    }
    if (typeof fn !== 'function') throw new TypeError('Registry.setProvider: fn must be a function or null');
    const core = this._core;
    const cb = koffi.register((callPtr) => {
      try {
        const call = new Call(callPtr);
        const out = fn(call);
        if (typeof out === 'string') call.setText(out);
        else if (out !== null && typeof out === 'object') {
          call.setJson(out);
          call.setText(JSON.stringify(out));
        } else if (out !== undefined && out !== null) call.setText(String(out));
        return 0;
      } catch (e) {
        if (core.providerExc === null) core.providerExc = e;
        try {
          F.agt_call_set_error(callPtr, errorText(e));
        } catch (e2) { /* the call keeps its own error */ }
        return -1;
      }
    }, CALLBACK.agt_provider_fn);
    try {
      check(F.agt_registry_set_provider(h, name, cb, null));
    } catch (e) {
      koffi.unregister(cb);
      throw e;
    }
    this._core.setCallback(key, cb);
  }

  remove(name) {
    check(F.agt_registry_remove(this._handle(), str(name, 'Registry.remove')));
  }

  setDescription(name, description) {
    check(F.agt_registry_set_description(this._handle(), str(name, 'Registry.setDescription'),
      str(description, 'Registry.setDescription')));
  }

  freeze() {
    check(F.agt_registry_freeze(this._handle()));
  }

  get frozen() {
    return F.agt_registry_is_frozen(this._handle()) !== 0;
  }

  names() {
    const h = this._handle();
    const n = Number(F.agt_registry_count(h));
    const out = [];
    for (let i = 0; i < n; i++) out.push(F.agt_registry_name_at(h, i));
    return out;
  }

  get length() {
    return Number(F.agt_registry_count(this._handle()));
  }

  isOffered(name, phase = 0) {
    return F.agt_registry_is_offered(this._handle(), str(name, 'Registry.isOffered'),
      enumArg('Phase', phase, 'Registry.isOffered: phase')) !== 0;
  }

  access(name) {
    return check(F.agt_registry_access(this._handle(), str(name, 'Registry.access')));
  }

  export(format = 'native', phase = 0) {
    return outJson(F.agt_registry_export, this._handle(), str(format, 'Registry.export'),
      enumArg('Phase', phase, 'Registry.export: phase'));
  }
}

function errorText(e) {
  if (e instanceof Error) return e.name + ': ' + e.message;
  return 'Error: ' + String(e);
}

// ---- session ----------------------------------------------------------------------

// An approver's answer: decision | [decision, reason] | [decision, reason, rule]
// | {decision, reason, rule}; sets reason and rule on req, returns the decision.
function applyDecision(req, out) {
  let decision = out;
  let reason = null;
  let rule = null;
  if (Array.isArray(out)) {
    [decision, reason = null, rule = null] = out;
  } else if (out !== null && typeof out === 'object') {
    ({ decision, reason = null, rule = null } = out);
  }
  decision = enumArg('Decision', decision, 'approver: decision');
  if (reason !== null) F.agt_approval_set_reason(req, String(reason));
  if (rule !== null) F.agt_approval_set_rule(req, String(rule));
  return decision;
}

const REJECT = 2;

class Session extends Handle {
  constructor(registry, root) {
    super();
    if (!(registry instanceof Registry)) throw new TypeError('Session: registry must be a Registry');
    const out = [null];
    check(F.agt_session_new(out, registry._handle(), str(root, 'Session: root')));
    this._own('session', out[0], F.agt_session_free, registry._core);
    this.registry = registry;
    this._changes = null;
  }

  get root() {
    return F.agt_session_root(this._handle());
  }

  get mode() {
    return F.agt_session_mode(this._handle());
  }

  set mode(m) {
    const h = this._handle();
    check(F.agt_session_set_mode(h, enumArg('Mode', m, 'Session.mode')));
  }

  get phase() {
    return F.agt_session_phase(this._handle());
  }

  set phase(p) {
    const h = this._handle();
    check(F.agt_session_set_phase(h, enumArg('Phase', p, 'Session.phase')));
  }

  setEditOptions(flags) {
    check(F.agt_session_set_edit_options(this._handle(), intArg(flags, 'Session.setEditOptions')));
  }

  todos() {
    return outJson(F.agt_session_todos, this._handle());
  }

  // -- calls
  _threadsOk(tool) {
    if (tool === undefined || tool === 'Agent' || tool === 'AgentSwarm') threadsOk(this.registry, null, 'Session.dispatch');
  }

  _finish(rc, out, callId, reg) {
    this._core.reraise();
    if (rc === -7) {
      const e = errorFor(rc);
      e.callId = callId || '';
      throw e;
    }
    if (rc < 0) throw errorFor(rc);
    return this._result(out, reg);
  }

  _result(out, reg) {
    const r = new Result(out[0]);
    if (reg.providerExc !== null) {
      r.exception = reg.providerExc;
      reg.providerExc = null;
    }
    return r;
  }

  /**
   * Runs a tool call. Returns a Result (which may be an error result);
   * throws PendingError (with .callId) when the call waits for approval.
   */
  dispatch(tool, args, callId) {
    const h = this._handle();
    tool = str(tool, 'Session.dispatch: tool');
    this._threadsOk(tool);
    const reg = this.registry._core;
    reg.providerExc = null;
    const out = [null];
    const a = args === undefined || args === null ? null : jsonText(args);
    const rc = F.agt_session_dispatch(h, str(callId, 'Session.dispatch: callId'), tool, a, out);
    return this._finish(rc, out, callId, reg);
  }

  /** dispatch() on a worker thread (for Bash and other slow tools). */
  async dispatchAsync(tool, args, callId) {
    const h = this._handle();
    tool = str(tool, 'Session.dispatchAsync: tool');
    callId = str(callId, 'Session.dispatchAsync: callId');
    const reg = this.registry._core;
    reg.providerExc = null;
    const out = [null];
    const a = args === undefined || args === null ? null : jsonText(args);
    const rc = await runAsync(this._cores(), F.agt_session_dispatch, [h, callId, tool, a, out]);
    this._core.reraise();
    if (rc === -7) {
      const e = new PendingError('the call waits for approval (answer it with Session.answer)', -7);
      e.callId = callId || '';
      throw e;
    }
    if (rc < 0) throw asyncError(rc, 'Session.dispatchAsync', keptMessage('agt_session_error_message', h));
    return this._result(out, reg);
  }

  // What an async call on this session keeps busy: the session, and the
  // registry unless it is frozen (a frozen registry serves many threads).
  _cores() {
    const reg = this.registry._core;
    return reg.ptr !== null && F.agt_registry_is_frozen(reg.ptr) === 0 ? [this._core, reg] : [this._core];
  }

  pending() {
    return outJson(F.agt_session_pending, this._handle());
  }

  answer(callId, decision, reason) {
    const h = this._handle();
    this._threadsOk();
    const reg = this.registry._core;
    reg.providerExc = null;
    const out = [null];
    const d = enumArg('Decision', decision, 'Session.answer: decision');
    const rc = F.agt_session_answer(h, str(callId, 'Session.answer: callId'), d,
      str(reason, 'Session.answer: reason'), out);
    this._core.reraise();
    if (rc < 0) throw errorFor(rc);
    return this._result(out, reg);
  }

  async answerAsync(callId, decision, reason) {
    const h = this._handle();
    const reg = this.registry._core;
    reg.providerExc = null;
    const out = [null];
    const d = enumArg('Decision', decision, 'Session.answerAsync: decision');
    const rc = await runAsync(this._cores(), F.agt_session_answer,
      [h, str(callId, 'Session.answerAsync: callId'), d, str(reason, 'Session.answerAsync: reason'), out]);
    this._core.reraise();
    if (rc < 0) throw asyncError(rc, 'Session.answerAsync', keptMessage('agt_session_error_message', h));
    return this._result(out, reg);
  }

  answerRule(callId, rule, reason) {
    const h = this._handle();
    this._threadsOk();
    const reg = this.registry._core;
    reg.providerExc = null;
    const out = [null];
    const rc = F.agt_session_answer_rule(h, str(callId, 'Session.answerRule: callId'),
      str(rule, 'Session.answerRule: rule'), str(reason, 'Session.answerRule: reason'), out);
    this._core.reraise();
    if (rc < 0) throw errorFor(rc);
    return this._result(out, reg);
  }

  // -- rules
  addRule(kind, rule) {
    const h = this._handle();
    check(F.agt_session_add_rule(h, enumArg('RuleKind', kind, 'Session.addRule: kind'),
      str(rule, 'Session.addRule: rule')));
  }

  allow(rule) { this.addRule(0, rule); }

  ask(rule) { this.addRule(1, rule); }

  deny(rule) { this.addRule(2, rule); }

  loadRules(rules) {
    const t = jsonText(rules);
    check(F.agt_session_load_rules(this._handle(), t, bytes(t)));
  }

  rules() {
    return outJson(F.agt_session_rules, this._handle());
  }

  // -- callbacks
  /**
   * fn(request) -> decision | [decision, reason] | [decision, reason, rule]
   * | {decision, reason, rule}. An exception rejects the call and is
   * re-thrown once the dispatch returns.
   */
  setApprover(fn) {
    const h = this._handle();
    if (fn === null || fn === undefined) {
      check(F.agt_session_set_approver(h, null, null));
      this._core.setCallback('approver', null);
      return;
    }
    const core = this._core;
    const cb = register('agt_approver_fn',
      (req) => applyDecision(req, fn(JSON.parse(F.agt_approval_json(req)))),
      (e) => { core.keep(e); return REJECT; });
    check(F.agt_session_set_approver(h, cb, null));
    core.setCallback('approver', cb);
  }

  _setHook(which, setter, fn) {
    const h = this._handle();
    if (fn === null || fn === undefined) {
      check(setter(h, null, null));
      this._core.setCallback(which, null);
      return;
    }
    const core = this._core;
    const cb = register('agt_hook_fn', (hp) => { fn(new Hook(hp)); return 0; },
      (e) => { core.keep(e); return -1; });
    check(setter(h, cb, null));
    core.setCallback(which, cb);
  }

  /** fn(hook) may hook.deny(reason) or hook.rewrite(args). */
  setPreHook(fn) { this._setHook('pre', F.agt_session_set_pre_hook, fn); }

  /** fn(hook) may hook.append(text). */
  setPostHook(fn) { this._setHook('post', F.agt_session_set_post_hook, fn); }

  setHookBudget(ms) {
    check(F.agt_session_set_hook_budget(this._handle(), intArg(ms, 'Session.setHookBudget', true)));
  }

  /** fn() -> milliseconds since the epoch; null restores the real clock. */
  setClock(fn) {
    const h = this._handle();
    if (fn === null || fn === undefined) {
      check(F.agt_session_set_clock(h, null, null));
      this._core.setCallback('clock', null);
      return;
    }
    const core = this._core;
    const cb = register('agt_clock_fn', () => intArg(fn(), 'clock', true), (e) => { core.keep(e); return 0; });
    check(F.agt_session_set_clock(h, cb, null));
    core.setCallback('clock', cb);
  }

  /** fn(path, fileDiff, snippet, suggestion) -> new snippet or null. */
  setRelocator(fn, maxAttempts = 1) {
    const h = this._handle();
    if (fn === null || fn === undefined) {
      check(F.agt_session_set_relocator(h, null, 1, null));
      this._core.setCallback('relocator', null);
      return;
    }
    const cb = relocator(fn, this._core);
    check(F.agt_session_set_relocator(h, cb, intArg(maxAttempts, 'Session.setRelocator'), null));
    this._core.setCallback('relocator', cb);
  }

  // -- plan, save, tasks
  setPlanFile(p) { check(F.agt_session_set_plan_file(this._handle(), str(p, 'Session.setPlanFile'))); }

  get planFile() { return F.agt_session_plan_file(this._handle()); }

  save() { return outJson(F.agt_session_save, this._handle()); }

  restore(state) {
    const t = jsonText(state);
    check(F.agt_session_restore(this._handle(), t, bytes(t)));
  }

  setIdle(idle) { check(F.agt_session_set_idle(this._handle(), idle ? 1 : 0)); }

  tick(nowMs = -1) {
    const ev = outJson(F.agt_session_tick, this._handle(), intArg(nowMs, 'Session.tick', true));
    this._core.reraise();
    return ev;
  }

  cronList() { return outJson(F.agt_session_cron_list, this._handle()); }

  cronDelete(id) { check(F.agt_session_cron_delete(this._handle(), str(id, 'Session.cronDelete'))); }

  cronSetPaused(id, paused = true) {
    check(F.agt_session_cron_set_paused(this._handle(), str(id, 'Session.cronSetPaused'), paused ? 1 : 0));
  }

  pollFds() {
    const h = this._handle();
    const n = [0];
    check(F.agt_session_poll_fds(h, null, 0, n));
    const arr = new Int32Array(Math.max(Number(n[0]), 1));
    check(F.agt_session_poll_fds(h, arr, arr.length, n));
    return Array.from(arr.subarray(0, Math.min(Number(n[0]), arr.length)));
  }

  nextDeadline(nowMs = -1) {
    const out = [0];
    check(F.agt_session_next_deadline(this._handle(), intArg(nowMs, 'Session.nextDeadline', true), out));
    return out[0] === -1 ? null : out[0];
  }

  setTaskLogDir(p) { check(F.agt_session_set_task_log_dir(this._handle(), str(p, 'Session.setTaskLogDir'))); }

  setMaxTasks(n) { check(F.agt_session_set_max_tasks(this._handle(), intArg(n, 'Session.setMaxTasks'))); }

  // -- what the tools may show and reach
  addSensitivePattern(p) {
    check(F.agt_session_add_sensitive_pattern(this._handle(), str(p, 'Session.addSensitivePattern')));
  }

  removeSensitivePattern(p) {
    check(F.agt_session_remove_sensitive_pattern(this._handle(), str(p, 'Session.removeSensitivePattern')));
  }

  sensitivePatterns() { return outJson(F.agt_session_sensitive_patterns, this._handle()); }

  /** The reason path (and content) is sensitive, or null. */
  checkSensitive(p, content) {
    const h = this._handle();
    const buf = content === undefined || content === null ? null
      : Buffer.isBuffer(content) ? content : Buffer.from(String(content), 'utf8');
    const why = [null];
    const rc = F.agt_session_check_sensitive(h, str(p, 'Session.checkSensitive'),
      buf, buf === null ? 0 : buf.length, why);
    check(rc);
    return rc === 1 && why[0] ? koffi.decode(why[0], 'char', -1) : null;
  }

  setFetchPrivate(on) { check(F.agt_session_set_fetch_private(this._handle(), on ? 1 : 0)); }

  setBackgroundOnTimeout(on) { check(F.agt_session_set_background_on_timeout(this._handle(), on ? 1 : 0)); }

  // -- sandbox
  /** mode: a SandboxMode value or its name ("read-only", "workspace-write", "off"). */
  setSandbox(mode, network = 0, enforce = 0) {
    const h = this._handle();
    if (typeof mode === 'string') mode = sandboxModeParse(mode);
    check(F.agt_session_set_sandbox(h, intArg(mode, 'Session.setSandbox'), intArg(network, 'Session.setSandbox'),
      intArg(enforce, 'Session.setSandbox')));
  }

  /** [mode, network, enforce] in force. */
  sandbox() {
    const m = [0];
    const n = [0];
    const e = [0];
    check(F.agt_session_sandbox(this._handle(), m, n, e));
    return [m[0], n[0], e[0]];
  }

  addWritableRoot(p) { check(F.agt_session_add_writable_root(this._handle(), str(p, 'Session.addWritableRoot'))); }

  setSandboxAutoAllow(on) { check(F.agt_session_set_sandbox_auto_allow(this._handle(), on ? 1 : 0)); }

  sandboxStatus() { return outJson(F.agt_session_sandbox_status, this._handle()); }

  // -- review
  openReview(repoPath = null, mode = 0, fromRev = null, toRev = null) {
    check(F.agt_session_open_review(this._handle(), str(repoPath, 'Session.openReview'),
      enumArg('ChangesMode', mode, 'Session.openReview: mode'), str(fromRev, 'Session.openReview'),
      str(toRev, 'Session.openReview')));
    const old = this._changes;
    this._changes = null;
    if (old) this._core.undepend(old._core);
  }

  setChanges(changes) {
    const h = this._handle();
    check(F.agt_session_set_changes(h, changes === null ? null : changes._handle()));
    const old = this._changes;
    this._changes = changes;
    if (changes) this._core.depend(changes._core);
    if (old) this._core.undepend(old._core);
  }

  setReviewFile(p) { check(F.agt_session_set_review_file(this._handle(), str(p, 'Session.setReviewFile'))); }

  get reviewFile() { return F.agt_session_review_file(this._handle()); }

  setTurnThinking(t) { check(F.agt_session_set_turn_thinking(this._handle(), str(t, 'Session.setTurnThinking'))); }

  get reviewDone() { return F.agt_session_review_done(this._handle()) !== 0; }

  get reviewState() { return F.agt_session_review_state(this._handle()); }

  comments() { return outJson(F.agt_session_comments, this._handle()); }

  clearComments() { check(F.agt_session_clear_comments(this._handle())); }
}

function relocator(fn, core) {
  return register('agt_diff_relocate_fn', (p, fileDiff, snippet, suggestion, r) => {
    const nu = fn(p, fileDiff, snippet, suggestion);
    if (nu !== null && nu !== undefined) {
      const t = String(nu);
      check(F.agt_diff_relocation_provide(r, t, bytes(t)));
    }
    return 0;
  }, (e) => { core.keep(e); return 1; });
}

// ---- schema -----------------------------------------------------------------------

class Schema extends Handle {
  /** new Schema(schema, {draft, formatAssertion, resources: {uri: doc}, resolver: uri => doc | null}) */
  constructor(schema, opts = {}) {
    super();
    const t = jsonText(schema);
    const out = [null];
    const { draft = 0, formatAssertion = false, resources = null, resolver = null } = opts;
    if (!draft && !formatAssertion && !resources && !resolver) {
      check(F.agt_schema_compile(out, t, bytes(t)));
      this._own('schema', out[0], F.agt_schema_free);
      return;
    }
    const o = [null];
    check(F.agt_schema_options_new(o));
    const guard = { exc: null };
    let cb = null;
    try {
      if (draft) check(F.agt_schema_options_set_draft(o[0], enumArg('Draft', draft, 'Schema: draft')));
      if (formatAssertion) check(F.agt_schema_options_set_format_assertion(o[0], 1));
      for (const [uri, doc] of Object.entries(resources || {})) {
        const d = jsonText(doc);
        check(F.agt_schema_options_add_resource(o[0], uri, d, bytes(d)));
      }
      if (resolver) {
        // registered: the options keep it until agt_schema_compile_with runs
        cb = register('agt_schema_resolve_fn', (uri, res) => {
          const doc = resolver(uri);
          if (doc !== null && doc !== undefined) {
            const d = jsonText(doc);
            check(F.agt_schema_resolution_provide(res, d, bytes(d)));
          }
          return 0;
        }, (e) => {
          if (guard.exc === null) guard.exc = e;
          return 1;
        });
        check(F.agt_schema_options_set_resolver(o[0], cb, null));
      }
      const rc = F.agt_schema_compile_with(out, t, bytes(t), o[0]);
      if (guard.exc !== null) throw guard.exc;
      check(rc);
      this._own('schema', out[0], F.agt_schema_free);
    } finally {
      F.agt_schema_options_free(o[0]);
      if (cb !== null) koffi.unregister(cb);
    }
  }

  /** [] when valid, else the list of violations. */
  validate(instance) {
    const t = jsonText(instance);
    const out = [null];
    const rc = F.agt_schema_validate(this._handle(), t, bytes(t), out);
    const errors = take(out[0]);
    if (rc === 0) return [];
    if (rc === -4) return errors ? JSON.parse(errors) : [{ message: F.agt_error_message() }];
    throw errorFor(rc);
  }

  isValid(instance) {
    return this.validate(instance).length === 0;
  }
}

// ---- diff, changes --------------------------------------------------------------

class Diff extends Handle {
  constructor(text, _borrowed, _owner) {
    super();
    if (_borrowed !== undefined) {
      this._own('diff', _borrowed, null, _owner._core); // the owner frees it
      this._owner = _owner;
      return;
    }
    const t = str(text || '', 'Diff: text');
    const out = [null];
    check(F.agt_diff_parse(out, t, bytes(t)));
    this._own('diff', out[0], F.agt_diff_free);
  }

  static fromRepo(repoPath, mode = 0, fromRev = null, toRev = null) {
    const out = [null];
    check(F.agt_diff_from_repo(out, str(repoPath, 'Diff.fromRepo'), enumArg('ChangesMode', mode, 'Diff.fromRepo: mode'),
      str(fromRev, 'Diff.fromRepo'), str(toRev, 'Diff.fromRepo')));
    const d = Object.create(Diff.prototype);
    d._own('diff', out[0], F.agt_diff_free);
    return d;
  }

  toJson() { return outJson(F.agt_diff_to_json, this._handle()); }

  files() {
    const h = this._handle();
    const n = Number(F.agt_diff_file_count(h));
    const out = [];
    for (let i = 0; i < n; i++) {
      out.push({ path: F.agt_diff_file_path(h, i), oldPath: F.agt_diff_file_old_path(h, i),
        newPath: F.agt_diff_file_new_path(h, i), status: F.agt_diff_file_status(h, i),
        binary: F.agt_diff_file_is_binary(h, i) !== 0 });
    }
    return out;
  }

  get length() { return Number(F.agt_diff_file_count(this._handle())); }

  fileIndex(p) {
    const out = [0];
    check(F.agt_diff_file_index(this._handle(), str(p, 'Diff.fileIndex'), out));
    return Number(out[0]);
  }

  fileText(p) {
    const out = [null];
    check(F.agt_diff_file_text(this._handle(), str(p, 'Diff.fileText'), out));
    return take(out[0]);
  }

  setContent(p, text) {
    const t = str(text, 'Diff.setContent');
    check(F.agt_diff_set_content(this._handle(), str(p, 'Diff.setContent'), t, bytes(t)));
  }

  content(p) {
    const ptr = [null];
    const n = [0];
    check(F.agt_diff_content(this._handle(), str(p, 'Diff.content'), ptr, n));
    const len = Number(n[0]);
    return len === 0 ? '' : Buffer.from(koffi.decode(ptr[0], 'uint8_t', len)).toString('utf8');
  }

  anchor(p, snippet) {
    const out = [null];
    const rc = F.agt_diff_anchor(this._handle(), str(p, 'Diff.anchor'), str(snippet, 'Diff.anchor'), out);
    const text = take(out[0]);
    this._core.reraise();
    check(rc);
    return JSON.parse(text);
  }

  anchorBatch(comments) {
    const t = jsonText(comments);
    const out = [null];
    const rc = F.agt_diff_anchor_batch(this._handle(), t, bytes(t), out);
    const text = take(out[0]);
    this._core.reraise();
    check(rc);
    return JSON.parse(text);
  }

  /** fn(path, fileDiff, snippet, suggestion) -> new snippet or null. */
  setRelocator(fn, maxAttempts = 1) {
    const h = this._handle();
    if (fn === null || fn === undefined) {
      check(F.agt_diff_set_relocator(h, null, 1, null));
      this._core.setCallback('relocator', null);
      return;
    }
    const cb = relocator(fn, this._core);
    check(F.agt_diff_set_relocator(h, cb, intArg(maxAttempts, 'Diff.setRelocator'), null));
    this._core.setCallback('relocator', cb);
  }
}

class Changes extends Handle {
  constructor(repoPath, mode = 0, fromRev = null, toRev = null) {
    super();
    const out = [null];
    check(F.agt_changes_open(out, str(repoPath, 'Changes: repoPath'), enumArg('ChangesMode', mode, 'Changes: mode'),
      str(fromRev, 'Changes: fromRev'), str(toRev, 'Changes: toRev')));
    this._own('changes', out[0], F.agt_changes_free);
  }

  /** The change set's diff, borrowed: its C object lives as long as this one. */
  get diff() {
    return new Diff(undefined, F.agt_changes_diff(this._handle()), this);
  }

  info() { return outJson(F.agt_changes_info, this._handle()); }

  listFiles() { return outJson(F.agt_changes_list_files, this._handle()); }

  readFile(p) {
    const out = [null];
    const n = [0];
    check(F.agt_changes_read_file(this._handle(), str(p, 'Changes.readFile'), out, n));
    return takeN(out[0], Number(n[0]));
  }
}

class Cron extends Handle {
  constructor(expr) {
    super();
    const out = [null];
    check(F.agt_cron_parse(out, str(expr, 'Cron: expr')));
    this._own('cron', out[0], F.agt_cron_free);
  }

  /** First fire time strictly after afterUnixS (seconds), in the process zone or the IANA zone tz. */
  next(afterUnixS, tz) {
    const out = [0];
    const after = intArg(afterUnixS, 'Cron.next', true);
    if (tz === undefined || tz === null) check(F.agt_cron_next(this._handle(), after, out));
    else check(F.agt_cron_next_tz(this._handle(), after, str(tz, 'Cron.next: tz'), out));
    return out[0];
  }

  describe() {
    const out = [null];
    check(F.agt_cron_describe(this._handle(), out));
    return take(out[0]);
  }

  get expression() { return F.agt_cron_expression(this._handle()); }
}

// ---- model and agent --------------------------------------------------------------

function response(ptr) {
  try {
    return JSON.parse(F.agt_model_response_json(ptr));
  } finally {
    F.agt_model_response_free(ptr);
  }
}

class Model extends Handle {
  /**
   * new Model(protocol, {baseUrl, apiKey, name}): an HTTP model
   * (Protocol.OPENAI or Protocol.ANTHROPIC). Model.replay(path) answers from
   * a JSONL file; Model.host(fn) calls fn(request) -> canonical response.
   */
  constructor(protocol = 0, opts = {}, _h) {
    super();
    if (_h !== undefined) {
      this._own('model', _h.ptr, F.agt_model_free);
      this._http = false;
      return;
    }
    const out = [null];
    check(F.agt_model_new(out, enumArg('Protocol', protocol, 'Model: protocol')));
    this._own('model', out[0], F.agt_model_free);
    this._http = true;
    if (opts.baseUrl !== undefined) this.setBaseUrl(opts.baseUrl);
    if (opts.apiKey !== undefined) this.setApiKey(opts.apiKey);
    if (opts.name !== undefined) this.setName(opts.name);
  }

  static replay(p) {
    const out = [null];
    check(need('agt_model_new_replay')(out, str(p, 'Model.replay')));
    return new Model(0, {}, { ptr: out[0] });
  }

  /**
   * fn(request) -> canonical response (object or JSON text). An exception
   * fails the request with its text and is re-thrown when the C call
   * (complete(), Agent.run()) returns.
   */
  static host(fn) {
    if (typeof fn !== 'function') throw new TypeError('Model.host: fn must be a function');
    const holder = { core: null };
    const cb = koffi.register((reply, request) => {
      try {
        const t = jsonText(fn(JSON.parse(request)));
        return F.agt_model_reply_set(reply, t, bytes(t));
      } catch (e) {
        if (holder.core) holder.core.keep(e);
        try { F.agt_model_reply_set_error(reply, errorText(e)); } catch (e2) { /* kept above */ }
        return -1;
      }
    }, CALLBACK.agt_model_host_fn);
    const out = [null];
    const rc = need('agt_model_new_host')(out, cb, null);
    if (rc < 0) {
      koffi.unregister(cb);
      check(rc);
    }
    const m = new Model(0, {}, { ptr: out[0] });
    holder.core = m._core;
    m._core.cbs.set('host', cb); // C calls it until the model is freed
    return m;
  }

  setBaseUrl(u) { check(F.agt_model_set_base_url(this._handle(), str(u, 'Model.setBaseUrl'))); }

  setApiKey(k) { check(F.agt_model_set_api_key(this._handle(), str(k, 'Model.setApiKey'))); }

  setName(n) { check(F.agt_model_set_name(this._handle(), str(n, 'Model.setName'))); }

  setTimeouts(connectMs, totalMs, lowSpeedMs) {
    check(F.agt_model_set_timeouts(this._handle(), intArg(connectMs, 'Model.setTimeouts', true),
      intArg(totalMs, 'Model.setTimeouts', true), intArg(lowSpeedMs, 'Model.setTimeouts', true)));
  }

  setRetries(retries, backoffMs, backoffMaxMs) {
    check(F.agt_model_set_retries(this._handle(), intArg(retries, 'Model.setRetries'),
      intArg(backoffMs, 'Model.setRetries', true), intArg(backoffMaxMs, 'Model.setRetries', true)));
  }

  setMaxTokens(tokens, field = 0) {
    check(F.agt_model_set_max_tokens(this._handle(), intArg(tokens, 'Model.setMaxTokens'),
      enumArg('MaxTokensField', field, 'Model.setMaxTokens: field')));
  }

  setExtraBody(v) {
    const t = jsonText(v);
    check(F.agt_model_set_extra_body(this._handle(), t, bytes(t)));
  }

  /** Extra HTTP headers: {name: value} (or its JSON text); null clears. */
  setExtraHeaders(headers) {
    if (headers === null || headers === undefined) {
      check(F.agt_model_set_extra_headers(this._handle(), null, 0));
      return;
    }
    const t = jsonText(headers);
    check(F.agt_model_set_extra_headers(this._handle(), t, bytes(t)));
  }

  setStream(on) { check(F.agt_model_set_stream(this._handle(), on ? 1 : 0)); }

  /** fn(kind, text) -> truthy to cancel. */
  setStreamCallback(fn) {
    const h = this._handle();
    if (fn === null || fn === undefined) {
      check(F.agt_model_set_stream_callback(h, null, null));
      this._core.setCallback('stream', null);
      return;
    }
    const core = this._core;
    const cb = register('agt_stream_fn', (kind, text, n) => (fn(kind, decodeText(text, n)) ? 1 : 0),
      (e) => { core.keep(e); return 1; });
    check(F.agt_model_set_stream_callback(h, cb, null));
    core.setCallback('stream', cb);
  }

  /** fn() -> truthy to cancel the running request. */
  setCancelCallback(fn) {
    const h = this._handle();
    if (fn === null || fn === undefined) {
      check(F.agt_model_set_cancel_callback(h, null, null));
      this._core.setCallback('cancel', null);
      return;
    }
    const core = this._core;
    const cb = register('agt_cancel_fn', () => (fn() ? 1 : 0), (e) => { core.keep(e); return 1; });
    check(F.agt_model_set_cancel_callback(h, cb, null));
    core.setCallback('cancel', cb);
  }

  /** May be called while an async call runs on the model (from any thread in C). */
  cancel() {
    if (!this._open) throw new InvalidArgumentError('Model is closed', -3);
    F.agt_model_cancel(this._core.ptr);
  }

  get httpStatus() { return F.agt_model_http_status(this._handle()); }

  get attempts() { return F.agt_model_attempts(this._handle()); }

  /** One request; returns the canonical response. */
  complete(messages, tools) {
    const m = jsonText(messages);
    const t = tools === undefined || tools === null ? null : jsonText(tools);
    const out = [null];
    const rc = F.agt_model_complete(out, this._handle(), m, bytes(m), t, t === null ? 0 : bytes(t));
    this._core.reraise();
    check(rc);
    return response(out[0]);
  }

  /** complete() on a worker thread. */
  async completeAsync(messages, tools) {
    const h = this._handle();
    const m = jsonText(messages);
    const t = tools === undefined || tools === null ? null : jsonText(tools);
    const out = [null];
    const rc = await runAsync([this._core], F.agt_model_complete, [out, h, m, bytes(m), t, t === null ? 0 : bytes(t)]);
    this._core.reraise();
    if (rc < 0) throw asyncError(rc, 'Model.completeAsync', keptMessage('agt_model_error_message', h));
    return response(out[0]);
  }

  /** Parses a canonical response (also OpenAI tool-call shapes). */
  static parseResponse(text) {
    const t = str(text, 'Model.parseResponse');
    const out = [null];
    check(F.agt_model_response_parse(out, t, bytes(t)));
    return response(out[0]);
  }
}

function decodeText(ptr, n) {
  const len = Number(n);
  if (!ptr || len === 0) return '';
  return Buffer.from(koffi.decode(ptr, 'uint8_t', len)).toString('utf8');
}

// With a frozen registry, an HTTP model and sub-agents, AgentSwarm workers
// and background sub-agents call providers and the sub-agent approver on
// their own threads; koffi queues such a call to the JS thread, which a
// synchronous call keeps busy: it would wait forever. Those calls must use
// the async variants.
function threadsOk(registry, agent, what) {
  const rc = registry._core;
  const sub = rc.subAgent;
  if (!sub || !sub.http || rc.ptr === null || F.agt_registry_is_frozen(rc.ptr) === 0) return;
  const js = [...rc.cbs.keys()].filter((k) => k.startsWith('provider:')).map((k) => k.slice(9)).sort();
  const approver = (agent ? agent._core : sub.core).cbs.has('subagent_approver');
  if (js.length === 0 && !approver) return;
  throw new UnsupportedError(what + ': with a frozen registry and sub-agents of an HTTP model, ' +
    'AgentSwarm workers and background sub-agents call ' +
    (js.length ? 'the JS providers (' + js.join(', ') + ')' : '') + (js.length && approver ? ' and ' : '') +
    (approver ? 'the JS sub-agent approver' : '') + ' on their own threads, which a synchronous call ' +
    'would wait for forever: use the async variant (runAsync, resumeAsync, dispatchAsync)', -14);
}

// The objects an agent call uses may be closed for JS (the agent keeps
// them), but not busy in an async call of their own.
function idle(...objs) {
  for (const o of objs) {
    if (o._core.busy > 0) {
      throw new StateError(o.constructor.name + ' is busy: an async call runs on it (await it first)', -19);
    }
  }
}

class Agent extends Handle {
  /** The agent loop over a Session and a Model (both kept alive by the agent). */
  constructor(session, model, systemPrompt) {
    super();
    if (!(session instanceof Session)) throw new TypeError('Agent: session must be a Session');
    if (!(model instanceof Model)) throw new TypeError('Agent: model must be a Model');
    const out = [null];
    check(need('agt_agent_new')(out, session._handle(), model._handle()));
    this._own('agent', out[0], F.agt_agent_free, session._core, model._core);
    this.session = session;
    this.model = model;
    if (systemPrompt !== undefined && systemPrompt !== null) this.setSystemPrompt(systemPrompt);
  }

  setSystemPrompt(t) { check(F.agt_agent_set_system_prompt(this._handle(), str(t, 'Agent.setSystemPrompt'))); }

  addUserMessage(t) { check(F.agt_agent_add_user_message(this._handle(), str(t, 'Agent.addUserMessage'))); }

  /**
   * fn(kind, data): data a string for AgentEvent.TEXT and THINKING, an
   * object otherwise; a truthy return cancels the run. An exception cancels
   * the run and is re-thrown by run()/resume().
   */
  setEventCallback(fn) {
    const h = this._handle();
    if (fn === null || fn === undefined) {
      check(F.agt_agent_set_event_callback(h, null, null));
      this._core.setCallback('event', null);
      return;
    }
    const core = this._core;
    const cb = register('agt_agent_event_fn', (kind, data, n) => {
      const text = decodeText(data, n);
      return fn(kind, kind === 0 || kind === 1 ? text : JSON.parse(text)) ? 1 : 0;
    }, (e) => { core.keep(e); return 1; });
    check(F.agt_agent_set_event_callback(h, cb, null));
    core.setCallback('event', cb);
  }

  setMaxTurns(n) { check(F.agt_agent_set_max_turns(this._handle(), intArg(n, 'Agent.setMaxTurns'))); }

  setTokenBudget(n) { check(F.agt_agent_set_token_budget(this._handle(), intArg(n, 'Agent.setTokenBudget', true))); }

  setContextWindow(tokens, percent = 80) {
    check(F.agt_agent_set_context_window(this._handle(), intArg(tokens, 'Agent.setContextWindow', true),
      intArg(percent, 'Agent.setContextWindow')));
  }

  /** Offers Agent and AgentSwarm, backed by sub-agents (call before Registry.freeze()). */
  enableSubagents() {
    check(need('agt_agent_enable_subagents')(this._handle()));
    this.session.registry._core.subAgent = { core: this._core, http: this.model._http };
  }

  addSubagentProfile(name, description, tools = null, systemPromptAddition = null) {
    const tj = tools === null || tools === undefined ? null : JSON.stringify(Array.from(tools));
    check(F.agt_agent_add_subagent_profile(this._handle(), str(name, 'Agent.addSubagentProfile'),
      str(description, 'Agent.addSubagentProfile'), tj, str(systemPromptAddition, 'Agent.addSubagentProfile')));
  }

  setSwarmConcurrency(max) {
    check(F.agt_agent_set_swarm_concurrency(this._handle(), intArg(max, 'Agent.setSwarmConcurrency')));
  }

  setParallelTools(max) {
    check(F.agt_agent_set_parallel_tools(this._handle(), intArg(max, 'Agent.setParallelTools')));
  }

  setSubagentTimeout(ms) {
    check(F.agt_agent_set_subagent_timeout(this._handle(), intArg(ms, 'Agent.setSubagentTimeout', true)));
  }

  /**
   * fn(agentId, request) -> decision | [decision, reason] | [decision, reason, rule]:
   * decides a sub-agent's tool call that needs approval. An exception
   * rejects the call and is re-thrown by the next run()/resume().
   */
  setSubagentApprover(fn) {
    const h = this._handle();
    if (fn === null || fn === undefined) {
      check(F.agt_agent_set_subagent_approver(h, null, null));
      this._core.setCallback('subagent_approver', null);
      return;
    }
    const core = this._core;
    const cb = register('agt_subagent_approver_fn',
      (agentId, req) => applyDecision(req, fn(agentId, JSON.parse(F.agt_approval_json(req)))),
      (e) => { core.keep(e); return REJECT; });
    check(F.agt_agent_set_subagent_approver(h, cb, null));
    core.setCallback('subagent_approver', cb);
  }

  _after(rc, isAsync, what) {
    this._core.reraise();
    this.model._core.reraise();
    this.session._core.reraise();
    if (rc === 0 || rc === -7 || rc === -15) return this.stopReason;
    throw isAsync ? asyncError(rc, what, keptMessage('agt_agent_error_message', this._handle())) : errorFor(rc);
  }

  /** Runs until the loop stops; returns the stop reason (AgentEvent.STOP_*). */
  run() {
    const h = this._handle();
    idle(this.session, this.model);
    threadsOk(this.session.registry, this, 'Agent.run');
    return this._after(F.agt_agent_run(h), false);
  }

  resume() {
    const h = this._handle();
    idle(this.session, this.model);
    threadsOk(this.session.registry, this, 'Agent.resume');
    return this._after(F.agt_agent_resume(h), false);
  }

  _cores() {
    return [this._core, this.model._core, ...this.session._cores()];
  }

  /** run() on a worker thread; callbacks come on the JS thread meanwhile. */
  async runAsync() {
    const h = this._handle();
    idle(this.session, this.model);
    const rc = await runAsync(this._cores(), F.agt_agent_run, [h]);
    return this._after(rc, true, 'Agent.runAsync');
  }

  async resumeAsync() {
    const h = this._handle();
    idle(this.session, this.model);
    const rc = await runAsync(this._cores(), F.agt_agent_resume, [h]);
    return this._after(rc, true, 'Agent.resumeAsync');
  }

  answer(callId, decision, reason) {
    check(F.agt_agent_answer(this._handle(), str(callId, 'Agent.answer'),
      enumArg('Decision', decision, 'Agent.answer: decision'), str(reason, 'Agent.answer')));
  }

  /** Asks a running loop to stop (also while runAsync() is pending). */
  cancel() {
    if (!this._open) throw new InvalidArgumentError('Agent is closed', -3);
    F.agt_agent_cancel(this._core.ptr);
  }

  get stopReason() { return F.agt_agent_stop_reason(this._handle()); }

  get turns() { return F.agt_agent_turns(this._handle()); }

  get tokensUsed() { return F.agt_agent_tokens_used(this._handle()); }

  get text() { return F.agt_agent_text(this._handle()); }

  messages() { return outJson(F.agt_agent_messages, this._handle()); }

  save() { return outJson(F.agt_agent_save, this._handle()); }

  restore(state) {
    const t = jsonText(state);
    check(F.agt_agent_restore(this._handle(), t, bytes(t)));
  }
}

module.exports = {
  ...C,
  CONSTANTS: Object.freeze({ ...C }),
  ...ENUMS,
  AgtError,
  GenericError, NoMemoryError, InvalidArgumentError, ValidationError, NotFoundError, ExistsError,
  PendingError, FrozenError, ParseError, AgtIOError, DeniedError, TimeoutError, CancelledError,
  UnsupportedError, LimitError, GitError, NetError, AmbiguousError, StateError,
  errorFor,
  Registry, Session, Schema, Diff, Changes, Cron, Model, Agent, Result, Call, Hook,
  version, sandboxProbe, sandboxModeName, sandboxModeParse,
  libraryPath, missing,
  _stats: stats,
  _native: F,
};
