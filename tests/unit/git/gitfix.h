/*
 * Fixtures for the git engine tests: real repositories built with the git
 * CLI in temporary directories (HOME pointed there, system config off), and
 * a parser of the CLI's own answers (`--name-status -z`, `--numstat -z`, the
 * patch text) that the change sets are compared with, file by file.
 */
#ifndef AGT_TEST_GITFIX_H
#define AGT_TEST_GITFIX_H

#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agenttools/git.h"
#include "harness.h"

#if defined(__GNUC__)
#define GF_UNUSED __attribute__((unused))
#else
#define GF_UNUSED
#endif

/* Every git call: fixed identity, no colour, no pager, git's defaults. */
#define GIT                                                                                        \
    "git -c user.name=Tester -c user.email=tester@example.com -c core.autocrlf=false "             \
    "-c color.ui=false -c core.pager=cat -c init.defaultBranch=main "

static char gf_root[512]; /* the temp dir, also HOME */

static GF_UNUSED int gf_setup(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(gf_root, sizeof(gf_root), "%s/agt-git-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (!mkdtemp(gf_root))
        return -1;
    setenv("HOME", gf_root, 1);
    setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
    setenv("LC_ALL", "C", 1);
    unsetenv("XDG_CONFIG_HOME");
    unsetenv("GIT_DIR");
    unsetenv("GIT_WORK_TREE");
    unsetenv("GIT_INDEX_FILE");
    setenv("GIT_AUTHOR_DATE", "2024-01-01T00:00:00Z", 1);
    setenv("GIT_COMMITTER_DATE", "2024-01-01T00:00:00Z", 1);
    return 0;
}

static GF_UNUSED void gf_teardown(void)
{
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", gf_root);
    if (system(cmd) != 0)
        t_diag("could not remove %s", gf_root);
}

/* Runs a shell command in dir; returns its exit status. */
static GF_UNUSED int gf_sh(const char *dir, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static GF_UNUSED int gf_sh(const char *dir, const char *fmt, ...)
{
    char cmd[4096];
    int n = snprintf(cmd, sizeof(cmd), "cd '%s' && ", dir);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd + n, sizeof(cmd) - (size_t)n, fmt, ap);
    va_end(ap);
    int st = system(cmd);
    return st == -1 ? -1 : WEXITSTATUS(st);
}

/* Runs a shell command in dir and returns its whole stdout (NUL bytes kept). */
static GF_UNUSED char *gf_out(size_t *len, const char *dir, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static GF_UNUSED char *gf_out(size_t *len, const char *dir, const char *fmt, ...)
{
    char cmd[4096];
    int n = snprintf(cmd, sizeof(cmd), "cd '%s' && ", dir);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd + n, sizeof(cmd) - (size_t)n, fmt, ap);
    va_end(ap);
    FILE *p = popen(cmd, "r");
    if (!p)
        return NULL;
    size_t cap = 4096, used = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + used, 1, cap - used - 1, p)) > 0) {
        used += got;
        if (cap - used < 2) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    pclose(p);
    if (buf)
        buf[used] = '\0';
    if (len)
        *len = used;
    return buf;
}

/* Creates dir/rel (and its parents) with the given bytes. */
static GF_UNUSED void gf_write(const char *dir, const char *rel, const char *data, size_t len)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, rel);
    for (char *s = path + strlen(dir) + 1; (s = strchr(s, '/')) != NULL; s++) {
        *s = '\0';
        mkdir(path, 0755);
        *s = '/';
    }
    FILE *f = fopen(path, "wb");
    if (!f) {
        t_diag("cannot write %s", path);
        return;
    }
    fwrite(data, 1, len, f);
    fclose(f);
}

static GF_UNUSED void gf_puts(const char *dir, const char *rel, const char *text)
{
    gf_write(dir, rel, text, strlen(text));
}

/* A commit of a.txt and b.txt in the repository at dir, then a split
 * index (update-index --split-index) and b.txt changed and staged, so the
 * split index has an entry that replaces one of the shared index. */
static GF_UNUSED void gf_split_index(const char *dir)
{
    gf_puts(dir, "a.txt", "one\n");
    gf_puts(dir, "b.txt", "bee\n");
    gf_sh(dir, GIT "add -A && " GIT "commit -q -m one && " GIT "update-index --split-index && "
                   "echo more >> b.txt && " GIT "add b.txt");
}

