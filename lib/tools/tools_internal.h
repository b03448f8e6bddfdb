/* Built-in providers (the thin adapters from validated arguments to engines
 * and session state). Each is listed in providers.c. */
#ifndef AGT_LIB_TOOLS_INTERNAL_H
#define AGT_LIB_TOOLS_INTERNAL_H

#include "agenttools/dispatch.h"

int agti_tool_todolist(agt_call *call, void *payload);
int agti_tool_enter_plan_mode(agt_call *call, void *payload);
int agti_tool_exit_plan_mode(agt_call *call, void *payload);
int agti_tool_bash(agt_call *call, void *payload);
int agti_tool_tasklist(agt_call *call, void *payload);
int agti_tool_taskoutput(agt_call *call, void *payload);
int agti_tool_taskstop(agt_call *call, void *payload);
int agti_tool_croncreate(agt_call *call, void *payload);
int agti_tool_cronlist(agt_call *call, void *payload);
int agti_tool_crondelete(agt_call *call, void *payload);
int agti_tool_read(agt_call *call, void *payload);
int agti_tool_write(agt_call *call, void *payload);
int agti_tool_edit(agt_call *call, void *payload);
int agti_tool_glob(agt_call *call, void *payload);
int agti_tool_grep(agt_call *call, void *payload);
int agti_tool_read_media(agt_call *call, void *payload);

#endif
