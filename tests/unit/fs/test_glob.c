/*
 * Glob matching against file sets produced by real tools on the same tree
 * (the FILES list below, created as empty files):
 *   rg  = ripgrep 13.0.0: `rg --files --hidden --no-ignore --sort path -g PATTERN .`
 *   bash = GNU bash 5.2.15: `shopt -s globstar extglob nullglob dotglob`, then
 *          `for f in PATTERN; do [ -f "$f" ] && echo "$f"; done | sort -u`
 *          (bash where rg 13 refuses nested braces or lacks [[:class:]]; a
 *          pattern without '/' was written as **\/PATTERN for bash).
 */
#include "fs/fs.h"
#include "harness.h"

static const char *const FILES[] = {
    ".github/workflows/ci.yml",
    ".hidden.c",
    "A.C",
    "Makefile",
    "a.c",
    "abc.c",
    "abd.c",
    "b.h",
    "docs/a,b.txt",
    "docs/readme.md",
    "lit{x}.txt",
    "src/.env.example",
    "src/main.c",
    "src/sub/deep.c",
    "src/sub/x.txt",
    "src/util.c",
    "src/util.h",
    "star*.txt",
    "tests/data/t3.c",
    "tests/t1.c",
    "tests/t2.c",
    "x1.c",
    "xa.c",
};
#define NFILES (sizeof FILES / sizeof FILES[0])

static const struct {
    const char *tool, *pattern, *expect; /* expect: space-separated, sorted */
} CASES[] = {
    {"rg", "*.c",
     ".hidden.c a.c abc.c abd.c src/main.c src/sub/deep.c src/util.c tests/data/t3.c "
     "tests/t1.c tests/t2.c x1.c xa.c"},
    {"rg", "**/*.c",
     ".hidden.c a.c abc.c abd.c src/main.c src/sub/deep.c src/util.c tests/data/t3.c "
     "tests/t1.c tests/t2.c x1.c xa.c"},
    {"rg", "src/*.c", "src/main.c src/util.c"},
    {"rg", "src/**/*.c", "src/main.c src/sub/deep.c src/util.c"},
    {"rg", "src/**",
     "src/.env.example src/main.c src/sub/deep.c src/sub/x.txt src/util.c src/util.h"},
    {"rg", "**/sub/*", "src/sub/deep.c src/sub/x.txt"},
    {"rg", "*.{c,h}",
     ".hidden.c a.c abc.c abd.c b.h src/main.c src/sub/deep.c src/util.c src/util.h "
     "tests/data/t3.c tests/t1.c tests/t2.c x1.c xa.c"},
    {"rg", "{src,tests}/**/*.c",
     "src/main.c src/sub/deep.c src/util.c tests/data/t3.c tests/t1.c tests/t2.c"},
    {"rg", "ab[cd].c", "abc.c abd.c"},
    {"rg", "x[!a].c", "x1.c"},
    {"rg", "x[^0-9].c", "xa.c"},
    {"rg", "lit\\{x\\}.txt", "lit{x}.txt"},
    {"rg", "star\\*.txt", "star*.txt"},
    {"rg", ".*", ".hidden.c src/.env.example"},
    {"rg", "**/.github/**", ".github/workflows/ci.yml"},
    {"rg", "?.c", "a.c"},
    {"rg", "*",
     ".github/workflows/ci.yml .hidden.c A.C Makefile a.c abc.c abd.c b.h docs/a,b.txt "
     "docs/readme.md lit{x}.txt src/.env.example src/main.c src/sub/deep.c src/sub/x.txt "
     "src/util.c src/util.h star*.txt tests/data/t3.c tests/t1.c tests/t2.c x1.c xa.c"},
    {"rg", "/a.c", "a.c"},
    {"rg", "src/*/deep.c", "src/sub/deep.c"},
    {"rg", "**/t?.c", "tests/data/t3.c tests/t1.c tests/t2.c"},
    {"rg", "{docs/a\\,b.txt,Makefile}", "Makefile docs/a,b.txt"},
    {"rg", "*.C", "A.C"},
    {"bash", "x[[:digit:]].c", "x1.c"},
    {"bash", "src/*.{c,{h,txt}}", "src/main.c src/util.c src/util.h"},
    {"bash", "src/**/{*.{c,h},x.txt}",
     "src/main.c src/sub/deep.c src/sub/x.txt src/util.c src/util.h"},
    {"bash", "{a,ab{c,d}}.c", "a.c abc.c abd.c"},
    {"bash", "[[:upper:]]*", "A.C Makefile"},
    {"bash", "*[[:punct:]]*.txt", "docs/a,b.txt lit{x}.txt star*.txt"},
    {"bash", "tests/**", "tests/data/t3.c tests/t1.c tests/t2.c"},
};

