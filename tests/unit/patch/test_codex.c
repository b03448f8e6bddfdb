/* The Codex patch engine against a corpus of cases (tests/unit/patch/cases):
 * each case is a folder with patch.txt, the files before (input/) and
 * either the files after (expected/: the whole tree, byte for byte) or
 * error.txt (the exact message; nothing is computed). The expected trees
 * and messages were worked out by hand from the format's rules. Then a few
 * direct checks: the ladder notes, limits, and the loader's errors. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"
#include "patch/codex.h"
#include "patch/patch.h"

typedef struct mfile {
    char *path;
    char *data;
    size_t len;
} mfile;

typedef struct mset {
    mfile *v;
    size_t n;
} mset;

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    agti_buf b = AGTI_BUF_INIT;
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        agti_buf_put(&b, chunk, n);
    fclose(f);
    agti_buf_reserve(&b, 1);
    *len = b.len;
    return agti_buf_detach(&b);
}

static void add_tree(mset *s, const char *dir, const char *rel)
{
    char *full = agti_aprintf("%s%s%s", dir, rel[0] ? "/" : "", rel);
    DIR *d = opendir(full);
    if (d == NULL) {
        free(full);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char *r = agti_aprintf("%s%s%s", rel, rel[0] ? "/" : "", e->d_name);
        char *p = agti_aprintf("%s/%s", full, e->d_name);
        struct stat st;
        if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
            add_tree(s, dir, r);
            free(r);
        } else {
            s->v = realloc(s->v, (s->n + 1) * sizeof *s->v);
            s->v[s->n].path = r;
            s->v[s->n].data = slurp(p, &s->v[s->n].len);
            s->n++;
        }
        free(p);
    }
    closedir(d);
    free(full);
}

static void mset_free(mset *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->v[i].path);
        free(s->v[i].data);
    }
    free(s->v);
    s->v = NULL;
    s->n = 0;
}

static const mfile *mset_get(const mset *s, const char *path)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i].path, path) == 0)
            return &s->v[i];
    return NULL;
}

static int load_mem(void *ctx, const char *path, agti_pload *out, agti_buf *err)
{
    (void)err;
    const mset *s = ctx;
    const char *p = strncmp(path, "./", 2) == 0 ? path + 2 : path;
    out->key = agti_strdup(p);
    const mfile *f = mset_get(s, p);
    out->exists = f != NULL;
    if (f != NULL) {
        out->data = malloc(f->len + 1);
        memcpy(out->data, f->data, f->len + 1);
        out->len = f->len;
    }
    return AGT_OK;
}

/* The tree after res is applied to in. */
static void result_tree(const mset *in, const agti_patch_result *res, mset *out)
{
    for (size_t i = 0; i < in->n; i++) {
        bool touched = false;
        for (size_t k = 0; k < res->n; k++)
            touched = touched || strcmp(res->files[k].key, in->v[i].path) == 0;
        if (touched)
            continue;
        out->v = realloc(out->v, (out->n + 1) * sizeof *out->v);
        out->v[out->n] =
            (mfile){agti_strdup(in->v[i].path), agti_strdup(in->v[i].data), in->v[i].len};
        out->n++;
    }
    for (size_t k = 0; k < res->n; k++) {
        const agti_pfile *f = &res->files[k];
        if (!f->exists)
            continue;
        out->v = realloc(out->v, (out->n + 1) * sizeof *out->v);
        char *d = malloc(f->len + 1);
        memcpy(d, f->data, f->len);
        d[f->len] = '\0';
        out->v[out->n] = (mfile){agti_strdup(f->key), d, f->len};
        out->n++;
    }
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void run_case(const char *cases, const char *name)
{
    char *dir = agti_aprintf("%s/%s", cases, name);
    char *pp = agti_aprintf("%s/patch.txt", dir);
    char *ep = agti_aprintf("%s/error.txt", dir);
    char *xp = agti_aprintf("%s/expected", dir);
    char *ip = agti_aprintf("%s/input", dir);
    size_t plen = 0, elen = 0;
    char *patch = slurp(pp, &plen);
    char *want_err = slurp(ep, &elen);
    mset in = {0}, want = {0}, got = {0};
    add_tree(&in, ip, "");
    add_tree(&want, xp, "");
    agti_buf err = AGTI_BUF_INIT;
    agti_patch *p = NULL;
    agti_patch_result res = {0};
    int rc = patch ? agti_patch_parse(patch, plen, &p, &err) : AGT_ENOTFOUND;
    if (rc == AGT_OK)
        rc = agti_patch_apply(p, AGTI_MATCH_UNICODE, load_mem, &in, &res, &err);
    if (want_err != NULL) {
        T_CHECK(rc != AGT_OK, "%s: fails", name);
        T_EQ_STR(agti_buf_cstr(&err), want_err, "%s: the message", name);
        T_EQ_INT(res.n, 0, "%s: no result", name);
    } else {
        T_EQ_INT(rc, AGT_OK, "%s: applies (%s)", name, agti_buf_cstr(&err));
        if (rc == AGT_OK) {
            result_tree(&in, &res, &got);
            T_EQ_INT(got.n, want.n, "%s: number of files after", name);
            for (size_t i = 0; i < want.n; i++) {
                const mfile *g = mset_get(&got, want.v[i].path);
                T_CHECK(g != NULL && g->len == want.v[i].len &&
                            memcmp(g->data, want.v[i].data, g->len) == 0,
                        "%s: %s byte for byte", name, want.v[i].path);
            }
        }
    }
    agti_patch_result_clear(&res);
    agti_patch_free(p);
    agti_buf_free(&err);
    mset_free(&in);
    mset_free(&want);
    mset_free(&got);
    free(patch);
    free(want_err);
    free(dir);
    free(pp);
    free(ep);
    free(xp);
    free(ip);
}

/* Applies patch to one file "f" holding text; returns the new text or the
 * error (malloc'd) and the notes in *notes. */
static char *apply1(const char *text, const char *patch, int max_level, int *rc, char **notes)
{
    mset in = {0};
    if (text != NULL) {
        in.v = malloc(sizeof *in.v);
        in.v[0] = (mfile){agti_strdup("f"), agti_strdup(text), strlen(text)};
        in.n = 1;
    }
    agti_buf err = AGTI_BUF_INIT;
    agti_patch *p = NULL;
    agti_patch_result res = {0};
    *rc = agti_patch_parse(patch, strlen(patch), &p, &err);
    if (*rc == AGT_OK)
        *rc = agti_patch_apply(p, max_level, load_mem, &in, &res, &err);
    char *out = NULL;
    if (notes)
        *notes = NULL;
    if (*rc == AGT_OK && res.n > 0) {
        out = agti_strndup(res.files[0].data ? res.files[0].data : "", res.files[0].len);
        if (notes)
            *notes = agti_strdup(agti_buf_cstr(&res.files[0].notes));
    } else if (*rc != AGT_OK)
        out = agti_strdup(agti_buf_cstr(&err));
    agti_patch_result_clear(&res);
    agti_patch_free(p);
    agti_buf_free(&err);
    mset_free(&in);
    return out;
}

/* The one file f (text) after patch at the Unicode level: want (the
 * engine's message when it fails). */
static void applies(const char *text, const char *patch, const char *want, const char *name)
{
    int rc;
    char *r = apply1(text, patch, AGTI_MATCH_UNICODE, &rc, NULL);
    T_EQ_STR(r, want, "%s", name);
    free(r);
}

static int failing_load(void *ctx, const char *path, agti_pload *out, agti_buf *err)
{
    (void)ctx;
    (void)out;
    agti_buf_printf(err, "%s is a directory", path);
    return AGT_EINVAL;
}

int main(void)
{
    const char *src = getenv("AGT_SOURCE_DIR");
    char *cases = agti_aprintf("%s/tests/unit/patch/cases", src ? src : ".");
    DIR *d = opendir(cases);
    T_CHECK(d != NULL, "the corpus folder opens");
    char **names = NULL;
    size_t nn = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        if (e->d_name[0] != '.') {
            names = realloc(names, (nn + 1) * sizeof *names);
            names[nn++] = agti_strdup(e->d_name);
        }
    if (d)
        closedir(d);
    qsort(names, nn, sizeof *names, cmp_name);
    T_CHECK(nn >= 30, "the corpus has %zu cases", nn);
    for (size_t i = 0; i < nn; i++) {
        run_case(cases, names[i]);
        free(names[i]);
    }
    free(names);
    free(cases);

    int rc;
    char *notes;
    char *r = apply1("one\r\ntwo\r\n",
                     "*** Begin Patch\n*** Update File: f\n@@\n-two\n+2\n*** End Patch\n",
                     AGTI_MATCH_UNICODE, &rc, &notes);
    T_EQ_STR(r, "one\r\n2\r\n", "crlf: the new line gets CRLF");
    T_EQ_STR(notes,
             "\n  hunk 1 (line 2 of the file): matched after normalising line endings: the file "
             "uses CRLF line endings",
             "crlf: the note names the level");
    free(r);
    free(notes);

    r = apply1("if (a) {\n\tgo();\n}\n",
               "*** Begin Patch\n*** Update File: f\n@@\n if (a) {\n-    go();\n+    stop();\n "
               "}\n*** End Patch\n",
               AGTI_MATCH_UNICODE, &rc, &notes);
    T_EQ_STR(r, "if (a) {\n\tstop();\n}\n", "tabs: the file's tab kept");
    T_EQ_STR(notes,
             "\n  hunk 1 (line 1 of the file): matched after ignoring indentation: the file uses "
             "tabs",
             "tabs: the note");
    free(r);
    free(notes);

    r = apply1("if (a) {\n\tgo();\n}\n",
               "*** Begin Patch\n*** Update File: f\n@@\n if (a) {\n-    go();\n+    stop();\n "
               "}\n*** End Patch\n",
               AGTI_MATCH_EXACT, &rc, NULL);
    T_EQ_INT(rc, AGT_ENOTFOUND, "strict: the ladder is off");
    T_EQ_STR(r,
             "line 3: hunk 1 of f does not match the file. Its first line matches the file's "
             "line 1, but line 5 of the patch, '    go();', differs from the file's line 2: "
             "'\tgo();'. Nothing was changed: read the file again and copy the context and '-' "
             "lines exactly.",
             "strict: the message names the first differing line");
    free(r);

    r = apply1("a\nb\nc\n",
               "*** Begin Patch\n*** Update File: f\n@@\n-b\n+B\n*** End of File\n*** End Patch\n",
               AGTI_MATCH_UNICODE, &rc, NULL);
    T_EQ_STR(r,
             "line 3: hunk 1 of f does not match the file at its end ('*** End of File'). Its "
             "lines are the file's lines 2-2, which do not end the file. Nothing was changed: "
             "read the file again and copy the context and '-' lines exactly.",
             "end of file: lines found elsewhere");
    free(r);

    /* Overlapping whole-line places count apart. */
    r = apply1("a\na\na\n", "*** Begin Patch\n*** Update File: f\n@@\n a\n-a\n+b\n*** End Patch\n",
               AGTI_MATCH_UNICODE, &rc, NULL);
    T_EQ_INT(rc, AGT_EAMBIGUOUS, "overlapping places: ambiguous");
    T_EQ_STR(r,
             "line 3: hunk 1 of f matches 2 places exactly (lines 1, 2). Nothing was changed. Add "
             "an '@@' line naming the class or function it is in, or more context lines, so "
             "that it matches one place.",
             "overlapping places: both named");
    free(r);

    /* A hunk's lines must be whole lines: "b" inside "abc" is no place. */
    applies("abc\nb\n", "*** Begin Patch\n*** Update File: f\n@@\n-b\n+B\n*** End Patch\n",
            "abc\nB\n", "whole lines only");

    /* Two hunks in order: the second is looked for after the first. */
    applies("x\nk\nx\nk\n",
            "*** Begin Patch\n*** Update File: f\n@@ x\n-k\n+K1\n@@ x\n-k\n+K2\n*** End "
            "Patch\n",
            "x\nK1\nx\nK2\n", "anchored hunks in order");

    /* A unified-diff range after @@ is no anchor. */
    applies("p\nq\n",
            "*** Begin Patch\n*** Update File: f\n@@ -1,2 +1,2 @@\n p\n-q\n+Q\n*** "
            "End Patch\n",
            "p\nQ\n", "unified range ignored");

    /* An anchor that is part of a line (a signature written short). */
    applies("def f(a, b):\n    return a\n",
            "*** Begin Patch\n*** Update File: f\n@@ def f\n-    return a\n+    return b\n*** "
            "End Patch\n",
            "def f(a, b):\n    return b\n", "anchor inside a line");

    /* Pure addition after an anchor goes right after it. */
    applies("def f():\n    pass\n",
            "*** Begin Patch\n*** Update File: f\n@@ def f():\n+    \"\"\"Doc.\"\"\"\n*** End "
            "Patch\n",
            "def f():\n    \"\"\"Doc.\"\"\"\n    pass\n", "addition after the anchor");

    /* Add File with no lines makes an empty file; deleting it again. */
    r = apply1(NULL, "*** Begin Patch\n*** Add File: f\n*** End Patch\n", AGTI_MATCH_UNICODE, &rc,
               NULL);
    T_EQ_STR(r, "", "empty Add File");
    free(r);

    /* The loader's error stops the patch with its status. */
    agti_patch *p = NULL;
    agti_buf err = AGTI_BUF_INIT;
    const char *del = "*** Begin Patch\n*** Delete File: d\n*** End Patch\n";
    T_EQ_INT(agti_patch_parse(del, strlen(del), &p, &err), AGT_OK, "delete parses");
    agti_patch_result res;
    T_EQ_INT(agti_patch_apply(p, AGTI_MATCH_UNICODE, failing_load, NULL, &res, &err), AGT_EINVAL,
             "loader status returned");
    T_EQ_STR(agti_buf_cstr(&err), "d is a directory", "loader message kept");
    agti_patch_free(p);
    agti_buf_free(&err);

    /* Too many sections. */
    agti_buf big = AGTI_BUF_INIT;
    agti_buf_puts(&big, "*** Begin Patch\n");
    for (int i = 0; i <= AGTI_PATCH_MAX_FILES; i++)
        agti_buf_printf(&big, "*** Delete File: f%d\n", i);
    agti_buf_puts(&big, "*** End Patch\n");
    T_EQ_INT(agti_patch_parse(big.ptr, big.len, &p, &err), AGT_ELIMIT, "section limit");
    T_EQ_STR(agti_buf_cstr(&err), "line 502: the patch has more than 500 file sections; split it.",
             "section limit message");
    agti_buf_free(&big);
    agti_buf_free(&err);

    /* Empty text. */
    T_EQ_INT(agti_patch_parse("\n \n", 3, &p, &err), AGT_EPARSE, "empty patch");
    T_EQ_STR(agti_buf_cstr(&err),
             "the patch is empty: it starts with the line '*** Begin Patch' and ends with the "
             "line '*** End Patch'.",
             "empty patch message");
    agti_buf_free(&err);
    return t_done();
}
