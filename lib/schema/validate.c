/* Validation: walks the compiled keyword tree over a jansson instance. In
 * "first error" mode it stops at the first violation and allocates nothing
 * beyond a cached PCRE2 match block; in "all errors" mode it records every
 * violation with its instance and schema JSON pointers. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema_internal.h"
#include "jv.h"
#include "schema_priv.h"

#if defined(__GNUC__)
#define AGTI_NOINLINE __attribute__((noinline))
#else
#define AGTI_NOINLINE
#endif

#define MAX_DEPTH 3000 /* nested schema evaluations: ~1.3 MB of stack at the limit */

typedef struct ipath {
    const struct ipath *up;
    const char *key; /* NULL: array index */
    size_t klen;
    size_t index;
    const struct refframe *refs; /* $ref targets being evaluated at this location */
} ipath;

typedef struct refframe {
    const struct refframe *up;
    const agti_snode *target;
} refframe;

typedef struct dscope {
    const struct dscope *up;
    const agti_sres *res;
} dscope;

/* Evaluated properties (by position in the object's iteration order) or
 * items (by index) of one instance, for unevaluated*. */
typedef struct eset {
    size_t n;
    uint64_t *bits;
    uint64_t inl[2];
} eset;

typedef struct vctx {
    agt_schema *s;
    json_t *errors; /* NULL: stop at the first error */
    pcre2_match_data *md;
    int depth;
    int fatal; /* AGT_ENOMEM, or AGT_EINVALID for a recursion limit */
    bool limit_hit;
    int quiet;       /* > 0 inside anyOf/oneOf/not/if/contains subschemas */
    bool have_first; /* first-error mode: first_msg holds the violation */
    const char *limit_kw;
    char limit_msg[256];
    char first_msg[512];
} vctx;

static bool v_node(vctx *c, const agti_snode *n, const agti_jv *inst, ipath *ip, const dscope *ds,
                   eset *ev);

/* ---- evaluated sets -------------------------------------------------- */

static bool eset_init(vctx *c, eset *e, size_t n)
{
    e->n = n;
    size_t words = (n + 63) / 64;
    if (words <= 2) {
        e->bits = e->inl;
        e->inl[0] = e->inl[1] = 0;
        return true;
    }
    e->bits = calloc(words, sizeof *e->bits);
    if (e->bits == NULL) {
        c->fatal = AGT_ENOMEM;
        return false;
    }
    return true;
}

static void eset_free(eset *e)
{
    if (e->bits != e->inl)
        free(e->bits);
}

static void eset_mark(eset *e, size_t i)
{
    if (e && i < e->n)
        e->bits[i / 64] |= 1ull << (i % 64);
}

static bool eset_has(const eset *e, size_t i)
{
    return (e->bits[i / 64] >> (i % 64)) & 1u;
}

static void eset_merge(eset *dst, const eset *src)
{
    if (dst == NULL)
        return;
    for (size_t w = 0; w < (dst->n + 63) / 64; w++)
        dst->bits[w] |= src->bits[w];
}

/* ---- errors ---------------------------------------------------------- */

static void path_build(agti_buf *b, const ipath *ip)
{
    if (ip == NULL || ip->up == NULL)
        return;
    path_build(b, ip->up);
    if (ip->key) {
        agti_buf_putc(b, '/');
        for (size_t i = 0; i < ip->klen; i++) {
            if (ip->key[i] == '~')
                agti_buf_puts(b, "~0");
            else if (ip->key[i] == '/')
                agti_buf_puts(b, "~1");
            else
                agti_buf_putc(b, ip->key[i]);
        }
    } else
        agti_buf_printf(b, "/%zu", ip->index);
}

/* A fixed-size text buffer for the first-error mode: no allocation; text
 * that does not fit is cut (on a UTF-8 boundary) and marked "...". */
typedef struct fbuf {
    char *p;
    size_t len, cap; /* cap includes the NUL */
    bool cut;
} fbuf;

static void fb_put(fbuf *f, const char *s, size_t n)
{
    if (f->cut)
        return;
    size_t room = f->cap - 1 - f->len;
    if (n > room) {
        size_t keep = room > 3 ? agti_utf8_floor(s, room - 3) : 0;
        memcpy(f->p + f->len, s, keep);
        f->len += keep;
        if (room >= 3) {
            memcpy(f->p + f->len, "...", 3);
            f->len += 3;
        }
        f->cut = true;
    } else {
        memcpy(f->p + f->len, s, n);
        f->len += n;
    }
    f->p[f->len] = '\0';
}

static void fb_puts(fbuf *f, const char *s)
{
    fb_put(f, s, strlen(s));
}

static void path_fixed(fbuf *f, const ipath *ip)
{
    if (ip == NULL || ip->up == NULL)
        return;
    path_fixed(f, ip->up);
    if (ip->key) {
        fb_put(f, "/", 1);
        size_t start = 0;
        for (size_t i = 0; i < ip->klen; i++) {
            if (ip->key[i] == '~' || ip->key[i] == '/') {
                fb_put(f, ip->key + start, i - start);
                fb_put(f, ip->key[i] == '~' ? "~0" : "~1", 2);
                start = i + 1;
            }
        }
        fb_put(f, ip->key + start, ip->klen - start);
    } else {
        char num[24];
        int k = snprintf(num, sizeof num, "/%zu", ip->index);
        fb_put(f, num, (size_t)k);
    }
}

static void report(vctx *c, const ipath *ip, const agti_snode *n, const char *kw, const char *fmt,
                   ...) AGTI_PRINTF(5, 6);
static void report(vctx *c, const ipath *ip, const agti_snode *n, const char *kw, const char *fmt,
                   ...)
{
    if (c->quiet || c->fatal || (c->errors == NULL && c->have_first))
        return;
    if (c->errors == NULL) {
        /* first-error mode: straight into first_msg, no allocation */
        fbuf f = {c->first_msg, 0, sizeof c->first_msg, false};
        f.p[0] = '\0';
        path_fixed(&f, ip);
        if (f.len == 0)
            fb_puts(&f, "instance");
        fb_puts(&f, ": ");
        if (!f.cut) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(f.p + f.len, f.cap - f.len, fmt, ap);
            va_end(ap);
        }
        c->have_first = true;
        return;
    }
    agti_buf ipb = AGTI_BUF_INIT, spb = AGTI_BUF_INIT, msg = AGTI_BUF_INIT;
    path_build(&ipb, ip);
    agti_buf_puts(&spb, n->path);
    if (kw && !n->is_bool)
        agti_json_pointer_append(&spb, kw);
    va_list ap;
    va_start(ap, fmt);
    agti_buf_vprintf(&msg, fmt, ap);
    va_end(ap);
    json_t *e = NULL;
    if (!ipb.oom && !spb.oom && !msg.oom)
        e = json_pack("{s:s, s:s, s:s, s:s}", "instance_path", agti_buf_cstr(&ipb), "schema_path",
                      agti_buf_cstr(&spb), "keyword", kw ? kw : "false", "message",
                      agti_buf_cstr(&msg));
    if (e == NULL || json_array_append_new(c->errors, e) != 0)
        c->fatal = AGT_ENOMEM;
    agti_buf_free(&ipb);
    agti_buf_free(&spb);
    agti_buf_free(&msg);
}

/* Evaluates a subschema without recording errors (for subschemas whose
 * failure is not itself the failure: anyOf branches, not, if, contains). */
