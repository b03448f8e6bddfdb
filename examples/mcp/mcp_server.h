/*
 * The JSON-RPC side of agt-mcp, apart from its stdio loop: message framing
 * (one message per line), parsing, batches and the MCP methods, over a
 * registry and a session. agt-mcp.c feeds it what stdin gives; the fuzz
 * target tests/fuzz/fuzz_mcp.c feeds it arbitrary bytes.
 */
#ifndef AGT_MCP_SERVER_H
#define AGT_MCP_SERVER_H

#include <agenttools/agenttools.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Writes one answer: len bytes of compact ASCII JSON and a newline.
 * Returns non-zero when the output is gone (the server then stops). */
typedef int (*mcp_write_fn)(const char *line, size_t len, void *payload);

struct mcp_server {
    agt_registry *reg;        /* borrowed */
    agt_session *session;     /* borrowed */
    json_t *tools;            /* the tools/list result (mcp_server_init) */
    unsigned long long calls; /* call id counter */
    mcp_write_fn write;
    void *write_payload;
    int output_failed; /* set when write failed */
    /* Framing: the start of a line whose newline has not arrived. */
    char *buf;
    size_t n, cap;
    size_t max_message; /* a longer line is answered with -32700 and dropped */
    bool skipping;      /* inside such a line */
};

/* The limit of one message unless the host sets another: large Write
 * contents still fit, a client that never sends a newline cannot make the
 * server buffer until memory runs out. */
#define MCP_MAX_MESSAGE ((size_t)256 << 20)

/* Sets up sv over reg (frozen) and session: builds the tools/list answer.
 * Returns 0, or -1 with agt_error_message() saying why. */
int mcp_server_init(struct mcp_server *sv, agt_registry *reg, agt_session *session,
                    mcp_write_fn write, void *write_payload);

/* Frees what sv owns (not the registry or the session). */
void mcp_server_clear(struct mcp_server *sv);

/* Handles every complete line in len bytes of input, keeping the start of
 * an unfinished one. Returns 0, or -1 when out of memory. */
int mcp_server_feed(struct mcp_server *sv, const char *data, size_t len);

/* End of input: handles a last message that has no newline. */
void mcp_server_end(struct mcp_server *sv);

/* One message line (without its newline): parse, run, answer. */
void mcp_server_handle_line(struct mcp_server *sv, const char *line, size_t len);

#endif
