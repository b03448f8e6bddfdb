/*
 * agt-mcp: serves the tool registry as a Model Context Protocol server over
 * stdio (JSON-RPC 2.0, one message per line; see docs/mcp.md).
 *
 * The library is used through its public headers only. JSON-RPC messages are
 * read and written with jansson, linked directly by this program: it is a
 * separate executable, and jansson is a Debian-packaged library the build
 * already requires, so the example does not grow a JSON parser of its own.
 * No jansson type crosses into libagenttools: tool arguments and results go
 * through the library as JSON text.
 *
 * A call the session would ask about is put to the user through the
 * client's elicitation (elicitation/create) when the client supports it;
 * otherwise it is refused with a result that names the rule to pass
 * (--allow), unless the server runs with --yolo. Without --root, the
 * workspace is the client's first file:// root (roots/list), else the
 * current directory. Tools that cannot work over MCP are not offered.
 */
#include <agenttools/agenttools.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli_sandbox.h"

#define RPC_PARSE_ERROR -32700
#define RPC_INVALID_REQUEST -32600
#define RPC_METHOD_NOT_FOUND -32601
#define RPC_INVALID_PARAMS -32602
#define RPC_INTERNAL_ERROR -32603

/* Newest first: the answer when the client asks for a version we lack. */
static const char *const protocol_versions[] = {"2025-06-18", "2025-03-26", "2024-11-05"};

/* A tools/call waiting for the user's answer to our elicitation/create. */
struct deferred_call {
    json_int_t elicit_id; /* id of our elicitation/create request */
    json_t *client_id;    /* id of the client's tools/call */
    char call_id[64];
    char tool[128];
};

struct server {
    agt_registry *reg;
    agt_session *session;
    json_t *tools;            /* the tools/list result, built once */
    unsigned long long calls; /* call id counter */
    int yolo;
    /* the workspace */
    const char *root_opt; /* --root, or NULL */
    char root[PATH_MAX];  /* the session's root as given to it */
    int argc;             /* the command line, for the rules of a new session */
    char **argv;
    /* what the client offers (initialize params.capabilities) */
    int client_roots, client_elicitation;
    json_int_t next_id;     /* ids of our requests to the client */
    json_int_t roots_id;    /* the roots/list request we wait for, or 0 */
    int64_t roots_deadline; /* monotonic ms: stop waiting for the roots then */
    json_t *held;           /* tools/call requests held until the roots are known */
    struct deferred_call *deferred;
    size_t n_deferred;
    cli_sandbox sbo; /* --sandbox, --network, --add-dir: applied to every session made */
};

/* Tools left out of the MCP server: an MCP client cannot receive what they
 * produce. Cron fires are session events (agt_session_tick) that agt-chat
 * turns into model turns; MCP has no way to start a turn of the client's
 * model, so a CronCreate would succeed and never fire. Plan mode restricts
 * this server's session, but ExitPlanMode asks even in --yolo and the client
 * drives its own plan; offering them would only strand a session in plan
 * mode. */
static const char *const mcp_left_out[] = {"CronCreate", "CronList", "CronDelete", "EnterPlanMode",
                                           "ExitPlanMode"};

static int left_out(const char *tool)
{
    for (size_t i = 0; i < sizeof mcp_left_out / sizeof *mcp_left_out; i++)
        if (strcmp(tool, mcp_left_out[i]) == 0)
            return 1;
    return 0;
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* How long a client that declared roots gets to answer roots/list. */
#define ROOTS_WAIT_MS 10000

static void usage(FILE *f)
{
    fputs(
        "usage: agt-mcp [options]\n"
        "Serves libagenttools' tools to an MCP client over stdin/stdout.\n"
        "\n"
        "options:\n"
        "  --root DIR     workspace root (default: the client's first file:// root,\n"
        "                 else the current directory)\n"
        "  --set NAME     built-in tool set: chat (default) or review\n"
        "  --tools FILE   replace the catalogue with a tools.json file\n"
        "  --allow RULE   permission rule, e.g. 'Edit(src/**)' or 'Bash(git log *)'; repeatable\n"
        "  --ask RULE     a rule that asks (through the client's elicitation; without it:\n"
        "                 refuses); repeatable\n"
        "  --deny RULE    a rule that refuses; repeatable\n"
        "  --sensitive PATTERN\n"
        "                 another sensitive file the tools never show, e.g. '*.secret';\n"
        "                 '!PATTERN' admits files (docs/sensitive-files.md); repeatable\n"
        "  --not-sensitive PATTERN\n"
        "                 remove a built-in sensitive-file pattern, e.g. '*.pem'; repeatable\n"
        "  --yolo         run calls that would need approval (deny rules still apply)\n"
        "  --version      print the program name and the library version, exit\n" CLI_SANDBOX_USAGE,
        f);
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap);
    while (buf != NULL) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
        if (n == cap) {
            char *nb = realloc(buf, cap * 2);
            if (nb == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    fclose(f);
    *len = n;
    return buf;
}

/* Set when stdout is gone (the client closed its end): the server stops. */
static int output_failed;

static void send_message(json_t *msg)
{
    char *text = json_dumps(msg, JSON_COMPACT | JSON_ENSURE_ASCII);
    if (text != NULL) {
        fputs(text, stdout);
        fputc('\n', stdout);
        if (fflush(stdout) != 0 || ferror(stdout))
            output_failed = 1;
        free(text);
    }
    json_decref(msg);
}

static json_t *rpc_error(json_t *id, int code, const char *message)
{
    return json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", id ? id : json_null(),
                     "error", "code", code, "message", message);
}

static json_t *rpc_result(json_t *id, json_t *result)
{
    return json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result", result);
}

static json_t *text_result(const char *text, int is_error)
{
    return json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text", text, "isError",
                     is_error);
}

