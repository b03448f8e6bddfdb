/* Registry: loading built-in sets and host files, providers, phases, export
 * formats, freezing. Expected JSON texts are written out by hand from the
 * formats in docs/tools.md (OpenAI function tools, Anthropic input_schema,
 * MCP tools/list inputSchema). */
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "agenttools/agenttools.h"
#include "harness.h"
#include "registry/registry_internal.h"
#include "schema/schema_internal.h"

static int dummy_provider(agt_call *call, void *payload)
{
    (void)payload;
    return agt_call_set_text(call, "ok");
}

#define PARAMS                                                                                     \
    "{\"type\":\"object\",\"properties\":{\"q\":{\"type\":\"string\"}},\"required\":[\"q\"]}"

static const char *host_file =
    "[{\"name\":\"find\",\"plan_task\":true,\"main_task\":true,"
    "\"definition\":{\"name\":\"find\",\"description\":\"Find things.\",\"parameters\":" PARAMS
    "}},"
    "{\"name\":\"find2\",\"provider\":\"find\",\"plan_task\":false,"
    "\"definition\":{\"name\":\"find2\",\"description\":\"Find more.\"}}]";

static void test_builtin_sets(void)
{
    agt_registry *reg = NULL;
    T_EQ_INT(agt_registry_new(&reg), AGT_OK, "new registry");
    T_EQ_INT(agt_registry_count(reg), 0, "starts empty");
    T_EQ_INT(agt_registry_load_builtin(reg, "review"), AGT_OK, "review set loads");
    T_EQ_INT(agt_registry_count(reg), 6, "review set has six tools");
    const char *want[] = {"task_done",      "code_comment", "file_read",
                          "file_read_diff", "file_find",    "code_search"};
    int same = 1;
    for (size_t i = 0; i < 6; i++)
        same &= agt_registry_name_at(reg, i) && strcmp(agt_registry_name_at(reg, i), want[i]) == 0;
    T_CHECK(same, "review tools in catalogue order");
    T_CHECK(agt_registry_name_at(reg, 6) == NULL, "name_at past the end is NULL");
    T_EQ_INT(agt_registry_load_builtin(reg, "chat"), AGT_OK, "chat set loads beside it");
    T_EQ_INT(agt_registry_count(reg), 31, "6 + 25 tools");
    T_EQ_INT(agt_registry_load_builtin(reg, "chat"), AGT_OK, "loading twice replaces");
    T_EQ_INT(agt_registry_count(reg), 31, "still 31 tools");
    T_EQ_INT(agt_registry_load_builtin(reg, "vim"), AGT_ENOTFOUND, "unknown set");
    T_CHECK(strstr(agt_error_message(), "'vim'") != NULL, "message names the set");

    /* Host-backed tools are not offered without a host provider. */
    T_EQ_INT(agt_registry_is_offered(reg, "AskUserQuestion", AGT_PHASE_ALL), 0,
             "AskUserQuestion not offered without a callback");
    T_EQ_INT(agt_registry_set_provider(reg, "AskUserQuestion", dummy_provider, NULL), AGT_OK,
             "host provider set");
    T_EQ_INT(agt_registry_is_offered(reg, "AskUserQuestion", AGT_PHASE_ALL), 1,
             "offered once the host provides it");
    T_EQ_INT(agt_registry_is_offered(reg, "TodoList", AGT_PHASE_ALL), 1,
             "TodoList has a built-in provider");
    T_EQ_INT(agt_registry_access(reg, "TodoList"), AGT_ACCESS_READ, "TodoList is read access");
    T_EQ_INT(agt_registry_access(reg, "Bash"), AGT_ACCESS_EXECUTE, "Bash is execute access");
    T_EQ_INT(agt_registry_access(reg, "Write"), AGT_ACCESS_WRITE, "Write is write access");
    T_EQ_INT(agt_registry_access(reg, "nope"), AGT_ENOTFOUND, "access of unknown tool");

    /* review phases from the tools.json flags */
    agt_registry_set_provider(reg, "file_read", dummy_provider, NULL);
    agt_registry_set_provider(reg, "code_search", dummy_provider, NULL);
    T_EQ_INT(agt_registry_is_offered(reg, "file_read", AGT_PHASE_PLAN), 0,
             "file_read is not a plan-phase tool");
    T_EQ_INT(agt_registry_is_offered(reg, "file_read", AGT_PHASE_MAIN), 1,
             "file_read is a main-phase tool");
    T_EQ_INT(agt_registry_is_offered(reg, "code_search", AGT_PHASE_PLAN), 1,
             "code_search is a plan-phase tool");
    agt_registry_free(reg);
}

