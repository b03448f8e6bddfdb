/*
 * agt-review: printing the review results as text, JSON or SARIF 2.1.0 (the
 * subset GitHub code scanning reads: tool.driver name and rules, results with
 * ruleId, level, message and physicalLocation).
 */
#include "review.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const categories[] = {"bug",  "security", "performance",   "maintainability",
                                         "test", "style",    "documentation", "other"};
static const char *const category_text[] = {
    "A defect: the code does not do what it should.",
    "A security weakness.",
    "A performance problem.",
    "Code that is hard to read, change or maintain.",
    "Missing or weak tests.",
    "Style and naming.",
    "Missing or wrong documentation.",
    "Other review remarks.",
};

static const char *jstr(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s != NULL ? s : "";
}

static json_int_t jint(json_t *o, const char *key)
{
    return json_integer_value(json_object_get(o, key));
}

static size_t category_index(const char *c)
{
    for (size_t k = 0; k < sizeof categories / sizeof categories[0]; k++)
        if (strcmp(c, categories[k]) == 0)
            return k;
    return sizeof categories / sizeof categories[0] - 1;
}

static void print_indented(const char *text, const char *indent)
{
    const char *p = text;
    while (*p != '\0') {
        const char *nl = strchr(p, '\n');
        size_t n = nl != NULL ? (size_t)(nl - p) : strlen(p);
        printf("%s%.*s\n", indent, (int)n, p);
        p += n + (nl != NULL);
    }
}

static void location_text(json_t *c, char *buf, size_t len)
{
    json_int_t a = jint(c, "start_line"), b = jint(c, "end_line");
    const char *path = jstr(c, "path");
    int old = strcmp(jstr(c, "side"), "old") == 0;
    json_t *cands = json_object_get(c, "candidates");
    if (a <= 0 && json_is_true(json_object_get(c, "ambiguous")) && json_array_size(cands) > 0) {
        /* "path (ambiguous: lines 12, 16-18)": every place the quoted code matches */
        int n = snprintf(buf, len, "%s (ambiguous: line%s", path,
                         json_array_size(cands) > 1 ? "s" : "");
        for (size_t k = 0; k < json_array_size(cands) && n >= 0 && (size_t)n < len; k++) {
            json_t *p = json_array_get(cands, k);
            json_int_t ca = json_integer_value(json_array_get(p, 0));
            json_int_t cb = json_integer_value(json_array_get(p, 1));
            if (ca == cb)
                n += snprintf(buf + n, len - (size_t)n, "%s %lld", k > 0 ? "," : "", (long long)ca);
            else
                n += snprintf(buf + n, len - (size_t)n, "%s %lld-%lld", k > 0 ? "," : "",
                              (long long)ca, (long long)cb);
        }
        if (n >= 0 && (size_t)n < len)
            snprintf(buf + n, len - (size_t)n, "%s)", old ? ", old side" : "");
    } else if (a <= 0) {
        snprintf(buf, len, "%s (%s)", path,
                 json_is_true(json_object_get(c, "ambiguous")) ? "ambiguous" : "unanchored");
    } else if (a == b) {
        snprintf(buf, len, "%s:%lld%s", path, (long long)a, old ? " (old side)" : "");
    } else {
        snprintf(buf, len, "%s:%lld-%lld%s", path, (long long)a, (long long)b,
                 old ? " (old side)" : "");
    }
}

