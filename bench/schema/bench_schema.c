/*
 * bench-schema: validations per second of the built-in tools' argument
 * schemas with realistic valid and invalid arguments (instances.json), next
 * to python3-jsonschema and Ajv on the same schemas and instances in the same
 * run, plus the cost of a full dispatch (look-up, parse, validate, provider,
 * result) of a small call. Prints rates and ratios; asserts nothing.
 *
 * The same schemas run in three drafts: as written (no "$schema": 2020-12),
 * with "$schema" draft-04 ("const" written as a one-value "enum", since draft 4
 * has no "const") and with "$schema" 2019-09; Ajv runs its 2020, 2019 and
 * ajv-draft-04 classes, python3-jsonschema picks its validator from "$schema".
 *
 * usage: bench-schema SOURCE_DIR WORK_DIR [SECONDS]
 *
 * With --calls (bench/run's in-process rows), the real tool schemas of
 * Grep, Read, Write and Edit (chat set) against Ajv 8 (2020 class) on
 * single calls, small and large: both sides in one process each (Ajv in a
 * Node process started once and driven through a pipe), each schema compiled
 * once, each timed validation parsing the JSON text (JSON.parse + validate
 * for Ajv, agt_schema_validate for ours). First both sides give their verdict
 * on every instance (the timed ones and error cases) and must agree with
 * each other and with the expected one; then per row PAIRS alternating
 * batches (ours, Ajv, ours, ...) of the same number of validations, after a
 * warm-up of each (Ajv's JIT). Prints per row the medians of the time per
 * validation (wall and CPU) and their ratios ours / Ajv, one line each:
 *   call ROW ours_ns X ajv_ns Y ratio R cpu_ratio C n N verdict V
 *
 * usage: bench-schema --calls SOURCE_DIR WORK_DIR [PAIRS]
 */
#include <agenttools/agenttools.h>
#include "schema/schema_internal.h"
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "../bench_stats.h"

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now_s(void)
{
    return clock_s(CLOCK_MONOTONIC);
}

typedef struct {
    agt_schema *schema;
    char *text[2]; /* valid, invalid */
} bench_case;

static json_t *find_tool(json_t *sets[2], const char *name)
{
    for (int s = 0; s < 2; s++) {
        size_t i;
        json_t *e;
        json_array_foreach(sets[s], i, e)
        {
            if (strcmp(json_string_value(json_object_get(e, "name")), name) == 0)
                return e;
        }
    }
    return NULL;
}

static int ok_provider(agt_call *call, void *payload)
{
    (void)payload;
    return agt_call_set_text(call, "ok");
}

static double run_external(const char *cmd)
{
    FILE *p = popen(cmd, "r");
    if (p == NULL)
        return 0;
    char line[256];
    double rate = 0;
    while (fgets(line, sizeof line, p) != NULL)
        if (sscanf(line, "rate %lf", &rate) == 1)
            break;
    pclose(p);
    return rate;
}

/* Draft variants of the same schemas. */
typedef struct {
    const char *label;  /* row label */
    const char *schema; /* "$schema" to add, NULL = as written */
    const char *ajv;    /* bench_ajv.js draft argument */
    bool const_as_enum; /* draft 4 has no "const" */
} variant;

static const variant variants[] = {
    {"2020-12 (no $schema)", NULL, "2020", false},
    {"4", "http://json-schema.org/draft-04/schema#", "4", true},
    {"2019-09", "https://json-schema.org/draft/2019-09/schema", "2019", false},
};

/* Replaces every "const": X by "enum": [X] inside a schema (property names
 * called "const" under "properties" are kept as they are). */
static void const_to_enum(json_t *s)
{
    if (json_is_array(s)) {
        size_t i;
        json_t *e;
        json_array_foreach(s, i, e) const_to_enum(e);
        return;
    }
    if (!json_is_object(s))
        return;
    json_t *k = json_object_get(s, "const");
    if (k != NULL && json_object_get(s, "enum") == NULL) {
        json_object_set_new(s, "enum", json_pack("[O]", k));
        json_object_del(s, "const");
    }
    const char *key;
    json_t *v;
    json_object_foreach(s, key, v)
    {
        if (strcmp(key, "properties") == 0 || strcmp(key, "$defs") == 0 ||
            strcmp(key, "definitions") == 0 || strcmp(key, "patternProperties") == 0) {
            const char *k2;
            json_t *v2;
            json_object_foreach(v, k2, v2) const_to_enum(v2);
        } else if (strcmp(key, "enum") != 0 && strcmp(key, "default") != 0) {
            const_to_enum(v);
        }
    }
}

