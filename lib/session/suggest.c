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

static bool plain_word(const char *w, size_t n)
{
    if (n == 0 || w[0] == '-')
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = w[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.' || c == ':'))
            return false;
    }
    return true;
}

/* `Bash(git log *)` for "git log --oneline src/": the program and its
 * subcommand (a plain second word), then a star. */
static void suggest_command(agti_buf *b, const char *part)
{
    const char *w1 = part;
    size_t n1 = strcspn(w1, " \t");
    const char *w2 = w1 + n1;
    w2 += strspn(w2, " \t");
    size_t n2 = strcspn(w2, " \t");
    agti_buf_puts(b, "Bash(");
    put_escaped(b, w1, n1);
    if (plain_word(w2, n2)) {
        agti_buf_putc(b, ' ');
        put_escaped(b, w2, n2);
        const char *rest = w2 + n2;
        rest += strspn(rest, " \t");
        agti_buf_puts(b, *rest ? " *)" : ")");
    } else {
        agti_buf_puts(b, n2 ? " *)" : ")");
    }
}

char *agti_suggest_rule(agt_session *s, const char *tool, json_t *args, json_t *parts)
{
    agti_buf b = AGTI_BUF_INIT;
    int subject = agti_rule_subject(tool);
    if (strcmp(tool, "ExitPlanMode") == 0)
        return NULL;
    if (subject == AGTI_SUBJ_COMMAND && parts != NULL) {
        /* the first part that no allow rule covers */
        const char *pick = NULL;
        size_t i;
        json_t *v;
        json_array_foreach(parts, i, v)
        {
            const agti_rule *hit;
            agti_ruleset_match(&s->policy->rules, tool, subject, json_string_value(v), NULL, &hit);
            if (hit == NULL || hit->kind != AGT_RULE_ALLOW) {
                pick = json_string_value(v);
                break;
            }
        }
        if (pick == NULL)
            pick = json_string_value(json_array_get(parts, 0));
        suggest_command(&b, pick ? pick : "");
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
