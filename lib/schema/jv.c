/* Fast JSON text → agti_jv parser (RFC 8259) and jansson → agti_jv conversion. */
#include <errno.h>
#include <jansson.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "jv.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define JV_MAX_DEPTH 2048

struct agti_jchunk {
    agti_jchunk *next;
    size_t cap;
    max_align_t data[];
};

void agti_jarena_init(agti_jarena *a, void *first, size_t size)
{
    a->buf = first;
    a->used = 0;
    a->cap = first ? size : 0;
    a->heap = NULL;
}

void *agti_jarena_alloc(agti_jarena *a, size_t size)
{
    size = (size + 15) & ~(size_t)15;
    if (a->cap - a->used < size) {
        size_t cap = size > 32768 ? size : 32768;
        agti_jchunk *c = malloc(sizeof *c + cap);
        if (c == NULL)
            return NULL;
        c->next = a->heap;
        c->cap = cap;
        a->heap = c;
        a->buf = (char *)c->data;
        a->used = 0;
        a->cap = cap;
    }
    void *p = a->buf + a->used;
    a->used += size;
    return p;
}

void agti_jarena_free(agti_jarena *a)
{
    agti_jchunk *c = a->heap;
    while (c) {
        agti_jchunk *n = c->next;
        free(c);
        c = n;
    }
    a->heap = NULL;
}

/* ---- parser ---------------------------------------------------------- */

typedef struct jparser {
    const char *start, *p, *end;
    agti_jarena *a;
    const char *err;
    int depth;
    bool oom;
    bool differs; /* a big number or a NUL in a member name was read */
    /* scratch stacks for the children of open containers */
    agti_jv *vs;
    size_t vtop, vcap;
    agti_jkv *ks;
    size_t ktop, kcap;
    agti_jv vinl[64];
    agti_jkv kinl[32];
} jparser;

static bool fail(jparser *j, const char *msg)
{
    if (j->err == NULL)
        j->err = msg;
    return false;
}

static void skip_ws(jparser *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t'))
        j->p++;
}

static bool push_v(jparser *j, const agti_jv *v)
{
    if (j->vtop == j->vcap) {
        size_t nc = j->vcap * 2;
        agti_jv *n = malloc(nc * sizeof *n);
        if (n == NULL)
            return j->oom = true, false;
        memcpy(n, j->vs, j->vtop * sizeof *n);
        if (j->vs != j->vinl)
            free(j->vs);
        j->vs = n;
        j->vcap = nc;
    }
    j->vs[j->vtop++] = *v;
    return true;
}

static bool push_k(jparser *j, const agti_jkv *kv)
{
    if (j->ktop == j->kcap) {
        size_t nc = j->kcap * 2;
        agti_jkv *n = malloc(nc * sizeof *n);
        if (n == NULL)
            return j->oom = true, false;
        memcpy(n, j->ks, j->ktop * sizeof *n);
        if (j->ks != j->kinl)
            free(j->ks);
        j->ks = n;
        j->kcap = nc;
    }
    j->ks[j->ktop++] = *kv;
    return true;
}

static int hex4(const char *p)
{
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= c - '0';
        else if (c >= 'a' && c <= 'f')
            v |= c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            v |= c - 'A' + 10;
        else
            return -1;
    }
    return v;
}

static size_t put_utf8(char *o, uint32_t cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* 1: a byte that ends the fast scan of a string ('"', '\\', a control
 * character, a non-ASCII byte) */
static const unsigned char str_stop_byte[256] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
};

/* The first stop byte in [q, end), or end: blocks of 16 bytes with SSE2
 * (every x86-64 has it), then blocks of 8 bytes in a 64-bit word (the only
 * blocks elsewhere), then single bytes; a block that holds a stop byte is
 * looked at byte by byte. */