static void print_text(const rv_set *set, int64_t elapsed_ms)
{
    size_t total = 0, reviewed = 0;
    int64_t tokens = 0;
    for (size_t i = 0; i < set->n_files; i++) {
        const rv_file *f = &set->files[i];
        if (f->skip != NULL)
            continue;
        reviewed++;
        tokens += f->prompt_tokens + f->completion_tokens;
        size_t n = json_array_size(f->comments);
        for (size_t k = 0; k < n; k++) {
            json_t *c = json_array_get(f->comments, k);
            char loc[1024];
            location_text(c, loc, sizeof loc);
            const char *cat = jstr(c, "category"), *sev = jstr(c, "severity");
            printf("%s", loc);
            if (cat[0] != '\0' || sev[0] != '\0')
                printf(" [%s%s%s]", cat, cat[0] != '\0' && sev[0] != '\0' ? ", " : "", sev);
            printf("\n");
            print_indented(jstr(c, "content"), "  ");
            const char *sug = jstr(c, "suggestion_code");
            if (sug[0] != '\0') {
                printf("  suggestion:\n");
                print_indented(sug, "    ");
            }
            printf("\n");
            total++;
        }
        if (f->error != NULL)
            printf("%s: review %s: %s\n\n", f->path, f->outcome, f->error);
    }
    printf("%zu comment%s on %zu reviewed file%s; %zu skipped; %lld tokens; %.1f s\n", total,
           total == 1 ? "" : "s", reviewed, reviewed == 1 ? "" : "s", set->n_files - reviewed,
           (long long)tokens, (double)elapsed_ms / 1000.0);
}

static json_t *results_json(const rv_set *set, const rv_opts *o, int64_t elapsed_ms)
{
    json_t *files = json_array(), *skipped = json_array(), *comments = json_array();
    int64_t pt = 0, ct = 0;
    size_t reviewed = 0, unanchored = 0;
    for (size_t i = 0; i < set->n_files; i++) {
        const rv_file *f = &set->files[i];
        if (f->skip != NULL) {
            json_array_append_new(skipped,
                                  json_pack("{s:s, s:s}", "path", f->path, "reason", f->skip));
            continue;
        }
        reviewed++;
        pt += f->prompt_tokens;
        ct += f->completion_tokens;
        json_t *fo =
            json_pack("{s:s, s:s, s:i, s:b, s:i, s:i}", "path", f->path, "outcome",
                      f->outcome != NULL ? f->outcome : "error", "turns", f->turns, "planned",
                      f->planned, "comments", (json_int_t)json_array_size(f->comments),
                      "elapsed_ms", (json_int_t)f->elapsed_ms);
        if (f->error != NULL)
            json_object_set_new(fo, "error", json_string(f->error));
        json_object_set_new(fo, "group", f->group != NULL ? json_string(f->group) : json_null());
        json_array_append_new(files, fo);
        size_t n = json_array_size(f->comments);
        for (size_t k = 0; k < n; k++) {
            json_t *c = json_array_get(f->comments, k);
            unanchored += jint(c, "start_line") <= 0;
            json_array_append(comments, c);
        }
    }
    char desc[512];
    cli_config_describe(&o->cfg, desc, sizeof desc);
    return json_pack(
        "{s:{s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:s}, s:o, s:o, s:o}", "summary",
        "files_reviewed", (json_int_t)reviewed, "files_skipped",
        (json_int_t)(set->n_files - reviewed), "comments", (json_int_t)json_array_size(comments),
        "unanchored", (json_int_t)unanchored, "prompt_tokens", (json_int_t)pt, "completion_tokens",
        (json_int_t)ct, "total_tokens", (json_int_t)(pt + ct), "elapsed_ms", (json_int_t)elapsed_ms,
        "model", o->cfg.model, "files", files, "skipped", skipped, "comments", comments);
}

static const char *sarif_level(const char *sev)
{
    if (strcmp(sev, "critical") == 0 || strcmp(sev, "high") == 0)
        return "error";
    if (strcmp(sev, "low") == 0)
        return "note";
    return "warning";
}

/*
 * The post-change line shown for a comment on removed lines: where the
 * removed lines were, by their hunk (new_start plus the offset into the hunk,
 * kept inside the hunk's new lines).
 */
