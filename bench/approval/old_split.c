/* The command splitter the Bash rules used before lib/shell (cut on ; && |
 * & newlines and parentheses, substitution bodies as parts of their own),
 * kept here only so bench-approval can print the parse + decide time of the
 * shell engine next to what the splitter cost. Not used by the library. */
#include <stdbool.h>
#include <string.h>

#include <jansson.h>

#include "core/core.h"
#include "old_split.h"

#define SPLIT_MAX_DEPTH 16

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* ---- command splitting ---------------------------------------------- */

static void flush_part(json_t *parts, agti_buf *cur)
{
    size_t a = 0, e = cur->len;
    const char *p = agti_buf_cstr(cur);
    while (a < e && is_space(p[a]))
        a++;
    while (e > a && is_space(p[e - 1]))
        e--;
    if (e > a)
        json_array_append_new(parts, json_stringn(p + a, e - a));
    agti_buf_truncate(cur, 0);
}

/* End (index of the closing char) of a substitution body starting at i. */
static size_t subst_end(const char *s, size_t len, size_t i, char close)
{
    int depth = 0;
    bool sq = false, dq = false;
    for (; i < len; i++) {
        char c = s[i];
        if (sq) {
            sq = c != '\'';
            continue;
        }
        if (c == '\\') {
            i++;
            continue;
        }
        if (close == '`') {
            if (c == '`')
                return i;
            continue;
        }
        if (dq) {
            dq = c != '"';
            continue;
        }
        if (c == '\'')
            sq = true;
        else if (c == '"')
            dq = true;
        else if (c == '(')
            depth++;
        else if (c == ')' && depth-- == 0)
            return i;
    }
    return len;
}

static void split_into(json_t *parts, const char *s, size_t len, int depth)
{
    agti_buf cur = AGTI_BUF_INIT;
    bool sq = false, dq = false;
    size_t i = 0;
    while (i < len) {
        char c = s[i];
        char next = i + 1 < len ? s[i + 1] : '\0';
        char prev = cur.len ? cur.ptr[cur.len - 1] : '\0';
        if (sq) {
            agti_buf_putc(&cur, c);
            sq = c != '\'';
            i++;
            continue;
        }
        if (c == '\\' && i + 1 < len) {
            agti_buf_put(&cur, s + i, 2);
            i += 2;
            continue;
        }
        bool subst =
            c == '`' || (c == '$' && next == '(') || (!dq && (c == '<' || c == '>') && next == '(');
        if (subst) {
            size_t body = c == '`' ? i + 1 : i + 2;
            size_t end = subst_end(s, len, body, c == '`' ? '`' : ')');
            if (depth < SPLIT_MAX_DEPTH)
                split_into(parts, s + body, end - body, depth + 1);
            else
                json_array_append_new(parts, json_stringn(s + body, end - body));
            size_t stop = end < len ? end + 1 : len;
            agti_buf_put(&cur, s + i, stop - i);
            i = stop;
            continue;
        }
        if (dq) {
            agti_buf_putc(&cur, c);
            dq = c != '"';
            i++;
            continue;
        }
        bool split = false;
        if (c == ';' || c == '\n' || c == '(' || c == ')')
            split = true;
        else if (c == '|')
            split = prev != '>'; /* ">|" is a redirection */
        else if (c == '&')
            split = prev != '>' && prev != '<' && next != '>'; /* 2>&1, &>file */
        if (split) {
            flush_part(parts, &cur);
            i++;
            continue;
        }
        if (c == '\'')
            sq = true;
        else if (c == '"')
            dq = true;
        agti_buf_putc(&cur, c);
        i++;
    }
    flush_part(parts, &cur);
    agti_buf_free(&cur);
}

json_t *bench_old_split(const char *cmd)
{
    json_t *parts = json_array();
    if (parts == NULL)
        return NULL;
    if (strpbrk(cmd, ";&|\n()`$<>'\"\\") == NULL) {
        /* nothing to split or quote: one simple command */
        size_t a = 0, e = strlen(cmd);
        while (a < e && is_space(cmd[a]))
            a++;
        while (e > a && is_space(cmd[e - 1]))
            e--;
        if (e > a && json_array_append_new(parts, json_stringn(cmd + a, e - a)) != 0) {
            json_decref(parts);
            return NULL;
        }
        return parts;
    }
    split_into(parts, cmd, strlen(cmd), 0);
    return parts;
}
