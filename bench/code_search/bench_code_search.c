/*
 * bench-code_search: the code_search review tool (through
 * agt_session_dispatch) against `git grep` on the same repository, the same
 * search text and the same pathspecs, in workspace mode (working tree), in
 * commit mode (HEAD's tree, against `git grep ... HEAD`), in range mode
 * (HEAD~1..HEAD, HEAD's tree again) and in commit mode on a bare clone (no
 * working tree: every blob inflated). The repository is a copy of
 * /usr/include committed in two steps and packed (`git gc`) under the build
 * directory (made on the first run). Times are wall clock: each row's cold
 * call (a review session opened for it alone), and the best of N warm runs
 * on one session per mode; the page cache is warm for both sides;
 * git grep runs as a child whose output the benchmark drains. Match-line
 * counts are printed so both sides can be seen to agree (code_search shows
 * at most 100 lines per file, so git grep runs with --max-count 100).
 *
 *   bench-code_search [corpus-dir] [runs] [workspace|commit|range|bare]
 */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agenttools/agenttools.h"
#include "core/core.h"

extern char **environ;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Runs argv with stdout into a pipe; returns wall ms and counts lines. */
static double run_git(char *const argv[], size_t *lines)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    double t0 = now_ms();
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        return -1;
    }
    static char buf[1 << 16];
    size_t n = 0;
    for (;;) {
        ssize_t r = read(fds[0], buf, sizeof buf);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        for (ssize_t i = 0; i < r; i++)
            n += buf[i] == '\n';
    }
    close(fds[0]);
    int st;
    waitpid(pid, &st, 0);
    *lines = n;
    return now_ms() - t0;
}

/* Matched lines in a code_search result: lines that start with digits and '|'. */
static size_t match_lines(const char *text)
{
    size_t n = 0;
    for (const char *l = text; l && *l;) {
        const char *p = l;
        while (*p >= '0' && *p <= '9')
            p++;
        n += p > l && *p == '|';
        l = strchr(l, '\n');
        l = l ? l + 1 : NULL;
    }
    return n;
}

static double run_ours(agt_session *s, const char *args, size_t *lines)
{
    agt_result *r = NULL;
    double t0 = now_ms();
    int rc = agt_session_dispatch(s, "b", "code_search", args, &r);
    double t = now_ms() - t0;
    if (rc != AGT_OK || r == NULL || agt_result_is_error(r)) {
        fprintf(stderr, "code_search failed: %s\n", r ? agt_result_text(r) : agt_error_message());
        agt_result_free(r);
        return -1;
    }
    *lines = match_lines(agt_result_text(r));
    agt_result_free(r);
    return t;
}

static int prepare(const char *corpus)
{
    char *git = agti_aprintf("%s/.git", corpus);
    struct stat st;
    bool have = git != NULL && stat(git, &st) == 0;
    free(git);
    if (have)
        return 0;
    printf("preparing %s (copy of /usr/include, two commits)...\n", corpus);
    fflush(stdout);
    char *cmd = agti_aprintf(
        "rm -rf '%s' && mkdir -p '%s' && cp -r /usr/include '%s/include' 2>/dev/null; "
        "cd '%s' && git init -q && git add -A >/dev/null 2>&1 && "
        "git -c gc.auto=0 -c user.name=bench -c user.email=bench@invalid commit -q -m one "
        ">/dev/null 2>&1 && "
        "for f in $(git ls-files '*.h' | head -200); do echo '/* touched */' >> \"$f\"; done && "
        "git -c gc.auto=0 -c user.name=bench -c user.email=bench@invalid commit -q -am two "
        ">/dev/null 2>&1 && "
        "git gc -q >/dev/null 2>&1",
        corpus, corpus, corpus, corpus);
    int rc = cmd != NULL && system(cmd) == 0 ? 0 : -1;
    free(cmd);
    return rc;
}

/* A bare clone: commit mode there has no working tree to stand in for
 * blobs, so every file is inflated from the pack (git clone --bare of a
 * local repository links the same pack). */
