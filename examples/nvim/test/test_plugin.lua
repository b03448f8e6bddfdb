-- Headless Neovim test of the agenttools plugin; prints TAP.
--   nvim --headless -u NONE -i NONE -n --cmd "set rtp^=examples/nvim" -c "luafile examples/nvim/test/test_plugin.lua"
-- with AGENTTOOLS_LIB (the library) and AGT_SOURCE_DIR (the checkout) set.

local n, failed = 0, 0
local function out(s) io.stdout:write(s .. "\n") end
local function ok(cond, name, diag)
  n = n + 1
  if not cond then failed = failed + 1 end
  out(("%s %d - %s"):format(cond and "ok" or "not ok", n, name))
  if not cond and diag then
    for l in (diag .. "\n"):gmatch("(.-)\n") do out("# " .. l) end
  end
end
local function eq(got, want, name)
  ok(vim.deep_equal(got, want), name, "got:  " .. vim.inspect(got) .. "\nwant: " .. vim.inspect(want))
end

local src = assert(os.getenv("AGT_SOURCE_DIR"), "AGT_SOURCE_DIR is not set")
local dir = assert(vim.loop.fs_mkdtemp("/tmp/agt-nvim-XXXXXX"))
local repo = dir .. "/repo"

local function sh(args)
  local o = vim.fn.system(args)
  assert(vim.v.shell_error == 0, table.concat(args, " ") .. ": " .. o)
  return o
end
local function write(path, text)
  vim.fn.mkdir(vim.fn.fnamemodify(path, ":h"), "p")
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
end

local CALC_OLD = [[
int legacy_mode = 1;

int sum(int *items, int n)
{
    int t = 0;
    for (int i = 0; i < n; i++)
        t += items[i];
    return t;
}
]]
local CALC_NEW = [[
int sum(int *items, int n)
{
    int total = 0;
    for (int i = 0; i <= n; i++)
        total += items[i];
    if (total < 0)
        return 0;
    return total;
}
]]

