/*
 * Ignore rules and wildmatch. The gitignore corpus carries git 2.39's own
 * answers; the wildmatch table is taken from git's t/t3070-wildmatch.sh
 * ("glob" column: WM_PATHNAME) and was re-checked with `git ls-files -o --
 * ':(glob)PATTERN'` on this machine.
 */
#include <fcntl.h>
#include <jansson.h>
#include <time.h>
#include <unistd.h>

#include "fs/fs.h"
#include "fsutil.h"
#include "harness.h"

static void test_wildmatch(void)
{
    static const struct {
        const char *pat, *text;
        int want;
    } cases[] = {
        {"foo", "foo", 1},
        {"bar", "foo", 0},
        {"???", "foo", 1},
        {"??", "foo", 0},
        {"*", "foo", 1},
        {"f*", "foo", 1},
        {"*f", "foo", 0},
        {"*foo*", "foo", 1},
        {"*ob*a*r*", "foobar", 1},
        {"*ab", "aaaaaaabababab", 1},
        {"foo\\*", "foo*", 1},
        {"foo\\*bar", "foobar", 0},
        {"*[al]?", "ball", 1},
        {"[ten]", "ten", 0},
        {"**[!te]", "ten", 1},
        {"**[!ten]", "ten", 0},
        {"t[a-g]n", "ten", 1},
        {"t[!a-g]n", "ten", 0},
        {"t[!a-g]n", "ton", 1},
        {"t[^a-g]n", "ton", 1},
        {"a[]]b", "a]b", 1},
        {"a[]-]b", "a-b", 1},
        {"a[]-]b", "a]b", 1},
        {"a[]-]b", "aab", 0},
        {"a[]a-]b", "aab", 1},
        {"]", "]", 1},
        {"foo*bar", "foo/baz/bar", 0},
        {"foo**bar", "foo/baz/bar", 0},
        {"foo**bar", "foobazbar", 1},
        {"foo/**/bar", "foo/baz/bar", 1},
        {"foo/**/**/bar", "foo/baz/bar", 1},
        {"foo/**/bar", "foo/b/a/z/bar", 1},
        {"foo/**/bar", "foo/bar", 1},
        {"foo/**/**/bar", "foo/bar", 1},
        {"foo?bar", "foo/bar", 0},
        {"foo[/]bar", "foo/bar", 0},
        {"foo[^a-z]bar", "foo/bar", 0},
        {"f[^eiu][^eiu][^eiu][^eiu][^eiu]r", "foo/bar", 0},
        {"f[^eiu][^eiu][^eiu][^eiu][^eiu]r", "foo-bar", 1},
        {"**/foo", "foo", 1},
        {"**/foo", "XXX/foo", 1},
        {"**/foo", "bar/baz/foo", 1},
        {"*/foo", "bar/baz/foo", 0},
        {"**/bar*", "foo/bar/baz", 0},
        {"**/bar/*", "deep/foo/bar/baz", 1},
        {"**/bar/*", "deep/foo/bar/baz/", 0},
        {"**/bar/**", "deep/foo/bar/baz/", 1},
        {"**/bar/*", "deep/foo/bar", 0},
        {"**/bar/**", "deep/foo/bar/", 1},
        {"**/bar**", "foo/bar/baz", 0},
        {"*/bar/**", "foo/bar/baz/x", 1},
        {"*/bar/**", "deep/foo/bar/baz/x", 0},
        {"**/bar/*/*", "deep/foo/bar/baz/x", 1},
        {"-*-*-*-*-*-*-12-*-*-*-m-*-*-*",
         "-adobe-courier-bold-o-normal--12-120-75-75-m-70-iso8859-1", 1},
        {"-*-*-*-*-*-*-12-*-*-*-m-*-*-*",
         "-adobe-courier-bold-o-normal--12-120-75-75-X-70-iso8859-1", 0},
        {"XXX/*/*/*/*/*/*/12/*/*/*/m/*/*/*",
         "XXX/adobe/courier/bold/o/normal//12/120/75/75/m/70/iso8859/1", 1},
        {"XXX/*/*/*/*/*/*/12/*/*/*/m/*/*/*",
         "XXX/adobe/courier/bold/o/normal//12/120/75/75/X/70/iso8859/1", 0},
        {"**/*a*b*g*n*t", "abcd/abcdefg/abcdefghijk/abcdefghijklmnop.txt", 1},
        {"**/*a*b*g*n*t", "abcd/abcdefg/abcdefghijk/abcdefghijklmnop.txtz", 0},
        {"[[:alpha:]][[:digit:]][[:upper:]]", "a1B", 1},
        {"[[:digit:][:upper:][:space:]]", "a", 0},
        {"[[:digit:][:upper:][:space:]]", "A", 1},
        {"[[:digit:][:upper:][:space:]]", "1", 1},
        {"[[:digit:][:upper:][:spaci:]]", "1", 0},
        {"[[:digit:][:upper:][:space:]]", " ", 1},
        {"[[:digit:][:upper:][:space:]]", ".", 0},
        {"[[:digit:][:punct:][:space:]]", ".", 1},
        {"[[:xdigit:]]", "5", 1},
        {"[[:xdigit:]]", "f", 1},
        {"[[:xdigit:]]", "D", 1},
        {"[a-c[:digit:]x-z]", "5", 1},
        {"[a-c[:digit:]x-z]", "b", 1},
        {"[a-c[:digit:]x-z]", "q", 0},
        {"[\\]]", "]", 1},
        {"[\\]]", "\\", 0},
        {"[!\\\\]", "\\", 0},
        {"[A-\\\\]", "G", 1},
        {"b*a", "aaabbb", 0},
        {"*ba*", "aabcaa", 0},
        {"[,]", ",", 1},
        {"[\\\\,]", ",", 1},
        {"[\\\\,]", "\\", 1},
        {"[,-.]", "-", 1},
        {"[,-.]", "+", 0},
        {"[,-.]", "-.]", 0},
        {"[\\1-\\3]", "2", 1},
        {"[\\1-\\3]", "4", 0},
        {"[[-\\]]", "\\", 1},
        {"[[-\\]]", "[", 1},
        {"[[-\\]]", "]", 1},
        {"[[-\\]]", "-", 0},
        {"a[b", "a[b", 0},
        {"abc\\", "abc\\", 0},
        {"a**b", "a/x/b", 0},
        {"a**b", "axxb", 1},
        /* Found by fuzz_glob: an escaped slash after "**" gets no
         * zero-directory shortcut (checked with git check-ignore). */
        {"**\\/*.c", "x.c", 0},
        {"**\\/*.c", "a/x.c", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        T_EQ_INT(agti_wildmatch(cases[i].pat, cases[i].text, 0), cases[i].want,
                 "wildmatch '%s' vs '%s'", cases[i].pat, cases[i].text);
    T_CHECK(agti_wildmatch("*.C", "x.c", AGTI_WM_CASEFOLD), "casefold endswith");
    T_CHECK(agti_wildmatch("[A-C]x", "bX", AGTI_WM_CASEFOLD), "casefold class");
    T_CHECK(!agti_wildmatch("*.C", "x.c", 0), "case-sensitive by default");

    /* Patterns that make a backtracking matcher exponential; the NFA is
     * linear in the text (no timing asserted: they simply must finish). */
    char text[20001];
    memset(text, 'a', sizeof text - 1);
    text[sizeof text - 1] = '\0';
    T_CHECK(!agti_wildmatch("*a*a*a*a*a*a*a*a*a*a*a*a*b", text, 0), "star run, no match");
    T_CHECK(!agti_wildmatch("**/a**/a**/a**/a**/a**/b", text, 0), "starstar run, no match");
    char deep[8000];
    for (size_t i = 0; i < sizeof deep - 1; i++)
        deep[i] = i % 2 ? '/' : 'a';
    deep[sizeof deep - 1] = '\0';
    T_CHECK(!agti_wildmatch("**/a/**/a/**/a/**/a/**/a/**/b", deep, 0), "deep starstar, no match");
    T_CHECK(agti_wildmatch("**/a/**/a/**/a/**/a/**/a/**/a", deep, 0), "deep starstar, match");
    /* A long pattern exercises the multi-word state vector. */
    char longpat[400];
    size_t n = 0;
    for (int i = 0; i < 130; i++) {
        longpat[n++] = '*';
        longpat[n++] = 'a';
    }
    longpat[n] = '\0';
    T_CHECK(agti_wildmatch(longpat, text, 0), "130 '*a' groups match 20000 a");
    longpat[n - 1] = 'b';
    T_CHECK(!agti_wildmatch(longpat, text, 0), "130 groups ending in b do not");
}

static int corpus_case(json_t *c, const char *dir)
{
    json_t *files = json_object_get(c, "files");
    if (files != NULL) {
        const char *k;
        json_t *v;
        json_object_foreach(files, k, v)
        {
            tu_write(dir, k, json_string_value(v));
        }
    } else {
        const char *gi = json_string_value(json_object_get(c, "gitignore"));
        size_t gl = json_string_length(json_object_get(c, "gitignore"));
        char p[4096];
        snprintf(p, sizeof p, "%s/.gitignore", dir);
        FILE *f = fopen(p, "wb");
        fwrite(gi, 1, gl, f);
        fclose(f);
    }
    const char *path = json_string_value(json_object_get(c, "path"));
    int is_dir = json_is_true(json_object_get(c, "is_dir"));
    if (is_dir)
        tu_mkdir(dir, path);
    else if (files == NULL || json_object_get(files, path) == NULL)
        tu_write(dir, path, "");
    agti_ignore *ig = NULL;
    int rc = agti_ignore_new(&ig, dir, dir, AGTI_IGN_NO_GLOBAL | AGTI_IGN_NO_EXCLUDE);
    bool out = false;
    if (rc == AGT_OK)
        rc = agti_ignore_is_ignored(ig, path, is_dir != 0, &out);
    agti_ignore_free(ig);
    return rc == AGT_OK ? (out ? 1 : 0) : -1;
}

static void test_corpus(void)
{
    const char *sd = getenv("AGT_SHARED_DIR");
    char p[4096];
    snprintf(p, sizeof p, "%s/corpus/gitignore/cases.json", sd ? sd : "../shared");
    json_error_t err;
    json_t *all = json_load_file(p, 0, &err);
    if (!T_CHECK(json_is_array(all), "load %s", p))
        return;
    T_EQ_INT(json_array_size(all), 135, "corpus has 135 cases");
    size_t i;
    json_t *c;
    int pass = 0;
    json_array_foreach(all, i, c)
    {
        char *dir = tu_mkdtemp();
        int got = corpus_case(c, dir);
        int want = json_is_true(json_object_get(c, "ignored"));
        const char *gi = json_string_value(json_object_get(c, "gitignore"));
        char shown[256];
        size_t k = 0;
        for (const char *g = gi ? gi : "(several files)"; *g && k + 3 < sizeof shown; g++) {
            if (*g == '\n' || *g == '\r') {
                shown[k++] = '\\';
                shown[k++] = *g == '\n' ? 'n' : 'r';
            } else {
                shown[k++] = *g;
            }
        }
        shown[k] = '\0';
        T_EQ_INT(got, want, "corpus %zu: %s (dir=%d) with %s", i,
                 json_string_value(json_object_get(c, "path")),
                 json_is_true(json_object_get(c, "is_dir")), shown);
        pass += got == want;
        tu_rmtree(dir);
        free(dir);
    }
    T_EQ_INT(pass, 135, "all corpus cases agree with git");
    json_decref(all);
}

/* .ignore / .rgignore precedence, info/exclude, global excludes, push/pop. */
static void test_sources(void)
{
    char *dir = tu_mkdtemp();
    char *home = tu_mkdtemp();
    tu_write(dir, ".gitignore", "*.tmp\n*.o\n");
    tu_write(dir, ".ignore", "!keep.tmp\n");
    tu_write(dir, ".rgignore", "secret.txt\n");
    tu_write(dir, ".git/info/exclude", "local-*\n!*.o\n");
    tu_write(dir, "sub/.gitignore", "!*.o\n");
    tu_write(home, ".gitconfig", "[user]\n\tname = x\n[core]\n\texcludesFile = ~/my-ignore\n");
    tu_write(home, "my-ignore", "*.swp\nlocal-keep\n");
    agti_ignore *ig = NULL;
    T_EQ_INT(agti_ignore_new(&ig, dir, home, 0), AGT_OK, "ignore_new with global excludes");
    struct {
        const char *path;
        bool want;
    } q[] = {
        {"a.tmp", true},      {"keep.tmp", false}, {"secret.txt", true}, {"a.o", true},
        {"sub/a.o", false},   {"local-x", true},   {"x.swp", true},      {"sub/y.swp", true},
        {"local-keep", true}, {"plain.c", false},
    };
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
        bool out = !q[i].want;
        T_EQ_INT(agti_ignore_is_ignored(ig, q[i].path, false, &out), AGT_OK, "query %s", q[i].path);
        T_EQ_INT(out, q[i].want, "%s ignored=%d", q[i].path, q[i].want);
    }
    /* The walker's stack interface gives the same answers. */
    T_EQ_INT(agti_ignore_push(ig, ""), AGT_OK, "push root");
    T_EQ_INT(agti_ignore_check_entry(ig, "a.o", false), 1, "stack: a.o excluded");
    T_EQ_INT(agti_ignore_check_entry(ig, "keep.tmp", false), 0, "stack: keep.tmp re-included");
    T_EQ_INT(agti_ignore_push(ig, "sub"), AGT_OK, "push sub");
    T_EQ_INT(agti_ignore_check_entry(ig, "sub/a.o", false), 0, "stack: sub/a.o re-included");
    agti_ignore_pop(ig);
    T_EQ_INT(agti_ignore_check_entry(ig, "sub/a.o", false), 1, "after pop: root rule again");
    agti_ignore_pop(ig);
    agti_ignore_free(ig);

    /* .gitignore only: the .ignore negation and the .rgignore rule are gone. */
    T_EQ_INT(agti_ignore_new(&ig, dir, home, AGTI_IGN_NO_DOTIGNORE | AGTI_IGN_NO_GLOBAL), AGT_OK,
             "ignore_new gitignore only");
    bool o1 = false, o2 = true;
    agti_ignore_is_ignored(ig, "keep.tmp", false, &o1);
    agti_ignore_is_ignored(ig, "secret.txt", false, &o2);
    T_CHECK(o1 && !o2, "AGTI_IGN_NO_DOTIGNORE skips .ignore and .rgignore");
    agti_ignore_free(ig);

    /* XDG default location when no core.excludesFile is set. */
    char *home2 = tu_mkdtemp();
    tu_write(home2, ".config/git/ignore", "*.bak\n");
    const char *old = getenv("XDG_CONFIG_HOME");
    char *saved = old ? strdup(old) : NULL;
    unsetenv("XDG_CONFIG_HOME");
    T_EQ_INT(agti_ignore_new(&ig, dir, home2, AGTI_IGN_NO_EXCLUDE), AGT_OK, "ignore_new xdg");
    bool out = false;
    agti_ignore_is_ignored(ig, "deep/x.bak", false, &out);
    T_CHECK(out, "~/.config/git/ignore applies");
    agti_ignore_is_ignored(ig, "local-x", false, &out);
    T_CHECK(!out, "info/exclude skipped with AGTI_IGN_NO_EXCLUDE");
    agti_ignore_free(ig);
    if (saved) {
        setenv("XDG_CONFIG_HOME", saved, 1);
        free(saved);
    }

    /* add_text: rules given by the host, and bad patterns never match. */
    T_EQ_INT(agti_ignore_new(&ig, dir, home2, AGTI_IGN_NO_GLOBAL | AGTI_IGN_NO_EXCLUDE), AGT_OK,
             "ignore_new plain");
    const char *extra = "gen/\r\n[unclosed\r\n\\#hash\r\n";
    T_EQ_INT(agti_ignore_add_text(ig, "", extra, strlen(extra)), AGT_OK, "add_text");
    agti_ignore_is_ignored(ig, "gen/a/b.c", false, &out);
    T_CHECK(out, "gen/ from add_text excludes its contents");
    agti_ignore_is_ignored(ig, "[unclosed", false, &out);
    T_CHECK(!out, "an unclosed bracket matches nothing");
    agti_ignore_is_ignored(ig, "#hash", false, &out);
    T_CHECK(out, "escaped hash");
    T_EQ_INT(agti_ignore_is_ignored(NULL, "x", false, &out), AGT_EINVAL, "NULL handle");
    agti_ignore_is_ignored(ig, "./gen//a/", false, &out);
    T_CHECK(out, "'./gen//a/' is normalised to gen/a");
    agti_ignore_is_ignored(ig, "x/../gen/b", false, &out);
    T_CHECK(out, "'x/../gen/b' is normalised to gen/b");
    char absq[4200];
    snprintf(absq, sizeof absq, "%s/gen/c", dir);
    T_EQ_INT(agti_ignore_is_ignored(ig, absq, false, &out), AGT_OK, "absolute path inside");
    T_CHECK(out, "absolute path inside the root is decided");
    T_EQ_INT(agti_ignore_is_ignored(ig, "/elsewhere/gen/c", false, &out), AGT_EINVAL,
             "absolute path outside the root");
    out = true;
    agti_ignore_is_ignored(ig, "../gen/x", false, &out);
    T_CHECK(!out, "a path above the root is never ignored");
    agti_ignore_free(ig);
    agti_ignore_free(NULL);

    tu_rmtree(dir);
    tu_rmtree(home);
    tu_rmtree(home2);
    free(dir);
    free(home);
    free(home2);
}

/* Plain names and "*suffix" rules are looked up by hash, the others tried in
 * order; the newest matching rule must still decide whichever kind it is.
 * Expected values from `git check-ignore --no-index` with this .gitignore. */
static void test_rule_order(void)
{
    char *dir = tu_mkdtemp();
    tu_write(dir, ".gitignore",
             "*.o\n!keep.o\nMakefile\n!*.[o]\nfoo*.o\nfoo1.o\n!foo2.o\nbuild/\n!Makefile\n"
             "*.log\nx.log\n!*g\n*.tmp\n!a.tmp\n*.tmp\n");
    agti_ignore *ig = NULL;
    T_EQ_INT(agti_ignore_new(&ig, dir, NULL, AGTI_IGN_NO_GLOBAL), AGT_OK, "ignore_new");
    struct {
        const char *path;
        bool is_dir;
        bool want;
    } q[] = {
        {"a.o", false, false},          {"keep.o", false, false}, {"foo1.o", false, true},
        {"foo2.o", false, false},       {"foo3.o", false, true},  {"Makefile", false, false},
        {"sub/Makefile", false, false}, {"build", false, false},  {"build", true, true},
        {"x.log", false, false},        {"y.log", false, false},  {"a.tmp", false, true},
        {"b.tmp", false, true},         {".o", false, false},
    };
    T_EQ_INT(agti_ignore_push(ig, ""), AGT_OK, "push root");
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
        bool out = !q[i].want;
        T_EQ_INT(agti_ignore_is_ignored(ig, q[i].path, q[i].is_dir, &out), AGT_OK, "query %s",
                 q[i].path);
        T_EQ_INT(out, q[i].want, "rule order: %s%s ignored=%d", q[i].path, q[i].is_dir ? "/" : "",
                 q[i].want);
        if (strchr(q[i].path, '/') == NULL)
            T_EQ_INT(agti_ignore_check_entry(ig, q[i].path, q[i].is_dir), q[i].want,
                     "rule order (stack): %s", q[i].path);
    }
    agti_ignore_pop(ig);
    agti_ignore_free(ig);
    tu_rmtree(dir);
    free(dir);
}

