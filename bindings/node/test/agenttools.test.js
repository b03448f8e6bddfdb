'use strict';
// node:test suite of the Node binding: the Python binding's cases, ported.
// Run from meson (suite 'bindings', tests/bindings/node_run.py) or by hand:
//   NODE_PATH=<dir with koffi>/node_modules node --test bindings/node/test/

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const childProcess = require('node:child_process');

const PKG = path.resolve(__dirname, '..');
const SRC = process.env.AGT_SOURCE_DIR || path.resolve(PKG, '..', '..');
const agt = require(PKG);

const DIFF = `--- a/f.c
+++ b/f.c
@@ -1,5 +1,6 @@
 line1
 line2
-line3
+changed3
 line4
 line5
+added6
`;

function tmpdir(prefix = 'agt-node-') {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

function rm(p) {
  fs.rmSync(p, { recursive: true, force: true });
}

// A chat registry and a session over a fresh folder, closed and removed after fn.
async function withSession(fn, sets = ['chat']) {
  const root = tmpdir();
  const reg = new agt.Registry(...sets);
  const s = new agt.Session(reg, root);
  try {
    await fn(s, reg, root);
  } finally {
    s.close();
    reg.close();
    rm(root);
  }
}

function read(p) {
  return fs.readFileSync(p, 'utf8');
}

function throwsAgt(fn, cls, code, message) {
  let err = null;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  assert.ok(err instanceof cls, 'expected ' + cls.name + ', got ' + (err && err.stack));
  assert.ok(err instanceof agt.AgtError);
  assert.ok(err instanceof Error);
  assert.equal(err.code, code);
  if (message !== undefined) assert.equal(err.message, message);
  return err;
}

// ---- basics ---------------------------------------------------------------

test('version and library path', () => {
  assert.equal(agt.version(), '1.0.0');
  assert.equal(fs.realpathSync(agt.libraryPath),
    fs.realpathSync(process.env.AGENTTOOLS_LIB || agt.libraryPath));
  assert.deepEqual(agt.missing, []);
});

test('errors are Error subclasses carrying the code and the message', async () => {
  await withSession((s, reg, root) => {
    const e = throwsAgt(() => reg.loadBuiltin('nope'), agt.NotFoundError, agt.AGT_ENOTFOUND,
      'unknown built-in tool set \'nope\' (expected "review" or "chat")');
    assert.equal(e.name, 'NotFoundError');
    throwsAgt(() => new agt.Session(reg, path.join(root, 'missing-dir')), agt.NotFoundError, -5);
    assert.equal(agt.NotFoundError.CODE, -5);
    assert.equal(agt.errorFor(-19, 'x').constructor, agt.StateError);
  });
});

test('export mcp', async () => {
  await withSession((s, reg) => {
    const tools = reg.export('mcp').tools;
    const names = tools.map((t) => t.name);
    assert.ok(names.includes('TodoList'));
    assert.ok(!names.includes('WebSearch')); // host-backed, no provider set
    assert.ok(tools.every((t) => 'inputSchema' in t));
  });
});

test('closed handle refuses calls, close twice is fine', () => {
  const r = new agt.Registry();
  r.close();
  r.close();
  assert.equal(r.closed, true);
  throwsAgt(() => r.names(), agt.InvalidArgumentError, -3, 'Registry is closed');
});

test('strings of the wrong type are refused with the argument named', async () => {
  await withSession((s) => {
    assert.throws(() => s.dispatch(42, {}), { name: 'TypeError', message: 'Session.dispatch: tool: expected a string, got number' });
  });
});

// ---- dispatch ---------------------------------------------------------------

test('dispatch TodoList', async () => {
  await withSession((s) => {
    const r = s.dispatch('TodoList', { todos: [{ title: 'write tests', status: 'in_progress' }, { title: 'ship', status: 'pending' }] });
    assert.equal(r.isError, false);
    assert.equal(r.tool, 'TodoList');
    assert.deepEqual(s.todos(), [{ title: 'write tests', status: 'in_progress' }, { title: 'ship', status: 'pending' }]);
  });
});

test('a schema error is a result', async () => {
  await withSession((s) => {
    const r = s.dispatch('TodoList', { todos: [{ title: 'x', status: 'later' }] }, 'c9');
    assert.equal(r.isError, true);
    assert.equal(r.status, agt.AGT_EINVALID);
    assert.equal(r.callId, 'c9');
    assert.match(r.text, /\/todos\/0\/status/);
  });
});

test('unknown tool', async () => {
  await withSession((s) => {
    const r = s.dispatch('NoSuchTool', {});
    assert.equal(r.isError, true);
    assert.equal(r.status, agt.AGT_ENOTFOUND);
  });
});

test('Read, Grep, Edit', async () => {
  await withSession((s, reg, root) => {
    fs.writeFileSync(path.join(root, 'a.txt'), 'alpha\nbeta\ngamma\n');
    let r = s.dispatch('Read', { path: 'a.txt' });
    assert.equal(r.isError, false, r.text);
    assert.ok(r.text.startsWith('1\talpha\n2\tbeta\n3\tgamma\n'), r.text);
    r = s.dispatch('Grep', { pattern: '^b', output_mode: 'content' });
    assert.equal(r.isError, false, r.text);
    assert.match(r.text, /a\.txt:2:beta/);
    s.mode = agt.Mode.YOLO;
    r = s.dispatch('Edit', { path: 'a.txt', old_string: 'beta', new_string: 'BETA' });
    assert.equal(r.isError, false, r.text);
    assert.equal(read(path.join(root, 'a.txt')), 'alpha\nBETA\ngamma\n');
  });
});

test('Edit ladder and strict mode', async () => {
  await withSession((s, reg, root) => {
    fs.writeFileSync(path.join(root, 't.c'), '{\n\tx();\n}\n');
    s.mode = 'yolo';
    const args = { path: 't.c', old_string: '    x();', new_string: '    y();' };
    s.setEditOptions(agt.AGT_EDIT_STRICT);
    assert.equal(s.dispatch('Edit', args).isError, true);
    s.setEditOptions(0);
    const r = s.dispatch('Edit', args);
    assert.equal(r.isError, false, r.text);
    assert.match(r.text, /\(matched after ignoring indentation: the file uses tabs\)/);
    assert.equal(read(path.join(root, 't.c')), '{\n\ty();\n}\n');
    assert.throws(() => s.setEditOptions(0x80), agt.AgtError);
  });
});

test('rules', async () => {
  await withSession((s) => {
    s.deny('Bash(rm *)');
    assert.deepEqual(s.rules().deny, ['Bash(rm *)']);
    throwsAgt(() => s.addRule(agt.RuleKind.ALLOW, 'Bash('), agt.ValidationError, -4);
  });
});

// ---- enums ----------------------------------------------------------------------

test('enum objects and AGT_* aliases', () => {
  assert.equal(agt.Mode.YOLO, agt.AGT_MODE_YOLO);
  assert.equal(agt.Decision.APPROVE_SESSION, agt.AGT_DECISION_APPROVE_SESSION);
  assert.equal(agt.Status.EPENDING, -7);
  assert.equal(agt.Status.OK, 0);
  assert.equal(agt.Draft.V2020_12, agt.AGT_DRAFT_2020_12);
  assert.equal(agt.SandboxNetwork.ON, agt.AGT_SANDBOX_NETWORK_ON);
  assert.deepEqual(Object.keys(agt.Mode), ['MANUAL', 'PLAN', 'YOLO', 'AUTO']);
  assert.ok(Object.isFrozen(agt.Mode));
});

test('Session.mode takes values and names, refuses others', async () => {
  await withSession((s) => {
    s.mode = agt.Mode.YOLO;
    assert.equal(s.mode, agt.Mode.YOLO);
    s.mode = 'plan';
    assert.equal(s.mode, agt.Mode.PLAN);
    s.mode = agt.AGT_MODE_AUTO;
    assert.equal(s.mode, agt.Mode.AUTO);
    assert.throws(() => { s.mode = 'fast'; },
      { name: 'RangeError', message: 'Session.mode: "fast" is not one of manual (0), plan (1), yolo (2), auto (3)' });
    assert.throws(() => { s.mode = 9; }, RangeError);
    assert.equal(s.mode, agt.Mode.AUTO);
  });
});

// ---- providers ----------------------------------------------------------------------

const SHOUT = {
  name: 'Shout', plan_task: true, main_task: true, access: 'read',
  definition: { name: 'Shout', description: 'Upper-cases text.',
    parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
};

async function withProvider(fn) {
  const root = tmpdir();
  const reg = new agt.Registry();
  try {
    await fn(reg, root);
  } finally {
    reg.close();
    rm(root);
  }
}

test('a JS provider', async () => {
  await withProvider((reg, root) => {
    reg.setProvider('Shout', (call) => call.args.text.toUpperCase() + '!');
    reg.add(SHOUT);
    assert.equal(reg.isOffered('Shout'), true);
    const s = new agt.Session(reg, root);
    let r = s.dispatch('Shout', { text: 'héllo' }, 's1');
    assert.equal(r.isError, false);
    assert.equal(r.text, 'HÉLLO!');
    assert.equal(r.callId, 's1');
    r = s.dispatch('Shout', { txt: 'x' });
    assert.equal(r.isError, true);
    assert.equal(r.status, agt.AGT_EINVALID);
    s.close();
  });
});

test('a provider JSON result', async () => {
  await withProvider((reg, root) => {
    reg.setProvider('Shout', (call) => ({ len: call.args.text.length }));
    reg.add(SHOUT);
    const s = new agt.Session(reg, root);
    const r = s.dispatch('Shout', { text: 'abc' });
    assert.deepEqual(r.json, { len: 3 });
    assert.deepEqual(JSON.parse(r.text), { len: 3 });
    s.close();
  });
});

test('a throwing provider gives an error result and keeps the exception', async () => {
  await withProvider((reg, root) => {
    reg.setProvider('Shout', () => { throw new RangeError('disk on fire'); });
    reg.add(SHOUT);
    const s = new agt.Session(reg, root);
    const r = s.dispatch('Shout', { text: 'x' });
    assert.equal(r.isError, true);
    assert.match(r.text, /RangeError: disk on fire/);
    assert.ok(r.exception instanceof RangeError);
    const r2 = s.dispatch('Shout', { text: 'y' }); // the session keeps working
    assert.equal(r2.isError, true);
    assert.ok(r2.exception instanceof RangeError);
    reg.setProvider('Shout', (call) => call.args.text);
    const r3 = s.dispatch('Shout', { text: 'z' });
    assert.equal(r3.text, 'z');
    assert.equal(r3.exception, null);
    s.close();
  });
});

test('a frozen registry refuses changes', () => {
  const reg = new agt.Registry('review');
  reg.freeze();
  assert.equal(reg.frozen, true);
  throwsAgt(() => reg.loadBuiltin('chat'), agt.FrozenError, -8);
  reg.close();
});

// ---- schema, diff, cron ----------------------------------------------------------

test('Schema.validate', () => {
  const sc = new agt.Schema({ type: 'object', properties: { a: { type: 'array', items: { type: 'integer' } } } });
  assert.deepEqual(sc.validate({ a: [1, 2] }), []);
  const errs = sc.validate({ a: [1, 'x'] });
  assert.equal(errs.length, 1);
  assert.equal(errs[0].instance_path, '/a/1');
  assert.equal(errs[0].keyword, 'type');
  throwsAgt(() => sc.validate('{not json'), agt.ParseError, -9);
  sc.close();
});

test('Schema compile errors', () => {
  throwsAgt(() => new agt.Schema('{'), agt.ParseError, -9);
  throwsAgt(() => new agt.Schema({ type: 12 }), agt.ValidationError, -4);
});

test('Schema resolver', () => {
  const sc = new agt.Schema({ $ref: 'http://example.com/int.json' },
    { resolver: (uri) => (uri.endsWith('int.json') ? { type: 'integer' } : null) });
  assert.equal(sc.isValid(3), true);
  assert.equal(sc.isValid('"3"'), false); // string arguments are JSON text
  sc.close();
  assert.throws(() => new agt.Schema({ $ref: 'http://example.com/x.json' },
    { resolver: () => { throw new EvalError('resolver broke'); } }), EvalError);
});

test('Diff.anchor', () => {
  const d = new agt.Diff(DIFF);
  assert.equal(d.length, 1);
  assert.equal(d.files()[0].path, 'f.c');
  let a = d.anchor('f.c', 'changed3\nline4');
  assert.deepEqual([a.start_line, a.end_line, a.side, a.method], [3, 4, 'new', 'hunk_new']);
  a = d.anchor('f.c', 'line3');
  assert.deepEqual([a.start_line, a.end_line, a.side, a.method], [3, 3, 'old', 'hunk_old']);
  const h = d.toJson().files[0].hunks[0];
  assert.deepEqual([h.old_start, h.old_lines, h.new_start, h.new_lines], [1, 5, 1, 6]);
  d.close();
});

test('Diff relocator', () => {
  const d = new agt.Diff(DIFF);
  const asked = [];
  d.setRelocator((p, fileDiff, snippet) => { asked.push(snippet); return 'added6'; }, 1);
  const a = d.anchor('f.c', 'nowhere to be found');
  assert.deepEqual(asked, ['nowhere to be found']);
  assert.equal(a.relocated, true);
  assert.deepEqual([a.start_line, a.end_line], [6, 6]);
  d.setRelocator(() => { throw new URIError('relocator broke'); }, 1);
  assert.throws(() => d.anchor('f.c', 'nowhere to be found'), URIError);
  d.close();
});

test('Diff parse error', () => {
  throwsAgt(() => new agt.Diff('@@ -1 +1 @@\n-a\n+b\n'), agt.ParseError, -9);
});

test('Cron.next', () => {
  const c = new agt.Cron('0 9 * * 1-5');
  // 1970-01-01 was a Thursday: the first weekday 09:00 UTC is that day
  assert.equal(c.next(0, 'UTC'), 9 * 3600);
  // Friday 1970-01-02 09:00 -> Monday 1970-01-05 09:00
  assert.equal(c.next(86400 + 9 * 3600, 'UTC'), 4 * 86400 + 9 * 3600);
  assert.equal(c.describe(), 'at 09:00 on weekdays');
  assert.equal(c.expression, '0 9 * * 1-5');
  c.close();
  throwsAgt(() => new agt.Cron('61 * * * *'), agt.ParseError, -9);
});

test('sensitive patterns', async () => {
  await withSession((s, reg, root) => {
    fs.writeFileSync(path.join(root, 'app.secret'), 'KEY=1\n');
    fs.writeFileSync(path.join(root, 'cert.pem'), 'not a key\n');
    assert.equal(s.dispatch('Read', { path: 'app.secret' }).isError, false);
    s.addSensitivePattern('*.secret');
    const r = s.dispatch('Read', { path: 'app.secret' });
    assert.ok(r.isError && r.text.includes('sensitive'), r.text);
    assert.equal(s.dispatch('Read', { path: 'cert.pem' }).status, -11);
    s.removeSensitivePattern('*.pem');
    assert.equal(s.dispatch('Read', { path: 'cert.pem' }).isError, false);
    const pats = s.sensitivePatterns();
    assert.ok(pats.includes('*.secret'));
    assert.ok(!pats.includes('*.pem'));
    throwsAgt(() => s.removeSensitivePattern('*.pem'), agt.NotFoundError, -5);
    throwsAgt(() => s.addSensitivePattern('/abs'), agt.InvalidArgumentError, -3);
    assert.equal(s.checkSensitive('x/.env.prod'), 'environment file (.env)');
    assert.equal(s.checkSensitive('README.md'), null);
    const key = '-----BEGIN ' + 'RSA PRIVATE KEY-----\nMIIE\n';
    assert.equal(s.checkSensitive('notes', key), 'private key (a PRIVATE KEY block in the content)');
  });
});

test('sandbox probe and policy', async () => {
  await withSession((s) => {
    const p = agt.sandboxProbe();
    assert.deepEqual(Object.keys(p).sort(), ['landlock_abi', 'mount_namespace', 'network_namespace',
      'pid_namespace', 'root', 'seccomp', 'subreaper', 'supported', 'user_namespace']);
    assert.equal(agt.sandboxModeName(agt.SandboxMode.READ_ONLY), 'read-only');
    assert.equal(agt.sandboxModeParse('workspace-write'), agt.SandboxMode.WORKSPACE_WRITE);
    throwsAgt(() => agt.sandboxModeParse('sometimes'), agt.InvalidArgumentError, -3);
    s.setSandbox('off', agt.SandboxNetwork.ON);
    assert.deepEqual(s.sandbox(), [agt.SandboxMode.OFF, 1, agt.SandboxEnforce.BEST_EFFORT]);
    const st = s.sandboxStatus();
    assert.deepEqual([st.mode, st.network, st.sandboxed], ['off', 'on', false]);
  });
});

// ---- declarations and library lookup ---------------------------------------------

function headerFunctions() {
  const dir = path.join(SRC, 'include', 'agenttools');
  const names = [];
  for (const f of fs.readdirSync(dir).filter((x) => x.endsWith('.h')).sort()) {
    const text = read(path.join(dir, f)).replace(/\/\*[\s\S]*?\*\//g, ' ').replace(/\/\/[^\n]*/g, ' ');
    for (const m of text.matchAll(/AGT_EXTERN\s+[^;{}]*?\b(agt_\w+)\s*\(/g)) names.push(m[1]);
  }
  return names;
}

test('every header function is declared and exported', () => {
  const decls = require(path.join(PKG, 'lib', 'cdecls.js'));
  const hdr = headerFunctions();
  const bound = decls.FUNCTIONS.map((f) => f[0]);
  assert.ok(hdr.length > 150, 'headers parsed: ' + hdr.length);
  assert.deepEqual([...bound].sort(), [...hdr].sort());
  for (const name of hdr) assert.equal(typeof agt._native[name], 'function', name);
});

test('the generated declarations are fresh', () => {
  const p = childProcess.spawnSync('python3', [path.join(SRC, 'bindings', 'tools', 'gen_decls.py'), '--check'],
    { encoding: 'utf8' });
  assert.equal(p.status, 0, p.stdout + p.stderr);
});

// Runs a copy of the package outside the source tree (as an installed copy)
// with the given environment.
function runCopy(env, code) {
  const dir = tmpdir('agt-node-pkg-');
  try {
    fs.cpSync(PKG, path.join(dir, 'agenttools'), { recursive: true, filter: (p) => !p.includes(path.sep + 'test') });
    const e = { PATH: process.env.PATH, NODE_PATH: process.env.NODE_PATH || '', ...env };
    for (const k of ['LD_PRELOAD', 'ASAN_OPTIONS', 'UBSAN_OPTIONS']) { // a sanitizer build's runtime
      if (process.env[k] !== undefined) e[k] = process.env[k];
    }
    return childProcess.spawnSync(process.execPath, ['-e', code], { cwd: dir, env: e, encoding: 'utf8' });
  } finally {
    rm(dir);
  }
}

test('library lookup: AGENTTOOLS_LIB names a missing file', () => {
  const p = runCopy({ AGENTTOOLS_LIB: '/nonexistent/libagenttools.so.1' }, "require('./agenttools')");
  assert.notEqual(p.status, 0);
  assert.match(p.stderr, /libagenttools not found; install it \(meson install\), build it in the source tree this package came from, or set AGENTTOOLS_LIB to the library's path\. Tried: \/nonexistent\/libagenttools\.so\.1: no such file\n/);
});

test('library lookup: pkg-config libdir, and every place tried named', () => {
  const real = fs.realpathSync(agt.libraryPath);
  const pc = tmpdir('agt-node-pc-');
  try {
    const libdir = path.dirname(agt.libraryPath);
    fs.writeFileSync(path.join(pc, 'agenttools.pc'), `libdir=${libdir}\nName: agenttools\nDescription: t\nVersion: 1.0.0\nLibs: -L\${libdir} -lagenttools\n`);
    let p = runCopy({ PKG_CONFIG_PATH: pc, PKG_CONFIG_LIBDIR: pc },
      "const a = require('./agenttools'); console.log(a.libraryPath); console.log(a.version())");
    assert.equal(p.status, 0, p.stderr);
    assert.deepEqual(p.stdout.trim().split('\n'), [path.join(libdir, 'libagenttools.so.1'), '1.0.0']);
    assert.equal(fs.realpathSync(p.stdout.split('\n')[0]), real);
    // no pkg-config entry and no installed library: the error lists the steps
    const empty = path.join(pc, 'empty');
    fs.mkdirSync(empty);
    p = runCopy({ PKG_CONFIG_PATH: empty, PKG_CONFIG_LIBDIR: empty }, "require('./agenttools')");
    if (p.status === 0) return; // an installed libagenttools.so.1 is on this machine
    const m = /Tried: (.*)\n/.exec(p.stderr);
    assert.ok(m, p.stderr);
    const steps = m[1].split('; ').map((x) => x.split(':')[0]);
    assert.equal(steps[0], 'pkg-config --variable=libdir agenttools');
    assert.equal(steps[1], 'libagenttools.so.1');
    assert.ok(steps.includes('/usr/local/lib/libagenttools.so.1'), m[1]);
    assert.ok(steps.includes('/usr/lib/libagenttools.so.1'), m[1]);
  } finally {
    rm(pc);
  }
});

// ---- lifetime -----------------------------------------------------------------------

const LIFETIME = String.raw`
const agt = require(process.argv[1]);
const fs = require('fs'), os = require('os'), path = require('path');
const root = process.argv[2]; // made and removed by the parent
const names = ['registry', 'session', 'model', 'agent'];
function perms(a) { return a.length <= 1 ? [a] : a.flatMap((x, i) => perms([...a.slice(0, i), ...a.slice(i + 1)]).map((p) => [x, ...p])); }
function make() {
  const registry = new agt.Registry('chat');
  const session = new agt.Session(registry, root);
  const model = agt.Model.host(() => ({ content: 'still here' }));
  return { registry, session, model, agent: new agt.Agent(session, model) };
}
let runs = 0;
for (const order of perms(names)) {
  const objs = make();
  order.forEach((name, k) => {
    objs[name].close();
    if (name !== 'agent' && !order.slice(0, k + 1).includes('agent')) {
      // what the agent depends on is closed for JS but kept for it
      objs.agent.addUserMessage('again');
      if (objs.agent.run() !== agt.AgentEvent.STOP_DONE || objs.agent.text !== 'still here') throw new Error('agent broke after ' + order);
    }
  });
  for (const name of names) {
    try { objs[name]._handle(); throw new Error(name + ' usable after close'); } catch (e) { if (!(e instanceof agt.InvalidArgumentError)) throw e; }
  }
  runs++;
}
if (agt._stats.freed !== agt._stats.created) throw new Error('freed ' + agt._stats.freed + ' of ' + agt._stats.created);
// collection in any order: graphs left to the garbage collector
(async () => {
  const before = agt._stats.freed;
  (function graphs() { // nothing of them stays reachable once this returns
    for (let i = 0; i < 24; i++) {
      const o = make();
      o.agent.addUserMessage('hi');
      o.agent.run();
      if (i % 2) o.session.close(); // some half closed
    }
  })();
  for (let i = 0; i < 50 && agt._stats.freed < before + 96; i++) {
    global.gc();
    await new Promise((r) => setImmediate(r));
  }
  console.log(runs, agt._stats.freed - before);
})();
`;

test('every order of close(), and collection by the garbage collector', () => {
  const root = tmpdir('agt-node-life-');
  let p;
  try {
    p = childProcess.spawnSync(process.execPath, ['--expose-gc', '-e', LIFETIME, PKG, root],
      { encoding: 'utf8', env: process.env, timeout: 120000 });
  } finally {
    rm(root);
  }
  assert.equal(p.status, 0, p.stderr);
  assert.equal(p.stdout.trim(), '24 96'); // 24 orders; 24 graphs x 4 objects freed by the collector
});

test('Changes and its borrowed Diff outlive their users', () => {
  const repo = tmpdir('agt-node-git-');
  try {
    const git = (...a) => childProcess.execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@example.com', '-C', repo, ...a]);
    git('init', '-q');
    fs.writeFileSync(path.join(repo, 'a.txt'), 'one\n');
    git('add', '-A');
    git('commit', '-q', '-m', 'c1');
    fs.writeFileSync(path.join(repo, 'a.txt'), 'two\n');
    const reg = new agt.Registry('review');
    const s = new agt.Session(reg, repo);
    const ch = new agt.Changes(repo);
    const d = ch.diff;
    s.setChanges(ch);
    ch.close(); // the session and the diff still hold it
    reg.close();
    assert.equal(d.length, 1);
    const r = s.dispatch('file_read_diff', { path_array: ['a.txt'] });
    assert.match(r.text, /\+two/);
    s.close();
    assert.equal(d.length, 1);
    d.close();
    assert.equal(ch._core.ptr, null); // freed once its last user went
  } finally {
    rm(repo);
  }
});

// ---- approvals, callbacks, hooks, save and restore -------------------------------

test('a pending call answered from JS', async () => {
  await withSession((s, reg, root) => {
    const e = throwsAgt(() => s.dispatch('Write', { path: 'w.txt', content: 'hé\n' }, 'w1'), agt.PendingError, -7,
      "the Write call w1 waits for the user's approval (agt_session_pending)");
    assert.equal(e.callId, 'w1');
    const pend = s.pending();
    assert.deepEqual(pend.map((p) => p.call_id), ['w1']);
    assert.equal(pend[0].tool, 'Write');
    assert.deepEqual(pend[0].arguments, { path: 'w.txt', content: 'hé\n' });
    assert.equal(pend[0].suggested_rule, 'Write(./w.txt)');
    assert.ok(!fs.existsSync(path.join(root, 'w.txt')));
    const r = s.answer('w1', agt.Decision.APPROVE);
    assert.equal(r.isError, false, r.text);
    assert.equal(r.callId, 'w1');
    assert.equal(read(path.join(root, 'w.txt')), 'hé\n');
    throwsAgt(() => s.answer('w1', agt.Decision.APPROVE), agt.NotFoundError, -5);
  });
});

test('a pending call rejected with a reason', async () => {
  await withSession((s, reg, root) => {
    assert.throws(() => s.dispatch('Write', { path: 'w.txt', content: 'x' }, 'w2'), agt.PendingError);
    const r = s.answer('w2', 'reject', 'not now');
    assert.equal(r.isError, true);
    assert.equal(r.status, agt.AGT_EDENIED);
    assert.match(r.text, /not now/);
    assert.ok(!fs.existsSync(path.join(root, 'w.txt')));
    assert.throws(() => s.answer('w2', 'maybe'), { name: 'RangeError',
      message: 'Session.answer: decision: "maybe" is not one of approve (0), approve_session (1), reject (2)' });
  });
});

test('approver callback, its reason, and its exception', async () => {
  await withSession((s, reg, root) => {
    const seen = [];
    s.setApprover((req) => { seen.push(req.tool + ' ' + req.call_id); return agt.Decision.APPROVE; });
    const r = s.dispatch('Write', { path: 'ok.txt', content: '1' }, 'a1');
    assert.equal(r.isError, false, r.text);
    assert.deepEqual(seen, ['Write a1']);
    s.setApprover(() => ['reject', 'the approver says no']);
    const r2 = s.dispatch('Write', { path: 'no.txt', content: '1' });
    assert.equal(r2.isError, true);
    assert.equal(r2.status, agt.AGT_EDENIED);
    assert.match(r2.text, /the approver says no/);
    s.setApprover(() => { throw new SyntaxError('approver broke'); });
    assert.throws(() => s.dispatch('Write', { path: 'no.txt', content: '1' }), { name: 'SyntaxError', message: 'approver broke' });
    assert.ok(!fs.existsSync(path.join(root, 'no.txt')));
    // an approve_session answer stores the rule
    s.setApprover(() => ({ decision: 'approve_session', rule: 'Write(./*.md)' }));
    assert.equal(s.dispatch('Write', { path: 'a.md', content: '1' }).isError, false);
    s.setApprover(null);
    assert.equal(s.dispatch('Write', { path: 'b.md', content: '2' }).isError, false); // by the stored rule
    assert.throws(() => s.dispatch('Write', { path: 'c.txt', content: '3' }, 'p1'), agt.PendingError);
  });
});

// libc's gettid: which OS thread a JS callback runs on
const koffi = require('koffi');
const gettid = koffi.load('libc.so.6').func('int gettid(void)');

test('dispatchAsync runs off the JS thread; its approver is delivered on the JS thread', async () => {
  await withSession(async (s, reg, root) => {
    s.mode = 'yolo';
    // the command waits until JS (free while the call runs) creates "go"
    const cmd = 'for i in $(seq 4000); do [ -e go ] && break; sleep 0.005; done; [ -e go ] || { echo gave-up; exit 3; }; echo saw-go';
    const p = s.dispatchAsync('Bash', { command: cmd, timeout: 60000 }, 'b1');
    assert.throws(() => s.todos(), { name: 'StateError', message: 'Session is busy: an async call runs on it (await it first)' });
    // the registry is not frozen: one thread at a time uses it too
    assert.throws(() => new agt.Session(reg, root), { name: 'StateError', message: 'Registry is busy: an async call runs on it (await it first)' });
    await new Promise((r) => setImmediate(r));
    fs.writeFileSync(path.join(root, 'go'), '');
    const r = await p;
    assert.equal(r.isError, false, r.text);
    assert.equal(r.callId, 'b1');
    // the line itself (a sanitizer build's runtime, preloaded, may print warnings around it)
    assert.match(r.text, /(^|\n)saw-go\n/);
    s.mode = 'manual';
    const tids = [];
    s.setApprover((req) => { tids.push(gettid()); return req.tool === 'Write' ? 'approve' : 'reject'; });
    const r2 = await s.dispatchAsync('Write', { path: 'async.txt', content: 'from a worker' }, 'w9');
    assert.equal(r2.isError, false, r2.text);
    assert.deepEqual(tids, [process.pid]); // the JS (main) thread's id is the pid
    assert.equal(read(path.join(root, 'async.txt')), 'from a worker');
    s.setApprover(() => { throw new TypeError('async approver broke'); });
    await assert.rejects(s.dispatchAsync('Write', { path: 'x.txt', content: '1' }), { name: 'TypeError', message: 'async approver broke' });
    s.setApprover(null);
    await assert.rejects(s.dispatchAsync('Write', { path: 'x.txt', content: '1' }, 'w10'), (e) => e instanceof agt.PendingError && e.callId === 'w10');
    const r3 = await s.answerAsync('w10', 'approve');
    assert.equal(r3.isError, false, r3.text);
    assert.equal(read(path.join(root, 'x.txt')), '1');
    assert.equal(s.todos().length, 0); // usable again
  });
});

test('callbacks cleared with null', async () => {
  await withSession((s, reg) => {
    s.setApprover(() => 'approve');
    s.setApprover(null);
    assert.throws(() => s.dispatch('Write', { path: 'p.txt', content: '1' }, 'w1'), agt.PendingError);
    assert.deepEqual(s.pending().map((p) => p.call_id), ['w1']);
    s.setPreHook((h) => h.deny('no'));
    s.setPreHook(null);
    assert.equal(s.dispatch('TodoList', { todos: [] }).isError, false);
    s.setPostHook(null);
    s.setClock(() => 0);
    s.setClock(null);
    reg.setProvider('WebSearch', () => 'x');
    reg.setProvider('WebSearch', null);
    const m = agt.Model.host(() => ({ content: 'x' }));
    const a = new agt.Agent(s, m);
    m.setStreamCallback(() => false);
    m.setStreamCallback(null);
    m.setCancelCallback(null);
    a.setEventCallback(() => undefined);
    a.setEventCallback(null);
    a.close();
    m.close();
  });
});

test('a pre hook denies and rewrites, a post hook appends', async () => {
  await withSession((s) => {
    s.setPreHook((h) => { if (h.tool === 'TodoList') h.deny('no todos today'); });
    let r = s.dispatch('TodoList', { todos: [] });
    assert.equal(r.isError, true);
    assert.equal(r.status, agt.AGT_EDENIED);
    assert.match(r.text, /no todos today/);
    const seen = [];
    s.setPreHook((h) => { seen.push([h.tool, h.args]); h.rewrite({ todos: [{ title: 'rewritten', status: 'pending' }] }); });
    s.setPostHook((h) => { seen.push([h.resultIsError, h.resultText.split('\n')[0]]); h.append('checked by the host'); });
    r = s.dispatch('TodoList', { todos: [{ title: 'original', status: 'pending' }] }, 't1');
    assert.equal(r.isError, false, r.text);
    assert.deepEqual(s.todos(), [{ title: 'rewritten', status: 'pending' }]);
    assert.ok(r.text.endsWith('\n\nchecked by the host'), r.text);
    assert.deepEqual(seen, [['TodoList', { todos: [{ title: 'original', status: 'pending' }] }],
      [false, 'Todo list updated: 1 item (0 done, 0 in progress, 1 pending).']]);
    s.setPostHook((h) => { h.deny('too late'); });
    assert.throws(() => s.dispatch('TodoList', { todos: [] }), (e) => e instanceof agt.StateError);
  });
});

test('session save and restore', async () => {
  await withSession((s, reg, root) => {
    s.mode = 'auto';
    s.deny('Bash(rm *)');
    s.allow('Write(./notes/*)');
    s.dispatch('TodoList', { todos: [{ title: 'keep me', status: 'in_progress' }] });
    const saved = s.save();
    assert.equal(saved.format, 1);
    const s2 = new agt.Session(reg, root);
    assert.deepEqual(s2.todos(), []);
    s2.restore(saved);
    assert.equal(s2.mode, agt.Mode.AUTO);
    assert.deepEqual(s2.todos(), [{ title: 'keep me', status: 'in_progress' }]);
    assert.deepEqual(s2.rules(), s.rules());
    assert.deepEqual(s2.rules().deny, ['Bash(rm *)']);
    s2.restore(JSON.stringify(saved)); // JSON text too
    throwsAgt(() => s2.restore('{not json'), agt.ParseError, -9);
    s2.close();
  });
});

test('cron jobs through the host view', async () => {
  await withSession((s) => {
    const t0 = 1796022000; // 2026-11-30T07:00:00Z
    let now = t0 * 1000;
    s.setClock(() => now);
    s.mode = 'yolo';
    const r = s.dispatch('CronCreate', { cron: '*/10 * * * *', prompt: 'check' });
    assert.equal(r.isError, false, r.text);
    const jobs = s.cronList();
    assert.equal(jobs.length, 1);
    const id = jobs[0].id;
    let h = 2166136261; // FNV-1a 32 of the id: the job's fixed jitter (docs/tasks.md)
    for (const ch of Buffer.from(id)) h = Number((BigInt((h ^ ch) >>> 0) * 16777619n) & 0xFFFFFFFFn);
    assert.deepEqual(jobs, [{ id, cron: '*/10 * * * *', prompt: 'check', recurring: true, paused: false,
      created: t0, last_fire: null, next_fire: t0 + 600 + (h % 61) }]);
    s.cronSetPaused(id);
    assert.equal(s.cronList()[0].paused, true);
    now = (t0 + 3605) * 1000;
    s.cronSetPaused(id, false);
    assert.equal(s.cronList()[0].next_fire, t0 + 4200 + (h % 61));
    s.cronDelete(id);
    assert.deepEqual(s.cronList(), []);
    throwsAgt(() => s.cronDelete(id), agt.NotFoundError, -5);
    s.setClock(null);
  });
});

// ---- agent and models -------------------------------------------------------------

test('a JS model provider drives the loop', async () => {
  await withSession((s) => {
    const requests = [];
    const answers = [
      { content: '', finish_reason: 'tool_calls', tool_calls: [{ id: 'call_1', name: 'TodoList',
        arguments: JSON.stringify({ todos: [{ title: 'from the model', status: 'pending' }] }) }] },
      { content: 'all done', finish_reason: 'stop' },
    ];
    const m = agt.Model.host((req) => { requests.push(req); return answers[requests.length - 1]; });
    const a = new agt.Agent(s, m, 'be brief');
    const events = [];
    a.setEventCallback((kind, data) => { events.push([kind, kind === agt.AgentEvent.TOOL_STARTED ? data.name : null]); });
    a.addUserMessage('plan it');
    assert.equal(a.run(), agt.AgentEvent.STOP_DONE);
    assert.equal(a.text, 'all done');
    assert.equal(a.turns, 2);
    assert.deepEqual(s.todos(), [{ title: 'from the model', status: 'pending' }]);
    assert.deepEqual(requests[0].messages[0], { role: 'system', content: 'be brief' });
    assert.equal(requests[1].messages.at(-1).role, 'tool');
    assert.equal(requests[1].messages.at(-1).tool_call_id, 'call_1');
    assert.ok(events.some(([k, n]) => k === agt.AgentEvent.TOOL_STARTED && n === 'TodoList'));
    assert.ok(events.some(([k]) => k === agt.AgentEvent.TOOL_FINISHED));
    a.close();
    m.close();
  });
});

test('a JS model provider exception is re-thrown', async () => {
  await withSession(async (s) => {
    const m = agt.Model.host(() => { throw new ReferenceError('model is down'); });
    const a = new agt.Agent(s, m);
    a.addUserMessage('hi');
    assert.throws(() => a.run(), { name: 'ReferenceError', message: 'model is down' });
    assert.throws(() => m.complete([{ role: 'user', content: 'hi' }]), ReferenceError);
    await assert.rejects(a.runAsync(), { name: 'ReferenceError', message: 'model is down' });
    a.close();
    m.close();
  });
});

// agt_error_message() is per thread: an async call fails on a worker thread,
// so the message comes from the one the library keeps with the handle. The
// expected texts are the library's own (lib/session/pending.c, agent.c,
// model.c), the same as the synchronous calls give.
test('async failures carry the full message of the worker thread', async () => {
  const root1 = tmpdir(), root2 = tmpdir();
  const reg = new agt.Registry('chat');
  const s1 = new agt.Session(reg, root1), s2 = new agt.Session(reg, root2);
  try {
    const want = (id) => ({ name: 'NotFoundError', code: -5,
      message: "no call with id '" + id + "' is waiting for approval" });
    assert.throws(() => s1.answer('nope', 'approve'), want('nope'));
    await assert.rejects(s1.answerAsync('nope', 'approve'), want('nope'));
    // two sessions failing at once: each error is its own session's
    await Promise.all([
      assert.rejects(s1.answerAsync('one', 'approve'), want('one')),
      assert.rejects(s2.answerAsync('two', 'reject'), want('two')),
    ]);
    // a success in between clears what was kept
    const r = await s1.dispatchAsync('Glob', { pattern: '*' }, 'g1');
    assert.equal(r.isError, false);
    await assert.rejects(s1.answerAsync('three', 'approve'), want('three'));

    const m = agt.Model.host(() => ({ content: 'hi', finish_reason: 'stop' }));
    const a = new agt.Agent(s1, m);
    const noUser = { name: 'StateError', code: -19, message: 'the conversation has no user message to answer' };
    assert.throws(() => a.run(), noUser);
    await assert.rejects(a.runAsync(), noUser);
    a.close();
    m.close();

    const unnamed = new agt.Model(agt.Protocol.OPENAI);
    const noName = { name: 'InvalidArgumentError', code: -3, message: 'model has no name: call agt_model_set_name()' };
    assert.throws(() => unnamed.complete([{ role: 'user', content: 'hi' }]), noName);
    await assert.rejects(unnamed.completeAsync([{ role: 'user', content: 'hi' }]), noName);
    unnamed.close();
  } finally {
    s1.close();
    s2.close();
    reg.close();
    rm(root1);
    rm(root2);
  }
});

test('complete, completeAsync and parseResponse', async () => {
  const m = agt.Model.host((req) => ({ content: 'pong ' + req.messages[0].content, finish_reason: 'stop' }));
  let r = m.complete([{ role: 'user', content: 'ping' }]);
  assert.equal(r.content, 'pong ping');
  assert.equal(r.finish_reason, 'stop');
  r = await m.completeAsync([{ role: 'user', content: 'async ping' }]);
  assert.equal(r.content, 'pong async ping');
  m.close();
  r = agt.Model.parseResponse('{"content":"x","tool_calls":[{"id":"a","function":{"name":"Read","arguments":{"path":"f"}}}]}');
  assert.equal(r.tool_calls[0].name, 'Read');
  assert.deepEqual(JSON.parse(r.tool_calls[0].arguments), { path: 'f' });
  throwsAgt(() => agt.Model.parseResponse('[1]'), agt.ParseError, -9);
});

test('model extra headers', () => {
  const m = new agt.Model(agt.Protocol.OPENAI);
  m.setExtraHeaders({ 'OpenAI-Organization': 'org-1' });
  m.setExtraHeaders(null);
  const e = throwsAgt(() => m.setExtraHeaders({ 'Bad Name': 'x' }), agt.ValidationError, -4);
  assert.match(e.message, /"Bad Name" is not a header name/);
  m.close();
});

function agentCall(id, prompt, description) {
  return { tool_calls: [{ id, name: 'Agent', arguments: JSON.stringify({ prompt, description }) }] };
}

function writeCall(id, p, content) {
  return { tool_calls: [{ id, name: 'Write', arguments: JSON.stringify({ path: p, content }) }] };
}

function replay(root, lines) {
  const p = path.join(root, 'replay-' + Math.random().toString(16).slice(2) + '.jsonl');
  fs.writeFileSync(p, lines.map((l) => JSON.stringify(l) + '\n').join(''));
  return agt.Model.replay(p);
}

// Root: one Agent call; agent-1: Write <p> (asks: manual mode), then its
// final text; root: its final text.
function writer(s, root, approver, p) {
  const m = replay(root, [agentCall('p1', 'write it', 'writer'), writeCall('call_0', p, 'from agent-1'),
    { content: 'wrote it' }, { content: 'parent done' }]);
  const a = new agt.Agent(s, m, 'You are a test.');
  a.enableSubagents();
  s.mode = 'manual';
  s.allow('Agent');
  a.setSubagentApprover(approver);
  a.addUserMessage('Do it.');
  return [m, a];
}

test('a replay-model agent run: the sub-agent approver approves', async () => {
  await withSession((s, reg, root) => {
    const seen = [];
    const [m, a] = writer(s, root, (agentId, req) => { seen.push([agentId, req]); return agt.Decision.APPROVE; }, 'sub.txt');
    assert.equal(a.run(), agt.AgentEvent.STOP_DONE);
    assert.equal(seen.length, 1);
    const [agentId, req] = seen[0];
    assert.equal(agentId, 'agent-1');
    assert.equal(req.call_id, 'call_0');
    assert.equal(req.tool, 'Write');
    assert.deepEqual(req.arguments, { path: 'sub.txt', content: 'from agent-1' });
    assert.ok(!('agent_id' in req));
    assert.equal(read(path.join(root, 'sub.txt')), 'from agent-1');
    assert.equal(a.text, 'parent done');
    assert.equal(a.turns, 2);
    assert.deepEqual(s.pending(), []);
    const tool = a.messages().filter((x) => x.role === 'tool');
    assert.equal(tool.length, 1);
    assert.equal(tool[0].tool_call_id, 'p1');
    assert.ok(tool[0].content.startsWith('Sub-agent agent-1 (writer) finished after 2 model calls. Resume it with resume: "agent-1".'), tool[0].content);
    assert.ok(tool[0].content.endsWith('wrote it'));
    a.close();
    m.close();
  });
});

test('the sub-agent approver rejects with a reason; its exception is re-thrown', async () => {
  await withSession((s, reg, root) => {
    const [m, a] = writer(s, root, () => ['reject', 'not in this test'], 'rejected.txt');
    assert.equal(a.run(), agt.AgentEvent.STOP_DONE);
    assert.ok(!fs.existsSync(path.join(root, 'rejected.txt')));
    const subs = a.save().subs;
    assert.deepEqual(subs.map((x) => x.id), ['agent-1']);
    const subTool = subs[0].agent.messages.filter((x) => x.role === 'tool');
    assert.equal(subTool.length, 1);
    assert.equal(subTool[0].tool_call_id, 'call_0');
    assert.match(subTool[0].content, /not in this test/);
    a.close();
    m.close();
  });
  await withSession((s, reg, root) => {
    const [m, a] = writer(s, root, () => { throw new EvalError('approver broke'); }, 'raised.txt');
    assert.throws(() => a.run(), { name: 'EvalError', message: 'approver broke' });
    assert.ok(!fs.existsSync(path.join(root, 'raised.txt')));
    assert.equal(a.stopReason, agt.AgentEvent.STOP_DONE);
    a.close();
    m.close();
  });
});

test('without a sub-agent approver the run pauses; answered, resumeAsync finishes it', async () => {
  await withSession(async (s, reg, root) => {
    const [m, a] = writer(s, root, () => 'approve', 'paused.txt');
    a.setSubagentApprover(null);
    const events = [];
    a.setEventCallback((kind) => { events.push(kind); });
    assert.equal(await a.runAsync(), agt.AgentEvent.STOP_APPROVAL);
    assert.ok(events.includes(agt.AgentEvent.APPROVAL));
    assert.deepEqual(s.pending().map((x) => [x.call_id, x.agent_id]), [['agent-1/call_0', 'agent-1']]);
    a.answer('agent-1/call_0', 'approve');
    assert.equal(await a.resumeAsync(), agt.AgentEvent.STOP_DONE);
    assert.equal(read(path.join(root, 'paused.txt')), 'from agent-1');
    a.close();
    m.close();
  });
});

test('agent save and restore', async () => {
  await withSession((s, reg, root) => {
    const m = replay(root, [{ content: 'first answer' }, { content: 'second answer' }]);
    const a = new agt.Agent(s, m, 'sys');
    a.addUserMessage('one');
    assert.equal(a.run(), agt.AgentEvent.STOP_DONE);
    const saved = a.save();
    const m2 = agt.Model.host((req) => ({ content: 'seen ' + req.messages.length + ' messages' }));
    const b = new agt.Agent(s, m2);
    b.restore(saved);
    assert.deepEqual(b.messages(), a.messages());
    b.addUserMessage('two');
    assert.equal(b.run(), agt.AgentEvent.STOP_DONE);
    assert.equal(b.text, 'seen 4 messages'); // system, user, assistant, user
    throwsAgt(() => b.restore('{'), agt.ParseError, -9);
    for (const x of [a, b, m, m2]) x.close();
  });
});

test('sub-agent setter ranges', async () => {
  await withSession((s, reg, root) => {
    const m = replay(root, [{ content: 'x' }]);
    const a = new agt.Agent(s, m);
    for (const bad of [-1, 129, 2 ** 32 + 4, -(2 ** 40)]) {
      throwsAgt(() => a.setSwarmConcurrency(bad), agt.InvalidArgumentError, -3,
        'agt_agent_set_swarm_concurrency: max not in 0..128 (0: no cap)');
    }
    for (const good of [0, 1, 128, 4]) assert.equal(a.setSwarmConcurrency(good), undefined);
    for (const bad of [0, -1, 65, 2 ** 32 + 4]) {
      throwsAgt(() => a.setParallelTools(bad), agt.InvalidArgumentError, -3, 'agt_agent_set_parallel_tools: max not in 1..64');
    }
    assert.throws(() => a.setParallelTools(2.5), TypeError);
    for (const [bad, msg] of [[-1, 'negative limit'], [2592000001, 'limit over 30 days (2592000000 ms); 0 means no limit'],
      [2n ** 64n + 1000n, 'limit over 30 days (2592000000 ms); 0 means no limit']]) {
      throwsAgt(() => a.setSubagentTimeout(bad), agt.InvalidArgumentError, -3, 'agt_agent_set_subagent_timeout: ' + msg);
    }
    a.setSubagentTimeout(1800000);
    a.close();
    throwsAgt(() => a.enableSubagents(), agt.InvalidArgumentError, -3, 'Agent is closed');
    m.close();
  });
});

// A small OpenAI chat-completions server on 127.0.0.1, in this process (its
// handler runs on the JS thread while runAsync's C call runs on a worker).
function swarmServer() {
  const http = require('node:http');
  const srv = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      const msgs = JSON.parse(body).messages;
      const users = msgs.filter((x) => x.role === 'user').map((x) => x.content);
      const user = users[users.length - 1];
      let msg;
      if (msgs[msgs.length - 1].role === 'tool') {
        msg = { role: 'assistant', content: user === 'Do it.' ? 'root done' : 'done ' + user };
      } else if (user === 'Do it.') {
        msg = { role: 'assistant', content: null, tool_calls: [{ id: 's1', type: 'function',
          function: { name: 'AgentSwarm', arguments: JSON.stringify({ items: ['a', 'b'], prompt_template: 'shout {{item}}' }) } }] };
      } else {
        msg = { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function',
          function: { name: 'Shout', arguments: JSON.stringify({ text: user.split(' ').slice(1).join(' ') }) } }] };
      }
      const out = JSON.stringify({ id: 'x', object: 'chat.completion', model: 'm',
        choices: [{ index: 0, message: msg, finish_reason: 'stop' }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } });
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(out) });
      res.end(out);
    });
  });
  return new Promise((resolve) => srv.listen(0, '127.0.0.1', () => resolve(srv)));
}

