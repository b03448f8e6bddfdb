/*
 * The JSON-RPC side of agt-mcp, apart from its stdio loop: message framing
 * (one message per line, the 256 MiB line limit), parsing, batches, the MCP
 * methods, the client's roots and approval through the client's
 * elicitation, over a registry and a session. Answers and the server's own
 * requests to the client go out through a write callback. agt-mcp.c feeds
 * it what stdin gives; the fuzz target tests/fuzz/fuzz_mcp.c feeds it
 * arbitrary bytes.
 */
#ifndef AGT_MCP_SERVER_H
#define AGT_MCP_SERVER_H

#include <agenttools/agenttools.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Writes one message: len bytes of compact ASCII JSON (no newline; the
 * callback ends the line). Returns non-zero when the output is gone (the
 * host then stops: output_failed is set). */
typedef int (*mcp_write_fn)(const char *line, size_t len, void *payload);

/* Makes a session on root (a local folder from the client's roots) with
 * the host's mode and rules. Returns 0 with *out set, or -1 with
 * agt_error_message() saying why. */
typedef int (*mcp_session_fn)(const char *root, agt_session **out, void *payload);

/* One line about the server's state for the host's log (the workspace
 * root it chose and why). */
typedef void (*mcp_log_fn)(const char *line, void *payload);

/* A tools/call waiting for the user's answer (mcp_server.c). */
struct mcp_deferred_call;

struct mcp_server {
    agt_registry *reg;        /* borrowed, frozen */
    agt_session *session;     /* owned: replaced when the client's roots move the workspace */
    json_t *tools;            /* the tools/list result (mcp_server_init), a reference */
    unsigned long long calls; /* call id counter */
    /* the host's callbacks: write is required; make_session is needed when
       root_opt is NULL (the client's roots may be asked for); log may be NULL */
    mcp_write_fn write;
    void *write_payload;
    mcp_session_fn make_session;
    void *session_payload;
    mcp_log_fn log;
    void *log_payload;
    int output_failed; /* set when write failed */
    /* the workspace */
    const char *root_opt; /* --root, or NULL: then the client's first file:// root */
    char root[PATH_MAX];  /* the session's root as given to it */
    /* the client's other local roots (real paths), writable roots of the
       session: the file tools and the sandboxed commands may write there */
    char **extra;
    size_t n_extra;
    /* what the client offers (initialize params.capabilities) */
    int client_roots, client_elicitation;
    json_int_t next_id;     /* ids of our requests to the client */
    json_int_t roots_id;    /* the roots/list request we wait for, or 0 */
    int64_t roots_deadline; /* monotonic ms: stop waiting for the roots then */
    json_t *held;           /* tools/call requests held until the roots are known */
    struct mcp_deferred_call *deferred;
    size_t n_deferred;
    /* framing: the start of a line whose newline has not arrived */
    char *buf;
    size_t n, cap;
    size_t max_message; /* a longer line is answered with -32700 and dropped */
    bool skipping;      /* inside such a line */
};

/* The limit of one message unless the host sets another: a message longer
 * than this (no newline yet) is answered with -32700 and the rest of its
 * line is dropped, rather than buffered until memory runs out and the
 * server dies with it. Large Write contents still fit. */
#define MCP_MAX_MESSAGE ((size_t)256 << 20)

/* Sets up sv, which the caller zeroed and whose callbacks and root_opt it
 * set, over reg (frozen) and session (owned by sv from here, may be NULL
 * when the caller sets sv->session later) on root: builds the tools/list
 * answer (the tools that cannot work over MCP left out) and logs the root
 * when root_opt is set. Returns 0, or -1 with agt_error_message() saying
 * why when the export failed. */
int mcp_server_init(struct mcp_server *sv, agt_registry *reg, agt_session *session,
                    const char *root);

/* Answers the calls still waiting for the user ("the server is stopping")
 * through the write callback, then frees what sv owns (the session, the
 * tools reference, the framing buffer; not the registry). */
void mcp_server_clear(struct mcp_server *sv);

/* Handles every complete line in len bytes of input, keeping the start of
 * an unfinished one. Returns 0, or -1 when out of memory. */
int mcp_server_feed(struct mcp_server *sv, const char *data, size_t len);

/* End of input: handles a last message that has no newline. */
void mcp_server_end(struct mcp_server *sv);

/* One message line (without its newline): parse, run, answer. */
void mcp_server_handle_line(struct mcp_server *sv, const char *line, size_t len);

/* Milliseconds left to wait for the client's answer to roots/list (0 when
 * the wait is over: call mcp_server_roots_timeout), or -1 when the server
 * waits for no roots. */
int64_t mcp_server_roots_left(const struct mcp_server *sv);

/* The client did not answer roots/list in time: the current workspace
 * stays, the held tools/call requests run. */
void mcp_server_roots_timeout(struct mcp_server *sv);

#endif
