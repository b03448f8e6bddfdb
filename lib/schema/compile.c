/* Schema compilation: indexes every subschema of every document (base URI,
 * JSON pointer, draft, resource), registers "$id", "$anchor" and
 * "$dynamicAnchor", then turns each schema object into an agti_snode with
 * its "$ref"s resolved to node pointers (cycles are fine: a node is
 * registered before its children are compiled). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "schema_internal.h"
#include "schema_priv.h"

/* ---- arena ----------------------------------------------------------- */

typedef struct arena_chunk {
    struct arena_chunk *next;
    size_t used, cap;
    max_align_t data[];
} arena_chunk;

static void *arena_alloc(agt_schema *s, size_t size)
{
    size = (size + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
    arena_chunk *c = s->arena;
    if (c == NULL || c->cap - c->used < size) {
        size_t cap = size > 16384 ? size : 16384;
        arena_chunk *n = calloc(1, sizeof *n + cap);
        if (n == NULL)
            return NULL;
        n->cap = cap;
        n->next = c;
        s->arena = n;
        c = n;
    }
    void *p = (char *)c->data + c->used;
    c->used += size;
    return p;
}

static void arena_free(agt_schema *s)
{
    arena_chunk *c = s->arena;
    while (c) {
        arena_chunk *n = c->next;
        free(c);
        c = n;
    }
    s->arena = NULL;
}

static char *arena_strndup(agt_schema *s, const char *p, size_t n)
{
    char *d = arena_alloc(s, n + 1);
    if (d) {
        memcpy(d, p, n);
        d[n] = '\0';
    }
    return d;
}

uint32_t agti_schema_hash(const char *s, size_t len)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 16777619u;
    }
    return h;
}

/* ---- maps ------------------------------------------------------------ */

typedef struct sinfo {
    const json_t *json;
    char *base;     /* base URI in effect inside this schema */
    char *path;     /* JSON pointer inside its document */
    int draft;      /* AGT_DRAFT_* */
    unsigned vocab; /* VOC_* of its dialect */
    agti_sres *res;
    bool res_root; /* the root of its resource (a document, or "$id") */
    agti_snode *node;
} sinfo;

typedef struct ptrmap {
    sinfo **slots;
    size_t cap, n;
} ptrmap;

typedef struct strent {
    char *key;
    const json_t *json;
} strent;

typedef struct strmap {
    strent *slots;
    size_t cap, n;
} strmap;

static size_t ptr_hash(const void *p)
{
    uintptr_t x = (uintptr_t)p;
    x ^= x >> 17;
    x *= 0x9E3779B97F4A7C15ull & UINTPTR_MAX;
    x ^= x >> 29;
    return (size_t)x;
}

static sinfo *ptrmap_get(const ptrmap *m, const json_t *j)
{
    if (m->cap == 0)
        return NULL;
    size_t i = ptr_hash(j) & (m->cap - 1);
    while (m->slots[i]) {
        if (m->slots[i]->json == j)
            return m->slots[i];
        i = (i + 1) & (m->cap - 1);
    }
    return NULL;
}

static bool ptrmap_put(ptrmap *m, sinfo *v)
{
    if ((m->n + 1) * 2 > m->cap) {
        size_t ncap = m->cap ? m->cap * 2 : 64;
        sinfo **ns = calloc(ncap, sizeof *ns);
        if (ns == NULL)
            return false;
        for (size_t k = 0; k < m->cap; k++) {
            if (m->slots[k] == NULL)
                continue;
            size_t i = ptr_hash(m->slots[k]->json) & (ncap - 1);
            while (ns[i])
                i = (i + 1) & (ncap - 1);
            ns[i] = m->slots[k];
        }
        free(m->slots);
        m->slots = ns;
        m->cap = ncap;
    }
    size_t i = ptr_hash(v->json) & (m->cap - 1);
    while (m->slots[i])
        i = (i + 1) & (m->cap - 1);
    m->slots[i] = v;
    m->n++;
    return true;
}

static const json_t *strmap_get(const strmap *m, const char *key)
{
    if (m->cap == 0)
        return NULL;
    size_t i = agti_schema_hash(key, strlen(key)) & (m->cap - 1);
    while (m->slots[i].key) {
        if (strcmp(m->slots[i].key, key) == 0)
            return m->slots[i].json;
        i = (i + 1) & (m->cap - 1);
    }
    return NULL;
}

/* First registration wins. */
static bool strmap_put(strmap *m, const char *key, const json_t *j)
{
    if (strmap_get(m, key))
        return true;
    if ((m->n + 1) * 2 > m->cap) {
        size_t ncap = m->cap ? m->cap * 2 : 64;
        strent *ns = calloc(ncap, sizeof *ns);
        if (ns == NULL)
            return false;
        for (size_t k = 0; k < m->cap; k++) {
            if (m->slots[k].key == NULL)
                continue;
            size_t i = agti_schema_hash(m->slots[k].key, strlen(m->slots[k].key)) & (ncap - 1);
            while (ns[i].key)
                i = (i + 1) & (ncap - 1);
            ns[i] = m->slots[k];
        }
        free(m->slots);
        m->slots = ns;
        m->cap = ncap;
    }
    char *k = agti_strdup(key);
    if (k == NULL)
        return false;
    size_t i = agti_schema_hash(key, strlen(key)) & (m->cap - 1);
    while (m->slots[i].key)
        i = (i + 1) & (m->cap - 1);
    m->slots[i].key = k;
    m->slots[i].json = j;
    m->n++;
    return true;
}

/* ---- compiler state -------------------------------------------------- */

typedef struct resinfo {
    agti_sres *res;
    const json_t **danchor_json; /* parallel to res->danchor_names */
    size_t cap;
} resinfo;

typedef struct cctx {
    agt_schema *s;
    const agt_schema_options *opts;
    ptrmap infos;
    strmap ids;
    sinfo **all; /* every sinfo, for freeing */
    size_t n_all, cap_all;
    resinfo *res;
    size_t n_res, cap_res;
    int status;
    int depth;              /* nesting of index_schema / compile_node calls */
    int default_draft;      /* dialect of documents without "$schema": the root's */
    int meta_depth;         /* custom meta-schemas being read for their dialect */
    const agti_bigmap *big; /* texts of the root document's big numbers */
} cctx;

static int c_oom(cctx *c)
{
    if (c->status == AGT_OK)
        c->status = agti_oom();
    return c->status;
}

static int c_fail(cctx *c, int code, const char *fmt, ...) AGTI_PRINTF(3, 4);
static int c_fail(cctx *c, int code, const char *fmt, ...)
{
    if (c->status != AGT_OK)
        return c->status;
    va_list ap;
    va_start(ap, fmt);
    agti_verror(code, fmt, ap);
    va_end(ap);
    c->status = code;
    return code;
}

static bool is_schema(const json_t *j)
{
    return json_is_object(j) || json_is_boolean(j);
}

static agti_sres *new_res(cctx *c)
{
    if (agti_grow(&c->res, &c->cap_res, c->n_res, sizeof *c->res, 8) != AGT_OK)
        return NULL;
    agti_sres *r = arena_alloc(c->s, sizeof *r);
    if (r == NULL)
        return NULL;
    memset(r, 0, sizeof *r);
    c->res[c->n_res].res = r;
    c->res[c->n_res].danchor_json = NULL;
    c->res[c->n_res].cap = 0;
    c->n_res++;
    return r;
}

