/*
 * Checks the built-in tool catalogue data (lib/registry/builtin/review.json and
 * chat.json) against the contracts of /work/shared/design/TOOLS.md: the tool
 * names and their order, the tools.json entry shape, well-formed argument
 * schemas, and the limits, defaults and enums that models and hosts rely on.
 * Every argument schema is also compiled with agt_schema_compile() and run
 * against realistic valid and invalid calls.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#include "agenttools/common.h"
#include "agenttools/schema.h"

static const char *const review_names[] = {"task_done",      "code_comment", "file_read",
                                           "file_read_diff", "file_find",    "code_search"};

static const char *const chat_names[] = {"Read",          "Write",        "Edit",
                                         "MultiEdit",     "NotebookEdit", "apply_patch",
                                         "Grep",          "Glob",         "ReadMediaFile",
                                         "Bash",          "WebSearch",    "FetchURL",
                                         "EnterPlanMode", "ExitPlanMode", "TodoList",
                                         "Agent",         "AgentSwarm",   "AskUserQuestion",
                                         "Skill",         "TaskList",     "TaskOutput",
                                         "TaskStop",      "CronCreate",   "CronList",
                                         "CronDelete"};

/* Phases and access classes: TOOLS.md "Review set" table (plan/main) and
 * "Approval" (read runs without asking; write, execute, network, host ask). */
struct meta {
    const char *name;
    int plan_task;
    int main_task;
    const char *access;
};

static const struct meta metas[] = {
    {"task_done", 0, 1, "read"},     {"code_comment", 0, 1, "read"},
    {"file_read", 0, 1, "read"},     {"file_read_diff", 1, 1, "read"},
    {"file_find", 1, 1, "read"},     {"code_search", 1, 1, "read"},
    {"Read", 1, 1, "read"},          {"Write", 1, 1, "write"},
    {"Edit", 1, 1, "write"},         {"MultiEdit", 1, 1, "write"},
    {"NotebookEdit", 1, 1, "write"}, {"apply_patch", 1, 1, "write"},
    {"Grep", 1, 1, "read"},          {"Glob", 1, 1, "read"},
    {"ReadMediaFile", 1, 1, "read"}, {"Bash", 1, 1, "execute"},
    {"WebSearch", 1, 1, "network"},  {"FetchURL", 1, 1, "network"},
    {"EnterPlanMode", 1, 1, "read"}, {"ExitPlanMode", 1, 1, "host"},
    {"TodoList", 1, 1, "read"},      {"Agent", 1, 1, "host"},
    {"AgentSwarm", 1, 1, "host"},    {"AskUserQuestion", 1, 1, "host"},
    {"Skill", 1, 1, "host"},         {"TaskList", 1, 1, "read"},
    {"TaskOutput", 1, 1, "read"},    {"TaskStop", 1, 1, "execute"},
    {"CronCreate", 1, 1, "write"},   {"CronList", 1, 1, "read"},
    {"CronDelete", 1, 1, "write"},
};

/* Values inside a tool's "parameters" schema, addressed by JSON pointer, with
 * the JSON they must equal. Every value comes from TOOLS.md (or, where TOOLS.md
 * summarises, from the reference documents it was written from). */
struct expect {
    const char *tool;
    const char *pointer;
    const char *json;
};