static void log_root(const struct server *sv, const char *source)
{
    fprintf(stderr, "agt-mcp: workspace root: %s (%s)\n", sv->root, source);
}

static json_t *do_initialize(struct server *sv, json_t *params)
{
    json_t *caps = json_object_get(params, "capabilities");
    sv->client_roots = json_is_object(json_object_get(caps, "roots"));
    sv->client_elicitation = json_is_object(json_object_get(caps, "elicitation"));
    if (sv->root_opt == NULL && !sv->client_roots)
        log_root(sv, "the current directory: no --root, and the client offers no roots");
    const char *want = NULL;
    const char *answer = protocol_versions[0];
    json_t *v = json_object_get(params, "protocolVersion");
    if (json_is_string(v))
        want = json_string_value(v);
    for (size_t i = 0; want != NULL && i < sizeof protocol_versions / sizeof *protocol_versions;
         i++) {
        if (strcmp(want, protocol_versions[i]) == 0)
            answer = protocol_versions[i];
    }
    return json_pack("{s:s, s:{s:{s:b}}, s:{s:s, s:s}, s:s}", "protocolVersion", answer,
                     "capabilities", "tools", "listChanged", 0, "serverInfo", "name", "agt-mcp",
                     "version", agt_version(), "instructions",
                     "Tools of libagenttools (file, search, shell, task and todo tools). Paths "
                     "are relative to the server's workspace root.");
}

/* The pending entry of one call id, as a new reference (or NULL). */
static json_t *pending_entry(struct server *sv, const char *call_id)
{
    char *text = NULL;
    json_t *found = NULL;
    if (agt_session_pending(sv->session, &text) != AGT_OK)
        return NULL;
    json_t *list = json_loads(text, 0, NULL);
    agt_free(text);
    size_t i;
    json_t *item;
    json_array_foreach(list, i, item)
    {
        if (json_is_string(json_object_get(item, "call_id")) &&
            strcmp(json_string_value(json_object_get(item, "call_id")), call_id) == 0) {
            found = json_incref(item);
            break;
        }
    }
    json_decref(list);
    return found;
}

/* A call that waits for approval: drop it and tell the model what to do. */
static json_t *refuse_pending(struct server *sv, const char *tool, const char *call_id)
{
    json_t *entry = pending_entry(sv, call_id);
    const char *reason = entry ? json_string_value(json_object_get(entry, "reason")) : NULL;
    const char *rule = entry ? json_string_value(json_object_get(entry, "suggested_rule")) : NULL;
    agt_result *r = NULL;
    if (agt_session_answer(sv->session, call_id, AGT_DECISION_REJECT, NULL, &r) == AGT_OK)
        agt_result_free(r);
    char buf[2048];
    if (rule != NULL)
        snprintf(buf, sizeof buf,
                 "This %s call needs the user's approval (%s), and agt-mcp has no way to ask "
                 "for it, so it was not run. The user can allow such calls by starting agt-mcp "
                 "with --allow '%s' (or --yolo).",
                 tool, reason ? reason : "the session asks before it runs", rule);
    else
        snprintf(buf, sizeof buf,
                 "This %s call needs the user's approval (%s), and agt-mcp has no way to ask "
                 "for it, so it was not run.",
                 tool, reason ? reason : "the session asks before it runs");
    json_decref(entry);
    return text_result(buf, 1);
}