test('AgentSwarm workers call a JS provider (runAsync; a synchronous run is refused)', async () => {
  const srv = await swarmServer();
  const root = tmpdir();
  const reg = new agt.Registry('chat');
  try {
    const calls = [];
    reg.setProvider('Shout', (call) => { calls.push([call.args.text, gettid()]); return call.args.text.toUpperCase(); });
    reg.add(SHOUT);
    const s = new agt.Session(reg, root);
    const m = new agt.Model(agt.Protocol.OPENAI, { baseUrl: 'http://127.0.0.1:' + srv.address().port + '/v1', apiKey: 'k', name: 'm' });
    m.setStream(false);
    const a = new agt.Agent(s, m, 'You are a test.');
    a.enableSubagents();
    a.setSwarmConcurrency(2);
    s.allow('AgentSwarm');
    s.allow('Shout');
    reg.freeze();
    a.addUserMessage('Do it.');
    throwsAgt(() => a.run(), agt.UnsupportedError, -14,
      'Agent.run: with a frozen registry and sub-agents of an HTTP model, AgentSwarm workers and background ' +
      'sub-agents call the JS providers (Shout) on their own threads, which a synchronous call would wait for ' +
      'forever: use the async variant (runAsync, resumeAsync, dispatchAsync)');
    assert.equal(await a.runAsync(), agt.AgentEvent.STOP_DONE);
    assert.equal(a.text, 'root done');
    assert.deepEqual(calls.map((c) => c[0]).sort(), ['a', 'b']);
    assert.deepEqual(calls.map((c) => c[1]), [process.pid, process.pid]); // delivered on the JS thread
    const got = [];
    for (const sub of a.save().subs) {
      for (const x of sub.agent.messages) if (x.role === 'tool') got.push(x.content);
    }
    assert.deepEqual(got.sort(), ['A', 'B']);
    a.close();
    m.close();
    s.close();
  } finally {
    reg.close();
    srv.close();
    rm(root);
  }
});