static const char *str_scan(const char *q, const char *end)
{
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'),
                  space = _mm_set1_epi8(0x20);
    while (end - q >= 16) {
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)q);
        /* signed: bytes 0x80-0xFF are negative, so "< 0x20" takes them too */
        __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(b, quote), _mm_cmpeq_epi8(b, bslash)),
                                 _mm_cmplt_epi8(b, space));
        unsigned mask = (unsigned)_mm_movemask_epi8(m);
        if (mask != 0)
            return q + __builtin_ctz(mask);
        q += 16;
    }
#endif
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    while (end - q >= 8) {
        uint64_t w, x, y;
        memcpy(&w, q, sizeof w);
        x = w ^ (ones * '"');
        y = w ^ (ones * '\\');
        /* the high bit of a byte is set where x or y has a zero byte, w a
         * byte below 0x20 or a non-ASCII one; a borrow only sets more bits,
         * above a stop byte, so none is missed */
        uint64_t m = ((x - ones) & ~x) | ((y - ones) & ~y) | (w - ones * 0x20) | w;
        if ((m & highs) != 0)
            break;
        q += 8;
    }
    while (q < end && !str_stop_byte[(unsigned char)*q])
        q++;
    return q;
}

/* Checks a string from q (inside it) on to its closing quote, or to the
 * first backslash when at_escape: returns where it stopped, or NULL with the
 * error recorded (a control character, invalid UTF-8, no closing quote).
 * Escapes are skipped here and checked by copy_string. */
static const char *scan_string(jparser *j, const char *q, bool at_escape)
{
    const char *end = j->end;
    for (;;) {
        q = str_scan(q, end);
        if (q >= end) {
            j->p = end;
            return fail(j, "unterminated string"), NULL;
        }
        unsigned char c = (unsigned char)*q;
        if (c == '"' || (c == '\\' && at_escape))
            return q;
        if (c == '\\') {
            q += 2;
            continue;
        }
        if (c < 0x20) {
            j->p = q;
            return fail(j, "control character in string"), NULL;
        }
        uint32_t cp;
        size_t n = agti_utf8_decode((const unsigned char *)q, (size_t)(end - q), &cp);
        if (n == 0) {
            j->p = q;
            return fail(j, "invalid UTF-8 in string"), NULL;
        }
        q += n;
    }
}

/* Decodes the escape at p (a backslash) to o: the bytes of input it took,
 * *w the bytes written (at most 4, never more than it took); 0 on error. */
static size_t unescape(jparser *j, const char *p, char *o, size_t *w)
{
    const char *end = j->end, *start = p;
    size_t n = 1;
    if (end - p < 2) {
        j->p = end;
        return fail(j, "unterminated string"), 0;
    }
    char e = p[1];
    p += 2;
    switch (e) {
    case '"':
        o[0] = '"';
        break;
    case '\\':
        o[0] = '\\';
        break;
    case '/':
        o[0] = '/';
        break;
    case 'b':
        o[0] = '\b';
        break;
    case 'f':
        o[0] = '\f';
        break;
    case 'n':
        o[0] = '\n';
        break;
    case 'r':
        o[0] = '\r';
        break;
    case 't':
        o[0] = '\t';
        break;
    case 'u': {
        int v = (end - p >= 4) ? hex4(p) : -1;
        if (v < 0) {
            j->p = start;
            return fail(j, "invalid \\u escape"), 0;
        }
        p += 4;
        uint32_t cp = (uint32_t)v;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            int lo = (end - p >= 6 && p[0] == '\\' && p[1] == 'u') ? hex4(p + 2) : -1;
            if (lo < 0xDC00 || lo > 0xDFFF) {
                j->p = start;
                return fail(j, "invalid Unicode surrogate pair"), 0;
            }
            cp = 0x10000 + ((cp - 0xD800) << 10) + ((uint32_t)lo - 0xDC00);
            p += 6;
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            j->p = start;
            return fail(j, "invalid Unicode surrogate pair"), 0;
        }
        n = put_utf8(o, cp);
        break;
    }
    default:
        j->p = start;
        return fail(j, "invalid escape in string"), 0;
    }
    *w = n;
    return (size_t)(p - start);
}

