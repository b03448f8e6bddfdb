/* bench-approval: rule evaluation per tool call with 1,000 rules (Bash
 * command patterns, file path globs, text patterns and name-only rules),
 * against the 1 µs per call target. Also times a naive linear scan over
 * every rule (what an unindexed list costs) and a full dispatch through the
 * gate with a no-op provider. Times are CPU time of the process, so a busy
 * machine does not inflate them. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agenttools/agenttools.h"
#include "session/policy.h"
#include "session/session_internal.h"
#include "old_split.h"

#define NRULES 1000

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts); /* CPU time: a busy machine does not skew it */
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int noop(agt_call *call, void *payload)
{
    (void)payload;
    return agt_call_set_text(call, "ok");
}

static const char *progs[] = {"git",     "npm",     "cargo", "make", "docker",
                              "kubectl", "python3", "go",    "pip",  "yarn"};

static void add_rules(agt_session *s)
{
    char rule[256];
    int n = 0;
    static const char *const path_tools[] = {"Read", "Write", "Edit", "ReadMediaFile"};
    for (int i = 0; n < NRULES; i++) {
        int k = AGT_RULE_ALLOW;
        switch (i % 10) {
        case 0:
        case 1:
        case 2:
        case 3: /* 40%: Bash command patterns, keyed by program */
            snprintf(rule, sizeof rule, "Bash(%s%d sub%d *)", progs[i % 10], i / 40, i % 7);
            k = i % 13 == 0 ? AGT_RULE_DENY : i % 11 == 0 ? AGT_RULE_ASK : AGT_RULE_ALLOW;
            break;
        case 4:
        case 5:
        case 6: /* 30%: path globs under folders */
            snprintf(rule, sizeof rule, "%s(dir%d/sub%d/**)", path_tools[i % 4], i / 10, i % 5);
            k = i % 17 == 0 ? AGT_RULE_DENY : AGT_RULE_ALLOW;
            break;
        case 7: /* 10%: file-name globs (checked for every path of the tool) */
            if (i % 30 == 7)
                snprintf(rule, sizeof rule, "%s(*.ext%d)", path_tools[i % 4], i);
            else
                snprintf(rule, sizeof rule, "%s(/opt/area%d/**)", path_tools[i % 4], i);
            break;
        case 8: /* 10%: Grep / FetchURL text patterns */
            snprintf(rule, sizeof rule,
                     i % 20 == 8 ? "Grep(*secret%d*)" : "FetchURL(https://h%d.example/*)", i);
            k = AGT_RULE_DENY;
            break;
        default: /* 10%: name-only rules for host/MCP tools */
            snprintf(rule, sizeof rule, "mcp__srv%d__tool", i);
            break;
        }
        if (agt_session_add_rule(s, k, rule) != AGT_OK) {
            fprintf(stderr, "rule %s: %s\n", rule, agt_error_message());
            exit(1);
        }
        n++;
    }
}

/* ---- parse + decide of shell commands (lib/shell + bash_rules.c) ------ */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The old way: the splitter, then each part matched and checked for a
 * redirection into a file. */
static int old_decide(agt_session *s, const char *cmd)
{
    json_t *parts = bench_old_split(cmd);
    int verdict = 0;
    size_t i;
    json_t *v;
    json_array_foreach(parts, i, v)
    {
        const agti_rule *hit;
        agti_ruleset_match(&s->policy->rules, "Bash", AGTI_SUBJ_COMMAND, json_string_value(v), NULL,
                           &hit);
        if (hit != NULL && bench_old_redirects_to_file(json_string_value(v)))
            hit = NULL;
        verdict += hit ? hit->kind + 1 : 0;
    }
    json_decref(parts);
    return verdict;
}

/* Median CPU time per call of the new and the old decision for one command,
 * from alternating rounds. */