/* Walk callback: appends each path and a space. */
static int collect(const agti_walk_entry *e, void *payload)
{
    agti_buf *b = payload;
    agti_buf_put(b, e->relpath, e->relpath_len);
    agti_buf_putc(b, ' ');
    return 0;
}

/* The entries of a walk of the folder open as fd (path root), ignore rules
 * from ignore_root (NULL: root), joined by ' ' (malloc'd). */
static char *walk_list(int fd, const char *root, const char *ignore_root)
{
    agti_walk_opts o;
    memset(&o, 0, sizeof o);
    o.ignore_flags = AGTI_IGN_NO_GLOBAL;
    o.ignore_root = ignore_root;
    agti_buf b = AGTI_BUF_INIT;
    int rc = agti_walk_at(fd, root, &o, collect, &b, NULL);
    if (rc != AGT_OK)
        agti_buf_puts(&b, "(walk failed)");
    if (b.len > 0 && b.ptr[b.len - 1] == ' ')
        agti_buf_truncate(&b, b.len - 1);
    return agti_buf_detach(&b);
}

/* Ignore files are read below the root's descriptor and never through a
 * symlink. Expected lists from git 2.39 on the same tree (`git ls-files -o
 * --exclude-standard`, which warns "unable to access '.gitignore': Too many
 * levels of symbolic links" for each of the three links and lists every
 * file): a symlinked .gitignore is not read, whether it points outside
 * (absolute or relative) or to a file inside. */
