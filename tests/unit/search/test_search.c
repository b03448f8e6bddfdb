/*
 * Unit tests of the search engine (lib/search) on generated trees in temp
 * directories. Expected outputs were produced by ripgrep 13 (`rg -n --hidden
 * --sort path ...` on the same trees, checked by eye) and by `git ls-files`
 * for the pathspec cases.
 */
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "harness.h"
#include "fs/fs.h"
#include "search/search_internal.h"

static int rm_cb(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(p);
}

static void rmtree(const char *dir)
{
    nftw(dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

static char *mktree(void)
{
    const char *t = getenv("TMPDIR");
    char tmpl[4096];
    snprintf(tmpl, sizeof tmpl, "%s/agt-search-XXXXXX", t && t[0] ? t : "/tmp");
    char *d = mkdtemp(tmpl);
    return d ? strdup(d) : NULL;
}

static void put(const char *root, const char *rel, const char *data, size_t len)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    for (char *s = p + strlen(root) + 1; *s; s++) {
        if (*s == '/') {
            *s = '\0';
            mkdir(p, 0755);
            *s = '/';
        }
    }
    FILE *f = fopen(p, "wb");
    if (f == NULL) {
        perror(p);
        exit(2);
    }
    if (len)
        fwrite(data, 1, len, f);
    fclose(f);
}

static void puts_file(const char *root, const char *rel, const char *text)
{
    put(root, rel, text, strlen(text));
}

static void set_mtime(const char *root, const char *rel, long sec)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    struct timeval tv[2] = {{sec, 0}, {sec, 0}};
    utimes(p, tv);
}

/* Runs a search and renders it as rg would print it; NULL on error. */
static char *run(const char *root, const agti_search_opts *o, agti_search_result *res_out)
{
    agti_searcher *s = NULL;
    if (agti_searcher_new(&s, o) != AGT_OK) {
        t_diag("searcher_new: %s", agt_error_message());
        return NULL;
    }
    agti_search_result res;
    if (agti_search_tree(s, root, &res) != AGT_OK) {
        t_diag("search_tree: %s", agt_error_message());
        agti_searcher_free(s);
        return NULL;
    }
    agti_buf b = AGTI_BUF_INIT;
    agti_search_format(&b, s, &res, true);
    if (res_out)
        *res_out = res;
    else
        agti_search_result_clear(&res);
    agti_searcher_free(s);
    return agti_buf_detach(&b);
}

static agti_search_opts opts(const char *pattern)
{
    agti_search_opts o;
    memset(&o, 0, sizeof o);
    o.pattern = pattern;
    return o;
}

static void check(const char *root, const agti_search_opts *o, const char *want, const char *name)
{
    char *got = run(root, o, NULL);
    T_EQ_STR(got, want, "%s", name);
    free(got);
}

static void make_tree_a(const char *r)
{
    mkdir(r, 0755);
    char p[4096];
    snprintf(p, sizeof p, "%s/.git", r);
    mkdir(p, 0755);
    puts_file(r, "src/main.c", "int main(void)\n{\n    return foo(1);\n}\n");
    puts_file(r, "src/util.c", "int foo(int x)\n{\n    return x + 1; // FOO\n}\n");
    puts_file(r, "src/util.h", "int foo(int x);\n");
    puts_file(r, "lib/a.py", "def foo():\n    return 'Foo'\n");
    puts_file(r, "README.md", "# Project\nUse foo to frob.\n");
    puts_file(r, ".gitignore", "build/\n");
    puts_file(r, "build/out.c", "foo\n");
    puts_file(r, ".hidden/h.txt", "foo hidden\n");
    put(r, "bin.dat", "foo\0bar\n", 8);
    puts_file(r, "bad.txt", "caf\xe9 foo\n\xff\xfe foo2\n");
}

static void test_basic(const char *r)
{
    agti_search_opts o = opts("foo");
    agti_search_result res;
    char *got = run(r, &o, &res);
    T_EQ_STR(got,
             ".hidden/h.txt:1:foo hidden\n"
             "README.md:2:Use foo to frob.\n"
             "bad.txt:1:caf\xEF\xBF\xBD foo\n"
             "bad.txt:2:\xEF\xBF\xBD\xEF\xBF\xBD foo2\n"
             "lib/a.py:1:def foo():\n"
             "src/main.c:3:    return foo(1);\n"
             "src/util.c:1:int foo(int x)\n"
             "src/util.h:1:int foo(int x);\n",
             "literal foo (rg -n)");
    free(got);
    T_EQ_INT(res.binary_skipped, 1, "binary file skipped and counted");
    T_EQ_INT(res.files_searched, 9, "9 files searched (build/ ignored)");
    T_EQ_INT(res.total_match_lines, 8, "8 matched lines");
    T_EQ_INT(res.nfiles, 7, "7 files");
    T_CHECK(!res.timed_out && !res.truncated_matches, "no flags");
    T_EQ_INT(res.files[2].lines[1].offset, 9, "byte offset of bad.txt line 2");
    agti_search_result_clear(&res);

    o = opts("foo");
    o.case_insensitive = true;
    check(r, &o,
          ".hidden/h.txt:1:foo hidden\n"
          "README.md:2:Use foo to frob.\n"
          "bad.txt:1:caf\xEF\xBF\xBD foo\n"
          "bad.txt:2:\xEF\xBF\xBD\xEF\xBF\xBD foo2\n"
          "lib/a.py:1:def foo():\n"
          "lib/a.py:2:    return 'Foo'\n"
          "src/main.c:3:    return foo(1);\n"
          "src/util.c:1:int foo(int x)\n"
          "src/util.c:3:    return x + 1; // FOO\n"
          "src/util.h:1:int foo(int x);\n",
          "-i foo (rg -n -i)");

    o = opts("foo\\(\\w*\\)");
    check(r, &o, "lib/a.py:1:def foo():\nsrc/main.c:3:    return foo(1);\n", "regex foo\\(\\w*\\)");

    o = opts("foo(");
    o.literal = true;
    check(r, &o,
          "lib/a.py:1:def foo():\nsrc/main.c:3:    return foo(1);\nsrc/util.c:1:int foo(int x)\n"
          "src/util.h:1:int foo(int x);\n",
          "literal with regex metachars (rg -F)");

    o = opts("FOO");
    o.literal = true;
    o.case_insensitive = true;
    o.mode = AGTI_SEARCH_COUNT;
    check(r, &o,
          ".hidden/h.txt:1\nREADME.md:1\nbad.txt:2\nlib/a.py:2\nsrc/main.c:1\nsrc/util.c:2\n"
          "src/util.h:1\n",
          "count -i (rg -c -i)");

    o = opts("foo");
    o.mode = AGTI_SEARCH_FILES;
    check(r, &o,
          ".hidden/h.txt\nREADME.md\nbad.txt\nlib/a.py\nsrc/main.c\nsrc/util.c\nsrc/util.h\n",
          "files_with_matches (rg -l)");

    o.include_ignored = true;
    check(r, &o,
          ".hidden/h.txt\nREADME.md\nbad.txt\nbuild/out.c\nlib/a.py\nsrc/main.c\nsrc/util.c\n"
          "src/util.h\n",
          "include_ignored (rg -l --no-ignore)");
    o.include_ignored = false;

    const char *tc[] = {"c"};
    o.types = tc;
    o.ntypes = 1;
    check(r, &o, "src/main.c\nsrc/util.c\nsrc/util.h\n", "type c (rg -t c)");
    const char *tpy[] = {"py"};
    o.types = tpy;
    o.case_insensitive = true;
    check(r, &o, "lib/a.py\n", "type py");
    const char *tboth[] = {"py", "markdown"};
    o.types = tboth;
    o.ntypes = 2;
    check(r, &o, "README.md\nlib/a.py\n", "types py + markdown");
    o.ntypes = 0;
    o.case_insensitive = false;

    const char *g[] = {"*.c", "!main.c"};
    o.globs = g;
    o.nglobs = 2;
    check(r, &o, "src/util.c\n", "glob *.c !main.c (rg -g)");
    o.nglobs = 0;

    o = opts("\\{\\n\\s+return");
    o.multiline = true;
    check(r, &o,
          "src/main.c:2:{\nsrc/main.c:3:    return foo(1);\nsrc/util.c:2:{\n"
          "src/util.c:3:    return x + 1; // FOO\n",
          "multiline (rg -U)");

    o = opts("^\\s+return");
    check(r, &o,
          "lib/a.py:2:    return 'Foo'\nsrc/main.c:3:    return foo(1);\n"
          "src/util.c:3:    return x + 1; // FOO\n",
          "^ is a line anchor");

    o = opts("x\\)\\s\\{");
    check(r, &o, "", "\\s does not cross a line end outside multiline");
    o.multiline = true;
    o.mode = AGTI_SEARCH_COUNT;
    check(r, &o, "src/util.c:1\n", "but does in multiline (count = matches)");

    o = opts("bar");
    o.binary_report = true;
    check(r, &o, "bin.dat: binary file matches\n", "binary_report");
}