static bool res_add_danchor(cctx *c, agti_sres *r, const char *name, const json_t *j)
{
    resinfo *ri = NULL;
    for (size_t i = c->n_res; i-- > 0;)
        if (c->res[i].res == r) {
            ri = &c->res[i];
            break;
        }
    if (ri == NULL)
        return false;
    for (size_t i = 0; i < r->n_danchors; i++)
        if (strcmp(r->danchor_names[i], name) == 0)
            return true;
    if (r->n_danchors == ri->cap) {
        size_t ncap = ri->cap ? ri->cap * 2 : 4;
        const char **nn = arena_alloc(c->s, ncap * sizeof *nn);
        agti_snode **nd = arena_alloc(c->s, ncap * sizeof *nd);
        const json_t **nj = realloc(ri->danchor_json, ncap * sizeof *nj);
        if (nn == NULL || nd == NULL || nj == NULL) {
            if (nj)
                ri->danchor_json = nj;
            return false;
        }
        if (r->n_danchors) {
            memcpy(nn, r->danchor_names, r->n_danchors * sizeof *nn);
            memcpy(nd, r->danchor_nodes, r->n_danchors * sizeof *nd);
        }
        r->danchor_names = nn;
        r->danchor_nodes = nd;
        ri->danchor_json = nj;
        ri->cap = ncap;
    }
    const char *nm = arena_strndup(c->s, name, strlen(name));
    if (nm == NULL)
        return false;
    r->danchor_names[r->n_danchors] = nm;
    r->danchor_nodes[r->n_danchors] = NULL;
    ri->danchor_json[r->n_danchors] = j;
    r->n_danchors++;
    return true;
}

/* Strips the fragment of a URI in place; returns a pointer to the fragment
 * text (after '#') or NULL when there was none. */
static char *split_fragment(char *uri)
{
    char *h = strchr(uri, '#');
    if (h == NULL)
        return NULL;
    *h = '\0';
    return h + 1;
}

/* The draft a "$schema" URI names (the meta-schemas json-schema.org
 * publishes, with or without the empty fragment), AGT_DRAFT_AUTO for any
 * other. */
static int draft_from_schema_uri(const char *u)
{
    static const struct {
        const char *uri;
        int draft;
    } known[] = {
        {"http://json-schema.org/draft-04/schema", AGT_DRAFT_4},
        {"http://json-schema.org/draft-06/schema", AGT_DRAFT_6},
        {"http://json-schema.org/draft-07/schema", AGT_DRAFT_7},
        {"https://json-schema.org/draft/2019-09/schema", AGT_DRAFT_2019_09},
        {"https://json-schema.org/draft/2020-12/schema", AGT_DRAFT_2020_12},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        size_t n = strlen(known[i].uri);
        if (strncmp(u, known[i].uri, n) == 0 && (u[n] == '\0' || strcmp(u + n, "#") == 0))
            return known[i].draft;
    }
    /* the http/https twin, as some schemas write it */
    if (strncmp(u, "https://json-schema.org/draft-0", 31) == 0 ||
        strncmp(u, "http://json-schema.org/draft/20", 31) == 0) {
        char twin[128];
        if (u[4] == 's')
            snprintf(twin, sizeof twin, "http%s", u + 5);
        else
            snprintf(twin, sizeof twin, "https%s", u + 4);
        return draft_from_schema_uri(twin);
    }
    return AGT_DRAFT_AUTO;
}

static const char *id_kw(int draft)
{
    return draft == AGT_DRAFT_4 ? "id" : "$id";
}

/* A dialect: the draft in the low 16 bits, VOC_* above. */
#define DIALECT(draft, vocab) ((int)((unsigned)(draft) | (unsigned)(vocab) << 16))
enum {
    VOC_NO_VALIDATION = 1u << 0, /* the meta-schema lacks the validation vocabulary */
    VOC_NO_APPLICATOR = 1u << 1, /* ... the applicator vocabulary */
    VOC_FORMAT_ASSERT = 1u << 2  /* ... has format-assertion (2020-12) */
};

static const json_t *load_remote(cctx *c, const char *uri);
static int schema_draft(cctx *c, const char *uri);

/* The dialect a custom meta-schema defines: its own "$schema"'s draft, and
 * from its "$vocabulary" the vocabularies in use (core 8.1.2). A required
 * vocabulary we do not know fails the compilation, as the spec says. */
static int meta_dialect(cctx *c, const char *uri, const json_t *meta)
{
    const json_t *sch = json_object_get(meta, "$schema");
    int d = AGT_DRAFT_AUTO;
    if (json_is_string(sch) && strcmp(json_string_value(sch), uri) != 0)
        d = schema_draft(c, json_string_value(sch));
    if (d == AGT_DRAFT_AUTO)
        return AGT_DRAFT_AUTO;
    int draft = d & 0xffff;
    const json_t *voc = json_object_get(meta, "$vocabulary");
    if (!json_is_object(voc) || draft < AGT_DRAFT_2019_09)
        return d;
    const char *pre = draft == AGT_DRAFT_2019_09 ? "https://json-schema.org/draft/2019-09/vocab/"
                                                 : "https://json-schema.org/draft/2020-12/vocab/";
    static const char *const known19[] = {"core",      "applicator", "validation",
                                          "meta-data", "format",     "content"};
    static const char *const known20[] = {
        "core",      "applicator",        "unevaluated",      "validation",
        "meta-data", "format-annotation", "format-assertion", "content"};
    unsigned vocab = VOC_NO_VALIDATION | VOC_NO_APPLICATOR;
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)voc, key, val)
    {
        bool known = false;
        size_t pl = strlen(pre);
        if (strncmp(key, pre, pl) == 0) {
            const char *name = key + pl;
            const char *const *list = draft == AGT_DRAFT_2019_09 ? known19 : known20;
            size_t nl = draft == AGT_DRAFT_2019_09 ? 6 : 8;
            for (size_t i = 0; i < nl; i++)
                if (strcmp(name, list[i]) == 0)
                    known = true;
            if (strcmp(name, "validation") == 0)
                vocab &= ~(unsigned)VOC_NO_VALIDATION;
            else if (strcmp(name, "applicator") == 0)
                vocab &= ~(unsigned)VOC_NO_APPLICATOR;
            else if (strcmp(name, "format-assertion") == 0)
                vocab |= VOC_FORMAT_ASSERT;
        }
        if (!known && json_is_true(val)) {
            c_fail(c, AGT_EINVALID,
                   "meta-schema '%s' requires the vocabulary '%s', which is not supported", uri,
                   key);
            return AGT_DRAFT_AUTO;
        }
    }
    return DIALECT(draft, vocab);
}

/* The dialect a document declares with "$schema": one of the drafts, or a
 * custom meta-schema that is registered, embedded or already loaded (any
 * other "$schema" is not looked up: the surrounding dialect applies). */
static int schema_draft(cctx *c, const char *uri)
{
    int d = draft_from_schema_uri(uri);
    if (d != AGT_DRAFT_AUTO || c->meta_depth >= 8)
        return d;
    char *u = agti_strdup(uri);
    if (u == NULL) {
        c_oom(c);
        return AGT_DRAFT_AUTO;
    }
    split_fragment(u);
    bool have = strmap_get(&c->ids, u) != NULL || agti_schema_embedded(u) != NULL;
    for (size_t i = 0; !have && c->opts && i < c->opts->n_res; i++)
        have = strcmp(c->opts->res_uris[i], u) == 0;
    const json_t *meta = have ? load_remote(c, u) : NULL;
    if (json_is_object(meta)) {
        c->meta_depth++;
        d = meta_dialect(c, u, meta);
        c->meta_depth--;
    }
    free(u);
    return d;
}

/* ---- indexing -------------------------------------------------------- */

static void index_schema(cctx *c, const json_t *j, const char *base, const char *path, int draft,
                         agti_sres *res, bool doc_root);

