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
 */
#include <agenttools/agenttools.h>
#include "schema/schema_internal.h"
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
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

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench-schema SOURCE_DIR WORK_DIR [SECONDS]\n");
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
