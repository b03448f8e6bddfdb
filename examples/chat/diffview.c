/*
 * agt-chat: a unified diff of a proposed file change, for approval prompts.
 * Common prefix and suffix lines are trimmed, the middle is diffed by LCS
 * (a plain replace when it is too large), and hunks get 3 context lines.
 */
#include "chat.h"

#include <stdlib.h>
#include <string.h>

typedef struct line {
    const char *s;
    size_t n;
} line;

static size_t split_lines(const char *text, line **out)
{
    size_t cap = 16, n = 0;
    line *v = malloc(cap * sizeof *v);
    const char *p = text;
    while (v != NULL && *p != '\0') {
        const char *nl = strchr(p, '\n');
        size_t len = nl != NULL ? (size_t)(nl - p) : strlen(p);
        if (n == cap) {
            line *w = realloc(v, cap * 2 * sizeof *v);
            if (w == NULL) {
                free(v);
                v = NULL;
                break;
            }
            v = w;
            cap *= 2;
        }
        v[n].s = p;
        v[n].n = len;
        n++;
        p += len + (nl != NULL);
    }
    *out = v;
    return v != NULL ? n : 0;
}

static int same(const line *a, const line *b)
{
    return a->n == b->n && memcmp(a->s, b->s, a->n) == 0;
}

/* ops: '=' keep, '-' old only, '+' new only; with the line indexes. */
typedef struct op {
    char kind;
    size_t a, b;
} op;

static void push(op *ops, size_t *n, char kind, size_t a, size_t b)
{
    ops[*n].kind = kind;
    ops[*n].a = a;
    ops[*n].b = b;
    (*n)++;
}

static void diff_middle(const line *A, size_t a0, size_t a1, const line *B, size_t b0, size_t b1,
                        op *ops, size_t *n)
{
    size_t na = a1 - a0, nb = b1 - b0;
    unsigned short *t = NULL;
    if (na > 0 && nb > 0 && na * nb <= 4000000 && na < 65535 && nb < 65535)
        t = calloc((na + 1) * (nb + 1), sizeof *t);
    if (t == NULL) {
        for (size_t i = a0; i < a1; i++)
            push(ops, n, '-', i, 0);
        for (size_t j = b0; j < b1; j++)
            push(ops, n, '+', 0, j);
        return;
    }
    /* t[i][j] = LCS length of A[a0+i..a1) and B[b0+j..b1). */
    for (size_t i = na; i-- > 0;)
        for (size_t j = nb; j-- > 0;) {
            size_t k = i * (nb + 1) + j;
            if (same(&A[a0 + i], &B[b0 + j]))
                t[k] = (unsigned short)(t[(i + 1) * (nb + 1) + j + 1] + 1);
            else {
                unsigned short d = t[(i + 1) * (nb + 1) + j], r = t[i * (nb + 1) + j + 1];
                t[k] = d > r ? d : r;
            }
        }
    size_t i = 0, j = 0;
    while (i < na || j < nb) {
        if (i < na && j < nb && same(&A[a0 + i], &B[b0 + j])) {
            push(ops, n, '=', a0 + i, b0 + j);
            i++;
            j++;
        } else if (j < nb && (i == na || t[i * (nb + 1) + j + 1] > t[(i + 1) * (nb + 1) + j])) {
            push(ops, n, '+', 0, b0 + j);
            j++;
        } else {
            push(ops, n, '-', a0 + i, 0);
            i++;
        }
    }
    free(t);
}

static void emit_hunk(FILE *f, const op *ops, size_t from, size_t to, const line *A, const line *B,
                      int color)
{
    size_t a_start = 0, b_start = 0, a_len = 0, b_len = 0;
    int have_a = 0, have_b = 0;
    for (size_t k = from; k < to; k++) {
        if (ops[k].kind != '+') {
            if (!have_a) {
                a_start = ops[k].a;
                have_a = 1;
            }
            a_len++;
        }
        if (ops[k].kind != '-') {
            if (!have_b) {
                b_start = ops[k].b;
                have_b = 1;
            }
            b_len++;
        }
    }
    fprintf(f, "%s@@ -%zu,%zu +%zu,%zu @@%s\n", color ? "\033[36m" : "",
            a_len ? a_start + 1 : a_start, a_len, b_len ? b_start + 1 : b_start, b_len,
            color ? "\033[0m" : "");
    for (size_t k = from; k < to; k++) {
        const line *l = ops[k].kind == '+' ? &B[ops[k].b] : &A[ops[k].a];
        const char *c = !color               ? ""
                        : ops[k].kind == '+' ? "\033[32m"
                        : ops[k].kind == '-' ? "\033[31m"
                                             : "";
        fprintf(f, "%s%c%.*s%s\n", c, ops[k].kind == '=' ? ' ' : ops[k].kind, (int)l->n, l->s,
                color && ops[k].kind != '=' ? "\033[0m" : "");
    }
}

int chat_print_diff(FILE *f, const char *path, const char *old_text, const char *new_text,
                    int color)
{
    line *A = NULL, *B = NULL;
    size_t na = split_lines(old_text != NULL ? old_text : "", &A);
    size_t nb = split_lines(new_text, &B);
    op *ops = malloc((na + nb + 1) * sizeof *ops);
    if (A == NULL || B == NULL || ops == NULL) {
        free(A);
        free(B);
        free(ops);
        return -1;
    }
    size_t pre = 0, suf = 0, n = 0;
    while (pre < na && pre < nb && same(&A[pre], &B[pre]))
        pre++;
    while (suf < na - pre && suf < nb - pre && same(&A[na - 1 - suf], &B[nb - 1 - suf]))
        suf++;
    for (size_t i = 0; i < pre; i++)
        push(ops, &n, '=', i, i);
    diff_middle(A, pre, na - suf, B, pre, nb - suf, ops, &n);
    for (size_t i = 0; i < suf; i++)
        push(ops, &n, '=', na - suf + i, nb - suf + i);

    fprintf(f, "%s--- %s%s\n%s+++ %s%s\n", color ? "\033[1m" : "",
            old_text != NULL ? path : "/dev/null", color ? "\033[0m" : "", color ? "\033[1m" : "",
            path, color ? "\033[0m" : "");
    size_t k = 0, changes = 0;
    while (k < n) {
        while (k < n && ops[k].kind == '=')
            k++;
        if (k == n)
            break;
        size_t start = k >= 3 ? k - 3 : 0, end = k;
        /* extend while the next change is within 6 lines */
        for (;;) {
            while (end < n && ops[end].kind != '=')
                end++;
            size_t e = end;
            while (e < n && ops[e].kind == '=' && e - end < 7)
                e++;
            if (e < n && ops[e].kind != '=' && e - end <= 6) {
                end = e;
                continue;
            }
            break;
        }
        size_t stop = end + 3 < n ? end + 3 : n;
        emit_hunk(f, ops, start, stop, A, B, color);
        changes++;
        k = end;
    }
    if (changes == 0)
        fprintf(f, "(no change)\n");
    free(A);
    free(B);
    free(ops);
    return 0;
}