static void run_variant(const variant *va, json_t *sets[2], json_t *inst, const char *src,
                        const char *work, double seconds)
{
    char path[4096];
    json_error_t jerr;
    size_t n = json_array_size(inst);
    bench_case *cases = calloc(n, sizeof *cases);
    json_t *dump = json_array();
    size_t i;
    json_t *c;
    int mismatches = 0;
    json_array_foreach(inst, i, c)
    {
        const char *tool = json_string_value(json_object_get(c, "tool"));
        json_t *entry = find_tool(sets, tool);
        json_t *params =
            json_deep_copy(json_object_get(json_object_get(entry, "definition"), "parameters"));
        if (va->const_as_enum)
            const_to_enum(params);
        if (va->schema)
            json_object_set_new(params, "$schema", json_string(va->schema));
        char *stext = json_dumps(params, JSON_COMPACT);
        if (agt_schema_compile(&cases[i].schema, stext, strlen(stext)) != AGT_OK) {
            fprintf(stderr, "%s (%s): schema does not compile: %s\n", tool, va->label,
                    agt_error_message());
            exit(1);
        }
        cases[i].text[0] = json_dumps(json_object_get(c, "valid"), JSON_COMPACT);
        cases[i].text[1] = json_dumps(json_object_get(c, "invalid"), JSON_COMPACT);
        for (int k = 0; k < 2; k++) {
            int rc = agt_schema_validate(cases[i].schema, cases[i].text[k],
                                         strlen(cases[i].text[k]), NULL);
            if (rc != (k == 0 ? AGT_OK : AGT_EINVALID)) {
                fprintf(stderr, "note: %s (%s) %s instance gave %d\n", tool, va->label,
                        k ? "invalid" : "valid", rc);
                mismatches++;
            }
        }
        json_array_append_new(dump, json_pack("{s:o, s:[s,s]}", "schema", params, "instances",
                                              cases[i].text[0], cases[i].text[1]));
        free(stext);
    }
    snprintf(path, sizeof path, "%s/schema-cases-%s.json", work, va->ajv);
    json_dump_file(dump, path, JSON_COMPACT);

    /* ours: text in, verdict out (parse + validate), first error only */
    long count = 0;
    double start = now_s(), end = start + seconds;
    while (now_s() < end) {
        for (size_t k = 0; k < n; k++)
            for (int v = 0; v < 2; v++)
                agt_schema_validate(cases[k].schema, cases[k].text[v], strlen(cases[k].text[v]),
                                    NULL);
        count += (long)(2 * n);
    }
    double ours = (double)count / (now_s() - start);

    /* ours on already-parsed instances: the validator alone */
    json_t **parsed = calloc(2 * n, sizeof *parsed);
    for (size_t k = 0; k < n; k++)
        for (int v = 0; v < 2; v++)
            parsed[2 * k + (size_t)v] = json_loads(cases[k].text[v], 0, &jerr);
    count = 0;
    start = now_s();
    end = start + seconds;
    while (now_s() < end) {
        for (size_t k = 0; k < n; k++)
            for (int v = 0; v < 2; v++)
                agti_schema_validate_json(cases[k].schema, parsed[2 * k + (size_t)v], NULL);
        count += (long)(2 * n);
    }
    double ours_parsed = (double)count / (now_s() - start);
    for (size_t k = 0; k < 2 * n; k++)
        json_decref(parsed[k]);
    free(parsed);

    char cmd[8192];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s/bench/schema/bench_jsonschema.py %s %g", src,
             path, seconds);
    double py = run_external(cmd);
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s/bench/schema/bench_jsonschema.py %s %g parsed",
             src, path, seconds);
    double py_parsed = run_external(cmd);
    snprintf(cmd, sizeof cmd, "node %s/bench/schema/bench_ajv.js %s %g %s text %s 2>/dev/null", src,
             path, seconds, work, va->ajv);
    double ajv = run_external(cmd);
    snprintf(cmd, sizeof cmd, "node %s/bench/schema/bench_ajv.js %s %g %s parsed %s 2>/dev/null",
             src, path, seconds, work, va->ajv);
    double ajv_parsed = run_external(cmd);

    printf("bench-schema, draft %s: %zu tool schemas, %zu instances (valid + invalid)%s\n",
           va->label, n, 2 * n,
           mismatches ? " [some instances disagreed with their label, see notes]" : "");
    printf("  %-28s %14s %14s\n", "validations per second", "text->verdict", "parsed->verdict");
    printf("  %-28s %14.0f %14.0f\n", "libagenttools", ours, ours_parsed);
    if (py > 0)
        printf("  %-28s %14.0f %14.0f   ours/python = %.1fx and %.1fx\n", "python3-jsonschema", py,
               py_parsed, ours / py, py_parsed > 0 ? ours_parsed / py_parsed : 0);
    else
        printf("  python3-jsonschema not available (apt-get install python3-jsonschema)\n");
    if (ajv > 0)
        printf("  %-28s %14.0f %14.0f   ours/ajv    = %.2fx and %.2fx\n", "ajv 8 (node)", ajv,
               ajv_parsed, ours / ajv, ajv_parsed > 0 ? ours_parsed / ajv_parsed : 0);
    else
        printf("  ajv not available (npm install --prefix %s ajv ajv-draft-04)\n", work);
    fflush(stdout);
    for (size_t k = 0; k < n; k++) {
        agt_schema_free(cases[k].schema);
        free(cases[k].text[0]);
        free(cases[k].text[1]);
    }
    free(cases);
    json_decref(dump);
}

