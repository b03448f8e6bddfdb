/* Setting a provider's result: shared by every built-in tool. */
#include <jansson.h>
#include <string.h>

#include "core/core.h"
#include "tools_internal.h"

int agti_tool_fail(agt_call *call, int code, const char *fmt, ...)
{
    agti_buf b = AGTI_BUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    agti_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    if (b.oom) {
        agti_buf_free(&b);
        return agti_oom();
    }
    int rc = agt_call_set_error(call, agti_buf_cstr(&b));
    agti_buf_free(&b);
    return rc == AGT_OK ? code : rc;
}

int agti_tool_finish(agt_call *call, agti_buf *b, struct json_t *j, bool is_error)
{
    char *json = j ? agti_json_dump(j) : NULL;
    json_decref(j);
    if (b->oom || (j != NULL && json == NULL)) {
        agti_buf_free(b);
        agt_free(json);
        return agti_oom();
    }
    int rc = is_error ? agt_call_set_error(call, agti_buf_cstr(b))
                      : agt_call_set_text(call, agti_buf_cstr(b));
    if (rc == AGT_OK && json != NULL)
        rc = agt_call_set_json(call, json, strlen(json));
    agti_buf_free(b);
    agt_free(json);
    return rc;
}