static void index_child(cctx *c, const json_t *j, const sinfo *parent, const char *kw,
                        const char *key, size_t idx, bool use_idx)
{
    agti_buf p = AGTI_BUF_INIT;
    agti_buf_puts(&p, parent->path);
    agti_json_pointer_append(&p, kw);
    if (key)
        agti_json_pointer_append(&p, key);
    else if (use_idx)
        agti_buf_printf(&p, "/%zu", idx);
    if (p.oom) {
        agti_buf_free(&p);
        c_oom(c);
        return;
    }
    index_schema(c, j, parent->base, agti_buf_cstr(&p), DIALECT(parent->draft, parent->vocab),
                 parent->res, false);
    agti_buf_free(&p);
}

static void index_children(cctx *c, const json_t *j, const sinfo *in)
{
    static const char *single[] = {"additionalItems",
                                   "items",
                                   "contains",
                                   "additionalProperties",
                                   "propertyNames",
                                   "not",
                                   "if",
                                   "then",
                                   "else",
                                   "unevaluatedItems",
                                   "unevaluatedProperties"};
    static const char *lists[] = {"allOf", "anyOf", "oneOf", "prefixItems", "items"};
    static const char *maps[] = {"properties",  "patternProperties", "$defs",
                                 "definitions", "dependentSchemas",  "dependencies"};
    for (size_t k = 0; k < sizeof single / sizeof *single && c->status == AGT_OK; k++) {
        const json_t *v = json_object_get(j, single[k]);
        if (v && is_schema(v))
            index_child(c, v, in, single[k], NULL, 0, false);
    }
    for (size_t k = 0; k < sizeof lists / sizeof *lists && c->status == AGT_OK; k++) {
        const json_t *v = json_object_get(j, lists[k]);
        if (!json_is_array(v))
            continue;
        for (size_t i = 0; i < json_array_size(v) && c->status == AGT_OK; i++)
            if (is_schema(json_array_get(v, i)))
                index_child(c, json_array_get(v, i), in, lists[k], NULL, i, true);
    }
    for (size_t k = 0; k < sizeof maps / sizeof *maps && c->status == AGT_OK; k++) {
        const json_t *v = json_object_get(j, maps[k]);
        const char *key;
        const json_t *sub;
        if (!json_is_object(v))
            continue;
        json_object_foreach((json_t *)v, key, sub)
        {
            if (c->status != AGT_OK)
                break;
            if (is_schema(sub))
                index_child(c, sub, in, maps[k], key, 0, false);
        }
    }
}

static void index_schema_body(cctx *c, const json_t *j, const char *base, const char *path,
                              int draft, agti_sres *res, bool doc_root);

static bool all_push(cctx *c, sinfo *in)
{
    if (agti_grow(&c->all, &c->cap_all, c->n_all, sizeof *c->all, 64) != AGT_OK)
        return false;
    c->all[c->n_all++] = in;
    return true;
}

static void index_schema(cctx *c, const json_t *j, const char *base, const char *path, int draft,
                         agti_sres *res, bool doc_root)
{
    if (c->status != AGT_OK || !is_schema(j) || ptrmap_get(&c->infos, j))
        return;
    if (c->depth >= AGTI_SCHEMA_MAX_NESTING) {
        c_fail(c, AGT_EINVALID, "invalid schema: subschemas nested deeper than %d levels at '%s'",
               AGTI_SCHEMA_MAX_NESTING, path);
        return;
    }
    c->depth++;
    index_schema_body(c, j, base, path, draft, res, doc_root);
    c->depth--;
}

static void index_schema_body(cctx *c, const json_t *j, const char *base, const char *path,
                              int draft, agti_sres *res, bool doc_root)
{
    sinfo *in = calloc(1, sizeof *in);
    if (in == NULL || !all_push(c, in)) {
        free(in);
        c_oom(c);
        return;
    }
    in->json = j;
    in->draft = draft & 0xffff;
    in->vocab = (unsigned)draft >> 16;
    in->res = res;
    in->path = agti_strdup(path);
    char *nb = NULL;
    if (json_is_object(j)) {
        const json_t *sch = json_object_get(j, "$schema");
        const json_t *id = json_object_get(j, id_kw(in->draft));
        if (json_is_string(sch) && (doc_root || id)) {
            int d = schema_draft(c, json_string_value(sch));
            if (d != AGT_DRAFT_AUTO) {
                in->draft = d & 0xffff;
                in->vocab = (unsigned)d >> 16;
                id = json_object_get(j, id_kw(in->draft));
            }
        }
        bool ref_wins = agti_legacy(in->draft) && json_object_get(j, "$ref") != NULL;
        if (json_is_string(id) && !ref_wins) {
            const char *ids = json_string_value(id);
            char *full = agti_uri_resolve(base, ids);
            if (full == NULL) {
                c_oom(c);
                return;
            }
            if (ids[0] == '#' && agti_legacy(in->draft)) {
                /* draft-07 location-independent identifier: an anchor */
                if (ids[1] && !strmap_put(&c->ids, full, j))
                    c_oom(c);
                free(full);
            } else {
                split_fragment(full);
                nb = full;
                if (!strmap_put(&c->ids, nb, j))
                    c_oom(c);
                in->res = new_res(c);
                in->res_root = true;
                if (in->res == NULL)
                    c_oom(c);
            }
        }
    }
    if (in->res == NULL) {
        in->res_root = true;
        in->res = new_res(c);
        if (in->res == NULL)
            c_oom(c);
    }
    in->base = nb ? nb : agti_strdup(base);
    if (in->path == NULL || in->base == NULL) {
        c_oom(c);
        return;
    }
    if (doc_root && !strmap_put(&c->ids, in->base, j)) {
        c_oom(c);
        return;
    }
    if (!ptrmap_put(&c->infos, in)) {
        c_oom(c);
        return;
    }
    if (!json_is_object(j))
        return;
    if (in->draft >= AGT_DRAFT_2019_09) {
        const char *akw[] = {"$anchor", "$dynamicAnchor"};
        for (int k = 0; k < (in->draft == AGT_DRAFT_2020_12 ? 2 : 1); k++) {
            const json_t *a = json_object_get(j, akw[k]);
            if (!json_is_string(a))
                continue;
            char *u = agti_aprintf("%s#%s", in->base, json_string_value(a));
            if (u == NULL || !strmap_put(&c->ids, u, j))
                c_oom(c);
            free(u);
            if (k == 1 && !res_add_danchor(c, in->res, json_string_value(a), j))
                c_oom(c);
        }
    }
    index_children(c, j, in);
}

/* ---- loading documents ----------------------------------------------- */

static int add_document(cctx *c, json_t *doc)
{
    if (json_array_append(c->s->documents, doc) != 0)
        return c_oom(c);
    return AGT_OK;
}

static const json_t *load_remote(cctx *c, const char *uri)
{
    const json_t *have = strmap_get(&c->ids, uri);
    if (have)
        return have;
    json_t *doc = NULL;
    const agt_schema_options *o = c->opts;
    if (o) {
        for (size_t i = 0; i < o->n_res; i++) {
            if (strcmp(o->res_uris[i], uri) == 0) {
                doc = json_incref(o->res_docs[i]);
                break;
            }
        }
    }
    if (doc == NULL) {
        const char *text = agti_schema_embedded(uri);
        if (text) {
            doc = agti_json_parse(text, strlen(text), "embedded meta-schema");
            if (doc == NULL) {
                c_oom(c);
                return NULL;
            }
        }
    }
    if (doc == NULL && o && o->resolver != NULL) {
        struct agt_schema_resolution r = {NULL};
        int rc = o->resolver(uri, &r, o->payload);
        if (rc != 0) {
            json_decref(r.doc);
            c_fail(c, AGT_ECANCELLED, "resolver cancelled the compilation at '%s'", uri);
            return NULL;
        }
        doc = r.doc;
    }
    if (doc == NULL) {
        c_fail(c, AGT_ENOTFOUND,
               "cannot resolve '%s': no registered resource, embedded meta-schema or "
               "resolver answer for it",
               uri);
        return NULL;
    }
    if (!is_schema(doc)) {
        json_decref(doc);
        c_fail(c, AGT_EINVALID, "document '%s' is not a schema (object or boolean)", uri);
        return NULL;
    }
    if (add_document(c, doc) != AGT_OK) {
        json_decref(doc);
        return NULL;
    }
    json_decref(doc); /* the documents array holds it */
    int d = c->default_draft;
    if (json_is_object(doc)) {
        const json_t *sch = json_object_get(doc, "$schema");
        if (json_is_string(sch) && schema_draft(c, json_string_value(sch)) != AGT_DRAFT_AUTO)
            d = schema_draft(c, json_string_value(sch));
    }
    if (!strmap_put(&c->ids, uri, doc)) {
        c_oom(c);
        return NULL;
    }
    index_schema(c, doc, uri, "", d, NULL, true);
    return c->status == AGT_OK ? doc : NULL;
}