static void test_host_file_and_export(void)
{
    agt_registry *reg = NULL;
    agt_registry_new(&reg);
    T_EQ_INT(agt_registry_load_json(reg, host_file, strlen(host_file)), AGT_EINVALID,
             "a name without provider is refused at load");
    T_CHECK(strstr(agt_error_message(), "tool entry 0 (\"find\")") != NULL,
            "message names the entry: %s", agt_error_message());
    T_EQ_INT(agt_registry_set_provider(reg, "find", dummy_provider, NULL), AGT_OK,
             "provider set before the load");
    T_EQ_INT(agt_registry_load_json(reg, host_file, strlen(host_file)), AGT_OK, "host file loads");
    T_EQ_INT(agt_registry_count(reg), 2, "two entries");
    T_EQ_INT(agt_registry_is_offered(reg, "find2", AGT_PHASE_MAIN), 1,
             "find2 runs on find's provider");
    T_EQ_INT(agt_registry_is_offered(reg, "find2", AGT_PHASE_PLAN), 0, "find2 is main only");

    char *out = NULL;
    T_EQ_INT(agt_registry_export(reg, "openai", AGT_PHASE_PLAN, &out), AGT_OK, "openai export");
    T_EQ_STR(out,
             "[{\"type\":\"function\",\"function\":{\"name\":\"find\",\"description\":\"Find "
             "things.\",\"parameters\":" PARAMS "}}]",
             "openai format, plan phase");
    agt_free(out);
    T_EQ_INT(agt_registry_export(reg, "anthropic", AGT_PHASE_MAIN, &out), AGT_OK, "anthropic");
    T_EQ_STR(out,
             "[{\"name\":\"find\",\"description\":\"Find things.\",\"input_schema\":" PARAMS "},"
             "{\"name\":\"find2\",\"description\":\"Find more.\",\"input_schema\":"
             "{\"type\":\"object\",\"properties\":{}}}]",
             "anthropic format; a tool without parameters takes an empty object");
    agt_free(out);
    T_EQ_INT(agt_registry_export(reg, "mcp", AGT_PHASE_ALL, &out), AGT_OK, "mcp export");
    T_EQ_STR(
        out,
        "{\"tools\":[{\"name\":\"find\",\"description\":\"Find things.\",\"inputSchema\":" PARAMS
        ",\"annotations\":{\"title\":\"Find\"}},{\"name\":\"find2\",\"description\":\"Find "
        "more.\",\"inputSchema\":{\"type\":\"object\",\"properties\":{}},\"annotations\":{"
        "\"title\":\"Find2\"}}]}",
        "mcp tools/list format; tools without an access class get only a title");
    agt_free(out);
    T_EQ_INT(agt_registry_export(reg, "native", AGT_PHASE_PLAN, &out), AGT_OK, "native export");
    T_EQ_STR(out,
             "[{\"name\":\"find\",\"plan_task\":true,\"main_task\":true,\"definition\":{\"name\":"
             "\"find\",\"description\":\"Find things.\",\"parameters\":" PARAMS "}}]",
             "native format is the entry as loaded");
    agt_free(out);
    out = (char *)1;
    T_EQ_INT(agt_registry_export(reg, "yaml", AGT_PHASE_ALL, &out), AGT_ENOTFOUND,
             "unknown format");
    T_CHECK(out == NULL, "out cleared on failure");
    T_EQ_INT(agt_registry_export(reg, NULL, AGT_PHASE_ALL, &out), AGT_EINVAL, "NULL format");
    T_EQ_STR(agt_error_message(),
             "agt_registry_export: format is NULL (pass \"openai\", \"anthropic\", \"mcp\" "
             "or \"native\")",
             "the message names the format and the choices");
    T_EQ_INT(agt_registry_export(reg, "openai", 7, &out), AGT_EINVAL, "unknown phase");
    T_EQ_STR(agt_error_message(),
             "agt_registry_export: unknown phase 7 (pass AGT_PHASE_ALL, AGT_PHASE_PLAN or "
             "AGT_PHASE_MAIN)",
             "the message names the phases");

    T_EQ_INT(agt_registry_set_description(reg, "find", "Find \"things\"."), AGT_OK, "re-describe");
    agt_registry_export(reg, "anthropic", AGT_PHASE_PLAN, &out);
    T_CHECK(out && strstr(out, "\"description\":\"Find \\\"things\\\".\"") != NULL,
            "new description exported: %s", out);
    agt_free(out);
    agt_registry_export(reg, "native", AGT_PHASE_PLAN, &out);
    T_EQ_STR(out,
             "[{\"name\":\"find\",\"plan_task\":true,\"main_task\":true,\"definition\":{\"name\":"
             "\"find\",\"description\":\"Find \\\"things\\\".\",\"parameters\":" PARAMS "}}]",
             "native export: the new description in place, nothing else changed");
    agt_free(out);
    T_EQ_INT(agt_registry_remove(reg, "find2"), AGT_OK, "remove");
    T_EQ_INT(agt_registry_remove(reg, "find2"), AGT_ENOTFOUND, "remove twice");
    T_EQ_INT(agt_registry_count(reg), 1, "one left");
    agt_registry_free(reg);
}

