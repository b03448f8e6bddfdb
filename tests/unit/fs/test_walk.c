/* Directory walker on a generated tree: nested ignore files, hidden files,
 * VCS folders, symlinks (a loop, a dangling one, one to a file), limits. The
 * expected lists follow from the tree by hand (bytewise name order, depth
 * first). Cross-check: ripgrep 13 `rg --files --hidden --sort path` in a git
 * repository with this tree lists the same files except the symlinks (rg
 * skips symlinks without -L) and the .git/.hg contents (rg does not skip VCS
 * folders other than through ignore rules). */
#include <time.h>

#include "fs/fs.h"
#include "fsutil.h"
#include "harness.h"

typedef struct collect {
    char list[8192];
    int stop_after; /* 0: never */
    int seen;
    const char *want_path;
    agti_walk_entry want_entry;
    bool found;
} collect;

static int on_entry(const agti_walk_entry *e, void *payload)
{
    collect *c = payload;
    c->seen++;
    if (strcmp(e->relpath, "locked/f") != 0) {
        if (c->list[0])
            strcat(c->list, " ");
        strcat(c->list, e->relpath);
        if (e->type == AGTI_FS_DIR)
            strcat(c->list, "/");
        if (e->type == AGTI_FS_SYMLINK)
            strcat(c->list, "@");
    }
    if (c->want_path != NULL && strcmp(e->relpath, c->want_path) == 0) {
        c->want_entry = *e;
        c->found = true;
    }
    return c->stop_after > 0 && c->seen >= c->stop_after;
}

static char *root;

static void build_tree(void)
{
    char p[4096];
    root = tu_mkdtemp();
    tu_write(root, ".gitignore", "*.log\nbuild/\n!important.log\n");
    tu_write(root, ".hidden_file", "h");
    tu_write(root, "a.txt", "hello");
    tu_write(root, "app.log", "");
    tu_write(root, "important.log", "");
    tu_write(root, "build/out.o", "");
    tu_write(root, "src/main.c", "int main;");
    tu_write(root, "src/.ignore", "gen/\n");
    tu_write(root, "src/gen/x.c", "");
    tu_write(root, "src/sub/.gitignore", "!*.log\n");
    tu_write(root, "src/sub/debug.log", "");
    tu_write(root, ".git/HEAD", "ref");
    tu_write(root, ".hg/store", "");
    tu_write(root, ".env", "SECRET=1");
    tu_write(root, "locked/f", "");
    snprintf(p, sizeof p, "%s/locked", root);
    chmod(p, 0);
    snprintf(p, sizeof p, "%s/loop", root);
    symlink(".", p);
    snprintf(p, sizeof p, "%s/link_to_a", root);
    symlink("a.txt", p);
    snprintf(p, sizeof p, "%s/dangling", root);
    symlink("nowhere", p);
    snprintf(p, sizeof p, "%s/a.txt", root);
    struct timespec ts[2] = {{1700000000, 123456789}, {1700000000, 123456789}};
    utimensat(AT_FDCWD, p, ts, 0);
}

static void test_basic(void)
{
    agti_walk_opts o;
    memset(&o, 0, sizeof o);
    o.ignore_flags = AGTI_IGN_NO_GLOBAL;
    collect c;
    memset(&c, 0, sizeof c);
    c.want_path = "a.txt";
    agti_walk_result res;
    T_EQ_INT(agti_walk(root, &o, on_entry, &c, &res), AGT_OK, "walk ok");
    T_EQ_STR(c.list,
             ".env .gitignore .hidden_file a.txt dangling@ important.log link_to_a loop@ "
             "src/.ignore src/main.c src/sub/.gitignore src/sub/debug.log",
             "default walk: ignore rules, hidden files, no VCS folders, symlinks not followed");
    T_CHECK(c.found && c.want_entry.size == 5, "a.txt size 5");
    T_EQ_INT(c.want_entry.mtime_ns, 1700000000123456789LL, "a.txt mtime in ns");
    T_EQ_INT(c.want_entry.type, AGTI_FS_FILE, "a.txt is a file");
    if (geteuid() == 0) {
        t_skip("running as root: chmod 000 does not make a directory unreadable");
        T_EQ_INT(res.entries, 13, "13 entries (with locked/f, readable by root)");
    } else {
        T_EQ_INT(res.nwarnings, 1, "one warning for the unreadable directory");
        T_CHECK(res.nwarnings == 1 && strstr(res.warnings[0], "locked") != NULL,
                "the warning names the directory");
        T_EQ_INT(res.entries, 12, "12 entries");
    }
    T_CHECK(!res.truncated && !res.timed_out, "not cut");
    agti_walk_result_clear(&res);

    memset(&c, 0, sizeof c);
    c.want_path = "link_to_a";
    agti_walk(root, &o, on_entry, &c, NULL);
    T_CHECK(c.found && c.want_entry.is_symlink && c.want_entry.type == AGTI_FS_FILE &&
                c.want_entry.size == 5,
            "a symlink to a file is reported as a file with the target's size");
}