/* ---- --calls: single calls, small and large, against Ajv -------------- */

/* Text an agent writes: source lines with quotes, tabs, backslashes and a
 * little non-ASCII, repeated and cut at a line end to about `size` bytes. */
static char *sample_text(size_t size, int shift)
{
    static const char *lines[] = {
        "/* Summarise the report: one line per section, in order. */\n",
        "static int report_summary(const report *r, FILE *out)\n",
        "{\n",
        "\tfor (size_t i = 0; i < r->n_sections; i++) {\n",
        "\t\tconst section *s = &r->sections[i];\n",
        "\t\tif (fprintf(out, \"%s: %zu items\\n\", s->title, s->n_items) < 0)\n",
        "\t\t\treturn -1; // the caller reports errno\n",
        "\t}\n",
        "\treturn 0;\n",
        "}\n",
        "\n",
        "# Notes \xe2\x80\x94 r\xc3\xa9sum\xc3\xa9 of the \"weekly\" run (C:\\build\\out)\n",
        "- totals are in \xe2\x82\xac; see `report_summary` above.\n",
        "\n",
    };
    size_t n = sizeof lines / sizeof lines[0];
    char *t = malloc(size + 256);
    size_t len = 0;
    for (size_t k = 0; len < size; k++) {
        const char *ln = lines[(k + (size_t)shift) % n];
        size_t l = strlen(ln);
        memcpy(t + len, ln, l);
        len += l;
    }
    t[len] = '\0';
    return t;
}

static char *call_text(const char *fmt, const char *a, const char *b)
{
    json_t *sa = json_string(a), *sb = b ? json_string(b) : NULL;
    char *ja = json_dumps(sa, JSON_ENCODE_ANY), *jb = sb ? json_dumps(sb, JSON_ENCODE_ANY) : NULL;
    size_t n = strlen(fmt) + strlen(ja) + (jb ? strlen(jb) : 0) + 1;
    char *out = malloc(n);
    if (jb)
        snprintf(out, n, fmt, ja, jb);
    else
        snprintf(out, n, fmt, ja);
    free(ja);
    free(jb);
    json_decref(sa);
    json_decref(sb);
    return out;
}

typedef struct {
    const char *key, *label, *tool;
    char *text;
    bool valid; /* expected verdict */
    bool timed;
    agt_schema *schema;
} call_case;

typedef struct {
    FILE *to, *from;
    pid_t pid;
} node_proc;

