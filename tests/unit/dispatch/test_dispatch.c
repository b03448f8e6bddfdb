/* Dispatcher and session entry points: every way a tool call can go wrong
 * comes back as an error result with a status and a message for the model. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "agenttools/agenttools.h"
#include "dispatch/dispatch_internal.h"
#include "schema/schema_internal.h"
#include "harness.h"

/* A host tool with two parameters, used by most cases below. */
static const char *echo_entry =
    "{\"name\":\"echo\",\"plan_task\":false,\"main_task\":true,\"access\":\"read\","
    "\"definition\":{\"name\":\"echo\",\"description\":\"Echo the text back.\","
    "\"parameters\":{\"type\":\"object\",\"properties\":{"
    "\"text\":{\"type\":\"string\",\"minLength\":1},"
    "\"times\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":3}},"
    "\"required\":[\"text\"],\"additionalProperties\":false}}}";

static atomic_int echo_calls;

static int echo_provider(agt_call *call, void *payload)
{
    echo_calls++;
    const char *mode = payload;
    if (mode != NULL && strcmp(mode, "fail") == 0)
        return AGT_EIO;
    if (mode != NULL && strcmp(mode, "error-text") == 0)
        return agt_call_set_error(call, "the echo chamber is closed");
    if (mode != NULL && strcmp(mode, "bad-utf8") == 0)
        return agt_call_set_text(call, "a\xff"
                                       "b");
    if (mode != NULL && strncmp(mode, "take", 4) == 0) {
        /* agti_call_take_text: the buffer is taken, invalid UTF-8 still replaced */
        agt_call_set_text(call, "an earlier text");
        agti_buf b = AGTI_BUF_INIT;
        agti_buf_puts(&b, strcmp(mode, "take-bad") == 0 ? "c\xff"
                                                          "d"
                                                        : "taken text");
        int rc = agti_call_take_text(call, &b);
        if (b.ptr != NULL || b.len != 0)
            return AGT_EINVAL; /* not left empty */
        return rc;
    }
    char buf[256];
    snprintf(buf, sizeof buf, "%s|%s|%s", agt_call_id(call), agt_call_tool(call),
             agt_call_args(call));
    int rc = agt_call_set_text(call, buf);
    if (rc == AGT_OK)
        rc = agt_call_set_json(call, "{\"ok\":true}", 11);
    return rc;
}

static agt_registry *make_registry(void *payload)
{
    agt_registry *reg = NULL;
    if (agt_registry_new(&reg) != AGT_OK)
        return NULL;
    agt_registry_set_provider(reg, "echo", echo_provider, payload);
    if (agt_registry_add_json(reg, echo_entry, strlen(echo_entry)) != AGT_OK) {
        t_diag("add_json failed: %s", agt_error_message());
        agt_registry_free(reg);
        return NULL;
    }
    return reg;
}

static agt_result *call(agt_session *s, const char *tool, const char *args)
{
    agt_result *r = NULL;
    int rc = agt_session_dispatch(s, "call_1", tool, args, &r);
    if (rc != AGT_OK)
        t_diag("dispatch returned %d: %s", rc, agt_error_message());
    return r;
}

static void test_success(void)
{
    agt_registry *reg = make_registry(NULL);
    agt_session *s = NULL;
    T_EQ_INT(agt_session_new(&s, reg, "."), AGT_OK, "session on the current directory");
    agt_result *r = call(s, "echo", "{\"text\": \"hi\", \"times\": 2}");
    T_EQ_STR(agt_result_text(r), "call_1|echo|{\"text\": \"hi\", \"times\": 2}",
             "provider sees id, tool and the arguments as sent");
    T_EQ_INT(agt_result_is_error(r), 0, "success is not an error");
    T_EQ_INT(agt_result_status(r), AGT_OK, "status OK");
    T_EQ_STR(agt_result_json(r), "{\"ok\":true}", "structured result kept");
    T_EQ_STR(agt_result_call_id(r), "call_1", "result carries the call id");
    T_EQ_STR(agt_result_tool(r), "echo", "result carries the tool");
    agt_result_free(r);
    agt_session_free(s);
    agt_registry_free(reg);
}