static bool quiet_node(vctx *c, const agti_snode *n, const agti_jv *inst, ipath *ip,
                       const dscope *ds, eset *ev)
{
    json_t *saved = c->errors;
    c->errors = NULL;
    c->quiet++;
    bool r = v_node(c, n, inst, ip, ds, ev);
    c->quiet--;
    c->errors = saved;
    return r;
}

/* ---- value helpers --------------------------------------------------- */

/* The exact decimal value of a number (false on OOM). */
static bool num_dec(const agti_jv *v, agti_dec *d)
{
    if (v->type == AGTI_JV_INT)
        return agti_dec_from_int(d, (long long)v->u.i);
    if (v->type == AGTI_JV_REAL)
        return agti_dec_from_double(d, v->u.d);
    return agti_dec_parse(d, v->u.s, v->len);
}

static bool big_integral(const agti_jv *v)
{
    agti_dec d;
    bool r = agti_dec_parse(&d, v->u.s, v->len) && agti_dec_is_integer(&d);
    agti_dec_free(&d);
    return r;
}

static bool is_integral(const agti_jv *v)
{
    if (v->type == AGTI_JV_INT)
        return true;
    if (v->type == AGTI_JV_BIG)
        return big_integral(v);
    return v->type == AGTI_JV_REAL && isfinite(v->u.d) && floor(v->u.d) == v->u.d;
}

/* Draft 4's integer: a number written without fraction or exponent. */
static bool written_as_integer(const agti_jv *v)
{
    if (v->type == AGTI_JV_INT)
        return true;
    if (v->type == AGTI_JV_REAL)
        return v->len == 1;
    for (size_t i = 0; i < v->len; i++)
        if (v->u.s[i] == '.' || v->u.s[i] == 'e' || v->u.s[i] == 'E')
            return false;
    return true;
}

static double num(const agti_jv *v)
{
    if (v->type == AGTI_JV_BIG) {
        char t[128];
        size_t n = v->len < sizeof t - 1 ? v->len : sizeof t - 1;
        memcpy(t, v->u.s, n);
        t[n] = '\0';
        return strtod(t, NULL);
    }
    return v->type == AGTI_JV_INT ? (double)v->u.i : v->u.d;
}

static const char *type_name(const agti_jv *v)
{
    switch (v->type) {
    case AGTI_JV_OBJECT:
        return "object";
    case AGTI_JV_ARRAY:
        return "array";
    case AGTI_JV_STRING:
        return "string";
    case AGTI_JV_INT:
        return "integer";
    case AGTI_JV_REAL:
    case AGTI_JV_BIG:
        return is_integral(v) ? "integer" : "number";
    case AGTI_JV_TRUE:
    case AGTI_JV_FALSE:
        return "boolean";
    default:
        return "null";
    }
}

static unsigned type_bits(const agti_jv *v)
{
    switch (v->type) {
    case AGTI_JV_OBJECT:
        return AGTI_T_OBJECT;
    case AGTI_JV_ARRAY:
        return AGTI_T_ARRAY;
    case AGTI_JV_STRING:
        return AGTI_T_STRING;
    case AGTI_JV_INT:
        return AGTI_T_NUMBER | AGTI_T_INTEGER;
    case AGTI_JV_REAL:
    case AGTI_JV_BIG:
        return is_integral(v) ? (AGTI_T_NUMBER | AGTI_T_INTEGER) : AGTI_T_NUMBER;
    case AGTI_JV_TRUE:
    case AGTI_JV_FALSE:
        return AGTI_T_BOOLEAN;
    default:
        return AGTI_T_NULL;
    }
}

static bool is_num(const agti_jv *v)
{
    return v->type == AGTI_JV_INT || v->type == AGTI_JV_REAL || v->type == AGTI_JV_BIG;
}

/* Orders two numbers exactly by their decimal values; -2 on OOM. */
static int cmp_exact(const agti_jv *a, const agti_jv *b)
{
    agti_dec x, y;
    bool okx = num_dec(a, &x), oky = num_dec(b, &y);
    int r = okx && oky ? agti_dec_cmp(&x, &y) : -2;
    agti_dec_free(&x);
    agti_dec_free(&y);
    return r;
}

/* Equality as JSON Schema defines it: numbers by value, objects unordered. */
static bool j_equal(const agti_jv *a, const agti_jv *b)
{
    if (is_num(a) && is_num(b)) {
        if (a->type == AGTI_JV_INT && b->type == AGTI_JV_INT)
            return a->u.i == b->u.i;
        if (a->type == AGTI_JV_BIG || b->type == AGTI_JV_BIG)
            return cmp_exact(a, b) == 0;
        return num(a) == num(b);
    }
    if (a->type != b->type)
        return false;
    switch (a->type) {
    case AGTI_JV_STRING:
        return a->len == b->len && memcmp(a->u.s, b->u.s, a->len) == 0;
    case AGTI_JV_ARRAY:
        if (a->len != b->len)
            return false;
        for (size_t i = 0; i < a->len; i++)
            if (!j_equal(&a->u.a[i], &b->u.a[i]))
                return false;
        return true;
    case AGTI_JV_OBJECT:
        if (a->len != b->len)
            return false;
        for (size_t i = 0; i < a->len; i++) {
            const agti_jv *w = agti_jv_get(b, a->u.o[i].key, a->u.o[i].klen);
            if (w == NULL || !j_equal(&a->u.o[i].val, w))
                return false;
        }
        return true;
    default:
        return true;
    }
}

static void fmt_num(char *buf, size_t n, double d);

/* Compact JSON text of a value, cut at the buffer's end. */
static void dump_fixed(fbuf *f, const agti_jv *v)
{
    char num[40];
    switch (v->type) {
    case AGTI_JV_NULL:
        fb_puts(f, "null");
        break;
    case AGTI_JV_TRUE:
        fb_puts(f, "true");
        break;
    case AGTI_JV_FALSE:
        fb_puts(f, "false");
        break;
    case AGTI_JV_INT:
        snprintf(num, sizeof num, "%lld", (long long)v->u.i);
        fb_puts(f, num);
        break;
    case AGTI_JV_REAL:
        fmt_num(num, sizeof num, v->u.d);
        fb_puts(f, num);
        break;
    case AGTI_JV_BIG:
        fb_put(f, v->u.s, v->len);
        break;
    case AGTI_JV_STRING:
    case AGTI_JV_OBJECT:
    case AGTI_JV_ARRAY:
        if (v->type == AGTI_JV_STRING) {
            fb_put(f, "\"", 1);
            size_t start = 0;
            for (size_t i = 0; i < v->len && !f->cut; i++) {
                unsigned char ch = (unsigned char)v->u.s[i];
                if (ch == '"' || ch == '\\' || ch < 0x20) {
                    fb_put(f, v->u.s + start, i - start);
                    if (ch == '"' || ch == '\\') {
                        char e[2] = {'\\', (char)ch};
                        fb_put(f, e, 2);
                    } else {
                        snprintf(num, sizeof num, "\\u%04x", ch);
                        fb_puts(f, num);
                    }
                    start = i + 1;
                }
            }
            fb_put(f, v->u.s + start, v->len - start);
            fb_put(f, "\"", 1);
        } else if (v->type == AGTI_JV_ARRAY) {
            fb_put(f, "[", 1);
            for (size_t i = 0; i < v->len && !f->cut; i++) {
                if (i)
                    fb_put(f, ",", 1);
                dump_fixed(f, &v->u.a[i]);
            }
            fb_put(f, "]", 1);
        } else {
            fb_put(f, "{", 1);
            for (size_t i = 0; i < v->len && !f->cut; i++) {
                agti_jv key;
                key.type = AGTI_JV_STRING;
                key.len = v->u.o[i].klen;
                key.u.s = v->u.o[i].key;
                if (i)
                    fb_put(f, ",", 1);
                dump_fixed(f, &key);
                fb_put(f, ":", 1);
                dump_fixed(f, &v->u.o[i].val);
            }
            fb_put(f, "}", 1);
        }
        break;
    default:
        break;
    }
}