static void expect_load_error(agt_registry *reg, const char *json, int code, const char *needle,
                              const char *name)
{
    size_t before = agt_registry_count(reg);
    int rc = agt_registry_load_json(reg, json, strlen(json));
    T_EQ_INT(rc, code, "%s: status", name);
    T_CHECK(strstr(agt_error_message(), needle) != NULL, "%s: message has \"%s\": %s", name, needle,
            agt_error_message());
    T_EQ_INT(agt_registry_count(reg), before, "%s: registry unchanged", name);
}

static void test_load_errors(void)
{
    agt_registry *reg = NULL;
    agt_registry_new(&reg);
    agt_registry_set_provider(reg, "find", dummy_provider, NULL);
    agt_registry_load_json(reg, host_file, strlen(host_file));
    expect_load_error(reg, "{\"name\":1", AGT_EPARSE, "tools.json: invalid JSON", "broken JSON");
    expect_load_error(reg, "{}", AGT_EINVALID, "must be a JSON array", "object at top");
    expect_load_error(reg, "[3]", AGT_EINVALID, "tool entry 0: must be a JSON object",
                      "number entry");
    expect_load_error(reg, "[{\"definition\":{}}]", AGT_EINVALID, "\"name\" is missing",
                      "missing name");
    expect_load_error(reg, "[{\"name\":\"a b\",\"definition\":{}}]", AGT_EINVALID,
                      "1-64 characters", "bad name");
    expect_load_error(reg, "[{\"name\":\"find\"}]", AGT_EINVALID, "\"definition\" is missing",
                      "missing definition");
    expect_load_error(reg, "[{\"name\":\"find\",\"definition\":{\"name\":\"other\"}}]",
                      AGT_EINVALID, "differs from", "definition name differs");
    expect_load_error(
        reg, "[{\"name\":\"find\",\"definition\":{}},{\"name\":\"find\",\"definition\":{}}]",
        AGT_EINVALID, "tool entry 1 (\"find\"): the name is used", "duplicate");
    expect_load_error(reg, "[{\"name\":\"find\",\"plan_task\":\"yes\",\"definition\":{}}]",
                      AGT_EINVALID, "\"plan_task\" must be true or false", "bad flag");
    expect_load_error(reg, "[{\"name\":\"find\",\"access\":\"root\",\"definition\":{}}]",
                      AGT_EINVALID, "\"access\" must be one of", "bad access");
    expect_load_error(reg, "[{\"name\":\"x\",\"provider\":\"nothing\",\"definition\":{}}]",
                      AGT_EINVALID, "\"provider\" names no built-in tool", "unknown provider");
    expect_load_error(reg,
                      "[{\"name\":\"find\",\"definition\":{\"parameters\":{\"type\":\"object\","
                      "\"properties\":{\"q\":{\"type\":\"string\",\"pattern\":\"(\"}}}}}]",
                      AGT_EINVALID, "tool entry 0 (\"find\"): \"definition.parameters\"",
                      "bad schema");
    /* arguments are always an object (dispatch refuses anything else), so a
     * schema for another type makes a tool that can never be called */
    expect_load_error(reg,
                      "[{\"name\":\"find\",\"definition\":{\"parameters\":{\"type\":\"array\"}}}]",
                      AGT_EINVALID,
                      "tool entry 0 (\"find\"): \"definition.parameters\" must describe an "
                      "object (its \"type\" is \"array\"); the arguments of a call are always "
                      "a JSON object",
                      "array parameters");
    expect_load_error(reg,
                      "[{\"name\":\"find\",\"definition\":{\"parameters\":{\"type\":[\"string\","
                      "\"null\"]}}}]",
                      AGT_EINVALID,
                      "\"definition.parameters\" must describe an object (its \"type\" is "
                      "[\"string\",\"null\"])",
                      "type list without object");
    expect_load_error(reg, "[{\"name\":\"find\",\"definition\":{\"parameters\":true}}]",
                      AGT_EINVALID, "\"definition.parameters\" must be a JSON Schema object",
                      "boolean parameters");
    {
        const char *ok = "[{\"name\":\"find\",\"definition\":{\"parameters\":{\"type\":"
                         "[\"object\",\"null\"]}}}]";
        agt_registry *r2 = NULL;
        agt_registry_new(&r2);
        agt_registry_set_provider(r2, "find", dummy_provider, NULL);
        T_EQ_INT(agt_registry_load_json(r2, ok, strlen(ok)), AGT_OK,
                 "type list with object accepted");
        const char *untyped = "[{\"name\":\"find2\",\"provider\":\"find\",\"definition\":{"
                              "\"parameters\":{\"properties\":{}}}}]";
        T_EQ_INT(agt_registry_load_json(r2, untyped, strlen(untyped)), AGT_OK,
                 "parameters without type accepted");
        agt_registry_free(r2);
    }
    /* a built-in tool name without a provider is accepted (not offered) */
    const char *ask = "[{\"name\":\"AskUserQuestion\",\"definition\":{\"description\":\"Ask.\"}}]";
    T_EQ_INT(agt_registry_load_json(reg, ask, strlen(ask)), AGT_OK,
             "built-in host tool name accepted without provider");
    T_EQ_INT(agt_registry_is_offered(reg, "AskUserQuestion", AGT_PHASE_ALL), 0, "but not offered");
    agt_registry_free(reg);
}