/* n numbered lines "prefix k\n", k = 1..n */
static GF_UNUSED char *gf_lines(const char *prefix, int n)
{
    size_t cap = (size_t)n * (strlen(prefix) + 16) + 1;
    char *s = malloc(cap);
    size_t used = 0;
    s[0] = '\0';
    for (int k = 1; k <= n; k++)
        used += (size_t)snprintf(s + used, cap - used, "%s %d\n", prefix, k);
    return s;
}

/* ---- what the git CLI says about one change ----------------------------- */

typedef struct gf_file {
    char status; /* A D M R (first letter of --name-status) */
    int score;   /* R's score, -1 otherwise */
    char old_path[256], new_path[256];
    long added, deleted; /* from --numstat; -1 for binary */
    /* from the patch */
    bool binary;
    unsigned old_mode, new_mode; /* 0 = the patch does not say */
    int similarity;              /* "similarity index N%", -1 = none */
    int nhunks;
    unsigned hunks[64][4];
    char sections[64][96];
    long patch_added, patch_deleted;
} gf_file;

typedef struct gf_set {
    gf_file f[128];
    int n;
} gf_set;

static GF_UNUSED gf_file *gf_find(gf_set *s, const char *path)
{
    for (int i = 0; i < s->n; i++) {
        gf_file *f = &s->f[i];
        if (strcmp(f->status == 'D' ? f->old_path : f->new_path, path) == 0)
            return f;
    }
    return NULL;
}

static GF_UNUSED gf_file *gf_new(gf_set *s)
{
    gf_file *f = &s->f[s->n++];
    memset(f, 0, sizeof(*f));
    f->score = -1;
    f->similarity = -1;
    return f;
}

/* `--name-status -z`: "X\0path\0" or "Rnnn\0old\0new\0". */
static void gf_parse_name_status(gf_set *s, const char *buf, size_t len)
{
    size_t i = 0;
    while (i < len) {
        const char *st = buf + i;
        i += strlen(st) + 1;
        if (i >= len)
            break;
        gf_file *f = gf_new(s);
        f->status = st[0];
        const char *p1 = buf + i;
        i += strlen(p1) + 1;
        if (st[0] == 'R' || st[0] == 'C') {
            f->score = atoi(st + 1);
            const char *p2 = buf + i;
            i += strlen(p2) + 1;
            snprintf(f->old_path, sizeof(f->old_path), "%s", p1);
            snprintf(f->new_path, sizeof(f->new_path), "%s", p2);
        } else {
            snprintf(f->old_path, sizeof(f->old_path), "%s", st[0] == 'A' ? "" : p1);
            snprintf(f->new_path, sizeof(f->new_path), "%s", st[0] == 'D' ? "" : p1);
        }
    }
}

/* `--numstat -z`: "a\td\tpath\0" or "a\td\t\0old\0new\0"; "-" for binary. */
static void gf_parse_numstat(gf_set *s, const char *buf, size_t len)
{
    size_t i = 0;
    while (i < len) {
        const char *rec = buf + i;
        i += strlen(rec) + 1;
        long a = -1, d = -1;
        if (rec[0] != '-')
            a = strtol(rec, NULL, 10);
        const char *t = strchr(rec, '\t');
        if (!t)
            break;
        if (t[1] != '-')
            d = strtol(t + 1, NULL, 10);
        t = strchr(t + 1, '\t');
        if (!t)
            break;
        const char *path = t + 1;
        if (!path[0]) { /* rename: old\0new\0 follow */
            i += strlen(buf + i) + 1;
            path = buf + i;
            i += strlen(path) + 1;
        }
        gf_file *f = gf_find(s, path);
        if (!f) {
            t_diag("numstat names %s, which --name-status did not", path);
            continue;
        }
        f->added = a;
        f->deleted = d;
    }
}