static void test_cases(void)
{
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        agti_glob *g = NULL;
        int rc = agti_glob_compile(&g, CASES[i].pattern, 0);
        if (!T_CHECK(rc == AGT_OK, "compile %s", CASES[i].pattern))
            continue;
        char got[2048] = "";
        for (size_t f = 0; f < NFILES; f++)
            if (agti_glob_match(g, FILES[f], strlen(FILES[f]), false)) {
                if (got[0])
                    strcat(got, " ");
                strcat(got, FILES[f]);
            }
        T_EQ_STR(got, CASES[i].expect, "%s: %s", CASES[i].tool, CASES[i].pattern);
        agti_glob_free(g);
    }
}

static void test_errors(void)
{
    static const struct {
        const char *pattern;
        int rc;
    } bad[] = {
        {"{a,b", AGT_EPARSE},
        {"a}", AGT_EPARSE},
        {"[abc", AGT_EPARSE},
        {"abc\\", AGT_EPARSE},
        {"", AGT_EINVAL},
        {"[[:nope:]]", AGT_EPARSE},
        {"/", AGT_EINVAL},
        {"{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}", AGT_ELIMIT},
        /* Duplicates would hide the blow-up from a result-size cap alone. */
        {"{a,a}{a,a}{a,a}{a,a}{a,a}{a,a}{a,a}{a,a}{a,a}{a,a}{a,a}{a,a}{a,a}{a,a}{a,a}{a,a}",
         AGT_ELIMIT},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        agti_glob *g = (agti_glob *)1;
        T_EQ_INT(agti_glob_compile(&g, bad[i].pattern, 0), bad[i].rc, "bad glob '%s'",
                 bad[i].pattern);
        T_CHECK(g == NULL, "no handle for '%s'", bad[i].pattern);
    }
    agti_glob *g = NULL;
    agti_glob_compile(&g, "{a,b", 0);
    T_CHECK(strstr(agt_error_message(), "offset 0") != NULL, "message names the offset: %s",
            agt_error_message());
    T_EQ_INT(agti_glob_compile(NULL, "a", 0), AGT_EINVAL, "NULL out");
    char big[5000];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    T_EQ_INT(agti_glob_compile(&g, big, 0), AGT_ELIMIT, "too long");
    agti_glob_free(NULL);
}

