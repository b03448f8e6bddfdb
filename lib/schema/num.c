/* Exact decimal numbers for the number keywords: a JSON number's text read
 * as sign, digits and exponent, compared and divided exactly, so integers
 * past 64 bits and decimals with more digits than a double keeps are
 * judged by the value written. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema_priv.h"

void agti_dec_free(agti_dec *d)
{
    if (d->d != d->inl)
        free(d->d);
    d->d = d->inl;
    d->n = 0;
}

bool agti_dec_parse(agti_dec *d, const char *s, size_t len)
{
    d->d = d->inl;
    d->n = 0;
    d->neg = false;
    d->e = 0;
    size_t i = 0;
    if (i < len && s[i] == '-') {
        d->neg = true;
        i++;
    }
    size_t cap = len + 1;
    if (cap > sizeof d->inl) {
        d->d = malloc(cap);
        if (d->d == NULL) {
            d->d = d->inl;
            return false;
        }
    }
    long long point = 0; /* digits before the decimal point, after leading zeros */
    bool seen_point = false, any = false;
    for (; i < len && s[i] != 'e' && s[i] != 'E'; i++) {
        if (s[i] == '.') {
            seen_point = true;
            continue;
        }
        if (s[i] < '0' || s[i] > '9')
            return false;
        any = true;
        if (d->n == 0 && s[i] == '0') {
            if (seen_point)
                point--; /* 0.00x: the point moves left */
            continue;
        }
        d->d[d->n++] = s[i];
        if (!seen_point)
            point++;
    }
    if (!any)
        return false;
    long long ex = 0;
    if (i < len) {
        i++;
        bool eneg = false;
        if (i < len && (s[i] == '+' || s[i] == '-'))
            eneg = s[i++] == '-';
        for (; i < len; i++) {
            if (s[i] < '0' || s[i] > '9')
                return false;
            if (ex < 1000000000LL)
                ex = ex * 10 + (s[i] - '0');
        }
        if (eneg)
            ex = -ex;
    }
    while (d->n > 0 && d->d[d->n - 1] == '0')
        d->n--;
    if (d->n == 0) {
        d->neg = false; /* -0 == 0 */
        d->e = 0;
        return true;
    }
    /* value = 0.d1d2...dn * 10^e */
    d->e = point + ex;
    return true;
}

bool agti_dec_from_double(agti_dec *d, double v)
{
    char t[40];
    for (int p = 15; p <= 17; p++) {
        snprintf(t, sizeof t, "%.*e", p - 1, v);
        if (strtod(t, NULL) == v)
            break;
    }
    return agti_dec_parse(d, t, strlen(t));
}

bool agti_dec_from_int(agti_dec *d, long long v)
{
    char t[32];
    snprintf(t, sizeof t, "%lld", v);
    return agti_dec_parse(d, t, strlen(t));
}

static int cmp_mag(const agti_dec *a, const agti_dec *b)
{
    if (a->n == 0 || b->n == 0)
        return a->n == b->n ? 0 : (a->n == 0 ? -1 : 1);
    if (a->e != b->e)
        return a->e < b->e ? -1 : 1;
    size_t n = a->n > b->n ? a->n : b->n;
    for (size_t i = 0; i < n; i++) {
        char x = i < a->n ? a->d[i] : '0', y = i < b->n ? b->d[i] : '0';
        if (x != y)
            return x < y ? -1 : 1;
    }
    return 0;
}

int agti_dec_cmp(const agti_dec *a, const agti_dec *b)
{
    bool an = a->neg && a->n, bn = b->neg && b->n;
    if (an != bn)
        return an ? -1 : 1;
    int m = cmp_mag(a, b);
    return an ? -m : m;
}

bool agti_dec_is_integer(const agti_dec *d)
{
    return d->n == 0 || d->e >= (long long)d->n;
}

/* r (digits, most significant first, length *rn) = r * 10 + digit, then
 * reduced modulo m (length mn): r stays below m. */
static void mod_step(unsigned char *r, size_t *rn, int digit, const unsigned char *m, size_t mn)
{
    /* r * 10 + digit */
    r[*rn] = (unsigned char)digit;
    (*rn)++;
    size_t skip = 0;
    while (skip < *rn && r[skip] == 0)
        skip++;
    if (skip) {
        memmove(r, r + skip, *rn - skip);
        *rn -= skip;
    }
    for (;;) {
        /* r >= m ? */
        int ge;
        if (*rn != mn) {
            ge = *rn > mn;
        } else {
            ge = 1;
            for (size_t i = 0; i < mn; i++)
                if (r[i] != m[i]) {
                    ge = r[i] > m[i];
                    break;
                }
        }
        if (!ge)
            return;
        int borrow = 0;
        for (size_t i = 0; i < *rn; i++) {
            size_t ri = *rn - 1 - i;
            int sub = (i < mn ? m[mn - 1 - i] : 0) + borrow;
            int v = r[ri] - sub;
            borrow = v < 0;
            r[ri] = (unsigned char)(v < 0 ? v + 10 : v);
        }
        skip = 0;
        while (skip < *rn && r[skip] == 0)
            skip++;
        memmove(r, r + skip, *rn - skip);
        *rn -= skip;
    }
}

int agti_dec_multiple(const agti_dec *v, const agti_dec *m)
{
    if (m->n == 0)
        return -1;
    if (v->n == 0)
        return 1;
    /* v = V * 10^(v->e - v->n), m = M * 10^(m->e - m->n) with V, M the
     * digit strings as integers; v/m is an integer iff
     * V * 10^k is divisible by M * 10^-k' ... shift both to integers */
    long long ve = v->e - (long long)v->n, me = m->e - (long long)m->n;
    long long shift = ve - me; /* v/m = (V / M) * 10^shift */
    if (shift < 0) {
        /* V must be divisible by M * 10^-shift: V must end in -shift zeros,
         * which it cannot (trailing zeros are stripped) */
        return 0;
    }
    if (shift > 100000)
        return -1;
    size_t total = v->n + (size_t)shift;
    unsigned char *r = malloc(m->n + 2);
    unsigned char *md = malloc(m->n + 1);
    if (r == NULL || md == NULL) {
        free(r);
        free(md);
        return -1;
    }
    for (size_t i = 0; i < m->n; i++)
        md[i] = (unsigned char)(m->d[i] - '0');
    size_t rn = 0;
    for (size_t i = 0; i < total; i++)
        mod_step(r, &rn, i < v->n ? v->d[i] - '0' : 0, md, m->n);
    free(r);
    free(md);
    return rn == 0;
}