char *agti_schema_jv_text(agti_jarena *a, const agti_jv *v)
{
    char text[160];
    fbuf f = {text, 0, sizeof text, false};
    text[0] = '\0';
    dump_fixed(&f, v);
    char *out = agti_jarena_alloc(a, f.len + 1);
    if (out)
        memcpy(out, text, f.len + 1);
    return out;
}

/* A violation whose message is PREFIX and a value's text (a node's
 * enum_text or const_text). */
static void report_json(vctx *c, const ipath *ip, const agti_snode *n, const char *kw,
                        const char *prefix, const char *text)
{
    if (c->quiet || c->fatal || (c->errors == NULL && c->have_first))
        return;
    if (c->errors == NULL) {
        /* first-error mode: composed in place, no formatting pass */
        fbuf f = {c->first_msg, 0, sizeof c->first_msg, false};
        f.p[0] = '\0';
        path_fixed(&f, ip);
        if (f.len == 0)
            fb_puts(&f, "instance");
        fb_puts(&f, ": ");
        fb_puts(&f, prefix);
        fb_puts(&f, text);
        c->have_first = true;
        return;
    }
    report(c, ip, n, kw, "%s%s", prefix, text);
}

static bool re_search(vctx *c, const pcre2_code *re, const char *s, size_t len)
{
    if (c->md == NULL) {
        c->md = atomic_exchange(&c->s->match_cache, NULL);
        if (c->md == NULL)
            c->md = pcre2_match_data_create(1, NULL);
        if (c->md == NULL) {
            c->fatal = AGT_ENOMEM;
            return false;
        }
    }
    int rc = pcre2_match(re, (PCRE2_SPTR)s, len, 0, 0, c->md, NULL);
    return rc >= 0;
}

static void fmt_num(char *buf, size_t n, double d)
{
    if (floor(d) == d && fabs(d) < 1e15) {
        snprintf(buf, n, "%.0f", d);
        return;
    }
    snprintf(buf, n, "%.17g", d);
    /* prefer the shortest form that reads back the same */
    for (int p = 1; p <= 17; p++) {
        char t[40];
        snprintf(t, sizeof t, "%.*g", p, d);
        if (strtod(t, NULL) == d) {
            snprintf(buf, n, "%s", t);
            return;
        }
    }
}

/* The number a keyword's text holds, as a value. */
static agti_jv big_jv(const char *text)
{
    agti_jv v;
    v.type = AGTI_JV_BIG;
    v.len = strlen(text);
    v.u.s = text;
    return v;
}

static bool is_multiple(const agti_snode *n, const agti_jv *inst)
{
    if (inst->type == AGTI_JV_BIG || n->big[0] != NULL) {
        agti_jv m;
        if (n->big[0]) {
            m = big_jv(n->big[0]);
        } else {
            m.type = AGTI_JV_REAL;
            m.len = 0;
            m.u.d = n->multiple_of;
        }
        agti_dec x, y;
        int r = num_dec(inst, &x) && num_dec(&m, &y) ? agti_dec_multiple(&x, &y) : -1;
        agti_dec_free(&x);
        agti_dec_free(&y);
        if (r >= 0)
            return r == 1;
    }
    if (inst->type == AGTI_JV_INT && n->multiple_of_int > 0)
        return inst->u.i % n->multiple_of_int == 0;
    double v = num(inst), m = n->multiple_of;
    double q = v / m;
    if (!isfinite(q))
        return isfinite(v) && fmod(v, m) == 0; /* fmod is exact: 1e308 % 0.5 == 0 */
    if (fmod(v, m) == 0)
        return true;
    double r = nearbyint(q);
    return fabs(q - r) <= 1e-9 * fmax(1.0, fabs(q)) && fabs(r * m - v) <= 1e-9 * fmax(1.0, fabs(v));
}

/* Orders the finite double d against the integer i exactly: -1, 0, 1. */
static int cmp_double_int(double d, int64_t i)
{
    if (d < -9223372036854775808.0)
        return -1;
    if (d >= 9223372036854775808.0)
        return 1;
    double f = floor(d);
    int64_t fi = (int64_t)f;
    if (fi != i)
        return fi < i ? -1 : 1;
    return d > f ? 1 : 0;
}

/* Orders the instance number (v = its double value) against a limit: the
 * integer li when lint, else the double ld. Exact when either side is an
 * integer (a double comparison would say 2^53 + 1 <= 2^53). */
static int cmp_limit(const agti_jv *inst, double v, double ld, bool lint, int64_t li)
{
    if (inst->type == AGTI_JV_INT && lint)
        return inst->u.i < li ? -1 : inst->u.i > li;
    if (lint)
        return cmp_double_int(v, li);
    if (inst->type == AGTI_JV_INT)
        return -cmp_double_int(ld, inst->u.i);
    return v < ld ? -1 : v > ld;
}

/* ---- keyword groups -------------------------------------------------- */

static bool v_number(vctx *c, const agti_snode *n, const agti_jv *inst, const ipath *ip)
{
    bool ok = true;
    double v = num(inst);
    char b[40];
    if ((n->flags & AGTI_K_MULTIPLE_OF) && !is_multiple(n, inst)) {
        ok = false;
        fmt_num(b, sizeof b, n->multiple_of);
        report(c, ip, n, "multipleOf", "must be a multiple of %s", n->big[0] ? n->big[0] : b);
        if (!c->errors)
            return false;
    }
    static const struct {
        unsigned bit;
        const char *kw, *text;
        int want; /* the comparison result that passes: <= 0, >= 0, < 0, > 0 */
        bool strict;
    } lims[4] = {{AGTI_K_MAXIMUM, "maximum", "must be at most", -1, false},
                 {AGTI_K_MINIMUM, "minimum", "must be at least", 1, false},
                 {AGTI_K_EXCL_MAXIMUM, "exclusiveMaximum", "must be less than", -1, true},
                 {AGTI_K_EXCL_MINIMUM, "exclusiveMinimum", "must be greater than", 1, true}};
    const double ld[4] = {n->maximum, n->minimum, n->excl_maximum, n->excl_minimum};
    const int64_t li[4] = {n->maximum_i, n->minimum_i, n->excl_maximum_i, n->excl_minimum_i};
    for (int k = 0; k < 4; k++) {
        if (!(n->flags & lims[k].bit))
            continue;
        bool lint = (n->int_limits & lims[k].bit) != 0;
        int r;
        if (n->big[k + 1] != NULL || inst->type == AGTI_JV_BIG) {
            agti_jv lim;
            if (n->big[k + 1]) {
                lim = big_jv(n->big[k + 1]);
            } else if (lint) {
                lim.type = AGTI_JV_INT;
                lim.len = 0;
                lim.u.i = li[k];
            } else {
                lim.type = AGTI_JV_REAL;
                lim.len = 0;
                lim.u.d = ld[k];
            }
            r = cmp_exact(inst, &lim);
            if (r == -2) {
                c->fatal = AGT_ENOMEM;
                return false;
            }
        } else {
            r = cmp_limit(inst, v, ld[k], lint, li[k]);
        }
        bool pass = r == lims[k].want || (!lims[k].strict && r == 0);
        if (pass)
            continue;
        ok = false;
        if (n->big[k + 1]) {
            report(c, ip, n, lims[k].kw, "%s %s", lims[k].text, n->big[k + 1]);
            if (!c->errors)
                return false;
            continue;
        }
        if (lint)
            snprintf(b, sizeof b, "%" PRId64, li[k]);
        else
            fmt_num(b, sizeof b, ld[k]);
        report(c, ip, n, lims[k].kw, "%s %s", lims[k].text, b);
        if (!c->errors)
            return false;
    }
    return ok;
}