/* The patch text: modes, similarity, binary, hunk headers, +/- counts. */
static void gf_parse_patch(gf_set *s, const char *text)
{
    gf_file *f = NULL;
    bool in_hunk = false;
    for (const char *l = text; l && *l;) {
        const char *eol = strchr(l, '\n');
        size_t n = eol ? (size_t)(eol - l) : strlen(l);
        char line[1024];
        snprintf(line, sizeof(line), "%.*s", (int)(n < sizeof(line) - 1 ? n : sizeof(line) - 1), l);
        unsigned m;
        if (strncmp(line, "diff --git a/", 13) == 0) {
            const char *b = strstr(line, " b/");
            f = b ? gf_find(s, b + 3) : NULL;
            if (!f && b) { /* deleted: found by old path */
                char old[256];
                snprintf(old, sizeof(old), "%.*s", (int)(b - line - 13), line + 13);
                f = gf_find(s, old);
            }
            if (!f)
                t_diag("patch names a file the name-status did not: %s", line);
            in_hunk = false;
        } else if (f && !in_hunk) {
            if (sscanf(line, "new file mode %o", &m) == 1)
                f->new_mode = m;
            else if (sscanf(line, "deleted file mode %o", &m) == 1)
                f->old_mode = m;
            else if (sscanf(line, "old mode %o", &m) == 1)
                f->old_mode = m;
            else if (sscanf(line, "new mode %o", &m) == 1)
                f->new_mode = m;
            else if (sscanf(line, "similarity index %d%%", &f->similarity) == 1) {
            } else if (strncmp(line, "index ", 6) == 0) {
                const char *sp = strchr(line + 6, ' ');
                if (sp && sscanf(sp + 1, "%o", &m) == 1)
                    f->old_mode = f->new_mode = m;
            } else if (strncmp(line, "Binary files ", 13) == 0) {
                f->binary = true;
            }
        }
        if (f && strncmp(line, "@@ -", 4) == 0 && f->nhunks < 64) {
            unsigned os = 0, ol = 1, ns = 0, nl = 1;
            const char *p = line + 4;
            os = (unsigned)strtoul(p, (char **)&p, 10);
            if (*p == ',')
                ol = (unsigned)strtoul(p + 1, (char **)&p, 10);
            p = strstr(p, " +");
            if (p) {
                ns = (unsigned)strtoul(p + 2, (char **)&p, 10);
                if (*p == ',')
                    nl = (unsigned)strtoul(p + 1, (char **)&p, 10);
            }
            const char *sec = p ? strstr(p, " @@") : NULL;
            snprintf(f->sections[f->nhunks], sizeof(f->sections[0]), "%s",
                     sec && sec[3] == ' ' ? sec + 4 : "");
            unsigned *h = f->hunks[f->nhunks++];
            h[0] = os, h[1] = ol, h[2] = ns, h[3] = nl;
            in_hunk = true;
        } else if (f && in_hunk) {
            if (line[0] == '+')
                f->patch_added++;
            else if (line[0] == '-')
                f->patch_deleted++;
        }
        l = eol ? eol + 1 : NULL;
    }
}

/* Fills s from three runs of `git <cmd> ... <args>` in dir: --name-status
 * -z, --numstat -z, and the patch. */
static GF_UNUSED void gf_cli(gf_set *s, const char *dir, const char *cmd, const char *args)
{
    size_t len;
    char *ns = gf_out(&len, dir, GIT "%s --name-status -z %s", cmd, args);
    if (ns)
        gf_parse_name_status(s, ns, len);
    free(ns);
    char *num = gf_out(&len, dir, GIT "%s --numstat -z %s", cmd, args);
    if (num)
        gf_parse_numstat(s, num, len);
    free(num);
    char *patch = gf_out(&len, dir, GIT "%s %s", cmd, args);
    if (patch)
        gf_parse_patch(s, patch);
    free(patch);
}

/* Adds the untracked non-ignored files, as `git diff --no-index /dev/null F`
 * describes each. */
static GF_UNUSED void gf_cli_untracked(gf_set *s, const char *dir)
{
    size_t len;
    char *list = gf_out(&len, dir, GIT "ls-files -z --others --exclude-standard");
    for (size_t i = 0; list && i < len;) {
        const char *p = list + i;
        i += strlen(p) + 1;
        gf_set one;
        one.n = 0;
        char cmd[600];
        snprintf(cmd, sizeof(cmd), "-- /dev/null '%s'", p);
        gf_cli(&one, dir, "diff --no-index", cmd);
        if (one.n == 1 && s->n < 128)
            s->f[s->n++] = one.f[0];
        else
            t_diag("no-index diff of %s gave %d files", p, one.n);
    }
    free(list);
}

/* ---- comparing --------------------------------------------------------- */