/* An entry without "access" takes the access of the built-in tool its
 * provider names, from either embedded set, wherever it sits in the file
 * (the sets are parsed once per load and looked up for every entry). Values
 * from lib/registry/builtin/{chat,review}.json. */
static void test_access_from_builtin(void)
{
    agt_registry *reg = NULL;
    agt_registry_new(&reg);
    const char *file = "[{\"name\":\"Read\",\"definition\":{}},"
                       "{\"name\":\"file_read\",\"definition\":{}},"
                       "{\"name\":\"Shell\",\"provider\":\"Bash\",\"definition\":{}},"
                       "{\"name\":\"Fetch\",\"provider\":\"FetchURL\",\"definition\":{}},"
                       "{\"name\":\"Put\",\"provider\":\"Write\",\"access\":\"read\","
                       "\"definition\":{}}]";
    T_EQ_INT(agt_registry_load_json(reg, file, strlen(file)), AGT_OK, "five entries load");
    T_EQ_INT(agt_registry_access(reg, "Read"), AGT_ACCESS_READ, "Read: read, from chat");
    T_EQ_INT(agt_registry_access(reg, "file_read"), AGT_ACCESS_READ, "file_read: from review");
    T_EQ_INT(agt_registry_access(reg, "Shell"), AGT_ACCESS_EXECUTE, "Shell: execute, from Bash");
    T_EQ_INT(agt_registry_access(reg, "Fetch"), AGT_ACCESS_NETWORK,
             "Fetch: network, from FetchURL");
    T_EQ_INT(agt_registry_access(reg, "Put"), AGT_ACCESS_READ, "an explicit access wins");
    const char *one = "{\"name\":\"Run\",\"provider\":\"TaskStop\",\"definition\":{}}";
    T_EQ_INT(agt_registry_add_json(reg, one, strlen(one)), AGT_OK, "add one entry");
    T_EQ_INT(agt_registry_access(reg, "Run"), AGT_ACCESS_EXECUTE, "Run: execute, from TaskStop");
    agt_registry_free(reg);
}