static const char *fmt_name(int f)
{
    return agti_schema_format_name(f);
}

static int b64_value(unsigned char ch)
{
    if (ch >= 'A' && ch <= 'Z')
        return ch - 'A';
    if (ch >= 'a' && ch <= 'z')
        return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9')
        return ch - '0' + 52;
    return ch == '+' ? 62 : ch == '/' ? 63 : -1;
}

/* RFC 4648 section 4 base64 (padded) into out (len / 4 * 3 bytes); returns
 * the decoded length, or -1. */
static long b64_decode(const char *s, size_t len, unsigned char *out)
{
    if (len % 4 != 0)
        return -1;
    size_t o = 0;
    for (size_t i = 0; i < len; i += 4) {
        int v[4];
        int pad = 0;
        for (int k = 0; k < 4; k++) {
            unsigned char ch = (unsigned char)s[i + (size_t)k];
            if (ch == '=' && i + 4 == len && k >= 2) {
                v[k] = 0;
                pad++;
                continue;
            }
            if (pad)
                return -1;
            v[k] = b64_value(ch);
            if (v[k] < 0)
                return -1;
        }
        unsigned bits = (unsigned)(v[0] << 18 | v[1] << 12 | v[2] << 6 | v[3]);
        out[o++] = (unsigned char)(bits >> 16);
        if (pad < 2)
            out[o++] = (unsigned char)(bits >> 8);
        if (pad < 1)
            out[o++] = (unsigned char)bits;
    }
    return (long)o;
}

/* Draft 7 "contentEncoding": "base64" and "contentMediaType":
 * "application/json" (of the decoded bytes when both are given). */
AGTI_NOINLINE static bool v_content(vctx *c, const agti_snode *n, const char *s, size_t len,
                                    const ipath *ip)
{
    const char *doc = s;
    size_t dlen = len;
    unsigned char *dec = NULL;
    if (n->content_base64) {
        dec = malloc(len / 4 * 3 + 1);
        if (dec == NULL) {
            c->fatal = AGT_ENOMEM;
            return false;
        }
        long got = b64_decode(s, len, dec);
        if (got < 0) {
            free(dec);
            report(c, ip, n, "contentEncoding",
                   "is not valid base64 (RFC 4648: A-Z a-z 0-9 + /, padded with = to a multiple "
                   "of 4 characters)");
            return false;
        }
        doc = (const char *)dec;
        dlen = (size_t)got;
    }
    bool ok = true;
    if (n->content_json) {
        agti_jarena a;
        agti_jarena_init(&a, NULL, 0);
        if (agti_jv_parse(&a, doc, dlen, "content") == NULL) {
            ok = false;
            if (agt_error_code() == AGT_ENOMEM)
                c->fatal = AGT_ENOMEM;
            else
                report(c, ip, n, "contentMediaType", "is not a valid application/json document%s",
                       n->content_base64 ? " once decoded from base64" : "");
        }
        agti_jarena_free(&a);
    }
    free(dec);
    return ok;
}

static bool v_string(vctx *c, const agti_snode *n, const agti_jv *inst, const ipath *ip)
{
    bool ok = true;
    const char *s = inst->u.s;
    size_t len = inst->len;
    if (n->max_length >= 0 || n->min_length >= 0) {
        size_t cps = agti_utf8_count(s, len);
        if (n->max_length >= 0 && cps > (uint64_t)n->max_length) {
            ok = false;
            report(c, ip, n, "maxLength", "must be at most %lld character%s long, got %zu",
                   (long long)n->max_length, n->max_length == 1 ? "" : "s", cps);
            if (!c->errors)
                return false;
        }
        if (n->min_length >= 0 && cps < (uint64_t)n->min_length) {
            ok = false;
            report(c, ip, n, "minLength", "must be at least %lld character%s long, got %zu",
                   (long long)n->min_length, n->min_length == 1 ? "" : "s", cps);
            if (!c->errors)
                return false;
        }
    }
    if (n->pattern && !re_search(c, n->pattern, s, len)) {
        ok = false;
        report(c, ip, n, "pattern", "does not match pattern '%s'", n->pattern_src);
        if (!c->errors)
            return false;
    }
    if (n->format && !agti_schema_format_check(n->format, s, len)) {
        ok = false;
        report(c, ip, n, "format", "is not a valid %s", fmt_name(n->format));
        if (!c->errors)
            return false;
    }
    if ((n->content_base64 || n->content_json) && !v_content(c, n, s, len, ip))
        ok = false;
    return ok;
}

/* A hash consistent with j_equal: numbers hash by value, objects ignore
 * member order. */
static uint64_t jv_hash(const agti_jv *v)
{
    uint64_t h;
    switch (v->type) {
    case AGTI_JV_INT:
    case AGTI_JV_REAL:
    case AGTI_JV_BIG: {
        double d = num(v); /* equal values read to the same double */
        if (d == 0)
            d = 0; /* -0.0 == 0.0 */
        memcpy(&h, &d, sizeof h);
        return h * 0x9E3779B97F4A7C15ull;
    }
    case AGTI_JV_STRING:
        return agti_schema_hash(v->u.s, v->len) * 31u + 5;
    case AGTI_JV_ARRAY:
        h = 7;
        for (size_t i = 0; i < v->len; i++)
            h = h * 1000003u ^ jv_hash(&v->u.a[i]);
        return h;
    case AGTI_JV_OBJECT:
        h = 11;
        for (size_t i = 0; i < v->len; i++)
            h += (agti_schema_hash(v->u.o[i].key, v->u.o[i].klen) * 0x100000001B3ull) ^
                 jv_hash(&v->u.o[i].val);
        return h;
    default:
        return v->type;
    }
}

typedef struct hidx {
    uint64_t h;
    size_t i;
} hidx;

static int hidx_cmp(const void *x, const void *y)
{
    const hidx *a = x, *b = y;
    if (a->h != b->h)
        return a->h < b->h ? -1 : 1;
    return a->i < b->i ? -1 : (a->i > b->i);
}

/* 1 and the first pair found when two items are equal, 0 when none, -1 on
 * OOM. Small arrays compare pairwise; large ones sort by hash so a huge
 * array cannot take quadratic time. */