static void time_shell(agt_session *s, const char *label, const char *cmd, long iters,
                       double target_us)
{
    json_t *args = json_pack("{s:s}", "command", cmd);
    enum { ROUNDS = 9 };
    double t_new[ROUNDS], t_old[ROUNDS];
    int kind = -2;
    long sink = 0;
    for (int r = 0; r < ROUNDS; r++) {
        double t0 = now_s();
        for (long i = 0; i < iters; i++) {
            agti_verdict v;
            agti_policy_evaluate(s, "Bash", args, &v);
            kind = v.kind;
            agti_verdict_clear(&v);
        }
        t_new[r] = (now_s() - t0) / (double)iters;
        t0 = now_s();
        for (long i = 0; i < iters; i++)
            sink += old_decide(s, cmd);
        t_old[r] = (now_s() - t0) / (double)iters;
    }
    qsort(t_new, ROUNDS, sizeof t_new[0], cmp_double);
    qsort(t_old, ROUNDS, sizeof t_old[0], cmp_double);
    double n_us = t_new[ROUNDS / 2] * 1e6, o_us = t_old[ROUNDS / 2] * 1e6;
    const char *verdict = kind == AGT_RULE_DENY    ? "deny"
                          : kind == AGT_RULE_ASK   ? "ask"
                          : kind == AGT_RULE_ALLOW ? "allow"
                                                   : "no rule";
    printf("  %-34s %7zu bytes  parse+decide %10.2f us (target < %.0f us: %s)  old splitter "
           "%10.2f us  (%.1fx the old cost; verdict %s, %ld)\n",
           label, strlen(cmd), n_us, target_us, n_us < target_us ? "met" : "MISSED", o_us,
           n_us / o_us, verdict, sink % 7);
    json_decref(args);
}

/* A script of about `bytes` bytes in the shapes models write. */
static char *make_script(size_t bytes)
{
    static const char *const block =
        "#!/bin/bash\n"
        "set -euo pipefail\n"
        "build() {\n"
        "  local dir=\"$1\"\n"
        "  cd \"$dir\" && make -j4 2>&1 | tail -20\n"
        "}\n"
        "for f in src/*.c; do\n"
        "  if grep -q 'TODO' \"$f\"; then echo \"todo: $f\" >> todo.txt; fi\n"
        "done\n"
        "case \"${MODE:-fast}\" in\n"
        "  fast) timeout 60 npm run test -- --watch=false ;;\n"
        "  full) FOO=1 python3 -m pytest tests/ -q || exit 1 ;;\n"
        "esac\n"
        "git status --short | grep -v '^?\?' | head -5\n"
        "cat <<EOF > notes.md\n# Notes $(date +%F)\nbuilt on $(uname -s)\nEOF\n"
        "build lib && echo \"done in $((SECONDS / 60)) min\"\n";
    size_t bl = strlen(block), n = 0;
    char *out = malloc(bytes + bl + 1);
    while (n < bytes) {
        memcpy(out + n, block, bl);
        n += bl;
    }
    out[n] = '\0';
    return out;
}

static void bench_shell(agt_session *s)
{
    const char *cmd200 = "cd src && git status --short | grep -v '^?\?' | head -20 && make -j4 "
                         "2>&1 | tail -5; FOO=1 timeout 60 npm run test -- --watch=false > "
                         "/dev/null || echo \"failed: $(date +%s)\" >&2; ls -la build";
    printf("bench-approval: Bash commands parsed and decided against the same %d rules "
           "(median of 9 alternating rounds, CPU time)\n",
           NRULES);
    time_shell(s, "200-character compound command", cmd200, 2000, 20);
    char *script = make_script(100 * 1024);
    time_shell(s, "100 KB script", script, 5, 5000);
    free(script);
}

typedef struct bench_call {
    const char *tool;
    json_t *args;
} bench_call;