static void test_bad_calls(void)
{
    agt_registry *reg = make_registry(NULL);
    agt_session *s = NULL;
    agt_session_new(&s, reg, ".");
    echo_calls = 0;

    agt_result *r = call(s, "nope", "{}");
    T_EQ_INT(agt_result_status(r), AGT_ENOTFOUND, "unknown tool: not found");
    T_EQ_STR(agt_result_text(r),
             "Tool 'nope' is not available here. Call one of the available tools instead: echo.",
             "unknown tool: message lists the available tools");
    T_EQ_INT(agt_result_is_error(r), 1, "unknown tool is an error result");
    agt_result_free(r);

    r = call(s, "echo", "{\"text\": ");
    T_EQ_INT(agt_result_status(r), AGT_EPARSE, "truncated JSON: parse status");
    T_CHECK(strstr(agt_result_text(r), "The arguments for echo are not valid JSON (invalid JSON "
                                       "at line 1") == agt_result_text(r),
            "truncated JSON: message says so and where: %s", agt_result_text(r));
    agt_result_free(r);

    r = call(s, "echo", "[1,2]");
    T_EQ_INT(agt_result_status(r), AGT_EINVALID, "array arguments refused");
    T_EQ_STR(agt_result_text(r),
             "The arguments for echo must be a JSON object of named parameters, not a single "
             "value. Call echo again with an object.",
             "array arguments: message");
    agt_result_free(r);

    r = call(s, "echo", "{\"times\": 7, \"loud\": true}");
    T_EQ_INT(agt_result_status(r), AGT_EINVALID, "schema violations: invalid status");
    char text[2048];
    snprintf(text, sizeof text, "%s", agt_result_text(r));
    if (!T_CHECK(strncmp(text, "The arguments for echo do not match its parameters (3 problems):\n",
                         65) == 0,
                 "every violation counted (missing text, times > 3, extra loud)"))
        t_diag("got: %s", text);
    T_CHECK(strstr(text, "- /times: ") != NULL, "violation at /times listed");
    T_CHECK(strstr(text, "- (arguments): ") != NULL, "root-level violations listed");
    T_CHECK(strstr(text, "Fix these and call echo again.") != NULL, "tells what to do");
    T_CHECK(agt_result_json(r) != NULL && strstr(agt_result_json(r), "\"errors\":[") != NULL,
            "structured errors attached");
    agt_result_free(r);

    T_EQ_INT(echo_calls, 0, "the provider never ran for a bad call");

    r = NULL;
    T_EQ_INT(agt_session_dispatch(s, NULL, "echo", NULL, &r), AGT_OK, "NULL args means {}");
    T_EQ_INT(agt_result_status(r), AGT_EINVALID, "{} misses the required text");
    T_EQ_STR(agt_result_call_id(r), "", "NULL call id reads as empty");
    agt_result_free(r);

    r = (agt_result *)1;
    T_EQ_INT(agt_session_dispatch(s, "x", NULL, "{}", &r), AGT_EINVAL, "NULL tool: EINVAL");
    T_EQ_STR(agt_error_message(),
             "agt_session_dispatch: tool is NULL (pass the tool name the model called)",
             "the message names the NULL argument");
    T_CHECK(r == NULL, "out cleared on EINVAL");
    T_EQ_INT(agt_session_dispatch(NULL, "x", "echo", "{}", &r), AGT_EINVAL, "NULL session");
    T_EQ_STR(agt_error_message(), "agt_session_dispatch: the session is NULL",
             "the message names the session");
    T_EQ_INT(agt_session_dispatch(s, "x", "echo", "{}", NULL), AGT_EINVAL, "NULL out");
    T_EQ_STR(agt_error_message(), "agt_session_dispatch: out is NULL", "the message names out");
    agt_session *s2 = (agt_session *)1;
    T_EQ_INT(agt_session_new(&s2, NULL, "."), AGT_EINVAL, "session without a registry");
    T_EQ_STR(agt_error_message(),
             "agt_session_new: reg is NULL (pass the registry the session offers)",
             "the message names the registry");
    T_EQ_INT(agt_session_new(&s2, agt_session_registry(s), NULL), AGT_EINVAL,
             "session without a root");
    T_EQ_STR(agt_error_message(),
             "agt_session_new: workspace_root is NULL (pass the folder the tools work in)",
             "the message names the root");

    agt_session_free(s);
    agt_registry_free(reg);
}