json_int_t rv_new_line_for_old(const rv_set *set, const char *path, json_int_t old_line)
{
    for (size_t i = 0; i < set->n_files; i++) {
        const rv_file *f = &set->files[i];
        if (strcmp(f->path, path) != 0 && (f->old_path == NULL || strcmp(f->old_path, path) != 0))
            continue;
        size_t k;
        json_t *h;
        json_array_foreach(f->hunk_list, k, h)
        {
            json_int_t os = jint(h, "old_start"), ol = jint(h, "old_lines");
            json_int_t ns = jint(h, "new_start"), nl = jint(h, "new_lines");
            if (old_line < os || old_line >= os + (ol > 0 ? ol : 1))
                continue;
            json_int_t n = ns + (old_line - os);
            json_int_t last = nl > 0 ? ns + nl - 1 : ns;
            if (n > last)
                n = last;
            return n >= 1 ? n : 1;
        }
    }
    return 1;
}

/* GitHub reads security-severity (a CVSS-like score) of rules tagged
 * "security": 9.0+ critical, 7.0-8.9 high, 4.0-6.9 medium, below low. */
static const char *security_score(const char *sev)
{
    if (strcmp(sev, "critical") == 0)
        return "9.5";
    if (strcmp(sev, "high") == 0)
        return "8.0";
    if (strcmp(sev, "low") == 0)
        return "3.0";
    return "5.5";
}

static json_t *region(json_int_t a, json_int_t b)
{
    return json_pack("{s:I, s:I}", "startLine", a, "endLine", b >= a ? b : a);
}

static json_t *location(const char *path, json_t *reg)
{
    json_t *phys =
        json_pack("{s:{s:s, s:s}}", "artifactLocation", "uri", path, "uriBaseId", "%SRCROOT%");
    if (reg != NULL)
        json_object_set_new(phys, "region", reg);
    return json_pack("{s:o}", "physicalLocation", phys);
}

static json_t *sarif_result(const rv_set *set, json_t *c)
{
    const char *cat = jstr(c, "category");
    size_t ci = category_index(cat);
    const char *content = jstr(c, "content"), *sug = jstr(c, "suggestion_code");
    const char *path = jstr(c, "path");
    json_int_t a = jint(c, "start_line"), b = jint(c, "end_line");
    int old = strcmp(jstr(c, "side"), "old") == 0;
    json_t *cands = json_object_get(c, "candidates");
    size_t len = strlen(content) + strlen(sug) + 128 + json_array_size(cands) * 48;
    char *msg = malloc(len);
    if (msg == NULL)
        return NULL;
    int n = snprintf(msg, len, "%s", content);
    json_t *locs = json_array();
    if (a <= 0 && json_is_true(json_object_get(c, "ambiguous")) && json_array_size(cands) > 0) {
        /* every place the quoted code matches is a location */
        n += snprintf(msg + n, len - (size_t)n, "\n\n(The quoted code matches lines");
        for (size_t k = 0; k < json_array_size(cands); k++) {
            json_t *p = json_array_get(cands, k);
            json_int_t ca = json_integer_value(json_array_get(p, 0));
            json_int_t cb = json_integer_value(json_array_get(p, 1));
            n += snprintf(msg + n, len - (size_t)n, "%s %lld-%lld", k > 0 ? "," : "", (long long)ca,
                          (long long)cb);
            json_array_append_new(locs, location(path, region(ca, cb)));
        }
        n += snprintf(msg + n, len - (size_t)n, ".)");
    } else if (a <= 0) {
        /* a file-level result: no region */
        n += snprintf(msg + n, len - (size_t)n, "\n\n(Not placed on a line of the diff.)");
        json_array_append_new(locs, location(path, NULL));
    } else if (old) {
        n += snprintf(msg + n, len - (size_t)n, "\n\n(On removed lines %lld-%lld of the old file.)",
                      (long long)a, (long long)b);
        json_int_t at = rv_new_line_for_old(set, path, a);
        json_array_append_new(locs, location(path, region(at, at)));
    } else {
        json_array_append_new(locs, location(path, region(a, b)));
    }
    if (sug[0] != '\0')
        snprintf(msg + n, len - (size_t)n, "\n\nSuggestion:\n%s", sug);
    char key[128];
    rv_comment_key(c, path, key, sizeof key);
    json_t *r =
        json_pack("{s:s, s:i, s:s, s:{s:s}, s:o, s:{s:s}}", "ruleId", categories[ci], "ruleIndex",
                  (json_int_t)ci, "level", sarif_level(jstr(c, "severity")), "message", "text", msg,
                  "locations", locs, "partialFingerprints", "agtReviewAnchor/v1", key);
    free(msg);
    json_t *props = json_pack("{s:s}", "side", old ? "old" : "new");
    const char *sev = jstr(c, "severity");
    if (sev[0] != '\0')
        json_object_set_new(props, "severity", json_string(sev));
    json_object_set_new(props, "anchoring", json_string(jstr(c, "method")));
    json_object_set_new(props, "anchored", json_boolean(a > 0));
    json_object_set_new(r, "properties", props);
    return r;
}