static void test_options(void)
{
    agti_walk_opts o;
    memset(&o, 0, sizeof o);
    o.ignore_flags = AGTI_IGN_NO_GLOBAL;
    o.include_ignored = true;
    collect c;
    memset(&c, 0, sizeof c);
    agti_walk(root, &o, on_entry, &c, NULL);
    T_EQ_STR(c.list,
             ".env .gitignore .hidden_file a.txt app.log build/out.o dangling@ important.log "
             "link_to_a loop@ src/.ignore src/gen/x.c src/main.c src/sub/.gitignore "
             "src/sub/debug.log",
             "include_ignored: ignored files back, VCS folders still skipped");

    memset(&o, 0, sizeof o);
    o.ignore_flags = AGTI_IGN_NO_GLOBAL;
    o.skip_sensitive = true;
    o.include_dirs = true;
    memset(&c, 0, sizeof c);
    agti_walk_result res;
    agti_walk(root, &o, on_entry, &c, &res);
    T_EQ_STR(c.list,
             ".gitignore .hidden_file a.txt dangling@ important.log link_to_a locked/ loop@ src/ "
             "src/.ignore src/main.c src/sub/ src/sub/.gitignore src/sub/debug.log",
             "skip_sensitive + include_dirs");
    T_EQ_INT(res.sensitive_skipped, 1, ".env counted as filtered");
    agti_walk_result_clear(&res);

    memset(&o, 0, sizeof o);
    o.ignore_flags = AGTI_IGN_NO_GLOBAL;
    o.skip_stat = true;
    memset(&c, 0, sizeof c);
    c.want_path = "a.txt";
    agti_walk(root, &o, on_entry, &c, NULL);
    T_EQ_STR(c.list,
             ".env .gitignore .hidden_file a.txt dangling@ important.log link_to_a loop@ "
             "src/.ignore src/main.c src/sub/.gitignore src/sub/debug.log",
             "skip_stat: the same entries");
    T_CHECK(c.found && c.want_entry.type == AGTI_FS_FILE && c.want_entry.size == 0 &&
                c.want_entry.mtime_ns == 0,
            "skip_stat: type only");

    memset(&o, 0, sizeof o);
    o.ignore_flags = AGTI_IGN_NO_GLOBAL;
    o.max_entries = 3;
    memset(&c, 0, sizeof c);
    agti_walk(root, &o, on_entry, &c, &res);
    T_EQ_STR(c.list, ".env .gitignore .hidden_file", "max_entries 3");
    T_CHECK(res.truncated && res.entries == 3, "truncated flag");
    agti_walk_result_clear(&res);

    memset(&o, 0, sizeof o);
    o.ignore_flags = AGTI_IGN_NO_GLOBAL;
    o.max_depth = 1;
    memset(&c, 0, sizeof c);
    agti_walk(root, &o, on_entry, &c, NULL);
    T_EQ_STR(c.list, ".env .gitignore .hidden_file a.txt dangling@ important.log link_to_a loop@",
             "max_depth 1: the root's entries only");

    memset(&o, 0, sizeof o);
    o.ignore_flags = AGTI_IGN_NO_GLOBAL;
    memset(&c, 0, sizeof c);
    c.stop_after = 2;
    T_EQ_INT(agti_walk(root, &o, on_entry, &c, NULL), AGT_ECANCELLED, "callback stops the walk");
    T_EQ_INT(c.seen, 2, "no entry after the stop");

    T_EQ_INT(agti_walk("/nonexistent-agt-walk", &o, on_entry, &c, NULL), AGT_ENOTFOUND,
             "missing root");
    char p[4096];
    snprintf(p, sizeof p, "%s/a.txt", root);
    T_EQ_INT(agti_walk(p, &o, on_entry, &c, NULL), AGT_EINVAL, "root is a file");
    T_EQ_INT(agti_walk(NULL, &o, on_entry, &c, NULL), AGT_EINVAL, "NULL root");
}