static int prepare_bare(const char *corpus, const char *bare)
{
    struct stat st;
    if (stat(bare, &st) == 0)
        return 0;
    char *cmd = agti_aprintf("git clone -q --bare '%s' '%s' >/dev/null 2>&1", corpus, bare);
    int rc = cmd != NULL && system(cmd) == 0 ? 0 : -1;
    free(cmd);
    return rc;
}

/* A review session on repo in bench mode m (see modes in main). */
static agt_session *open_session(agt_registry *reg, const char *repo, int m)
{
    int mode = m == 0 ? AGT_CHANGES_WORKSPACE : m == 2 ? AGT_CHANGES_RANGE : AGT_CHANGES_COMMIT;
    agt_session *s = NULL;
    if (agt_session_new(&s, reg, repo) != AGT_OK ||
        agt_session_open_review(s, NULL, mode, m == 2 ? "HEAD~1" : NULL, m == 2 ? "HEAD" : NULL) !=
            AGT_OK) {
        fprintf(stderr, "bench-code_search: %s\n", agt_error_message());
        agt_session_free(s);
        return NULL;
    }
    return s;
}

typedef struct row {
    const char *name;
    const char *text;
    bool regex;
    bool icase;
    const char *specs_json; /* file_patterns */
    const char *specs[3];   /* the same for git grep */
} row;

