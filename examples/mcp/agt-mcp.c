/*
 * agt-mcp: serves the tool registry as a Model Context Protocol server over
 * stdio (JSON-RPC 2.0, one message per line; see docs/mcp.md).
 *
 * The library is used through its public headers only. JSON-RPC messages are
 * read and written with jansson, linked directly by this program: it is a
 * separate executable, and jansson is a Debian-packaged library the build
 * already requires, so the example does not grow a JSON parser of its own.
 * No jansson type crosses into libagenttools: tool arguments and results go
 * through the library as JSON text. The JSON-RPC side (framing, methods,
 * roots, elicitation) is in mcp_server.c; this file has the options, the
 * sessions they make and the stdio loop.
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
#include "mcp_server.h"

/* agt-mcp around the JSON-RPC side: the options a new session gets. */
struct server {
    struct mcp_server mcp; /* framing, methods, roots, elicitation (mcp_server.c) */
    int yolo;
    int argc; /* the command line, for the rules of a new session */
    char **argv;
    cli_sandbox sbo; /* --sandbox, --network, --add-dir: applied to every session made */
};

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

/* Reaps background tasks and delivers nothing: an MCP client sees task
 * state through TaskList/TaskOutput. */
static void tick(struct mcp_server *sv)
{
    char *events = NULL;
    if (agt_session_tick(sv->session, -1, &events) == AGT_OK)
        agt_free(events);
}

/* One message to stdout: the client reads one per line. */
static int write_stdout(const char *line, size_t len, void *payload)
{
    (void)payload;
    fwrite(line, 1, len, stdout);
    fputc('\n', stdout);
    return fflush(stdout) != 0 || ferror(stdout) ? -1 : 0;
}

static void log_stderr(const char *line, void *payload)
{
    (void)payload;
    fprintf(stderr, "agt-mcp: %s\n", line);
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
        int64_t left = mcp_server_roots_left(sv);
        if (left == 0) {
            mcp_server_roots_timeout(sv);
            continue;
        }
        if (left > 0 && (timeout < 0 || left < timeout))
            timeout = (int)left;
        int pr = poll(fds, nfds, timeout);
        if (pr < 0 && errno != EINTR) {
            perror("agt-mcp: poll");
            break;
        }
        if (pr == 0 || (pr > 0 && nfds > 1))
            tick(sv);
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

static int make_session(struct server *sv, const char *root, agt_session **out);

static int make_client_session(const char *root, agt_session **out, void *payload)
{
    return make_session(payload, root, out);
}

static int setup(struct server *sv, const char *root, const char *set, const char *tools_file)
{
    size_t len = 0;
    char *text = NULL;
    agt_registry *reg = NULL;
    agt_session *session = NULL;
    if (agt_registry_new(&reg) != AGT_OK)
        return -1;
    sv->mcp.reg = reg;
    if (agt_registry_load_builtin(reg, set) != AGT_OK) {
        fprintf(stderr, "agt-mcp: --set %s: %s\n", set, agt_error_message());
        return -1;
    }
    if (tools_file != NULL) {
        text = read_file(tools_file, &len);
        if (text == NULL) {
            fprintf(stderr, "agt-mcp: --tools %s: %s\n", tools_file, strerror(errno));
            return -1;
        }
        int rc = agt_registry_load_json(reg, text, len);
        free(text);
        if (rc != AGT_OK) {
            fprintf(stderr, "agt-mcp: --tools %s: %s\n", tools_file, agt_error_message());
            return -1;
        }
    }
    agt_registry_freeze(reg);
    if (make_session(sv, root, &session) != 0)
        return -1;
    if (mcp_server_init(&sv->mcp, reg, session, root) != 0) {
        fprintf(stderr, "agt-mcp: exporting the tools: %s\n", agt_error_message());
        return -1;
    }
    return 0;
}

/* A session on root with the mode and the rules of the command line; 0, or
 * -1 with the reason on stderr (for the startup) and agt_error_message(). */
static int make_session(struct server *sv, const char *root, agt_session **out)
{
    agt_session *s = NULL;
    *out = NULL;
    if (agt_session_new(&s, sv->mcp.reg, root) != AGT_OK) {
        fprintf(stderr, "agt-mcp: %s %s: %s\n", sv->mcp.root_opt != NULL ? "--root" : "root", root,
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
    sv.mcp.write = write_stdout;
    sv.mcp.make_session = make_client_session;
    sv.mcp.session_payload = &sv;
    sv.mcp.log = log_stderr;

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
            root = sv.mcp.root_opt = argv[++i];
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
    status = serve(&sv.mcp);
out:
    mcp_server_clear(&sv.mcp);
    agt_registry_free(sv.mcp.reg);
    return status;
}