/* Without d_type (DT_UNKNOWN from some network and FUSE file systems,
 * simulated by the test hook) every entry is lstat'ed: the same entries and
 * types as with d_type, and then size and mtime are known even with
 * skip_stat. */
static void test_unknown_dtype(void)
{
    agti_walk_opts o;
    memset(&o, 0, sizeof o);
    o.ignore_flags = AGTI_IGN_NO_GLOBAL;
    o.include_dirs = true;
    agti_walk_force_unknown_dtype = true;
    collect c;
    memset(&c, 0, sizeof c);
    c.want_path = "link_to_a";
    agti_walk(root, &o, on_entry, &c, NULL);
    T_EQ_STR(c.list,
             ".env .gitignore .hidden_file a.txt dangling@ important.log link_to_a locked/ loop@ "
             "src/ src/.ignore src/main.c src/sub/ src/sub/.gitignore src/sub/debug.log",
             "DT_UNKNOWN: same entries, ignore rules and types");
    T_CHECK(c.found && c.want_entry.is_symlink && c.want_entry.type == AGTI_FS_FILE &&
                c.want_entry.size == 5,
            "DT_UNKNOWN: a symlink to a file is a file with the target's size");
    o.skip_stat = true;
    o.include_dirs = false;
    memset(&c, 0, sizeof c);
    c.want_path = "a.txt";
    agti_walk(root, &o, on_entry, &c, NULL);
    T_EQ_STR(c.list,
             ".env .gitignore .hidden_file a.txt dangling@ important.log link_to_a loop@ "
             "src/.ignore src/main.c src/sub/.gitignore src/sub/debug.log",
             "DT_UNKNOWN + skip_stat: same entries");
    T_CHECK(c.found && c.want_entry.type == AGTI_FS_FILE && c.want_entry.size == 5 &&
                c.want_entry.mtime_ns == 1700000000123456789LL,
            "DT_UNKNOWN + skip_stat: the lstat gave size and mtime");
    agti_walk_force_unknown_dtype = false;
}

/* Each of the three ignore file names is found in the directory listing
 * (the walker opens only the ones listed), alone in its directory. */
static void test_ignore_files_listed(void)
{
    char *t = tu_mkdtemp();
    tu_write(t, "g/.gitignore", "x\n");
    tu_write(t, "g/x", "");
    tu_write(t, "g/y", "");
    tu_write(t, "i/.ignore", "x\n");
    tu_write(t, "i/x", "");
    tu_write(t, "i/y", "");
    tu_write(t, "r/.rgignore", "x\n");
    tu_write(t, "r/x", "");
    tu_write(t, "r/y", "");
    tu_write(t, "n/x", "");
    agti_walk_opts o;
    memset(&o, 0, sizeof o);
    o.ignore_flags = AGTI_IGN_NO_GLOBAL;
    o.skip_stat = true;
    collect c;
    memset(&c, 0, sizeof c);
    agti_walk(t, &o, on_entry, &c, NULL);
    T_EQ_STR(c.list, "g/.gitignore g/y i/.ignore i/y n/x r/.rgignore r/y",
             ".gitignore, .ignore and .rgignore each honoured");
    o.ignore_flags = AGTI_IGN_NO_GLOBAL | AGTI_IGN_NO_DOTIGNORE;
    memset(&c, 0, sizeof c);
    agti_walk(t, &o, on_entry, &c, NULL);
    T_EQ_STR(c.list, "g/.gitignore g/y i/.ignore i/x i/y n/x r/.rgignore r/x r/y",
             "AGTI_IGN_NO_DOTIGNORE: .gitignore only");
    tu_rmtree(t);
    free(t);
}

/* Below 128 levels the walker closes each directory after reading it and
 * reaches entries by full path: a tree 140 levels deep with an ignore file
 * at level 135 is walked the same with and without d_type. */