/* rg -n -C1 foo ctx1.txt ctx2.txt */
static void test_context(void)
{
    char *r = mktree();
    puts_file(r, "ctx1.txt", "a\nfoo\nb\nc\nd\ne\nfoo\nf\ng\nh\ni\nj\nfoo\n");
    puts_file(r, "ctx2.txt", "x\nfoo\ny\n");
    agti_search_opts o = opts("foo");
    o.before = o.after = 1;
    check(r, &o,
          "ctx1.txt-1-a\nctx1.txt:2:foo\nctx1.txt-3-b\n--\n"
          "ctx1.txt-6-e\nctx1.txt:7:foo\nctx1.txt-8-f\n--\n"
          "ctx1.txt-12-j\nctx1.txt:13:foo\n--\n"
          "ctx2.txt-1-x\nctx2.txt:2:foo\nctx2.txt-3-y\n",
          "-C1 groups and separators (rg -n -C1)");
    /* rg -n -A2 -B1 'foo|c' ctx1.txt: overlapping groups merge */
    o = opts("foo|c");
    o.before = 1;
    o.after = 2;
    const char *g[] = {"ctx1.txt"};
    o.globs = g;
    o.nglobs = 1;
    check(r, &o,
          "ctx1.txt-1-a\nctx1.txt:2:foo\nctx1.txt-3-b\nctx1.txt:4:c\nctx1.txt-5-d\n"
          "ctx1.txt-6-e\nctx1.txt:7:foo\nctx1.txt-8-f\nctx1.txt-9-g\n--\n"
          "ctx1.txt-12-j\nctx1.txt:13:foo\n",
          "-B1 -A2 merged groups (rg -n -B1 -A2)");
    /* Context at file start/end, no trailing newline: rg -n -C2 x */
    puts_file(r, "ctx3.txt", "x\ny\nz");
    g[0] = "ctx3.txt";
    o = opts("z");
    o.globs = g;
    o.nglobs = 1;
    o.before = 2;
    o.after = 2;
    check(r, &o, "ctx3.txt-1-x\nctx3.txt-2-y\nctx3.txt:3:z\n", "context clipped at the start");
    o = opts("^");
    o.globs = g;
    o.nglobs = 1;
    o.mode = AGTI_SEARCH_COUNT;
    check(r, &o, "ctx3.txt:3\n", "empty match counts every line, none after the last");
    puts_file(r, "ctx3.txt", "x\ny\n\n");
    o = opts("^$");
    o.globs = g;
    o.nglobs = 1;
    check(r, &o, "ctx3.txt:3:\n", "^$ finds the blank line but not the end of the file");
    puts_file(r, "ctx3.txt", "a\r\nfoo\r\n");
    o = opts("foo");
    o.globs = g;
    o.nglobs = 1;
    check(r, &o, "ctx3.txt:2:foo\n", "CRLF: the \\r is not part of the text");
    rmtree(r);
    free(r);
}

static void test_caps(void)
{
    char *r = mktree();
    agti_buf b = AGTI_BUF_INIT;
    for (int i = 1; i <= 150; i++)
        agti_buf_printf(&b, "line %d hit\n", i);
    puts_file(r, "a.txt", b.ptr);
    puts_file(r, "b.txt", "hit\nhit\nhit\n");
    puts_file(r, "c.txt", "hit\n");
    agti_buf_free(&b);

    agti_search_opts o = opts("hit");
    o.max_matches_per_file = 100;
    agti_search_result res;
    free(run(r, &o, &res));
    T_EQ_INT(res.nfiles, 3, "per-file cap: 3 files");
    T_EQ_INT(res.files[0].nmatch_lines, 100, "a.txt cut at 100 lines");
    T_CHECK(res.files[0].truncated, "a.txt truncated");
    T_EQ_INT(res.files[0].lines[99].line_no, 100, "last kept line is 100");
    T_CHECK(!res.files[1].truncated, "b.txt not truncated");
    T_CHECK(res.truncated_matches, "call says matches were cut");
    agti_search_result_clear(&res);

    o.max_matches_per_file = 3;
    free(run(r, &o, &res));
    T_CHECK(!res.files[1].truncated, "exactly at the cap is not truncated");
    agti_search_result_clear(&res);

    o = opts("hit");
    o.max_matches = 152;
    free(run(r, &o, &res));
    T_EQ_INT(res.nfiles, 2, "max_matches: 2 files");
    T_EQ_INT(res.total_match_lines, 152, "152 lines kept");
    T_EQ_INT(res.files[1].nlines, 2, "b.txt keeps 2 lines");
    T_CHECK(res.truncated_matches && res.files[1].truncated, "truncation flagged");
    agti_search_result_clear(&res);

    o = opts("hit");
    o.max_matches = 153;
    free(run(r, &o, &res));
    T_EQ_INT(res.nfiles, 2, "max_matches exactly reached: 2 files");
    T_CHECK(res.truncated_matches, "c.txt left out is flagged");
    agti_search_result_clear(&res);

    o = opts("hit");
    o.mode = AGTI_SEARCH_FILES;
    o.max_files = 2;
    free(run(r, &o, &res));
    T_EQ_INT(res.nfiles, 2, "max_files 2");
    T_CHECK(res.truncated_files, "files cap flagged");
    agti_search_result_clear(&res);
    o.max_files = 3;
    free(run(r, &o, &res));
    T_CHECK(!res.truncated_files, "files cap not reached");
    agti_search_result_clear(&res);

    o = opts("hit");
    o.max_output_bytes = 300;
    free(run(r, &o, &res));
    T_EQ_INT(res.nfiles, 1, "output cap: only a.txt");
    T_CHECK(res.truncated_output && res.files[0].truncated, "output cap flagged");
    T_CHECK(res.files[0].nlines > 0 && res.files[0].nlines < 150, "some lines kept (%zu)",
            res.files[0].nlines);
    agti_search_result_clear(&res);

    /* Line numbers across long gaps (vectorised newline count): lines of
     * varied length, matches at lines 1, 4321 and 70000 (> 255 * 16 bytes). */
    b = (agti_buf)AGTI_BUF_INIT;
    for (int i = 1; i <= 70000; i++) {
        if (i == 1 || i == 4321 || i == 70000)
            agti_buf_puts(&b, "zzneedle\n");
        else
            agti_buf_printf(&b, "%.*s\n", i % 37, "abcdefghijklmnopqrstuvwxyz0123456789-");
    }
    puts_file(r, "gaps.txt", b.ptr);
    agti_buf_free(&b);
    const char *gg[] = {"gaps.txt"};
    o = opts("zzneedle");
    o.globs = gg;
    o.nglobs = 1;
    char *gl = run(r, &o, NULL);
    T_EQ_STR(gl, "gaps.txt:1:zzneedle\ngaps.txt:4321:zzneedle\ngaps.txt:70000:zzneedle\n",
             "line numbers across long gaps");
    free(gl);

    /* Huge line: cut to 2000 characters (2-byte characters count once). */
    b = (agti_buf)AGTI_BUF_INIT;
    agti_buf_puts(&b, "needle ");
    for (int i = 0; i < 3000; i++)
        agti_buf_puts(&b, "\xC3\xA9");
    agti_buf_putc(&b, '\n');
    puts_file(r, "long.txt", b.ptr);
    agti_buf_free(&b);
    const char *g[] = {"long.txt"};
    o = opts("needle");
    o.globs = g;
    o.nglobs = 1;
    free(run(r, &o, &res));
    T_EQ_INT(res.nfiles, 1, "long line found");
    T_CHECK(res.files[0].lines[0].cut, "long line cut");
    T_EQ_INT(res.files[0].lines[0].len, 7 + 1993 * 2, "2000 characters kept");
    agti_search_result_clear(&res);
    o.max_line_chars = 10;
    char *got = run(r, &o, NULL);
    T_EQ_STR(got, "long.txt:1:needle \xC3\xA9\xC3\xA9\xC3\xA9 [... line cut]\n", "cut marker");
    free(got);
    rmtree(r);
    free(r);
}

