// Validations per second with Ajv on the cases the C benchmark wrote; each
// validation parses the instance text, like the C side ("parsed": parsed
// once beforehand).
// usage: node bench_ajv.js CASES SECONDS WORK_DIR [text|parsed] [2020|2019|4]
// (draft: Ajv's 2020 or 2019 class, or the ajv-draft-04 package)
// Prints: rate <validations per second>
//
// usage: node bench_ajv.js serve CASES WORK_DIR
// The other side of bench-schema --calls: compiles every case's schema once
// (Ajv 2020 class), then answers commands read from stdin, one a line:
//   check          -> one line of "v"/"i" per instance, in order
//   warm K MS      -> runs instance K (JSON.parse + validate) for MS ms, prints "ok"
//   time K N       -> runs instance K N times, prints "ns WALL cpu CPU" (nanoseconds;
//                     CPU from process.cpuUsage, so Node's GC threads count too)
"use strict";
const fs = require("fs");
const path = require("path");
if (process.argv[2] === "serve") {
  serve(process.argv[3], process.argv[4]);
  return;
}
const modules = path.join(process.argv[4] || ".", "node_modules");
const draft = process.argv[6] || "2020";
const Ajv = draft === "4" ? require(path.join(modules, "ajv-draft-04")).default
          : require(path.join(modules, "ajv", "dist", draft)).default;

const cases = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const seconds = Number(process.argv[3] || 1);
const parsed = process.argv[5] === "parsed";
const ajv = new Ajv({ strict: false, allErrors: false });
const work = [];
for (const c of cases) {
  const validate = ajv.compile(c.schema);
  for (const text of c.instances) work.push([validate, parsed ? JSON.parse(text) : text]);
}
// warm up the JIT before timing, as users' long-running hosts would be
const run = parsed ? (v, t) => v(t) : (v, t) => v(JSON.parse(t));
for (let i = 0; i < 2000; i++) for (const [v, t] of work) run(v, t);
let n = 0;
const start = process.hrtime.bigint();
const limit = BigInt(Math.round(seconds * 1e9));
while (process.hrtime.bigint() - start < limit) {
  for (const [v, t] of work) run(v, t);
  n += work.length;
}
const elapsed = Number(process.hrtime.bigint() - start) / 1e9;
console.log("rate " + (n / elapsed).toFixed(1));

function serve(casesPath, workDir) {
  const Ajv2020 = require(path.join(workDir, "node_modules", "ajv", "dist", "2020")).default;
  const ajv = new Ajv2020({ strict: false, allErrors: false });
  const work = [];
  for (const c of JSON.parse(fs.readFileSync(casesPath, "utf8"))) {
    const validate = ajv.compile(c.schema);
    for (const text of c.instances) work.push([validate, text]);
  }
  // text in, verdict out, as the C side: a syntax error is a rejection
  const run = (v, t) => {
    let doc;
    try {
      doc = JSON.parse(t);
    } catch (e) {
      return false;
    }
    return v(doc);
  };
  const buf = Buffer.alloc(65536);
  let pending = "";
  const out = (line) => fs.writeSync(1, line + "\n");
  for (;;) {
    let nl = pending.indexOf("\n");
    while (nl < 0) {
      let n;
      try {
        n = fs.readSync(0, buf, 0, buf.length, null);
      } catch (e) {
        if (e.code === "EAGAIN") continue;
        throw e;
      }
      if (n === 0) return;
      pending += buf.toString("utf8", 0, n);
      nl = pending.indexOf("\n");
    }
    const cmd = pending.slice(0, nl).split(" ");
    pending = pending.slice(nl + 1);
    if (cmd[0] === "check") {
      out(work.map(([v, t]) => (run(v, t) ? "v" : "i")).join(""));
    } else if (cmd[0] === "warm") {
      const [v, t] = work[Number(cmd[1])];
      const until = process.hrtime.bigint() + BigInt(Number(cmd[2]) * 1e6);
      let sink = 0;
      while (process.hrtime.bigint() < until) for (let i = 0; i < 16; i++) sink += run(v, t);
      out("ok " + sink);
    } else if (cmd[0] === "time") {
      const [v, t] = work[Number(cmd[1])];
      const n = Number(cmd[2]);
      let sink = 0;
      const c0 = process.cpuUsage();
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < n; i++) sink += run(v, t);
      const wall = process.hrtime.bigint() - t0;
      const c1 = process.cpuUsage(c0);
      out("ns " + wall + " cpu " + (c1.user + c1.system) * 1000 + " sink " + sink);
    } else if (cmd[0] === "quit") {
      return;
    }
  }
}
