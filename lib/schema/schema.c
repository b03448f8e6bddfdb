/* Public API of the JSON Schema component: options, compile, validate. */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "schema_internal.h"
#include "schema_priv.h"

/* ---- schema text with big numbers ------------------------------------- */

const char *agti_bigmap_get(const agti_bigmap *m, const json_t *v, size_t *len)
{
    for (size_t i = 0; m && i < m->n; i++)
        if (m->vals[i] == v) {
            *len = m->lens[i];
            return m->texts[i];
        }
    return NULL;
}

void agti_bigmap_free(agti_bigmap *m)
{
    for (size_t i = 0; i < m->n; i++)
        free((char *)m->texts[i]);
    free(m->vals);
    free(m->texts);
    free(m->lens);
    memset(m, 0, sizeof *m);
}

static bool has_big(const agti_jv *v)
{
    if (v->type == AGTI_JV_BIG)
        return true;
    if (v->type == AGTI_JV_ARRAY)
        for (size_t i = 0; i < v->len; i++)
            if (has_big(&v->u.a[i]))
                return true;
    if (v->type == AGTI_JV_OBJECT)
        for (size_t i = 0; i < v->len; i++)
            if (has_big(&v->u.o[i].val))
                return true;
    return false;
}

/* v as jansson values. m != NULL: a schema document, a big number becomes a
 * real with its text in m. m == NULL: as jansson would read the text, else
 * NULL with *redo set (a big number, an integer past 64 bits, a NUL in a
 * key: jansson refuses them or reads them its own way). NULL alone: out of
 * memory. */
static json_t *to_json(const agti_jv *v, agti_bigmap *m, bool *redo)
{
    switch (v->type) {
    case AGTI_JV_NULL:
        return json_null();
    case AGTI_JV_TRUE:
        return json_true();
    case AGTI_JV_FALSE:
        return json_false();
    case AGTI_JV_INT:
        return json_integer((json_int_t)v->u.i);
    case AGTI_JV_REAL:
        if (m == NULL && v->len == 1) { /* written as an integer, past 64 bits */
            *redo = true;
            return NULL;
        }
        return json_real(v->u.d);
    case AGTI_JV_STRING:
        return json_stringn_nocheck(v->u.s, v->len);
    case AGTI_JV_BIG: {
        if (m == NULL) {
            *redo = true;
            return NULL;
        }
        char t[128];
        size_t n = v->len < sizeof t - 1 ? v->len : sizeof t - 1;
        memcpy(t, v->u.s, n);
        t[n] = '\0';
        double d = strtod(t, NULL);
        if (!isfinite(d))
            d = d < 0 ? -DBL_MAX : DBL_MAX;
        json_t *r = json_real(d);
        char *text = r ? malloc(v->len + 1) : NULL;
        if (m->n == m->cap) {
            size_t nc = m->cap ? m->cap * 2 : 8;
            const json_t **nv = realloc(m->vals, nc * sizeof *nv);
            if (nv)
                m->vals = nv;
            const char **nt = nv ? realloc(m->texts, nc * sizeof *nt) : NULL;
            if (nt)
                m->texts = nt;
            size_t *nl = nt ? realloc(m->lens, nc * sizeof *nl) : NULL;
            if (nl) {
                m->lens = nl;
                m->cap = nc;
            }
        }
        if (r == NULL || text == NULL || m->n == m->cap) {
            json_decref(r);
            free(text);
            return NULL;
        }
        memcpy(text, v->u.s, v->len);
        text[v->len] = '\0';
        m->vals[m->n] = r;
        m->texts[m->n] = text;
        m->lens[m->n] = v->len;
        m->n++;
        return r;
    }
    case AGTI_JV_ARRAY: {
        json_t *a = json_array();
        for (size_t i = 0; a && i < v->len; i++)
            if (json_array_append_new(a, to_json(&v->u.a[i], m, redo)) != 0) {
                json_decref(a);
                return NULL;
            }
        return a;
    }
    case AGTI_JV_OBJECT: {
        json_t *o = json_object();
        for (size_t i = 0; o && i < v->len; i++) {
            json_t *val = NULL;
            if (m == NULL && memchr(v->u.o[i].key, '\0', v->u.o[i].klen) != NULL)
                *redo = true;
            else
                val = to_json(&v->u.o[i].val, m, redo);
            /* a repeated key: the last value in the first one's place, as jansson */
            if (val == NULL ||
                json_object_setn_new_nocheck(o, v->u.o[i].key, v->u.o[i].klen, val) != 0) {
                json_decref(o);
                return NULL;
            }
        }
        return o;
    }
    default:
        return NULL;
    }
}