static void test_budget_and_limits(void)
{
    char *r = mktree();
    char name[64];
    for (int i = 0; i < 4000; i++) {
        snprintf(name, sizeof name, "d%02d/f%04d.txt", i % 40, i);
        puts_file(r, name, "some text\nmore text here\nneedle\n");
    }
    agti_search_opts o = opts("needle");
    o.time_budget_ms = 1;
    agti_search_result res;
    free(run(r, &o, &res));
    T_CHECK(res.timed_out, "tiny budget on 4000 files: stopped early");
    T_CHECK(res.nfiles < 4000, "not every file reported (%zu)", res.nfiles);
    agti_search_result_clear(&res);
    o.time_budget_ms = 0;
    free(run(r, &o, &res));
    T_CHECK(!res.timed_out && res.nfiles == 4000, "no budget: all 4000 files");
    T_EQ_STR(res.files[0].path, "d00/f0000.txt", "first in path order");
    T_EQ_STR(res.files[3999].path, "d39/f3999.txt", "last in path order");
    agti_search_result_clear(&res);
    rmtree(r);
    free(r);

    /* Pathological regex: the file becomes an error, the search goes on. */
    r = mktree();
    agti_buf b = AGTI_BUF_INIT;
    for (int i = 0; i < 5000; i++)
        agti_buf_putc(&b, 'a');
    agti_buf_puts(&b, "!\n");
    puts_file(r, "evil.txt", b.ptr);
    agti_buf_free(&b);
    puts_file(r, "fine.txt", "aaa\n");
    o = opts("(a+)+$");
    free(run(r, &o, &res));
    T_EQ_INT(res.nerrors, 1, "catastrophic backtracking reported as an error");
    if (res.nerrors == 1) {
        T_EQ_STR(res.errors[0].path, "evil.txt", "error names the file");
        T_EQ_INT(res.errors[0].code, AGT_ELIMIT, "AGT_ELIMIT");
        t_diag("%s", res.errors[0].message);
    }
    T_EQ_INT(res.nfiles, 1, "other file still searched");
    agti_search_result_clear(&res);
    rmtree(r);
    free(r);
}