static bool node_start(node_proc *np, const char *src, const char *cases, const char *work)
{
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0)
        return false;
    char script[4096];
    snprintf(script, sizeof script, "%s/bench/schema/bench_ajv.js", src);
    np->pid = fork();
    if (np->pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[1]);
        close(out[0]);
        execlp("node", "node", script, "serve", cases, work, (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    np->to = fdopen(in[1], "w");
    np->from = fdopen(out[0], "r");
    return np->pid > 0;
}

static bool node_ask(node_proc *np, char *line, size_t cap, const char *fmt, int a, long b)
{
    fprintf(np->to, fmt, a, b);
    fputc('\n', np->to);
    fflush(np->to);
    return fgets(line, (int)cap, np->from) != NULL;
}

static int run_calls(const char *src, const char *work, int pairs)
{
    char path[4096];
    json_error_t jerr;
    snprintf(path, sizeof path, "%s/lib/registry/builtin/chat.json", src);
    json_t *set = json_load_file(path, 0, &jerr);
    snprintf(path, sizeof path, "%s/bench/schema/instances.json", src);
    json_t *inst = json_load_file(path, 0, &jerr);
    if (set == NULL || inst == NULL) {
        fprintf(stderr, "bench-schema: cannot read the tool set or instances: %s\n", jerr.text);
        return 1;
    }
    json_t *sets[2] = {set, json_array()};
    char *small[2][2] = {{NULL, NULL}, {NULL, NULL}}; /* Grep, Read: valid, invalid */
    size_t i;
    json_t *c;
    json_array_foreach(inst, i, c)
    {
        const char *tool = json_string_value(json_object_get(c, "tool"));
        int k = strcmp(tool, "Grep") == 0 ? 0 : strcmp(tool, "Read") == 0 ? 1 : -1;
        if (k >= 0) {
            small[k][0] = json_dumps(json_object_get(c, "valid"), JSON_COMPACT);
            small[k][1] = json_dumps(json_object_get(c, "invalid"), JSON_COMPACT);
        }
    }
    char *t37 = sample_text(3700, 0), *t100 = sample_text(100 * 1024, 0),
         *t1m = sample_text(1024 * 1024, 0), *old20 = sample_text(20 * 1024, 3),
         *new20 = sample_text(20 * 1024, 5);
    const char *wfmt = "{\"path\":\"src/report.c\",\"content\":%s}";
    call_case cases[] = {
        {"grep", "Grep call (small: pattern, path, glob, mode, flags)", "Grep", small[0][0], true,
         true, NULL},
        {"read", "Read call (small: path, offset, lines)", "Read", small[1][0], true, true, NULL},
        {"write-3.7k", "Write call, 3.7 KB content", "Write", call_text(wfmt, t37, NULL), true,
         true, NULL},
        {"write-100k", "Write call, 100 KiB content", "Write", call_text(wfmt, t100, NULL), true,
         true, NULL},
        {"write-1m", "Write call, 1 MiB content", "Write", call_text(wfmt, t1m, NULL), true, true,
         NULL},
        {"edit-20k", "Edit call, 20 KiB old_string and new_string", "Edit",
         call_text("{\"path\":\"src/report.c\",\"old_string\":%s,\"new_string\":%s,"
                   "\"replace_all\":false}",
                   old20, new20),
         true, true, NULL},
        {"grep-bad", "Grep call, invalid (bad enum, string for an integer)", "Grep", small[0][1],
         false, true, NULL},
        {"write-100k-bad", "Write call, 100 KiB content, invalid mode", "Write",
         call_text("{\"path\":\"src/report.c\",\"content\":%s,\"mode\":\"truncate\"}", t100, NULL),
         false, true, NULL},
        /* verdicts compared, not timed */
        {"read-bad", "", "Read", small[1][1], false, false, NULL},
        {"write-no-path", "", "Write", call_text("{\"content\":%s}", t37, NULL), false, false,
         NULL},
        {"write-extra", "", "Write",
         call_text("{\"path\":\"a\",\"content\":%s,\"append\":true}", t37, NULL), false, false,
         NULL},
        {"edit-empty-old", "", "Edit",
         call_text("{\"path\":\"a\",\"old_string\":\"\",\"new_string\":%s}", t37, NULL), false,
         false, NULL},
        {"write-cut", "", "Write", call_text("{\"path\":\"a\",\"content\":%s", t37, NULL), false,
         false, NULL},
        {"write-bad-escape", "", "Write", strdup("{\"path\":\"a\",\"content\":\"x\\qy\"}"), false,
         false, NULL},
        {"write-escapes", "", "Write",
         strdup("{\"path\":\"a\\/b\",\"content\":\"\\u00e9\\ud83d\\ude00\\\"\\\\\\b\\f\\n\\r\\t"
                "\\u0041\"}"),
         true, false, NULL},
    };
    size_t n = sizeof cases / sizeof cases[0];
    json_t *dump = json_array();
    for (size_t k = 0; k < n; k++) {
        json_t *params = json_object_get(
            json_object_get(find_tool(sets, cases[k].tool), "definition"), "parameters");
        char *stext = json_dumps(params, JSON_COMPACT);
        if (agt_schema_compile(&cases[k].schema, stext, strlen(stext)) != AGT_OK) {
            fprintf(stderr, "%s: schema does not compile: %s\n", cases[k].tool,
                    agt_error_message());
            return 1;
        }
        free(stext);
        json_array_append_new(
            dump, json_pack("{s:O, s:[s]}", "schema", params, "instances", cases[k].text));
    }
    snprintf(path, sizeof path, "%s/schema-calls.json", work);
    if (json_dump_file(dump, path, JSON_COMPACT) != 0) {
        fprintf(stderr, "bench-schema: cannot write %s\n", path);
        return 1;
    }
    json_decref(dump);

    node_proc np;
    char line[512];
    signal(SIGPIPE, SIG_IGN);
    if (!node_start(&np, src, path, work) ||
        !node_ask(&np, line, sizeof line, "check%.0d%.0ld", 0, 0)) {
        printf("ajv not available (npm install --prefix %s ajv@8)\n", work);
        return 1;
    }
    int bad = 0;
    for (size_t k = 0; k < n; k++) {
        int rc = agt_schema_validate(cases[k].schema, cases[k].text, strlen(cases[k].text), NULL);
        bool ours = rc == AGT_OK, theirs = line[k] == 'v';
        if (rc != AGT_OK && rc != AGT_EINVALID && rc != AGT_EPARSE) {
            printf("check %s: ours failed with %d: %s\n", cases[k].key, rc, agt_error_message());
            bad++;
        } else if (ours != cases[k].valid || theirs != cases[k].valid) {
            printf("check %s: expected %s, ours %s, ajv %s\n", cases[k].key,
                   cases[k].valid ? "valid" : "invalid", ours ? "valid" : "invalid",
                   theirs ? "valid" : "invalid");
            bad++;
        }
    }
    printf("verdicts: %zu instances (%d disagreeing), ours and ajv %s\n", n, bad,
           bad ? "DIFFER" : "agree");
    if (bad)
        return 1;

    for (size_t k = 0; k < n && cases[k].timed; k++) {
        call_case *cc = &cases[k];
        size_t len = strlen(cc->text);
        /* warm-up, then a batch of about 40 ms of ours */
        long batch = 1;
        for (;;) {
            double t0 = now_s();
            for (long r = 0; r < batch; r++)
                agt_schema_validate(cc->schema, cc->text, len, NULL);
            if (now_s() - t0 > 0.04)
                break;
            batch *= 2;
        }
        node_ask(&np, line, sizeof line, "warm %d %ld", (int)k, 300);
        double *ow = calloc((size_t)pairs, sizeof *ow), *oc = calloc((size_t)pairs, sizeof *oc);
        double *aw = calloc((size_t)pairs, sizeof *aw), *ac = calloc((size_t)pairs, sizeof *ac);
        for (int p = 0; p < pairs; p++) {
            double w0 = now_s(), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
            for (long r = 0; r < batch; r++)
                agt_schema_validate(cc->schema, cc->text, len, NULL);
            ow[p] = (now_s() - w0) * 1e9 / (double)batch;
            oc[p] = (clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0) * 1e9 / (double)batch;
            double wns = 0, cns = 0;
            if (!node_ask(&np, line, sizeof line, "time %d %ld", (int)k, batch) ||
                sscanf(line, "ns %lf cpu %lf", &wns, &cns) != 2) {
                printf("ajv stopped answering\n");
                return 1;
            }
            aw[p] = wns / (double)batch;
            ac[p] = cns / (double)batch;
        }
        double mow = median(ow, pairs), moc = median(oc, pairs), maw = median(aw, pairs),
               mac = median(ac, pairs);
        printf("call %s ours_ns %.0f ajv_ns %.0f ratio %.2f cpu_ratio %.2f n %ld bytes %zu "
               "verdict %s label %s\n",
               cc->key, mow, maw, mow / maw, mac > 0 ? moc / mac : 0, batch, len,
               cc->valid ? "valid" : "invalid", cc->label);
        fflush(stdout);
        free(ow);
        free(oc);
        free(aw);
        free(ac);
    }
    fprintf(np.to, "quit\n");
    fclose(np.to);
    fclose(np.from);
    waitpid(np.pid, NULL, 0);
    for (size_t k = 0; k < n; k++) {
        agt_schema_free(cases[k].schema);
        free(cases[k].text != small[0][0] && cases[k].text != small[0][1] &&
                     cases[k].text != small[1][0] && cases[k].text != small[1][1]
                 ? cases[k].text
                 : NULL);
    }
    for (int k = 0; k < 4; k++)
        free(small[k / 2][k % 2]);
    free(t37);
    free(t100);
    free(t1m);
    free(old20);
    free(new20);
    json_decref(sets[1]);
    json_decref(set);
    json_decref(inst);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && strcmp(argv[1], "--calls") == 0)
        return run_calls(argv[2], argv[3], argc > 4 ? atoi(argv[4]) : 11);
    if (argc < 3) {
        fprintf(stderr, "usage: bench-schema SOURCE_DIR WORK_DIR [SECONDS]\n"
                        "       bench-schema --calls SOURCE_DIR WORK_DIR [PAIRS]\n");
        return 2;
    }
    const char *src = argv[1], *work = argv[2];
    double seconds = argc > 3 ? atof(argv[3]) : 2.0;
    char path[4096];
    json_error_t jerr;
    json_t *sets[2];
    snprintf(path, sizeof path, "%s/lib/registry/builtin/review.json", src);
    sets[0] = json_load_file(path, 0, &jerr);
    snprintf(path, sizeof path, "%s/lib/registry/builtin/chat.json", src);
    sets[1] = json_load_file(path, 0, &jerr);
    snprintf(path, sizeof path, "%s/bench/schema/instances.json", src);
    json_t *inst = json_load_file(path, 0, &jerr);
    if (!sets[0] || !sets[1] || !inst) {
        fprintf(stderr, "bench-schema: cannot read the tool sets or instances: %s\n", jerr.text);
        return 1;
    }
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++)
        run_variant(&variants[v], sets, inst, src, work, seconds);

    /* full dispatch of a small call through a session */
    agt_registry *reg = NULL;
    agt_session *s = NULL;
    agt_registry_new(&reg);
    agt_registry_load_builtin(reg, "chat");
    agt_registry_set_provider(reg, "Read", ok_provider, NULL);
    agt_registry_freeze(reg);
    agt_session_new(&s, reg, work);
    const char *small = "{\"path\":\"src/main.c\",\"line_offset\":10,\"n_lines\":50}";
    long calls = 0;
    double start = now_s(), end = start + seconds;
    while (now_s() < end) {
        for (int k = 0; k < 1000; k++) {
            agt_result *r = NULL;
            agt_session_dispatch(s, "c1", "Read", small, &r);
            agt_result_free(r);
        }
        calls += 1000;
    }
    double dispatch_ns = (now_s() - start) * 1e9 / (double)calls;
    printf("  dispatch of a small Read call: %.0f ns per call (look-up, parse, validate, "
           "provider, result)\n",
           dispatch_ns);
    agt_session_free(s);
    agt_registry_free(reg);
    json_decref(inst);
    json_decref(sets[0]);
    json_decref(sets[1]);
    return 0;
}
