/* The suggested "allow for session" rule of a call that asks: for a Bash
 * command the program and its subcommand, for a file tool the folder. */
#include <stdlib.h>
#include <string.h>

#include "approval_internal.h"
#include "core/core.h"
#include "policy.h"
#include "session_internal.h"

static void put_escaped(agti_buf *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '*')
            agti_buf_putc(b, '\\');
        agti_buf_putc(b, s[i]);
    }
}

json_t *agti_rule_lines(const char *rules)
{
    json_t *a = json_array();
    for (const char *p = rules; a != NULL;) {
        size_t n = strcspn(p, "\n");
        if (json_array_append_new(a, json_stringn(p, n)) != 0) {
            json_decref(a);
            return NULL;
        }
        if (p[n] == '\0')
            break;
        p += n + 1;
    }
    return a;
}

char *agti_suggest_rule(agt_session *s, const char *tool, json_t *args, agti_verdict *v)
{
    agti_buf b = AGTI_BUF_INIT;
    int subject = agti_rule_subject(tool);
    if (strcmp(tool, "ExitPlanMode") == 0)
        return NULL;
    if (subject == AGTI_SUBJ_COMMAND) {
        /* one narrow rule per command no allow rule covers, one per line */
        if (agti_verdict_details(v) != AGT_OK)
            return NULL;
        size_t n = v->suggest ? json_array_size(v->suggest) : 0;
        if (n == 0)
            return NULL; /* nothing a rule could cover: approving it is for once */
        for (size_t i = 0; i < n; i++) {
            if (i)
                agti_buf_putc(&b, '\n');
            agti_buf_puts(&b, json_string_value(json_array_get(v->suggest, i)));
        }
    } else if (subject == AGTI_SUBJ_PATH && json_is_string(json_object_get(args, "path"))) {
        char *rel, *abs;
        if (agti_policy_path(s->root, json_string_value(json_object_get(args, "path")), &rel,
                             &abs) != AGT_OK)
            return NULL;
        const char *p = rel ? rel : abs;
        const char *slash = strrchr(p, '/');
        agti_buf_printf(&b, "%s(", tool);
        if (slash == NULL) {
            agti_buf_puts(&b, "./");
            put_escaped(&b, p, strlen(p));
        } else if (slash == p) {
            agti_buf_puts(&b, "/**");
        } else {
            put_escaped(&b, p, (size_t)(slash - p));
            agti_buf_puts(&b, "/**");
        }
        agti_buf_putc(&b, ')');
        free(rel);
        free(abs);
    } else {
        agti_buf_puts(&b, tool);
    }
    return agti_buf_detach(&b);
}