static int find_duplicate(const agti_jv *arr, size_t *a, size_t *b)
{
    size_t n = arr->len;
    if (n <= 32) {
        for (size_t i = 0; i < n; i++)
            for (size_t k = i + 1; k < n; k++)
                if (j_equal(&arr->u.a[i], &arr->u.a[k])) {
                    *a = i;
                    *b = k;
                    return 1;
                }
        return 0;
    }
    hidx *t = malloc(n * sizeof *t);
    if (t == NULL)
        return -1;
    for (size_t i = 0; i < n; i++) {
        t[i].h = jv_hash(&arr->u.a[i]);
        t[i].i = i;
    }
    qsort(t, n, sizeof *t, hidx_cmp);
    int found = 0;
    for (size_t i = 0; i < n && !found; i++)
        for (size_t k = i + 1; k < n && t[k].h == t[i].h; k++)
            if (j_equal(&arr->u.a[t[i].i], &arr->u.a[t[k].i])) {
                *a = t[i].i < t[k].i ? t[i].i : t[k].i;
                *b = t[i].i < t[k].i ? t[k].i : t[i].i;
                found = 1;
                break;
            }
    free(t);
    return found;
}

/* Runs a subschema in first-error mode and copies its first violation (the
 * path stripped when it is the current location) into out. Failure path
 * only: kept out of line so its buffers never sit in the recursion's frames. */
AGTI_NOINLINE static void first_violation(vctx *c, const agti_snode *sub, const agti_jv *inst,
                                          ipath *ip, const dscope *ds, agti_buf *out)
{
    json_t *saved_errors = c->errors;
    bool saved_have = c->have_first;
    int saved_quiet = c->quiet;
    char saved_first[sizeof c->first_msg];
    memcpy(saved_first, c->first_msg, sizeof saved_first);
    c->errors = NULL;
    c->have_first = false;
    c->quiet = 0;
    if (!v_node(c, sub, inst, ip, ds, NULL) && c->have_first) {
        agti_buf here = AGTI_BUF_INIT;
        path_build(&here, ip);
        agti_buf_puts(&here, ": ");
        const char *prefix = here.len > 2 ? agti_buf_cstr(&here) : "instance: ";
        const char *m = c->first_msg;
        if (strncmp(m, prefix, strlen(prefix)) == 0)
            m += strlen(prefix);
        agti_buf_puts(out, m);
        agti_buf_free(&here);
    } else {
        agti_buf_puts(out, "matches");
    }
    c->errors = saved_errors;
    c->have_first = saved_have;
    c->quiet = saved_quiet;
    memcpy(c->first_msg, saved_first, sizeof saved_first);
}

/* A property name that fails "propertyNames": one violation that says it is
 * about the name, with the reason. */
AGTI_NOINLINE static void report_name(vctx *c, const agti_snode *n, const agti_jv *name, ipath *ip,
                                      const dscope *ds)
{
    if (c->quiet || c->fatal || (c->errors == NULL && c->have_first))
        return;
    agti_buf why = AGTI_BUF_INIT;
    first_violation(c, n->property_names, name, ip, ds, &why);
    if (!c->fatal)
        report(c, ip, n, "propertyNames", "property name '%.*s' is not allowed: %s", (int)name->len,
               name->u.s, agti_buf_cstr(&why));
    agti_buf_free(&why);
}

/* "additionalProperties": false: names the property and what is allowed, so
 * a caller (often a model) can correct the call. */
AGTI_NOINLINE static void report_extra(vctx *c, const ipath *ip, const agti_snode *n,
                                       const char *key, size_t klen)
{
    if (c->quiet || c->fatal || (c->errors == NULL && c->have_first))
        return;
    char list[240];
    fbuf f = {list, 0, sizeof list, false};
    list[0] = '\0';
    for (size_t i = 0; i < n->n_props && !f.cut; i++) {
        if (i)
            fb_puts(&f, ", ");
        fb_put(&f, n->props[i].key, n->props[i].len);
    }
    for (size_t i = 0; i < n->n_patterns && !f.cut; i++) {
        fb_puts(&f, f.len ? ", " : "");
        fb_puts(&f, "names matching '");
        fb_puts(&f, n->patterns[i].src);
        fb_puts(&f, "'");
    }
    if (f.len)
        report(c, ip, n, "additionalProperties", "property '%.*s' is not allowed (allowed: %s)",
               (int)klen, key, list);
    else
        report(c, ip, n, "additionalProperties", "property '%.*s' is not allowed", (int)klen, key);
}

static bool child_false(const agti_snode *n)
{
    return n->is_bool && !n->bool_value;
}

static bool v_array(vctx *c, const agti_snode *n, const agti_jv *inst, ipath *ip, const dscope *ds,
                    eset *ev)
{
    bool ok = true;
    size_t size = inst->len;
    if (n->max_items >= 0 && size > (uint64_t)n->max_items) {
        ok = false;
        report(c, ip, n, "maxItems", "must have at most %lld item%s, got %zu",
               (long long)n->max_items, n->max_items == 1 ? "" : "s", size);
        if (!c->errors)
            return false;
    }
    if (n->min_items >= 0 && size < (uint64_t)n->min_items) {
        ok = false;
        report(c, ip, n, "minItems", "must have at least %lld item%s, got %zu",
               (long long)n->min_items, n->min_items == 1 ? "" : "s", size);
        if (!c->errors)
            return false;
    }
    if ((n->flags & AGTI_K_UNIQUE) && size > 1) {
        size_t a, b;
        int dup = find_duplicate(inst, &a, &b);
        if (dup < 0) {
            c->fatal = AGT_ENOMEM;
            return false;
        }
        if (dup) {
            ok = false;
            report(c, ip, n, "uniqueItems",
                   "must not contain duplicate items (items %zu and %zu are equal)", a, b);
            if (!c->errors)
                return false;
        }
    }
    if (n->n_prefix || n->items) {
        for (size_t i = 0; i < size; i++) {
            const agti_snode *sub;
            const char *kw;
            if (i < n->n_prefix) {
                sub = n->prefix[i];
                kw = n->draft == AGT_DRAFT_2020_12 ? "prefixItems" : "items";
            } else if (n->items) {
                sub = n->items;
                kw = n->items_kw;
            } else {
                break;
            }
            ipath cp = {ip, NULL, 0, i, 0};
            if (child_false(sub)) {
                ok = false;
                report(c, &cp, n, kw, "item %zu is not allowed (at most %zu items)", i,
                       n->n_prefix);
                if (!c->errors)
                    return false;
                continue;
            }
            if (!v_node(c, sub, &inst->u.a[i], &cp, ds, NULL)) {
                ok = false;
                if (!c->errors || c->fatal)
                    return false;
            }
            eset_mark(ev, i);
        }
    }
    if (n->contains) {
        size_t matches = 0;
        for (size_t i = 0; i < size && !c->fatal; i++) {
            ipath cp = {ip, NULL, 0, i, 0};
            if (quiet_node(c, n->contains, &inst->u.a[i], &cp, ds, NULL)) {
                matches++;
                eset_mark(ev, i);
            }
        }
        if (c->fatal)
            return false;
        if (matches < (uint64_t)n->min_contains) {
            ok = false;
            if (n->min_contains == 1)
                report(c, ip, n, "contains", "must contain at least one item matching the schema");
            else
                report(c, ip, n, "minContains",
                       "must contain at least %lld items matching \"contains\", got %zu",
                       (long long)n->min_contains, matches);
            if (!c->errors)
                return false;
        }
        if (n->max_contains >= 0 && matches > (uint64_t)n->max_contains) {
            ok = false;
            report(c, ip, n, "maxContains",
                   "must contain at most %lld items matching \"contains\", got %zu",
                   (long long)n->max_contains, matches);
            if (!c->errors)
                return false;
        }
    }
    return ok;
}