/* Copies and decodes a string from p (inside it) to dst + *o up to its
 * closing quote, checking it as scan_string does; returns the quote or NULL.
 * Whole blocks are stored (16 or 8 bytes) before they are looked at: dst
 * must have 16 bytes of room past the string's length. Blocks are read
 * only where the text has 16 (8) more bytes. */
static const char *copy_string(jparser *j, const char *p, char *dst, size_t *olen)
{
    const char *end = j->end;
    size_t o = *olen;
    for (;;) {
#if defined(__SSE2__)
        const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'),
                      space = _mm_set1_epi8(0x20);
        while (end - p >= 16) {
            __m128i b = _mm_loadu_si128((const __m128i *)(const void *)p);
            _mm_storeu_si128((__m128i *)(void *)(dst + o), b);
            __m128i m =
                _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(b, quote), _mm_cmpeq_epi8(b, bslash)),
                             _mm_cmplt_epi8(b, space));
            unsigned mask = (unsigned)_mm_movemask_epi8(m);
            if (mask != 0) {
                size_t k = (size_t)__builtin_ctz(mask);
                p += k;
                o += k;
                goto stop;
            }
            p += 16;
            o += 16;
        }
#endif
        const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
        while (end - p >= 8) {
            uint64_t w, x, y;
            memcpy(&w, p, sizeof w);
            memcpy(dst + o, &w, sizeof w);
            x = w ^ (ones * '"');
            y = w ^ (ones * '\\');
            if ((((x - ones) & ~x) | ((y - ones) & ~y) | (w - ones * 0x20) | w) & highs)
                break;
            p += 8;
            o += 8;
        }
        while (p < end && !str_stop_byte[(unsigned char)*p])
            dst[o++] = *p++;
#if defined(__SSE2__)
    stop:
#endif
        if (p >= end) {
            j->p = end;
            return fail(j, "unterminated string"), NULL;
        }
        unsigned char c = (unsigned char)*p;
        if (c == '"') {
            *olen = o;
            return p;
        }
        if (c == '\\') {
            size_t w = 0, n = unescape(j, p, dst + o, &w);
            if (n == 0)
                return NULL;
            p += n;
            o += w;
            continue;
        }
        if (c < 0x20) {
            j->p = p;
            return fail(j, "control character in string"), NULL;
        }
        uint32_t cp;
        size_t n = agti_utf8_decode((const unsigned char *)p, (size_t)(end - p), &cp);
        if (n == 0) {
            j->p = p;
            return fail(j, "invalid UTF-8 in string"), NULL;
        }
        memcpy(dst + o, p, n);
        p += n;
        o += n;
    }
}

/* j->p is just past the opening quote. A string without escapes is checked
 * in place and points into the text. At the first backslash the string is
 * copied, decoding as it goes: in one pass straight into the arena when its
 * current block has room for the rest of the text, else once the closing
 * quote is found and the length known. */
static bool parse_string(jparser *j, const char **out, size_t *outlen)
{
    const char *s = j->p;
    const char *q = scan_string(j, s, true);
    if (q == NULL)
        return false;
    if (*q == '"') {
        *out = s;
        *outlen = (size_t)(q - s);
        j->p = q + 1;
        return true;
    }
    agti_jarena *a = j->a;
    size_t need = (size_t)(j->end - s) + 16;
    bool in_place = a->cap - a->used >= need;
    char *dst;
    if (in_place) {
        dst = a->buf + a->used;
    } else {
        const char *e = scan_string(j, q, false);
        if (e == NULL)
            return false;
        dst = agti_jarena_alloc(a, (size_t)(e - s) + 16);
        if (dst == NULL)
            return j->oom = true, false;
    }
    size_t o = (size_t)(q - s);
    memcpy(dst, s, o);
    const char *close = copy_string(j, q, dst, &o);
    if (close == NULL) {
        /* the errors of the scan come first, as when the scan ran before
         * the copy: the same text gets the same message whatever the arena */
        const char *err = j->err, *at = j->p;
        j->err = NULL;
        if (in_place && scan_string(j, q, false) != NULL) {
            j->err = err;
            j->p = at;
        } else if (!in_place) {
            j->err = err;
        }
        return false;
    }
    q = close;
    dst[o] = '\0';
    if (in_place)
        a->used += (o + 1 + 15) & ~(size_t)15;
    *out = dst;
    *outlen = o;
    j->p = q + 1;
    return true;
}

