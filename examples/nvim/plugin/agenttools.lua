-- agenttools.nvim: the commands (the logic is lua/agenttools/init.lua).
if vim.g.loaded_agenttools then return end
vim.g.loaded_agenttools = true

local function plugin() return require("agenttools") end

local function report(ok, err)
  if not ok then vim.notify("agenttools: " .. tostring(err), vim.log.levels.ERROR) end
end

vim.api.nvim_create_user_command("AgtGrep", function(o)
  report(pcall(plugin().grep, o.args))
end, { nargs = 1, desc = "Grep tool call of libagenttools into the quickfix list" })

vim.api.nvim_create_user_command("AgtReview", function(o)
  report(pcall(plugin().review, o.args ~= "" and o.args or nil))
end, { nargs = "?", desc = "Review the changes (since REV, or uncommitted) into the quickfix list" })

vim.api.nvim_create_user_command("AgtBash", function(o)
  report(pcall(plugin().bash, o.args))
end, { nargs = 1, desc = "Run a command through the Bash tool (asks with vim.ui.select)" })