static const agti_sprop *find_prop(const agti_snode *n, const char *key, size_t len)
{
    if (n->n_props == 0)
        return NULL;
    if (n->n_props <= 8) {
        /* few properties: comparing beats hashing */
        for (size_t i = 0; i < n->n_props; i++) {
            const agti_sprop *p = &n->props[i];
            if (p->len == len && (len == 0 || p->key[0] == key[0]) && memcmp(p->key, key, len) == 0)
                return p;
        }
        return NULL;
    }
    uint32_t h = agti_schema_hash(key, len);
    uint32_t i = h & n->prop_mask;
    while (n->prop_table[i]) {
        const agti_sprop *p = &n->props[n->prop_table[i] - 1];
        if (p->hash == h && p->len == len && memcmp(p->key, key, len) == 0)
            return p;
        i = (i + 1) & n->prop_mask;
    }
    return NULL;
}

static bool v_object(vctx *c, const agti_snode *n, const agti_jv *inst, ipath *ip, const dscope *ds,
                     eset *ev)
{
    bool ok = true;
    size_t size = inst->len;
    if (n->max_props >= 0 && size > (uint64_t)n->max_props) {
        ok = false;
        report(c, ip, n, "maxProperties", "must have at most %lld propert%s, got %zu",
               (long long)n->max_props, n->max_props == 1 ? "y" : "ies", size);
        if (!c->errors)
            return false;
    }
    if (n->min_props >= 0 && size < (uint64_t)n->min_props) {
        ok = false;
        report(c, ip, n, "minProperties", "must have at least %lld propert%s, got %zu",
               (long long)n->min_props, n->min_props == 1 ? "y" : "ies", size);
        if (!c->errors)
            return false;
    }
    for (size_t i = 0; i < n->n_required; i++) {
        if (agti_jv_get(inst, n->required[i], n->required_lens[i]) == NULL) {
            ok = false;
            report(c, ip, n, "required", "missing required property '%s'", n->required[i]);
            if (!c->errors)
                return false;
        }
    }
    for (size_t i = 0; i < n->n_dep_required; i++) {
        const agti_sdepreq *d = &n->dep_required[i];
        if (agti_jv_get(inst, d->key, d->len) == NULL)
            continue;
        for (size_t k = 0; k < d->n; k++) {
            if (agti_jv_get(inst, d->names[k], d->lens[k]) == NULL) {
                ok = false;
                report(c, ip, n, d->kw, "missing property '%s', required when '%s' is present",
                       d->names[k], d->key);
                if (!c->errors)
                    return false;
            }
        }
    }
    for (size_t i = 0; i < n->n_dep_schemas; i++) {
        const agti_sprop *d = &n->dep_schemas[i];
        if (agti_jv_get(inst, d->key, d->len) == NULL)
            continue;
        if (!v_node(c, d->node, inst, ip, ds, ev)) {
            ok = false;
            if (!c->errors || c->fatal)
                return false;
        }
    }
    if (n->n_props || n->n_patterns || n->additional || n->property_names) {
        for (size_t idx = 0; idx < inst->len; idx++) {
            const char *key = inst->u.o[idx].key;
            size_t klen = inst->u.o[idx].klen;
            const agti_jv *val = &inst->u.o[idx].val;
            ipath cp = {ip, key, klen, 0, 0};
            if (n->property_names) {
                agti_jv ks;
                ks.type = AGTI_JV_STRING;
                ks.len = klen;
                ks.u.s = key;
                bool r;
                if (child_false(n->property_names)) {
                    r = false;
                    report(c, &cp, n, "propertyNames", "property name '%.*s' is not allowed",
                           (int)klen, key);
                } else {
                    r = quiet_node(c, n->property_names, &ks, &cp, ds, NULL);
                    if (!r && !c->fatal)
                        report_name(c, n, &ks, &cp, ds);
                }
                if (!r) {
                    ok = false;
                    if (!c->errors || c->fatal)
                        return false;
                }
            }
            bool matched = false;
            const agti_sprop *p = find_prop(n, key, klen);
            if (p) {
                matched = true;
                if (child_false(p->node)) {
                    ok = false;
                    report(c, &cp, n, "properties", "property '%.*s' is not allowed", (int)klen,
                           key);
                    if (!c->errors)
                        return false;
                } else if (!v_node(c, p->node, val, &cp, ds, NULL)) {
                    ok = false;
                    if (!c->errors || c->fatal)
                        return false;
                }
            }
            for (size_t k = 0; k < n->n_patterns; k++) {
                if (!re_search(c, n->patterns[k].re, key, klen))
                    continue;
                matched = true;
                if (!v_node(c, n->patterns[k].node, val, &cp, ds, NULL)) {
                    ok = false;
                    if (!c->errors || c->fatal)
                        return false;
                }
            }
            if (!matched && n->additional) {
                matched = true;
                if (child_false(n->additional)) {
                    ok = false;
                    report_extra(c, &cp, n, key, klen);
                    if (!c->errors)
                        return false;
                } else if (!v_node(c, n->additional, val, &cp, ds, NULL)) {
                    ok = false;
                    if (!c->errors || c->fatal)
                        return false;
                }
            }
            if (matched)
                eset_mark(ev, idx);
        }
    }
    return ok;
}

static bool v_unevaluated(vctx *c, const agti_snode *n, const agti_jv *inst, ipath *ip,
                          const dscope *ds, eset *local)
{
    bool ok = true;
    if (n->unevaluated_props && inst->type == AGTI_JV_OBJECT) {
        for (size_t i = 0; i < inst->len; i++) {
            if (eset_has(local, i))
                continue;
            const char *key = inst->u.o[i].key;
            size_t klen = inst->u.o[i].klen;
            const agti_jv *val = &inst->u.o[i].val;
            ipath cp = {ip, key, klen, 0, 0};
            if (child_false(n->unevaluated_props)) {
                ok = false;
                report(c, &cp, n, "unevaluatedProperties", "property '%.*s' is not allowed",
                       (int)klen, key);
                if (!c->errors)
                    return false;
                continue;
            }
            if (!v_node(c, n->unevaluated_props, val, &cp, ds, NULL)) {
                ok = false;
                if (!c->errors || c->fatal)
                    return false;
            }
            eset_mark(local, i);
        }
    }
    if (n->unevaluated_items && inst->type == AGTI_JV_ARRAY) {
        for (size_t i = 0; i < inst->len; i++) {
            if (eset_has(local, i))
                continue;
            ipath cp = {ip, NULL, 0, i, 0};
            if (child_false(n->unevaluated_items)) {
                ok = false;
                report(c, &cp, n, "unevaluatedItems", "item %zu is not allowed", i);
                if (!c->errors)
                    return false;
                continue;
            }
            if (!v_node(c, n->unevaluated_items, &inst->u.a[i], &cp, ds, NULL)) {
                ok = false;
                if (!c->errors || c->fatal)
                    return false;
            }
            eset_mark(local, i);
        }
    }
    return ok;
}

static size_t inst_size(const agti_jv *inst)
{
    return (inst->type == AGTI_JV_OBJECT || inst->type == AGTI_JV_ARRAY) ? inst->len : 0;
}

/* A subschema applied in place, whose annotations count only when it passes. */
static bool v_branch(vctx *c, const agti_snode *sub, const agti_jv *inst, ipath *ip,
                     const dscope *ds, eset *ev, bool quiet)
{
    if (ev == NULL)
        return quiet ? quiet_node(c, sub, inst, ip, ds, NULL) : v_node(c, sub, inst, ip, ds, NULL);
    eset tmp;
    if (!eset_init(c, &tmp, ev->n))
        return false;
    bool r = quiet ? quiet_node(c, sub, inst, ip, ds, &tmp) : v_node(c, sub, inst, ip, ds, &tmp);
    if (r)
        eset_merge(ev, &tmp);
    eset_free(&tmp);
    return r;
}

