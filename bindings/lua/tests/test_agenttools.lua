-- TAP tests for the LuaJIT FFI module (run by meson, suite 'bindings'):
--   AGENTTOOLS_LIB=build/lib LUA_PATH='bindings/lua/?.lua;bindings/lua/?/init.lua;;' \
--     luajit bindings/lua/tests/test_agenttools.lua
local agt = require "agenttools"
local json = agt.json

local n, failed = 0, 0
local function check(ok, name, detail)
  n = n + 1
  if not ok then failed = failed + 1 end
  print((ok and "ok " or "not ok ") .. n .. " - " .. name)
  if not ok and detail ~= nil then print("# " .. tostring(detail)) end
end
local function skip(name, reason)
  n = n + 1
  print("ok " .. n .. " - " .. name .. " # SKIP " .. reason)
end
local function raises(fn, code)
  local ok, e = pcall(fn)
  return not ok and type(e) == "table" and e.code == code, e
end

local function tmpdir()
  local p = os.tmpname()
  os.remove(p)
  assert(os.execute("mkdir -p '" .. p .. "'") == 0 or true)
  return p
end
local function write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end
local function read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  return s
end

check(agt.version() == "1.0.0", "version")

-- JSON helper round trip
local v = json.decode('{"a":[1,2.5,"x\\u00e9\\n"],"b":null,"c":true}')
check(v.a[1] == 1 and v.a[2] == 2.5 and v.a[3] == "xé\n" and v.b == json.null and v.c == true,
      "json.decode")
check(json.encode({ b = json.array(), a = { 1, "q\"" } }) == '{"a":[1,"q\\""],"b":[]}', "json.encode")

local root = tmpdir()
local reg = agt.Registry("chat")
local s = agt.Session(reg, root)