static void test_deep(void)
{
    char *t = tu_mkdtemp();
    char rel[1024] = "";
    size_t n = 0;
    for (int i = 0; i < 140; i++) {
        memcpy(rel + n, "d/", 3);
        n += 2;
        if (i == 134) {
            memcpy(rel + n, ".gitignore", 11);
            tu_write(t, rel, "*.o\n");
            rel[n] = '\0';
        }
    }
    memcpy(rel + n, "f.o", 4);
    tu_write(t, rel, "");
    memcpy(rel + n, "f.c", 4);
    tu_write(t, rel, "x");
    for (int u = 0; u < 2; u++) {
        agti_walk_opts o;
        memset(&o, 0, sizeof o);
        o.ignore_flags = AGTI_IGN_NO_GLOBAL;
        agti_walk_force_unknown_dtype = u == 1;
        collect c;
        memset(&c, 0, sizeof c);
        c.want_path = rel;
        agti_walk_result res;
        T_EQ_INT(agti_walk(t, &o, on_entry, &c, &res), AGT_OK, "deep walk %d ok", u);
        agti_walk_force_unknown_dtype = false;
        T_EQ_INT(res.entries, 2, "deep walk %d: the .gitignore and f.c (f.o ignored)", u);
        T_EQ_INT(res.nwarnings, 0, "deep walk %d: no warnings", u);
        T_CHECK(c.found && c.want_entry.type == AGTI_FS_FILE && c.want_entry.size == 1,
                "deep walk %d: f.c at level 141 with its size", u);
        agti_walk_result_clear(&res);
    }
    tu_rmtree(t);
    free(t);
}

/* A wide tree with a time budget of 1 ms stops early (or finishes: either
 * way the flags agree with the count). */
static void test_budget(void)
{
    char *big = tu_mkdtemp();
    char rel[64];
    for (int d = 0; d < 20; d++)
        for (int f = 0; f < 100; f++) {
            snprintf(rel, sizeof rel, "d%02d/f%03d", d, f);
            tu_write(big, rel, "");
        }
    agti_walk_opts o;
    memset(&o, 0, sizeof o);
    o.ignore_flags = AGTI_IGN_NO_GLOBAL;
    agti_walk_result res;
    T_EQ_INT(agti_walk(big, &o, NULL, NULL, &res), AGT_OK, "walk without a callback");
    T_EQ_INT(res.entries, 2000, "2000 files");
    agti_walk_result_clear(&res);
    o.time_budget_ms = 1;
    T_EQ_INT(agti_walk(big, &o, NULL, NULL, &res), AGT_OK, "walk with a budget");
    T_CHECK(res.timed_out ? res.entries < 2000 : res.entries == 2000,
            "timed_out=%d with %zu entries", res.timed_out, res.entries);
    agti_walk_result_clear(&res);
    tu_rmtree(big);
    free(big);
}

/* ---- parallel walks ------------------------------------------------------ */

/* Entries of a walk as lines "relpath type size mtime", per worker. */
typedef struct par_collect {
    char **lines[4];
    size_t n[4];
    bool bad_worker;
} par_collect;

static int on_par_entry(const agti_walk_entry *e, void *payload)
{
    par_collect *c = payload;
    if (e->worker >= 4) {
        c->bad_worker = true;
        return 1;
    }
    char line[4200];
    snprintf(line, sizeof line, "%s %d %llu %lld", e->relpath, e->type, (unsigned long long)e->size,
             (long long)e->mtime_ns);
    size_t k = e->worker;
    c->lines[k] = realloc(c->lines[k], (c->n[k] + 1) * sizeof *c->lines[k]);
    c->lines[k][c->n[k]++] = strdup(line);
    return 0;
}

/* The walk's order: path components compared bytewise, a folder before
 * what is in it (so '/' sorts below every other byte). */
static int cmp_walk_order(const void *a, const void *b)
{
    const unsigned char *x = *(const unsigned char *const *)a;
    const unsigned char *y = *(const unsigned char *const *)b;
    for (;; x++, y++) {
        int cx = *x == ' ' ? 0 : *x == '/' ? 1 : *x + 1; /* the path ends at ' ' */
        int cy = *y == ' ' ? 0 : *y == '/' ? 1 : *y + 1;
        if (cx != cy)
            return cx - cy;
        if (cx == 0)
            return strcmp((const char *)x, (const char *)y);
    }
}