/* --- approval through the client's elicitation ------------------------- */

/* Asks the user about a pending call with elicitation/create; the call's
 * answer waits in sv->deferred. 0, or -1 (the caller refuses the call). */
static int start_elicitation(struct server *sv, json_t *id, const char *tool, const char *call_id)
{
    json_t *entry = pending_entry(sv, call_id);
    if (entry == NULL)
        return -1;
    struct deferred_call *d = realloc(sv->deferred, (sv->n_deferred + 1) * sizeof *d);
    if (d == NULL) {
        json_decref(entry);
        return -1;
    }
    sv->deferred = d;
    const char *reason = json_string_value(json_object_get(entry, "reason"));
    const char *rule = json_string_value(json_object_get(entry, "suggested_rule"));
    char *args = json_dumps(json_object_get(entry, "arguments"), JSON_COMPACT | JSON_SORT_KEYS);
    size_t mlen = (args != NULL ? strlen(args) : 0) + 1024;
    char *message = malloc(mlen);
    char session_label[600];
    if (message == NULL) {
        free(args);
        json_decref(entry);
        return -1;
    }
    /* long arguments (a Write's content) are cut in the question; the whole
       call runs when approved */
    snprintf(message, mlen, "agt-mcp: run %s? %s.\n\nArguments: %.2000s%s", tool,
             reason != NULL ? reason : "The session asks before it runs this call",
             args != NULL ? args : "{}", args != NULL && strlen(args) > 2000 ? " ..." : "");
    free(args);
    json_t *choices = json_pack("[s]", "allow");
    json_t *labels = json_pack("[s]", "Allow once");
    if (rule != NULL) {
        snprintf(session_label, sizeof session_label, "Allow for this session: %.500s", rule);
        json_array_append_new(choices, json_string("allow_session"));
        json_array_append_new(labels, json_string(session_label));
    }
    json_array_append_new(choices, json_string("reject"));
    json_array_append_new(labels, json_string("Reject"));
    json_int_t eid = ++sv->next_id;
    json_t *req = json_pack(
        "{s:s, s:I, s:s, s:{s:s, s:{s:s, s:{s:{s:s, s:s, s:o, s:o}, s:{s:s, s:s, s:s}}, s:[s]}}}",
        "jsonrpc", "2.0", "id", eid, "method", "elicitation/create", "params", "message", message,
        "requestedSchema", "type", "object", "properties", "decision", "type", "string", "title",
        "Decision", "enum", choices, "enumNames", labels, "reason", "type", "string", "title",
        "Reason", "description", "Optional: why (given to the model when you reject)", "required",
        "decision");
    free(message);
    json_decref(entry);
    if (req == NULL)
        return -1;
    d = &sv->deferred[sv->n_deferred++];
    memset(d, 0, sizeof *d);
    d->elicit_id = eid;
    d->client_id = json_incref(id);
    snprintf(d->call_id, sizeof d->call_id, "%s", call_id);
    snprintf(d->tool, sizeof d->tool, "%s", tool);
    send_message(req);
    return 0;
}

/* The user's answer (or the client's error) to an elicitation: runs or
 * rejects the call and answers the client's tools/call. */
static void finish_elicitation(struct server *sv, size_t k, json_t *msg)
{
    struct deferred_call d = sv->deferred[k];
    memmove(&sv->deferred[k], &sv->deferred[k + 1], (sv->n_deferred - k - 1) * sizeof d);
    sv->n_deferred--;
    json_t *result = json_object_get(msg, "result");
    const char *action = json_string_value(json_object_get(result, "action"));
    json_t *content = json_object_get(result, "content");
    const char *choice = json_string_value(json_object_get(content, "decision"));
    const char *why = json_string_value(json_object_get(content, "reason"));
    json_t *answer = NULL;
    if (action == NULL) {
        /* an error, or no answer we understand: the user was not asked */
        answer = refuse_pending(sv, d.tool, d.call_id);
    } else {
        int decision = AGT_DECISION_REJECT;
        const char *reason = why;
        if (strcmp(action, "accept") == 0 && choice != NULL && strcmp(choice, "allow") == 0)
            decision = AGT_DECISION_APPROVE;
        else if (strcmp(action, "accept") == 0 && choice != NULL &&
                 strcmp(choice, "allow_session") == 0)
            decision = AGT_DECISION_APPROVE_SESSION;
        else if (strcmp(action, "decline") == 0)
            reason = "declined in the MCP client";
        else if (strcmp(action, "cancel") == 0)
            reason = "dismissed the approval request";
        else if (strcmp(action, "accept") != 0 || choice == NULL || strcmp(choice, "reject") != 0)
            reason = "the approval form came back without a known decision";
        agt_result *r = NULL;
        if (agt_session_answer(sv->session, d.call_id, decision,
                               reason != NULL && reason[0] != '\0' ? reason : NULL, &r) == AGT_OK) {
            answer = text_result(agt_result_text(r), agt_result_is_error(r));
            agt_result_free(r);
        } else {
            char buf[512];
            snprintf(buf, sizeof buf, "agt-mcp could not finish the %s call: %s", d.tool,
                     agt_error_message());
            answer = text_result(buf, 1);
        }
    }
    send_message(answer != NULL ? rpc_result(d.client_id, answer)
                                : rpc_error(d.client_id, RPC_INTERNAL_ERROR, "out of memory"));
    json_decref(d.client_id);
}

