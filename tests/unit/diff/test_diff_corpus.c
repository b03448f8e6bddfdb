/*
 * Every case of corpus/diffs/ parses to exactly its sidecar JSON (compared
 * field by field), and every parsed new-side line equals the same line of the
 * post-change file stored next to it (an independent check of the line
 * numbers and of byte-exact content, CRLF included).
 */
#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agenttools/diff.h"
#include "diff/diff_internal.h"
#include "harness.h"

static char *read_file(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, fp) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(fp);
    if (buf) {
        buf[n] = '\0';
        *len = (size_t)n;
    }
    return buf;
}

/* out = a + b + c, cut to cap bytes (no format-truncation games). */
static void join3(char *out, size_t cap, const char *a, const char *b, const char *c)
{
    size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
    if (la + lb + lc + 1 > cap) {
        out[0] = '\0';
        return;
    }
    memcpy(out, a, la);
    memcpy(out + la, b, lb);
    memcpy(out + la + lb, c, lc + 1);
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Compares one field; prints both values on a mismatch. */
static int field_eq(const char *name, const char *fld, size_t fi, json_t *got, json_t *want)
{
    if (json_equal(got, want))
        return 1;
    char *g = got ? json_dumps(got, JSON_ENCODE_ANY) : NULL;
    char *w = want ? json_dumps(want, JSON_ENCODE_ANY) : NULL;
    t_diag("%s: files[%zu].%s: got %s, want %s", name, fi, fld, g ? g : "(missing)",
           w ? w : "(missing)");
    free(g);
    free(w);
    return 0;
}

static const char *const FIELDS[] = {"old_path", "new_path",   "status", "binary", "old_mode",
                                     "new_mode", "similarity", "added",  "deleted"};

static void check_case(const char *dir, const char *name)
{
    char path[4096];
    size_t jlen, dlen;
    join3(path, sizeof path, dir, "/", name);
    strncat(path, ".json", sizeof path - strlen(path) - 1);
    char *jtext = read_file(path, &jlen);
    json_error_t err;
    json_t *want = jtext ? json_loadb(jtext, jlen, 0, &err) : NULL;
    free(jtext);
    if (!T_CHECK(want != NULL, "%s: sidecar readable", name))
        return;
    join3(path, sizeof path, dir, "/", json_string_value(json_object_get(want, "diff")));
    char *dtext = read_file(path, &dlen);
    if (!T_CHECK(dtext != NULL, "%s: diff readable", name)) {
        json_decref(want);
        return;
    }
    agt_diff *d = NULL;
    int rc = agt_diff_parse(&d, dtext, dlen);
    T_EQ_INT(rc, AGT_OK, "%s: parses (%s)", name, rc ? agt_error_message() : "ok");
    char *out = NULL;
    if (rc == AGT_OK)
        rc = agt_diff_to_json(d, &out);
    json_t *got = out ? json_loads(out, 0, &err) : NULL;
    T_CHECK(got != NULL, "%s: to_json is valid JSON", name);
    json_t *gf = json_object_get(got, "files"), *wf = json_object_get(want, "files");
    T_EQ_INT(json_array_size(gf), json_array_size(wf), "%s: number of files", name);
    T_CHECK(json_is_false(json_object_get(got, "best_effort")), "%s: not best-effort", name);
    int ok = 1, hunks_ok = 1;
    for (size_t i = 0; i < json_array_size(wf) && i < json_array_size(gf); i++) {
        json_t *g = json_array_get(gf, i), *w = json_array_get(wf, i);
        for (size_t k = 0; k < sizeof FIELDS / sizeof FIELDS[0]; k++)
            ok &= field_eq(name, FIELDS[k], i, json_object_get(g, FIELDS[k]),
                           json_object_get(w, FIELDS[k]));
        json_t *gh = json_object_get(g, "hunks"), *wh = json_object_get(w, "hunks");
        if (json_array_size(gh) != json_array_size(wh)) {
            t_diag("%s: files[%zu]: %zu hunks, want %zu", name, i, json_array_size(gh),
                   json_array_size(wh));
            hunks_ok = 0;
            continue;
        }
        for (size_t h = 0; h < json_array_size(wh); h++) {
            const char *hf[] = {"old_start", "old_lines", "new_start", "new_lines", "section"};
            for (size_t k = 0; k < 5; k++) {
                char fld[64];
                snprintf(fld, sizeof fld, "hunks[%zu].%s", h, hf[k]);
                hunks_ok &= field_eq(name, fld, i, json_object_get(json_array_get(gh, h), hf[k]),
                                     json_object_get(json_array_get(wh, h), hf[k]));
            }
        }
    }
    T_CHECK(ok, "%s: file fields equal the sidecar", name);
    T_CHECK(hunks_ok, "%s: hunks equal the sidecar", name);

    /* post-change content: every new-side line of every hunk equals the
     * post file's line of the same number */
    int post_ok = 1;
    size_t posts = 0;
    for (size_t i = 0; d && i < json_array_size(wf); i++) {
        json_t *p = json_object_get(json_array_get(wf, i), "post");
        if (!json_is_string(p))
            continue;
        join3(path, sizeof path, dir, "/", json_string_value(p));
        size_t plen;
        char *post = read_file(path, &plen);
        const char *np = json_string_value(json_object_get(json_array_get(wf, i), "new_path"));
        if (!post || agt_diff_set_content(d, np, post, plen) != AGT_OK) {
            post_ok = 0;
            free(post);
            continue;
        }
        posts++;
        const char *c;
        size_t clen;
        if (agt_diff_content(d, np, &c, &clen) != AGT_OK || clen != plen ||
            memcmp(c, post, plen) != 0)
            post_ok = 0;
        /* line starts of the post file */
        size_t nl = 1;
        for (size_t k = 0; k < plen; k++)
            nl += post[k] == '\n';
        size_t *starts = malloc((nl + 1) * sizeof(size_t));
        size_t m = 0;
        starts[m++] = 0;
        for (size_t k = 0; k < plen; k++)
            if (post[k] == '\n')
                starts[m++] = k + 1;
        const agti_diff_file *f = &d->files[i];
        for (uint32_t li = 0; li < f->nlines; li++) {
            const agti_diff_line *l = &d->lines[f->first_line + li];
            if (l->origin == '-')
                continue;
            size_t a = starts[l->new_no - 1];
            size_t b = l->new_no < m ? starts[l->new_no] - 1 : plen;
            if (b - a != l->len || memcmp(post + a, d->text.ptr + l->off, l->len) != 0) {
                if (post_ok)
                    t_diag("%s: %s line %u differs from the post file", name, np, l->new_no);
                post_ok = 0;
            }
        }
        free(starts);
        free(post);
    }
    T_CHECK(post_ok, "%s: %zu post files match the new-side lines byte for byte", name, posts);
    json_decref(got);
    json_decref(want);
    agt_free(out);
    agt_diff_free(d);
    free(dtext);
}

int main(void)
{
    const char *shared = getenv("AGT_SHARED_DIR");
    char dir[4096];
    join3(dir, sizeof dir, shared ? shared : "../shared", "/corpus/diffs", "");
    DIR *dp = opendir(dir);
    if (!T_CHECK(dp != NULL, "corpus directory %s opens", dir))
        return t_done();
    char *names[256];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(dp)) != NULL && n < 256) {
        size_t l = strlen(e->d_name);
        if (l > 5 && strcmp(e->d_name + l - 5, ".json") == 0 && e->d_name[0] == 's')
            names[n++] = strndup(e->d_name, l - 5);
    }
    closedir(dp);
    qsort(names, n, sizeof names[0], cmp_names);
    T_EQ_INT(n, 21, "21 corpus cases");
    for (size_t i = 0; i < n; i++) {
        check_case(dir, names[i]);
        free(names[i]);
    }
    return t_done();
}