static bool parse_number(jparser *j, agti_jv *v)
{
    const char *s = j->p, *p = s;
    bool neg = false, is_int = true;
    if (p < j->end && *p == '-') {
        neg = true;
        p++;
    }
    if (p >= j->end || *p < '0' || *p > '9')
        return fail(j, "invalid number");
    if (*p == '0') {
        p++;
    } else {
        while (p < j->end && *p >= '0' && *p <= '9')
            p++;
    }
    if (p < j->end && *p == '.') {
        is_int = false;
        p++;
        if (p >= j->end || *p < '0' || *p > '9')
            return j->p = p, fail(j, "invalid number: digit expected after '.'");
        while (p < j->end && *p >= '0' && *p <= '9')
            p++;
    }
    if (p < j->end && (*p == 'e' || *p == 'E')) {
        is_int = false;
        p++;
        if (p < j->end && (*p == '+' || *p == '-'))
            p++;
        if (p >= j->end || *p < '0' || *p > '9')
            return j->p = p, fail(j, "invalid number: digit expected in exponent");
        while (p < j->end && *p >= '0' && *p <= '9')
            p++;
    }
    j->p = p;
    if (is_int) {
        uint64_t acc = 0;
        bool over = false;
        for (const char *d = s + neg; d < p; d++) {
            uint64_t digit = (uint64_t)(*d - '0');
            if (acc > (UINT64_MAX - digit) / 10) {
                over = true;
                break;
            }
            acc = acc * 10 + digit;
        }
        if (!over && (neg ? acc <= (uint64_t)INT64_MAX + 1 : acc <= (uint64_t)INT64_MAX)) {
            v->type = AGTI_JV_INT;
            v->u.i =
                neg ? (acc == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)acc) : (int64_t)acc;
            return true;
        }
    }
    /* an integer past 64 bits: jansson refuses it, jv reads a double */
    if (is_int)
        j->differs = true;
    size_t n = (size_t)(p - s);
    /* more significant digits than a double keeps (15), once leading and
     * trailing zeros are set aside: kept as text */
    size_t sig = 0, zeros = 0;
    bool lead = true;
    for (const char *d = s + neg; d < p && *d != 'e' && *d != 'E'; d++) {
        if (*d == '.')
            continue;
        if (lead && *d == '0')
            continue;
        lead = false;
        if (*d == '0') {
            zeros++;
        } else {
            sig += zeros + 1;
            zeros = 0;
        }
    }
    if (sig > 15) {
        j->differs = true;
        v->type = AGTI_JV_BIG;
        v->u.s = s;
        v->len = n;
        return true;
    }
    char local[64];
    char *tmp = n < sizeof local ? local : agti_jarena_alloc(j->a, n + 1);
    if (tmp == NULL)
        return j->oom = true, false;
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    const char *dp = localeconv()->decimal_point;
    if (dp && dp[0] != '.' && dp[0] && dp[1] == '\0') {
        char *dot = strchr(tmp, '.');
        if (dot)
            *dot = dp[0];
    }
    errno = 0;
    double d = strtod(tmp, NULL);
    if (errno == ERANGE) {
        /* beyond the range of a double (1e400, 1e-400): kept as text */
        j->differs = true;
        v->type = AGTI_JV_BIG;
        v->u.s = s;
        v->len = n;
        return true;
    }
    v->type = AGTI_JV_REAL;
    v->u.d = d;
    v->len = is_int; /* written as an integer (past 64 bits) */
    return true;
}