local main = function()
  vim.fn.mkdir(repo, "p")
  local git = { "git", "-c", "user.name=T", "-c", "user.email=t@example.com", "-C", repo }
  local function g(...) return sh(vim.list_extend(vim.deepcopy(git), { ... })) end
  g("init", "-q")
  write(repo .. "/src/calc.c", CALC_OLD)
  write(repo .. "/README.md", "sum of items\n")
  g("add", "-A")
  g("commit", "-q", "-m", "C1")
  local c1 = vim.trim(g("rev-parse", "HEAD"))
  write(repo .. "/src/calc.c", CALC_NEW)
  g("commit", "-q", "-am", "C2")
  repo = vim.loop.fs_realpath(repo)
  vim.cmd("cd " .. vim.fn.fnameescape(repo))

  -- the plugin as a user loads it: plugin/ script, then setup()
  vim.cmd("runtime! plugin/agenttools.lua")
  local cmds = vim.api.nvim_get_commands({})
  eq({ cmds.AgtGrep ~= nil, cmds.AgtReview ~= nil, cmds.AgtBash ~= nil }, { true, true, true },
    "plugin/agenttools.lua defines :AgtGrep, :AgtReview and :AgtBash")
  local plugin = require("agenttools")
  local err = select(2, pcall(plugin.binding))
  ok(type(err) == "string" and err:find("the agenttools LuaJIT binding was not found on package.path", 1, true) ~= nil,
    "without lua_path the binding is not found, and the error says what to set", tostring(err))
  plugin.setup({ lua_path = src .. "/bindings/lua" })
  local agt = plugin.binding()
  eq(agt.version(), "1.0.0", "the LuaJIT binding loads inside Neovim's LuaJIT (" .. jit.version .. ")")
  eq(plugin.workspace(), repo, "the workspace is the git top level")

  -- :AgtGrep
  vim.cmd("AgtGrep total")
  local qf = vim.fn.getqflist({ title = 1, items = 1 })
  local got = {}
  for _, e in ipairs(qf.items) do
    got[#got + 1] = { vim.fn.fnamemodify(vim.fn.bufname(e.bufnr), ":p"), e.lnum, e.text }
  end
  local calc = repo .. "/src/calc.c"
  eq(qf.title, "AgtGrep total", ":AgtGrep titles the quickfix list")
  eq(got, { { calc, 3, "    int total = 0;" }, { calc, 5, "        total += items[i];" },
    { calc, 6, "    if (total < 0)" }, { calc, 8, "    return total;" } },
    ":AgtGrep puts each match in the quickfix list (file, line, text)")

  -- :AgtReview with a replay model
  local function call(id, name, args)
    return { id = id, name = name, arguments = agt.json.encode(args) }
  end
  local turns = {
    { content = "", finish_reason = "tool_calls", tool_calls = { call("r1", "code_comment", { comments = {
      { path = "src/calc.c", content = "Off by one: reads items[n].", existing_code = "    for (int i = 0; i <= n; i++)",
        category = "bug", severity = "high" },
      { path = "src/calc.c", content = "legacy_mode was exported; callers may still use it.",
        existing_code = "int legacy_mode = 1;", category = "maintainability", severity = "medium" },
      { path = "src/calc.c", content = "Returning 0 hides the error.",
        existing_code = "    if (total < 0)\n        return 0;", category = "bug", severity = "medium" },
      { path = "src/calc.c", content = "Where is the overflow check?", existing_code = "check_overflow(total);",
        category = "bug", severity = "low" },
    } }) } },
    { content = "", finish_reason = "tool_calls", tool_calls = { call("r2", "task_done", {}) } },
  }
  local script = dir .. "/review.jsonl"
  local lines = {}
  for _, t in ipairs(turns) do lines[#lines + 1] = agt.json.encode(t) end
  write(script, table.concat(lines, "\n") .. "\n")
  plugin.setup({ model = { replay = script }, approval_timeout_ms = 20000 })
  vim.cmd("AgtReview " .. c1)
  qf = vim.fn.getqflist({ title = 1, items = 1 })
  got = {}
  for _, e in ipairs(qf.items) do
    got[#got + 1] = { vim.fn.fnamemodify(vim.fn.bufname(e.bufnr), ":p"), e.lnum, e.end_lnum, e.type, e.text }
  end
  eq(qf.title, "AgtReview " .. c1, ":AgtReview titles the quickfix list with the revision")
  -- the diff of C1..C2 is one hunk, @@ -1,9 +1,9 @@ (checked below with git)
  eq(got, {
    { calc, 4, 4, "E", "[high bug] Off by one: reads items[n]." },
    { calc, 1, 0, "W", "[medium maintainability] legacy_mode was exported; callers may still use it. (removed line 1)" },
    { calc, 6, 7, "W", "[medium bug] Returning 0 hides the error." },
    { calc, 1, 0, "I", "[low bug] Where is the overflow check? (not placed)" },
  }, ":AgtReview puts the comments in the quickfix list with exact file, lines and text")
  local hunk = g("diff", "-U3", c1, "HEAD", "--", "src/calc.c"):match("\n(@@[^\n]*@@)")
  eq(hunk, "@@ -1,9 +1,9 @@", "git agrees: one hunk starting at new line 1 (where the removed line is shown)")

  -- :AgtBash with approvals through vim.ui.select
  local asked = {}
  local answer = "Approve"
  vim.ui.select = function(items, opts, on_choice)
    asked[#asked + 1] = { items = items, prompt = opts.prompt, kind = opts.kind }
    for i, it in ipairs(items) do
      if it == answer then return on_choice(it, i) end
    end
    on_choice(nil, nil)
  end
  vim.cmd("AgtBash echo approved > bash.txt; echo done")
  eq(asked, { { items = { "Approve", "Approve for this session", "Reject" },
    -- the reason: the command's two parts (split at ';', the redirection left out) lack an allow rule
    prompt = "Bash wants to run: echo approved > bash.txt; echo done (the command parts 'echo approved', 'echo done' are not covered by an allow rule)",
    kind = "agenttools.approval" } }, "a Bash call asks through vim.ui.select with the command and the reason")
  eq(vim.fn.readfile(repo .. "/bash.txt"), { "approved" }, "approved: the command ran")
  eq(vim.api.nvim_buf_get_lines(0, 0, 1, false), { "done" }, "its output is shown in a scratch buffer")
  vim.cmd("close")

  answer = "Reject"
  vim.cmd("AgtBash echo rejected > rejected.txt")
  eq(vim.fn.filereadable(repo .. "/rejected.txt"), 0, "rejected: the command did not run")
  local shown = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  ok(shown:find("rejected in Neovim", 1, true) ~= nil, "the rejection reason is the result the buffer shows", shown)
  vim.cmd("close")

  -- a UI that answers later (like a floating picker): waited for
  vim.ui.select = function(items, _, on_choice)
    vim.defer_fn(function() on_choice(items[2], 2) end, 10)
  end
  vim.cmd("AgtBash echo later")
  eq(vim.api.nvim_buf_get_lines(0, 0, -1, false), { "later", "Command completed with exit code 0." },
    "an answer given after vim.ui.select returns is waited for (approve for this session)")
  vim.cmd("close")
  asked = {}
  vim.ui.select = function(items, opts, on_choice)
    asked[#asked + 1] = opts.prompt
    on_choice(nil, nil)
  end
  vim.cmd("AgtBash echo later")
  eq({ asked, vim.api.nvim_buf_get_lines(0, 0, 1, false) }, { {}, { "later" } },
    "approved for this session: the same command runs without asking again")
  vim.cmd("close")
  vim.cmd("AgtBash echo other")
  eq(#asked, 1, "another command asks again")
  shown = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  ok(shown:find("rejected in Neovim", 1, true) ~= nil, "a dismissed prompt rejects", shown)
  vim.cmd("close")

  plugin.close()
end

local okm, e = xpcall(main, debug.traceback)
ok(okm, "the test script ran to its end", tostring(e))
vim.fn.delete(dir, "rf")
out("1.." .. n)
if failed > 0 then vim.cmd("cquit 1") else vim.cmd("qall!") end
