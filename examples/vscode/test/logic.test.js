'use strict';
// The VS Code example's logic (examples/vscode/src/logic.js), run without VS Code.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const childProcess = require('node:child_process');

const logic = require('../src/logic.js');

function repo() {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'agt-vscode-')));
  const git = (...a) => childProcess.execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@example.com', '-C', dir, ...a], { encoding: 'utf8' });
  git('init', '-q');
  fs.mkdirSync(path.join(dir, 'src'));
  fs.writeFileSync(path.join(dir, 'src', 'a.c'), 'int alpha;\nint beta;\n');
  fs.writeFileSync(path.join(dir, 'old.txt'), 'one\n');
  fs.writeFileSync(path.join(dir, 'logo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 1]));
  git('add', '-A');
  git('commit', '-q', '-m', 'c1');
  const c1 = git('rev-parse', 'HEAD').trim();
  fs.writeFileSync(path.join(dir, 'src', 'a.c'), 'int alpha;\nint beta2;\nint gamma;\n');
  git('mv', 'old.txt', 'new.txt');
  fs.writeFileSync(path.join(dir, 'logo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 2]));
  return { dir, c1, git };
}

test('vscode example: grepWorkspace lists the matches for the output channel', async () => {
  const { dir } = repo();
  try {
    const r = await logic.grepWorkspace(dir, 'beta|gamma');
    assert.equal(r.isError, false);
    const a = path.join(dir, 'src', 'a.c');
    assert.deepEqual(r.matches, [{ file: a, line: 2, text: 'int beta2;' }, { file: a, line: 3, text: 'int gamma;' }]);
    assert.deepEqual(r.lines, ['Grep "beta|gamma": 2 matches', a + ':2: int beta2;', a + ':3: int gamma;']);
    const bad = await logic.grepWorkspace(dir, '(unclosed');
    assert.equal(bad.isError, true);
    assert.equal(bad.lines[0], 'Grep "(unclosed" failed:');
    assert.deepEqual(bad.matches, []);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('vscode example: reviewPreview of the workspace through agt-review', { skip: !process.env.AGT_REVIEW && 'agt-review is not built (AGT_REVIEW unset)' }, async () => {
  const { dir, c1, git } = repo();
  try {
    const base = git('rev-parse', 'HEAD').trim();
    const p = await logic.reviewPreview(dir, { agtReview: process.env.AGT_REVIEW });
    const byPath = Object.fromEntries(p.files.map((f) => [f.path, f]));
    assert.deepEqual(Object.keys(byPath).sort(), ['logo.png', 'new.txt', 'src/a.c']);
    assert.equal(byPath['logo.png'].skip_reason, 'binary file');
    assert.deepEqual([byPath['new.txt'].status, byPath['new.txt'].old_path, byPath['new.txt'].added, byPath['new.txt'].deleted],
      ['renamed', 'old.txt', 0, 0]);
    // src/a.c: beta -> beta2 and gamma added: git diff --numstat says 2 1
    assert.deepEqual([byPath['src/a.c'].added, byPath['src/a.c'].deleted], [2, 1]);
    assert.equal(git('diff', 'HEAD', '--numstat', '--', 'src/a.c').trim(), '2\t1\tsrc/a.c');
    assert.equal(byPath['new.txt'].skip_reason, 'renamed without content change');
    assert.deepEqual(p.lines, [
      'Review preview: workspace change against ' + base.slice(0, 12) + ', 3 files',
      '  skip   modified  +0 -0  logo.png  (binary file)',
      '  skip   renamed   +0 -0  old.txt -> new.txt  (renamed without content change)',
      '  review modified  +2 -1  src/a.c',
      '1 to review, 2 skipped; +2 -1 lines',
    ]);
    assert.equal(p.change.base, base);
    // since a revision: the same change set, against c1 (here HEAD)
    const q = await logic.reviewPreview(dir, { agtReview: process.env.AGT_REVIEW, from: c1 });
    assert.equal(q.change.mode, 'range');
    await assert.rejects(logic.reviewPreview(dir, { agtReview: path.join(dir, 'no-such-agt-review') }),
      /no-such-agt-review --preview failed: spawn .*no-such-agt-review ENOENT/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