static bool parse_value(jparser *j, agti_jv *v);

static bool parse_array(jparser *j, agti_jv *v)
{
    size_t base = j->vtop;
    j->p++;
    skip_ws(j);
    if (j->p < j->end && *j->p == ']') {
        j->p++;
    } else {
        for (;;) {
            agti_jv item;
            if (!parse_value(j, &item) || !push_v(j, &item))
                return false;
            skip_ws(j);
            if (j->p < j->end && *j->p == ',') {
                j->p++;
                continue;
            }
            if (j->p < j->end && *j->p == ']') {
                j->p++;
                break;
            }
            return fail(j, "',' or ']' expected");
        }
    }
    size_t n = j->vtop - base;
    agti_jv *items = NULL;
    if (n) {
        items = agti_jarena_alloc(j->a, n * sizeof *items);
        if (items == NULL)
            return j->oom = true, false;
        memcpy(items, j->vs + base, n * sizeof *items);
    }
    j->vtop = base;
    v->type = AGTI_JV_ARRAY;
    v->len = n;
    v->u.a = items;
    return true;
}

static bool parse_object(jparser *j, agti_jv *v)
{
    size_t base = j->ktop;
    j->p++;
    skip_ws(j);
    if (j->p < j->end && *j->p == '}') {
        j->p++;
    } else {
        for (;;) {
            agti_jkv kv;
            skip_ws(j);
            if (j->p >= j->end || *j->p != '"')
                return fail(j, "string or '}' expected");
            j->p++;
            if (!parse_string(j, &kv.key, &kv.klen))
                return false;
            if (memchr(kv.key, '\0', kv.klen) != NULL)
                j->differs = true;
            skip_ws(j);
            if (j->p >= j->end || *j->p != ':')
                return fail(j, "':' expected");
            j->p++;
            if (!parse_value(j, &kv.val))
                return false;
            /* a repeated key: the last value wins, as in jansson */
            bool replaced = false;
            for (size_t i = base; i < j->ktop; i++) {
                if (j->ks[i].klen == kv.klen && (kv.klen == 0 || j->ks[i].key[0] == kv.key[0]) &&
                    memcmp(j->ks[i].key, kv.key, kv.klen) == 0) {
                    j->ks[i].val = kv.val;
                    replaced = true;
                    break;
                }
            }
            if (!replaced && !push_k(j, &kv))
                return false;
            skip_ws(j);
            if (j->p < j->end && *j->p == ',') {
                j->p++;
                continue;
            }
            if (j->p < j->end && *j->p == '}') {
                j->p++;
                break;
            }
            return fail(j, "',' or '}' expected");
        }
    }
    size_t n = j->ktop - base;
    agti_jkv *members = NULL;
    if (n) {
        members = agti_jarena_alloc(j->a, n * sizeof *members);
        if (members == NULL)
            return j->oom = true, false;
        memcpy(members, j->ks + base, n * sizeof *members);
    }
    j->ktop = base;
    v->type = AGTI_JV_OBJECT;
    v->len = n;
    v->u.o = members;
    return true;
}

static bool literal(jparser *j, const char *word, size_t n, uint8_t type, agti_jv *v)
{
    if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n) != 0)
        return fail(j, "invalid token");
    j->p += n;
    v->type = type;
    return true;
}

static bool parse_value(jparser *j, agti_jv *v)
{
    skip_ws(j);
    if (j->p >= j->end)
        return fail(j, "unexpected end of input");
    v->len = 0;
    v->u.i = 0;
    switch (*j->p) {
    case '{':
    case '[': {
        if (++j->depth > JV_MAX_DEPTH)
            return fail(j, "maximum nesting depth (2048) exceeded");
        bool ok = *j->p == '{' ? parse_object(j, v) : parse_array(j, v);
        j->depth--;
        return ok;
    }
    case '"':
        j->p++;
        v->type = AGTI_JV_STRING;
        return parse_string(j, &v->u.s, &v->len);
    case 't':
        return literal(j, "true", 4, AGTI_JV_TRUE, v);
    case 'f':
        return literal(j, "false", 5, AGTI_JV_FALSE, v);
    case 'n':
        return literal(j, "null", 4, AGTI_JV_NULL, v);
    default:
        return parse_number(j, v);
    }
}