/* Resolves a reference to a schema value; indexes it when it was reached by a
 * JSON pointer into a place the index walk does not visit. */
static const json_t *resolve_ref(cctx *c, const char *base, const char *ref, const char *where)
{
    char *full = agti_uri_resolve(base, ref);
    if (full == NULL) {
        c_oom(c);
        return NULL;
    }
    char *frag = split_fragment(full);
    const json_t *target = NULL;
    if (frag == NULL || frag[0] == '\0' || frag[0] == '/') {
        const json_t *doc = strmap_get(&c->ids, full);
        if (doc == NULL)
            doc = load_remote(c, full);
        if (doc == NULL) {
            free(full);
            return NULL;
        }
        const sinfo *anc = ptrmap_get(&c->infos, doc);
        const json_t *cur = doc;
        char *ptr = frag ? agti_uri_pct_decode(frag, strlen(frag)) : agti_strdup("");
        if (ptr == NULL) {
            free(full);
            c_oom(c);
            return NULL;
        }
        agti_buf path = AGTI_BUF_INIT;
        agti_buf_puts(&path, anc ? anc->path : "");
        const char *p = ptr;
        while (*p == '/' && cur) {
            p++;
            const char *e = strchr(p, '/');
            size_t n = e ? (size_t)(e - p) : strlen(p);
            agti_buf tok = AGTI_BUF_INIT;
            for (size_t i = 0; i < n; i++) {
                if (p[i] == '~' && i + 1 < n && p[i + 1] == '1') {
                    agti_buf_putc(&tok, '/');
                    i++;
                } else if (p[i] == '~' && i + 1 < n && p[i + 1] == '0') {
                    agti_buf_putc(&tok, '~');
                    i++;
                } else {
                    agti_buf_putc(&tok, p[i]);
                }
            }
            const char *t = agti_buf_cstr(&tok);
            if (json_is_object(cur)) {
                cur = json_object_getn(cur, t, tok.len);
            } else if (json_is_array(cur)) {
                char *end;
                unsigned long long ix = strtoull(t, &end, 10);
                cur = (tok.len && *end == '\0' && (t[0] != '0' || tok.len == 1))
                          ? json_array_get(cur, (size_t)ix)
                          : NULL;
            } else {
                cur = NULL;
            }
            agti_json_pointer_append(&path, t);
            agti_buf_free(&tok);
            if (cur && ptrmap_get(&c->infos, cur))
                anc = ptrmap_get(&c->infos, cur);
            p += n;
        }
        if (cur == NULL || *p != '\0') {
            c_fail(c, AGT_ENOTFOUND, "schema %s: cannot resolve $ref '%s': no such location", where,
                   ref);
        } else if (!is_schema(cur)) {
            c_fail(c, AGT_EINVALID, "schema %s: $ref '%s' points at a value that is not a schema",
                   where, ref);
        } else if (!ptrmap_get(&c->infos, cur)) {
            if (path.oom)
                c_oom(c);
            else
                index_schema(c, cur, anc ? anc->base : full, agti_buf_cstr(&path),
                             anc ? DIALECT(anc->draft, anc->vocab) : c->default_draft,
                             anc ? anc->res : NULL, false);
            target = c->status == AGT_OK ? cur : NULL;
        } else {
            target = cur;
        }
        agti_buf_free(&path);
        free(ptr);
    } else {
        char *anchor = agti_aprintf("%s#%s", full, frag);
        if (anchor == NULL) {
            free(full);
            c_oom(c);
            return NULL;
        }
        target = strmap_get(&c->ids, anchor);
        if (target == NULL && strmap_get(&c->ids, full) == NULL && load_remote(c, full))
            target = strmap_get(&c->ids, anchor);
        if (target == NULL)
            c_fail(c, AGT_ENOTFOUND, "schema %s: cannot resolve $ref '%s': no anchor '%s'", where,
                   ref, frag);
        free(anchor);
    }
    free(full);
    return target;
}

/* ---- keyword compilation --------------------------------------------- */

static agti_snode *compile_node(cctx *c, const json_t *j);
static agti_snode *compile_node_body(cctx *c, const json_t *j, sinfo *in);

/* A copy of the schema object without the keywords of the vocabularies its
 * dialect lacks (the values are shared). */
static json_t *without_vocab(const json_t *j, unsigned vocab)
{
    static const char *const validation[] = {"type",          "enum",
                                             "const",         "multipleOf",
                                             "maximum",       "exclusiveMaximum",
                                             "minimum",       "exclusiveMinimum",
                                             "maxLength",     "minLength",
                                             "pattern",       "maxItems",
                                             "minItems",      "uniqueItems",
                                             "maxContains",   "minContains",
                                             "maxProperties", "minProperties",
                                             "required",      "dependentRequired"};
    static const char *const applicator[] = {"prefixItems",
                                             "items",
                                             "additionalItems",
                                             "contains",
                                             "additionalProperties",
                                             "properties",
                                             "patternProperties",
                                             "dependentSchemas",
                                             "propertyNames",
                                             "if",
                                             "then",
                                             "else",
                                             "allOf",
                                             "anyOf",
                                             "oneOf",
                                             "not",
                                             "dependencies"};
    json_t *f = json_object();
    const char *key;
    json_t *val;
    if (f == NULL)
        return NULL;
    json_object_foreach((json_t *)j, key, val)
    {
        bool drop = false;
        for (size_t i = 0;
             (vocab & VOC_NO_VALIDATION) && i < sizeof validation / sizeof *validation; i++)
            drop = drop || strcmp(key, validation[i]) == 0;
        for (size_t i = 0;
             (vocab & VOC_NO_APPLICATOR) && i < sizeof applicator / sizeof *applicator; i++)
            drop = drop || strcmp(key, applicator[i]) == 0;
        if (!drop && json_object_set(f, key, val) != 0) {
            json_decref(f);
            return NULL;
        }
    }
    return f;
}

static int bad_kw(cctx *c, const sinfo *in, const char *kw, const char *what)
{
    return c_fail(c, AGT_EINVALID, "invalid schema at '%s/%s': \"%s\" %s", in->path, kw, kw, what);
}

static bool get_count(cctx *c, const sinfo *in, const char *kw, int64_t *out)
{
    const json_t *v = json_object_get(in->json, kw);
    if (v == NULL)
        return true;
    double d = json_number_value(v);
    if (!json_is_number(v) || d < 0 || floor(d) != d || d > 9.0e15) {
        bad_kw(c, in, kw, "must be a non-negative integer");
        return false;
    }
    *out = (int64_t)d;
    return true;
}

/* A numeric keyword; iout (may be NULL) also takes the exact value of an
 * integer, marking it with bit in *iflags; *bigout the text of a number a
 * double cannot hold. */