static void test_confined(void)
{
    char *out = tu_mkdtemp();
    char *ws = tu_mkdtemp();
    tu_write(out, "pats", "*.txt\n");
    tu_write(out, ".gitignore", "*.txt\n");
    tu_write(out, "x.txt", "outside\n");
    char p[4096];
    snprintf(p, sizeof p, "%s/pats", out);
    char lk[4096];
    snprintf(lk, sizeof lk, "%s/.gitignore", ws);
    T_CHECK(symlink(p, lk) == 0, "root .gitignore -> outside file (absolute)");
    tu_write(ws, "a.txt", "");
    tu_write(ws, "keep.md", "");
    tu_write(ws, "sub/b.txt", "");
    snprintf(lk, sizeof lk, "%s/sub/.gitignore", ws);
    char rel[4096];
    /* a relative link leaving the root: ../../<out below />/pats */
    snprintf(rel, sizeof rel, "../../%s/pats", strrchr(out, '/') + 1);
    T_CHECK(symlink(rel, lk) == 0, "sub/.gitignore -> ../../OUT/pats (relative, outside)");
    tu_write(ws, "in/real", "*.md\n");
    tu_write(ws, "in/c.md", "");
    tu_write(ws, "in/d.txt", "");
    snprintf(lk, sizeof lk, "%s/in/.gitignore", ws);
    T_CHECK(symlink("real", lk) == 0, "in/.gitignore -> real (inside)");
    int fd = open(ws, O_PATH | O_DIRECTORY);
    char *got = walk_list(fd, ws, NULL);
    T_EQ_STR(got,
             ".gitignore a.txt in/.gitignore in/c.md in/d.txt in/real keep.md "
             "sub/.gitignore sub/b.txt",
             "walk: no symlinked .gitignore is read (git ls-files -o --exclude-standard)");
    free(got);
    agti_ignore *ig = NULL;
    T_EQ_INT(agti_ignore_new(&ig, ws, NULL, AGTI_IGN_NO_GLOBAL), AGT_OK, "ignore_new");
    static const char *const q[] = {"a.txt", "sub/b.txt", "in/c.md", "keep.md"};
    for (size_t i = 0; i < 4; i++) {
        bool ign = true;
        T_EQ_INT(agti_ignore_is_ignored(ig, q[i], false, &ign), AGT_OK, "query %s", q[i]);
        T_CHECK(!ign, "query: %s is not ignored (git check-ignore: no match)", q[i]);
    }
    agti_ignore_free(ig);

    /* .git/info/exclude through a symlink (to the outside patterns) is not
     * read either: a rule of this library, stricter than git, which reads
     * info/exclude through a link. */
    tu_mkdir(ws, ".git/info");
    snprintf(lk, sizeof lk, "%s/.git/info/exclude", ws);
    T_CHECK(symlink(p, lk) == 0, ".git/info/exclude -> outside file");
    T_EQ_INT(agti_ignore_new(&ig, ws, NULL, AGTI_IGN_NO_GLOBAL), AGT_OK, "ignore_new");
    bool ign = true;
    agti_ignore_is_ignored(ig, "a.txt", false, &ign);
    T_CHECK(!ign, "a symlinked info/exclude is not read");
    agti_ignore_free(ig);
    close(fd);

    /* A folder swapped for a symlink to the outside after the walker's
     * descriptor was opened: the walk lists the folder it opened and reads
     * that folder's .gitignore (none: nothing ignored), not the outside one
     * (*.txt) the name now leads to. */
    tu_write(ws, "sw/c.txt", "");
    tu_write(ws, "sw/e.md", "");
    char sw[4096], swreal[4096];
    snprintf(sw, sizeof sw, "%s/sw", ws);
    snprintf(swreal, sizeof swreal, "%s/sw.real", ws);
    fd = open(sw, O_PATH | O_DIRECTORY);
    T_CHECK(rename(sw, swreal) == 0 && symlink(out, sw) == 0, "sw swapped for a link outside");
    got = walk_list(fd, sw, ws);
    T_EQ_STR(got, "c.txt e.md", "swapped walk root: its own folder's rules");
    free(got);
    close(fd);
    /* The same for a folder between the ignore root and the walk root:
     * mid/.gitignore (*.md) is looked up below the root, and mid is a link
     * now, so no rules come from it; the outside *.txt is never read. */
    tu_write(ws, "mid/.gitignore", "*.md\n");
    tu_write(ws, "mid/deep/d.txt", "");
    tu_write(ws, "mid/deep/f.md", "");
    char mid[4096], midreal[4096], deep[4096 + 8];
    snprintf(mid, sizeof mid, "%s/mid", ws);
    snprintf(midreal, sizeof midreal, "%s/mid.real", ws);
    snprintf(deep, sizeof deep, "%s/deep", mid);
    fd = open(deep, O_PATH | O_DIRECTORY);
    got = walk_list(fd, deep, ws);
    T_EQ_STR(got, "d.txt", "before the swap: mid/.gitignore (*.md) applies");
    free(got);
    T_CHECK(rename(mid, midreal) == 0 && symlink(out, mid) == 0, "mid swapped for a link outside");
    got = walk_list(fd, deep, ws);
    T_EQ_STR(got, "d.txt f.md", "after the swap: nothing read through the link");
    free(got);
    close(fd);
    tu_rmtree(ws);
    tu_rmtree(out);
    free(ws);
    free(out);
}

int main(void)
{
    test_wildmatch();
    test_corpus();
    test_sources();
    test_rule_order();
    test_confined();
    return t_done();
}