-- the sandbox: probe, policy, status
do
  local p = agt.sandbox_probe()
  check(type(p.landlock_abi) == "number" and type(p.seccomp) == "boolean", "sandbox_probe", p)
  check(agt.sandbox_mode_name(agt.AGT_SANDBOX_WORKSPACE_WRITE) == "workspace-write" and
        agt.sandbox_mode_parse("read-only") == agt.AGT_SANDBOX_READ_ONLY, "sandbox mode names")
  check(raises(function() agt.sandbox_mode_parse("never") end, agt.AGT_EINVAL),
        "unknown sandbox mode raises AGT_EINVAL")
  s:set_sandbox("read-only", agt.AGT_SANDBOX_NETWORK_OFF)
  local m, nw, e = s:sandbox()
  check(m == agt.AGT_SANDBOX_READ_ONLY and nw == 0 and e == agt.AGT_SANDBOX_BEST_EFFORT,
        "set_sandbox/sandbox round trip")
  local st = s:sandbox_status()
  check(st.mode == "read-only" and st.network == "off" and
        st.sandboxed == (p.landlock_abi > 0 and p.seccomp), "sandbox_status", st)
  local extra = tmpdir()
  s:add_writable_root(extra)
  s:set_sandbox_auto_allow(true)
  s:set_sandbox("workspace-write")
  st = s:sandbox_status()
  local real = io.popen("realpath '" .. extra .. "'"):read("*l")
  check(st.auto_allow == true and #st.writable_roots == 2 and st.writable_roots[2] == real,
        "writable root added", st)
  s:add_readable_root(extra)
  st = s:sandbox_status()
  check(#st.readable_roots == 1 and st.readable_roots[1] == real, "readable root added", st)
  check(raises(function() s:add_readable_root("relative/dir") end, agt.AGT_EINVAL),
        "relative readable root raises AGT_EINVAL")
  os.execute("rm -rf '" .. extra .. "'")
end

-- errors carry the library's code and message
local ok, e = raises(function() reg:load_builtin("nope") end, agt.AGT_ENOTFOUND)
check(ok and e.message:find("nope", 1, true) ~= nil and tostring(e):find("AGT_ENOTFOUND") ~= nil,
      "unknown set raises AGT_ENOTFOUND with the message", e)
check(raises(function() agt.Session(reg, root .. "/missing") end, agt.AGT_ENOTFOUND),
      "missing root raises")

-- a real call
local r = s:dispatch("TodoList", { todos = { { title = "lua", status = "done" } } }, "t1")
check(not r.is_error and r.call_id == "t1" and r.tool == "TodoList", "TodoList dispatch", r.text)
local todos = s:todos()
check(#todos == 1 and todos[1].title == "lua" and todos[1].status == "done", "todos()")

-- schema error is a result
r = s:dispatch("TodoList", { todos = { { title = "x", status = "later" } } })
check(r.is_error and r.status == agt.AGT_EINVALID and r.text:find("/todos/0/status", 1, true) ~= nil,
      "schema violation gives an error result", r.text)

-- Read / Grep / Edit when offered
if reg:is_offered("Read") and reg:is_offered("Grep") and reg:is_offered("Edit") then
  write(root .. "/a.txt", "alpha\nbeta\n")
  r = s:dispatch("Read", { path = "a.txt" })
  check(not r.is_error and r.text:sub(1, 15) == "1\talpha\n2\tbeta\n", "Read", r.text)
  r = s:dispatch("Grep", { pattern = "et", output_mode = "content" })
  check(not r.is_error and r.text == "a.txt:2:beta", "Grep", r.text)
  -- pending approval answered from Lua
  local ok2, pe = raises(function()
    s:dispatch("Edit", { path = "a.txt", old_string = "beta", new_string = "BETA" }, "e1")
  end, agt.AGT_EPENDING)
  check(ok2 and pe.call_id == "e1", "Edit is pending", pe)
  local pend = s:pending()
  check(#pend == 1 and pend[1].call_id == "e1" and pend[1].tool == "Edit", "pending()")
  check(read(root .. "/a.txt") == "alpha\nbeta\n", "nothing written while pending")
  r = s:answer("e1", agt.AGT_DECISION_APPROVE)
  check(not r.is_error and read(root .. "/a.txt") == "alpha\nBETA\n", "approved Edit ran", r.text)
else
  skip("Read/Grep/Edit", "no provider in this build")
end

-- approver callback; an error inside it rejects and is re-raised
local seen = {}
s:set_approver(function(req) seen[#seen + 1] = req.tool return agt.AGT_DECISION_APPROVE end)
r = s:dispatch("Write", { path = "w.txt", content = "hi\n" })
check(not r.is_error and seen[1] == "Write" and read(root .. "/w.txt") == "hi\n", "approver approves")
s:set_approver(function() error("approver broke") end)
local okp, perr = pcall(function() return s:dispatch("Write", { path = "x.txt", content = "1" }) end)
check(not okp and tostring(perr):find("approver broke", 1, true) ~= nil and read(root .. "/x.txt") == nil,
      "approver error re-raised, nothing written", perr)
s:set_approver(nil)

-- hooks
s:set_pre_hook(function(h) if h.tool == "TodoList" then h:deny("not today") end end)
r = s:dispatch("TodoList", { todos = json.array() })
check(r.is_error and r.status == agt.AGT_EDENIED and r.text:find("not today", 1, true) ~= nil,
      "pre-hook denies", r.text)
s:set_pre_hook(nil)
local plain = s:dispatch("TodoList", "{}").text
s:set_pre_hook(function(h) h:add_context("Keep the list short.") end)
r = s:dispatch("TodoList", "{}")
check(not r.is_error and r.text == plain .. "\n\nKeep the list short.",
      "pre-hook adds context after the result", r.text)
s:set_pre_hook(nil)

-- rules
s:deny("Bash(rm *)")
check(s:rules().deny[1] == "Bash(rm *)", "rules()")
check(raises(function() s:allow("Bash(") end, agt.AGT_EINVALID), "malformed rule raises")

-- a Lua provider, and one that raises
local reg2 = agt.Registry()
local entry = { name = "Shout", plan_task = true, main_task = true, access = "read",
  definition = { name = "Shout", description = "Upper-cases text.",
    parameters = { type = "object", properties = { text = { type = "string" } }, required = { "text" } } } }
reg2:set_provider("Shout", function(call) return call.args.text:upper() .. "!" end)
reg2:add(entry)
local s2 = agt.Session(reg2, root)
r = s2:dispatch("Shout", { text = "hello" })
check(not r.is_error and r.text == "HELLO!", "Lua provider", r.text)
reg2:set_provider("Shout", function() error("disk on fire") end)
r = s2:dispatch("Shout", { text = "x" })
check(r.is_error and r.text:find("disk on fire", 1, true) ~= nil and r.exception ~= nil,
      "raising provider gives an error result", r.text)
r = s2:dispatch("Shout", { nope = 1 })
check(r.is_error and r.status == agt.AGT_EINVALID, "provider schema checked first")
s2:close()
reg2:close()

-- schema
local sc = agt.Schema({ type = "object", properties = { a = { type = "array", items = { type = "integer" } } } })
check(#sc:validate({ a = { 1, 2 } }) == 0, "valid instance")
local errs = sc:validate('{"a":[1,"x"]}')
check(#errs == 1 and errs[1].instance_path == "/a/1" and errs[1].keyword == "type", "violations")
check(raises(function() sc:validate("{") end, agt.AGT_EPARSE), "instance parse error")
check(raises(function() agt.Schema("{") end, agt.AGT_EPARSE), "schema parse error")
check(raises(function() agt.Schema({ type = 12 }) end, agt.AGT_EINVALID), "invalid schema")
local rs = agt.Schema({ ["$ref"] = "http://example.com/int.json" },
  { resolver = function(uri) return { type = "integer" } end })
check(rs:is_valid("3") and not rs:is_valid('"3"'), "resolver")

-- diff anchoring
local d = agt.Diff("--- a/f.c\n+++ b/f.c\n@@ -1,5 +1,6 @@\n line1\n line2\n-line3\n+changed3\n line4\n line5\n+added6\n")
check(d:count() == 1 and d:files()[1].path == "f.c", "diff files")
local a = d:anchor("f.c", "changed3\nline4")
check(a.start_line == 3 and a.end_line == 4 and a.side == "new" and a.method == "hunk_new", "anchor new side")
a = d:anchor("f.c", "line3")
check(a.start_line == 3 and a.end_line == 3 and a.side == "old" and a.method == "hunk_old", "anchor old side")
d:set_relocator(function(path, fd, snippet) return "added6" end, 1)
a = d:anchor("f.c", "nowhere")
check(a.relocated == true and a.start_line == 6, "relocator")
d:set_relocator(function() error("relocator broke") end, 1)
local okr, rerr = pcall(function() return d:anchor("f.c", "nowhere") end)
check(not okr and tostring(rerr):find("relocator broke", 1, true) ~= nil, "relocator error re-raised")
check(raises(function() agt.Diff("@@ -1 +1 @@\n-a\n+b\n") end, agt.AGT_EPARSE), "diff parse error")

-- cron
local c = agt.Cron("0 9 * * 1-5")
check(c:next(0, "UTC") == 9 * 3600, "cron next (Thursday 1970-01-01 09:00 UTC)")
check(c:next(86400 + 9 * 3600, "UTC") == 4 * 86400 + 9 * 3600, "cron next skips the weekend")
check(c:describe() == "at 09:00 on weekdays" and c:expression() == "0 9 * * 1-5", "cron describe")
check(raises(function() agt.Cron("61 * * * *") end, agt.AGT_EPARSE), "cron parse error")

-- host model and agent loop
local has_agent = pcall(function() return agt.C.agt_agent_new ~= nil and agt.C.agt_model_new_host ~= nil end)
if has_agent then
  local reqs = {}
  local answers = {
    { content = "", finish_reason = "tool_calls",
      tool_calls = { { id = "call_1", name = "TodoList",
        arguments = json.encode({ todos = { { title = "from lua model", status = "pending" } } }) } } },
    { content = "all done", finish_reason = "stop" },
  }
  local m = agt.Model.host(function(req)
    reqs[#reqs + 1] = req
    return answers[#reqs]
  end)
  local ag = agt.Agent(s, m, "be brief")
  local kinds = {}
  ag:set_event_callback(function(kind) kinds[kind] = true end)
  ag:add_user_message("plan it")
  check(ag:run() == agt.AGT_AGENT_STOP_DONE and ag:text() == "all done" and ag:turns() == 2,
        "agent loop with a Lua host model", ag:text())
  local td = s:todos()
  check(td[1].title == "from lua model", "the model's TodoList call ran")
  check(reqs[1].messages[1].role == "system" and reqs[1].messages[1].content == "be brief"
        and reqs[2].messages[#reqs[2].messages].tool_call_id == "call_1", "requests seen by the host model")
  check(kinds[agt.AGT_AGENT_TOOL_STARTED] and kinds[agt.AGT_AGENT_TOOL_FINISHED], "agent events")
  ag:close()
  m:close()
  local bad = agt.Model.host(function() error("model is down") end)
  local okm, merr = pcall(function() return bad:complete({ { role = "user", content = "hi" } }) end)
  check(not okm and tostring(merr):find("model is down", 1, true) ~= nil, "host model error re-raised")
  bad:close()
  local pr = agt.Model.parse_response('{"content":"x","tool_calls":[{"id":"a","function":{"name":"Read","arguments":{"path":"f"}}}]}')
  check(pr.tool_calls[1].name == "Read" and json.decode(pr.tool_calls[1].arguments).path == "f", "parse_response")
else
  skip("agent", "agt_agent_new is not exported by this library build")
end

-- sub-agents: enable_subagents, the concurrency and time-limit setters, the
-- sub-agent approver; a replay model whose lines the root agent and its
-- sub-agents take in turn
local has_sub = pcall(function() return agt.C.agt_agent_set_subagent_approver ~= nil end)
if has_sub then
  local nrep = 0
  local function replay_model(lines)
    nrep = nrep + 1
    local path = root .. "/replay-" .. nrep .. ".jsonl"
    local out = {}
    for i, l in ipairs(lines) do out[i] = json.encode(l) end
    write(path, table.concat(out, "\n") .. "\n")
    return agt.Model.replay(path)
  end
  local function raises_msg(fn, code, msg)
    local ok2, err = pcall(fn)
    return not ok2 and type(err) == "table" and err.code == code and err.message == msg, err
  end

  local sreg = agt.Registry("chat")
  local ss = agt.Session(sreg, root)
  local m = replay_model({ { content = "x" } })
  local ag = agt.Agent(ss, m)
  -- the swarm's cap: 0 = no cap (the reference's ramp), up to 128
  for _, bad in ipairs({ -1, 129, 2 ^ 32 + 4, -(2 ^ 40) }) do
    check(raises_msg(function() ag:set_swarm_concurrency(bad) end, agt.AGT_EINVAL,
                     "agt_agent_set_swarm_concurrency: max not in 0..128 (0: no cap)"),
          "set_swarm_concurrency(" .. string.format("%.0f", bad) .. ") raises AGT_EINVAL")
  end
  check(pcall(function() ag:set_swarm_concurrency(0) ag:set_swarm_concurrency(128) ag:set_swarm_concurrency(4) end),
        "set_swarm_concurrency accepts 0, 128, 4")
  for _, st in ipairs({ { "set_parallel_tools", "agt_agent_set_parallel_tools" } }) do
    local meth, cname = st[1], st[2]
    -- 2^32 + 4 would wrap to 4 in a C int: refused, not taken as 4
    for _, bad in ipairs({ 0, -1, 65, 2 ^ 32 + 4, -(2 ^ 40) }) do
      check(raises_msg(function() ag[meth](ag, bad) end, agt.AGT_EINVAL, cname .. ": max not in 1..64"),
            meth .. "(" .. string.format("%.0f", bad) .. ") raises AGT_EINVAL")
    end
    local okg = pcall(function() ag[meth](ag, 1) ag[meth](ag, 64) ag[meth](ag, 4) end)
    check(okg, meth .. " accepts 1, 64, 4")
    check(raises_msg(function() ag[meth](ag, 2.5) end, agt.AGT_EINVAL,
                     "Agent:" .. meth .. ": max must be an integer, got 2.5"), meth .. "(2.5) raises")
  end
  ag:enable_subagents()
  check(pcall(function()
    ag:add_subagent_profile("docs", "writes the docs", { "Read", "Write" }, "Only Markdown.")
    ag:add_subagent_profile("all", "every tool")
    ag:add_subagent_profile("none", "no tools", {})
  end), "add_subagent_profile accepts a list, nil and an empty list")
  check(raises_msg(function() ag:add_subagent_profile("Bad", "x") end, agt.AGT_EINVAL,
                   "agt_agent_add_subagent_profile: 'Bad': name may only hold a-z, 0-9, '_' and '-'"),
        "add_subagent_profile with a bad name raises")
  ss:set_mode(agt.AGT_MODE_YOLO)
  local pr = ss:dispatch("Agent", { prompt = "p", description = "d", subagent_type = "nope" })
  check(pr.is_error and pr.text == "Agent: unknown subagent_type 'nope'. The available ones: "
        .. "coder (writes and changes code, runs commands: every tool), explore (reads and searches "
        .. "the workspace and the web, changes nothing), plan (reads and searches, keeps a todo list, "
        .. "and writes an implementation plan; changes nothing), docs (writes the docs), all (every "
        .. "tool), none (no tools). Omit subagent_type for coder.",
        "unknown subagent_type lists the host's profiles too")
  local neg = "agt_agent_set_subagent_timeout: negative limit"
  local over = "agt_agent_set_subagent_timeout: limit over 30 days (2592000000 ms); 0 means no limit"
  for _, c2 in ipairs({ { -1, neg }, { -(2 ^ 70), neg }, { 2592000001, over }, { 2 ^ 64 + 4096, over },
                        { 2592000001LL, over }, { -1LL, neg } }) do
    check(raises_msg(function() ag:set_subagent_timeout(c2[1]) end, agt.AGT_EINVAL, c2[2]),
          "set_subagent_timeout(" .. tostring(c2[1]) .. ") raises AGT_EINVAL")
  end
  check(pcall(function()
    for _, good in ipairs({ 0, 1, 2592000000, 1800000 }) do ag:set_subagent_timeout(good) end
    ag:set_subagent_timeout(2592000000LL)
  end), "set_subagent_timeout accepts 0, 1, 2592000000, 1800000")
  check(raises_msg(function() ag:set_subagent_timeout(0.5) end, agt.AGT_EINVAL,
                   "Agent:set_subagent_timeout: ms must be an integer, got 0.5"), "set_subagent_timeout(0.5) raises")
  ag:close()
  m:close()

  -- enable_subagents on a frozen registry
  local freg = agt.Registry("chat")
  freg:freeze()
  local fs = agt.Session(freg, root)
  m = replay_model({ { content = "x" } })
  ag = agt.Agent(fs, m)
  check(raises_msg(function() ag:enable_subagents() end, agt.AGT_EFROZEN,
                   "agt_registry_set_provider: the registry is frozen and cannot change")
        and not freg:is_offered("Agent"), "enable_subagents on a frozen registry raises AGT_EFROZEN")
  ag:close()
  m:close()
  -- a Lua approver with a frozen registry and an HTTP model (sub-agents on other threads)
  local hm = agt.Model(agt.AGT_PROTOCOL_OPENAI)
  ag = agt.Agent(fs, hm)
  local unsupported = "Agent:set_subagent_approver: a Lua approver cannot be called from other "
    .. "threads, and with a frozen registry and an HTTP model AgentSwarm workers and background "
    .. "sub-agents run on their own threads; without a sub-agent approver their calls reach "
    .. "Session:set_approver or Agent:answer() on this thread"
  check(raises_msg(function() ag:set_subagent_approver(function() return 0 end) end,
                   agt.AGT_EUNSUPPORTED, unsupported), "Lua approver refused: frozen registry + HTTP model")
  ag:close()
  hm:close()
  fs:close()
  freg:close()
  local ureg = agt.Registry("chat")
  local us = agt.Session(ureg, root)
  hm = agt.Model(agt.AGT_PROTOCOL_OPENAI)
  ag = agt.Agent(us, hm)
  ag:enable_subagents()
  ag:set_subagent_approver(function() return agt.AGT_DECISION_APPROVE end)
  ureg:freeze()
  ag:add_user_message("hi")
  check(raises_msg(function() ag:run() end, agt.AGT_EUNSUPPORTED, unsupported),
        "run() refuses a Lua approver once the registry is frozen (HTTP model)")
  ag:set_subagent_approver(nil)
  ag:close()
  hm:close()
  us:close()
  ureg:close()

  -- Lua providers and library threads (docs/bindings.md "Threads and Lua
  -- callbacks"): refused where sub-agents of an HTTP model may call them on
  -- their own threads (frozen registry), allowed everywhere else
  local function prov_msg(names)
    return "Registry:set_provider: a Lua provider cannot be called from other threads, and with a "
      .. "frozen registry and sub-agents of an HTTP model (Agent:enable_subagents with Model(...)) "
      .. "AgentSwarm workers and background sub-agents call providers on their own threads; "
      .. "Lua providers: " .. names .. "; leave the registry unfrozen (sub-agents then run on this "
      .. "thread, one at a time) or remove these providers before Registry:freeze()"
  end
  local function dead_model()
    -- nothing listens on port 9: a guard that lets a run through fails fast
    return agt.Model(agt.AGT_PROTOCOL_OPENAI, { base_url = "http://127.0.0.1:9/v1" })
  end
  local preg = agt.Registry("chat")
  preg:set_provider("Shout", function(call) return call.args.text:upper() end)
  preg:add(entry)
  preg:set_provider("WebSearch", function() return "no results" end)
  local ps = agt.Session(preg, root)
  hm = dead_model()
  ag = agt.Agent(ps, hm)
  ag:enable_subagents()
  check(raises_msg(function() preg:freeze() end, agt.AGT_EUNSUPPORTED, prov_msg("Shout, WebSearch"))
        and not preg:is_frozen(), "Registry:freeze refuses Lua providers with sub-agents of an HTTP model")
  r = ps:dispatch("Shout", { text = "ab" })
  check(not r.is_error and r.text == "AB", "the refused registry stays unfrozen and its Lua provider works", r.text)
  preg:set_provider("WebSearch", nil)
  check(raises_msg(function() preg:freeze() end, agt.AGT_EUNSUPPORTED, prov_msg("Shout")),
        "the refusal names the Lua providers left")
  preg:set_provider("Shout", nil)
  check(pcall(function() preg:freeze() end) and preg:is_frozen(), "without Lua providers the registry freezes")
  ag:close()
  hm:close()
  ps:close()
  preg:close()

  -- frozen behind the binding's back (raw C): refused where sub-agents would start
  local rreg = agt.Registry("chat")
  rreg:set_provider("Shout", function(call) return call.args.text:upper() end)
  rreg:add(entry)
  local rs = agt.Session(rreg, root)
  hm = dead_model()
  ag = agt.Agent(rs, hm)
  ag:enable_subagents()
  check(agt.C.agt_registry_freeze(rreg._h) == 0, "raw agt_registry_freeze")
  ag:add_user_message("hi")
  check(raises_msg(function() ag:run() end, agt.AGT_EUNSUPPORTED, prov_msg("Shout")),
        "run() refuses Lua providers in a frozen registry with sub-agents of an HTTP model")
  check(raises_msg(function() ag:resume() end, agt.AGT_EUNSUPPORTED, prov_msg("Shout")), "resume() refuses them")
  check(raises_msg(function() rs:dispatch("AgentSwarm", { items = { "a", "b" }, prompt = "do {{item}}" }) end,
                   agt.AGT_EUNSUPPORTED, prov_msg("Shout")), "Session:dispatch of AgentSwarm refuses them")
  check(raises_msg(function() rs:dispatch("Agent", { prompt = "x", description = "d" }) end,
                   agt.AGT_EUNSUPPORTED, prov_msg("Shout")), "Session:dispatch of Agent refuses them")
  check(raises_msg(function() rs:answer("c1", agt.AGT_DECISION_APPROVE) end, agt.AGT_EUNSUPPORTED,
                   prov_msg("Shout")), "Session:answer refuses them")
  check(raises_msg(function() rs:answer_rule("c1", "Agent") end, agt.AGT_EUNSUPPORTED, prov_msg("Shout")),
        "Session:answer_rule refuses them")
  r = rs:dispatch("Shout", { text = "q" })
  check(not r.is_error and r.text == "Q", "the host's own dispatch of a Lua provider still runs", r.text)
  ag:close()
  hm:close()
  rs:close()
  rreg:close()

  -- a Lua sub-agent approver and the host dispatching AgentSwarm itself
  local areg = agt.Registry("chat")
  local as = agt.Session(areg, root)
  hm = dead_model()
  ag = agt.Agent(as, hm)
  ag:enable_subagents()
  ag:set_subagent_approver(function() return agt.AGT_DECISION_APPROVE end)
  areg:freeze()
  check(raises_msg(function() as:dispatch("AgentSwarm", { items = { "a", "b" }, prompt = "do {{item}}" }) end,
                   agt.AGT_EUNSUPPORTED, unsupported), "Session:dispatch of AgentSwarm refuses a Lua sub-agent approver")
  ag:set_subagent_approver(nil)
  ag:close()
  hm:close()
  as:close()
  areg:close()

  -- not refused: no sub-agents, or sub-agents on this thread (a replay model)
  local nreg = agt.Registry("chat")
  nreg:set_provider("Shout", function(call) return call.args.text:upper() end)
  nreg:add(entry)
  local ns = agt.Session(nreg, root)
  hm = dead_model()
  ag = agt.Agent(ns, hm)
  check(pcall(function() nreg:freeze() end) and nreg:is_frozen(),
        "a Lua provider, a frozen registry and an HTTP model without sub-agents: freeze accepted")
  r = ns:dispatch("Shout", { text = "z" })
  check(not r.is_error and r.text == "Z", "... and the provider runs", r.text)
  ag:close()
  hm:close()
  ns:close()
  nreg:close()

  local shouted = {}
  local lreg = agt.Registry("chat")
  lreg:set_provider("Shout", function(call)
    shouted[#shouted + 1] = call.args.text
    return call.args.text:upper()
  end)
  lreg:add(entry)
  local ls = agt.Session(lreg, root)
  m = replay_model({
    { tool_calls = { { id = "p1", name = "Agent",
        arguments = json.encode({ prompt = "shout it", description = "shouter" }) } } },
    { tool_calls = { { id = "call_0", name = "Shout", arguments = json.encode({ text = "from agent-1" }) } } },
    { content = "shouted" }, { content = "root done" } })
  ag = agt.Agent(ls, m, "You are a test.")
  ag:enable_subagents()
  ls:allow("Agent")
  ls:allow("Shout")
  check(pcall(function() lreg:freeze() end), "sub-agents of a replay model: freeze accepted with a Lua provider")
  ag:add_user_message("Do it.")
  local okl, lstop = pcall(function() return ag:run() end)
  local stool
  for _, msg in ipairs(okl and ag:save().subs[1].agent.messages or {}) do
    if msg.role == "tool" then stool = msg end
  end
  check(okl and lstop == agt.AGT_AGENT_STOP_DONE and ag:text() == "root done" and #shouted == 1
        and shouted[1] == "from agent-1" and stool and stool.content == "FROM AGENT-1",
        "agent-1 calls the Lua provider on this thread", okl and ag:text() or lstop)
  ag:close()
  m:close()
  ls:close()
  lreg:close()

  -- end to end: root calls Agent; agent-1 writes a file (asks: manual mode)
  local function writer(path)
    local mm = replay_model({
      { tool_calls = { { id = "p1", name = "Agent",
          arguments = json.encode({ prompt = "write it", description = "writer" }) } } },
      { tool_calls = { { id = "call_0", name = "Write",
          arguments = json.encode({ path = path, content = "from agent-1" }) } } },
      { content = "wrote it" }, { content = "parent done" } })
    local a2 = agt.Agent(ss, mm, "You are a test.")
    a2:enable_subagents()
    ss:set_mode(agt.AGT_MODE_MANUAL)
    ss:allow("Agent")
    a2:add_user_message("Do it.")
    return mm, a2
  end

  local seen = {}
  m, ag = writer("sub.txt")
  ag:set_subagent_approver(function(agent_id, req)
    seen[#seen + 1] = { agent_id, req }
    return agt.AGT_DECISION_APPROVE
  end)
  local stop = ag:run()
  check(stop == agt.AGT_AGENT_STOP_DONE and ag:text() == "parent done", "sub-agent run with a Lua approver", ag:text())
  check(#seen == 1 and seen[1][1] == "agent-1" and seen[1][2].call_id == "call_0" and seen[1][2].tool == "Write"
        and seen[1][2].arguments.path == "sub.txt" and seen[1][2].agent_id == nil,
        "the approver is called with agent-1 and the sub-agent's request")
  check(read(root .. "/sub.txt") == "from agent-1", "approved: agent-1 wrote the file")
  local tmsg
  for _, msg in ipairs(ag:messages()) do if msg.role == "tool" then tmsg = msg end end
  local head = 'Sub-agent agent-1 (writer) finished after 2 model calls. Resume it with resume: "agent-1".'
  check(tmsg and tmsg.tool_call_id == "p1" and tmsg.content:sub(1, #head) == head
        and tmsg.content:sub(-8) == "wrote it", "the Agent call's report", tmsg and tmsg.content)
  ag:close()
  m:close()

  local calls = {}
  m, ag = writer("rejected.txt")
  ag:set_subagent_approver(function(agent_id)
    calls[#calls + 1] = agent_id
    return agt.AGT_DECISION_REJECT, "not in this test"
  end)
  check(ag:run() == agt.AGT_AGENT_STOP_DONE and #calls == 1 and calls[1] == "agent-1"
        and read(root .. "/rejected.txt") == nil, "rejected: nothing written")
  local subs = ag:save().subs
  local stool
  for _, msg in ipairs(subs[1].agent.messages) do if msg.role == "tool" then stool = msg end end
  check(subs[1].id == "agent-1" and stool and stool.tool_call_id == "call_0"
        and stool.content:find("not in this test", 1, true) ~= nil, "the rejection reason reached agent-1",
        stool and stool.content)
  ag:close()
  m:close()

  m, ag = writer("raised.txt")
  ag:set_subagent_approver(function() error("approver broke") end)
  local okr2, rerr2 = pcall(function() return ag:run() end)
  check(not okr2 and tostring(rerr2):find("approver broke", 1, true) ~= nil and read(root .. "/raised.txt") == nil,
        "an approver error rejects and is re-raised by run()", rerr2)
  ag:close()
  m:close()

  m, ag = writer("nil.txt")
  ag:set_subagent_approver(function() return nil end)
  local okn, nerr = pcall(function() return ag:run() end)
  check(not okn and tostring(nerr):find("the decision must be an AGT_DECISION_* number, got nil", 1, true) ~= nil
        and read(root .. "/nil.txt") == nil, "a nil decision rejects and is re-raised", nerr)
  ag:close()
  m:close()

  m, ag = writer("paused.txt")
  ag:set_subagent_approver(function() return agt.AGT_DECISION_APPROVE end)
  ag:set_subagent_approver(nil)
  check(ag:run() == agt.AGT_AGENT_STOP_APPROVAL, "approver cleared: the pause model")
  local pend = ss:pending()
  check(#pend == 1 and pend[1].call_id == "agent-1/call_0" and pend[1].agent_id == "agent-1", "pending sub-agent call")
  ag:answer("agent-1/call_0", agt.AGT_DECISION_APPROVE)
  check(ag:resume() == agt.AGT_AGENT_STOP_DONE and read(root .. "/paused.txt") == "from agent-1", "answered and resumed")
  ag:close()
  m:close()
  ss:close()
  sreg:close()
else
  skip("sub-agents", "agt_agent_set_subagent_approver is not exported by this library build")
end

-- the session's sensitive-file patterns and FetchURL's private addresses
do
  local sreg = agt.Registry("chat")
  local ss = agt.Session(sreg, root)
  write(root .. "/app.secret", "KEY=1\n")
  write(root .. "/cert.pem", "not a key\n")
  check(not ss:dispatch("Read", { path = "app.secret" }).is_error, "app.secret readable by default")
  ss:add_sensitive_pattern("*.secret")
  local r = ss:dispatch("Read", { path = "app.secret" })
  check(r.is_error and r.text:find("sensitive", 1, true) ~= nil, "added *.secret: Read refused", r.text)
  check(ss:dispatch("Read", { path = "cert.pem" }).status == agt.AGT_EDENIED, "*.pem refused by default")
  ss:remove_sensitive_pattern("*.pem")
  check(not ss:dispatch("Read", { path = "cert.pem" }).is_error, "removed *.pem: readable")
  local pats, has_secret, has_pem = ss:sensitive_patterns(), false, false
  for _, p in ipairs(pats) do
    if p == "*.secret" then has_secret = true end
    if p == "*.pem" then has_pem = true end
  end
  check(has_secret and not has_pem, "sensitive_patterns lists the change")
  check(raises(function() ss:remove_sensitive_pattern("*.pem") end, agt.AGT_ENOTFOUND), "remove twice: AGT_ENOTFOUND")
  check(raises(function() ss:add_sensitive_pattern("/abs") end, agt.AGT_EINVAL), "leading slash: AGT_EINVAL")
  check(ss:check_sensitive("x/.env.prod") == "environment file (.env)", "check_sensitive: .env.prod")
  check(ss:check_sensitive("README.md") == nil, "check_sensitive: README.md")
  check(ss:check_sensitive("notes", "-----BEGIN " .. "EC PRIVATE KEY-----\nMHc\n")
        == "private key (a PRIVATE KEY block in the content)", "check_sensitive: key in content")
  ss:set_fetch_private(true)
  ss:set_fetch_private(false)
  ss:close()
  sreg:close()
  os.remove(root .. "/app.secret")
  os.remove(root .. "/cert.pem")
end

-- lifetimes: what an object depends on is freed after it, so any order of
-- close() is safe, and so is lua_close at exit, which runs every finaliser in
-- no order that follows references (module-level objects without close()
-- crashed with SIGSEGV there: the Session went before the Agent)
do
  local names = { "registry", "session", "model", "agent" }
  local function perms(a, k, out)
    k = k or 1
    out = out or {}
    if k > #a then
      out[#out + 1] = { unpack(a) }
      return out
    end
    for i = k, #a do
      a[k], a[i] = a[i], a[k]
      perms(a, k + 1, out)
      a[k], a[i] = a[i], a[k]
    end
    return out
  end
  local orders, ok_all, detail = perms({ unpack(names) }), true, nil
  for _, order in ipairs(orders) do
    local o = {}
    o.registry = agt.Registry("chat")
    o.session = agt.Session(o.registry, root)
    o.model = agt.Model.host(function() return { content = "still here" } end)
    o.agent = agt.Agent(o.session, o.model)
    local agent_open = true
    for _, name in ipairs(order) do
      o[name]:close()
      if name == "agent" then agent_open = false end
      if agent_open then
        -- what the agent depends on is closed for Lua but kept for it
        o.agent:add_user_message("again")
        if o.agent:run() ~= agt.AGT_AGENT_STOP_DONE or o.agent:text() ~= "still here" then
          ok_all, detail = false, table.concat(order, ",")
        end
      end
    end
    for _, name in ipairs(names) do
      if not raises(function() o[name]:close() o[name]:root() end, agt.AGT_EINVAL) and name == "session" then
        ok_all, detail = false, "session usable after close"
      end
    end
  end
  check(ok_all and #orders == 24, "all 24 orders of close(): dependents keep working", detail)

  local lj = arg and arg[-1] or "luajit"
  local scripts = {
    ["session first"] = 'reg = agt.Registry("chat") sess = agt.Session(reg, ROOT) ' ..
      'model = agt.Model.host(function() return { content = "x" } end) agent = agt.Agent(sess, model)',
    ["model first"] = 'model = agt.Model.host(function() return { content = "x" } end) ' ..
      'reg = agt.Registry("chat") sess = agt.Session(reg, ROOT) agent = agt.Agent(sess, model)',
    ["after a run"] = 'reg = agt.Registry("chat") sess = agt.Session(reg, ROOT) ' ..
      'model = agt.Model.host(function() return { content = "x" } end) agent = agt.Agent(sess, model) ' ..
      'agent:add_user_message("hi") agent:run()',
    ["in a cycle"] = 'local ring = {} ring.reg = agt.Registry("chat") ring.sess = agt.Session(ring.reg, ROOT) ' ..
      'ring.model = agt.Model.host(function() return { content = "x" } end) ' ..
      'ring.agent = agt.Agent(ring.sess, ring.model) ring.agent.ring = ring ring.sess.ring = ring',
    ["closed session, open agent"] = 'reg = agt.Registry("chat") sess = agt.Session(reg, ROOT) ' ..
      'model = agt.Model.host(function() return { content = "x" } end) agent = agt.Agent(sess, model) ' ..
      'sess:close() reg:close()',
  }
  for name, body in pairs(scripts) do
    local path = root .. "/exit.lua"
    write(path, 'local agt = require "agenttools" ROOT = ' .. string.format("%q", root) .. ' ' .. body .. '\n')
    local p = io.popen("'" .. lj .. "' '" .. path .. "' 2>&1; echo \"rc=$?\"")
    local out = p:read("*a")
    p:close()
    check(out:match("rc=0%s*$") ~= nil and not out:find("Sanitizer") and not out:find("runtime error"),
          "objects left to lua_close (" .. name .. "): exit 0", out)
  end
end

-- finalisers: handles dropped without close() free their callbacks
-- (LuaJIT has a fixed number of callback slots, far fewer than 3000)
local okgc, gcerr = pcall(function()
  for i = 1, 3000 do
    local r3 = agt.Registry()
    r3:set_provider("X", function() return "x" end)
    local s3 = agt.Session(r3, root)
    s3:set_pre_hook(function() end)
    if i % 100 == 0 then collectgarbage() collectgarbage() end
  end
end)
check(okgc, "3000 dropped registries and sessions with callbacks", gcerr)

-- Model:set_extra_headers passes the table through; a bad name is refused naming it
do
  local hm = agt.Model(agt.AGT_PROTOCOL_OPENAI)
  check(pcall(function() hm:set_extra_headers({ ["OpenAI-Organization"] = "org-1" }) end),
        "set_extra_headers with a table")
  check(pcall(function() hm:set_extra_headers(nil) end), "set_extra_headers(nil) clears")
  local okh, eh = raises(function() hm:set_extra_headers({ ["Bad Name"] = "x" }) end,
                         agt.AGT_EINVALID)
  check(okh and eh.message:find('"Bad Name" is not a header name', 1, true) ~= nil,
        "a bad header name raises AGT_EINVALID naming it", eh)
  hm:close()
end

-- explicit close, double close, use after close
s:close()
s:close()
check(raises(function() s:todos() end, agt.AGT_EINVAL), "closed session raises AGT_EINVAL")
reg:close()
-- enum tables and names in place of numbers
do
  check(agt.mode.yolo == agt.AGT_MODE_YOLO and agt.decision.approve_session == agt.AGT_DECISION_APPROVE_SESSION
        and agt.status.epending == -7 and agt.status.ok == 0 and agt.rule.deny == agt.AGT_RULE_DENY,
        "enum tables: agt.mode.yolo, agt.decision.approve_session, agt.status.epending")
  local ereg = agt.Registry("chat")
  local es = agt.Session(ereg, root)
  es:set_mode("yolo")
  check(es:mode() == agt.mode.yolo, "set_mode takes a name")
  es:set_mode(agt.mode.plan)
  check(es:mode() == agt.AGT_MODE_PLAN, "set_mode takes a number")
  local ok, err = pcall(function() es:set_mode("fast") end)
  check(not ok and tostring(err):find("Session:set_mode: fast is not one of manual (0), plan (1), yolo (2), auto (3)", 1, true) ~= nil,
        "a bad mode names the value and the choices", tostring(err))
  ok, err = pcall(function() es:add_rule("forbid", "Bash(x)") end)
  check(not ok and tostring(err):find("forbid is not one of allow (0), ask (1), deny (2)", 1, true) ~= nil,
        "a bad rule kind is named", tostring(err))
  es:add_rule("deny", "Bash(rm *)")
  es:close()
  ereg:close()
end
-- the live output of a foreground Bash call, and an interrupt
do
  local oreg = agt.Registry("chat")
  local os_ = agt.Session(oreg, root)
  os_:set_mode("yolo")
  local seen, beats, ids = {}, 0, {}
  os_:set_tool_output_callback(function(call_id, tool, data)
    ids[call_id .. " " .. tool] = true
    if data == nil then beats = beats + 1 return false end
    seen[#seen + 1] = data
    return table.concat(seen):find("started\n", 1, true) ~= nil
  end)
  local r = os_:dispatch("Bash", { command = "echo started; sleep 30" }, "b1")
  check(r.is_error and r.text == "started\nCommand was interrupted by the user: its process group "
        .. "was sent SIGTERM (SIGKILL after the grace period if it had not ended). Do not run it "
        .. "again unless the user asks.", "tool output callback: interrupted on its output", r.text)
  check(table.concat(seen) == "started\n" and ids["b1 Bash"], "tool output callback: the output and the call")
  os_:set_tool_output_callback(nil)
  seen = {}
  r = os_:dispatch("Bash", { command = "echo quiet" })
  check(not r.is_error and #seen == 0, "tool output callback removed")
  os_:close()
  oreg:close()
end
collectgarbage()
collectgarbage()
os.execute("rm -rf '" .. root .. "'")
print("1.." .. n)
os.exit(failed == 0 and 0 or 1)
