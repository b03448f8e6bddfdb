-- agenttools.nvim: libagenttools in Neovim, on the LuaJIT binding
-- (bindings/lua) that Neovim's own LuaJIT loads.
--
--   require("agenttools").setup({
--     lua_path = "/path/to/libagenttools/bindings/lua", -- where the binding is
--     model = { protocol = "openai", base_url = "...", api_key = "...", name = "..." },
--     -- or model = { replay = "/path/to/answers.jsonl" }
--   })
--
-- :AgtGrep PATTERN   the Grep tool over the workspace, matches into the quickfix list
-- :AgtReview [REV]   a review of the changes since REV (or of the uncommitted
--                    ones) by the model; its comments into the quickfix list
-- :AgtBash COMMAND   the Bash tool; a call that needs approval asks through
--                    vim.ui.select (any UI that replaces it, sync or async)
--
-- The workspace is the git top level of the current directory (or the
-- directory itself). Model turns run on Neovim's thread: the editor waits for
-- the model during :AgtReview.

local M = {}

M.config = {
  lua_path = nil,
  model = nil,
  mode = "manual", -- the approval mode of the :AgtGrep/:AgtBash session
  approval_timeout_ms = 10 * 60 * 1000, -- how long an asynchronous vim.ui.select may take
  max_turns = 30,
}

local agt -- the binding, loaded on first use

-- This plugin's module is also called "agenttools", and Neovim's loader
-- finds it on 'runtimepath' first; the binding is loaded from package.path.
local function binding()
  if agt then return agt end
  local lp = M.config.lua_path or os.getenv("AGENTTOOLS_LUA")
  if lp then
    package.path = lp .. "/?.lua;" .. lp .. "/?/init.lua;" .. package.path
  end
  local me = debug.getinfo(1, "S").source:gsub("^@", "")
  for dir in package.path:gmatch("[^;]+") do
    local file = dir:gsub("%?", "agenttools")
    local f = io.open(file, "r")
    if f then
      f:close()
      if vim.loop.fs_realpath(file) ~= vim.loop.fs_realpath(me) then
        agt = assert(loadfile(file))("agenttools")
        M.agt = agt
        return agt
      end
    end
  end
  error("the agenttools LuaJIT binding was not found on package.path; set lua_path in "
    .. "require('agenttools').setup() (the bindings/lua folder of libagenttools) or $AGENTTOOLS_LUA")
end
M.binding = binding

function M.setup(opts)
  M.config = vim.tbl_deep_extend("force", M.config, opts or {})
end

local function workspace()
  local cwd = vim.loop.cwd()
  local out = vim.fn.systemlist({ "git", "-C", cwd, "rev-parse", "--show-toplevel" })
  if vim.v.shell_error == 0 and out[1] and out[1] ~= "" then return out[1] end
  return cwd
end
M.workspace = workspace

local function summary(req)
  local a = req.arguments or {}
  if req.tool == "Bash" and type(a.command) == "string" then return a.command end
  local ok, text = pcall(binding().json.encode, a)
  text = ok and text or "?"
  return #text > 200 and text:sub(1, 200) .. "..." or text
end

local CHOICES = { "Approve", "Approve for this session", "Reject" }

-- The approver: asks through vim.ui.select and waits for the answer (a UI
-- that answers later, such as a floating picker, is waited for with vim.wait).
function M.approve(req)
  local a = binding()
  local done, idx = false, nil
  local prompt = ("%s wants to run: %s"):format(req.tool, summary(req))
  if req.reason then prompt = prompt .. " (" .. req.reason .. ")" end
  vim.ui.select(CHOICES, { prompt = prompt, kind = "agenttools.approval" }, function(_, i)
    idx, done = i, true
  end)
  if not done then
    vim.wait(M.config.approval_timeout_ms, function() return done end, 20)
  end
  if idx == 1 then return a.AGT_DECISION_APPROVE end
  if idx == 2 then return a.AGT_DECISION_APPROVE_SESSION end
  return a.AGT_DECISION_REJECT, done and "rejected in Neovim" or "no answer in Neovim"
end

local sessions = {} -- workspace root -> {registry, session}

-- The chat-set session of the workspace, with the vim.ui.select approver.
function M.session(root)
  root = root or workspace()
  local e = sessions[root]
  if e then return e.session end
  local a = binding()
  local reg = a.Registry("chat")
  local s = a.Session(reg, root)
  s:set_mode(M.config.mode)
  s:set_approver(M.approve)
  sessions[root] = { registry = reg, session = s }
  return s
end

function M.close()
  for root, e in pairs(sessions) do
    e.session:close()
    e.registry:close()
    sessions[root] = nil
  end
end

local function set_qf(title, items)
  vim.fn.setqflist({}, " ", { title = title, items = items })
end

