#include <string.h>

#include "core/core.h"
#include "dispatch/dispatch_internal.h"
#include "session/session_internal.h"
#include "tools_internal.h"

/* Most items a todo list holds: enough for any real plan, small enough that
 * the list stays readable for the model and the user. */
#define LIST_MAX_ITEMS 100

static const char *status_mark(const char *status)
{
    if (strcmp(status, "done") == 0)
        return "[x]";
    if (strcmp(status, "in_progress") == 0)
        return "[>]";
    return "[ ]";
}

static void render(agti_buf *b, json_t *todos, const char *lead)
{
    size_t n = json_array_size(todos), done = 0, active = 0;
    size_t i;
    json_t *t;
    json_array_foreach(todos, i, t)
    {
        const char *st = json_string_value(json_object_get(t, "status"));
        done += strcmp(st, "done") == 0;
        active += strcmp(st, "in_progress") == 0;
    }
    agti_buf_printf(b, "%s: %zu item%s (%zu done, %zu in progress, %zu pending).", lead, n,
                    n == 1 ? "" : "s", done, active, n - done - active);
    json_array_foreach(todos, i, t)
    {
        agti_buf_printf(b, "\n%zu. %s ", i + 1,
                        status_mark(json_string_value(json_object_get(t, "status"))));
        /* one line per item: a line break inside a title (the schema allows
         * one) would read as a new item or as prose after the list */
        for (const char *c = json_string_value(json_object_get(t, "title")); *c; c++)
            agti_buf_putc(b, *c == '\n' || *c == '\r' ? ' ' : *c);
    }
}

static bool blank(const char *s)
{
    for (; *s; s++)
        if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r')
            return false;
    return true;
}

/* The schema has checked shapes and the status enum; what is left are the
 * rules a schema cannot say well. */
static int check_items(agt_call *call, json_t *todos)
{
    char msg[160];
    if (json_array_size(todos) > LIST_MAX_ITEMS) {
        snprintf(msg, sizeof msg,
                 "A todo list holds at most %d items; this one has %zu. Merge related steps "
                 "and call TodoList again.",
                 LIST_MAX_ITEMS, json_array_size(todos));
        agt_call_set_error(call, msg);
        return AGT_EINVALID;
    }
    size_t i;
    json_t *t;
    json_array_foreach(todos, i, t)
    {
        const char *title = json_string_value(json_object_get(t, "title"));
        const char *status = json_string_value(json_object_get(t, "status"));
        if (title == NULL || status == NULL || blank(title)) {
            snprintf(msg, sizeof msg,
                     "Item %zu of todos needs a non-blank \"title\" and a \"status\" "
                     "(pending, in_progress or done).",
                     i + 1);
            agt_call_set_error(call, msg);
            return AGT_EINVALID;
        }
    }
    return AGT_OK;
}

int agti_tool_todolist(agt_call *call, void *payload)
{
    (void)payload;
    agt_session *s = agt_call_session(call);
    json_t *todos = json_object_get(agti_call_args_json(call), "todos");
    agti_buf b = AGTI_BUF_INIT;
    if (todos == NULL) {
        if (json_array_size(s->todos) == 0)
            agti_buf_puts(&b, "The todo list is empty.");
        else
            render(&b, s->todos, "Todo list");
    } else {
        int rc = check_items(call, todos);
        if (rc != AGT_OK)
            return rc;
        /* keep only the two known fields, in a fixed order */
        json_t *copy = json_array();
        size_t i;
        json_t *t;
        json_array_foreach(todos, i, t)
        {
            json_array_append_new(copy,
                                  json_pack("{s:O, s:O}", "title", json_object_get(t, "title"),
                                            "status", json_object_get(t, "status")));
        }
        if (copy == NULL || json_array_size(copy) != json_array_size(todos)) {
            json_decref(copy);
            return agti_oom();
        }
        json_decref(s->todos);
        s->todos = copy;
        if (json_array_size(copy) == 0)
            agti_buf_puts(&b, "The todo list was cleared.");
        else
            render(&b, copy, "Todo list updated");
    }
    char *json = agti_json_dump(s->todos);
    if (b.oom || json == NULL) {
        agti_buf_free(&b);
        agt_free(json);
        return agti_oom();
    }
    int rc = agt_call_set_text(call, agti_buf_cstr(&b));
    if (rc == AGT_OK)
        rc = agt_call_set_json(call, json, strlen(json));
    agti_buf_free(&b);
    agt_free(json);
    return rc;
}