const agti_jv *agti_jv_parse(agti_jarena *a, const char *text, size_t len, const char *what)
{
    return agti_jv_parse_ex(a, text, len, what, NULL);
}

const agti_jv *agti_jv_parse_ex(agti_jarena *a, const char *text, size_t len, const char *what,
                                bool *jansson_differs)
{
    if (text == NULL) {
        agti_error(AGT_EINVAL, "%s: no JSON text given (NULL)", what);
        return NULL;
    }
    jparser j;
    j.start = j.p = text;
    j.end = text + len;
    j.a = a;
    j.err = NULL;
    j.depth = 0;
    j.oom = false;
    j.differs = false;
    j.vs = j.vinl;
    j.vtop = 0;
    j.vcap = sizeof j.vinl / sizeof j.vinl[0];
    j.ks = j.kinl;
    j.ktop = 0;
    j.kcap = sizeof j.kinl / sizeof j.kinl[0];
    agti_jv *root = agti_jarena_alloc(a, sizeof *root);
    bool ok = root != NULL && parse_value(&j, root);
    if (root == NULL)
        j.oom = true;
    if (ok) {
        skip_ws(&j);
        if (j.p != j.end)
            ok = fail(&j, "end of input expected");
    }
    if (j.vs != j.vinl)
        free(j.vs);
    if (j.ks != j.kinl)
        free(j.ks);
    if (jansson_differs)
        *jansson_differs = j.differs;
    if (ok)
        return root;
    if (j.oom) {
        agti_oom();
        return NULL;
    }
    int line = 1, col = 0;
    for (const char *p = text; p < j.p && p < j.end; p++) {
        if (*p == '\n') {
            line++;
            col = 0;
        } else {
            col++;
        }
    }
    agti_error(AGT_EPARSE, "%s: invalid JSON at line %d, column %d: %s", what, line, col + 1,
               j.err ? j.err : "syntax error");
    return NULL;
}

static bool from_json(agti_jarena *a, const json_t *v, agti_jv *out, int depth, bool *too_deep)
{
    out->len = 0;
    out->u.i = 0;
    if (depth > 10000) {
        *too_deep = true;
        return false;
    }
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        size_t n = json_object_size(v), i = 0;
        agti_jkv *m = n ? agti_jarena_alloc(a, n * sizeof *m) : NULL;
        if (n && m == NULL)
            return false;
        /* the iterator calls directly: fewer library calls than the foreach macro */
        for (void *it = json_object_iter((json_t *)v); it && i < n;
             it = json_object_iter_next((json_t *)v, it), i++) {
            m[i].key = json_object_iter_key(it);
            m[i].klen = json_object_iter_key_len(it);
            if (!from_json(a, json_object_iter_value(it), &m[i].val, depth + 1, too_deep))
                return false;
        }
        out->type = AGTI_JV_OBJECT;
        out->len = n;
        out->u.o = m;
        return true;
    }
    case JSON_ARRAY: {
        size_t n = json_array_size(v);
        agti_jv *items = n ? agti_jarena_alloc(a, n * sizeof *items) : NULL;
        if (n && items == NULL)
            return false;
        for (size_t i = 0; i < n; i++)
            if (!from_json(a, json_array_get(v, i), &items[i], depth + 1, too_deep))
                return false;
        out->type = AGTI_JV_ARRAY;
        out->len = n;
        out->u.a = items;
        return true;
    }
    case JSON_STRING:
        out->type = AGTI_JV_STRING;
        out->u.s = json_string_value(v);
        out->len = json_string_length(v);
        return true;
    case JSON_INTEGER:
        out->type = AGTI_JV_INT;
        out->u.i = json_integer_value(v);
        return true;
    case JSON_REAL:
        out->type = AGTI_JV_REAL;
        out->u.d = json_real_value(v);
        return true;
    case JSON_TRUE:
        out->type = AGTI_JV_TRUE;
        return true;
    case JSON_FALSE:
        out->type = AGTI_JV_FALSE;
        return true;
    default:
        out->type = AGTI_JV_NULL;
        return true;
    }
}