/* All lines in walk order, joined by '\n'; frees them. */
static char *par_joined(par_collect *c, size_t *from_helpers)
{
    size_t total = 0;
    for (int k = 0; k < 4; k++)
        total += c->n[k];
    char **all = malloc((total + 1) * sizeof *all);
    size_t m = 0, len = 1;
    *from_helpers = total - c->n[0];
    for (int k = 0; k < 4; k++) {
        for (size_t i = 0; i < c->n[k]; i++) {
            all[m++] = c->lines[k][i];
            len += strlen(c->lines[k][i]) + 1;
        }
        free(c->lines[k]);
    }
    qsort(all, m, sizeof *all, cmp_walk_order);
    char *out = malloc(len);
    out[0] = '\0';
    for (size_t i = 0; i < m; i++) {
        strcat(out, all[i]);
        strcat(out, "\n");
        free(all[i]);
    }
    free(all);
    memset(c, 0, sizeof *c);
    return out;
}

static char *warnings_joined(const agti_walk_result *r)
{
    size_t len = 1;
    for (size_t i = 0; i < r->nwarnings; i++)
        len += strlen(r->warnings[i]) + 1;
    char *out = malloc(len);
    out[0] = '\0';
    for (size_t i = 0; i < r->nwarnings; i++) {
        strcat(out, r->warnings[i]);
        strcat(out, "\n");
    }
    return out;
}

/* A tree of 6 x 6 folders whose ignore files sit at three depths, so that
 * a folder handed to another thread is judged by rules read by the giver:
 * a<even>/.gitignore drops "*.o", a<odd>/.gitignore drops folder b1, and
 * every a*\/b2/.ignore brings "*.o" back. Counted by hand: an even a* keeps
 * 6 x 5 .c files + b2's .o + its 2 ignore files = 33 entries, an odd one
 * 5 x 6 files + 2 = 32; with the root's .gitignore and .env, a0/b0/id_rsa
 * and two links (a0/loop to "..", a1/lnk to a file): 3 x 33 + 3 x 32 + 5 =
 * 200 entries, 2 of them sensitive. ignored_top/ and .git/ are never
 * reported, unreadable/ (mode 0) gives a warning. */
static char *build_par_tree(void)
{
    char *t = tu_mkdtemp();
    char rel[256];
    for (int a = 0; a < 6; a++) {
        snprintf(rel, sizeof rel, "a%d/.gitignore", a);
        tu_write(t, rel, a % 2 == 0 ? "*.o\n" : "b1/\n");
        for (int b = 0; b < 6; b++) {
            for (int f = 0; f < 5; f++) {
                snprintf(rel, sizeof rel, "a%d/b%d/f%d.c", a, b, f);
                tu_write(t, rel, "x");
                struct timespec ts[2] = {{1700000000 + a * 100 + b * 10 + f, 0},
                                         {1700000000 + a * 100 + b * 10 + f, 0}};
                utimensat(AT_FDCWD, tu_path(t, rel), ts, 0);
            }
            snprintf(rel, sizeof rel, "a%d/b%d/g.o", a, b);
            tu_write(t, rel, "oo");
        }
        snprintf(rel, sizeof rel, "a%d/b2/.ignore", a);
        tu_write(t, rel, "!*.o\n");
    }
    tu_write(t, ".gitignore", "ignored_top/\n");
    tu_write(t, "ignored_top/x.c", "");
    tu_write(t, ".git/HEAD", "ref");
    tu_write(t, ".env", "A=1");
    tu_write(t, "a0/b0/id_rsa", "k");
    symlink("..", tu_path(t, "a0/loop"));
    symlink("b0/f0.c", tu_path(t, "a1/lnk"));
    tu_write(t, "unreadable/f", "");
    chmod(tu_path(t, "unreadable"), 0);
    return t;
}

/* A parallel walk reports exactly the serial walk's entries, with the same
 * types, sizes and times, the same counts and the same warnings in the
 * same order; with agti_walk_hold_main the helpers get handouts for sure. */