int main(int argc, char **argv)
{
    const char *broot = getenv("MESON_BUILD_ROOT");
    char *corpus = argc > 1 ? agti_strdup(argv[1])
                            : agti_aprintf("%s/bench-code_search-corpus", broot ? broot : ".");
    int runs = argc > 2 ? atoi(argv[2]) : 5;
    if (corpus == NULL || prepare(corpus) != 0) {
        fprintf(stderr, "bench-code_search: cannot prepare the corpus\n");
        return 1;
    }
    if (runs < 1)
        runs = 1;
    /* an untracked file keeps workspace mode on the working tree (a clean
     * tree would make it review the index) */
    char *dirty = agti_aprintf("%s/bench-untracked.txt", corpus);
    FILE *df = dirty ? fopen(dirty, "w") : NULL;
    if (df != NULL) {
        fputs("untracked\n", df);
        fclose(df);
    }
    free(dirty);
    static const row rows[] = {
        {"literal -i", "timespec", false, true, "[]", {NULL}},
        {"literal", "struct timespec", false, false, "[]", {NULL}},
        {"literal *.h", "struct timespec", false, false, "[\"*.h\"]", {"*.h", NULL}},
        {"regex", "(unsigned|signed) (char|short|long)\\\\s+\\\\w+;", true, false, "[]", {NULL}},
        {"rare -i", "ZZQ_no_such_thing", false, true, "[]", {NULL}},
        {"exclude",
         "__attribute_deprecated__",
         false,
         false,
         "[\"include/\",\":(exclude)include/linux/\"]",
         {"include/", ":(exclude)include/linux/", NULL}},
    };
    agt_registry *reg = NULL;
    if (agt_registry_new(&reg) != AGT_OK || agt_registry_load_builtin(reg, "review") != AGT_OK)
        return 1;
    char *bare = agti_aprintf("%s-bare.git", corpus);
    if (bare == NULL)
        return 1;
    static const char *const modes[] = {"workspace", "commit", "range", "bare"};
    printf("corpus: %s, wall ms (match lines in brackets)\n", corpus);
    printf("cold: the first search of a review session opened for that row alone (file list,\n"
           "reader handles, working-tree table and blob cache all built by that call);\n"
           "warm: best of %d on one session per mode after a warm-up call (the change set\n"
           "keeps reader handles, the working-tree table and up to 256 MiB of inflated\n"
           "blobs). git grep: best of %d, each run a new process (page cache warm for all).\n",
           runs, runs);
    printf("%-9s %-12s | %8s %8s %9s | %8s %8s | %s\n", "mode", "row", "cold", "warm", "git grep",
           "git/cold", "git/warm", "lines ours / git");
    double worst[4], worst_cold[4];
    for (int m = 0; m < 4; m++)
        worst[m] = worst_cold[m] = 1e9;
    for (int m = 0; m < 4; m++) {
        if (argc > 3 && strncmp(modes[m], argv[3], strlen(argv[3])) != 0)
            continue;
        const char *repo = m == 3 ? bare : corpus;
        if (m == 3 && prepare_bare(corpus, bare) != 0) {
            fprintf(stderr, "bench-code_search: cannot make the bare clone %s\n", bare);
            return 1;
        }
        agt_session *s = open_session(reg, repo, m);
        if (s == NULL)
            return 1;
        for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
            const row *r = &rows[i];
            char *args = agti_aprintf("{\"search_text\":\"%s\",\"file_patterns\":%s,"
                                      "\"case_sensitive\":%s,\"use_perl_regexp\":%s}",
                                      r->text, r->specs_json, r->icase ? "false" : "true",
                                      r->regex ? "true" : "false");
            /* the same pattern without the JSON escaping */
            char pat[128];
            size_t k = 0;
            for (const char *p = r->text; *p && k + 1 < sizeof pat; p++)
                if (!(p[0] == '\\' && p[1] == '\\'))
                    pat[k++] = *p;
            pat[k] = '\0';
            char *gg[20];
            int n = 0;
            gg[n++] = "git";
            gg[n++] = "-C";
            gg[n++] = (char *)repo;
            gg[n++] = "grep";
            gg[n++] = "-n";
            gg[n++] = "-I";
            gg[n++] = "--max-count=100";
            gg[n++] = r->regex ? "-P" : "-F";
            if (r->icase)
                gg[n++] = "-i";
            gg[n++] = "-e";
            gg[n++] = pat;
            if (m != 0)
                gg[n++] = "HEAD"; /* range HEAD~1..HEAD reviews HEAD's tree too */
            gg[n++] = "--";
            for (int j = 0; r->specs[j]; j++)
                gg[n++] = (char *)r->specs[j];
            gg[n] = NULL;
            double best_ours = 1e18, best_git = 1e18;
            size_t lo = 0, lg = 0;
            /* git grep first, untimed: the page cache holds the files and
             * the pack for both sides before the cold call (the first row
             * of a run otherwise paid the disk reads alone) */
            run_git(gg, &lg);
            agt_session *fresh = open_session(reg, repo, m);
            if (fresh == NULL)
                return 1;
            double cold = run_ours(fresh, args, &lo);
            agt_session_free(fresh);
            run_ours(s, args, &lo); /* warm-up */
            for (int k2 = 0; k2 < runs; k2++) {
                double t = run_ours(s, args, &lo);
                if (t >= 0 && t < best_ours)
                    best_ours = t;
                t = run_git(gg, &lg);
                if (t >= 0 && t < best_git)
                    best_git = t;
            }
            double ratio = best_git / best_ours, ratio_cold = best_git / cold;
            if (ratio < worst[m])
                worst[m] = ratio;
            if (ratio_cold < worst_cold[m])
                worst_cold[m] = ratio_cold;
            printf("%-9s %-12s | %8.1f %8.1f %9.1f | %7.2fx %7.2fx | %zu / %zu\n", modes[m],
                   r->name, cold, best_ours, best_git, ratio_cold, ratio, lo, lg);
            fflush(stdout);
            free(args);
        }
        agt_session_free(s);
    }
    double all = 1e9, all_cold = 1e9;
    for (int m = 0; m < 4; m++) {
        if (worst[m] > 1e8)
            continue;
        printf("slowest %-9s row: cold %.2fx, warm %.2fx git grep's speed\n", modes[m],
               worst_cold[m], worst[m]);
        if (worst[m] < all)
            all = worst[m];
        if (worst_cold[m] < all_cold)
            all_cold = worst_cold[m];
    }
    printf("slowest row: code_search at %.2fx git grep's speed cold, %.2fx warm (>1: faster "
           "than git grep)\n",
           all_cold, all);
    free(bare);
    agt_registry_free(reg);
    free(corpus);
    return 0;
}
