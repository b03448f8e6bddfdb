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
