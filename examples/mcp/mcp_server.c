/*
 * The JSON-RPC side of agt-mcp (see mcp_server.h and agt-mcp.c): framing,
 * parsing, batches, the MCP methods, roots and elicitation. Public headers
 * of the library only, jansson for the JSON-RPC messages.
 */
#include "mcp_server.h"

#include <agenttools/agenttools.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define RPC_PARSE_ERROR -32700
#define RPC_INVALID_REQUEST -32600
#define RPC_METHOD_NOT_FOUND -32601
#define RPC_INVALID_PARAMS -32602
#define RPC_INTERNAL_ERROR -32603

/* Newest first: the answer when the client asks for a version we lack. */
static const char *const protocol_versions[] = {"2025-06-18", "2025-03-26", "2024-11-05"};

/* A tools/call waiting for the user's answer to our elicitation/create. */
struct mcp_deferred_call {
    json_int_t elicit_id; /* id of our elicitation/create request */
    json_t *client_id;    /* id of the client's tools/call */
    char call_id[64];
    char tool[128];
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

/* Writes one message through the host's callback; a failed write marks the
 * output gone (the host then stops). */
static void send_message(struct mcp_server *sv, json_t *msg)
{
    char *text = json_dumps(msg, JSON_COMPACT | JSON_ENSURE_ASCII);
    if (text != NULL) {
        if (sv->write(text, strlen(text), sv->write_payload) != 0)
            sv->output_failed = 1;
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

static void log_root(const struct mcp_server *sv, const char *source)
{
    if (sv->log == NULL)
        return;
    char line[2 * PATH_MAX + 256];
    snprintf(line, sizeof line, "workspace root: %s (%s)", sv->root, source);
    sv->log(line, sv->log_payload);
}

static json_t *do_initialize(struct mcp_server *sv, json_t *params)
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
static json_t *pending_entry(struct mcp_server *sv, const char *call_id)
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
static json_t *refuse_pending(struct mcp_server *sv, const char *tool, const char *call_id)
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
static int start_elicitation(struct mcp_server *sv, json_t *id, const char *tool,
                             const char *call_id)
{
    json_t *entry = pending_entry(sv, call_id);
    if (entry == NULL)
        return -1;
    struct mcp_deferred_call *d = realloc(sv->deferred, (sv->n_deferred + 1) * sizeof *d);
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
    send_message(sv, req);
    return 0;
}

/* The user's answer (or the client's error) to an elicitation: runs or
 * rejects the call and answers the client's tools/call. */
static void finish_elicitation(struct mcp_server *sv, size_t k, json_t *msg)
{
    struct mcp_deferred_call d = sv->deferred[k];
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
    send_message(sv, answer != NULL ? rpc_result(d.client_id, answer)
                                    : rpc_error(d.client_id, RPC_INTERNAL_ERROR, "out of memory"));
    json_decref(d.client_id);
}

/* Calls still waiting for an answer when their session goes away. */
static void drop_deferred(struct mcp_server *sv, const char *why)
{
    for (size_t k = 0; k < sv->n_deferred; k++) {
        struct mcp_deferred_call *d = &sv->deferred[k];
        char buf[512];
        snprintf(buf, sizeof buf, "This %s call was not run: %s.", d->tool, why);
        send_message(sv, rpc_result(d->client_id, text_result(buf, 1)));
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

static void send_roots_request(struct mcp_server *sv)
{
    sv->roots_id = ++sv->next_id;
    sv->roots_deadline = mono_ms() + ROOTS_WAIT_MS;
    send_message(sv, json_pack("{s:s, s:I, s:s}", "jsonrpc", "2.0", "id", sv->roots_id, "method",
                               "roots/list"));
}

static json_t *handle(struct mcp_server *sv, json_t *msg);

/* Runs the tools/call requests held while the roots were asked for. */
static void release_held(struct mcp_server *sv)
{
    json_t *held = sv->held;
    sv->held = NULL;
    size_t i;
    json_t *m;
    json_array_foreach(held, i, m)
    {
        json_t *resp = handle(sv, m);
        if (resp != NULL)
            send_message(sv, resp);
    }
    json_decref(held);
}

static void log_line(const struct mcp_server *sv, const char *line)
{
    if (sv->log != NULL)
        sv->log(line, sv->log_payload);
}

static void free_extra(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* Adds the client's other roots to session s as writable roots (one
 * policy: the file tools and the sandboxed commands may write there), each
 * logged. 0, or -1 with the reason logged (out of memory). */
static int add_extra(struct mcp_server *sv, agt_session *s, char **paths, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char line[PATH_MAX + 128];
        if (agt_session_add_writable_root(s, paths[i]) != AGT_OK) {
            snprintf(line, sizeof line, "client root %s not added: %s", paths[i],
                     agt_error_message());
            log_line(sv, line);
            if (agt_error_code() == AGT_ENOMEM)
                return -1;
            continue;
        }
        snprintf(line, sizeof line, "writable root: %s (one of the client's roots)", paths[i]);
        log_line(sv, line);
    }
    return 0;
}

static bool in_list(char *const *v, size_t n, const char *p)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i], p) == 0)
            return true;
    return false;
}