test('close() while an async call runs: the call finishes, then the C objects go', async () => {
  const root = tmpdir();
  try {
    const reg = new agt.Registry('chat');
    const s = new agt.Session(reg, root);
    s.mode = 'yolo';
    const freed = agt._stats.freed;
    const p = s.dispatchAsync('Bash', { command: 'for i in $(seq 4000); do [ -e go ] && break; sleep 0.005; done; [ -e go ] || exit 3; echo finished' });
    s.close();
    reg.close();
    assert.equal(agt._stats.freed, freed); // both still in use by the call
    assert.notEqual(s._core.ptr, null);
    throwsAgt(() => s.todos(), agt.InvalidArgumentError, -3, 'Session is closed');
    fs.writeFileSync(path.join(root, 'go'), '');
    const r = await p;
    assert.equal(r.isError, false, r.text);
    assert.match(r.text, /(^|\n)finished\n/);
    assert.equal(s._core.ptr, null);
    assert.equal(reg._core.ptr, null);
    assert.equal(agt._stats.freed, freed + 2);
  } finally {
    rm(root);
  }
});

test('index.d.ts declares every export', () => {
  const declared = new Set();
  for (const f of ['index.d.ts', path.join('lib', 'constants.d.ts')]) {
    for (const m of read(path.join(PKG, f)).matchAll(/^export (?:declare )?(?:class|function|const|interface|type) (\w+)/gm)) declared.add(m[1]);
  }
  const exported = Object.keys(agt).filter((k) => !k.startsWith('_'));
  assert.deepEqual(exported.filter((k) => !declared.has(k)), []);
  assert.ok(exported.length > 100, String(exported.length)); // the classes, the errors and the AGT_* constants
  // and the other way round: nothing declared that index.js does not export (types aside)
  const typesOnly = ['Json', 'EnumArg', 'ProviderResult', 'ApprovalRequest', 'ApproverAnswer', 'ReviewComment',
    'SchemaOptions', 'DiffFile', 'ModelResponse', 'ModelOptions'];
  assert.deepEqual([...declared].filter((k) => !(k in agt) && !typesOnly.includes(k)), []);
});