int main(void)
{
    char root[PATH_MAX];
    if (getcwd(root, sizeof root) == NULL)
        return 1;
    agt_registry *reg = NULL;
    agt_registry_new(&reg);
    agt_registry_load_builtin(reg, "chat");
    static const char *const tools[] = {"Bash", "Read", "Write", "Edit", "Grep", "FetchURL"};
    for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++)
        agt_registry_set_provider(reg, tools[i], noop, NULL);
    agt_session *s = NULL;
    if (agt_session_new(&s, reg, root) != AGT_OK)
        return 1;
    add_rules(s);
    agt_session_set_mode(s, AGT_MODE_YOLO); /* dispatch timing never parks a call */

    static const char *const specs[][2] = {
        {"Bash", "{\"command\":\"git3 sub1 --oneline src/a.c\"}"},
        {"Bash", "{\"command\":\"npm2 sub4 run build && cargo9 sub2 test | tee log\"}"},
        {"Bash", "{\"command\":\"ls -la\"}"},
        {"Bash", "{\"command\":\"echo \\\"a;b\\\" $(date) ; make1 sub3 all\"}"},
        {"Edit", "{\"path\":\"dir42/sub2/x/y.c\",\"old_string\":\"a\",\"new_string\":\"b\"}"},
        {"Write", "{\"path\":\"./src/main.c\",\"content\":\"\"}"},
        {"Read", "{\"path\":\"/opt/area17/conf\"}"},
        {"Grep", "{\"pattern\":\"TODO\"}"},
        {"FetchURL", "{\"url\":\"https://h98.example/page\"}"},
    };
    size_t ncalls = sizeof specs / sizeof specs[0];
    bench_call calls[16];
    for (size_t i = 0; i < ncalls; i++) {
        calls[i].tool = specs[i][0];
        calls[i].args = json_loads(specs[i][1], 0, NULL);
    }

    /* warm the index */
    agti_verdict v;
    agti_policy_evaluate(s, calls[0].tool, calls[0].args, &v);
    agti_verdict_clear(&v);

    const long iters = 200000;
    long verdicts[4] = {0};
    double t0 = now_s();
    for (long it = 0; it < iters; it++) {
        bench_call *c = &calls[(size_t)it % ncalls];
        agti_policy_evaluate(s, c->tool, c->args, &v);
        verdicts[v.kind + 1]++;
        agti_verdict_clear(&v);
    }
    double eval_ns = (now_s() - t0) * 1e9 / (double)iters;

    printf("per call shape (CPU time):\n");
    for (size_t ci = 0; ci < ncalls; ci++) {
        double t1 = now_s();
        for (long it = 0; it < 20000; it++) {
            agti_policy_evaluate(s, calls[ci].tool, calls[ci].args, &v);
            agti_verdict_clear(&v);
        }
        printf("  %-9s %-70.70s %6.0f ns\n", specs[ci][0], specs[ci][1],
               (now_s() - t1) * 1e9 / 20000);
    }
    /* naive baseline: every rule tried for every call, same matcher */
    agti_ruleset *rs = &s->policy->rules;
    const long naive_iters = 20000;
    long hits = 0;
    t0 = now_s();
    for (long it = 0; it < naive_iters; it++) {
        bench_call *c = &calls[(size_t)it % ncalls];
        json_t *p = strcmp(c->tool, "Bash") == 0
                        ? bench_old_split(json_string_value(json_object_get(c->args, "command")))
                        : NULL;
        size_t np = p ? json_array_size(p) : 1;
        for (size_t pi = 0; pi < np; pi++)
            for (size_t r = 0; r < rs->n; r++) {
                /* a one-rule set per probe would distort; reuse match on a 1-element view */
                agti_ruleset one = {&rs->rules[r], 1, 1, &rs->rules[r], false};
                const agti_rule *hit;
                const char *text = p ? json_string_value(json_array_get(p, pi))
                                     : json_string_value(json_object_get(
                                           c->args, strcmp(c->tool, "Grep") == 0       ? "pattern"
                                                    : strcmp(c->tool, "FetchURL") == 0 ? "url"
                                                                                       : "path"));
                agti_ruleset_match(&one, c->tool, agti_rule_subject(c->tool), text, text, &hit);
                hits += hit != NULL;
            }
        json_decref(p);
    }
    double naive_ns = (now_s() - t0) * 1e9 / (double)naive_iters;

    /* full dispatch: parse + schema validation + gate + provider */
    const long disp_iters = 50000;
    t0 = now_s();
    for (long it = 0; it < disp_iters; it++) {
        agt_result *r = NULL;
        agt_session_dispatch(s, "b", specs[(size_t)it % ncalls][0], specs[(size_t)it % ncalls][1],
                             &r);
        agt_result_free(r);
    }
    double disp_ns = (now_s() - t0) * 1e9 / (double)disp_iters;

    printf("bench-approval: %d rules, %zu call shapes (Bash simple and compound, Edit/Write/Read "
           "paths, Grep, FetchURL)\n",
           NRULES, ncalls);
    printf("  rule evaluation (indexed):    %8.0f ns/call  (target < 1000 ns: %s)\n", eval_ns,
           eval_ns < 1000 ? "met" : "MISSED");
    printf("  linear scan of every rule:    %8.0f ns/call  (index is %.1fx faster)\n", naive_ns,
           naive_ns / eval_ns);
    printf("  full dispatch incl. schema:   %8.0f ns/call\n", disp_ns);
    printf("  verdicts: none %ld, allow %ld, ask %ld, deny %ld (naive hits %ld)\n", verdicts[0],
           verdicts[1], verdicts[2], verdicts[3], hits);
    bench_shell(s);
    for (size_t i = 0; i < ncalls; i++)
        json_decref(calls[i].args);
    agt_session_free(s);
    agt_registry_free(reg);
    return 0;
}