/* The answer to roots/list (msg NULL: the client did not answer in time).
 * The first local folder is the workspace (unless --root), every other one
 * a writable root of the session. A changed list that only adds roots adds
 * them to the session; one that drops a root (or moves the workspace) makes
 * a new session, so no folder the client took back stays writable. */
static void apply_roots(struct mcp_server *sv, json_t *msg)
{
    sv->roots_id = 0;
    json_t *roots = json_object_get(json_object_get(msg, "result"), "roots");
    char path[PATH_MAX], why[PATH_MAX + 128], first[PATH_MAX] = "";
    const char *uri = NULL;
    char **extra = NULL;
    size_t nextra = 0;
    size_t i;
    json_t *r;
    json_array_foreach(roots, i, r)
    {
        const char *u = json_string_value(json_object_get(r, "uri"));
        struct stat st;
        if (u == NULL || file_uri_path(u, path, sizeof path) != 0 || stat(path, &st) != 0 ||
            !S_ISDIR(st.st_mode))
            continue;
        if (uri == NULL) {
            uri = u;
            snprintf(first, sizeof first, "%s", path);
            continue;
        }
        char *real = realpath(path, NULL);
        char *fr = realpath(first, NULL);
        bool dup =
            real == NULL || (fr != NULL && strcmp(real, fr) == 0) || in_list(extra, nextra, real);
        free(fr);
        char **g = dup ? NULL : realloc(extra, (nextra + 1) * sizeof *g);
        if (g == NULL) {
            free(real);
            continue;
        }
        extra = g;
        extra[nextra++] = real;
    }
    if (uri == NULL) {
        log_root(sv, msg == NULL ? "the current directory: the client did not answer roots/list"
                     : json_object_get(msg, "error") != NULL
                         ? "the current directory: the client answered roots/list with an error"
                         : "the current directory: none of the client's roots is a local folder");
        free_extra(extra, nextra);
        release_held(sv);
        return;
    }
    bool moved = strcmp(first, sv->root) != 0;
    bool dropped = false;
    for (size_t k = 0; k < sv->n_extra && !dropped; k++)
        dropped = !in_list(extra, nextra, sv->extra[k]);
    if (!moved && !dropped) {
        /* the same workspace: the roots that are new join the session */
        for (size_t k = 0; k < nextra; k++) {
            if (in_list(sv->extra, sv->n_extra, extra[k]))
                continue;
            char **g = realloc(sv->extra, (sv->n_extra + 1) * sizeof *g);
            char *c = g ? strdup(extra[k]) : NULL;
            if (g != NULL)
                sv->extra = g;
            if (c == NULL || add_extra(sv, sv->session, &c, 1) != 0) {
                free(c);
                continue;
            }
            sv->extra[sv->n_extra++] = c;
        }
        free_extra(extra, nextra);
        release_held(sv);
        return;
    }
    agt_session *s = NULL;
    if (sv->make_session(first, &s, sv->session_payload) != 0 ||
        add_extra(sv, s, extra, nextra) != 0) {
        agt_session_free(s);
        snprintf(why, sizeof why, "unchanged: the client's root %s failed: %s", uri,
                 agt_error_message());
        log_root(sv, why);
        free_extra(extra, nextra);
        release_held(sv);
        return;
    }
    drop_deferred(sv, moved ? "the workspace moved to the client's new root first"
                            : "the client took back one of its roots first");
    agt_session_free(sv->session);
    sv->session = s;
    free_extra(sv->extra, sv->n_extra);
    sv->extra = extra;
    sv->n_extra = nextra;
    if (moved) {
        snprintf(sv->root, sizeof sv->root, "%s", first);
        snprintf(why, sizeof why, "the client's first root, %s", uri);
    } else {
        snprintf(why, sizeof why, "a new session: the client no longer lists a root it had");
    }
    log_root(sv, why);
    release_held(sv);
}

/* A response from the client to one of our requests. */
static void handle_response(struct mcp_server *sv, json_t *msg)
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

static void handle_notification(struct mcp_server *sv, const char *method)
{
    if (sv->root_opt != NULL || !sv->client_roots)
        return;
    if (strcmp(method, "notifications/initialized") == 0 ||
        strcmp(method, "notifications/roots/list_changed") == 0)
        send_roots_request(sv);
}

static json_t *do_tools_call(struct mcp_server *sv, json_t *id, json_t *params)
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
static json_t *handle(struct mcp_server *sv, json_t *msg)
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

