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

int main(void)
{
    build_tree();
    test_basic();
    test_options();
    test_unknown_dtype();
    test_ignore_files_listed();
    test_deep();
    test_budget();
    tu_rmtree(root);
    free(root);
    return t_done();
}