static bool v_follow(vctx *c, const agti_snode *n, const agti_snode *target, const char *kw,
                     const char *src, const agti_jv *inst, ipath *ip, const dscope *ds, eset *ev)
{
    for (const refframe *f = ip->refs; f; f = f->up) {
        if (f->target != target)
            continue;
        /* the same schema again at the same instance location: it would
         * never end */
        snprintf(c->limit_msg, sizeof c->limit_msg,
                 "%s '%s' at schema '%s' leads back to '%s' without moving into the instance: "
                 "the schema loops",
                 kw, src, n->path, target->path[0] ? target->path : "#");
        report(c, ip, n, kw, "%s", c->limit_msg);
        c->limit_kw = kw;
        c->limit_hit = true;
        c->fatal = AGT_EINVALID;
        return false;
    }
    refframe here = {ip->refs, target};
    ip->refs = &here;
    bool r = v_node(c, target, inst, ip, ds, ev);
    ip->refs = here.up;
    return r;
}

/* Reports a combinator that no branch matched, with each branch's first
 * violation, so the reader sees what each alternative wanted. */
AGTI_NOINLINE static void report_branches(vctx *c, const agti_snode *n, agti_snode *const *branches,
                                          size_t nb, const agti_jv *inst, ipath *ip,
                                          const dscope *ds, const char *kw, const char *what)
{
    if (c->quiet || c->fatal || (c->errors == NULL && c->have_first))
        return;
    agti_buf msg = AGTI_BUF_INIT;
    agti_buf_puts(&msg, what);
    for (size_t i = 0; i < nb && i < 4 && !c->fatal; i++) {
        agti_buf_printf(&msg, "%soption %zu: ", i ? "; " : " (", i);
        first_violation(c, branches[i], inst, ip, ds, &msg);
    }
    if (nb > 4)
        agti_buf_puts(&msg, "; ...");
    agti_buf_putc(&msg, ')');
    if (!c->fatal)
        report(c, ip, n, kw, "%s", msg.oom ? what : agti_buf_cstr(&msg));
    agti_buf_free(&msg);
}

static const agti_snode *dynamic_target(const agti_snode *n, const dscope *ds)
{
    const agti_snode *found = NULL;
    for (const dscope *d = ds; d; d = d->up) {
        const agti_sres *r = d->res;
        for (size_t i = 0; i < r->n_danchors; i++)
            if (strcmp(r->danchor_names[i], n->dyn_ref_anchor) == 0) {
                found = r->danchor_nodes[i];
                break;
            }
    }
    return found ? found : n->dyn_ref;
}

/* 2019-09 "$recursiveRef" whose static target has "$recursiveAnchor": true:
 * the outermost resource of the unbroken run of resources with
 * "$recursiveAnchor": true, walking the dynamic scope outwards. */
static const agti_snode *recursive_target(const agti_snode *n, const dscope *ds)
{
    const agti_snode *found = n->rec_ref;
    for (const dscope *d = ds; d; d = d->up) {
        if (d->res->recursive_anchor == NULL)
            break;
        found = d->res->recursive_anchor;
    }
    return found;
}

static bool v_applicators(vctx *c, const agti_snode *n, const agti_jv *inst, ipath *ip,
                          const dscope *ds, eset *ev)
{
    bool ok = true;
    if (n->ref && !v_follow(c, n, n->ref, "$ref", n->ref_src, inst, ip, ds, ev)) {
        ok = false;
        if (!c->errors || c->fatal)
            return false;
    }
    if (n->rec_ref) {
        const agti_snode *t = n->rec_ref_dynamic ? recursive_target(n, ds) : n->rec_ref;
        if (!v_follow(c, n, t, "$recursiveRef", n->rec_ref_src, inst, ip, ds, ev)) {
            ok = false;
            if (!c->errors || c->fatal)
                return false;
        }
    }
    if (n->dyn_ref) {
        const agti_snode *t = n->dyn_ref_anchor ? dynamic_target(n, ds) : n->dyn_ref;
        if (!v_follow(c, n, t, "$dynamicRef", n->dyn_ref_src, inst, ip, ds, ev)) {
            ok = false;
            if (!c->errors || c->fatal)
                return false;
        }
    }
    for (size_t i = 0; i < n->n_all_of; i++) {
        if (!v_node(c, n->all_of[i], inst, ip, ds, ev)) {
            ok = false;
            if (!c->errors || c->fatal)
                return false;
        }
    }
    if (n->n_any_of) {
        bool any = false;
        for (size_t i = 0; i < n->n_any_of && !c->fatal; i++) {
            if (v_branch(c, n->any_of[i], inst, ip, ds, ev, true)) {
                any = true;
                if (ev == NULL)
                    break;
            }
        }
        if (c->fatal)
            return false;
        if (!any) {
            ok = false;
            report_branches(c, n, n->any_of, n->n_any_of, inst, ip, ds, "anyOf",
                            "must match at least one of the schemas in anyOf");
            if (!c->errors)
                return false;
        }
    }
    if (n->n_one_of) {
        size_t count = 0, first = 0, second = 0;
        for (size_t i = 0; i < n->n_one_of && count < 2 && !c->fatal; i++) {
            if (v_branch(c, n->one_of[i], inst, ip, ds, ev, true)) {
                if (count++ == 0)
                    first = i;
                else
                    second = i;
            }
        }
        if (c->fatal)
            return false;
        if (count != 1) {
            ok = false;
            if (count == 0)
                report_branches(c, n, n->one_of, n->n_one_of, inst, ip, ds, "oneOf",
                                "must match exactly one of the schemas in oneOf, matches none");
            else
                report(c, ip, n, "oneOf",
                       "must match exactly one schema in oneOf, matches both %zu and %zu", first,
                       second);
            if (!c->errors)
                return false;
        }
    }
    if (n->not_) {
        bool r = quiet_node(c, n->not_, inst, ip, ds, NULL);
        if (c->fatal)
            return false;
        if (r) {
            ok = false;
            /* Matching "not" means matching its const or enum too, so the
             * value itself can be named ("must not be 0" reads better than
             * a reference to the schema the model cannot see). */
            const agti_snode *nn = n->not_;
            if (!nn->is_bool && nn->const_jv != NULL)
                report_json(c, ip, n, "not", "must not be ", nn->const_text);
            else if (!nn->is_bool && nn->enum_jv != NULL)
                report_json(c, ip, n, "not", "must not be one of ", nn->enum_text);
            else
                report(c, ip, n, "not", "must not match the schema in \"not\"");
            if (!c->errors)
                return false;
        }
    }
    if (n->if_) {
        bool r = v_branch(c, n->if_, inst, ip, ds, ev, true);
        if (c->fatal)
            return false;
        const agti_snode *next = r ? n->then_ : n->else_;
        if (next && !v_node(c, next, inst, ip, ds, ev)) {
            ok = false;
            if (!c->errors || c->fatal)
                return false;
        }
    }
    return ok;
}

