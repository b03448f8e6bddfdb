/*
 * libFuzzer target for the Codex patch engine (lib/patch/codex.c): the
 * input is a patch, then up to 6 files, separated by lines "%%"; the k-th
 * distinct path the patch asks for gets the k-th file (a file that is
 * exactly "-" is missing, so is every path past the files given). The
 * patch is parsed and applied at the exact level and with the whole
 * ladder. Invariants: parsed sections have paths and line numbers inside
 * the patch; a failure leaves no result and says why (valid UTF-8 when the
 * input is); a result file that exists has its bytes and a NUL after them;
 * applying twice gives the same bytes (no hidden state).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "patch/codex.h"
#include "patch/patch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_FILES 6

typedef struct fset {
    const char *seg[MAX_FILES];
    size_t len[MAX_FILES];
    size_t nseg;
    char *asked[MAX_FILES];
    size_t nasked;
} fset;

static int load(void *ctx, const char *path, agti_pload *out, agti_buf *err)
{
    fset *f = ctx;
    (void)err;
    size_t k = 0;
    while (k < f->nasked && strcmp(f->asked[k], path) != 0)
        k++;
    if (k == f->nasked && f->nasked < MAX_FILES) {
        f->asked[k] = agti_strdup(path);
        if (f->asked[k] == NULL)
            return AGT_ENOMEM;
        f->nasked++;
    }
    out->key = agti_strdup(path);
    if (out->key == NULL)
        return AGT_ENOMEM;
    if (k >= f->nseg || (f->len[k] == 1 && f->seg[k][0] == '-'))
        return AGT_OK;
    out->exists = true;
    out->data = malloc(f->len[k] + 1);
    if (out->data == NULL)
        return AGT_ENOMEM;
    memcpy(out->data, f->seg[k], f->len[k]);
    out->data[f->len[k]] = '\0';
    out->len = f->len[k];
    return AGT_OK;
}

static void reset(fset *f)
{
    for (size_t i = 0; i < f->nasked; i++)
        free(f->asked[i]);
    f->nasked = 0;
}

static void check_parse(const agti_patch *p, size_t nlines)
{
    for (size_t i = 0; i < p->nops; i++) {
        const agti_pop *o = &p->ops[i];
        if (o->path == NULL || o->path[0] == '\0' || o->line < 2 || o->line > nlines)
            abort();
        if (o->kind == AGTI_PATCH_UPDATE && o->nhunks == 0 && o->move_to == NULL)
            abort(); /* an update without hunks is a rename */
        for (size_t h = 0; h < o->nhunks; h++) {
            const agti_phunk *hk = &o->hunks[h];
            if (hk->nold + hk->nnew == 0 || hk->line > nlines)
                abort();
            for (size_t k = 0; k < hk->nold; k++)
                if (hk->old_at[k] < hk->line || hk->old_at[k] > nlines)
                    abort();
        }
    }
}

/* Applies p; returns the result's bytes flattened (malloc'd) or NULL. */
static char *run(const agti_patch *p, int level, fset *f, bool valid, size_t *out_len, int *rc)
{
    agti_patch_result res;
    agti_buf err = AGTI_BUF_INIT;
    reset(f);
    *rc = agti_patch_apply(p, level, load, f, &res, &err);
    if (*rc != AGT_OK) {
        if (res.n != 0 || res.files != NULL)
            abort();
        if (*rc != AGT_ENOMEM && !err.oom &&
            (err.len == 0 || (valid && !agti_utf8_valid(err.ptr, err.len))))
            abort();
        agti_buf_free(&err);
        return NULL;
    }
    agti_buf flat = AGTI_BUF_INIT;
    for (size_t i = 0; i < res.n; i++) {
        const agti_pfile *pf = &res.files[i];
        if (pf->exists && (pf->data == NULL || pf->data[pf->len] != '\0'))
            abort();
        if (!pf->exists && pf->data != NULL)
            abort();
        agti_buf_printf(&flat, "%s:%d:%zu:", pf->key, pf->exists, pf->len);
        if (pf->exists)
            agti_buf_put(&flat, pf->data, pf->len);
    }
    agti_patch_result_clear(&res);
    agti_buf_free(&err);
    *out_len = flat.len;
    return agti_buf_detach(&flat);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    fset f;
    memset(&f, 0, sizeof f);
    /* split on "\n%%\n" */
    size_t plen = size;
    const char *sep = size >= 4 ? memmem(text, size, "\n%%\n", 4) : NULL;
    if (sep != NULL) {
        plen = (size_t)(sep - text) + 1;
        const char *s = sep + 4, *end = text + size;
        while (f.nseg < MAX_FILES && s <= end) {
            const char *n = memmem(s, (size_t)(end - s), "\n%%\n", 4);
            const char *e = n ? n + 1 : end;
            f.seg[f.nseg] = s;
            f.len[f.nseg] = (size_t)(e - s);
            f.nseg++;
            if (n == NULL)
                break;
            s = n + 4;
        }
    }
    agti_buf err = AGTI_BUF_INIT;
    agti_patch *p = NULL;
    int rc = agti_patch_parse(text, plen, &p, &err);
    if (rc != AGT_OK) {
        if (p != NULL || (rc != AGT_ENOMEM && err.len == 0))
            abort();
        agti_buf_free(&err);
        return 0;
    }
    agti_buf_free(&err);
    size_t nlines = 1;
    for (size_t i = 0; i < plen; i++)
        nlines += text[i] == '\n';
    check_parse(p, nlines);
    bool valid = agti_utf8_valid(text, size);
    for (int level = AGTI_MATCH_EXACT; level <= AGTI_MATCH_UNICODE; level += AGTI_MATCH_UNICODE) {
        size_t l1 = 0, l2 = 0;
        int rc1, rc2;
        char *a = run(p, level, &f, valid, &l1, &rc1);
        char *b = run(p, level, &f, valid, &l2, &rc2);
        if (rc1 != rc2 || (a == NULL) != (b == NULL) || l1 != l2 ||
            (a != NULL && memcmp(a, b, l1) != 0))
            abort();
        free(a);
        free(b);
    }
    reset(&f);
    agti_patch_free(p);
    return 0;
}