static bool get_number(cctx *c, const sinfo *in, const char *kw, double *out, unsigned bit,
                       unsigned *flags, int64_t *iout, unsigned *iflags, const char **bigout)
{
    const json_t *v = json_object_get(in->json, kw);
    if (v == NULL)
        return true;
    if (!json_is_number(v)) {
        bad_kw(c, in, kw, "must be a number");
        return false;
    }
    size_t blen;
    const char *bt = agti_bigmap_get(c->big, v, &blen);
    if (bt) {
        *bigout = arena_strndup(c->s, bt, blen);
        if (*bigout == NULL)
            return c_oom(c), false;
    }
    *out = json_number_value(v);
    *flags |= bit;
    if (iout != NULL && json_is_integer(v)) {
        *iout = (int64_t)json_integer_value(v);
        *iflags |= bit;
    }
    return true;
}

static agti_snode *sub(cctx *c, const sinfo *in, const char *kw, const json_t *v)
{
    if (in->draft == AGT_DRAFT_4 && !json_is_object(v)) {
        bad_kw(c, in, kw, "must be a schema object (draft 4 has no boolean schemas)");
        return NULL;
    }
    if (!is_schema(v)) {
        bad_kw(c, in, kw, "must be a schema (an object or a boolean)");
        return NULL;
    }
    return compile_node(c, v);
}

/* "additionalProperties"/"additionalItems": a schema, or in draft 4 also a
 * boolean (the keyword's own form there). */
static bool sub_or_bool(cctx *c, const sinfo *in, const char *kw, agti_snode **out)
{
    const json_t *v = json_object_get(in->json, kw);
    if (v == NULL)
        return true;
    if (in->draft == AGT_DRAFT_4 && json_is_boolean(v)) {
        *out = compile_node(c, v);
        return *out != NULL;
    }
    *out = sub(c, in, kw, v);
    return *out != NULL;
}

static bool sub_list(cctx *c, const sinfo *in, const char *kw, agti_snode ***out, size_t *n,
                     bool nonempty)
{
    const json_t *v = json_object_get(in->json, kw);
    if (v == NULL)
        return true;
    if (!json_is_array(v) || (nonempty && json_array_size(v) == 0)) {
        bad_kw(c, in, kw,
               nonempty ? "must be a non-empty array of schemas" : "must be an array of schemas");
        return false;
    }
    size_t m = json_array_size(v);
    agti_snode **arr = arena_alloc(c->s, (m ? m : 1) * sizeof *arr);
    if (arr == NULL) {
        c_oom(c);
        return false;
    }
    for (size_t i = 0; i < m; i++) {
        arr[i] = sub(c, in, kw, json_array_get(v, i));
        if (arr[i] == NULL)
            return false;
    }
    *out = arr;
    *n = m;
    return true;
}

static bool sub_one(cctx *c, const sinfo *in, const char *kw, agti_snode **out)
{
    const json_t *v = json_object_get(in->json, kw);
    if (v == NULL)
        return true;
    *out = sub(c, in, kw, v);
    return *out != NULL;
}

static bool compile_types(cctx *c, const sinfo *in, agti_snode *n)
{
    static const char *names[] = {"null",   "boolean", "object", "array",
                                  "number", "string",  "integer"};
    const json_t *v = json_object_get(in->json, "type");
    if (v == NULL)
        return true;
    size_t m = json_is_array(v) ? json_array_size(v) : 1;
    if (!json_is_array(v) && !json_is_string(v))
        return bad_kw(c, in, "type", "must be a type name or an array of type names"), false;
    for (size_t i = 0; i < m; i++) {
        const json_t *t = json_is_array(v) ? json_array_get(v, i) : v;
        unsigned bit = 0;
        for (unsigned k = 0; k < 7 && json_is_string(t); k++)
            if (strcmp(json_string_value(t), names[k]) == 0)
                bit = 1u << k;
        if (bit == 0)
            return bad_kw(c, in, "type",
                          "must name only null, boolean, object, array, number, string or "
                          "integer"),
                   false;
        n->types |= bit;
    }
    if (n->types & AGTI_T_NUMBER)
        n->types |= AGTI_T_INTEGER;
    if (m == 0)
        n->types = 0x80; /* an empty list accepts nothing */
    return true;
}

static bool add_code(cctx *c, pcre2_code *re)
{
    agt_schema *s = c->s;
    if (agti_grow(&s->codes, &s->cap_codes, s->n_codes, sizeof *s->codes, 8) != AGT_OK) {
        pcre2_code_free(re);
        c_oom(c);
        return false;
    }
    s->codes[s->n_codes++] = re;
    return true;
}

static pcre2_code *regex(cctx *c, const sinfo *in, const char *kw, const char *src, size_t len)
{
    char err[512];
    pcre2_code *re = agti_schema_regex_compile(src, len, err, sizeof err);
    if (re == NULL) {
        c_fail(c, AGT_EINVALID, "invalid schema at '%s/%s': %s", in->path, kw, err);
        return NULL;
    }
    return add_code(c, re) ? re : NULL;
}

static bool compile_strings(cctx *c, const sinfo *in, const char *kw, const json_t *v,
                            const char ***names, size_t **lens, size_t *n)
{
    if (!json_is_array(v))
        return bad_kw(c, in, kw, "must be an array of strings"), false;
    size_t m = json_array_size(v);
    *names = arena_alloc(c->s, (m ? m : 1) * sizeof **names);
    *lens = arena_alloc(c->s, (m ? m : 1) * sizeof **lens);
    if (*names == NULL || *lens == NULL)
        return c_oom(c), false;
    for (size_t i = 0; i < m; i++) {
        const json_t *e = json_array_get(v, i);
        if (!json_is_string(e))
            return bad_kw(c, in, kw, "must be an array of strings"), false;
        (*names)[i] = json_string_value(e);
        (*lens)[i] = json_string_length(e);
    }
    *n = m;
    return true;
}

static bool build_prop_table(cctx *c, agti_snode *n)
{
    uint32_t cap = 8;
    while (cap < n->n_props * 2)
        cap *= 2;
    n->prop_table = arena_alloc(c->s, cap * sizeof *n->prop_table);
    if (n->prop_table == NULL)
        return c_oom(c), false;
    memset(n->prop_table, 0, cap * sizeof *n->prop_table);
    n->prop_mask = cap - 1;
    for (size_t i = 0; i < n->n_props; i++) {
        uint32_t h = n->props[i].hash & n->prop_mask;
        while (n->prop_table[h])
            h = (h + 1) & n->prop_mask;
        n->prop_table[h] = (uint32_t)i + 1;
    }
    return true;
}

static bool compile_props(cctx *c, const sinfo *in, const char *kw, agti_sprop **out, size_t *count)
{
    const json_t *v = json_object_get(in->json, kw);
    if (v == NULL)
        return true;
    if (!json_is_object(v))
        return bad_kw(c, in, kw, "must be an object whose values are schemas"), false;
    size_t m = json_object_size(v);
    agti_sprop *arr = arena_alloc(c->s, (m ? m : 1) * sizeof *arr);
    if (arr == NULL)
        return c_oom(c), false;
    size_t i = 0;
    const char *key;
    size_t klen;
    json_t *val;
    json_object_keylen_foreach((json_t *)v, key, klen, val)
    {
        arr[i].key = key;
        arr[i].len = klen;
        arr[i].hash = agti_schema_hash(key, klen);
        arr[i].node = sub(c, in, kw, val);
        if (arr[i].node == NULL)
            return false;
        i++;
    }
    *out = arr;
    *count = m;
    return true;
}