json_t *agti_schema_parse_text(const char *text, size_t len, const char *what, agti_bigmap *big)
{
    memset(big, 0, sizeof *big);
    agti_jarena a;
    agti_jarena_init(&a, NULL, 0);
    const agti_jv *v = agti_jv_parse(&a, text, len, what);
    json_t *doc;
    if (v == NULL || !has_big(v)) {
        /* the common case (and jansson's error message for bad text) */
        agti_jarena_free(&a);
        return agti_json_parse(text, len, what);
    }
    bool redo = false;
    doc = to_json(v, big, &redo);
    agti_jarena_free(&a);
    if (doc == NULL) {
        agti_bigmap_free(big);
        agti_oom();
    }
    return doc;
}

/* Whether valid JSON text may hold what jansson refuses and jv reads: a
 * "\u0000" (in a key), or, outside the strings, a number with an exponent
 * or of 19 digits or more (past a double's range, an integer past 64
 * bits). jv keeps only the last value of a repeated key, so its tree
 * cannot tell (`{"a":1e999,"a":2}`, `{"a":{"\u0000":1},"a":2}`); the text
 * is scanned instead (memchr from quote to quote). */
static bool risky_text(const char *t, size_t n)
{
    if (memmem(t, n, "\\u0000", 6) != NULL)
        return true;
    const char *end = t + n;
    for (const char *p = t; p < end;) {
        if (*p == '"') {
            const char *q = p + 1;
            for (;;) { /* the closing quote: after an even run of backslashes */
                q = memchr(q, '"', (size_t)(end - q));
                if (q == NULL)
                    return false;
                size_t bs = 0;
                while (q - bs > p + 1 && q[-1 - (ptrdiff_t)bs] == '\\')
                    bs++;
                q++;
                if (bs % 2 == 0)
                    break;
            }
            p = q;
        } else if ((*p >= '0' && *p <= '9') || *p == '-') {
            size_t digits = 0;
            for (; p < end && strchr("0123456789+-.eE", *p) != NULL && *p != '\0'; p++) {
                if (*p == 'e' || *p == 'E')
                    return true;
                digits += *p >= '0' && *p <= '9';
            }
            if (digits >= 19)
                return true;
        } else {
            p++;
        }
    }
    return false;
}

json_t *agti_schema_read_json(const char *text, size_t len, const char *what)
{
    agti_jarena a;
    _Alignas(16) char first[1024];
    agti_jarena_init(&a, first, sizeof first);
    const agti_jv *v = agti_jv_parse(&a, text, len, what);
    /* jansson's error message for text jv refuses */
    bool redo = v == NULL || risky_text(text, len);
    json_t *r = !redo ? to_json(v, NULL, &redo) : NULL;
    agti_jarena_free(&a);
    if (r != NULL)
        return r;
    if (!redo) {
        agti_oom();
        return NULL;
    }
    return agti_json_parse(text, len, what);
}

int agt_schema_options_new(agt_schema_options **out)
{
    if (out == NULL)
        return agti_error(AGT_EINVAL, "agt_schema_options_new: out is NULL");
    *out = calloc(1, sizeof **out);
    if (*out == NULL)
        return agti_oom();
    (*out)->draft = AGT_DRAFT_AUTO;
    return AGT_OK;
}

void agt_schema_options_free(agt_schema_options *opts)
{
    if (opts == NULL)
        return;
    for (size_t i = 0; i < opts->n_res; i++) {
        free(opts->res_uris[i]);
        json_decref(opts->res_docs[i]);
    }
    free(opts->res_uris);
    free(opts->res_docs);
    free(opts);
}

int agt_schema_options_set_draft(agt_schema_options *opts, int draft)
{
    if (opts == NULL)
        return agti_error(AGT_EINVAL, "agt_schema_options_set_draft: opts is NULL");
    if (draft != AGT_DRAFT_AUTO && draft != AGT_DRAFT_4 && draft != AGT_DRAFT_6 &&
        draft != AGT_DRAFT_7 && draft != AGT_DRAFT_2019_09 && draft != AGT_DRAFT_2020_12)
        return agti_error(AGT_EINVAL,
                          "agt_schema_options_set_draft: unknown draft %d (use AGT_DRAFT_AUTO, "
                          "AGT_DRAFT_4, AGT_DRAFT_6, AGT_DRAFT_7, AGT_DRAFT_2019_09 or "
                          "AGT_DRAFT_2020_12)",
                          draft);
    opts->draft = draft;
    return AGT_OK;
}

