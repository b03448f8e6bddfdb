/*
 * agt-review --format rdjson: the review as reviewdog's Diagnostic Format
 * (one DiagnosticResult object; reviewdog -f=rdjson). Locations are on the
 * post-change file, as reviewdog filters by the new side of the diff:
 * comments on removed lines are placed where those lines were, ambiguous
 * ones carry each candidate as a related location, unanchored ones name the
 * file only.
 */
#include "review.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *jstr(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s != NULL ? s : "";
}

static const char *rd_severity(const char *sev)
{
    if (strcmp(sev, "critical") == 0 || strcmp(sev, "high") == 0)
        return "ERROR";
    if (strcmp(sev, "low") == 0)
        return "INFO";
    return "WARNING";
}

static json_t *range(json_int_t a, json_int_t b)
{
    return json_pack("{s:{s:I}, s:{s:I}}", "start", "line", a, "end", "line", b);
}

static json_t *diagnostic(const rv_set *set, json_t *c)
{
    const char *path = jstr(c, "path"), *sug = jstr(c, "suggestion_code");
    json_int_t a = json_integer_value(json_object_get(c, "start_line"));
    json_int_t b = json_integer_value(json_object_get(c, "end_line"));
    int old = strcmp(jstr(c, "side"), "old") == 0;
    if (b < a)
        b = a;
    json_t *loc = json_pack("{s:s}", "path", path);
    const char *content = jstr(c, "content");
    char *msg = NULL;
    if (a > 0 && old) {
        size_t len = strlen(content) + 96;
        msg = malloc(len);
        if (msg != NULL)
            snprintf(msg, len, "%s\n\n(On removed lines %lld-%lld of the old file.)", content,
                     (long long)a, (long long)b);
        json_int_t n = rv_new_line_for_old(set, path, a);
        json_object_set_new(loc, "range", range(n, n));
    } else if (a > 0) {
        json_object_set_new(loc, "range", range(a, b));
    }
    json_t *d = json_pack("{s:s, s:o, s:s, s:{s:s}, s:{s:s}}", "message",
                          msg != NULL ? msg : content, "location", loc, "severity",
                          rd_severity(jstr(c, "severity")), "source", "name", "agt-review", "code",
                          "value", jstr(c, "category")[0] ? jstr(c, "category") : "other");
    free(msg);
    if (a > 0 && !old && sug[0] != '\0')
        /* a line-based suggestion: the whole lines a..b become the text */
        json_object_set_new(d, "suggestions",
                            json_pack("[{s:o, s:s}]", "range", range(a, b), "text", sug));
    json_t *cands = json_object_get(c, "candidates");
    if (a <= 0 && json_array_size(cands) > 0) {
        json_t *rel = json_array();
        for (size_t k = 0; k < json_array_size(cands); k++) {
            json_t *p = json_array_get(cands, k);
            json_array_append_new(rel, json_pack("{s:s, s:{s:s, s:o}}", "message",
                                                 "one of the places the quoted "
                                                 "code matches",
                                                 "location", "path", path, "range",
                                                 range(json_integer_value(json_array_get(p, 0)),
                                                       json_integer_value(json_array_get(p, 1)))));
        }
        json_object_set_new(d, "related_locations", rel);
    }
    return d;
}

json_t *rv_rdjson(const rv_set *set)
{
    json_t *diags = json_array();
    for (size_t i = 0; i < set->n_files; i++) {
        const rv_file *f = &set->files[i];
        for (size_t k = 0; f->skip == NULL && k < json_array_size(f->comments); k++) {
            json_t *d = diagnostic(set, json_array_get(f->comments, k));
            if (d != NULL)
                json_array_append_new(diags, d);
        }
    }
    return json_pack("{s:{s:s, s:s}, s:o}", "source", "name", "agt-review", "url",
                     "https://github.com/libagenttools/libagenttools", "diagnostics", diags);
}
