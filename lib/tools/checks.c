/* Argument rules of built-in tools that their JSON Schema cannot express,
 * checked by the dispatcher after schema validation and before approval, so
 * a host provider (WebSearch, AskUserQuestion, Skill) only ever sees calls
 * that follow TOOLS.md. The schemas in chat.json already hold the rules they
 * can: question ends in "?", header at most 12 characters, 2-4 options,
 * 1-4 questions, WebSearch limit 1-20. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "dispatch/dispatch_internal.h"
#include "tools_internal.h"

static bool blank(const char *s)
{
    for (; *s; s++)
        if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r')
            return false;
    return true;
}

/* s without leading and trailing white space: start and length. */
static const char *trimmed(const char *s, size_t *len)
{
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
        n--;
    *len = n;
    return s;
}

/* Equal after trimming, ASCII case ignored. */
static bool same_text(const char *a, const char *b)
{
    size_t la, lb;
    a = trimmed(a, &la);
    b = trimmed(b, &lb);
    return la == lb && strncasecmp(a, b, la) == 0;
}

static int fail(agt_call *call, const char *fmt, ...) AGTI_PRINTF(2, 3);

static int fail(agt_call *call, const char *fmt, ...)
{
    agti_buf b = AGTI_BUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    agti_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    agti_buf_printf(&b, " Fix this and call %s again.", agt_call_tool(call));
    if (b.oom) {
        agti_buf_free(&b);
        return agti_oom();
    }
    agti_buf s = AGTI_BUF_INIT; /* model text may carry invalid UTF-8 */
    agti_utf8_sanitize(&s, b.ptr, b.len);
    agti_buf_free(&b);
    int rc = s.oom ? agti_oom() : agt_call_set_error(call, agti_buf_cstr(&s));
    agti_buf_free(&s);
    return rc == AGT_OK ? AGT_EINVALID : rc;
}

static int check_options(agt_call *call, size_t qi, const char *question, json_t *options)
{
    size_t i;
    json_t *o;
    json_array_foreach(options, i, o)
    {
        const char *label = json_string_value(json_object_get(o, "label"));
        if (label == NULL)
            continue;
        if (blank(label))
            return fail(call, "AskUserQuestion: option %zu of question %zu has a blank label.",
                        i + 1, qi + 1);
        if (same_text(label, "Other"))
            return fail(call,
                        "AskUserQuestion: option %zu of question %zu is labelled \"%s\"; leave "
                        "it out: an \"Other\" answer for free text is added automatically.",
                        i + 1, qi + 1, label);
        for (size_t k = 0; k < i; k++) {
            const char *prev =
                json_string_value(json_object_get(json_array_get(options, k), "label"));
            if (prev != NULL && same_text(prev, label))
                return fail(call,
                            "AskUserQuestion: question %zu (\"%s\") has the answer label \"%s\" "
                            "twice (options %zu and %zu); labels must be unique within a "
                            "question.",
                            qi + 1, question, label, k + 1, i + 1);
        }
    }
    return AGT_OK;
}

static int check_ask_user(agt_call *call, json_t *args)
{
    json_t *questions = json_object_get(args, "questions");
    size_t i;
    json_t *q;
    json_array_foreach(questions, i, q)
    {
        const char *text = json_string_value(json_object_get(q, "question"));
        const char *header = json_string_value(json_object_get(q, "header"));
        if (text == NULL)
            continue;
        size_t len;
        trimmed(text, &len);
        if (len <= 1)
            return fail(call, "AskUserQuestion: question %zu has no text before its \"?\".", i + 1);
        if (header != NULL && blank(header))
            return fail(call,
                        "AskUserQuestion: the header of question %zu is blank; give a short tag "
                        "(at most 12 characters) or leave it out.",
                        i + 1);
        for (size_t k = 0; k < i; k++) {
            const char *prev =
                json_string_value(json_object_get(json_array_get(questions, k), "question"));
            if (prev != NULL && same_text(prev, text))
                return fail(call,
                            "AskUserQuestion: questions %zu and %zu are the same (\"%s\"); ask "
                            "each question once.",
                            k + 1, i + 1, text);
        }
        int rc = check_options(call, i, text, json_object_get(q, "options"));
        if (rc != AGT_OK)
            return rc;
    }
    return AGT_OK;
}

static int check_web_search(agt_call *call, json_t *args)
{
    const char *query = json_string_value(json_object_get(args, "query"));
    if (query != NULL && blank(query))
        return fail(call, "WebSearch: the query is blank; say what to search for.");
    return AGT_OK;
}

static int check_skill(agt_call *call, json_t *args)
{
    const char *skill = json_string_value(json_object_get(args, "skill"));
    if (skill != NULL && blank(skill))
        return fail(call, "Skill: the skill name is blank; give the name of one of the skills "
                          "listed in your instructions.");
    return AGT_OK;
}

static const struct {
    const char *tool;
    int (*check)(agt_call *call, json_t *args);
} checks[] = {
    {"AskUserQuestion", check_ask_user},
    {"WebSearch", check_web_search},
    {"Skill", check_skill},
};

int agti_builtin_check(agt_call *call)
{
    const char *tool = agt_call_tool(call);
    for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++)
        if (strcmp(checks[i].tool, tool) == 0)
            return checks[i].check(call, agti_call_args_json(call));
    return AGT_OK;
}
