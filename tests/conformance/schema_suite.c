/*
 * JSON Schema conformance: every file of the official JSON-Schema-Test-Suite
 * copy in AGT_SHARED_DIR/corpus/jsonschema-suite (see its README), for every
 * draft it holds (draft4, draft6, draft7, draft2019-09 when present,
 * draft2020-12), in three parts:
 *   required  tests/<draft>/NAME.json
 *   optional  tests/<draft>/optional/NAME.json
 *   format    tests/<draft>/optional/format/NAME.json, format as an assertion
 *             (the README: "Tests in optional/format/ expect format to be an
 *             assertion")
 * The draft is set with agt_schema_options_set_draft() (a "$schema" in a test
 * schema still wins, as it should). Remote documents
 * (http://localhost:1234/...) are the suite's remotes/ folder, registered
 * with agt_schema_options_add_resource().
 *
 * The files are read with the schema component's own JSON reader, so numbers
 * keep their text; each schema and instance goes through the text API
 * (agt_schema_compile_with, agt_schema_validate) and, when jansson can hold
 * every number of it exactly, also through the jansson API in first-error
 * and all-errors mode: all must agree with the suite. One TAP line per case,
 * a "# draft part: passed/total" line per draft and part at the end.
 *
 * There is no skip list: every case of every file must pass.
 */
#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"
#include "core/core.h"
#include "schema/jv.h"
#include "schema/schema_internal.h"

static const struct {
    const char *dir;
    int draft;
} drafts[] = {
    {"draft4", AGT_DRAFT_4},
    {"draft6", AGT_DRAFT_6},
    {"draft7", AGT_DRAFT_7},
    {"draft2019-09", AGT_DRAFT_2019_09},
    {"draft2020-12", AGT_DRAFT_2020_12},
};

static const char *const parts[] = {"required", "optional", "format"};

static int cmpstr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    agti_buf b = AGTI_BUF_INIT;
    char chunk[65536];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0)
        agti_buf_put(&b, chunk, got);
    fclose(f);
    *len = b.len;
    return agti_buf_detach(&b);
}

static size_t list_json(const char *dir, char ***out)
{
    DIR *d = opendir(dir);
    size_t n = 0, cap = 0;
    char **names = NULL;
    struct dirent *e;
    *out = NULL;
    if (d == NULL)
        return 0;
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l < 6 || strcmp(e->d_name + l - 5, ".json") != 0)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            names = realloc(names, cap * sizeof *names);
        }
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmpstr);
    *out = names;
    return n;
}

static void add_remotes(agt_schema_options *o, const char *dir, const char *rel)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    if (d == NULL)
        return;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[1024], r[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        snprintf(r, sizeof r, "%s%s", rel, e->d_name);
        struct stat st;
        if (stat(path, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            char sub[1100];
            snprintf(sub, sizeof sub, "%s/", r);
            add_remotes(o, path, sub);
            continue;
        }
        size_t len;
        char *buf = read_file(path, &len);
        if (buf == NULL)
            continue;
        char uri[1200];
        snprintf(uri, sizeof uri, "http://localhost:1234/%s", r);
        if (agt_schema_options_add_resource(o, uri, buf, len) != AGT_OK)
            t_diag("remote %s: %s", uri, agt_error_message());
        free(buf);
    }
    closedir(d);
}

/* TAP reads " # WORD" in a test name as a directive: spell '#' as "no.". */
static const char *tap_safe(const char *in, size_t len, char *buf, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < len && o + 4 < cap; i++) {
        char ch = in[i];
        if (ch == '#') {
            memcpy(buf + o, "no.", 3);
            o += 3;
        } else if (ch != '\n' && ch != '\r' && ch != '\0') {
            buf[o++] = ch;
        }
    }
    buf[o] = '\0';
    return buf;
}

