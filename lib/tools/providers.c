#include "dispatch/dispatch_internal.h"
#include "registry/registry_internal.h"
#include "tools_internal.h"

/* Tool name → built-in provider. A built-in tool that is not listed here has
 * no provider in the library (host-backed tools such as WebSearch or
 * AskUserQuestion): it is offered only once the host sets a provider. */
const agti_builtin_provider agti_builtin_providers[] = {
    {"TodoList", agti_tool_todolist},
    {"EnterPlanMode", agti_tool_enter_plan_mode},
    {"ExitPlanMode", agti_tool_exit_plan_mode},
    {"Bash", agti_tool_bash},
    {"TaskList", agti_tool_tasklist},
    {"TaskOutput", agti_tool_taskoutput},
    {"TaskStop", agti_tool_taskstop},
    {"CronCreate", agti_tool_croncreate},
    {"CronList", agti_tool_cronlist},
    {"CronDelete", agti_tool_crondelete},
    {"Read", agti_tool_read},
    {"Write", agti_tool_write},
    {"Edit", agti_tool_edit},
    {"MultiEdit", agti_tool_multiedit},
    {"NotebookEdit", agti_tool_notebook_edit},
    {"apply_patch", agti_tool_apply_patch},
    {"Glob", agti_tool_glob},
    {"Grep", agti_tool_grep},
    {"ReadMediaFile", agti_tool_read_media},
    {"FetchURL", agti_tool_fetchurl},
    {"task_done", agti_tool_task_done},
    {"code_comment", agti_tool_code_comment},
    {"file_read", agti_tool_file_read},
    {"file_read_diff", agti_tool_file_read_diff},
    {"file_find", agti_tool_file_find},
    {"code_search", agti_tool_code_search},
};

const size_t agti_builtin_provider_count =
    sizeof agti_builtin_providers / sizeof agti_builtin_providers[0];

/* Providers that may run on worker threads while other calls of the same
 * session run (the agent's concurrent read-only calls, issue #7). Audited:
 * each reads the session (root, admitted folders, limits, plan file) without
 * writing it (Read records what it saw in the session's table of seen files,
 * which locks itself: session/seen.h), keeps its state on its own stack or heap, and uses engines
 * without process-wide mutable state (fs walker and ignore rules, PCRE2 with
 * per-search contexts, libcurl easy handles after the locked global init,
 * libxml2 after xmlInitParser under pthread_once). Not listed: everything
 * that writes or executes, the session's tables (todo, plan, tasks, cron),
 * task_done and code_comment, and the review readers (file_read, file_find,
 * file_read_diff, code_search): they share the session's change set, whose
 * lazy state and blob cache are not locked for concurrent callers. */
static const agt_provider_fn parallel_safe[] = {
    agti_tool_read, agti_tool_glob, agti_tool_grep, agti_tool_read_media, agti_tool_fetchurl,
};

bool agti_provider_parallel_safe(agt_provider_fn fn)
{
    for (size_t i = 0; fn != NULL && i < sizeof parallel_safe / sizeof parallel_safe[0]; i++)
        if (parallel_safe[i] == fn)
            return true;
    return false;
}