static bool compile_object_kws(cctx *c, const sinfo *in, agti_snode *n)
{
    const json_t *j = in->json;
    if (!compile_props(c, in, "properties", &n->props, &n->n_props))
        return false;
    if (n->n_props && !build_prop_table(c, n))
        return false;
    const json_t *pp = json_object_get(j, "patternProperties");
    if (pp) {
        if (!json_is_object(pp))
            return bad_kw(c, in, "patternProperties", "must be an object whose values are schemas"),
                   false;
        size_t m = json_object_size(pp), i = 0;
        n->patterns = arena_alloc(c->s, (m ? m : 1) * sizeof *n->patterns);
        if (n->patterns == NULL)
            return c_oom(c), false;
        const char *key;
        size_t klen;
        json_t *val;
        json_object_keylen_foreach((json_t *)pp, key, klen, val)
        {
            n->patterns[i].src = key;
            n->patterns[i].re = regex(c, in, "patternProperties", key, klen);
            if (n->patterns[i].re == NULL)
                return false;
            n->patterns[i].node = sub(c, in, "patternProperties", val);
            if (n->patterns[i].node == NULL)
                return false;
            i++;
        }
        n->n_patterns = m;
    }
    if (!sub_or_bool(c, in, "additionalProperties", &n->additional) ||
        (in->draft >= AGT_DRAFT_6 && !sub_one(c, in, "propertyNames", &n->property_names)))
        return false;
    const json_t *req = json_object_get(j, "required");
    if (req &&
        !compile_strings(c, in, "required", req, &n->required, &n->required_lens, &n->n_required))
        return false;
    if (!get_count(c, in, "maxProperties", &n->max_props) ||
        !get_count(c, in, "minProperties", &n->min_props))
        return false;

    /* "dependencies" (drafts 4 to 7; later drafts split it into
     * "dependentRequired" and "dependentSchemas" but it is still honoured
     * there, as the suite's optional dependencies-compatibility asks) */
    bool legacy = agti_legacy(in->draft);
    const json_t *dep = json_object_get(j, "dependencies");
    const json_t *dr = legacy ? NULL : json_object_get(j, "dependentRequired");
    const json_t *ds = legacy ? NULL : json_object_get(j, "dependentSchemas");
    if (dep && !json_is_object(dep))
        return bad_kw(c, in, "dependencies", "must be an object"), false;
    if (dr && !json_is_object(dr))
        return bad_kw(c, in, "dependentRequired", "must be an object"), false;
    if (ds && !json_is_object(ds))
        return bad_kw(c, in, "dependentSchemas", "must be an object whose values are schemas"),
               false;
    size_t mdep = dep ? json_object_size(dep) : 0;
    size_t mr = mdep + (dr ? json_object_size(dr) : 0);
    size_t ms = mdep + (ds ? json_object_size(ds) : 0);
    if (mr) {
        n->dep_required = arena_alloc(c->s, mr * sizeof *n->dep_required);
        if (n->dep_required == NULL)
            return c_oom(c), false;
    }
    if (ms) {
        n->dep_schemas = arena_alloc(c->s, ms * sizeof *n->dep_schemas);
        if (n->dep_schemas == NULL)
            return c_oom(c), false;
    }
    const struct {
        const json_t *obj;
        const char *kw;
        int arrays; /* 1: arrays of names only, 0: schemas only, -1: both */
    } srcs[3] = {
        {dep, "dependencies", -1}, {dr, "dependentRequired", 1}, {ds, "dependentSchemas", 0}};
    for (int k = 0; k < 3; k++) {
        const char *key;
        size_t klen;
        json_t *val;
        if (srcs[k].obj == NULL)
            continue;
        json_object_keylen_foreach((json_t *)srcs[k].obj, key, klen, val)
        {
            bool names = srcs[k].arrays == 1 || (srcs[k].arrays < 0 && json_is_array(val));
            if (names) {
                agti_sdepreq *d = &n->dep_required[n->n_dep_required++];
                d->key = key;
                d->len = klen;
                d->kw = srcs[k].kw;
                if (!compile_strings(c, in, srcs[k].kw, val, &d->names, &d->lens, &d->n))
                    return false;
            } else {
                agti_sprop *d = &n->dep_schemas[n->n_dep_schemas++];
                d->key = key;
                d->len = klen;
                d->node = sub(c, in, srcs[k].kw, val);
                if (d->node == NULL)
                    return false;
            }
        }
    }
    if (!legacy && !sub_one(c, in, "unevaluatedProperties", &n->unevaluated_props))
        return false;
    return true;
}

static bool compile_array_kws(cctx *c, const sinfo *in, agti_snode *n)
{
    const json_t *j = in->json;
    const json_t *items = json_object_get(j, "items");
    if (in->draft != AGT_DRAFT_2020_12) {
        if (json_is_array(items)) {
            if (!sub_list(c, in, "items", &n->prefix, &n->n_prefix, false) ||
                !sub_or_bool(c, in, "additionalItems", &n->items))
                return false;
            n->items_kw = "additionalItems";
        } else if (items) {
            n->items = sub(c, in, "items", items);
            if (n->items == NULL)
                return false;
            n->items_kw = "items";
        }
    } else {
        if (!sub_list(c, in, "prefixItems", &n->prefix, &n->n_prefix, false))
            return false;
        if (items) {
            n->items = sub(c, in, "items", items);
            if (n->items == NULL)
                return false;
            n->items_kw = "items";
        }
    }
    if (in->draft >= AGT_DRAFT_2019_09 &&
        !sub_one(c, in, "unevaluatedItems", &n->unevaluated_items))
        return false;
    if (in->draft >= AGT_DRAFT_6 && !sub_one(c, in, "contains", &n->contains))
        return false;
    n->min_contains = 1;
    n->max_contains = -1;
    if (!agti_legacy(in->draft) && (!get_count(c, in, "minContains", &n->min_contains) ||
                                    !get_count(c, in, "maxContains", &n->max_contains)))
        return false;
    if (!get_count(c, in, "maxItems", &n->max_items) ||
        !get_count(c, in, "minItems", &n->min_items))
        return false;
    const json_t *u = json_object_get(j, "uniqueItems");
    if (u && !json_is_boolean(u))
        return bad_kw(c, in, "uniqueItems", "must be a boolean"), false;
    if (json_is_true(u))
        n->flags |= AGTI_K_UNIQUE;
    return true;
}

/* Draft 4: "exclusiveMaximum"/"exclusiveMinimum" are booleans that make
 * "maximum"/"minimum" strict; the limit moves to the exclusive slot. */
static bool draft4_exclusive(cctx *c, const sinfo *in, agti_snode *n)
{
    static const struct {
        const char *kw;
        unsigned bit, xbit;
    } pairs[2] = {{"exclusiveMaximum", AGTI_K_MAXIMUM, AGTI_K_EXCL_MAXIMUM},
                  {"exclusiveMinimum", AGTI_K_MINIMUM, AGTI_K_EXCL_MINIMUM}};
    for (int k = 0; k < 2; k++) {
        const json_t *v = json_object_get(in->json, pairs[k].kw);
        if (v == NULL)
            continue;
        if (!json_is_boolean(v))
            return bad_kw(c, in, pairs[k].kw, "must be a boolean in draft 4"), false;
        if (!json_is_true(v) || !(n->flags & pairs[k].bit))
            continue;
        n->flags = (n->flags & ~pairs[k].bit) | pairs[k].xbit;
        if (n->int_limits & pairs[k].bit)
            n->int_limits = (n->int_limits & ~pairs[k].bit) | pairs[k].xbit;
        if (k == 0) {
            n->excl_maximum = n->maximum;
            n->excl_maximum_i = n->maximum_i;
            n->big[3] = n->big[1];
            n->big[1] = NULL;
        } else {
            n->excl_minimum = n->minimum;
            n->excl_minimum_i = n->minimum_i;
            n->big[4] = n->big[2];
            n->big[2] = NULL;
        }
    }
    return true;
}