static const struct expect expects[] = {
    /* review set */
    {"task_done", "/properties/state/enum", "[\"DONE\",\"FAILED\"]"},
    /* apply_patch: one string argument "input", as the Codex function tool */
    {"apply_patch", "/required", "[\"input\"]"},
    {"apply_patch", "/properties/input/type", "\"string\""},
    {"apply_patch", "/additionalProperties", "false"},
    {"task_done", "/properties/state/default", "\"DONE\""},
    {"code_comment", "/required", "[\"comments\"]"},
    {"code_comment", "/properties/comments/minItems", "1"},
    {"code_comment", "/properties/comments/items/required", "[\"content\",\"existing_code\"]"},
    {"code_comment", "/properties/comments/items/properties/category/enum",
     "[\"bug\",\"security\",\"performance\",\"maintainability\",\"test\",\"style\","
     "\"documentation\",\"other\"]"},
    {"code_comment", "/properties/comments/items/properties/severity/enum",
     "[\"critical\",\"high\",\"medium\",\"low\"]"},
    {"file_read", "/required", "[\"file_path\"]"},
    {"file_read", "/properties/start_line/default", "1"},
    {"file_read", "/properties/start_line/minimum", "1"},
    {"file_read", "/properties/end_line/minimum", "1"},
    {"file_read_diff", "/required", "[\"path_array\"]"},
    {"file_find", "/required", "[\"query_name\"]"},
    {"file_find", "/properties/case_sensitive/default", "false"},
    {"code_search", "/required", "[\"search_text\"]"},
    {"code_search", "/properties/file_patterns/type", "\"array\""},
    {"code_search", "/properties/case_sensitive/default", "false"},
    {"code_search", "/properties/use_perl_regexp/default", "false"},
    /* chat set: files */
    {"Read", "/required", "[\"path\"]"},
    {"Read", "/properties/line_offset/default", "1"},
    {"Read", "/properties/n_lines/minimum", "1"},
    {"Read", "/properties/n_lines/maximum", "1000"},
    {"Write", "/required", "[\"path\",\"content\"]"},
    {"Write", "/properties/mode/enum", "[\"overwrite\",\"append\"]"},
    {"Write", "/properties/mode/default", "\"overwrite\""},
    {"Edit", "/required", "[\"path\",\"old_string\",\"new_string\"]"},
    {"Edit", "/properties/replace_all/default", "false"},
    {"NotebookEdit", "/required", "[\"path\"]"},
    {"NotebookEdit", "/properties/edit_mode/enum", "[\"replace\",\"insert\",\"delete\"]"},
    {"NotebookEdit", "/properties/edit_mode/default", "\"replace\""},
    {"NotebookEdit", "/properties/cell_type/enum", "[\"code\",\"markdown\"]"},
    {"NotebookEdit", "/properties/cell_index/minimum", "0"},
    {"Grep", "/required", "[\"pattern\"]"},
    {"Grep", "/properties/output_mode/enum",
     "[\"files_with_matches\",\"content\",\"count_matches\"]"},
    {"Grep", "/properties/output_mode/default", "\"files_with_matches\""},
    {"Grep", "/properties/-i/type", "\"boolean\""},
    {"Grep", "/properties/-n/default", "true"},
    {"Grep", "/properties/-A/minimum", "0"},
    {"Grep", "/properties/-B/minimum", "0"},
    {"Grep", "/properties/-C/minimum", "0"},
    {"Grep", "/properties/head_limit/default", "250"},
    {"Grep", "/properties/head_limit/minimum", "0"},
    {"Grep", "/properties/offset/minimum", "0"},
    {"Grep", "/properties/multiline/default", "false"},
    {"Grep", "/properties/include_ignored/default", "false"},
    {"Glob", "/required", "[\"pattern\"]"},
    {"Glob", "/properties/include_ignored/default", "false"},
    {"ReadMediaFile", "/required", "[\"path\"]"},
    /* shell and background tasks */
    {"Bash", "/required", "[\"command\"]"},
    {"Bash", "/properties/timeout/type", "\"integer\""},
    {"Bash", "/properties/timeout/minimum", "1"},
    {"Bash", "/properties/timeout/maximum", "86400000"},
    {"Bash", "/properties/run_in_background/default", "false"},
    {"Bash", "/properties/disable_timeout/default", "false"},
    {"TaskList", "/properties/active_only/default", "true"},
    {"TaskList", "/properties/limit/default", "20"},
    {"TaskList", "/properties/limit/minimum", "1"},
    {"TaskList", "/properties/limit/maximum", "100"},
    {"TaskOutput", "/required", "[\"task_id\"]"},
    {"TaskOutput", "/properties/block/default", "false"},
    {"TaskOutput", "/properties/timeout/default", "30"},
    {"TaskOutput", "/properties/timeout/minimum", "0"},
    {"TaskOutput", "/properties/timeout/maximum", "3600"},
    {"TaskStop", "/required", "[\"task_id\"]"},
    {"TaskStop", "/properties/reason/type", "\"string\""},
    /* plan mode, todo, cron */
    {"EnterPlanMode", "/properties", "{}"},
    {"ExitPlanMode", "/properties/options/maxItems", "3"},
    {"ExitPlanMode", "/properties/options/items/properties/label/maxLength", "80"},
    {"ExitPlanMode", "/properties/options/items/properties/label/not/enum",
     "[\"Approve\",\"Reject\",\"Reject and Exit\",\"Revise\"]"},
    {"TodoList", "/properties/todos/items/properties/status/enum",
     "[\"pending\",\"in_progress\",\"done\"]"},
    {"TodoList", "/properties/todos/items/required", "[\"title\",\"status\"]"},
    {"CronCreate", "/required", "[\"cron\",\"prompt\"]"},
    {"CronCreate", "/properties/prompt/maxLength", "8192"},
    {"CronCreate", "/properties/recurring/default", "true"},
    {"CronList", "/properties", "{}"},
    {"CronDelete", "/required", "[\"id\"]"},
    /* host-backed */
    {"WebSearch", "/required", "[\"query\"]"},
    {"WebSearch", "/properties/limit/default", "5"},
    {"WebSearch", "/properties/limit/minimum", "1"},
    {"WebSearch", "/properties/limit/maximum", "20"},
    {"WebSearch", "/properties/include_content/default", "false"},
    {"FetchURL", "/required", "[\"url\"]"},
    {"Agent", "/required", "[\"prompt\",\"description\"]"},
    {"Agent", "/properties/run_in_background/default", "false"},
    {"AgentSwarm", "/properties/items/minItems", "1"},
    {"AgentSwarm", "/properties/items/maxItems", "128"},
    {"AgentSwarm", "/properties/prompt_template/pattern", "\"\\\\{\\\\{item\\\\}\\\\}\""},
    {"AskUserQuestion", "/required", "[\"questions\"]"},
    {"AskUserQuestion", "/properties/questions/minItems", "1"},
    {"AskUserQuestion", "/properties/questions/maxItems", "4"},
    {"AskUserQuestion", "/properties/questions/items/required", "[\"question\",\"options\"]"},
    {"AskUserQuestion", "/properties/questions/items/properties/question/pattern", "\"\\\\?$\""},
    {"AskUserQuestion", "/properties/questions/items/properties/header/maxLength", "12"},
    {"AskUserQuestion", "/properties/questions/items/properties/options/minItems", "2"},
    {"AskUserQuestion", "/properties/questions/items/properties/options/maxItems", "4"},
    {"AskUserQuestion", "/properties/questions/items/properties/multi_select/default", "false"},
    {"Skill", "/required", "[\"skill\"]"},
};