static void test_parallel(void)
{
    char *t = build_par_tree();
    bool root_reads_all = geteuid() == 0;
    struct {
        bool include_dirs, skip_sensitive, skip_stat, unknown_dtype;
    } modes[] = {{false, false, false, false},
                 {true, true, false, false},
                 {false, true, true, false},
                 {true, false, true, true}};
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        agti_walk_opts o;
        memset(&o, 0, sizeof o);
        o.ignore_flags = AGTI_IGN_NO_GLOBAL;
        o.include_dirs = modes[m].include_dirs;
        o.skip_sensitive = modes[m].skip_sensitive;
        o.skip_stat = modes[m].skip_stat;
        agti_walk_force_unknown_dtype = modes[m].unknown_dtype;
        par_collect c;
        memset(&c, 0, sizeof c);
        agti_walk_result sres;
        T_EQ_INT(agti_walk(t, &o, on_par_entry, &c, &sres), AGT_OK, "mode %zu: serial walk", m);
        size_t helpers;
        char *serial = par_joined(&c, &helpers);
        char *swarn = warnings_joined(&sres);
        /* + the folders (6 a*, 33 b* not ignored, unreadable/), + unreadable/f
         * when root reads it anyway */
        int want = 200 + (root_reads_all ? 1 : 0) - (modes[m].skip_sensitive ? 2 : 0) +
                   (modes[m].include_dirs ? 40 : 0);
        T_EQ_INT(sres.entries, want, "mode %zu: the entries counted by hand", m);
        T_EQ_INT(sres.sensitive_skipped, modes[m].skip_sensitive ? 2 : 0,
                 "mode %zu: sensitive files", m);
        for (unsigned threads = 2; threads <= 4; threads += 2) {
            o.threads = threads;
            o.parallel_after = 1;
            agti_walk_hold_main = true;
            agti_walk_result pres;
            memset(&c, 0, sizeof c);
            T_EQ_INT(agti_walk(t, &o, on_par_entry, &c, &pres), AGT_OK,
                     "mode %zu, %u threads: walk ok", m, threads);
            agti_walk_hold_main = false;
            T_CHECK(!c.bad_worker, "mode %zu, %u threads: worker numbers below %u", m, threads,
                    threads);
            char *par = par_joined(&c, &helpers);
            T_EQ_STR(par, serial, "mode %zu, %u threads: the serial walk's entries", m, threads);
            if (modes[m].unknown_dtype)
                T_EQ_INT(helpers, 0, "mode %zu: without d_type nothing is handed out", m);
            else
                T_CHECK(helpers > 0, "mode %zu, %u threads: helpers reported %zu entries", m,
                        threads, helpers);
            T_EQ_INT(pres.entries, sres.entries, "mode %zu, %u threads: same count", m, threads);
            T_EQ_INT(pres.sensitive_skipped, sres.sensitive_skipped,
                     "mode %zu, %u threads: same sensitive count", m, threads);
            char *pwarn = warnings_joined(&pres);
            T_EQ_STR(pwarn, swarn, "mode %zu, %u threads: same warnings", m, threads);
            free(pwarn);
            free(par);
            agti_walk_result_clear(&pres);
        }
        agti_walk_force_unknown_dtype = false;
        free(serial);
        free(swarn);
        agti_walk_result_clear(&sres);
    }
    tu_rmtree(t);
    free(t);
}

/* A callback that stops the walk on a helper thread: the walk says
 * AGT_ECANCELLED with the message raised on that thread. */
static int stop_on_helper(const agti_walk_entry *e, void *payload)
{
    (void)payload;
    return e->worker != 0;
}

static void test_parallel_cancel(void)
{
    char *t = build_par_tree();
    agti_walk_opts o;
    memset(&o, 0, sizeof o);
    o.ignore_flags = AGTI_IGN_NO_GLOBAL;
    o.threads = 2;
    o.parallel_after = 1;
    agti_walk_hold_main = true;
    agti_walk_result res;
    T_EQ_INT(agti_walk(t, &o, stop_on_helper, NULL, &res), AGT_ECANCELLED,
             "a helper's callback stops the walk");
    agti_walk_hold_main = false;
    T_CHECK(strstr(agt_error_message(), "walk cancelled by the callback at 'a") != NULL,
            "the helper's message reaches the caller: %s", agt_error_message());
    agti_walk_result_clear(&res);
    /* max_entries keeps the walk serial: the first entries in walk order */
    o.max_entries = 3;
    par_collect c;
    memset(&c, 0, sizeof c);
    T_EQ_INT(agti_walk(t, &o, on_par_entry, &c, &res), AGT_OK, "max_entries with threads");
    size_t helpers;
    char *got = par_joined(&c, &helpers);
    T_CHECK(strncmp(got, ".env ", 5) == 0 && helpers == 0 && res.entries == 3 && res.truncated,
            "max_entries: serial, truncated after 3 (%s)", got);
    free(got);
    agti_walk_result_clear(&res);
    tu_rmtree(t);
    free(t);
}

int main(void)
{
    build_tree();
    test_basic();
    test_options();
    test_unknown_dtype();
    test_ignore_files_listed();
    test_deep();
    test_budget();
    test_parallel();
    test_parallel_cancel();
    tu_rmtree(root);
    free(root);
    return t_done();
}