static bool v_node(vctx *c, const agti_snode *n, const agti_jv *inst, ipath *ip, const dscope *ds,
                   eset *ev)
{
    if (n->is_bool) {
        if (!n->bool_value)
            report(c, ip, n, NULL, "no value is allowed here (the schema is false)");
        return n->bool_value;
    }
    if (++c->depth > MAX_DEPTH) {
        c->depth--;
        snprintf(c->limit_msg, sizeof c->limit_msg,
                 "schema evaluation nested deeper than %d levels (at schema '%s')", MAX_DEPTH,
                 n->path);
        report(c, ip, n, "depth", "%s", c->limit_msg);
        c->limit_kw = "depth";
        c->limit_hit = true;
        c->fatal = AGT_EINVALID;
        return false;
    }
    dscope here;
    if (ds == NULL || ds->res != n->res) {
        here.up = ds;
        here.res = n->res;
        ds = &here;
    }
    bool ok = true;
    eset local, *lev = ev;
    bool have_local = false;
    if (n->has_unevaluated) {
        if (!eset_init(c, &local, inst_size(inst))) {
            c->depth--;
            return false;
        }
        have_local = true;
        lev = &local;
    }
    /* draft 4: an integer is written without a fraction or exponent (1.0 is
     * a number, not an integer) */
    bool d4real = n->draft == AGT_DRAFT_4 && inst->type != AGTI_JV_INT && is_num(inst) &&
                  !written_as_integer(inst);
    if (n->types && !(n->types & (d4real ? AGTI_T_NUMBER : type_bits(inst)))) {
        ok = false;
        if (!c->quiet) {
            agti_buf b = AGTI_BUF_INIT;
            static const char *names[] = {"null",   "boolean", "object", "array",
                                          "number", "string",  "integer"};
            unsigned shown = n->types;
            if (shown & AGTI_T_NUMBER)
                shown &= ~(unsigned)AGTI_T_INTEGER;
            int k = 0;
            for (unsigned t = 0; t < 7; t++)
                if (shown & (1u << t)) {
                    if (k++)
                        agti_buf_puts(&b, " or ");
                    agti_buf_puts(&b, names[t]);
                }
            report(c, ip, n, "type", "expected %s, got %s", k ? agti_buf_cstr(&b) : "nothing",
                   d4real ? "number" : type_name(inst));
            agti_buf_free(&b);
        }
        if (!c->errors)
            goto out;
    }
    if (n->enum_values) {
        bool found = false;
        for (size_t i = 0; i < n->enum_jv->len && !found; i++)
            found = j_equal(inst, &n->enum_jv->u.a[i]);
        if (!found) {
            ok = false;
            report_json(c, ip, n, "enum", "must be one of ", n->enum_text);
            if (!c->errors)
                goto out;
        }
    }
    if ((n->flags & AGTI_K_CONST) && !j_equal(inst, n->const_jv)) {
        ok = false;
        report_json(c, ip, n, "const", "must be equal to ", n->const_text);
        if (!c->errors)
            goto out;
    }
    switch (inst->type) {
    case AGTI_JV_INT:
    case AGTI_JV_REAL:
    case AGTI_JV_BIG:
        if ((n->flags & 0x1f) && !v_number(c, n, inst, ip))
            ok = false;
        break;
    case AGTI_JV_STRING:
        if ((n->max_length >= 0 || n->min_length >= 0 || n->pattern || n->format ||
             n->content_base64 || n->content_json) &&
            !v_string(c, n, inst, ip))
            ok = false;
        break;
    case AGTI_JV_ARRAY:
        if (!v_array(c, n, inst, ip, ds, lev))
            ok = false;
        break;
    case AGTI_JV_OBJECT:
        if (!v_object(c, n, inst, ip, ds, lev))
            ok = false;
        break;
    default:
        break;
    }
    if ((!ok && !c->errors) || c->fatal)
        goto out;
    if (!v_applicators(c, n, inst, ip, ds, lev))
        ok = false;
    if ((!ok && !c->errors) || c->fatal)
        goto out;
    if (have_local) {
        if (!v_unevaluated(c, n, inst, ip, ds, &local))
            ok = false;
        if (ok)
            eset_merge(ev, &local);
    }
out:
    if (have_local)
        eset_free(&local);
    c->depth--;
    return ok && !c->fatal;
}

static int limit_result(const char *kw, const char *msg, json_t **errors_out)
{
    if (errors_out) {
        *errors_out = json_pack("[{s:s, s:s, s:s, s:s}]", "instance_path", "", "schema_path", "",
                                "keyword", kw, "message", msg);
        if (*errors_out == NULL)
            return agti_oom();
    }
    return agti_error(AGT_EINVALID, "instance is invalid: %s", msg);
}

int agti_schema_validate_json(const agt_schema *s, const struct json_t *instance,
                              struct json_t **errors_out)
{
    if (errors_out)
        *errors_out = NULL;
    if (s == NULL || instance == NULL)
        return agti_error(AGT_EINVAL, "agt_schema_validate: %s is NULL",
                          s == NULL ? "schema" : "instance");
    _Alignas(16) char first[8192];
    agti_jarena a;
    agti_jarena_init(&a, first, sizeof first);
    bool too_deep = false;
    const agti_jv *v = agti_jv_from_json(&a, instance, &too_deep);
    int rc;
    if (v)
        rc = agti_schema_validate_jv(s, v, errors_out);
    else if (too_deep)
        rc = limit_result("depth", "the instance is nested deeper than 10000 levels", errors_out);
    else
        rc = agti_oom();
    agti_jarena_free(&a);
    return rc;
}

int agti_schema_validate_jv(const agt_schema *s, const agti_jv *instance, json_t **errors_out)
{
    if (errors_out)
        *errors_out = NULL;
    vctx c;
    memset(&c, 0, sizeof c);
    c.s = (agt_schema *)s;
    if (errors_out) {
        c.errors = json_array();
        if (c.errors == NULL)
            return agti_oom();
    }
    ipath root = {NULL, NULL, 0, 0, 0};
    bool ok = v_node(&c, s->root, instance, &root, NULL, NULL);
    if (c.md) {
        pcre2_match_data *expected = NULL;
        if (!atomic_compare_exchange_strong(&c.s->match_cache, &expected, c.md))
            pcre2_match_data_free(c.md);
    }
    if (c.fatal == AGT_ENOMEM) {
        json_decref(c.errors);
        return agti_oom();
    }
    if (ok) {
        json_decref(c.errors);
        return AGT_OK;
    }
    if (errors_out && c.limit_hit && json_array_size(c.errors) == 0) {
        /* the limit was hit inside a subschema whose errors are not kept */
        json_t *e = json_pack("{s:s, s:s, s:s, s:s}", "instance_path", "", "schema_path", "",
                              "keyword", c.limit_kw, "message", c.limit_msg);
        if (e == NULL || json_array_append_new(c.errors, e) != 0) {
            json_decref(c.errors);
            return agti_oom();
        }
    }
    if (errors_out)
        *errors_out = c.errors;
    if (c.limit_hit)
        return agti_error(AGT_EINVALID, "instance is invalid: %s", c.limit_msg);
    if (errors_out) {
        json_t *first = json_array_get(c.errors, 0);
        if (first)
            return agti_error(AGT_EINVALID, "%s: %s",
                              json_string_value(json_object_get(first, "instance_path"))[0]
                                  ? json_string_value(json_object_get(first, "instance_path"))
                                  : "instance",
                              json_string_value(json_object_get(first, "message")));
    }
    if (c.have_first)
        return agti_error_text(AGT_EINVALID, c.first_msg);
    return agti_error(AGT_EINVALID, "instance is invalid");
}