/* Puts the text of big numbers back into a converted enum/const value. */
static bool fix_big(cctx *c, const json_t *j, agti_jv *v)
{
    size_t len;
    const char *t;
    switch (v->type) {
    case AGTI_JV_REAL:
        t = agti_bigmap_get(c->big, j, &len);
        if (t) {
            char *copy = agti_jarena_alloc(&c->s->consts, len + 1);
            if (copy == NULL)
                return false;
            memcpy(copy, t, len);
            copy[len] = '\0';
            v->type = AGTI_JV_BIG;
            v->len = len;
            v->u.s = copy;
        }
        return true;
    case AGTI_JV_ARRAY:
        for (size_t i = 0; i < v->len; i++)
            if (!fix_big(c, json_array_get(j, i), (agti_jv *)&v->u.a[i]))
                return false;
        return true;
    case AGTI_JV_OBJECT:
        for (size_t i = 0; i < v->len; i++) {
            agti_jkv *m = (agti_jkv *)&v->u.o[i];
            if (!fix_big(c, json_object_getn(j, m->key, m->klen), &m->val))
                return false;
        }
        return true;
    default:
        return true;
    }
}

static bool compile_value_kws(cctx *c, const sinfo *in, agti_snode *n)
{
    const json_t *j = in->json;
    if (!compile_types(c, in, n))
        return false;
    const json_t *e = json_object_get(j, "enum");
    if (e && !json_is_array(e))
        return bad_kw(c, in, "enum", "must be an array"), false;
    n->enum_values = (json_t *)e;
    if (e) {
        bool deep;
        n->enum_jv = agti_jv_from_json(&c->s->consts, e, &deep);
        if (n->enum_jv == NULL)
            return deep ? bad_kw(c, in, "enum", "is nested too deeply"), false : (c_oom(c), false);
        if (c->big && c->big->n && !fix_big(c, e, (agti_jv *)n->enum_jv))
            return c_oom(c), false;
        n->enum_text = agti_schema_jv_text(&c->s->consts, n->enum_jv);
        if (n->enum_text == NULL)
            return c_oom(c), false;
    }
    const json_t *k = in->draft >= AGT_DRAFT_6 ? json_object_get(j, "const") : NULL;
    if (k) {
        n->const_value = (json_t *)k;
        n->flags |= AGTI_K_CONST;
        bool deep;
        n->const_jv = agti_jv_from_json(&c->s->consts, k, &deep);
        if (n->const_jv == NULL)
            return deep ? bad_kw(c, in, "const", "is nested too deeply"), false : (c_oom(c), false);
        if (c->big && c->big->n && !fix_big(c, k, (agti_jv *)n->const_jv))
            return c_oom(c), false;
        n->const_text = agti_schema_jv_text(&c->s->consts, n->const_jv);
        if (n->const_text == NULL)
            return c_oom(c), false;
    }
    if (!get_number(c, in, "multipleOf", &n->multiple_of, AGTI_K_MULTIPLE_OF, &n->flags, NULL, NULL,
                    &n->big[0]) ||
        !get_number(c, in, "maximum", &n->maximum, AGTI_K_MAXIMUM, &n->flags, &n->maximum_i,
                    &n->int_limits, &n->big[1]) ||
        !get_number(c, in, "minimum", &n->minimum, AGTI_K_MINIMUM, &n->flags, &n->minimum_i,
                    &n->int_limits, &n->big[2]) ||
        (in->draft != AGT_DRAFT_4 &&
         (!get_number(c, in, "exclusiveMaximum", &n->excl_maximum, AGTI_K_EXCL_MAXIMUM, &n->flags,
                      &n->excl_maximum_i, &n->int_limits, &n->big[3]) ||
          !get_number(c, in, "exclusiveMinimum", &n->excl_minimum, AGTI_K_EXCL_MINIMUM, &n->flags,
                      &n->excl_minimum_i, &n->int_limits, &n->big[4]))))
        return false;
    if (in->draft == AGT_DRAFT_4 && !draft4_exclusive(c, in, n))
        return false;
    if (n->flags & AGTI_K_MULTIPLE_OF) {
        if (!(n->multiple_of > 0))
            return bad_kw(c, in, "multipleOf", "must be a number greater than 0"), false;
        const json_t *m = json_object_get(j, "multipleOf");
        if (json_is_integer(m))
            n->multiple_of_int = json_integer_value(m);
    }
    n->max_length = n->min_length = -1;
    if (!get_count(c, in, "maxLength", &n->max_length) ||
        !get_count(c, in, "minLength", &n->min_length))
        return false;
    const json_t *p = json_object_get(j, "pattern");
    if (p) {
        if (!json_is_string(p))
            return bad_kw(c, in, "pattern", "must be a string"), false;
        n->pattern_src = json_string_value(p);
        n->pattern = regex(c, in, "pattern", json_string_value(p), json_string_length(p));
        if (n->pattern == NULL)
            return false;
    }
    if (in->draft == AGT_DRAFT_7) {
        /* draft-07 validation 8.3: content may be checked; later drafts made
         * these annotations only */
        const json_t *ce = json_object_get(j, "contentEncoding");
        const json_t *cm = json_object_get(j, "contentMediaType");
        if (ce && !json_is_string(ce))
            return bad_kw(c, in, "contentEncoding", "must be a string"), false;
        if (cm && !json_is_string(cm))
            return bad_kw(c, in, "contentMediaType", "must be a string"), false;
        n->content_base64 = ce && strcmp(json_string_value(ce), "base64") == 0;
        n->content_json = cm && strcmp(json_string_value(cm), "application/json") == 0;
    }
    const json_t *f = json_object_get(j, "format");
    if (f) {
        if (!json_is_string(f))
            return bad_kw(c, in, "format", "must be a string"), false;
        if (c->s->format_assert || (in->vocab & VOC_FORMAT_ASSERT))
            n->format = agti_schema_format_id(json_string_value(f));
        if (n->format == AGTI_FMT_HOSTNAME && in->draft < AGT_DRAFT_7)
            n->format = AGTI_FMT_HOSTNAME_1123; /* IDNA2008 rules came with draft 7 */
    }
    return true;
}

static bool compile_refs(cctx *c, const sinfo *in, agti_snode *n)
{
    const json_t *r = json_object_get(in->json, "$ref");
    if (r) {
        if (!json_is_string(r))
            return bad_kw(c, in, "$ref", "must be a string (a URI reference)"), false;
        const json_t *t = resolve_ref(c, in->base, json_string_value(r), in->path);
        if (t == NULL)
            return false;
        n->ref_src = json_string_value(r);
        n->ref = compile_node(c, t);
        if (n->ref == NULL)
            return false;
    }
    if (in->draft == AGT_DRAFT_2019_09) {
        const json_t *rr = json_object_get(in->json, "$recursiveRef");
        if (rr == NULL)
            return true;
        if (!json_is_string(rr))
            return bad_kw(c, in, "$recursiveRef", "must be a string (a URI reference)"), false;
        const json_t *t = resolve_ref(c, in->base, json_string_value(rr), in->path);
        if (t == NULL)
            return false;
        n->rec_ref_src = json_string_value(rr);
        n->rec_ref = compile_node(c, t);
        if (n->rec_ref == NULL)
            return false;
        n->rec_ref_dynamic = json_is_true(json_object_get(t, "$recursiveAnchor"));
        return true;
    }
    if (in->draft != AGT_DRAFT_2020_12)
        return true;
    const json_t *d = json_object_get(in->json, "$dynamicRef");
    if (d) {
        if (!json_is_string(d))
            return bad_kw(c, in, "$dynamicRef", "must be a string (a URI reference)"), false;
        const char *src = json_string_value(d);
        const json_t *t = resolve_ref(c, in->base, src, in->path);
        if (t == NULL)
            return false;
        n->dyn_ref_src = src;
        n->dyn_ref = compile_node(c, t);
        if (n->dyn_ref == NULL)
            return false;
        const char *h = strchr(src, '#');
        const json_t *da = json_object_get(t, "$dynamicAnchor");
        if (h && h[1] && h[1] != '/' && json_is_string(da) &&
            strcmp(json_string_value(da), h + 1) == 0)
            n->dyn_ref_anchor = json_string_value(da);
    }
    return true;
}