static void test_provider_failures(void)
{
    const char *modes[] = {"fail", "error-text", "bad-utf8", "take", "take-bad"};
    agt_result *r;
    for (int i = 0; i < 5; i++) {
        agt_registry *reg = make_registry((void *)modes[i]);
        agt_session *s = NULL;
        agt_session_new(&s, reg, ".");
        r = call(s, "echo", "{\"text\":\"x\"}");
        if (i == 0) {
            T_EQ_INT(agt_result_status(r), AGT_EIO, "provider failure code kept");
            T_CHECK(strncmp(agt_result_text(r), "echo failed: ", 13) == 0,
                    "provider failure message: %s", agt_result_text(r));
        } else if (i == 1) {
            T_EQ_INT(agt_result_is_error(r), 1, "error text makes an error result");
            T_EQ_INT(agt_result_status(r), AGT_ERROR, "error result status");
            T_EQ_STR(agt_result_text(r), "the echo chamber is closed", "error text kept");
        } else if (i == 2) {
            T_EQ_STR(agt_result_text(r),
                     "a\xEF\xBF\xBD"
                     "b",
                     "invalid UTF-8 replaced");
        } else if (i == 3) {
            T_EQ_STR(agt_result_text(r), "taken text", "a taken buffer replaces the text");
            T_EQ_INT(agt_result_is_error(r), 0, "a taken text is no error");
        } else {
            T_EQ_STR(agt_result_text(r),
                     "c\xEF\xBF\xBD"
                     "d",
                     "a taken buffer with invalid UTF-8: replaced");
        }
        agt_result_free(r);
        agt_session_free(s);
        agt_registry_free(reg);
    }
}

static void test_phases(void)
{
    agt_registry *reg = make_registry(NULL);
    agt_session *s = NULL;
    agt_session_new(&s, reg, ".");
    T_EQ_INT(agt_session_set_phase(s, AGT_PHASE_PLAN), AGT_OK, "set plan phase");
    agt_result *r = call(s, "echo", "{\"text\":\"x\"}");
    T_EQ_INT(agt_result_status(r), AGT_ENOTFOUND, "main-only tool not available in plan phase");
    T_EQ_STR(agt_result_text(r),
             "Tool 'echo' is not available here. Call one of the available tools instead: "
             "(none).",
             "plan phase lists no tools");
    agt_result_free(r);
    T_EQ_INT(agt_session_set_phase(s, 9), AGT_EINVAL, "unknown phase refused");
    T_EQ_INT(agt_session_set_mode(s, 42), AGT_EINVAL, "unknown mode refused");
    T_EQ_INT(agt_session_set_mode(s, AGT_MODE_YOLO), AGT_OK, "mode set");
    T_EQ_INT(agt_session_mode(s), AGT_MODE_YOLO, "mode read back");
    agt_session_free(s);
    agt_registry_free(reg);
}

static void test_session_root(void)
{
    agt_registry *reg = make_registry(NULL);
    agt_session *s = (agt_session *)1;
    T_EQ_INT(agt_session_new(&s, reg, "/nonexistent/dir/x"), AGT_ENOTFOUND, "missing root");
    T_CHECK(strstr(agt_error_message(), "/nonexistent/dir/x") != NULL, "message names the root: %s",
            agt_error_message());
    T_EQ_INT(agt_session_new(&s, reg, "/etc/hostname"), AGT_ENOTFOUND, "file as root refused");
    T_EQ_INT(agt_session_new(&s, reg, "/usr/../usr/include"), AGT_OK, "root normalised");
    T_EQ_STR(agt_session_root(s), "/usr/include", "root resolved to its real path");
    agt_session_free(s);
    agt_registry_free(reg);
}