static json_t *sarif_rule(size_t k)
{
    char help[512];
    snprintf(help, sizeof help,
             "%s Comments of this kind come from agt-review, an LLM code reviewer: check the "
             "reasoning in the message before acting on it.",
             category_text[k]);
    /* GitHub shows a security-severity only for rules tagged "security" */
    json_t *tags = json_pack("[s, s]", "agt-review", categories[k]);
    json_t *props = json_pack("{s:o, s:s}", "tags", tags, "precision", "medium");
    if (strcmp(categories[k], "security") == 0)
        json_object_set_new(props, "security-severity", json_string(security_score("high")));
    return json_pack("{s:s, s:s, s:{s:s}, s:{s:s}, s:{s:s, s:s}, s:{s:s}, s:o}", "id",
                     categories[k], "name", categories[k], "shortDescription", "text",
                     category_text[k], "fullDescription", "text", help, "help", "text", help,
                     "markdown", help, "defaultConfiguration", "level", "warning", "properties",
                     props);
}

static json_t *sarif_json(const rv_set *set)
{
    json_t *rules = json_array(), *results = json_array();
    for (size_t k = 0; k < sizeof categories / sizeof categories[0]; k++)
        json_array_append_new(rules, sarif_rule(k));
    for (size_t i = 0; i < set->n_files; i++) {
        const rv_file *f = &set->files[i];
        for (size_t k = 0; f->skip == NULL && k < json_array_size(f->comments); k++) {
            json_t *c = json_array_get(f->comments, k);
            json_t *r = sarif_result(set, c);
            if (r == NULL)
                continue;
            if (strcmp(jstr(c, "category"), "security") == 0)
                json_object_set_new(json_object_get(r, "properties"), "security-severity",
                                    json_string(security_score(jstr(c, "severity"))));
            json_array_append_new(results, r);
        }
    }
    json_t *driver = json_pack("{s:s, s:s, s:s, s:o}", "name", "agt-review", "version",
                               agt_version(), "informationUri",
                               "https://github.com/libagenttools/libagenttools", "rules", rules);
    return json_pack("{s:s, s:s, s:[{s:{s:o}, s:o}]}", "$schema",
                     "https://json.schemastore.org/sarif-2.1.0.json", "version", "2.1.0", "runs",
                     "tool", "driver", driver, "results", results);
}

int rv_print_results(const rv_set *set, const rv_opts *o, int64_t elapsed_ms)
{
    if (strcmp(o->format, "text") == 0) {
        print_text(set, elapsed_ms);
        return 0;
    }
    json_t *j = strcmp(o->format, "sarif") == 0    ? sarif_json(set)
                : strcmp(o->format, "rdjson") == 0 ? rv_rdjson(set)
                                                   : results_json(set, o, elapsed_ms);
    char *s = json_dumps(j, JSON_INDENT(2));
    printf("%s\n", s);
    free(s);
    json_decref(j);
    return 0;
}