static char *read_whole(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap + 1);
    while (buf != NULL) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap)
            break;
        char *grown = realloc(buf, cap * 2 + 1);
        if (grown == NULL) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = grown;
        cap *= 2;
    }
    fclose(f);
    if (buf != NULL) {
        buf[n] = '\0';
        *len = n;
    }
    return buf;
}

static json_t *load_set(const char *set)
{
    const char *src = getenv("AGT_SOURCE_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/lib/registry/builtin/%s.json", src ? src : ".", set);
    size_t len = 0;
    char *text = read_whole(path, &len);
    if (!T_CHECK(text != NULL, "%s.json readable (%s)", set, path))
        return NULL;
    json_error_t err;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
    free(text);
    if (!T_CHECK(root != NULL, "%s.json is valid JSON without duplicate keys", set))
        t_diag("  line %d column %d: %s", err.line, err.column, err.text);
    return root;
}

/* The entry named `name` in either set, or NULL. */
static json_t *find_entry(json_t *const sets[2], const char *name)
{
    for (int s = 0; s < 2; s++) {
        size_t i;
        json_t *e;
        json_array_foreach(sets[s], i, e)
        {
            const char *n = json_string_value(json_object_get(e, "name"));
            if (n != NULL && strcmp(n, name) == 0)
                return e;
        }
    }
    return NULL;
}

/* Resolves a JSON pointer whose tokens contain no '/' or '~'. */
static json_t *pointer_get(json_t *v, const char *pointer)
{
    char token[128];
    const char *p = pointer;
    while (v != NULL && *p == '/') {
        p++;
        size_t n = strcspn(p, "/");
        if (n >= sizeof token)
            return NULL;
        memcpy(token, p, n);
        token[n] = '\0';
        p += n;
        if (json_is_object(v)) {
            v = json_object_get(v, token);
        } else if (json_is_array(v)) {
            char *end;
            unsigned long idx = strtoul(token, &end, 10);
            v = *end == '\0' ? json_array_get(v, idx) : NULL;
        } else {
            v = NULL;
        }
    }
    return *p == '\0' ? v : NULL;
}

/* T_EQ_STR for a value that may be absent (NULL); reports what was found. */
static void check_str(const char *got, const char *want, const char *what)
{
    if (!T_CHECK(got != NULL && strcmp(got, want) == 0, "%s", what))
        t_diag("  got [%s], want [%s]", got != NULL ? got : "(absent)", want);
}

static int nonempty_string(json_t *v)
{
    return json_is_string(v) && json_string_length(v) > 0;
}

/*
 * Walks an object schema and its nested object schemas (properties, items,
 * not): "type":"object" with a "properties" object, every "required" name
 * declared, every property with a "type" and a non-empty "description" at the
 * top level. Returns the number of problems found and reports each one.
 */