/* The "annotations" of one tool of an mcp export, as compact JSON (malloc'd). */
static char *annotations_of(const char *export_json, const char *name)
{
    json_t *doc = json_loads(export_json, 0, NULL);
    size_t i;
    json_t *t;
    char *out = NULL;
    json_array_foreach(json_object_get(doc, "tools"), i, t)
    {
        if (strcmp(json_string_value(json_object_get(t, "name")), name) == 0)
            out = json_dumps(json_object_get(t, "annotations"), JSON_COMPACT | JSON_PRESERVE_ORDER);
    }
    json_decref(doc);
    return out;
}

static void test_mcp_annotations(void)
{
    agt_registry *reg = NULL;
    agt_registry_new(&reg);
    agt_registry_load_builtin(reg, "chat");
    const char *extra = "[{\"name\":\"URLParser_tool\",\"provider\":\"Read\",\"definition\":{}},"
                        "{\"name\":\"ask-the-host\",\"provider\":\"TodoList\",\"access\":\"host\","
                        "\"definition\":{}}]";
    for (size_t k = 0; k < 2; k++) {
        json_t *arr = json_loads(extra, 0, NULL);
        char *one = json_dumps(json_array_get(arr, k), JSON_COMPACT);
        T_EQ_INT(agt_registry_add_json(reg, one, strlen(one)), AGT_OK, "add %s", one);
        free(one);
        json_decref(arr);
    }
    char *out = NULL;
    T_EQ_INT(agt_registry_export(reg, "mcp", AGT_PHASE_ALL, &out), AGT_OK, "mcp export of chat");
    static const char *const want[][2] = {
        {"Read", "{\"title\":\"Read\",\"readOnlyHint\":true,\"destructiveHint\":false,"
                 "\"idempotentHint\":true,\"openWorldHint\":false}"},
        {"ReadMediaFile",
         "{\"title\":\"Read media file\",\"readOnlyHint\":true,\"destructiveHint\":false,"
         "\"idempotentHint\":true,\"openWorldHint\":false}"},
        {"Write", "{\"title\":\"Write\",\"readOnlyHint\":false,\"destructiveHint\":true,"
                  "\"idempotentHint\":false,\"openWorldHint\":false}"},
        {"Bash", "{\"title\":\"Bash\",\"readOnlyHint\":false,\"destructiveHint\":true,"
                 "\"idempotentHint\":false,\"openWorldHint\":true}"},
        {"FetchURL", "{\"title\":\"Fetch URL\",\"readOnlyHint\":true,\"destructiveHint\":false,"
                     "\"idempotentHint\":false,\"openWorldHint\":true}"},
        {"TaskStop", "{\"title\":\"Task stop\",\"readOnlyHint\":false,\"destructiveHint\":true,"
                     "\"idempotentHint\":false,\"openWorldHint\":true}"},
        {"URLParser_tool",
         "{\"title\":\"URL parser tool\",\"readOnlyHint\":true,\"destructiveHint\":false,"
         "\"idempotentHint\":true,\"openWorldHint\":false}"},
        {"ask-the-host", "{\"title\":\"Ask the host\"}"},
    };
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        char *a = annotations_of(out, want[k][0]);
        T_EQ_STR(a != NULL ? a : "(missing)", want[k][1], "annotations of %s", want[k][0]);
        free(a);
    }
    agt_free(out);
    agt_registry_free(reg);
}

static void test_freeze(void)
{
    agt_registry *reg = NULL;
    agt_registry_new(&reg);
    agt_registry_load_builtin(reg, "chat");
    T_EQ_INT(agt_registry_is_frozen(reg), 0, "not frozen at first");
    T_EQ_INT(agt_registry_freeze(reg), AGT_OK, "freeze");
    T_EQ_INT(agt_registry_is_frozen(reg), 1, "frozen");
    T_EQ_INT(agt_registry_set_provider(reg, "WebSearch", dummy_provider, NULL), AGT_EFROZEN,
             "set_provider refused when frozen");
    T_EQ_INT(agt_registry_load_builtin(reg, "review"), AGT_EFROZEN, "load refused when frozen");
    T_EQ_INT(agt_registry_remove(reg, "Read"), AGT_EFROZEN, "remove refused when frozen");
    T_EQ_INT(agt_registry_set_description(reg, "Read", "x"), AGT_EFROZEN,
             "describe refused when frozen");
    char *out = NULL;
    T_EQ_INT(agt_registry_export(reg, "openai", AGT_PHASE_ALL, &out), AGT_OK,
             "export works when frozen");
    agt_free(out);
    agt_registry_free(reg);
    agt_registry_free(NULL);
    T_EQ_INT(agt_registry_new(NULL), AGT_EINVAL, "new with NULL out");
}

