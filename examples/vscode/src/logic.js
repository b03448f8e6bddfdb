'use strict';
// The extension's logic, apart from the vscode API so the Node tests run it
// directly (tests/bindings: examples/vscode/test/logic.test.js).

const childProcess = require('child_process');
const agt = require('agenttools');

function parseGrep(root, text) {
  const matches = [];
  for (const line of text.split('\n')) {
    const m = /^(.*?):(\d+):(.*)$/.exec(line);
    if (m) matches.push({ file: root.replace(/\/$/, '') + '/' + m[1], line: Number(m[2]), text: m[3] });
  }
  return matches;
}

function formatGrep(pattern, matches, isError, text) {
  if (isError) return ['Grep ' + JSON.stringify(pattern) + ' failed:', ...text.split('\n')];
  const lines = ['Grep ' + JSON.stringify(pattern) + ': ' + matches.length + ' match' + (matches.length === 1 ? '' : 'es')];
  for (const m of matches) lines.push(m.file + ':' + m.line + ': ' + m.text);
  return lines;
}

async function grepWorkspace(root, pattern, options = {}) {
  const reg = new agt.Registry('chat');
  let s = null;
  try {
    s = new agt.Session(reg, root);
    const args = { pattern, output_mode: 'content' };
    if (options.glob) args.glob = options.glob;
    const r = await s.dispatchAsync('Grep', args); // the extension host stays responsive
    const matches = r.isError ? [] : parseGrep(root, r.text);
    return { matches, isError: r.isError, lines: formatGrep(pattern, matches, r.isError, r.text) };
  } finally {
    if (s) s.close();
    reg.close();
  }
}

function formatPreview(p) {
  const lines = ['Review preview: ' + p.change.mode + ' change' + (p.change.base ? ' against ' + p.change.base.slice(0, 12) : '') +
    ', ' + p.summary.files + ' file' + (p.summary.files === 1 ? '' : 's')];
  for (const f of p.files) {
    const name = f.old_path && f.old_path !== f.path ? f.old_path + ' -> ' + f.path : f.path;
    lines.push('  ' + (f.review ? 'review ' : 'skip   ') + f.status.padEnd(9) + ' +' + f.added + ' -' + f.deleted + '  ' + name +
      (f.skip_reason ? '  (' + f.skip_reason + ')' : ''));
  }
  lines.push(p.summary.to_review + ' to review, ' + p.summary.skipped + ' skipped; +' + p.summary.added + ' -' + p.summary.deleted + ' lines');
  return lines;
}

function reviewPreview(root, options = {}) {
  const exe = options.agtReview || 'agt-review';
  const args = ['--repo', root, '--preview', '--format', 'json'];
  if (options.from) args.push('--from', options.from);
  return new Promise((resolve, reject) => {
    childProcess.execFile(exe, args, { maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) {
        reject(new Error(exe + ' --preview failed: ' + (String(stderr).trim() || err.message)));
        return;
      }
      let p;
      try {
        p = JSON.parse(stdout);
      } catch (e) {
        reject(new Error(exe + ' --preview printed no JSON: ' + e.message));
        return;
      }
      resolve({ ...p, lines: formatPreview(p) });
    });
  });
}

module.exports = { grepWorkspace, reviewPreview, formatGrep, formatPreview, parseGrep };