static void test_todolist(void)
{
    agt_registry *reg = NULL;
    agt_registry_new(&reg);
    T_EQ_INT(agt_registry_load_builtin(reg, "chat"), AGT_OK, "chat set loads");
    agt_session *s = NULL;
    agt_session_new(&s, reg, ".");

    agt_result *r = call(s, "TodoList", "{}");
    T_EQ_STR(agt_result_text(r), "The todo list is empty.", "empty list");
    agt_result_free(r);

    r = call(s, "TodoList",
             "{\"todos\":[{\"title\":\"Read the parser\",\"status\":\"done\"},"
             "{\"title\":\"Fix the bug\",\"status\":\"in_progress\"},"
             "{\"title\":\"Add a test\",\"status\":\"pending\"}]}");
    T_EQ_STR(agt_result_text(r),
             "Todo list updated: 3 items (1 done, 1 in progress, 1 pending).\n"
             "1. [x] Read the parser\n2. [>] Fix the bug\n3. [ ] Add a test",
             "list replaced and rendered");
    T_EQ_INT(agt_result_is_error(r), 0, "update is not an error");
    agt_result_free(r);

    char *json = NULL;
    agt_session_todos(s, &json);
    T_EQ_STR(json,
             "[{\"title\":\"Read the parser\",\"status\":\"done\"},{\"title\":\"Fix the bug\","
             "\"status\":\"in_progress\"},{\"title\":\"Add a test\",\"status\":\"pending\"}]",
             "session holds the list");
    agt_free(json);

    r = call(s, "TodoList", "{\"todos\":[{\"title\":\"x\",\"status\":\"finished\"}]}");
    T_EQ_INT(agt_result_status(r), AGT_EINVALID, "unknown status refused by the schema");
    T_CHECK(strstr(agt_result_text(r), "/todos/0/status") != NULL,
            "violation points at /todos/0/status: %s", agt_result_text(r));
    agt_result_free(r);

    r = call(s, "TodoList", "{\"todos\":[{\"title\":\"   \",\"status\":\"pending\"}]}");
    T_EQ_INT(agt_result_is_error(r), 1, "blank title refused");
    agt_result_free(r);

    r = call(s, "TodoList", "{}");
    T_CHECK(strncmp(agt_result_text(r), "Todo list: 3 items", 18) == 0,
            "failed updates left the list alone: %s", agt_result_text(r));
    agt_result_free(r);

    r = call(s, "TodoList", "{\"todos\":[]}");
    T_EQ_STR(agt_result_text(r), "The todo list was cleared.", "[] clears");
    agt_result_free(r);

    agt_session_free(s);
    agt_registry_free(reg);
}

/* n bytes drawn from the first k bytes of `from` (a fixed sequence per
 * seed). */
static void garbage(char *buf, size_t n, unsigned *seed, const char *from, size_t k)
{
    for (size_t i = 0; i < n; i++) {
        *seed = *seed * 1103515245u + 12345u;
        buf[i] = from[(*seed >> 16) % k];
    }
}

/* Arbitrary bytes as arguments never crash and always give a result. */
static void test_garbage(void)
{
    agt_registry *reg = make_registry(NULL);
    agt_session *s = NULL;
    agt_session_new(&s, reg, ".");
    unsigned seed = 12345;
    int results = 0;
    for (int i = 0; i < 2000; i++) {
        char buf[64];
        size_t n = (size_t)(i % 63);
        garbage(buf, n, &seed, "{}[]\":,01 tex\\u\xff\xc3", 18); /* and its NUL */
        buf[n] = '\0';
        agt_result *r = NULL;
        if (agt_session_dispatch(s, "g", "echo", buf, &r) == AGT_OK && r != NULL)
            results++;
        agt_result_free(r);
    }
    T_EQ_INT(results, 2000, "2000 garbage argument strings each got a result");
    agt_session_free(s);
    agt_registry_free(reg);
}

/* One frozen registry shared by sessions on four threads. */
typedef struct {
    agt_registry *reg;
    int good;
} thread_arg;

static void *thread_main(void *p)
{
    thread_arg *a = p;
    agt_session *s = NULL;
    if (agt_session_new(&s, a->reg, ".") != AGT_OK)
        return NULL;
    for (int i = 0; i < 500; i++) {
        agt_result *r = NULL;
        const char *args = (i % 2) ? "{\"text\":\"hello\",\"times\":2}" : "{\"times\":9}";
        if (agt_session_dispatch(s, "t", "echo", args, &r) == AGT_OK &&
            agt_result_is_error(r) == (i % 2 == 0))
            a->good++;
        agt_result_free(r);
    }
    agt_session_free(s);
    return NULL;
}

static void test_threads(void)
{
    agt_registry *reg = make_registry(NULL);
    agt_registry_freeze(reg);
    pthread_t th[4];
    thread_arg args[4];
    for (int i = 0; i < 4; i++) {
        args[i] = (thread_arg){reg, 0};
        pthread_create(&th[i], NULL, thread_main, &args[i]);
    }
    int total = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        total += args[i].good;
    }
    T_EQ_INT(total, 2000, "4 threads x 500 calls on one frozen registry, all answered right");
    agt_registry_free(reg);
}

/* Export and built-in providers on one frozen registry from four threads:
 * nothing in export or dispatch may write to the shared entries (a jansson
 * reference count is a write). Run under -Db_sanitize=thread as well. */
