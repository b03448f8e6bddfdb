/* Built-in providers (the thin adapters from validated arguments to engines
 * and session state). Each is listed in providers.c. */
#ifndef AGT_LIB_TOOLS_INTERNAL_H
#define AGT_LIB_TOOLS_INTERNAL_H

#include <stdbool.h>

#include "agenttools/dispatch.h"
#include "core/core.h"

struct json_t;

/* Sets an error result with a formatted message; returns `code` (AGT_OK when
 * the error result is the whole answer), or AGT_ENOMEM. */
int agti_tool_fail(agt_call *call, int code, const char *fmt, ...) AGTI_PRINTF(3, 4);

/* Sets the result from `b` (text, or error text when is_error) and, when `j`
 * is not NULL, its structured form. Frees `b`, takes `j`'s reference. */
int agti_tool_finish(agt_call *call, agti_buf *b, struct json_t *j, bool is_error);

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
int agti_tool_multiedit(agt_call *call, void *payload);
int agti_tool_notebook_edit(agt_call *call, void *payload);
int agti_tool_apply_patch(agt_call *call, void *payload);
int agti_tool_glob(agt_call *call, void *payload);
int agti_tool_grep(agt_call *call, void *payload);
int agti_tool_read_media(agt_call *call, void *payload);
/* FetchURL lives with its engine in lib/net (fetch_tool.c). */
int agti_tool_fetchurl(agt_call *call, void *payload);

int agti_tool_task_done(agt_call *call, void *payload);
int agti_tool_code_comment(agt_call *call, void *payload);
int agti_tool_file_read(agt_call *call, void *payload);
int agti_tool_file_read_diff(agt_call *call, void *payload);
int agti_tool_file_find(agt_call *call, void *payload);
int agti_tool_code_search(agt_call *call, void *payload);
/* Test hook: how many files of the last code_search call had their results
 * from the search that ran while the change set opened (review_search.c). */
size_t agti_code_search_last_early(void);
/* The change set under review for a review-set call (review_files.c); on
 * failure the call carries an error result. */
struct agt_changes;
int agti_review_tool_changes(agt_call *call, struct agt_changes **out);

#endif