static GF_UNUSED json_t *gf_json(const agt_diff *d)
{
    char *s = NULL;
    if (agt_diff_to_json(d, &s) != AGT_OK)
        return NULL;
    json_t *j = json_loads(s, 0, NULL);
    agt_free(s);
    return j;
}

static const char *gf_jstr(json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static long long gf_jint(json_t *o, const char *k)
{
    return json_integer_value(json_object_get(o, k));
}

static unsigned gf_jmode(json_t *o, const char *k)
{
    const char *s = gf_jstr(o, k);
    return s ? (unsigned)strtoul(s, NULL, 8) : 0;
}

/* Compares the change set with the CLI's view, file by file. */
static GF_UNUSED void gf_compare(const char *label, const agt_diff *d, gf_set *s)
{
    json_t *j = gf_json(d);
    json_t *files = json_object_get(j, "files");
    T_EQ_INT(json_array_size(files), s->n, "%s: file count as git says", label);
    for (int i = 0; i < s->n; i++) {
        gf_file *e = &s->f[i];
        const char *path = e->status == 'D' ? e->old_path : e->new_path;
        json_t *g = NULL;
        for (size_t k = 0; k < json_array_size(files); k++) {
            json_t *o = json_array_get(files, k);
            const char *np = gf_jstr(o, "new_path"), *op = gf_jstr(o, "old_path");
            if ((e->status != 'D' && np && strcmp(np, path) == 0) ||
                (e->status == 'D' && !np && op && strcmp(op, path) == 0))
                g = o;
        }
        if (!T_CHECK(g != NULL, "%s: %s is in the change set", label, path))
            continue;
        static const char *const names[] = {"A",        "added", "D",       "deleted", "M",
                                            "modified", "R",     "renamed", "C",       "copied"};
        const char *want = "?";
        for (int k = 0; k < 10; k += 2)
            if (names[k][0] == e->status)
                want = names[k + 1];
        T_EQ_STR(gf_jstr(g, "status"), want, "%s: %s status", label, path);
        T_EQ_STR(gf_jstr(g, "old_path"), e->status == 'A' ? NULL : e->old_path, "%s: %s old path",
                 label, path);
        T_EQ_INT(json_is_true(json_object_get(g, "binary")), e->added < 0,
                 "%s: %s binary as numstat says", label, path);
        T_EQ_INT(json_is_true(json_object_get(g, "binary")), e->binary,
                 "%s: %s binary as the patch says", label, path);
        if (e->added >= 0) {
            T_EQ_INT(gf_jint(g, "added"), e->added, "%s: %s added lines", label, path);
            T_EQ_INT(gf_jint(g, "deleted"), e->deleted, "%s: %s deleted lines", label, path);
        }
        if (e->old_mode)
            T_EQ_INT(gf_jmode(g, "old_mode"), e->old_mode, "%s: %s old mode %o", label, path,
                     e->old_mode);
        if (e->new_mode)
            T_EQ_INT(gf_jmode(g, "new_mode"), e->new_mode, "%s: %s new mode %o", label, path,
                     e->new_mode);
        if (e->similarity >= 0)
            T_EQ_INT(gf_jint(g, "similarity"), e->similarity, "%s: %s similarity", label, path);
        json_t *hunks = json_object_get(g, "hunks");
        T_EQ_INT(json_array_size(hunks), e->nhunks, "%s: %s hunk count", label, path);
        for (int h = 0; h < e->nhunks && (size_t)h < json_array_size(hunks); h++) {
            json_t *gh = json_array_get(hunks, (size_t)h);
            unsigned *w = e->hunks[h];
            char got[80], exp[80];
            snprintf(got, sizeof(got), "-%lld,%lld +%lld,%lld", gf_jint(gh, "old_start"),
                     gf_jint(gh, "old_lines"), gf_jint(gh, "new_start"), gf_jint(gh, "new_lines"));
            snprintf(exp, sizeof(exp), "-%u,%u +%u,%u", w[0], w[1], w[2], w[3]);
            T_EQ_STR(got, exp, "%s: %s hunk %d header", label, path, h + 1);
            T_EQ_STR(gf_jstr(gh, "section"), e->sections[h], "%s: %s hunk %d section", label, path,
                     h + 1);
        }
    }
    json_decref(j);
}

#endif