typedef struct {
    agt_registry *reg;
    const char *want_native, *want_openai;
    int good;
} export_arg;

static void *export_thread(void *p)
{
    export_arg *a = p;
    agt_session *s = NULL;
    if (agt_session_new(&s, a->reg, ".") != AGT_OK)
        return NULL;
    for (int i = 0; i < 100; i++) {
        char *nat = NULL, *oai = NULL;
        agt_registry_export(a->reg, "native", AGT_PHASE_ALL, &nat);
        agt_registry_export(a->reg, "openai", AGT_PHASE_ALL, &oai);
        agt_result *r = NULL;
        agt_session_dispatch(s, "t", "TodoList",
                             "{\"todos\":[{\"title\":\"a\",\"status\":\"done\"}]}", &r);
        agt_result *r2 = NULL;
        agt_session_dispatch(s, "u", "nope", "{}", &r2);
        a->good += nat != NULL && strcmp(nat, a->want_native) == 0 && oai != NULL &&
                   strcmp(oai, a->want_openai) == 0 && r != NULL &&
                   strcmp(agt_result_text(r), "Todo list updated: 1 item (1 done, 0 in progress, "
                                              "0 pending).\n1. [x] a") == 0 &&
                   agt_result_status(r2) == AGT_ENOTFOUND;
        agt_free(nat);
        agt_free(oai);
        agt_result_free(r);
        agt_result_free(r2);
    }
    agt_session_free(s);
    return NULL;
}

static void test_threads_export(void)
{
    agt_registry *reg = make_registry(NULL);
    agt_registry_load_builtin(reg, "chat");
    agt_registry_freeze(reg);
    char *nat = NULL, *oai = NULL;
    T_EQ_INT(agt_registry_export(reg, "native", AGT_PHASE_ALL, &nat), AGT_OK, "native export");
    T_EQ_INT(agt_registry_export(reg, "openai", AGT_PHASE_ALL, &oai), AGT_OK, "openai export");
    pthread_t th[4];
    export_arg args[4];
    for (int i = 0; i < 4; i++) {
        args[i] = (export_arg){reg, nat, oai, 0};
        pthread_create(&th[i], NULL, export_thread, &args[i]);
    }
    int total = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        total += args[i].good;
    }
    T_EQ_INT(total, 400, "4 threads x 100 exports and built-in calls, all the same");
    agt_free(nat);
    agt_free(oai);
    agt_registry_free(reg);
}

/* common.h: agt_error_code()/agt_error_message() describe the last failure.
 * A dispatch that parks a call returned AGT_EPENDING while the last error
 * still named an earlier, unrelated failure. */
static void test_pending_error_state(void)
{
    agt_registry *reg = NULL;
    agt_session *s = NULL;
    agt_result *r = NULL;
    agt_registry_new(&reg);
    agt_registry_load_builtin(reg, "chat");
    agt_session_new(&s, reg, ".");
    T_EQ_INT(agt_session_dispatch(NULL, "x", "Read", "{}", &r), AGT_EINVAL,
             "an earlier failure (NULL session)");
    T_EQ_INT(agt_error_code(), AGT_EINVAL, "... is the last error");
    T_EQ_INT(agt_session_dispatch(s, "w1", "Write", "{\"path\":\"x.txt\",\"content\":\"x\"}", &r),
             AGT_EPENDING, "a Write in manual mode waits for approval");
    T_CHECK(r == NULL, "no result while it waits");
    T_EQ_INT(agt_error_code(), AGT_EPENDING,
             "the last error is now the wait, not the stale EINVAL");
    T_EQ_STR(agt_error_message(),
             "the Write call w1 waits for the user's approval (agt_session_pending)",
             "and its message names the call");
    agt_session_free(s);
    agt_registry_free(reg);
}

/* agti_schema_parse_json (what dispatch reads the arguments with) against jansson (agti_json_parse,
 * what dispatch used before): the same value, types, member order and repeated keys, or the same
 * error message, for hand-picked texts around every place the two readers could part (escapes,
 * UTF-8, numbers at and past 64 bits and a double's range, NUL in a key and in a string, depth,
 * trailing bytes) and for garbage made of JSON's characters. */
