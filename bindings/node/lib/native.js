'use strict';
// Loads libagenttools.so.1 through koffi and declares every public function.
//
// The prototypes come from ./cdecls.js (generated from the headers by
// bindings/tools/gen_decls.py). A function the loaded library does not export
// (an older library) is left out and listed in `missing`; the high-level
// classes then fail with a TypeError naming it.
//
// Search order for the library:
//   1. $AGENTTOOLS_LIB: the .so file, or a directory holding it (when set,
//      nothing else is tried);
//   2. the build trees of the source tree this package lives in
//      (<repo>/build/lib, then <repo>/build-*/lib), for a checkout;
//   3. the libdir pkg-config gives for agenttools (an installed library);
//   4. the system loader ("libagenttools.so.1": LD_LIBRARY_PATH, ld.so.cache),
//      then /usr/local/lib and /usr/lib, each with the multiarch folder first.
// The Error thrown lists every place tried and why each failed.

const fs = require('fs');
const path = require('path');
const childProcess = require('child_process');

const SONAME = 'libagenttools.so.1';

let koffi;
try {
  koffi = require('koffi');
} catch (e) {
  const err = new Error('agenttools: the koffi package is not installed (npm install koffi): ' + e.message);
  err.code = 'MODULE_NOT_FOUND';
  throw err;
}
const decls = require('./cdecls.js');

const MULTIARCH = { x64: 'x86_64-linux-gnu', arm64: 'aarch64-linux-gnu', ia32: 'i386-linux-gnu',
  arm: 'arm-linux-gnueabihf', riscv64: 'riscv64-linux-gnu', ppc64: 'powerpc64le-linux-gnu',
  s390x: 's390x-linux-gnu', loong64: 'loongarch64-linux-gnu' };

function pkgConfigLibdir(tried) {
  try {
    const r = childProcess.spawnSync('pkg-config', ['--variable=libdir', 'agenttools'],
      { encoding: 'utf8', timeout: 10000 });
    if (r.error) {
      tried.push('pkg-config: ' + r.error.message);
      return null;
    }
    const dir = (r.stdout || '').trim();
    if (r.status !== 0 || !dir) {
      tried.push('pkg-config --variable=libdir agenttools: ' +
        ((r.stderr || '').trim().split('\n')[0] || 'exit ' + r.status));
      return null;
    }
    return dir;
  } catch (e) {
    tried.push('pkg-config: ' + e.message);
    return null;
  }
}

// Yields candidate paths; tried collects the steps that gave no candidate.
function* candidates(env, tried) {
  const given = env.AGENTTOOLS_LIB;
  if (given) {
    let isDir = false;
    try { isDir = fs.statSync(given).isDirectory(); } catch (e) { /* reported below */ }
    if (isDir) {
      yield path.join(given, SONAME);
      yield path.join(given, 'libagenttools.so');
    } else {
      yield given;
    }
    return;
  }
  const repo = path.resolve(__dirname, '..', '..', '..');
  if (fs.existsSync(path.join(repo, 'include', 'agenttools', 'common.h'))) {
    yield path.join(repo, 'build', 'lib', SONAME);
    let dirs = [];
    try { dirs = fs.readdirSync(repo).filter((d) => d.startsWith('build-')).sort(); } catch (e) { /* none */ }
    for (const d of dirs) yield path.join(repo, d, 'lib', SONAME);
  }
  const libdir = pkgConfigLibdir(tried);
  if (libdir) yield path.join(libdir, SONAME);
  yield SONAME;
  const arch = MULTIARCH[process.arch];
  for (const d of ['/usr/local/lib', '/usr/lib']) {
    if (arch) yield path.join(d, arch, SONAME);
    yield path.join(d, SONAME);
  }
}

function loadLibrary(env) {
  const tried = [];
  for (const cand of candidates(env || process.env, tried)) {
    if (cand.includes('/') && !fs.existsSync(cand)) {
      tried.push(cand + ': no such file');
      continue;
    }
    try {
      return { lib: koffi.load(cand), path: cand };
    } catch (e) {
      tried.push(cand + ': ' + e.message.replace(/^Failed to load shared library: /, ''));
    }
  }
  const err = new Error('agenttools: libagenttools not found; install it (meson install), build it ' +
    'in the source tree this package came from, or set AGENTTOOLS_LIB to the library\'s path. ' +
    'Tried: ' + tried.join('; '));
  err.code = 'AGT_LIB_NOT_FOUND';
  err.tried = tried;
  throw err;
}

for (const name of decls.OPAQUE) koffi.opaque(name);
const CALLBACK = {};
for (const [name, proto] of decls.CALLBACKS) {
  koffi.proto(proto);
  CALLBACK[name] = koffi.pointer(koffi.resolve(name));
}

const loaded = loadLibrary();
const F = {};
const missing = [];
for (const [name, , proto] of decls.FUNCTIONS) {
  try {
    F[name] = loaded.lib.func(proto);
  } catch (e) {
    if (/Cannot find function/i.test(e.message)) missing.push(name);
    else throw new Error('agenttools: cannot declare ' + name + ' (' + proto + '): ' + e.message);
  }
}

module.exports = { koffi, F, CALLBACK, path: loaded.path, missing, decls, loadLibrary, SONAME };