static agti_snode *compile_node(cctx *c, const json_t *j)
{
    if (c->status != AGT_OK)
        return NULL;
    sinfo *in = ptrmap_get(&c->infos, j);
    if (in == NULL) {
        c_fail(c, AGT_ERROR, "internal: schema location was not indexed");
        return NULL;
    }
    if (in->node)
        return in->node;
    if (c->depth >= AGTI_SCHEMA_MAX_NESTING) {
        c_fail(c, AGT_EINVALID,
               "invalid schema: subschemas and $refs nest deeper than %d levels at '%s'",
               AGTI_SCHEMA_MAX_NESTING, in->path);
        return NULL;
    }
    c->depth++;
    agti_snode *n = compile_node_body(c, j, in);
    c->depth--;
    return n;
}

static agti_snode *compile_node_body(cctx *c, const json_t *j, sinfo *in)
{
    agti_snode *n = arena_alloc(c->s, sizeof *n);
    if (n == NULL) {
        c_oom(c);
        return NULL;
    }
    memset(n, 0, sizeof *n);
    in->node = n;
    n->path = arena_strndup(c->s, in->path, strlen(in->path));
    n->res = in->res;
    n->draft = in->draft;
    n->max_length = n->min_length = -1;
    n->max_props = n->min_props = n->max_items = n->min_items = -1;
    n->max_contains = -1;
    n->min_contains = 1;
    if (n->path == NULL) {
        c_oom(c);
        return NULL;
    }
    if (json_is_boolean(j)) {
        n->is_bool = true;
        n->bool_value = json_is_true(j);
        return n;
    }
    if (in->draft == AGT_DRAFT_2019_09 && in->res_root &&
        json_is_true(json_object_get(j, "$recursiveAnchor")))
        in->res->recursive_anchor = n;
    if (agti_legacy(in->draft) && json_object_get(j, "$ref")) {
        /* drafts 4 to 7: "$ref" overrides every sibling keyword */
        return compile_refs(c, in, n) ? n : NULL;
    }
    sinfo filtered;
    if (in->vocab & (VOC_NO_VALIDATION | VOC_NO_APPLICATOR)) {
        /* the dialect lacks a vocabulary: its keywords are unknown words */
        json_t *f = without_vocab(j, in->vocab);
        if (f == NULL || add_document(c, f) != AGT_OK) {
            json_decref(f);
            c_oom(c);
            return NULL;
        }
        json_decref(f); /* the documents array holds it */
        filtered = *in;
        filtered.json = f;
        in = &filtered;
    }
    if (!compile_value_kws(c, in, n) || !compile_array_kws(c, in, n) ||
        !compile_object_kws(c, in, n) ||
        !sub_list(c, in, "allOf", &n->all_of, &n->n_all_of, true) ||
        !sub_list(c, in, "anyOf", &n->any_of, &n->n_any_of, true) ||
        !sub_list(c, in, "oneOf", &n->one_of, &n->n_one_of, true) ||
        !sub_one(c, in, "not", &n->not_) ||
        (in->draft >= AGT_DRAFT_7 &&
         (!sub_one(c, in, "if", &n->if_) || !sub_one(c, in, "then", &n->then_) ||
          !sub_one(c, in, "else", &n->else_))) ||
        !compile_refs(c, in, n))
        return NULL;
    n->has_unevaluated = n->unevaluated_items != NULL || n->unevaluated_props != NULL;
    return n;
}

/* Compiles the node of every "$dynamicAnchor", including those of documents
 * loaded while doing so. */
static bool compile_dynamic_anchors(cctx *c)
{
    for (size_t i = 0; i < c->n_res && c->status == AGT_OK; i++) {
        agti_sres *r = c->res[i].res;
        for (size_t k = 0; k < r->n_danchors && c->status == AGT_OK; k++) {
            r->danchor_nodes[k] = compile_node(c, c->res[i].danchor_json[k]);
            r = c->res[i].res; /* c->res may have moved */
        }
    }
    return c->status == AGT_OK;
}

static void cctx_free(cctx *c)
{
    for (size_t i = 0; i < c->n_all; i++) {
        free(c->all[i]->base);
        free(c->all[i]->path);
        free(c->all[i]);
    }
    free(c->all);
    free(c->infos.slots);
    for (size_t i = 0; i < c->ids.cap; i++)
        free(c->ids.slots[i].key);
    free(c->ids.slots);
    for (size_t i = 0; i < c->n_res; i++)
        free(c->res[i].danchor_json);
    free(c->res);
}

void agti_schema_destroy(agt_schema *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->n_codes; i++)
        pcre2_code_free(s->codes[i]);
    free(s->codes);
    arena_free(s);
    agti_jarena_free(&s->consts);
    json_decref(s->documents);
    pcre2_match_data_free(atomic_load(&s->match_cache));
    free(s);
}

int agti_schema_compile_json(agt_schema **out, struct json_t *schema,
                             const agt_schema_options *opts)
{
    return agti_schema_compile_big(out, schema, opts, NULL);
}

int agti_schema_compile_big(agt_schema **out, json_t *schema, const agt_schema_options *opts,
                            const agti_bigmap *big)
{
    if (out == NULL)
        return agti_error(AGT_EINVAL, "agt_schema_compile: out is NULL");
    *out = NULL;
    if (schema == NULL)
        return agti_error(AGT_EINVAL, "agt_schema_compile: schema is NULL");
    if (!is_schema(schema))
        return agti_error(AGT_EINVALID,
                          "invalid schema: a schema must be an object or a boolean, got %s",
                          json_is_array(schema)    ? "an array"
                          : json_is_string(schema) ? "a string"
                          : json_is_null(schema)   ? "null"
                                                   : "a number");
    agt_schema *s = calloc(1, sizeof *s);
    if (s == NULL)
        return agti_oom();
    agti_jarena_init(&s->consts, NULL, 0);
    s->documents = json_array();
    if (s->documents == NULL || json_array_append(s->documents, schema) != 0) {
        agti_schema_destroy(s);
        return agti_oom();
    }
    s->format_assert = opts && opts->format_assert;
    atomic_init(&s->match_cache, NULL);
    cctx c;
    int rc;
    memset(&c, 0, sizeof c);
    c.s = s;
    c.opts = opts;
    c.big = big;
    int draft = opts && opts->draft != AGT_DRAFT_AUTO ? opts->draft : AGT_DRAFT_2020_12;
    c.default_draft = draft; /* for a custom meta-schema loaded below */
    if (json_is_object(schema)) {
        const json_t *sch = json_object_get(schema, "$schema");
        if (json_is_string(sch)) {
            int d = schema_draft(&c, json_string_value(sch));
            if (d != AGT_DRAFT_AUTO)
                draft = d;
        }
    }
    if (draft == AGT_DRAFT_4 && json_is_boolean(schema)) {
        rc = agti_error(AGT_EINVALID, "invalid schema: draft 4 has no boolean schemas (use {} "
                                      "for true and {\"not\": {}} for false)");
        cctx_free(&c);
        agti_schema_destroy(s);
        return rc;
    }
    c.default_draft = draft;
    index_schema(&c, schema, "", "", draft, NULL, true);
    if (c.status == AGT_OK)
        s->root = compile_node(&c, schema);
    if (c.status == AGT_OK)
        compile_dynamic_anchors(&c);
    rc = c.status;
    cctx_free(&c);
    if (rc != AGT_OK) {
        agti_schema_destroy(s);
        return rc;
    }
    *out = s;
    return AGT_OK;
}
