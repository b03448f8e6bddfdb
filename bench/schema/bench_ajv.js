// Validations per second with Ajv on the cases the C benchmark wrote; each
// validation parses the instance text, like the C side ("parsed": parsed
// once beforehand).
// usage: node bench_ajv.js CASES SECONDS WORK_DIR [text|parsed] [2020|2019|4]
// (draft: Ajv's 2020 or 2019 class, or the ajv-draft-04 package)
// Prints: rate <validations per second>
"use strict";
const fs = require("fs");
const path = require("path");
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