static void test_pathspec(void)
{
    /* Expectations from `git ls-files -- <spec>` in a repo holding these. */
    static const char *const files[] = {"Src/Q.c", "docs/readme.md", "src/a/y.c", "src/a/z.h",
                                        "src/x.c", "srcx.c",         "top.c",     "vendor/lib/v.c"};
    static const struct {
        const char *specs[2];
        const char *want; /* space-separated */
    } cases[] = {
        {{"*.c"}, "Src/Q.c src/a/y.c src/x.c srcx.c top.c vendor/lib/v.c"},
        {{"src"}, "src/a/y.c src/a/z.h src/x.c"},
        {{"src/"}, "src/a/y.c src/a/z.h src/x.c"},
        {{"sr?"}, ""},
        {{"s*"}, "src/a/y.c src/a/z.h src/x.c srcx.c"},
        {{"src/*.c"}, "src/a/y.c src/x.c"},
        {{":(glob)src/*.c"}, "src/x.c"},
        {{":(glob)**/*.c"}, "Src/Q.c src/a/y.c src/x.c srcx.c top.c vendor/lib/v.c"},
        {{":!vendor"}, "Src/Q.c docs/readme.md src/a/y.c src/a/z.h src/x.c srcx.c top.c"},
        {{":^*.c"}, "docs/readme.md src/a/z.h"},
        {{":(exclude)src/"}, "Src/Q.c docs/readme.md srcx.c top.c vendor/lib/v.c"},
        {{":(icase)src"}, "Src/Q.c src/a/y.c src/a/z.h src/x.c"},
        {{"src/a"}, "src/a/y.c src/a/z.h"},
        {{"*.[ch]"}, "Src/Q.c src/a/y.c src/a/z.h src/x.c srcx.c top.c vendor/lib/v.c"},
        {{":(literal)*.c"}, ""},
        {{"a/y.c"}, ""},
        {{"*/y.c"}, "src/a/y.c"},
        {{"*.c", ":!vendor/"}, "Src/Q.c src/a/y.c src/x.c srcx.c top.c"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n = cases[i].specs[1] ? 2 : 1;
        agti_pathspec *ps = NULL;
        int rc = agti_pathspec_compile(&ps, cases[i].specs, n);
        T_EQ_INT(rc, AGT_OK, "pathspec compile %s", cases[i].specs[0]);
        agti_buf b = AGTI_BUF_INIT;
        for (size_t k = 0; k < sizeof files / sizeof files[0]; k++)
            if (agti_pathspec_match(ps, files[k])) {
                if (b.len)
                    agti_buf_putc(&b, ' ');
                agti_buf_puts(&b, files[k]);
            }
        T_EQ_STR(agti_buf_cstr(&b), cases[i].want, "pathspec %s%s%s", cases[i].specs[0],
                 n > 1 ? " " : "", n > 1 ? cases[i].specs[1] : "");
        agti_buf_free(&b);
        agti_pathspec_free(ps);
    }
    agti_pathspec *ps = NULL;
    const char *bad[] = {":(attr:x)foo"};
    T_EQ_INT(agti_pathspec_compile(&ps, bad, 1), AGT_EINVAL, "unknown magic refused");
    const char *empty[] = {""};
    T_EQ_INT(agti_pathspec_compile(&ps, empty, 1), AGT_EINVAL, "empty pathspec refused");

    /* Through the tree search (code_search: literal, case-insensitive). */
    char *r = mktree();
    for (size_t k = 0; k < sizeof files / sizeof files[0]; k++)
        puts_file(r, files[k], "Hello World\n");
    agti_search_opts o = opts("hello");
    o.literal = true;
    o.case_insensitive = true;
    o.mode = AGTI_SEARCH_FILES;
    const char *specs[] = {"*.c", ":(exclude)vendor/", ":!Src"};
    o.pathspecs = specs;
    o.npathspecs = 3;
    check(r, &o, "src/a/y.c\nsrc/x.c\nsrcx.c\ntop.c\n", "pathspecs in a tree search");
    rmtree(r);
    free(r);
}

static void test_order_and_buffer(void)
{
    char *r = mktree();
    puts_file(r, "a.txt", "x\n");
    puts_file(r, "b.txt", "x\n");
    puts_file(r, "c.txt", "x\n");
    set_mtime(r, "a.txt", 1000);
    set_mtime(r, "b.txt", 3000);
    set_mtime(r, "c.txt", 2000);
    agti_search_opts o = opts("x");
    o.mode = AGTI_SEARCH_FILES;
    agti_search_result res;
    free(run(r, &o, &res));
    agti_search_sort_by_mtime(&res);
    T_CHECK(res.nfiles == 3 && strcmp(res.files[0].path, "b.txt") == 0 &&
                strcmp(res.files[1].path, "c.txt") == 0 && strcmp(res.files[2].path, "a.txt") == 0,
            "newest first by mtime");
    T_EQ_INT(res.files[0].mtime_ns, 3000000000000LL, "mtime collected");
    agti_search_result_clear(&res);

    /* The walk takes types from d_type and the times from the fstat before
     * each read; a file system without d_type (every entry lstat'ed) gives
     * the same files and times. */
    agti_walk_force_unknown_dtype = true;
    free(run(r, &o, &res));
    agti_walk_force_unknown_dtype = false;
    agti_search_sort_by_mtime(&res);
    T_CHECK(res.nfiles == 3 && strcmp(res.files[0].path, "b.txt") == 0 &&
                strcmp(res.files[1].path, "c.txt") == 0 && strcmp(res.files[2].path, "a.txt") == 0,
            "without d_type: newest first by mtime");
    T_EQ_INT(res.nfiles == 3 ? res.files[2].mtime_ns : -1, 1000000000000LL,
             "without d_type: mtime collected");
    agti_search_result_clear(&res);

    /* The size cap is applied from the fstat before the read (the walk does
     * not stat): 7 bytes pass a cap of 10, 27 do not and are counted. */
    char *r2 = mktree();
    puts_file(r2, "small.txt", "needle\n");
    puts_file(r2, "sub/big.txt", "needle\n01234567890123456789");
    agti_search_opts oc = opts("needle");
    oc.max_file_size = 10;
    char *got = run(r2, &oc, &res);
    T_EQ_STR(got, "small.txt:1:needle\n", "file over max_file_size skipped");
    T_EQ_INT(res.too_large_skipped, 1, "too_large_skipped counts it");
    T_EQ_INT(res.files_searched, 1, "only the small file searched");
    free(got);
    agti_search_result_clear(&res);
    rmtree(r2);
    free(r2);

    /* Single-file root. */
    char p[4096];
    snprintf(p, sizeof p, "%s/c.txt", r);
    o.mode = AGTI_SEARCH_CONTENT;
    check(p, &o, "c.txt:1:x\n", "a file as the root");
    rmtree(r);
    free(r);

    agti_searcher *s = NULL;
    o = opts("wor.d");
    o.case_insensitive = true;
    T_EQ_INT(agti_searcher_new(&s, &o), AGT_OK, "searcher for buffers");
    agti_search_file f;
    bool matched, binary;
    const char text[] = "hello\nWORLD\nbye";
    T_EQ_INT(
        agti_searcher_search_buffer(s, "mem.txt", text, sizeof text - 1, &f, &matched, &binary),
        AGT_OK, "search_buffer");
    T_CHECK(matched && !binary && f.nlines == 1 && f.lines[0].line_no == 2 &&
                strcmp(f.lines[0].text, "WORLD") == 0 && f.lines[0].offset == 6,
            "buffer match on line 2 at offset 6");
    agti_search_file_clear(&f);
    T_EQ_INT(agti_searcher_search_buffer(s, "bin", "WORLD\0", 6, &f, &matched, &binary), AGT_OK,
             "binary buffer");
    T_CHECK(!matched && binary, "binary buffer skipped");
    agti_search_file_clear(&f);
    T_CHECK(agti_searcher_selects(s, "any/path", 8), "no filters select everything");
    agti_searcher_free(s);
}

static void test_binary_probe(void)
{
    char *r = mktree();
    /* Only the first 8 KiB are probed (git looks at the first 8000 bytes;
     * ripgrep at its first buffer): a later NUL leaves the file text. */
    char *big = malloc(9001);
    memset(big, 'x', 9000);
    memcpy(big, "needle\n", 7);
    big[8999] = '\0';
    big[9000] = '\n';
    put(r, "late-nul.txt", big, 9001);
    big[100] = '\0';
    put(r, "early-nul.txt", big, 9001);
    free(big);
    agti_search_opts o = opts("needle");
    agti_search_result res;
    char *got = run(r, &o, &res);
    T_EQ_STR(got, "late-nul.txt:1:needle\n", "NUL after 8 KiB: text");
    T_EQ_INT(res.binary_skipped, 1, "NUL in the first 8 KiB: binary");
    free(got);
    agti_search_result_clear(&res);
    o.mode = AGTI_SEARCH_FILES;
    o.binary_report = true;
    check(r, &o, "early-nul.txt\nlate-nul.txt\n", "binary_report lists the binary file too");

    /* multiline content with a per-file cap counts lines */
    puts_file(r, "m.txt", "a1\nb1\na2\nb2\na3\nb3\n");
    const char *g[] = {"m.txt"};
    o = opts("a\\d\\nb");
    o.multiline = true;
    o.globs = g;
    o.nglobs = 1;
    o.max_matches_per_file = 3;
    free(run(r, &o, &res));
    T_EQ_INT(res.nfiles, 1, "multiline cap: file found");
    T_EQ_INT(res.files[0].nmatch_lines, 3, "3 matched lines kept");
    T_CHECK(res.files[0].truncated, "multiline cap flagged");
    agti_search_result_clear(&res);
    rmtree(r);
    free(r);
}

static void test_errors(void)
{
    agti_searcher *s0 = NULL;
    agti_search_opts og = opts("x");
    const char *badg[] = {"src/{a,b"};
    og.globs = badg;
    og.nglobs = 1;
    T_EQ_INT(agti_searcher_new(&s0, &og), AGT_EPARSE, "unbalanced brace in a glob");
    T_CHECK(strstr(agt_error_message(), "src/{a,b") != NULL, "message names the glob: %s",
            agt_error_message());
    agti_searcher *s = NULL;
    agti_search_opts o = opts("");
    T_EQ_INT(agti_searcher_new(&s, &o), AGT_EINVAL, "empty pattern");
    o = opts("a(b");
    T_EQ_INT(agti_searcher_new(&s, &o), AGT_EPARSE, "bad regex");
    T_CHECK(strstr(agt_error_message(), "offset 3") != NULL, "message gives the offset: %s",
            agt_error_message());
    o = opts("a\nb");
    T_EQ_INT(agti_searcher_new(&s, &o), AGT_EINVAL, "line break outside multiline");
    o.multiline = true;
    T_EQ_INT(agti_searcher_new(&s, &o), AGT_OK, "line break in multiline");
    agti_searcher_free(s);
    o = opts("x");
    const char *t[] = {"nosuchtype"};
    o.types = t;
    o.ntypes = 1;
    T_EQ_INT(agti_searcher_new(&s, &o), AGT_EINVAL, "unknown type");
    T_CHECK(strstr(agt_error_message(), "nosuchtype") != NULL, "message names the type");
    o = opts("x");
    o.mode = 7;
    T_EQ_INT(agti_searcher_new(&s, &o), AGT_EINVAL, "bad mode");
    o = opts("x");
    agti_search_result res;
    T_EQ_INT(agti_searcher_new(&s, &o), AGT_OK, "searcher");
    T_EQ_INT(agti_search_tree(s, "/nonexistent/agt/dir", &res), AGT_ENOTFOUND, "missing root");
    agti_searcher_free(s);
    agti_searcher_free(NULL);
    T_EQ_STR(agti_search_type_globs("c"), "{*.[chH],*.[chH].in,*.cats}", "type c globs");
    T_EQ_STR(agti_search_type_globs("rb"), agti_search_type_globs("ruby"), "rb alias");
    T_CHECK(agti_search_type_globs("zzz") == NULL, "unknown type NULL");
}

static const char *naive(const char *h, size_t len, const char *n, size_t nl, bool icase)
{
    for (size_t i = 0; i + nl <= len; i++) {
        size_t j = 0;
        while (j < nl &&
               (icase ? ((h[i + j] | 0x20) == (n[j] | 0x20) &&
                         (((n[j] | 0x20) >= 'a' && (n[j] | 0x20) <= 'z') || h[i + j] == n[j]))
                      : h[i + j] == n[j]))
            j++;
        if (j == nl)
            return h + i;
    }
    return NULL;
}

/* The literal finder against a naive scan on random text over a small
 * alphabet (so candidates are frequent), every needle length 1..40 and every
 * alignment near the end of buffers up to 760 bytes (past the AVX2 loop's 64
 * and 32 byte rounds), with each of its loops: scalar, SSE2, AVX2 (those the
 * CPU has). */
static void test_literal(void)
{
    static const char alpha[] = "abAB@`[{ \n_xyzXYZ";
    unsigned seed = 12345;
    char hay[760], needle[41];
    size_t bad = 0, runs = 0;
    agti_lit probe;
    agti_lit_init(&probe, "ab", 2, false);
    int widest = probe.simd;
    agti_lit_fini(&probe);
    for (int round = 0; round < 400; round++) {
        size_t len = (size_t)(round * 37 % 760);
        for (size_t i = 0; i < len; i++) {
            seed = seed * 1103515245u + 12345u;
            hay[i] = alpha[(seed >> 16) % (sizeof alpha - 1)];
        }
        for (size_t nl = 1; nl <= 40; nl++) {
            seed = seed * 1103515245u + 12345u;
            if (len >= nl && (seed >> 16) % 2 == 0) {
                size_t at = (seed >> 8) % (len - nl + 1);
                memcpy(needle, hay + at, nl);
                for (size_t k = 0; k < nl; k++)
                    if ((seed >> (k % 16)) & 1)
                        needle[k] ^=
                            (char)(((needle[k] | 0x20) >= 'a' && (needle[k] | 0x20) <= 'z') ? 0x20
                                                                                            : 0);
            } else {
                for (size_t k = 0; k < nl; k++) {
                    seed = seed * 1103515245u + 12345u;
                    needle[k] = alpha[(seed >> 16) % 6];
                }
            }
            for (int icase = 0; icase < 2; icase++) {
                agti_lit l;
                agti_lit_init(&l, needle, nl, icase != 0);
                const char *want = naive(hay, len, needle, nl, icase != 0);
                for (int simd = AGTI_LIT_SCALAR; simd <= widest; simd++) {
                    l.simd = simd;
                    runs++;
                    if (agti_lit_find(&l, hay, len) != want)
                        bad++;
                }
                agti_lit_fini(&l);
            }
        }
    }
    T_EQ_INT(bad, 0, "literal finder agrees with a naive scan on %zu cases", runs);
    agti_lit l;
    agti_lit_init(&l, "Hello", 5, true);
    T_CHECK(agti_lit_find(&l, "say hELLO", 9) != NULL, "ASCII case folding");
    T_CHECK(agti_lit_find(&l, "say h\x45LL@", 11) == NULL, "'@' is not 'O' folded");
    agti_lit_fini(&l);
}

/* ---- required literals (required.c) and the line prefilter ----------- */

/* The extractor's set for a pattern as "a|b|c" ("" for none). */
static char *req_str(const char *pat, bool icase)
{
    agti_req rq;
    agti_regex_required(pat, strlen(pat), icase, &rq);
    agti_buf b = AGTI_BUF_INIT;
    for (size_t i = 0; i < rq.n; i++) {
        if (i)
            agti_buf_putc(&b, '|');
        agti_buf_put(&b, rq.s[i], rq.len[i]);
    }
    return agti_buf_detach(&b);
}

/* Sets worked out by hand from the rules in required.c. */
static void test_required_sets(void)
{
    static const struct {
        const char *pat;
        bool icase;
        const char *want;
    } cases[] = {
        {"def \\w+\\(self", false, "(self"},
        {"foo|barbaz", false, "foo|barbaz"},
        {"abc+d", false, "abc"},    /* "abc" and "cd" both required */
        {"x{2,3}yz", false, "xyz"}, /* "x" then "xyz" */
        {"(?:hello|world)_x", false, "hello|world"},
        {"colou?r", false, "colo"},
        {"a(bc)?def", false, "def"},
        {"a(bcde)*f", false, "a"},
        {"(abcd)+e", false, "abcd"},
        {"\\bfoo\\b", false, "foo"},
        {"[abc]+hello", false, "hello"},
        {"[]x]yz", false, "yz"},
        {"[^]x]yz", false, "yz"},
        {"[[:alpha:]]+_test", false, "_test"},
        /* "[=" or "[:" is a POSIX item only when its terminator and ']'
         * come before any ']' (PCRE2's check_posix_syntax): here the
         * classes are "[[=]" and "[[:]" */
        {"[[=]|ab=]]cd", false, ""},
        {"[[:]x:]]y", false, "x:]]y"},
        {"[[.a[.b.]]q", false, "q"},
        {"[\\]]abc", false, "abc"},
        {"\\.\\*lit", false, ".*lit"},
        {"\\tab", false, "\tab"},
        {"a.b", false, "a"},
        {"^import (os|sys)$", false, "import "},
        {"caf\xC3\xA9+s", false, "caf\xC3\xA9"}, /* é+ repeats the whole character */
        {"\\d+ms", false, "ms"},
        {"((ab|cd)ef|gh)", false, "ef|gh"}, /* {ab,cd} and "ef" tie: the smaller */
        {"Hello World", true, "Hello World"},
        {"kiss", true, "i"},            /* K and S fold to U+212A, U+017F */
        {"mask_value", true, "_value"}, /* "ma" and "_value" */
        {"caf\xC3\xA9", true, "caf"},
        /* none: a branch without literals, or syntax not known here */
        {"foo|.*", false, ""},
        {"(?i)abcdef", false, ""},
        {"(?=abc)abcdef", false, ""},
        {"(*UCP)abcdef", false, ""},
        {"\\x41bcdef", false, ""},
        {"\\Qa.b\\Eabcdef", false, ""},
        {"(abc)\\1defg", false, ""},
        {"\\p{L}abcdef", false, ""},
        {"abcdef\\z", false, ""},
        {"\\Aabcdef", false, ""},
        {"ab{c", false, ""},
        {"a{,3}bcdef", false, ""},
        {"abc\\Kdef", false, ""},
        {"x*", false, ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = req_str(cases[i].pat, cases[i].icase);
        T_EQ_STR(got, cases[i].want, "required literals of '%s'%s", cases[i].pat,
                 cases[i].icase ? " (-i)" : "");
        free(got);
    }
}

/* Renders a buffer search as "N:text" lines ("!" and the code on error). */
static char *search_buf(const char *pat, bool icase, bool prefilter, const char *d, size_t len,
                        int mode, bool *used)
{
    agti_search_opts o = opts(pat);
    o.case_insensitive = icase;
    o.literal = pat[0] == '=';
    if (o.literal)
        o.pattern = pat + 1;
    o.no_line_prefilter = !prefilter;
    o.mode = mode;
    agti_searcher *s = NULL;
    if (agti_searcher_new(&s, &o) != AGT_OK)
        return agti_aprintf("!new %s", agt_error_message());
    *used = s->nreqlit > 0;
    agti_search_file f;
    bool matched, binary;
    int rc = agti_searcher_search_buffer(s, "x", d, len, &f, &matched, &binary);
    agti_buf b = AGTI_BUF_INIT;
    if (rc != AGT_OK)
        agti_buf_printf(&b, "!%d", rc);
    else {
        agti_buf_printf(&b, "n=%zu\n", f.nmatch_lines);
        for (size_t i = 0; i < f.nlines; i++)
            agti_buf_printf(&b, "%llu:%s\n", (unsigned long long)f.lines[i].line_no,
                            f.lines[i].text);
        agti_search_file_clear(&f);
    }
    agti_searcher_free(s);
    return agti_buf_detach(&b);
}

/* With and without the prefilter, the same lines on text full of near
 * misses: case variants and the non-ASCII letters PCRE2 folds to ASCII ones,
 * CRLF, invalid UTF-8, matches at the buffer's start and end, no final line
 * break. Each pattern here is one the extractor accepts (checked), so both
 * paths really run. */
static void test_prefilter_same(void)
{
    static const char text[] = "def run(self):\n"
                               "    def  go(self, x): # def y(self\n"
                               "DEF RUN(SELF)\n"
                               "\xE2\x84\xAAiss \xC5\xBFome \xC4\xB1mport \xC4\xB0MPORT\n"
                               "kiss some import\r\n"
                               "import os\n"
                               "import osx\n"
                               "import sys\r\n"
                               "color colour colouur COLOUR Colo\n"
                               "\xFF\xFE color\xFF\n"
                               "foo_bar baz\n"
                               "foobar_baz foo_ baz\n"
                               "\n"
                               "\t\tabcabcd abcd\n"
                               "x(self) y(self) z(self\n"
                               "mask_value MASK_VALUE \xE2\x84\xAA\n"
                               "caf\xC3\xA9s caf\xC3\xA9\xC3\xA9s CAF\xC3\x89S\n"
                               "end def last(self)";
    static const struct {
        const char *pat;
        bool icase;
    } pats[] = {
        {"def \\w+\\(self", false},
        {"def \\w+\\(self", true},
        {"def\\s+\\w+\\(self", false},
        {"import (os|sys)$", false},
        {"import (os|sys)$", true},
        {"^import \\w+\\b", false},
        {"colou?r", false},
        {"colou?r", true},
        {"colou+r|COLO", false},
        {"\\bfoo_\\w* baz", false},
        {"foo_|_baz", false},
        {"(abc)+d", false},
        {"abc\\b", false},
        {"(?:x|y)\\(self\\)", false},
        {"[xyz]\\(self$", false},
        {"mask_value\\b", true},
        {"mask_val\\w+", true},
        {"caf\xC3\xA9+s", false},
        {"caf\xC3\xA9s", true},
        {"self\\)$", false},
        {"last\\(self\\)$", false},
        {"^end\\b", false},
        {"^def run", false},
        {"ss some im\\w", true},
        {"=iss some", true}, /* '=': a fixed string (code_search), caseless */
        {"=import os", true},
    };
    for (size_t i = 0; i < sizeof pats / sizeof pats[0]; i++) {
        for (int mode = AGTI_SEARCH_CONTENT; mode <= AGTI_SEARCH_COUNT; mode++) {
            bool used = false, unused = true;
            char *a =
                search_buf(pats[i].pat, pats[i].icase, false, text, sizeof text - 1, mode, &unused);
            char *b =
                search_buf(pats[i].pat, pats[i].icase, true, text, sizeof text - 1, mode, &used);
            T_CHECK(used && !unused, "'%s'%s uses the prefilter only when asked", pats[i].pat,
                    pats[i].icase ? " -i" : "");
            T_EQ_STR(b, a, "'%s'%s mode %d: the same with the prefilter", pats[i].pat,
                     pats[i].icase ? " -i" : "", mode);
            free(a);
            free(b);
        }
    }
    /* by hand: U+212A and U+017F fold to k and s, U+0131 (dotless i) to nothing */
    bool used = false;
    char *got =
        search_buf("=iss some", true, true, text, sizeof text - 1, AGTI_SEARCH_CONTENT, &used);
    T_EQ_STR(got,
             "n=2\n4:\xE2\x84\xAAiss \xC5\xBFome \xC4\xB1mport \xC4\xB0MPORT\n"
             "5:kiss some import\n",
             "fixed string -i 'iss some' matches the long s");
    free(got);
}

/* A small tree searched by rg 13 (`rg -n --sort path PATTERN`; ours drops
 * the CR of a CRLF line and shows invalid UTF-8 as U+FFFD, as rg's
 * terminal output did). */
static void test_prefilter_rg(void)
{
    char *r = mktree();
    puts_file(r, "a.py",
              "class A:\n    def run(self, x):\n        return self.go(x)\n    def  go(self):\n"
              "    def go (self):\ndef top(self):\n    x = \"def y(self\"\n\tdef\tz(self)\n");
    puts_file(r, "b.txt",
              "KISS me\n\xE2\x84\xAAiss (Kelvin)\n\xC5\xBFome \xC5\xBFtuff?\n"
              "Colour and color and colouur\nimport os\nimport sys\nimport osx\n"
              "foo_bar baz\r\nCOLOR\xFF\n");
    static const struct {
        const char *pat;
        bool icase;
        const char *want;
    } cases[] = {
        {"def \\w+\\(self", false,
         "a.py:2:    def run(self, x):\na.py:6:def top(self):\na.py:7:    x = \"def y(self\"\n"},
        {"colou?r", true, "b.txt:4:Colour and color and colouur\nb.txt:9:COLOR\xEF\xBF\xBD\n"},
        {"import (os|sys)$", false, "b.txt:5:import os\nb.txt:6:import sys\n"},
        {"\\bfoo_\\w+ baz|\\.go\\(", false,
         "a.py:3:        return self.go(x)\nb.txt:8:foo_bar baz\n"},
        {"baz$", false, ""},
        {"kiss", true, "b.txt:1:KISS me\nb.txt:2:\xE2\x84\xAAiss (Kelvin)\n"},
        {"some", true, "b.txt:3:\xC5\xBFome \xC5\xBFtuff?\n"},
        {"s(ome|tuff)", true, "b.txt:3:\xC5\xBFome \xC5\xBFtuff?\n"},
        {"colou+r|COLOR", false,
         "b.txt:4:Colour and color and colouur\nb.txt:9:COLOR\xEF\xBF\xBD\n"},
        {"def (\\w+|y)\\(self", false,
         "a.py:2:    def run(self, x):\na.py:6:def top(self):\na.py:7:    x = \"def y(self\"\n"},
        {"[(]self", false,
         "a.py:2:    def run(self, x):\na.py:4:    def  go(self):\na.py:5:    def go (self):\n"
         "a.py:6:def top(self):\na.py:7:    x = \"def y(self\"\na.py:8:\tdef\tz(self)\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        agti_search_opts o = opts(cases[i].pat);
        o.case_insensitive = cases[i].icase;
        check(r, &o, cases[i].want, cases[i].pat);
    }
    rmtree(r);
    free(r);
}

/* A file big enough to be mapped and searched window by window (pages
 * dropped behind): the same lines as rg's rules give, with matches next to
 * window ends (128 KiB of 19-byte lines: line 6899 holds the first end),
 * context across them, and a NUL byte far in. Expected output built here
 * from the file's construction. */
static bool big_is_match(int i)
{
    return i == 1 || (i >= 6897 && i <= 6901) || i == 13797 || i == 20000 || i == 40000;
}

static void test_big_windows(void)
{
    char *r = mktree();
    agti_buf d = AGTI_BUF_INIT;
    for (int i = 1; i <= 40000; i++)
        agti_buf_printf(&d, big_is_match(i) ? "%06d needle7 here\n" : "%06d filler text\n", i);
    put(r, "big.txt", d.ptr, d.len);
    T_EQ_INT(d.len, 40000 * 19 + 9, "big.txt: 40000 lines of 19 bytes but 9 of 20");
    agti_buf want = AGTI_BUF_INIT, wantctx = AGTI_BUF_INIT;
    int nmatch = 0, last_shown = 0;
    for (int i = 1; i <= 40000; i++) {
        if (big_is_match(i)) {
            agti_buf_printf(&want, "big.txt:%d:%06d needle7 here\n", i, i);
            nmatch++;
        }
        bool near =
            big_is_match(i) || (i > 1 && big_is_match(i - 1)) || (i < 40000 && big_is_match(i + 1));
        if (!near)
            continue;
        if (wantctx.len > 0 && last_shown != i - 1)
            agti_buf_puts(&wantctx, "--\n");
        last_shown = i;
        if (big_is_match(i))
            agti_buf_printf(&wantctx, "big.txt:%d:%06d needle7 here\n", i, i);
        else
            agti_buf_printf(&wantctx, "big.txt-%d-%06d filler text\n", i, i);
    }
    char cnt[64];
    snprintf(cnt, sizeof cnt, "big.txt:%d\n", nmatch);
    const char *pats[] = {"needle7", "needle\\d here", "ne+dle7", "(?=needle)needle7",
                          "needle7|nomatch"};
    for (size_t k = 0; k < sizeof pats / sizeof pats[0]; k++) {
        agti_search_opts o = opts(pats[k]);
        check(r, &o, want.ptr, pats[k]);
        o.mode = AGTI_SEARCH_COUNT;
        check(r, &o, cnt, pats[k]);
        o.mode = AGTI_SEARCH_FILES;
        check(r, &o, "big.txt\n", pats[k]);
        o = opts(pats[k]);
        o.before = 1;
        o.after = 1;
        check(r, &o, wantctx.ptr, pats[k]);
    }
    /* a NUL on line 30000: only the lines before it are searched */
    d.ptr[29999 * 19 + 8 + 5] = '\0'; /* 8 longer lines before it */
    put(r, "big.txt", d.ptr, d.len);
    agti_buf_truncate(&want, 0);
    for (int i = 1; i < 30000; i++)
        if (big_is_match(i))
            agti_buf_printf(&want, "big.txt:%d:%06d needle7 here\n", i, i);
    agti_search_opts o = opts("needle\\d here");
    agti_search_result res;
    char *got = run(r, &o, &res);
    T_EQ_STR(got, want.ptr, "big file with a NUL on line 30000: the matches before it");
    T_EQ_INT(res.nfiles == 1 ? res.files[0].binary_from_line : 0, 30000,
             "binary data from line 30000");
    agti_search_result_clear(&res);
    free(got);
    agti_buf_free(&d);
    agti_buf_free(&want);
    agti_buf_free(&wantctx);
    rmtree(r);
    free(r);
}

/* A glob naming the searched folder (glob_base) stopped applying once
 * glob_base/relpath passed 4096 bytes (a fixed buffer): such a file was
 * silently not selected by an include glob, and not excluded by "!...". */
static void test_glob_base_long_path(void)
{
    char *rel = malloc(5001);
    for (int i = 0; i < 5000; i++)
        rel[i] = i % 100 == 99 ? '/' : 'd';
    memcpy(rel + 4990, "/file.txt", 10); /* 4999 bytes */
    size_t len = strlen(rel);
    const char *inc[] = {"src/**/*.txt"};
    agti_search_opts o = opts("x");
    o.glob_base = "src";
    o.globs = inc;
    o.nglobs = 1;
    agti_searcher *s = NULL;
    T_EQ_INT(agti_searcher_new(&s, &o), AGT_OK, "long glob_base path: searcher");
    T_CHECK(agti_searcher_selects(s, rel, len),
            "a 4999-byte path under glob_base is selected by src/**/*.txt");
    agti_searcher_free(s);
    const char *exc[] = {"!src/**/*.txt"};
    o.globs = exc;
    T_EQ_INT(agti_searcher_new(&s, &o), AGT_OK, "long glob_base path: excluding searcher");
    T_CHECK(!agti_searcher_selects(s, rel, len),
            "a 4999-byte path under glob_base is excluded by !src/**/*.txt");
    agti_searcher_free(s);
    free(rel);
}

/* ---- the sink (agti_search_tree_sink) -------------------------------- */

typedef struct sink_log {
    agti_buf paths; /* "path:nmatch_lines:nlines\n" per file received */
    int inside;     /* calls running now (must never be 2) */
    bool overlap;
    size_t calls, fail_after;
} sink_log;

static int log_sink(void *payload, agti_search_file *f)
{
    sink_log *l = payload;
    if (__atomic_add_fetch(&l->inside, 1, __ATOMIC_SEQ_CST) != 1)
        l->overlap = true;
    l->calls++;
    agti_buf_printf(&l->paths, "%s:%zu:%zu\n", f->path, f->nmatch_lines, f->nlines);
    agti_search_file_clear(f);
    usleep(200); /* let other workers finish files meanwhile */
    __atomic_sub_fetch(&l->inside, 1, __ATOMIC_SEQ_CST);
    return l->fail_after && l->calls >= l->fail_after ? AGT_ENOMEM : AGT_OK;
}

/* What agti_search_tree puts in res->files, in the sink's format. */
static char *listed(const agti_search_result *res)
{
    agti_buf b = AGTI_BUF_INIT;
    for (size_t i = 0; i < res->nfiles; i++)
        agti_buf_printf(&b, "%s:%zu:%zu\n", res->files[i].path, res->files[i].nmatch_lines,
                        res->files[i].nlines);
    agti_buf_putc(&b, '\0');
    agti_buf_truncate(&b, b.len - 1);
    return agti_buf_detach(&b);
}

static void test_sink(void)
{
    char *r = mktree();
    /* dN/fNN.txt: NN % 4 + 1 lines, "hit" but "miss" in every 5th file */
    char name[64], text[64];
    for (int i = 0; i < 60; i++) {
        snprintf(name, sizeof name, "d%d/f%02d.txt", i / 20, i);
        text[0] = '\0';
        for (int k = 0; k <= i % 4; k++)
            strcat(text, i % 5 == 4 ? "miss\n" : "hit\n");
        puts_file(r, name, text);
    }
    int fd = open(r, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct {
        int mode;
        size_t max_files, max_matches, max_output;
    } cases[] = {
        {AGTI_SEARCH_CONTENT, 0, 0, 0},   {AGTI_SEARCH_COUNT, 0, 0, 0},
        {AGTI_SEARCH_FILES, 0, 0, 0},     {AGTI_SEARCH_FILES, 12, 0, 0},
        {AGTI_SEARCH_FILES, 48, 0, 0},    {AGTI_SEARCH_CONTENT, 0, 30, 0},
        {AGTI_SEARCH_CONTENT, 0, 120, 0}, {AGTI_SEARCH_CONTENT, 0, 0, 700},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        agti_search_opts o = opts("hit");
        o.mode = cases[c].mode;
        o.max_files = cases[c].max_files;
        o.max_matches = cases[c].max_matches;
        o.max_output_bytes = cases[c].max_output;
        o.threads = 3;
        agti_searcher *s = NULL;
        T_EQ_INT(agti_searcher_new(&s, &o), AGT_OK, "case %zu: searcher", c);
        agti_search_result want, got;
        T_EQ_INT(agti_search_tree_at(s, fd, r, &want), AGT_OK, "case %zu: tree", c);
        sink_log log = {AGTI_BUF_INIT, 0, false, 0, 0};
        T_EQ_INT(agti_search_tree_sink(s, fd, r, log_sink, &log, &got), AGT_OK, "case %zu: sink",
                 c);
        char *w = listed(&want);
        T_EQ_STR(agti_buf_cstr(&log.paths), w, "case %zu: the sink gets res->files, in order", c);
        T_CHECK(!log.overlap, "case %zu: one sink call at a time", c);
        T_EQ_INT(got.nfiles, 0, "case %zu: res->files stays empty", c);
        T_CHECK(got.truncated_files == want.truncated_files &&
                    got.truncated_matches == want.truncated_matches &&
                    got.truncated_output == want.truncated_output &&
                    got.total_match_lines == want.total_match_lines &&
                    /* with a cap, how many files were searched before it was
                     * seen used up depends on thread timing */
                    (got.files_searched == want.files_searched ||
                     (o.max_files | o.max_matches | o.max_output_bytes) != 0),
                "case %zu: same flags and counts (%d%d%d %zu %zu / %d%d%d %zu %zu)", c,
                got.truncated_files, got.truncated_matches, got.truncated_output,
                got.total_match_lines, got.files_searched, want.truncated_files,
                want.truncated_matches, want.truncated_output, want.total_match_lines,
                want.files_searched);
        free(w);
        agti_buf_free(&log.paths);
        agti_search_result_clear(&want);
        agti_search_result_clear(&got);
        agti_searcher_free(s);
    }
    /* 48 files match, the last is f58: a cap of 49 cuts nothing; one of 48
     * is used up exactly, and a candidate file follows (f59), so that is a
     * cut as well */
    agti_search_opts o = opts("hit");
    o.mode = AGTI_SEARCH_FILES;
    agti_searcher *s = NULL;
    agti_search_result res;
    sink_log log;
    size_t caps[] = {49, 48, 12};
    for (int k = 0; k < 3; k++) {
        o.max_files = caps[k];
        agti_searcher_new(&s, &o);
        log = (sink_log){AGTI_BUF_INIT, 0, false, 0, 0};
        agti_search_tree_sink(s, fd, r, log_sink, &log, &res);
        size_t want_calls = caps[k] > 48 ? 48 : caps[k];
        T_EQ_INT(log.calls, want_calls, "max_files %zu: %zu files", caps[k], want_calls);
        T_EQ_INT(res.truncated_files, k > 0, "max_files %zu: cut is %d", caps[k], k > 0);
        agti_buf_free(&log.paths);
        agti_search_result_clear(&res);
        agti_searcher_free(s);
    }

    /* a sink error stops the search and is its result */
    o = opts("hit");
    o.threads = 2;
    agti_searcher_new(&s, &o);
    log = (sink_log){AGTI_BUF_INIT, 0, false, 0, 3};
    T_EQ_INT(agti_search_tree_sink(s, fd, r, log_sink, &log, &res), AGT_ENOMEM,
             "the sink's error comes back");
    T_EQ_INT(log.calls, 3, "no call after the failing one");
    T_EQ_STR(agti_buf_cstr(&log.paths), "d0/f00.txt:1:1\nd0/f01.txt:2:2\nd0/f02.txt:3:3\n",
             "the first three files, in order");
    agti_buf_free(&log.paths);
    agti_searcher_free(s);

    /* a single file goes to the sink too, under its base name */
    o = opts("hit");
    agti_searcher_new(&s, &o);
    char p[4096];
    snprintf(p, sizeof p, "%s/d1/f23.txt", r);
    int ffd = open(p, O_RDONLY | O_CLOEXEC);
    log = (sink_log){AGTI_BUF_INIT, 0, false, 0, 0};
    T_EQ_INT(agti_search_tree_sink(s, ffd, p, log_sink, &log, &res), AGT_OK, "single file");
    T_EQ_STR(agti_buf_cstr(&log.paths), "f23.txt:4:4\n", "single file: one call");
    close(ffd);
    agti_buf_free(&log.paths);
    agti_search_result_clear(&res);
    agti_searcher_free(s);
    close(fd);
    rmtree(r);
    free(r);
}

/* ---- folders shared by the queue (tree.c sdir) ----------------------- */

static size_t open_fds(void)
{
    size_t n = 0;
    char p[64];
    for (int fd = 0; fd < 4096; fd++) {
        snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
        n += access(p, F_OK) == 0;
    }
    return n;
}

/* 120 folders of 3 files, each "hit" in the file named after its folder
 * and in z.txt: the same 240 lines with the folders' descriptors shared
 * (descriptor limit 20000: up to 1024 of them) and with workers opening
 * most folders themselves (limit 64: 16), and no descriptor left open. */
static void test_shared_dirs(void)
{
    char *r = mktree();
    char name[64];
    agti_buf want = AGTI_BUF_INIT;
    for (int i = 0; i < 120; i++) {
        snprintf(name, sizeof name, "d%03d/a.txt", i);
        puts_file(r, name, "miss\n");
        snprintf(name, sizeof name, "d%03d/d%03d.txt", i, i);
        puts_file(r, name, "x\nhit\n");
        agti_buf_printf(&want, "d%03d/d%03d.txt:2:hit\n", i, i);
        snprintf(name, sizeof name, "d%03d/z.txt", i);
        puts_file(r, name, "hit\n");
        agti_buf_printf(&want, "d%03d/z.txt:1:hit\n", i);
    }
    agti_buf_putc(&want, '\0');
    struct rlimit old;
    getrlimit(RLIMIT_NOFILE, &old);
    rlim_t limits[] = {old.rlim_cur < 20000 ? old.rlim_cur : 20000, 64};
    for (int k = 0; k < 2; k++) {
        struct rlimit rl = {limits[k], old.rlim_max};
        setrlimit(RLIMIT_NOFILE, &rl);
        size_t before = open_fds();
        agti_search_opts o = opts("hit");
        o.threads = 2;
        char *got = run(r, &o, NULL);
        T_EQ_STR(got, want.ptr, "descriptor limit %llu: every folder's files",
                 (unsigned long long)limits[k]);
        T_EQ_INT(open_fds(), before, "descriptor limit %llu: none left open",
                 (unsigned long long)limits[k]);
        free(got);
    }
    setrlimit(RLIMIT_NOFILE, &old);
    agti_buf_free(&want);
    rmtree(r);
    free(r);
}

/* The process's descriptor table (FDSize in /proc/self/status), 0 when
 * unknown. */
static long fd_table_size(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long n = 0;
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, "FDSize:", 7) == 0)
            n = strtol(line + 7, NULL, 10);
    if (f != NULL)
        fclose(f);
    return n;
}

typedef struct slow_sink_state {
    size_t files;
    long max_table;
} slow_sink_state;

/* Waits 300 ms at the first file (the walk runs on meanwhile) and notes the
 * largest descriptor table seen. */
static int slow_sink(void *payload, agti_search_file *f)
{
    slow_sink_state *st = payload;
    if (st->files++ == 0)
        usleep(300 * 1000);
    long n = fd_table_size();
    if (n > st->max_table)
        st->max_table = n;
    agti_search_file_clear(f);
    return AGT_OK;
}

/* files_with_matches for "hit" below root with one worker, held in the
 * sink at the first file (slow_sink) while the walk queues the others;
 * what is named what in the checks. */
static slow_sink_state held_search(const char *root, const char *what)
{
    agti_search_opts o = opts("hit");
    o.threads = 1;
    o.mode = AGTI_SEARCH_FILES;
    agti_searcher *s = NULL;
    slow_sink_state st = {0, 0};
    T_EQ_INT(agti_searcher_new(&s, &o), AGT_OK, "%s: searcher", what);
    if (s == NULL)
        return st;
    int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    agti_search_result res;
    T_EQ_INT(agti_search_tree_sink(s, fd, root, slow_sink, &st, &res), AGT_OK, "%s: search", what);
    agti_search_result_clear(&res);
    agti_searcher_free(s);
    close(fd);
    return st;
}

/* A search keeps few folders open for its queue: a threaded process that
 * outgrows its descriptor table waits for an RCU grace period each time
 * (several ms, every thread that opens a file waiting too), and holding a
 * descriptor for each of the 1,024 folders the walk ran ahead by made a
 * Grep of 13,400 files spend 26-30 ms there. 600 folders of two files:
 * the table the process had before (64 for a fresh process, 256 under
 * meson here) must still do. */
static void test_fd_table_stays_small(void)
{
    long before = fd_table_size();
    if (before == 0 || before > 512) {
        T_CHECK(1, "descriptor table: skipped, the process started with %ld", before);
        return;
    }
    char *r = mktree();
    char name[64];
    for (int i = 0; i < 600; i++) {
        snprintf(name, sizeof name, "d%03d/a.txt", i);
        puts_file(r, name, "hit\n");
        snprintf(name, sizeof name, "d%03d/b.txt", i);
        puts_file(r, name, "miss\n");
    }
    /* One worker, held up in the sink at the first file, while the walk
     * queues all the others: every folder is then waiting at once. */
    slow_sink_state st = held_search(r, "descriptor table");
    T_EQ_INT(st.files, 600, "descriptor table: every folder's hit found");
    T_EQ_INT(st.max_table, before, "descriptor table: not grown by the search");
    rmtree(r);
    free(r);
}

/* Sensitive files are counted up to where a cap cut the results: how far
 * the walk got past the cut depends on thread timing. 50 folders of .env
 * (sensitive) and a.txt ("hit"), in walk order d00/.env, d00/a.txt, ...:
 * with max_files 10 the cut is at d09/a.txt, after 10 of the .env files,
 * every time; without a cap all 50. */
static void test_sensitive_count_at_cut(void)
{
    char *r = mktree();
    char name[64];
    for (int i = 0; i < 50; i++) {
        snprintf(name, sizeof name, "d%02d/.env", i);
        puts_file(r, name, "hit=1\n");
        snprintf(name, sizeof name, "d%02d/a.txt", i);
        puts_file(r, name, "hit\n");
    }
    size_t bad = 0;
    for (int k = 0; k < 20; k++) {
        agti_search_opts o = opts("hit");
        o.mode = AGTI_SEARCH_FILES;
        o.skip_sensitive = true;
        o.max_files = 10;
        o.threads = 2;
        agti_search_result res;
        free(run(r, &o, &res));
        bad += res.nfiles != 10 || res.sensitive_skipped != 10;
        agti_search_result_clear(&res);
    }
    T_EQ_INT(bad, 0, "max_files 10: 10 files and 10 sensitive ones, in each of 20 runs");
    agti_search_opts o = opts("hit");
    o.skip_sensitive = true;
    agti_search_result res;
    free(run(r, &o, &res));
    T_EQ_INT(res.sensitive_skipped, 50, "no cap: all 50 sensitive files");
    T_EQ_INT(res.nfiles, 50, "no cap: the 50 others");
    agti_search_result_clear(&res);
    rmtree(r);
    free(r);
}

/* The queue between the walk and the workers is bounded (the walk waits):
 * 3,000 files in 30 folders, every third a hit, searched with the queue
 * held to 64 files: the same output as without the bound (worked out from
 * the names), and the queue's room never grew past its first 256 slots
 * (without the bound and the reuse of emitted slots it grows to 4,096). */
static void test_bounded_queue(void)
{
    char *r = mktree();
    char name[64];
    agti_buf want = AGTI_BUF_INIT;
    for (int d = 0; d < 30; d++)
        for (int f = 0; f < 100; f++) {
            snprintf(name, sizeof name, "d%02d/f%03d.txt", d, f);
            int hit = (d * 100 + f) % 3 == 0;
            puts_file(r, name, hit ? "a\nhit\n" : "miss\n");
            if (hit)
                agti_buf_printf(&want, "d%02d/f%03d.txt:2:hit\n", d, f);
        }
    agti_buf_putc(&want, '\0');
    for (int k = 0; k < 3; k++) {
        size_t qmax = k == 0 ? 64 : k == 1 ? 1 : 0;
        agti_search_tree_set_queue_max(qmax);
        agti_search_opts o = opts("hit");
        o.threads = 2;
        char *got = run(r, &o, NULL);
        T_EQ_STR(got, want.ptr, "queue of %zu files (0: the default): every hit in path order",
                 qmax);
        if (qmax != 0)
            T_EQ_INT((int)agti_search_tree_last_queue_cap(), 256,
                     "queue of %zu files: the room stays at its first 256 slots", qmax);
        free(got);
    }
    /* the default bound (4,096) holds all 3,000 files: with the one worker
     * held in the sink at the first file, nothing is emitted while the walk
     * runs, so no room is reused and it grows to 4,096 (without the hold the
     * workers could emit in time for the walk to reuse room: a check that
     * depended on timing) */
    {
        agti_search_tree_set_queue_max(0);
        slow_sink_state st = held_search(r, "default queue");
        T_EQ_INT(st.files, 1000, "default queue: every hit");
        T_EQ_INT((int)agti_search_tree_last_queue_cap(), 4096,
                 "default queue (4,096): 3,000 files fit without reuse, room 4,096");
    }
    /* a cap cuts the results while the walk waits for room */
    agti_search_tree_set_queue_max(8);
    agti_search_opts o = opts("hit");
    o.threads = 2;
    o.max_files = 5;
    char *got = run(r, &o, NULL);
    T_EQ_STR(got,
             "d00/f000.txt:2:hit\nd00/f003.txt:2:hit\nd00/f006.txt:2:hit\n"
             "d00/f009.txt:2:hit\nd00/f012.txt:2:hit\n",
             "queue of 8 files, max_files 5: the first five hits");
    free(got);
    agti_search_tree_set_queue_max(0);
    agti_buf_free(&want);
    rmtree(r);
    free(r);
}

int main(void)
{
    test_fd_table_stays_small(); /* first: before other tests grow the table */
    test_literal();
    test_bounded_queue();
    test_sink();
    test_shared_dirs();
    test_sensitive_count_at_cut();
    test_required_sets();
    test_prefilter_same();
    test_prefilter_rg();
    test_big_windows();
    char *r = mktree();
    make_tree_a(r);
    test_basic(r);
    rmtree(r);
    free(r);
    test_context();
    test_caps();
    test_budget_and_limits();
    test_pathspec();
    test_order_and_buffer();
    test_binary_probe();
    test_errors();
    test_glob_base_long_path();
    return t_done();
}
