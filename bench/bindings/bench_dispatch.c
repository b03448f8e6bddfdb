/*
 * The C side of bench-bindings (bench_bindings.py): per-call time of
 * agt_session_dispatch for a TodoList call and for a call to a provider that
 * upper-cases its text (the binding benches do the same through Node and
 * Python). Prints the first result of each, then ns per call of each.
 *
 * usage: bench_dispatch ROOT N
 */
#define _POSIX_C_SOURCE 200809L
#include <agenttools/agenttools.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *SHOUT =
    "{\"name\":\"Shout\",\"plan_task\":true,\"main_task\":true,\"access\":\"read\","
    "\"definition\":{\"name\":\"Shout\",\"description\":\"Upper-cases text.\","
    "\"parameters\":{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},"
    "\"required\":[\"text\"]}}}";

static int shout(agt_call *call, void *payload)
{
    (void)payload;
    const char *args = agt_call_args(call); /* {"text":"..."} as sent */
    const char *p = strstr(args, "\"text\":\"");
    char buf[256];
    size_t n = 0;
    if (p != NULL)
        for (p += 8; *p != '\0' && *p != '"' && n + 1 < sizeof buf; p++)
            buf[n++] = (char)toupper((unsigned char)*p);
    buf[n] = '\0';
    return agt_call_set_text(call, buf);
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int run(agt_session *s, const char *tool, const char *args, long n, double *ns)
{
    agt_result *r = NULL;
    if (agt_session_dispatch(s, NULL, tool, args, &r) != AGT_OK)
        return -1;
    printf("%s: %s\n", tool, agt_result_text(r));
    agt_result_free(r);
    double t0 = now_ns();
    for (long i = 0; i < n; i++) {
        if (agt_session_dispatch(s, NULL, tool, args, &r) != AGT_OK)
            return -1;
        agt_result_free(r);
    }
    *ns = (now_ns() - t0) / (double)n;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: bench_dispatch ROOT N\n");
        return 2;
    }
    long n = strtol(argv[2], NULL, 10);
    agt_registry *reg = NULL;
    agt_session *s = NULL;
    double todo = 0, prov = 0;
    if (agt_registry_new(&reg) != AGT_OK || agt_registry_load_builtin(reg, "chat") != AGT_OK ||
        agt_registry_set_provider(reg, "Shout", shout, NULL) != AGT_OK ||
        agt_registry_add_json(reg, SHOUT, strlen(SHOUT)) != AGT_OK ||
        agt_session_new(&s, reg, argv[1]) != AGT_OK ||
        run(s, "TodoList", "{\"todos\":[{\"title\":\"bench\",\"status\":\"pending\"}]}", n,
            &todo) != 0 ||
        run(s, "Shout", "{\"text\":\"hello\"}", n, &prov) != 0) {
        fprintf(stderr, "bench_dispatch: %s\n", agt_error_message());
        return 1;
    }
    printf("ns %.1f %.1f\n", todo, prov);
    agt_session_free(s);
    agt_registry_free(reg);
    return 0;
}