-- :AgtGrep: the Grep tool (content mode), each match as a quickfix entry.
function M.grep(pattern)
  local root = workspace()
  local r = M.session(root):dispatch("Grep", { pattern = pattern, output_mode = "content" })
  if r.is_error then error("Grep: " .. r.text, 0) end
  local items = {}
  for line in (r.text .. "\n"):gmatch("(.-)\n") do
    local file, lnum, text = line:match("^(.-):(%d+):(.*)$")
    if file then
      items[#items + 1] = { filename = root .. "/" .. file, lnum = tonumber(lnum), text = text }
    end
  end
  set_qf("AgtGrep " .. pattern, items)
  return items
end

-- :AgtBash: the Bash tool; its output into a scratch buffer.
function M.bash(command)
  local s = M.session()
  local ok, r = pcall(s.dispatch, s, "Bash", { command = command })
  if not ok then error(r, 0) end
  local lines = vim.split(r.text, "\n", { plain = true })
  vim.cmd("botright new")
  vim.bo.buftype, vim.bo.bufhidden, vim.bo.swapfile = "nofile", "wipe", false
  vim.api.nvim_buf_set_lines(0, 0, -1, false, lines)
  vim.api.nvim_buf_set_name(0, "agt-bash://" .. vim.api.nvim_get_current_buf())
  return r
end

local function make_model(a)
  local m = M.config.model
  if not m then
    error("no model configured: require('agenttools').setup({ model = { ... } })", 0)
  end
  if m.replay then return a.Model.replay(m.replay) end
  local proto = m.protocol == "anthropic" and a.AGT_PROTOCOL_ANTHROPIC or a.AGT_PROTOCOL_OPENAI
  return a.Model(proto, { base_url = m.base_url, api_key = m.api_key, name = m.name })
end

M.SYSTEM = "You review code changes. Read the diffs you are given, post each problem you "
  .. "find with code_comment (quote existing_code exactly as it appears in the diff and give "
  .. "the file's path), and call task_done when you are done."

local SEVERITY_TYPE = { critical = "E", high = "E", medium = "W", low = "I" }

-- The quickfix line of a removed line (old side): the new-file line where
-- its hunk starts, since the line itself is gone.
local function new_line_of_old(diff_json, path, old_line)
  for _, f in ipairs(diff_json.files or {}) do
    if f.path == path then
      for _, h in ipairs(f.hunks or {}) do
        if old_line >= h.old_start and old_line < h.old_start + math.max(h.old_lines, 1) then
          return math.max(h.new_start, 1)
        end
      end
    end
  end
  return 1
end

-- One quickfix entry per anchored comment.
function M.comment_items(root, comments, diff_json)
  local items = {}
  for _, c in ipairs(comments) do
    local text = c.content
    local tag = table.concat(vim.tbl_filter(function(x) return x ~= nil and x ~= "" end,
      { c.severity, c.category }), " ")
    if tag ~= "" then text = "[" .. tag .. "] " .. text end
    local item = { filename = root .. "/" .. c.path, text = text, type = SEVERITY_TYPE[c.severity] or "I" }
    if c.side == "old" and c.start_line > 0 then
      item.lnum = new_line_of_old(diff_json, c.path, c.start_line)
      item.text = item.text .. (" (removed line%s %d%s)"):format(
        c.end_line > c.start_line and "s" or "", c.start_line,
        c.end_line > c.start_line and "-" .. c.end_line or "")
    elseif c.start_line > 0 then
      item.lnum, item.end_lnum = c.start_line, c.end_line
    else
      item.lnum = 1
      if c.ambiguous and c.candidates then
        local at = {}
        for _, r in ipairs(c.candidates) do at[#at + 1] = tostring(r[1]) end
        item.text = item.text .. " (ambiguous: lines " .. table.concat(at, ", ") .. ")"
      else
        item.text = item.text .. " (not placed)"
      end
    end
    items[#items + 1] = item
  end
  return items
end

-- :AgtReview [REV]: one review session over the change set.
function M.review(rev)
  local a = binding()
  local root = workspace()
  local reg = a.Registry("review")
  local s, ch, model, agent
  local ok, err = pcall(function()
    s = a.Session(reg, root)
    local mode = rev and a.AGT_CHANGES_RANGE or a.AGT_CHANGES_WORKSPACE
    ch = a.Changes(root, mode, rev, nil)
    s:set_changes(ch)
    s:set_phase(a.AGT_PHASE_MAIN)
    local d = ch:diff()
    local paths, diffs = {}, {}
    for _, f in ipairs(d:files()) do
      if not f.binary and f.status ~= a.AGT_DIFF_DELETED then
        paths[#paths + 1] = f.path
        diffs[#diffs + 1] = d:file_text(f.path)
      end
    end
    if #paths == 0 then
      set_qf("AgtReview", {})
      return
    end
    model = make_model(a)
    agent = a.Agent(s, model, M.SYSTEM)
    agent:set_max_turns(M.config.max_turns)
    agent:add_user_message(("Review these %d files of a change: %s. Their diffs:\n\n%s"):format(
      #paths, table.concat(paths, ", "), table.concat(diffs, "")))
    agent:run()
    M.last_items = M.comment_items(root, s:comments(), d:to_json())
    set_qf("AgtReview" .. (rev and " " .. rev or ""), M.last_items)
  end)
  local handles = { agent, model, s, ch, reg }
  for i = 1, 5 do
    if handles[i] then handles[i]:close() end
  end
  if not ok then error(err, 0) end
  return M.last_items
end

return M