static int read_same(const char *text, size_t len)
{
    json_t *want = agti_json_parse(text, len, "arguments");
    char *want_msg = want == NULL ? strdup(agt_error_message()) : NULL;
    json_t *got = agti_schema_parse_json(text, len, "arguments");
    int same;
    if (want == NULL || got == NULL) {
        same = want == NULL && got == NULL && strcmp(agt_error_message(), want_msg) == 0;
    } else {
        char *a = agti_json_dump(want), *b = agti_json_dump(got);
        /* the dump keeps member order and writes a real with a fraction */
        same = a != NULL && b != NULL && strcmp(a, b) == 0 && json_equal(want, got);
        free(a);
        free(b);
    }
    free(want_msg);
    json_decref(want);
    json_decref(got);
    return same;
}

static void test_args_read(void)
{
    static const char *const texts[] = {
        "{}",
        " {\"command\":\"ls -la\"} ",
        "{\"a\":1,\"b\":2,\"a\":3}",
        "{\"b\":[1,2.5,-0.0,1e3,true,false,null,\"x\"],\"a\":{}}",
        "{\"command\":\"echo \\\"a\\\\nb\\\" \\u00e9 \\ud83d\\ude00 \\/ \\t\"}",
        "{\"s\":\"\\u0000x\"}",
        "{\"k\\u0000\":1}",
        "{\"n\":9223372036854775807}",
        "{\"n\":-9223372036854775808}",
        "{\"n\":9223372036854775808}",
        "{\"n\":123456789012345678901234567890}",
        "{\"n\":10000000000000000000}",
        "{\"n\":-90000000000000000000}",
        "{\"n\":1e400}",
        "{\"n\":-1e400}",
        "{\"n\":1e-400}",
        "{\"a\":1e3109,\"a\":2}",
        "{\"a\":{\"k\\u0000\":1},\"a\":2}",
        "{\"a\":10000000000000000000,\"a\":2}",
        "{\"a\":[-1E400],\"a\":2}",
        "{\"a\":\"1e999 \\\\\",\"b\":12345678901234567890}",
        "{\"a\":\"\\\"1e999\",\"b\":0}",
        "{\"n\":0.1234567890123456789}",
        "{\"n\":01}",
        "{\"n\":1.}",
        "{\"n\":-}",
        "{\"s\":\"\xff\"}",
        "{\"s\":\"\xc3\xa9\"}",
        "{\"s\":\"\xed\xa0\x80\"}",
        "{\"s\":\"\\ud800\"}",
        "{\"s\":\"a\tb\"}",
        "{\"a\":1,}",
        "{\"a\":1} x",
        "[1,2]",
        "\"x\"",
        "12",
        "",
        "{",
        "{\"a\":\"unterminated}",
        "{\"a\" 1}",
        "{'a':1}",
        "{\"a\":nul}",
        "\xef\xbb\xbf{}"};
    int same = 0;
    size_t n = sizeof texts / sizeof texts[0];
    for (size_t i = 0; i < n; i++) {
        int ok = read_same(texts[i], strlen(texts[i]));
        if (!ok)
            T_CHECK(0, "agti_schema_parse_json and jansson differ on %s", texts[i]);
        same += ok;
    }
    /* a NUL byte inside the text, and nesting at and past jansson's 2048 */
    same += read_same("{\"a\":1}\0", 8);
    same += read_same("[0\0]", 4);
    for (size_t depth = 2047; depth <= 2049; depth++) {
        char *t = malloc(2 * depth + 1);
        memset(t, '[', depth);
        memset(t + depth, ']', depth);
        t[2 * depth] = '\0';
        same += read_same(t, 2 * depth);
        free(t);
    }
    T_EQ_INT(same, (int)n + 5, "agti_schema_parse_json gives jansson's value or error on %zu texts",
             n + 5);
    static const char from[] = "{}[]\":,019e.- ta\\u\xff\xc3\xa9n";
    unsigned seed = 777;
    int agree = 0;
    char buf[48];
    for (int i = 0; i < 3000; i++) {
        garbage(buf, (size_t)(i % 47), &seed, from, sizeof from - 1);
        agree += read_same(buf, (size_t)(i % 47));
    }
    T_EQ_INT(agree, 3000, "and on 3000 texts of JSON's characters");
}

int main(void)
{
    test_success();
    test_bad_calls();
    test_provider_failures();
    test_phases();
    test_session_root();
    test_todolist();
    test_garbage();
    test_args_read();
    test_threads();
    test_threads_export();
    test_pending_error_state();
    return t_done();
}