static void test_misc(void)
{
    agti_glob *g = NULL;
    T_EQ_INT(agti_glob_compile(&g, "src/", 0), AGT_OK, "dir-only compile");
    T_CHECK(agti_glob_match(g, "src", 3, true), "dir-only matches the directory");
    T_CHECK(!agti_glob_match(g, "src", 3, false), "dir-only does not match a file");
    agti_glob_free(g);
    T_EQ_INT(agti_glob_compile(&g, "*.C", AGTI_GLOB_CASEFOLD), AGT_OK, "casefold compile");
    T_CHECK(agti_glob_match(g, "x/a.c", 5, false), "casefold matches a.c");
    agti_glob_free(g);
    T_EQ_INT(agti_glob_compile(&g, "./src/*.c", 0), AGT_OK, "leading ./");
    T_CHECK(agti_glob_match(g, "src/a.c", 7, false), "./ anchors at the root");
    T_CHECK(!agti_glob_match(g, "x/src/a.c", 9, false), "./ does not float");
    agti_glob_free(g);
    T_EQ_INT(agti_glob_compile(&g, "[{]x,y[}]", 0), AGT_OK, "braces inside brackets");
    T_CHECK(agti_glob_match(g, "{x,y}", 5, false), "bracketed braces are literal");
    agti_glob_free(g);
    T_EQ_INT(agti_glob_compile(&g, "a{,.bak}", 0), AGT_OK, "empty alternative");
    T_CHECK(agti_glob_match(g, "a", 1, false) && agti_glob_match(g, "d/a.bak", 7, false),
            "empty alternative matches both");
    agti_glob_free(g);
}

/* Alternatives "**" + "/" ... + X (X without '/' or "**") are matched as X
 * on the basename: the same answers as the NFA of the whole alternative
 * (git's wildmatch, WM_PATHNAME) on every path, at the root and deeper,
 * with brackets, '?', escapes and a dir-only slash. */
static void test_any_dirs(void)
{
    static const char *const pats[] = {"**/*.c",
                                       "**/**/t?.c",
                                       "**/[!a]*.c",
                                       "**/*",
                                       "**/.hidden.c",
                                       "**/\\*.txt",
                                       "**/x[[:digit:]].c",
                                       "**/a*",
                                       "**/*.{c,h}",
                                       "**/data/*.c",
                                       "**/**",
                                       "**/a**"};
    static const char *const extra[] = {"c",    "x/.c",          "a/b/c/d/e.c", "/a.c", "a/.c/b",
                                        "a.c/", "dir/star*.txt", "t1.c/t2.c",   "a/b/", "tests/"};
    for (size_t i = 0; i < sizeof pats / sizeof pats[0]; i++) {
        agti_glob *g = NULL;
        T_EQ_INT(agti_glob_compile(&g, pats[i], 0), AGT_OK, "compile '%s'", pats[i]);
        size_t total = NFILES + sizeof extra / sizeof extra[0], agree = 0;
        for (size_t k = 0; k < total; k++) {
            const char *path = k < NFILES ? FILES[k] : extra[k - NFILES];
            bool want;
            if (strchr(pats[i], '{') != NULL)
                want = agti_wildmatch("**/*.c", path, 0) || agti_wildmatch("**/*.h", path, 0);
            else
                want = agti_wildmatch(pats[i], path, 0);
            bool got = agti_glob_match(g, path, strlen(path), false);
            if (got == want)
                agree++;
            else
                t_diag("'%s' on '%s': glob %d, wildmatch %d", pats[i], path, got, want);
        }
        T_EQ_INT(agree, total, "'%s': as the whole-path NFA on %zu paths", pats[i], total);
        agti_glob_free(g);
    }
    /* by hand */
    agti_glob *g = NULL;
    agti_glob_compile(&g, "**/*.h", 0);
    T_CHECK(agti_glob_match(g, "b.h", 3, false) && agti_glob_match(g, "x/y/z.h", 7, false) &&
                !agti_glob_match(g, "x.h/y", 5, false) && !agti_glob_match(g, "x.hh", 4, false),
            "**/*.h: b.h and x/y/z.h, not x.h/y or x.hh");
    agti_glob_free(g);
    agti_glob_compile(&g, "**/src/", 0);
    T_CHECK(agti_glob_match(g, "a/src", 5, true) && !agti_glob_match(g, "a/src", 5, false),
            "**/src/: folders only");
    agti_glob_free(g);
}

int main(void)
{
    test_cases();
    test_errors();
    test_misc();
    test_any_dirs();
    return t_done();
}
