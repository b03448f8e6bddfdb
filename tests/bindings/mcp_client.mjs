// Drives agt-mcp with the official MCP TypeScript SDK (a client nobody here
// wrote) over stdio and prints TAP. Run by mcp_sdk.py, which installs the SDK
// next to a copy of this file.
// usage: node mcp_client.mjs AGT_MCP WORKSPACE
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema, ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [exe, ws] = process.argv.slice(2);
let n = 0, failed = 0;
function check(ok, name, detail) {
  n++;
  if (!ok) failed++;
  console.log(`${ok ? "ok" : "not ok"} ${n} - ${name}`);
  if (!ok && detail !== undefined) console.log("# " + JSON.stringify(detail));
}
function text(r) {
  return r.content.length === 1 && r.content[0].type === "text" ? r.content[0].text : null;
}

const transport = new StdioClientTransport({
  command: exe,
  args: ["--root", ws, "--allow", "Edit(src/**)", "--deny", "Bash(rm *)"],
  stderr: "inherit",
});
const client = new Client({ name: "agt-mcp-test", version: "1.0.0" });
try {
  await client.connect(transport);
  const info = client.getServerVersion();
  check(info.name === "agt-mcp" && info.version === "1.0.0", "serverInfo", info);
  check(client.getServerCapabilities().tools !== undefined, "tools capability");

  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const t of ["Read", "Write", "Edit", "Grep", "Glob", "TodoList"])
    check(names.includes(t), `tools/list offers ${t}`, names);
  check(!names.includes("WebSearch"), "host-backed WebSearch is not offered", names);
  const read = tools.find((t) => t.name === "Read");
  check(read && read.inputSchema.type === "object" && read.inputSchema.required[0] === "path",
        "Read inputSchema", read && read.inputSchema);

  for (const t of ["CronCreate", "CronList", "CronDelete", "EnterPlanMode", "ExitPlanMode"])
    check(!names.includes(t), `${t} is left out over MCP`, names);
  const ann = (name) => (tools.find((t) => t.name === name) || {}).annotations;
  check(JSON.stringify(ann("Read")) === JSON.stringify({ title: "Read", readOnlyHint: true,
    destructiveHint: false, idempotentHint: true, openWorldHint: false }),
    "Read annotations seen by the SDK: read-only", ann("Read"));
  check(JSON.stringify(ann("Edit")) === JSON.stringify({ title: "Edit", readOnlyHint: false,
    destructiveHint: true, idempotentHint: false, openWorldHint: false }),
    "Edit annotations: destructive, closed world", ann("Edit"));
  check(JSON.stringify(ann("Bash")) === JSON.stringify({ title: "Bash", readOnlyHint: false,
    destructiveHint: true, idempotentHint: false, openWorldHint: true }),
    "Bash annotations: open world", ann("Bash"));

  let r = await client.callTool({ name: "TodoList",
    arguments: { todos: [{ title: "ship it", status: "in_progress" }] } });
  check(r.isError === false && text(r).includes("ship it"), "TodoList call", r);
  r = await client.callTool({ name: "TodoList", arguments: { todos: "no" } });
  check(r.isError === true && text(r).includes("/todos: expected array, got string"),
        "schema error is an isError result", r);

  r = await client.callTool({ name: "Read", arguments: { path: "a.txt" } });
  check(r.isError === false && text(r).startsWith("1\talpha\n2\tbeta\n"), "Read a.txt", r);
  r = await client.callTool({ name: "Read", arguments: { path: "missing.txt" } });
  check(r.isError === true && text(r).includes("missing.txt"), "Read of a missing file", r);

  r = await client.callTool({ name: "Grep", arguments: { pattern: "beta", output_mode: "content" } });
  check(r.isError === false && text(r) === "a.txt:2:beta\nsrc/m.c:2:int beta;", "Grep content", r);
  r = await client.callTool({ name: "Glob", arguments: { pattern: "*.c" } });
  check(r.isError === false && text(r) === "src/m.c", "Glob *.c", r);

  r = await client.callTool({ name: "Edit",
    arguments: { path: "src/m.c", old_string: "int beta;", new_string: "int gamma;" } });
  check(r.isError === false, "Edit allowed by --allow Edit(src/**)", r);
  check(readFileSync(join(ws, "src/m.c"), "utf8") === "int alpha;\nint gamma;\n",
        "Edit changed the file on disk");
  r = await client.callTool({ name: "Edit",
    arguments: { path: "a.txt", old_string: "beta", new_string: "x" } });
  check(r.isError === true && text(r).includes("--allow 'Edit(./a.txt)'"),
        "Edit outside the allowed folder is refused with the rule to pass", r);
  check(readFileSync(join(ws, "a.txt"), "utf8") === "alpha\nbeta\n", "refused Edit left a.txt");
  r = await client.callTool({ name: "Bash", arguments: { command: "rm -rf src" } });
  check(r.isError === true, "Bash denied by --deny", r);

  let err = null;
  try { await client.callTool({ name: "NoSuchTool", arguments: {} }); } catch (e) { err = e; }
  check(err !== null && err.code === -32602, "unknown tool is a JSON-RPC error -32602", err && err.message);
  await client.ping();
  check(true, "ping");
  await client.close();
  check(true, "clean close");

  // A client with roots and elicitation, the server without --root and
  // started in another folder: the workspace is the client's root, and calls
  // needing approval are put to the "user" (this handler).
  const elsewhere = mkdtempSync(join(tmpdir(), "agt-mcp-sdk-cwd-"));
  const asked = [];
  const t2 = new StdioClientTransport({ command: exe, args: [], cwd: elsewhere, stderr: "inherit" });
  const c2 = new Client({ name: "agt-mcp-test-2", version: "1.0.0" },
                        { capabilities: { roots: { listChanged: true }, elicitation: {} } });
  let rootsAsked = 0;
  c2.setRequestHandler(ListRootsRequestSchema, async () => {
    rootsAsked++;
    return { roots: [{ uri: pathToFileURL(ws).href, name: "workspace" }] };
  });
  c2.setRequestHandler(ElicitRequestSchema, async (req) => {
    const p = req.params;
    asked.push(p.message);
    const d = p.requestedSchema.properties.decision;
    if (p.message.includes("sdk-yes.txt") && d.enum.includes("allow"))
      return { action: "accept", content: { decision: "allow" } };
    if (p.message.includes("sdk-no.txt"))
      return { action: "accept", content: { decision: "reject", reason: "not in this test" } };
    return { action: "decline" };
  });
  await c2.connect(t2);
  r = await c2.callTool({ name: "Read", arguments: { path: "a.txt" } });
  check(rootsAsked === 1 && r.isError === false && text(r).startsWith("1\talpha\n"),
        "roots: the server asked for them and reads a.txt in the client's root", [rootsAsked, r]);
  r = await c2.callTool({ name: "Write", arguments: { path: "sdk-yes.txt", content: "yes\n" } });
  check(r.isError === false && readFileSync(join(ws, "sdk-yes.txt"), "utf8") === "yes\n",
        "elicitation answered 'allow': the Write ran", r);
  r = await c2.callTool({ name: "Write", arguments: { path: "sdk-no.txt", content: "no\n" } });
  check(r.isError === true && text(r).startsWith("The user declined this Write call: not in this test.")
        && !existsSync(join(ws, "sdk-no.txt")), "elicitation answered 'reject': refused with the reason", r);
  check(asked.length === 2 && asked[0].startsWith("agt-mcp: run Write? "),
        "one elicitation per call needing approval", asked);
  r = await c2.callTool({ name: "Read", arguments: { path: "a.txt" } });
  check(asked.length === 2 && r.isError === false, "reads are not asked about", asked);
  await c2.close();
  rmSync(elsewhere, { recursive: true, force: true });
  check(true, "second client closes");
} catch (e) {
  check(false, "unexpected exception: " + (e && e.stack ? e.stack : e));
}
console.log(`1..${n}`);
process.exit(failed ? 1 : 0);
