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
 * An MCP client has no channel for our approval requests, so a call the
 * session would ask about is refused with a result that names the rule to
 * pass (--allow) unless the server runs with --yolo.
 *
 * This file is the stdio loop and the options; the JSON-RPC framing and the
 * MCP methods are in mcp_server.c.
 */
#include "mcp_server.h"

#include <agenttools/agenttools.h>
#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fputs("usage: agt-mcp [options]\n"
          "Serves libagenttools' tools to an MCP client over stdin/stdout.\n"
          "\n"
          "options:\n"
          "  --root DIR     workspace root (default: current directory)\n"
          "  --set NAME     built-in tool set: chat (default) or review\n"
          "  --tools FILE   replace the catalogue with a tools.json file\n"
          "  --allow RULE   permission rule, e.g. 'Edit(src/**)' or 'Bash(git log *)'; repeatable\n"
          "  --ask RULE     a rule that asks (with no approval channel: refuses); repeatable\n"
          "  --deny RULE    a rule that refuses; repeatable\n"
          "  --yolo         run calls that would need approval (deny rules still apply)\n"
          "  --version      print the library version\n",
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

/* Answers go to stdout, one per line; a write error (the client closed
 * its end) stops the server. */
static int write_stdout(const char *line, size_t len, void *payload)
{
    (void)payload;
    fwrite(line, 1, len, stdout);
    fputc('\n', stdout);
    return fflush(stdout) != 0 || ferror(stdout);
}

/* Reaps background tasks and delivers nothing: an MCP client sees task
 * state through TaskList/TaskOutput. */
static void tick(agt_session *session)
{
    char *events = NULL;
    if (agt_session_tick(session, -1, &events) == AGT_OK)
        agt_free(events);
}

static int serve(struct mcp_server *sv)
{
    static char chunk[65536];
    while (!sv->output_failed) {
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
        int pr = poll(fds, nfds, timeout);
        if (pr < 0 && errno != EINTR) {
            perror("agt-mcp: poll");
            break;
        }
        if (pr == 0 || (pr > 0 && nfds > 1))
            tick(sv->session);
        if (pr <= 0 || (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) == 0)
            continue;
        ssize_t got = read(STDIN_FILENO, chunk, sizeof chunk);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            mcp_server_end(sv);
            break;
        }
        if (mcp_server_feed(sv, chunk, (size_t)got) != 0) {
            fputs("agt-mcp: out of memory reading a message\n", stderr);
            break;
        }
    }
    return 0;
}

/* The registry and session of the server. */
struct host {
    agt_registry *reg;
    agt_session *session;
    int yolo;
};

static int setup(struct host *h, struct mcp_server *sv, const char *root, const char *set,
                 const char *tools_file)
{
    size_t len = 0;
    char *text = NULL;
    if (agt_registry_new(&h->reg) != AGT_OK)
        return -1;
    if (agt_registry_load_builtin(h->reg, set) != AGT_OK) {
        fprintf(stderr, "agt-mcp: --set %s: %s\n", set, agt_error_message());
        return -1;
    }
    if (tools_file != NULL) {
        text = read_file(tools_file, &len);
        if (text == NULL) {
            fprintf(stderr, "agt-mcp: --tools %s: %s\n", tools_file, strerror(errno));
            return -1;
        }
        int rc = agt_registry_load_json(h->reg, text, len);
        free(text);
        if (rc != AGT_OK) {
            fprintf(stderr, "agt-mcp: --tools %s: %s\n", tools_file, agt_error_message());
            return -1;
        }
    }
    agt_registry_freeze(h->reg);
    if (agt_session_new(&h->session, h->reg, root) != AGT_OK) {
        fprintf(stderr, "agt-mcp: --root %s: %s\n", root, agt_error_message());
        return -1;
    }
    if (h->yolo)
        agt_session_set_mode(h->session, AGT_MODE_YOLO);
    if (mcp_server_init(sv, h->reg, h->session, write_stdout, NULL) != 0) {
        fprintf(stderr, "agt-mcp: exporting the tools: %s\n", agt_error_message());
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct host h;
    struct mcp_server sv;
    const char *root = ".", *set = "chat", *tools_file = NULL;
    int status = 1;
    memset(&h, 0, sizeof h);
    memset(&sv, 0, sizeof sv);

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has_value = i + 1 < argc;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--version") == 0) {
            printf("agt-mcp %s\n", agt_version());
            return 0;
        } else if (strcmp(a, "--yolo") == 0) {
            h.yolo = 1;
        } else if (has_value && strcmp(a, "--root") == 0) {
            root = argv[++i];
        } else if (has_value && strcmp(a, "--set") == 0) {
            set = argv[++i];
        } else if (has_value && strcmp(a, "--tools") == 0) {
            tools_file = argv[++i];
        } else if (has_value && (strcmp(a, "--allow") == 0 || strcmp(a, "--ask") == 0 ||
                                 strcmp(a, "--deny") == 0)) {
            i++; /* rules are added once the session exists */
        } else {
            fprintf(stderr, "agt-mcp: unknown or incomplete option '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    /* A client that goes away must end the server through a write error,
     * not kill it with SIGPIPE in the middle of a tool call. */
    signal(SIGPIPE, SIG_IGN);
    if (setup(&h, &sv, root, set, tools_file) != 0)
        goto out;
    for (int i = 1; i + 1 < argc; i++) {
        int kind = strcmp(argv[i], "--allow") == 0  ? AGT_RULE_ALLOW
                   : strcmp(argv[i], "--ask") == 0  ? AGT_RULE_ASK
                   : strcmp(argv[i], "--deny") == 0 ? AGT_RULE_DENY
                                                    : -1;
        if (strcmp(argv[i], "--root") == 0 || strcmp(argv[i], "--set") == 0 ||
            strcmp(argv[i], "--tools") == 0) {
            i++;
            continue;
        }
        if (kind < 0)
            continue;
        if (agt_session_add_rule(h.session, kind, argv[i + 1]) != AGT_OK) {
            fprintf(stderr, "agt-mcp: %s %s: %s\n", argv[i], argv[i + 1], agt_error_message());
            goto out;
        }
        i++;
    }
    status = serve(&sv);
out:
    mcp_server_clear(&sv);
    agt_session_free(h.session);
    agt_registry_free(h.reg);
    return status;
}