void mcp_server_handle_line(struct mcp_server *sv, const char *line, size_t len)
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
        send_message(sv, rpc_error(NULL, RPC_PARSE_ERROR, buf));
        return;
    }
    if (json_is_array(msg)) {
        /* A batch (protocol 2025-03-26): answer with an array of responses. */
        if (json_array_size(msg) == 0) {
            /* JSON-RPC 2.0 section 6: an empty array is one invalid request,
             * answered with a single error object, not an array. */
            send_message(sv, rpc_error(NULL, RPC_INVALID_REQUEST, "empty batch"));
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
            send_message(sv, out);
        else
            json_decref(out);
    } else {
        json_t *resp = handle(sv, msg);
        if (resp != NULL)
            send_message(sv, resp);
    }
    json_decref(msg);
}

int mcp_server_init(struct mcp_server *sv, agt_registry *reg, agt_session *session,
                    const char *root)
{
    char *text = NULL;
    sv->reg = reg;
    sv->session = session;
    sv->max_message = MCP_MAX_MESSAGE;
    if (realpath(root, sv->root) == NULL)
        snprintf(sv->root, sizeof sv->root, "%s", root);
    if (sv->root_opt != NULL)
        log_root(sv, "--root");
    if (agt_registry_export(reg, "mcp", AGT_PHASE_ALL, &text) != AGT_OK)
        return -1;
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

void mcp_server_clear(struct mcp_server *sv)
{
    drop_deferred(sv, "the server is stopping");
    free(sv->deferred);
    json_decref(sv->held);
    json_decref(sv->tools);
    agt_session_free(sv->session);
    free_extra(sv->extra, sv->n_extra);
    sv->extra = NULL;
    sv->n_extra = 0;
    free(sv->buf);
    sv->deferred = NULL;
    sv->held = sv->tools = NULL;
    sv->session = NULL;
    sv->buf = NULL;
    sv->n = sv->cap = 0;
}

int64_t mcp_server_roots_left(const struct mcp_server *sv)
{
    if (sv->roots_id == 0)
        return -1;
    int64_t left = sv->roots_deadline - mono_ms();
    return left < 0 ? 0 : left;
}

void mcp_server_roots_timeout(struct mcp_server *sv)
{
    apply_roots(sv, NULL);
}

/* Answers -32700 for a line longer than max_message and drops the rest of
 * it. */
static void too_long(struct mcp_server *sv)
{
    char msg[120];
    if (sv->max_message >= ((size_t)1 << 20))
        snprintf(msg, sizeof msg,
                 "Parse error: message longer than %zu MiB without a newline; dropped",
                 sv->max_message >> 20);
    else
        snprintf(msg, sizeof msg,
                 "Parse error: message longer than %zu bytes without a newline; dropped",
                 sv->max_message);
    send_message(sv, rpc_error(NULL, RPC_PARSE_ERROR, msg));
    sv->skipping = true;
    sv->n = 0;
}

/* Appends to the unfinished line (a line past max_message is answered and
 * dropped, whether it arrives in one piece or in many). */
static int keep(struct mcp_server *sv, const char *p, size_t k)
{
    if (sv->skipping || k == 0)
        return 0;
    if (k > sv->max_message - sv->n) {
        too_long(sv);
        return 0;
    }
    if (sv->n + k > sv->cap) {
        size_t cap = sv->cap ? sv->cap : 65536;
        while (cap < sv->n + k)
            cap *= 2;
        char *nb = realloc(sv->buf, cap);
        if (nb == NULL)
            return -1;
        sv->buf = nb;
        sv->cap = cap;
    }
    memcpy(sv->buf + sv->n, p, k);
    sv->n += k;
    return 0;
}

int mcp_server_feed(struct mcp_server *sv, const char *data, size_t len)
{
    while (len > 0 && !sv->output_failed) {
        const char *nl = memchr(data, '\n', len);
        size_t k = nl ? (size_t)(nl - data) : len;
        if (nl == NULL)
            return keep(sv, data, k);
        if (!sv->skipping) {
            if (sv->n == 0 && k > sv->max_message) {
                too_long(sv);
            } else if (sv->n == 0) {
                mcp_server_handle_line(sv, data, k); /* whole in this piece: no copy */
            } else {
                if (keep(sv, data, k) != 0)
                    return -1;
                if (!sv->skipping)
                    mcp_server_handle_line(sv, sv->buf, sv->n);
            }
        }
        sv->skipping = false;
        sv->n = 0;
        data += k + 1;
        len -= k + 1;
    }
    return 0;
}

void mcp_server_end(struct mcp_server *sv)
{
    if (sv->n > 0 && !sv->skipping && !sv->output_failed)
        mcp_server_handle_line(sv, sv->buf, sv->n); /* a last message without its newline */
    sv->n = 0;
    sv->skipping = false;
}