/* Calls still waiting for an answer when their session goes away. */
static void drop_deferred(struct server *sv, const char *why)
{
    for (size_t k = 0; k < sv->n_deferred; k++) {
        struct deferred_call *d = &sv->deferred[k];
        char buf[512];
        snprintf(buf, sizeof buf, "This %s call was not run: %s.", d->tool, why);
        send_message(rpc_result(d->client_id, text_result(buf, 1)));
        json_decref(d->client_id);
    }
    sv->n_deferred = 0;
}

/* --- the workspace from the client's roots ------------------------------ */

static int hexval(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* The local path of a file:// URI (RFC 8089: empty host or "localhost"),
 * percent-decoded; -1 for anything else. */
static int file_uri_path(const char *uri, char *out, size_t len)
{
    if (strncmp(uri, "file://", 7) != 0)
        return -1;
    const char *p = uri + 7;
    if (strncmp(p, "localhost/", 10) == 0)
        p += 9;
    if (*p != '/')
        return -1;
    size_t n = 0;
    for (; *p != '\0' && *p != '?' && *p != '#'; p++) {
        int c = (unsigned char)*p;
        if (c == '%') {
            int hi = hexval(p[1]), lo = hi >= 0 ? hexval(p[2]) : -1;
            if (lo < 0)
                return -1;
            c = hi * 16 + lo;
            p += 2;
            if (c == 0)
                return -1;
        }
        if (n + 1 >= len)
            return -1;
        out[n++] = (char)c;
    }
    out[n] = '\0';
    return 0;
}

static int make_session(struct server *sv, const char *root, agt_session **out);

static void send_roots_request(struct server *sv)
{
    sv->roots_id = ++sv->next_id;
    sv->roots_deadline = mono_ms() + ROOTS_WAIT_MS;
    send_message(
        json_pack("{s:s, s:I, s:s}", "jsonrpc", "2.0", "id", sv->roots_id, "method", "roots/list"));
}

static json_t *handle(struct server *sv, json_t *msg);

/* Runs the tools/call requests held while the roots were asked for. */
static void release_held(struct server *sv)
{
    json_t *held = sv->held;
    sv->held = NULL;
    size_t i;
    json_t *m;
    json_array_foreach(held, i, m)
    {
        json_t *resp = handle(sv, m);
        if (resp != NULL)
            send_message(resp);
    }
    json_decref(held);
}

/* The answer to roots/list (msg NULL: the client did not answer in time). */
static void apply_roots(struct server *sv, json_t *msg)
{
    sv->roots_id = 0;
    json_t *roots = json_object_get(json_object_get(msg, "result"), "roots");
    char path[PATH_MAX], why[PATH_MAX + 128];
    const char *uri = NULL;
    size_t i;
    json_t *r;
    json_array_foreach(roots, i, r)
    {
        const char *u = json_string_value(json_object_get(r, "uri"));
        struct stat st;
        if (u != NULL && file_uri_path(u, path, sizeof path) == 0 && stat(path, &st) == 0 &&
            S_ISDIR(st.st_mode)) {
            uri = u;
            break;
        }
    }
    if (uri == NULL) {
        log_root(sv, msg == NULL ? "the current directory: the client did not answer roots/list"
                     : json_object_get(msg, "error") != NULL
                         ? "the current directory: the client answered roots/list with an error"
                         : "the current directory: none of the client's roots is a local folder");
    } else if (strcmp(path, sv->root) != 0) {
        agt_session *s = NULL;
        if (make_session(sv, path, &s) != 0) {
            snprintf(why, sizeof why, "the current directory: the client's root %s failed: %s", uri,
                     agt_error_message());
            log_root(sv, why);
        } else {
            drop_deferred(sv, "the workspace moved to the client's new root first");
            agt_session_free(sv->session);
            sv->session = s;
            snprintf(sv->root, sizeof sv->root, "%s", path);
            snprintf(why, sizeof why, "the client's first root, %s", uri);
            log_root(sv, why);
        }
    }
    release_held(sv);
}

/* A response from the client to one of our requests. */
static void handle_response(struct server *sv, json_t *msg)
{
    json_t *id = json_object_get(msg, "id");
    if (!json_is_integer(id))
        return;
    json_int_t n = json_integer_value(id);
    if (sv->roots_id != 0 && n == sv->roots_id) {
        apply_roots(sv, msg);
        return;
    }
    for (size_t k = 0; k < sv->n_deferred; k++)
        if (sv->deferred[k].elicit_id == n) {
            finish_elicitation(sv, k, msg);
            return;
        }
    /* an answer to nothing we wait for: ignored */
}

static void handle_notification(struct server *sv, const char *method)
{
    if (sv->root_opt != NULL || !sv->client_roots)
        return;
    if (strcmp(method, "notifications/initialized") == 0 ||
        strcmp(method, "notifications/roots/list_changed") == 0)
        send_roots_request(sv);
}

static json_t *do_tools_call(struct server *sv, json_t *id, json_t *params)
{
    json_t *name = json_object_get(params, "name");
    json_t *args = json_object_get(params, "arguments");
    if (!json_is_string(name))
        return rpc_error(id, RPC_INVALID_PARAMS, "tools/call needs params.name (a string)");
    if (args != NULL && !json_is_object(args) && !json_is_null(args))
        return rpc_error(id, RPC_INVALID_PARAMS, "tools/call params.arguments must be an object");
    const char *tool = json_string_value(name);
    if (left_out(tool) && agt_registry_is_offered(sv->reg, tool, AGT_PHASE_ALL)) {
        char buf[512];
        snprintf(buf, sizeof buf,
                 "Tool %s is not offered over MCP (an MCP client cannot receive what it "
                 "produces; see docs/mcp.md)",
                 tool);
        return rpc_error(id, RPC_INVALID_PARAMS, buf);
    }
    if (!agt_registry_is_offered(sv->reg, tool, AGT_PHASE_ALL)) {
        char buf[512];
        snprintf(buf, sizeof buf, "Unknown tool: %.400s", tool);
        return rpc_error(id, RPC_INVALID_PARAMS, buf);
    }
    char *args_text = NULL;
    if (json_is_object(args))
        args_text = json_dumps(args, JSON_COMPACT);
    char call_id[64];
    snprintf(call_id, sizeof call_id, "mcp-%llu", ++sv->calls);

    agt_result *r = NULL;
    int rc = agt_session_dispatch(sv->session, call_id, tool, args_text ? args_text : "{}", &r);
    free(args_text);
    json_t *result;
    if (rc == AGT_OK) {
        result = text_result(agt_result_text(r), agt_result_is_error(r));
        agt_result_free(r);
    } else if (rc == AGT_EPENDING) {
        if (sv->client_elicitation && start_elicitation(sv, id, tool, call_id) == 0)
            return NULL; /* answered when the user has decided */
        result = refuse_pending(sv, tool, call_id);
    } else {
        char buf[1024];
        snprintf(buf, sizeof buf, "agt-mcp could not run %s: %s", tool, agt_error_message());
        return rpc_error(id, RPC_INTERNAL_ERROR, buf);
    }
    if (result == NULL)
        return rpc_error(id, RPC_INTERNAL_ERROR, "out of memory");
    return rpc_result(id, result);
}

/* One request or notification; returns the response, or NULL for none. */
static json_t *handle(struct server *sv, json_t *msg)
{
    if (!json_is_object(msg))
        return rpc_error(NULL, RPC_INVALID_REQUEST, "a JSON-RPC message must be an object");
    json_t *id = json_object_get(msg, "id");
    json_t *method = json_object_get(msg, "method");
    json_t *params = json_object_get(msg, "params");
    int has_id = id != NULL;
    if (has_id && !json_is_string(id) && !json_is_integer(id))
        return rpc_error(NULL, RPC_INVALID_REQUEST, "id must be a string or an integer");
    if (!json_is_string(json_object_get(msg, "jsonrpc")) ||
        strcmp(json_string_value(json_object_get(msg, "jsonrpc")), "2.0") != 0)
        return rpc_error(id, RPC_INVALID_REQUEST, "jsonrpc must be \"2.0\"");
    if (method == NULL && (json_object_get(msg, "result") || json_object_get(msg, "error"))) {
        handle_response(sv, msg); /* to roots/list or elicitation/create; others ignored */
        return NULL;
    }
    if (!json_is_string(method))
        return rpc_error(id, RPC_INVALID_REQUEST, "method must be a string");
    if (!has_id) {
        /* Notifications never get an answer. Calls run synchronously, so a
         * notifications/cancelled names a request already answered (or one
         * waiting for an elicitation, which the user still answers). */
        handle_notification(sv, json_string_value(method));
        return NULL;
    }
    if (params != NULL && !json_is_object(params) && !json_is_array(params))
        return rpc_error(id, RPC_INVALID_REQUEST, "params must be an object or an array");
    const char *m = json_string_value(method);
    if (params != NULL && !json_is_object(params))
        return rpc_error(id, RPC_INVALID_PARAMS, "params must be an object");
    if (strcmp(m, "initialize") == 0) {
        if (!json_is_object(params) || !json_is_string(json_object_get(params, "protocolVersion")))
            return rpc_error(id, RPC_INVALID_PARAMS,
                             "initialize needs params.protocolVersion (a string)");
        return rpc_result(id, do_initialize(sv, params));
    }
    if (strcmp(m, "ping") == 0)
        return rpc_result(id, json_object());
    if (strcmp(m, "tools/list") == 0) {
        json_t *cursor = json_object_get(params, "cursor");
        if (cursor != NULL && !json_is_string(cursor))
            return rpc_error(id, RPC_INVALID_PARAMS, "tools/list params.cursor must be a string");
        return rpc_result(id, json_deep_copy(sv->tools));
    }
    if (strcmp(m, "tools/call") == 0) {
        if (!json_is_object(params))
            return rpc_error(id, RPC_INVALID_PARAMS, "tools/call needs params {name, arguments}");
        if (sv->roots_id != 0) {
            /* the workspace is not known yet: run it once the roots are */
            if (sv->held == NULL)
                sv->held = json_array();
            json_array_append(sv->held, msg);
            return NULL;
        }
        return do_tools_call(sv, id, params);
    }
    char buf[512];
    snprintf(buf, sizeof buf, "Method not found: %.400s", m);
    return rpc_error(id, RPC_METHOD_NOT_FOUND, buf);
}

static void handle_line(struct server *sv, const char *line, size_t len)
{
    size_t i = 0;
    while (i < len && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
        i++;
    if (i == len)
        return;
    json_error_t jerr;
    json_t *msg = json_loadb(line, len, JSON_DECODE_ANY, &jerr);
    if (msg == NULL) {
        char buf[300];
        snprintf(buf, sizeof buf, "Parse error: %s (column %d)", jerr.text, jerr.column);
        send_message(rpc_error(NULL, RPC_PARSE_ERROR, buf));
        return;
    }
    if (json_is_array(msg)) {
        /* A batch (protocol 2025-03-26): answer with an array of responses. */
        if (json_array_size(msg) == 0) {
            /* JSON-RPC 2.0 section 6: an empty array is one invalid request,
             * answered with a single error object, not an array. */
            send_message(rpc_error(NULL, RPC_INVALID_REQUEST, "empty batch"));
            json_decref(msg);
            return;
        }
        json_t *out = json_array();
        size_t k;
        json_t *item;
        json_array_foreach(msg, k, item)
        {
            json_t *resp = handle(sv, item);
            if (resp != NULL)
                json_array_append_new(out, resp);
        }
        if (json_array_size(out) > 0)
            send_message(out);
        else
            json_decref(out);
    } else {
        json_t *resp = handle(sv, msg);
        if (resp != NULL)
            send_message(resp);
    }
    json_decref(msg);
}

/* Reaps background tasks and delivers nothing: an MCP client sees task
 * state through TaskList/TaskOutput. */
static void tick(struct server *sv)
{
    char *events = NULL;
    if (agt_session_tick(sv->session, -1, &events) == AGT_OK)
        agt_free(events);
}

/* A message longer than this (no newline yet) is answered with -32700 and
 * the rest of its line is dropped, rather than buffered until memory runs
 * out and the server dies with it. Large Write contents still fit. */
#define MAX_MESSAGE ((size_t)256 << 20)

static int serve(struct server *sv)
{
    size_t cap = 65536, n = 0;
    bool skipping = false; /* inside a line that went over MAX_MESSAGE */
    char *buf = malloc(cap);
    if (buf == NULL)
        return 1;
    while (!output_failed) {
        struct pollfd fds[65];
        size_t nfds = 1, nsess = 0;
        fds[0].fd = STDIN_FILENO;
        fds[0].events = POLLIN;
        int sfds[64];
        if (agt_session_poll_fds(sv->session, sfds, 64, &nsess) == AGT_OK) {
            for (size_t i = 0; i < nsess && i < 64; i++) {
                fds[nfds].fd = sfds[i];
                fds[nfds].events = POLLIN;
                nfds++;
            }
        }
        int timeout = -1;
        int64_t deadline = -1, now_ms = -1;
        if (agt_session_next_deadline(sv->session, -1, &deadline) == AGT_OK && deadline >= 0) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            now_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
            int64_t wait = deadline - now_ms;
            timeout = wait < 0 ? 0 : (wait > 60000 ? 60000 : (int)wait);
        }
        if (sv->roots_id != 0) {
            int64_t left = sv->roots_deadline - mono_ms();
            if (left <= 0) {
                apply_roots(sv, NULL);
                continue;
            }
            if (timeout < 0 || left < timeout)
                timeout = (int)left;
        }
        int pr = poll(fds, nfds, timeout);
        if (pr < 0 && errno != EINTR) {
            perror("agt-mcp: poll");
            break;
        }
        if (pr == 0 || (pr > 0 && nfds > 1))
            tick(sv);
        if (pr <= 0 || (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) == 0)
            continue;
        if (n >= MAX_MESSAGE) {
            if (!skipping) {
                char msg[120];
                snprintf(msg, sizeof msg,
                         "Parse error: message longer than %zu MiB without a newline; dropped",
                         MAX_MESSAGE >> 20);
                send_message(rpc_error(NULL, RPC_PARSE_ERROR, msg));
            }
            skipping = true;
            n = 0;
        }
        if (n == cap) {
            char *nb = realloc(buf, cap * 2);
            if (nb == NULL) {
                fputs("agt-mcp: out of memory reading a message\n", stderr);
                break;
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t got = read(STDIN_FILENO, buf + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            if (n > 0 && !skipping)
                handle_line(sv, buf, n); /* a last message without its newline */
            break;
        }
        size_t start = 0, end = n + (size_t)got;
        for (size_t i = n; i < end; i++) {
            if (buf[i] == '\n') {
                if (!skipping)
                    handle_line(sv, buf + start, i - start);
                skipping = false;
                start = i + 1;
            }
        }
        memmove(buf, buf + start, end - start);
        n = end - start;
    }
    free(buf);
    return 0;
}

static int setup(struct server *sv, const char *root, const char *set, const char *tools_file)
{
    size_t len = 0;
    char *text = NULL;
    if (agt_registry_new(&sv->reg) != AGT_OK)
        return -1;
    if (agt_registry_load_builtin(sv->reg, set) != AGT_OK) {
        fprintf(stderr, "agt-mcp: --set %s: %s\n", set, agt_error_message());
        return -1;
    }
    if (tools_file != NULL) {
        text = read_file(tools_file, &len);
        if (text == NULL) {
            fprintf(stderr, "agt-mcp: --tools %s: %s\n", tools_file, strerror(errno));
            return -1;
        }
        int rc = agt_registry_load_json(sv->reg, text, len);
        free(text);
        if (rc != AGT_OK) {
            fprintf(stderr, "agt-mcp: --tools %s: %s\n", tools_file, agt_error_message());
            return -1;
        }
    }
    agt_registry_freeze(sv->reg);
    if (make_session(sv, root, &sv->session) != 0)
        return -1;
    if (realpath(root, sv->root) == NULL)
        snprintf(sv->root, sizeof sv->root, "%s", root);
    if (sv->root_opt != NULL)
        log_root(sv, "--root");
    if (agt_registry_export(sv->reg, "mcp", AGT_PHASE_ALL, &text) != AGT_OK) {
        fprintf(stderr, "agt-mcp: exporting the tools: %s\n", agt_error_message());
        return -1;
    }
    sv->tools = json_loads(text, 0, NULL);
    agt_free(text);
    if (sv->tools == NULL)
        return -1;
    json_t *list = json_object_get(sv->tools, "tools");
    for (size_t i = json_array_size(list); i > 0; i--)
        if (left_out(json_string_value(json_object_get(json_array_get(list, i - 1), "name"))))
            json_array_remove(list, i - 1);
    return 0;
}

/* A session on root with the mode and the rules of the command line; 0, or
 * -1 with the reason on stderr (for the startup) and agt_error_message(). */
static int make_session(struct server *sv, const char *root, agt_session **out)
{
    agt_session *s = NULL;
    *out = NULL;
    if (agt_session_new(&s, sv->reg, root) != AGT_OK) {
        fprintf(stderr, "agt-mcp: %s %s: %s\n", sv->root_opt != NULL ? "--root" : "root", root,
                agt_error_message());
        return -1;
    }
    if (sv->yolo)
        agt_session_set_mode(s, AGT_MODE_YOLO);
    char sberr[512];
    if (cli_sandbox_apply(&sv->sbo, s, sberr, sizeof sberr) != AGT_OK) {
        fprintf(stderr, "agt-mcp: %s\n", sberr);
        agt_session_free(s);
        return -1;
    }
    for (int i = 1; i + 1 < sv->argc; i++) {
        char **argv = sv->argv;
        int kind = strcmp(argv[i], "--allow") == 0  ? AGT_RULE_ALLOW
                   : strcmp(argv[i], "--ask") == 0  ? AGT_RULE_ASK
                   : strcmp(argv[i], "--deny") == 0 ? AGT_RULE_DENY
                                                    : -1;
        /* options with a value that are not rules (--sandbox, --network and
           --add-dir belong to the sandbox options of the other examples) */
        if (strcmp(argv[i], "--root") == 0 || strcmp(argv[i], "--set") == 0 ||
            strcmp(argv[i], "--tools") == 0 || strcmp(argv[i], "--sandbox") == 0 ||
            strcmp(argv[i], "--network") == 0 || strcmp(argv[i], "--add-dir") == 0) {
            i++;
            continue;
        }
        if (strcmp(argv[i], "--sensitive") == 0 || strcmp(argv[i], "--not-sensitive") == 0) {
            int rc = argv[i][2] == 's' ? agt_session_add_sensitive_pattern(s, argv[i + 1])
                                       : agt_session_remove_sensitive_pattern(s, argv[i + 1]);
            if (rc != AGT_OK) {
                fprintf(stderr, "agt-mcp: %s %s: %s\n", argv[i], argv[i + 1], agt_error_message());
                agt_session_free(s);
                return -1;
            }
            i++;
            continue;
        }
        if (kind < 0)
            continue;
        if (agt_session_add_rule(s, kind, argv[i + 1]) != AGT_OK) {
            fprintf(stderr, "agt-mcp: %s %s: %s\n", argv[i], argv[i + 1], agt_error_message());
            agt_session_free(s);
            return -1;
        }
        i++;
    }
    *out = s;
    return 0;
}

int main(int argc, char **argv)
{
    struct server sv;
    const char *root = ".", *set = "chat", *tools_file = NULL;
    int status = 1;
    memset(&sv, 0, sizeof sv);
    cli_sandbox_init(&sv.sbo);
    char sberr[512];
    sv.argc = argc;
    sv.argv = argv;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has_value = i + 1 < argc;
        int sr = cli_sandbox_arg(&sv.sbo, argc, argv, &i, sberr, sizeof sberr);
        if (sr < 0) {
            fprintf(stderr, "agt-mcp: %s\n", sberr);
            return 2;
        }
        if (sr > 0)
            continue;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--version") == 0) {
            printf("agt-mcp %s\n", agt_version());
            return 0;
        } else if (strcmp(a, "--yolo") == 0) {
            sv.yolo = 1;
        } else if (has_value && strcmp(a, "--root") == 0) {
            root = sv.root_opt = argv[++i];
        } else if (has_value && strcmp(a, "--set") == 0) {
            set = argv[++i];
        } else if (has_value && strcmp(a, "--tools") == 0) {
            tools_file = argv[++i];
        } else if (has_value && (strcmp(a, "--allow") == 0 || strcmp(a, "--ask") == 0 ||
                                 strcmp(a, "--deny") == 0 || strcmp(a, "--sensitive") == 0 ||
                                 strcmp(a, "--not-sensitive") == 0)) {
            i++; /* rules and patterns are added once the session exists */
        } else {
            fprintf(stderr, "agt-mcp: unknown or incomplete option '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    /* A client that goes away must end the server through a write error,
     * not kill it with SIGPIPE in the middle of a tool call. */
    signal(SIGPIPE, SIG_IGN);
    if (setup(&sv, root, set, tools_file) != 0)
        goto out;
    status = serve(&sv);
out:
    drop_deferred(&sv, "the server is stopping");
    free(sv.deferred);
    json_decref(sv.held);
    json_decref(sv.tools);
    agt_session_free(sv.session);
    agt_registry_free(sv.reg);
    return status;
}
