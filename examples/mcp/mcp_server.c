/*
 * JSON-RPC 2.0 framing and the MCP methods of agt-mcp (see mcp_server.h and
 * docs/mcp.md). Public headers of libagenttools only; jansson for the
 * JSON-RPC messages (see agt-mcp.c).
 */
#include "mcp_server.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RPC_PARSE_ERROR -32700
#define RPC_INVALID_REQUEST -32600
#define RPC_METHOD_NOT_FOUND -32601
#define RPC_INVALID_PARAMS -32602
#define RPC_INTERNAL_ERROR -32603

/* Newest first: the answer when the client asks for a version we lack. */
static const char *const protocol_versions[] = {"2025-06-18", "2025-03-26", "2024-11-05"};

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

static json_t *do_initialize(json_t *params)
{
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
                     "Tools of libagenttools (file, search, shell, plan and todo tools). Paths "
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

static json_t *do_tools_call(struct mcp_server *sv, json_t *id, json_t *params)
{
    json_t *name = json_object_get(params, "name");
    json_t *args = json_object_get(params, "arguments");
    if (!json_is_string(name))
        return rpc_error(id, RPC_INVALID_PARAMS, "tools/call needs params.name (a string)");
    if (args != NULL && !json_is_object(args) && !json_is_null(args))
        return rpc_error(id, RPC_INVALID_PARAMS, "tools/call params.arguments must be an object");
    const char *tool = json_string_value(name);
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
    if (method == NULL && (json_object_get(msg, "result") || json_object_get(msg, "error")))
        return NULL; /* a response to a request we never sent: ignore */
    if (!json_is_string(method))
        return rpc_error(id, RPC_INVALID_REQUEST, "method must be a string");
    if (!has_id) {
        /* Notifications never get an answer. Calls run synchronously, so a
         * notifications/cancelled always names a request already answered. */
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
        return rpc_result(id, do_initialize(params));
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
                    mcp_write_fn write, void *write_payload)
{
    char *text = NULL;
    memset(sv, 0, sizeof *sv);
    sv->reg = reg;
    sv->session = session;
    sv->write = write;
    sv->write_payload = write_payload;
    sv->max_message = MCP_MAX_MESSAGE;
    if (agt_registry_export(reg, "mcp", AGT_PHASE_ALL, &text) != AGT_OK)
        return -1;
    sv->tools = json_loads(text, 0, NULL);
    agt_free(text);
    return sv->tools != NULL ? 0 : -1;
}

void mcp_server_clear(struct mcp_server *sv)
{
    json_decref(sv->tools);
    free(sv->buf);
    sv->tools = NULL;
    sv->buf = NULL;
    sv->n = sv->cap = 0;
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