const agti_jv *agti_jv_from_json(agti_jarena *a, const json_t *v, bool *too_deep)
{
    agti_jv *root = agti_jarena_alloc(a, sizeof *root);
    *too_deep = false;
    if (root == NULL || !from_json(a, v, root, 0, too_deep))
        return NULL;
    return root;
}

const agti_jv *agti_jv_get(const agti_jv *obj, const char *key, size_t klen)
{
    for (size_t i = 0; i < obj->len; i++) {
        const agti_jkv *m = &obj->u.o[i];
        if (m->klen == klen && memcmp(m->key, key, klen) == 0)
            return &m->val;
    }
    return NULL;
}

/* ---- text ------------------------------------------------------------ */

static void dump_string(agti_buf *b, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    agti_buf_putc(b, '"');
    size_t start = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch != '"' && ch != '\\' && ch >= 0x20)
            continue;
        agti_buf_put(b, s + start, i - start);
        if (ch == '"' || ch == '\\') {
            agti_buf_putc(b, '\\');
            agti_buf_putc(b, (char)ch);
        } else {
            char e[6] = {'\\', 'u', '0', '0', hex[ch >> 4], hex[ch & 15]};
            agti_buf_put(b, e, sizeof e);
        }
        start = i + 1;
    }
    agti_buf_put(b, s + start, len - start);
    agti_buf_putc(b, '"');
}

void agti_jv_dump(agti_buf *b, const agti_jv *v)
{
    switch (v->type) {
    case AGTI_JV_NULL:
        agti_buf_puts(b, "null");
        break;
    case AGTI_JV_TRUE:
        agti_buf_puts(b, "true");
        break;
    case AGTI_JV_FALSE:
        agti_buf_puts(b, "false");
        break;
    case AGTI_JV_INT:
        agti_buf_printf(b, "%lld", (long long)v->u.i);
        break;
    case AGTI_JV_REAL: {
        /* shortest text that reads back the same; a real stays a real */
        char t[40];
        for (int p = 15; p <= 17; p++) {
            snprintf(t, sizeof t, "%.*g", p, v->u.d);
            if (strtod(t, NULL) == v->u.d)
                break;
        }
        agti_buf_puts(b, t);
        if (strpbrk(t, ".eEn") == NULL)
            agti_buf_puts(b, ".0");
        break;
    }
    case AGTI_JV_BIG:
        agti_buf_put(b, v->u.s, v->len);
        break;
    case AGTI_JV_STRING:
        dump_string(b, v->u.s, v->len);
        break;
    case AGTI_JV_ARRAY:
        agti_buf_putc(b, '[');
        for (size_t i = 0; i < v->len; i++) {
            if (i)
                agti_buf_putc(b, ',');
            agti_jv_dump(b, &v->u.a[i]);
        }
        agti_buf_putc(b, ']');
        break;
    case AGTI_JV_OBJECT:
        agti_buf_putc(b, '{');
        for (size_t i = 0; i < v->len; i++) {
            if (i)
                agti_buf_putc(b, ',');
            dump_string(b, v->u.o[i].key, v->u.o[i].klen);
            agti_buf_putc(b, ':');
            agti_jv_dump(b, &v->u.o[i].val);
        }
        agti_buf_putc(b, '}');
        break;
    default:
        break;
    }
}