static int check_object_schema(const char *tool, const char *where, json_t *schema, int top)
{
    int bad = 0;
    json_t *props = json_object_get(schema, "properties");
    if (!json_is_object(props)) {
        t_diag("  %s%s: no \"properties\" object", tool, where);
        return 1;
    }
    json_t *req = json_object_get(schema, "required");
    if (req != NULL) {
        size_t i;
        json_t *r;
        if (!json_is_array(req)) {
            t_diag("  %s%s: \"required\" is not an array", tool, where);
            bad++;
        }
        json_array_foreach(req, i, r)
        {
            if (!json_is_string(r) || json_object_get(props, json_string_value(r)) == NULL) {
                t_diag("  %s%s: required name %s is not declared", tool, where,
                       json_is_string(r) ? json_string_value(r) : "(non-string)");
                bad++;
            }
        }
    }
    const char *key;
    json_t *prop;
    json_object_foreach(props, key, prop)
    {
        char sub[512];
        snprintf(sub, sizeof sub, "%s/properties/%s", where, key);
        if (!json_is_object(prop) || !json_is_string(json_object_get(prop, "type"))) {
            t_diag("  %s%s: property schema without a \"type\"", tool, sub);
            bad++;
            continue;
        }
        if (top && !nonempty_string(json_object_get(prop, "description"))) {
            t_diag("  %s%s: no description", tool, sub);
            bad++;
        }
        const char *type = json_string_value(json_object_get(prop, "type"));
        if (strcmp(type, "object") == 0)
            bad += check_object_schema(tool, sub, prop, 0);
        json_t *items = json_object_get(prop, "items");
        if (strcmp(type, "array") == 0) {
            if (!json_is_object(items) || !json_is_string(json_object_get(items, "type"))) {
                t_diag("  %s%s: array without typed \"items\"", tool, sub);
                bad++;
            } else if (strcmp(json_string_value(json_object_get(items, "type")), "object") == 0) {
                char isub[520];
                snprintf(isub, sizeof isub, "%s/items", sub);
                bad += check_object_schema(tool, isub, items, 0);
            }
        }
    }
    return bad;
}

static void check_set(json_t *root, const char *set, const char *const *names, size_t count)
{
    if (!T_CHECK(json_is_array(root), "%s: top level is an array", set))
        return;
    T_EQ_INT(json_array_size(root), count, "%s: %zu entries", set, count);
    for (size_t i = 0; i < count && i < json_array_size(root); i++) {
        json_t *e = json_array_get(root, i);
        const char *name = json_string_value(json_object_get(e, "name"));
        char what[160];
        snprintf(what, sizeof what, "%s: entry %zu is %s", set, i, names[i]);
        check_str(name, names[i], what);
        if (name == NULL)
            continue;
        json_t *def = json_object_get(e, "definition");
        T_CHECK(json_is_object(e) && json_is_boolean(json_object_get(e, "plan_task")) &&
                    json_is_boolean(json_object_get(e, "main_task")) &&
                    json_is_string(json_object_get(e, "access")) && json_is_object(def),
                "%s: name, plan_task, main_task, access, definition have their types", name);
        snprintf(what, sizeof what, "%s: set is %s", name, set);
        check_str(json_string_value(json_object_get(e, "set")), set, what);
        size_t known = 0;
        const char *key;
        json_t *v;
        json_object_foreach(e, key, v)
        {
            static const char *const fields[] = {"name",   "plan_task", "main_task",
                                                 "access", "set",       "definition"};
            for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++)
                known += strcmp(key, fields[f]) == 0;
        }
        T_EQ_INT(known, json_object_size(e), "%s: no fields beyond the tools.json ones", name);
        snprintf(what, sizeof what, "%s: definition.name equals name", name);
        check_str(json_string_value(json_object_get(def, "name")), name, what);
        json_t *desc = json_object_get(def, "description");
        T_CHECK(nonempty_string(desc) && json_string_length(desc) >= 200,
                "%s: description is a real text (%zu bytes)", name, json_string_length(desc));
        json_t *params = json_object_get(def, "parameters");
        const char *ptype = json_string_value(json_object_get(params, "type"));
        T_CHECK(json_is_object(params) && ptype != NULL && strcmp(ptype, "object") == 0,
                "%s: parameters is an object schema", name);
        T_CHECK(json_is_false(json_object_get(params, "additionalProperties")),
                "%s: unknown arguments are refused", name);
        T_EQ_INT(check_object_schema(name, "", params, 1), 0,
                 "%s: required names declared, properties typed and described", name);
    }
}

static void check_meta(json_t *const sets[2])
{
    for (size_t i = 0; i < sizeof metas / sizeof metas[0]; i++) {
        json_t *e = find_entry(sets, metas[i].name);
        if (!T_CHECK(e != NULL, "%s present", metas[i].name))
            continue;
        T_CHECK(json_is_true(json_object_get(e, "plan_task")) == metas[i].plan_task &&
                    json_is_true(json_object_get(e, "main_task")) == metas[i].main_task,
                "%s: plan_task %d, main_task %d", metas[i].name, metas[i].plan_task,
                metas[i].main_task);
        char what[160];
        snprintf(what, sizeof what, "%s: access %s", metas[i].name, metas[i].access);
        check_str(json_string_value(json_object_get(e, "access")), metas[i].access, what);
    }
}