static const char *str_member(const agti_jv *o, const char *key, size_t *len)
{
    const agti_jv *v = agti_jv_get(o, key, strlen(key));
    if (v == NULL || v->type != AGTI_JV_STRING) {
        *len = 0;
        return "";
    }
    *len = v->len;
    return v->u.s;
}

/* True when jansson reads the text back to the same numbers: no integer
 * beyond 64 bits, no decimal with more digits than a double keeps. */
static int jansson_exact(const agti_jv *v)
{
    switch (v->type) {
    case AGTI_JV_BIG:
        return 0;
    case AGTI_JV_ARRAY:
        for (size_t i = 0; i < v->len; i++)
            if (!jansson_exact(&v->u.a[i]))
                return 0;
        return 1;
    case AGTI_JV_OBJECT:
        for (size_t i = 0; i < v->len; i++)
            if (!jansson_exact(&v->u.o[i].val))
                return 0;
        return 1;
    default:
        return 1;
    }
}

typedef struct counts {
    int passed, total;
} counts;

/* Runs one case; returns 1 when the library agrees with the suite. */
static int run_case(const agt_schema *ts, const agt_schema *js, const agti_jv *data, int want)
{
    agti_buf b = AGTI_BUF_INIT;
    agti_jv_dump(&b, data);
    int v3 = agt_schema_validate(ts, agti_buf_cstr(&b), b.len, NULL);
    char *errtext = NULL;
    int v4 = agt_schema_validate(ts, agti_buf_cstr(&b), b.len, &errtext);
    int ok = (v3 == AGT_OK) == want && v3 == v4 && (v3 == AGT_OK) == (errtext == NULL);
    if (v3 != AGT_OK && v3 != AGT_EINVALID)
        t_diag("validate: %s", agt_error_message());
    free(errtext);
    if (ok && js != NULL) {
        json_error_t jerr;
        json_t *inst =
            json_loadb(agti_buf_cstr(&b), b.len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
        json_t *errors = NULL;
        int v1 = agti_schema_validate_json(js, inst, NULL);
        int v2 = agti_schema_validate_json(js, inst, &errors);
        if (v1 != v3 || v2 != v3 ||
            (v1 == AGT_OK ? errors != NULL : json_array_size(errors) == 0)) {
            t_diag("jansson API gives %d/%d, text API %d", v1, v2, v3);
            ok = 0;
        }
        json_decref(errors);
        json_decref(inst);
    }
    agti_buf_free(&b);
    return ok;
}

static void run_file(const char *path, const char *label, const agt_schema_options *opts,
                     counts *cnt)
{
    size_t len;
    char *text = read_file(path, &len);
    agti_jarena a;
    agti_jarena_init(&a, NULL, 0);
    const agti_jv *groups = text ? agti_jv_parse(&a, text, len, path) : NULL;
    if (groups == NULL || groups->type != AGTI_JV_ARRAY) {
        t_check(0, "%s: cannot load: %s", label, text ? agt_error_message() : "unreadable");
        free(text);
        agti_jarena_free(&a);
        return;
    }
    int passed = 0, total = 0;
    for (size_t gi = 0; gi < groups->len; gi++) {
        const agti_jv *g = &groups->u.a[gi];
        size_t gl;
        const char *graw = str_member(g, "description", &gl);
        char gdesc[512];
        tap_safe(graw, gl, gdesc, sizeof gdesc);
        const agti_jv *schema = agti_jv_get(g, "schema", 6);
        const agti_jv *tests = agti_jv_get(g, "tests", 5);
        agti_buf sb = AGTI_BUF_INIT;
        agti_jv_dump(&sb, schema);
        agt_schema *ts = NULL, *js = NULL;
        int rc = agt_schema_compile_with(&ts, agti_buf_cstr(&sb), sb.len, opts);
        char cerr[512] = "";
        if (rc != AGT_OK)
            snprintf(cerr, sizeof cerr, "%s", agt_error_message());
        json_t *jschema = NULL;
        if (rc == AGT_OK && jansson_exact(schema)) {
            json_error_t jerr;
            jschema =
                json_loadb(agti_buf_cstr(&sb), sb.len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
            if (agti_schema_compile_json(&js, jschema, opts) != AGT_OK) {
                snprintf(cerr, sizeof cerr, "jansson API: %s", agt_error_message());
                rc = AGT_ERROR;
            }
        }
        agti_buf_free(&sb);
        for (size_t ti = 0; tests && ti < tests->len; ti++) {
            const agti_jv *t = &tests->u.a[ti];
            size_t tl;
            const char *traw = str_member(t, "description", &tl);
            char tdesc[512], name[2000];
            tap_safe(traw, tl, tdesc, sizeof tdesc);
            snprintf(name, sizeof name, "%s: %s: %s", label, gdesc, tdesc);
            const agti_jv *valid = agti_jv_get(t, "valid", 5);
            int want = valid && valid->type == AGTI_JV_TRUE;
            const agti_jv *data = agti_jv_get(t, "data", 4);
            total++;
            int ok = rc == AGT_OK && data != NULL &&
                     run_case(ts, jansson_exact(data) ? js : NULL, data, want);
            if (rc != AGT_OK)
                t_diag("compile failed: %s", cerr);
            if (ok)
                passed++;
            t_check(ok, "%s", name);
        }
        agt_schema_free(ts);
        agt_schema_free(js);
        json_decref(jschema);
    }
    t_diag("%s: %d/%d", label, passed, total);
    cnt->passed += passed;
    cnt->total += total;
    agti_jarena_free(&a);
    free(text);
}

int main(void)
{
    const char *shared = getenv("AGT_SHARED_DIR");
    char root[1024];
    snprintf(root, sizeof root, "%s/corpus/jsonschema-suite", shared ? shared : "../shared");
    char remotes[1100];
    snprintf(remotes, sizeof remotes, "%s/remotes", root);
    counts cnt[sizeof drafts / sizeof drafts[0]][3];
    memset(cnt, 0, sizeof cnt);
    int present[sizeof drafts / sizeof drafts[0]] = {0};
    for (size_t d = 0; d < sizeof drafts / sizeof drafts[0]; d++) {
        for (int part = 0; part < 3; part++) {
            agt_schema_options *o = NULL;
            agt_schema_options_new(&o);
            agt_schema_options_set_draft(o, drafts[d].draft);
            agt_schema_options_set_format_assertion(o, part == 2);
            add_remotes(o, remotes, "");
            char dir[1400];
            snprintf(dir, sizeof dir, "%s/tests/%s%s", root, drafts[d].dir,
                     part == 0   ? ""
                     : part == 1 ? "/optional"
                                 : "/optional/format");
            char **names;
            size_t n = list_json(dir, &names);
            if (n)
                present[d] = 1;
            for (size_t i = 0; i < n; i++) {
                char path[1800], label[700];
                snprintf(path, sizeof path, "%s/%s", dir, names[i]);
                snprintf(label, sizeof label, "%s/%s%s", drafts[d].dir,
                         part == 0   ? ""
                         : part == 1 ? "optional/"
                                     : "optional/format/",
                         names[i]);
                run_file(path, label, o, &cnt[d][part]);
                free(names[i]);
            }
            free(names);
            agt_schema_options_free(o);
        }
    }
    t_check(present[0] && present[2] && present[4],
            "the suite copy in %s holds draft4, draft7 "
            "and draft2020-12",
            root);
    for (size_t d = 0; d < sizeof drafts / sizeof drafts[0]; d++) {
        if (!present[d]) {
            t_diag("%s: not in the suite copy", drafts[d].dir);
            continue;
        }
        for (int part = 0; part < 3; part++)
            t_diag("%s %s: %d/%d", drafts[d].dir, parts[part], cnt[d][part].passed,
                   cnt[d][part].total);
    }
    return t_done();
}