/* Built-in schemas are compiled on first use (issue 19: compiling all of
 * them was 17% of start-up), a host entry's at load. Several threads that
 * validate through one frozen registry at once all get the one compiled
 * schema, and it judges as the eager one did (Glob's "pattern" is a
 * required string: lib/registry/builtin/chat.json). */
#define LAZY_THREADS 8
static agt_registry *lazy_reg;
static pthread_barrier_t lazy_barrier;
static const agt_schema *lazy_got[LAZY_THREADS];
static int lazy_verdict[LAZY_THREADS][3];

static void *lazy_worker(void *arg)
{
    size_t k = (size_t)arg;
    const agti_tool *t = agti_registry_find(lazy_reg, "Glob");
    pthread_barrier_wait(&lazy_barrier);
    const agt_schema *s = NULL;
    lazy_verdict[k][0] = agti_tool_schema(t, &s);
    lazy_got[k] = s;
    static const char *const args[] = {"{\"pattern\":\"*.c\"}", "{\"pattern\":1}"};
    for (size_t a = 0; a < 2 && s != NULL; a++) {
        json_t *v = json_loads(args[a], 0, NULL);
        json_t *errors = NULL;
        lazy_verdict[k][1 + a] = agti_schema_validate_json(s, v, &errors);
        json_decref(errors);
        json_decref(v);
    }
    return NULL;
}

static void test_lazy_schema(void)
{
    agt_registry_new(&lazy_reg);
    T_EQ_INT(agt_registry_load_builtin(lazy_reg, "chat"), AGT_OK, "chat set loads");
    agt_registry_freeze(lazy_reg);
    const agti_tool *glob = agti_registry_find(lazy_reg, "Glob");
    T_CHECK(glob != NULL && glob->schema == NULL && glob->lazy,
            "a built-in schema is not compiled at load");
    pthread_barrier_init(&lazy_barrier, NULL, LAZY_THREADS);
    pthread_t th[LAZY_THREADS];
    for (size_t k = 0; k < LAZY_THREADS; k++)
        pthread_create(&th[k], NULL, lazy_worker, (void *)k);
    for (size_t k = 0; k < LAZY_THREADS; k++)
        pthread_join(th[k], NULL);
    pthread_barrier_destroy(&lazy_barrier);
    int same = 1;
    for (size_t k = 0; k < LAZY_THREADS; k++)
        same = same && lazy_got[k] == lazy_got[0] && lazy_verdict[k][0] == AGT_OK &&
               lazy_verdict[k][1] == AGT_OK && lazy_verdict[k][2] == AGT_EINVALID;
    T_CHECK(lazy_got[0] != NULL && same,
            "8 threads at once: one compiled schema, {\"pattern\":\"*.c\"} valid, "
            "{\"pattern\":1} invalid in each");
    T_CHECK(glob->schema == lazy_got[0], "the compiled schema is kept in the entry");
    const agti_tool *todo = agti_registry_find(lazy_reg, "EnterPlanMode");
    const agt_schema *s = (const agt_schema *)1;
    T_CHECK(todo != NULL && agti_tool_schema(todo, &s) == AGT_OK &&
                (s != NULL) == (json_object_get(json_object_get(todo->entry, "definition"),
                                                "parameters") != NULL),
            "EnterPlanMode: a schema exactly when it has parameters");
    agt_registry_free(lazy_reg);

    agt_registry *reg = NULL;
    agt_registry_new(&reg);
    agt_registry_set_provider(reg, "find", dummy_provider, NULL);
    const char *host =
        "[{\"name\":\"find\",\"definition\":{\"parameters\":{\"type\":\"object\"}}}]";
    T_EQ_INT(agt_registry_load_json(reg, host, strlen(host)), AGT_OK, "host file loads");
    const agti_tool *find = agti_registry_find(reg, "find");
    T_CHECK(find != NULL && find->schema != NULL && !find->lazy,
            "a host entry's schema is compiled at load");
    agt_registry_free(reg);
}

int main(void)
{
    test_builtin_sets();
    test_host_file_and_export();
    test_load_errors();
    test_access_from_builtin();
    test_mcp_annotations();
    test_freeze();
    test_lazy_schema();
    return t_done();
}