static void check_expects(json_t *const sets[2])
{
    for (size_t i = 0; i < sizeof expects / sizeof expects[0]; i++) {
        const struct expect *x = &expects[i];
        json_t *e = find_entry(sets, x->tool);
        json_t *params = pointer_get(e, "/definition/parameters");
        json_t *got = pointer_get(params, x->pointer);
        json_t *want = json_loads(x->json, JSON_DECODE_ANY, NULL);
        if (!T_CHECK(got != NULL && want != NULL && json_equal(got, want), "%s%s = %s", x->tool,
                     x->pointer, x->json)) {
            char *g = got ? json_dumps(got, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
            t_diag("  got %s", g ? g : "(absent)");
            free(g);
        }
        json_decref(want);
    }
}

/* code_comment items accept the runtime-only "thinking" field without
 * advertising it (review reference: "thinking is a runtime-only field"). */
static void check_code_comment_items(json_t *const sets[2])
{
    json_t *items = pointer_get(find_entry(sets, "code_comment"),
                                "/definition/parameters/properties/comments/items");
    T_CHECK(items != NULL && json_object_get(items, "additionalProperties") == NULL,
            "code_comment: comment items stay open for the runtime-only thinking field");
    T_CHECK(pointer_get(items, "/properties/thinking") == NULL,
            "code_comment: thinking is not advertised to the model");
}

struct call {
    const char *tool;
    const char *args;
    int valid;
};

static const struct call calls[] = {
    {"task_done", "{}", 1},
    {"task_done", "{\"state\":\"FAILED\"}", 1},
    {"task_done", "{\"state\":\"done\"}", 0},
    {"task_done", "{\"state\":\"DONE\",\"reason\":\"x\"}", 0},
    {"code_comment",
     "{\"comments\":[{\"content\":\"Rollback is never deferred.\",\"existing_code\":\"tx, err := "
     "db.Begin()\",\"suggestion_code\":\"tx, err := db.Begin()\\ndefer "
     "tx.Rollback()\",\"category\":\"bug\",\"severity\":\"high\"}]}",
     1},
    {"code_comment",
     "{\"path\":\"src/db.go\",\"comments\":[{\"content\":\"a\",\"existing_code\":\"b\","
     "\"thinking\":\"why\"}]}",
     1},
    {"code_comment", "{\"comments\":[]}", 0},
    {"code_comment", "{\"comments\":[{\"content\":\"x\"}]}", 0},
    {"code_comment",
     "{\"comments\":[{\"content\":\"x\",\"existing_code\":\"y\",\"severity\":\"blocker\"}]}", 0},
    {"code_comment", "{\"comments\":[{\"content\":\"x\",\"existing_code\":\"   \"}]}", 0},
    {"code_comment", "{\"comment\":[{\"content\":\"x\",\"existing_code\":\"y\"}]}", 0},
    {"file_read", "{\"file_path\":\"src/foo.go\"}", 1},
    {"file_read", "{\"file_path\":\"src/foo.go\",\"start_line\":10,\"end_line\":80}", 1},
    {"file_read", "{\"file_path\":\"src/foo.go\",\"start_line\":0}", 0},
    {"file_read", "{\"path\":\"src/foo.go\"}", 0},
    {"file_read", "{\"file_path\":\"a\",\"end_line\":\"80\"}", 0},
    {"file_read_diff", "{\"path_array\":[\"src/api/handler.go\",\"src/db/queries.go\"]}", 1},
    /* accepted by the schema: the tool answers "Error: no files found" (the reference's text) */
    {"file_read_diff", "{\"path_array\":[]}", 1},
    {"file_read_diff", "{\"path_array\":\"src/a.go\"}", 0},
    {"file_read_diff", "{}", 0},
    {"file_find", "{\"query_name\":\"UserService\"}", 1},
    {"file_find", "{\"query_name\":\"UserService\",\"case_sensitive\":true}", 1},
    {"file_find", "{\"query_name\":\"x\",\"case_sensitive\":\"yes\"}", 0},
    {"file_find", "{\"name\":\"x\"}", 0},
    {"code_search",
     "{\"search_text\":\"TODO|FIXME\",\"file_patterns\":[\"*.go\",\":(exclude)vendor/\"],"
     "\"case_sensitive\":false,\"use_perl_regexp\":true}",
     1},
    /* accepted by the schema: the tool answers "Error: search_text is blank" */
    {"code_search", "{\"search_text\":\"  \"}", 1},
    {"code_search", "{\"search_text\":\"x\",\"file_patterns\":\"*.go\"}", 0},
    {"code_search", "{\"file_patterns\":[\"*.go\"]}", 0},
    {"Read", "{\"path\":\"src/main.c\"}", 1},
    {"Read", "{\"path\":\"/abs/f.txt\",\"line_offset\":-1,\"n_lines\":1000}", 1},
    {"Read", "{\"path\":\"a\",\"n_lines\":1001}", 0},
    {"Read", "{\"path\":\"a\",\"line_offset\":0}", 0},
    {"Read", "{\"path\":\"a\",\"n_lines\":0}", 0},
    {"Read", "{\"file_path\":\"a\"}", 0},
    {"Write", "{\"path\":\"a/b.txt\",\"content\":\"\"}", 1},
    {"Write", "{\"path\":\"log.txt\",\"content\":\"x\\n\",\"mode\":\"append\"}", 1},
    {"Write", "{\"path\":\"a\",\"content\":\"x\",\"mode\":\"insert\"}", 0},
    {"Write", "{\"path\":\"a\"}", 0},
    {"Edit",
     "{\"path\":\"a.c\",\"old_string\":\"int x;\",\"new_string\":\"long "
     "x;\",\"replace_all\":true}",
     1},
    {"Edit", "{\"path\":\"a.c\",\"old_string\":\"x\",\"new_string\":\"\"}", 1},
    {"Edit", "{\"path\":\"a.c\",\"old_string\":\"\",\"new_string\":\"y\"}", 0},
    {"Edit", "{\"path\":\"a.c\",\"old_string\":\"x\"}", 0},
    {"NotebookEdit",
     "{\"path\":\"n.ipynb\",\"cell_id\":\"c1\",\"new_source\":\"x\",\"cell_type\":\"code\","
     "\"edit_mode\":\"insert\"}",
     1},
    {"NotebookEdit", "{\"path\":\"n.ipynb\",\"cell_index\":0,\"edit_mode\":\"delete\"}", 1},
    {"NotebookEdit", "{\"path\":\"n.ipynb\",\"cell_index\":-1,\"new_source\":\"\"}", 0},
    {"NotebookEdit", "{\"path\":\"n.ipynb\",\"cell_type\":\"raw\",\"new_source\":\"\"}", 0},
    {"NotebookEdit", "{\"path\":\"n.ipynb\",\"edit_mode\":\"move\"}", 0},
    {"NotebookEdit", "{\"cell_id\":\"c1\",\"new_source\":\"\"}", 0},
    {"Grep",
     "{\"pattern\":\"fn\\\\s+main\",\"-i\":true,\"-n\":false,\"-A\":2,\"-B\":1,\"-C\":3,"
     "\"output_mode\":\"content\",\"head_limit\":0,\"offset\":10,\"glob\":\"*.rs\","
     "\"type\":\"rust\",\"multiline\":true,\"include_ignored\":true,\"path\":\"src\"}",
     1},
    {"Grep", "{\"pattern\":\"x\",\"output_mode\":\"lines\"}", 0},
    {"Grep", "{\"pattern\":\"x\",\"-A\":-1}", 0},
    {"Grep", "{\"pattern\":\"x\",\"head_limit\":-1}", 0},
    {"Grep", "{\"pattern\":\"x\",\"ignore_case\":true}", 0},
    {"Glob", "{\"pattern\":\"**/*.{ts,tsx}\",\"path\":\"web\",\"include_ignored\":false}", 1},
    {"Glob", "{\"pattern\":\"\"}", 0},
    {"Glob", "{\"path\":\"src\"}", 0},
    {"ReadMediaFile", "{\"path\":\"shot.png\"}", 1},
    {"ReadMediaFile", "{}", 0},
    {"ReadMediaFile", "{\"path\":\"a.png\",\"detail\":\"high\"}", 0},
    {"Bash", "{\"command\":\"make -j4\",\"timeout\":300000}", 1},
    {"Bash", "{\"command\":\"make -j4\",\"timeout\":86400000}", 1},
    {"Bash",
     "{\"command\":\"npm run dev\",\"run_in_background\":true,\"description\":\"dev "
     "server\",\"disable_timeout\":true,\"cwd\":\"web\"}",
     1},
    {"Bash", "{\"command\":\"sleep 1\",\"timeout\":86400001}", 0},
    {"Bash", "{\"command\":\"ls\",\"timeout\":0}", 0},
    {"Bash", "{\"command\":\"\"}", 0},
    {"Bash", "{\"cmd\":\"ls\"}", 0},
    {"WebSearch", "{\"query\":\"jansson json_dumps flags\"}", 1},
    {"WebSearch", "{\"query\":\"x\",\"limit\":20,\"include_content\":true}", 1},
    {"WebSearch", "{\"query\":\"x\",\"limit\":21}", 0},
    {"WebSearch", "{\"query\":\"x\",\"limit\":0}", 0},
    {"WebSearch", "{\"limit\":5}", 0},
    {"FetchURL", "{\"url\":\"https://example.com/a\"}", 1},
    {"FetchURL", "{\"url\":\"http://localhost:8080/\"}", 1},
    {"FetchURL", "{\"url\":\"ftp://example.com/a\"}", 0},
    {"FetchURL", "{\"url\":\"file:///etc/passwd\"}", 0},
    {"FetchURL", "{}", 0},
    {"EnterPlanMode", "{}", 1},
    {"EnterPlanMode", "{\"plan\":\"x\"}", 0},
    {"ExitPlanMode", "{}", 1},
    {"ExitPlanMode", "{\"options\":[]}", 1},
    {"ExitPlanMode",
     "{\"options\":[{\"label\":\"Minimal fix\",\"description\":\"Patch the parser "
     "only\"},{\"label\":\"Rewrite\"}]}",
     1},
    {"ExitPlanMode",
     "{\"options\":[{\"label\":\"a\"},{\"label\":\"b\"},{\"label\":\"c\"},{\"label\":\"d\"}]}", 0},
    {"ExitPlanMode", "{\"options\":[{\"label\":\"Approve\"}]}", 0},
    {"ExitPlanMode", "{\"options\":[{\"label\":\"Reject and Exit\"}]}", 0},
    {"TodoList", "{}", 1},
    {"TodoList", "{\"todos\":[]}", 1},
    {"TodoList",
     "{\"todos\":[{\"title\":\"Write tests\",\"status\":\"in_progress\"},{\"title\":\"Ship\","
     "\"status\":\"pending\"}]}",
     1},
    {"TodoList", "{\"todos\":[{\"title\":\"x\",\"status\":\"completed\"}]}", 0},
    {"TodoList", "{\"todos\":[{\"title\":\"x\"}]}", 0},
    {"Agent", "{\"prompt\":\"Find every caller of agt_free.\",\"description\":\"find callers\"}",
     1},
    {"Agent",
     "{\"prompt\":\"continue\",\"description\":\"resume "
     "search\",\"resume\":\"agent-3\",\"run_in_background\":true}",
     1},
    {"Agent", "{\"prompt\":\"x\"}", 0},
    {"Agent", "{\"prompt\":\"x\",\"description\":\"y\",\"background\":true}", 0},
    {"AgentSwarm",
     "{\"prompt_template\":\"Review {{item}} for "
     "leaks.\",\"items\":[\"a.c\",\"b.c\"],\"subagent_type\":\"coder\"}",
     1},
    {"AgentSwarm", "{\"resume_agent_ids\":[\"agent-1\"]}", 1},
    /* one item passes the schema: the provider needs 2 without resume_agent_ids */
    {"AgentSwarm", "{\"prompt_template\":\"Review {{item}}\",\"items\":[\"a.c\"]}", 1},
    {"AgentSwarm", "{\"prompt_template\":\"Review {{item}}\",\"items\":[]}", 0},
    {"AgentSwarm", "{\"prompt_template\":\"Review it\",\"items\":[\"a.c\",\"b.c\"]}", 0},
    {"AskUserQuestion",
     "{\"questions\":[{\"question\":\"Which database should we "
     "use?\",\"header\":\"Database\",\"options\":[{\"label\":\"SQLite\",\"description\":"
     "\"embedded\"},{\"label\":\"Postgres\",\"description\":\"server\"}],\"multi_select\":false}"
     "]}",
     1},
    {"AskUserQuestion", "{\"questions\":[]}", 0},
    {"AskUserQuestion",
     "{\"questions\":[{\"question\":\"Which one\",\"options\":[{\"label\":\"a\"},{\"label\":"
     "\"b\"}]}]}",
     0},
    {"AskUserQuestion",
     "{\"questions\":[{\"question\":\"Which one?\",\"options\":[{\"label\":\"a\"}]}]}", 0},
    {"AskUserQuestion",
     "{\"questions\":[{\"question\":\"Which one?\",\"header\":\"Thirteen "
     "char\",\"options\":[{\"label\":\"a\"},{\"label\":\"b\"}]}]}",
     0},
    {"Skill", "{\"skill\":\"release-notes\",\"args\":\"v1.2\"}", 1},
    {"Skill", "{\"args\":\"x\"}", 0},
    {"Skill", "{\"skill\":\"\"}", 0},
    {"TaskList", "{}", 1},
    {"TaskList", "{\"active_only\":false,\"limit\":100}", 1},
    {"TaskList", "{\"limit\":1}", 1},
    {"TaskList", "{\"limit\":101}", 0},
    {"TaskList", "{\"limit\":0}", 0},
    {"TaskList", "{\"active_only\":\"yes\"}", 0},
    {"TaskOutput", "{\"task_id\":\"b1\"}", 1},
    {"TaskOutput", "{\"task_id\":\"b1\",\"block\":true,\"timeout\":3600}", 1},
    {"TaskOutput", "{\"task_id\":\"b1\",\"timeout\":0}", 1},
    {"TaskOutput", "{\"task_id\":\"b1\",\"timeout\":3601}", 0},
    {"TaskOutput", "{\"task_id\":\"b1\",\"timeout\":-1}", 0},
    {"TaskOutput", "{\"block\":true}", 0},
    {"TaskStop", "{\"task_id\":\"b1\"}", 1},
    {"TaskStop", "{\"task_id\":\"b1\",\"reason\":\"no longer needed\"}", 1},
    {"TaskStop", "{}", 0},
    {"TaskStop", "{\"task_id\":\"b1\",\"force\":true}", 0},
    {"CronCreate", "{\"cron\":\"*/5 * * * *\",\"prompt\":\"Check the deploy status.\"}", 1},
    {"CronCreate", "{\"cron\":\"30 14 28 2 *\",\"prompt\":\"Remind me.\",\"recurring\":false}", 1},
    {"CronCreate", "{\"cron\":\"*/5 * * *\",\"prompt\":\"x\"}", 0},
    {"CronCreate", "{\"cron\":\"* * * * *\",\"prompt\":\"\"}", 0},
    {"CronCreate", "{\"cron\":\"* * * * *\"}", 0},
    {"CronList", "{}", 1},
    {"CronList", "{\"all\":true}", 0},
    {"CronDelete", "{\"id\":\"0a1b2c3d\"}", 1},
    {"CronDelete", "{\"id\":\"0a1b2c3\"}", 0},
    {"CronDelete", "{\"id\":\"zzzzzzzz\"}", 0},
    {"CronDelete", "{}", 0},
};

static int validate_args(const agt_schema *schema, const char *args)
{
    char *errors = NULL;
    int rc = agt_schema_validate(schema, args, strlen(args), &errors);
    agt_free(errors);
    return rc;
}

/* An argument object whose string `field` holds `n` copies of `c`. */
static char *args_with_long_string(const char *prefix, const char *field, size_t n, char c)
{
    size_t len = strlen(prefix) + strlen(field) + n + 16;
    char *s = malloc(len);
    if (s == NULL)
        return NULL;
    int head = snprintf(s, len, "{%s\"%s\":\"", prefix, field);
    memset(s + head, c, n);
    strcpy(s + (size_t)head + n, "\"}");
    return s;
}

static void check_with_validator(json_t *const sets[2])
{
    agt_schema *schemas[sizeof metas / sizeof metas[0]] = {0};
    for (size_t i = 0; i < sizeof metas / sizeof metas[0]; i++) {
        json_t *params = pointer_get(find_entry(sets, metas[i].name), "/definition/parameters");
        char *text = params ? json_dumps(params, JSON_COMPACT) : NULL;
        int rc = text ? agt_schema_compile(&schemas[i], text, strlen(text)) : AGT_EINVAL;
        T_EQ_INT(rc, AGT_OK, "%s: parameters compile with agt_schema_compile", metas[i].name);
        if (rc != AGT_OK)
            t_diag("  %s", agt_error_message());
        free(text);
    }
    for (size_t c = 0; c < sizeof calls / sizeof calls[0]; c++) {
        const agt_schema *schema = NULL;
        for (size_t i = 0; i < sizeof metas / sizeof metas[0]; i++)
            if (strcmp(metas[i].name, calls[c].tool) == 0)
                schema = schemas[i];
        if (schema == NULL) {
            T_CHECK(0, "%s: no compiled schema for %s", calls[c].tool, calls[c].args);
            continue;
        }
        T_EQ_INT(validate_args(schema, calls[c].args), calls[c].valid ? AGT_OK : AGT_EINVALID,
                 "%s %s %s", calls[c].tool, calls[c].valid ? "accepts" : "refuses", calls[c].args);
    }
    /* Limits on string lengths, at and just past the boundary. */
    for (size_t i = 0; i < sizeof metas / sizeof metas[0]; i++) {
        if (strcmp(metas[i].name, "CronCreate") == 0) {
            char *ok = args_with_long_string("\"cron\":\"0 9 * * 1-5\",", "prompt", 8192, 'p');
            char *over = args_with_long_string("\"cron\":\"0 9 * * 1-5\",", "prompt", 8193, 'p');
            T_EQ_INT(ok ? validate_args(schemas[i], ok) : AGT_ENOMEM, AGT_OK,
                     "CronCreate accepts a prompt of 8192 characters");
            T_EQ_INT(over ? validate_args(schemas[i], over) : AGT_ENOMEM, AGT_EINVALID,
                     "CronCreate refuses a prompt of 8193 characters");
            free(ok);
            free(over);
        }
        if (strcmp(metas[i].name, "ExitPlanMode") == 0) {
            char label80[128], label81[128];
            snprintf(label80, sizeof label80, "{\"options\":[{\"label\":\"%080d\"}]}", 0);
            snprintf(label81, sizeof label81, "{\"options\":[{\"label\":\"%081d\"}]}", 0);
            T_EQ_INT(validate_args(schemas[i], label80), AGT_OK,
                     "ExitPlanMode accepts an 80-character label");
            T_EQ_INT(validate_args(schemas[i], label81), AGT_EINVALID,
                     "ExitPlanMode refuses an 81-character label");
        }
    }
    for (size_t i = 0; i < sizeof metas / sizeof metas[0]; i++)
        agt_schema_free(schemas[i]);
}

int main(void)
{
    json_t *review = load_set("review");
    json_t *chat = load_set("chat");
    json_t *const sets[2] = {review, chat};
    if (review != NULL && chat != NULL) {
        check_set(review, "review", review_names, sizeof review_names / sizeof review_names[0]);
        check_set(chat, "chat", chat_names, sizeof chat_names / sizeof chat_names[0]);
        check_meta(sets);
        check_expects(sets);
        check_code_comment_items(sets);
        check_with_validator(sets);
    }
    json_decref(review);
    json_decref(chat);
    return t_done();
}
