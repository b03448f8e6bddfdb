/*
 * libFuzzer target for agt-mcp's JSON-RPC side (examples/mcp/mcp_server.c,
 * compiled into this target): line framing, parsing, batches, the MCP
 * methods, the client's roots and approval through elicitation, over the
 * chat set in a workspace folder. Tools do not run: every provider answers
 * "ran TOOL". The server never waits on its own: what it asks the client
 * (roots/list, elicitation/create) is answered, or not, by the input
 * itself; calls held for the roots stay held at the end of the input (as
 * when agt-mcp's client goes away) and deferred calls get their "server is
 * stopping" answer from mcp_server_clear. A client root that is a local
 * folder gets a session there, as in agt-mcp. Input: flags byte (bit 0:
 * small message limit of 64 bytes, exercising the drop of over-long lines;
 * bits 1-3: feed in chunks of 1 to 7 bytes, else in one piece), then the
 * bytes a client sends.
 * Invariants: every message out is one line of compact ASCII JSON: an
 * object with "jsonrpc":"2.0" that is either an answer (an "id", exactly
 * one of "result" or "error") or a request of the server (roots/list or
 * elicitation/create with an integer id), or a non-empty array of answers
 * for a batch; chunking does not change the output.
 */
#include <jansson.h>
#include <stdint.h>

#include "../../examples/mcp/mcp_server.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static agt_registry *reg;

static int ran(agt_call *call, void *payload)
{
    (void)payload;
    char text[128];
    snprintf(text, sizeof text, "ran %s", agt_call_tool(call));
    return agt_call_set_text(call, text);
}

static int is_v2(const json_t *a)
{
    const json_t *v = json_object_get(a, "jsonrpc");
    return json_is_string(v) && strcmp(json_string_value(v), "2.0") == 0;
}

static void check_answer(const json_t *a)
{
    if (!json_is_object(a) || !is_v2(a) || !json_object_get(a, "id") ||
        json_object_get(a, "method") != NULL ||
        (json_object_get(a, "result") != NULL) == (json_object_get(a, "error") != NULL))
        abort();
}

static void check_request(const json_t *a)
{
    const char *m = json_string_value(json_object_get(a, "method"));
    if (!is_v2(a) || !json_is_integer(json_object_get(a, "id")) || m == NULL ||
        (strcmp(m, "roots/list") != 0 && strcmp(m, "elicitation/create") != 0) ||
        json_object_get(a, "result") != NULL || json_object_get(a, "error") != NULL)
        abort();
}

static int collect(const char *line, size_t len, void *payload)
{
    char **acc = payload;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)line[i] < 0x20 || (unsigned char)line[i] > 0x7f) {
            fprintf(stderr, "byte 0x%02x at %zu of: %.*s\n", (unsigned char)line[i], i, (int)len,
                    line);
            abort();
        }
    json_error_t e;
    json_t *j = json_loadb(line, len, 0, &e);
    if (j == NULL)
        abort();
    if (json_is_array(j)) {
        if (json_array_size(j) == 0)
            abort();
        for (size_t i = 0; i < json_array_size(j); i++)
            check_answer(json_array_get(j, i));
    } else if (json_object_get(j, "method") != NULL) {
        check_request(j);
    } else {
        check_answer(j);
    }
    json_decref(j);
    size_t old = *acc ? strlen(*acc) : 0;
    char *n = realloc(*acc, old + len + 2);
    if (n == NULL)
        abort();
    memcpy(n + old, line, len);
    n[old + len] = '\n';
    n[old + len + 1] = '\0';
    *acc = n;
    return 0;
}

/* A session on a client's root, as agt-mcp makes one (without rules). */
static int client_session(const char *root, agt_session **out, void *payload)
{
    (void)payload;
    return agt_session_new(out, reg, root) == AGT_OK ? 0 : -1;
}

static char *serve(const uint8_t *data, size_t size, bool small, size_t step)
{
    agt_session *s = NULL;
    char *acc = NULL;
    if (agt_session_new(&s, reg, fz_workspace()) != AGT_OK)
        abort();
    /* the tools/list answer is built once (mcp_server_init exports the
     * registry, the slowest part); each run gets its own session, framing
     * and client state */
    static struct mcp_server proto;
    if (proto.tools == NULL) {
        proto.write = collect;
        proto.make_session = client_session;
        if (mcp_server_init(&proto, reg, NULL, fz_workspace()) != 0)
            abort();
    }
    struct mcp_server sv = proto;
    json_incref(sv.tools);
    sv.session = s;
    sv.write_payload = &acc;
    if (small)
        sv.max_message = 64;
    for (size_t off = 0; off < size;) {
        size_t n = step && step < size - off ? step : size - off;
        if (mcp_server_feed(&sv, (const char *)data + off, n) != 0)
            abort();
        off += n;
    }
    mcp_server_end(&sv);
    mcp_server_clear(&sv); /* answers deferred calls, frees the session */
    return acc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 16384)
        return 0;
    if (reg == NULL) {
        if (agt_registry_new(&reg) != AGT_OK || agt_registry_load_builtin(reg, "chat") != AGT_OK)
            abort();
        for (size_t i = 0; i < agt_registry_count(reg); i++)
            agt_registry_set_provider(reg, agt_registry_name_at(reg, i), ran, NULL);
        agt_registry_freeze(reg);
    }
    bool small = data[0] & 1;
    size_t step = (data[0] >> 1) & 7;
    char *whole = serve(data + 1, size - 1, small, 0);
    if (step) {
        char *chunked = serve(data + 1, size - 1, small, step);
        if ((whole == NULL) != (chunked == NULL) || (whole && strcmp(whole, chunked) != 0)) {
            fprintf(stderr, "whole:\n%s\nchunked:\n%s\n", whole, chunked);
            abort();
        }
        free(chunked);
    }
    free(whole);
    return 0;
}