int agt_schema_options_set_format_assertion(agt_schema_options *opts, int on)
{
    if (opts == NULL)
        return agti_error(AGT_EINVAL, "agt_schema_options_set_format_assertion: opts is NULL");
    opts->format_assert = on != 0;
    return AGT_OK;
}

int agt_schema_options_add_resource(agt_schema_options *opts, const char *uri, const char *json,
                                    size_t len)
{
    if (opts == NULL || uri == NULL || json == NULL)
        return agti_error(AGT_EINVAL, "agt_schema_options_add_resource: %s is NULL",
                          opts == NULL  ? "opts"
                          : uri == NULL ? "uri"
                                        : "json");
    if (uri[0] == '\0' || strchr(uri, '#') != NULL)
        return agti_error(AGT_EINVAL,
                          "agt_schema_options_add_resource: uri '%s' must be an absolute URI "
                          "without a fragment",
                          uri);
    json_t *doc = agti_json_parse(json, len, uri);
    if (doc == NULL)
        return agt_error_code();
    if (opts->n_res == opts->cap_res) {
        size_t nc = opts->cap_res ? opts->cap_res * 2 : 4;
        char **nu = realloc(opts->res_uris, nc * sizeof *nu);
        if (nu)
            opts->res_uris = nu;
        json_t **nd = nu ? realloc(opts->res_docs, nc * sizeof *nd) : NULL;
        if (nd == NULL) {
            json_decref(doc);
            return agti_oom();
        }
        opts->res_docs = nd;
        opts->cap_res = nc;
    }
    char *u = agti_strdup(uri);
    if (u == NULL) {
        json_decref(doc);
        return agti_oom();
    }
    opts->res_uris[opts->n_res] = u;
    opts->res_docs[opts->n_res] = doc;
    opts->n_res++;
    return AGT_OK;
}

int agt_schema_options_set_resolver(agt_schema_options *opts, agt_schema_resolve_fn fn,
                                    void *payload)
{
    if (opts == NULL)
        return agti_error(AGT_EINVAL, "agt_schema_options_set_resolver: opts is NULL");
    opts->resolver = fn;
    opts->payload = payload;
    return AGT_OK;
}

int agt_schema_resolution_provide(agt_schema_resolution *resolution, const char *json, size_t len)
{
    if (resolution == NULL || json == NULL)
        return agti_error(AGT_EINVAL, "agt_schema_resolution_provide: %s is NULL",
                          resolution == NULL ? "resolution" : "json");
    json_t *doc = agti_json_parse(json, len, "resolved document");
    if (doc == NULL)
        return agt_error_code();
    json_decref(resolution->doc);
    resolution->doc = doc;
    return AGT_OK;
}

int agt_schema_compile(agt_schema **out, const char *json, size_t len)
{
    return agt_schema_compile_with(out, json, len, NULL);
}

int agt_schema_compile_with(agt_schema **out, const char *json, size_t len,
                            const agt_schema_options *opts)
{
    if (out == NULL)
        return agti_error(AGT_EINVAL, "agt_schema_compile: out is NULL");
    *out = NULL;
    if (json == NULL)
        return agti_error(AGT_EINVAL, "agt_schema_compile: json is NULL");
    agti_bigmap big;
    json_t *doc = agti_schema_parse_text(json, len, "schema", &big);
    if (doc == NULL)
        return agt_error_code();
    int rc = agti_schema_compile_big(out, doc, opts, &big);
    json_decref(doc);
    agti_bigmap_free(&big);
    return rc;
}

int agt_schema_validate(const agt_schema *schema, const char *instance, size_t len,
                        char **errors_json)
{
    if (errors_json)
        *errors_json = NULL;
    if (schema == NULL || instance == NULL)
        return agti_error(AGT_EINVAL, "agt_schema_validate: %s is NULL",
                          schema == NULL ? "schema" : "instance");
    _Alignas(16) char first[8192];
    agti_jarena a;
    agti_jarena_init(&a, first, sizeof first);
    const agti_jv *inst = agti_jv_parse(&a, instance, len, "instance");
    if (inst == NULL) {
        agti_jarena_free(&a);
        return agt_error_code();
    }
    json_t *errors = NULL;
    int rc = agti_schema_validate_jv(schema, inst, errors_json ? &errors : NULL);
    agti_jarena_free(&a);
    if (rc == AGT_EINVALID && errors_json && errors) {
        *errors_json = agti_json_dump(errors);
        if (*errors_json == NULL) {
            json_decref(errors);
            return agti_oom();
        }
    }
    json_decref(errors);
    return rc;
}

void agt_schema_free(agt_schema *schema)
{
    agti_schema_destroy(schema);
}
