/*
 * bench-search: the workspace search path against ripgrep and git on a large
 * real tree: a copy of /usr/include and /usr/share/doc committed into a git
 * repository under the build directory (made on the first run, never
 * committed to the project).
 *
 * Grep rows: the search engine (lib/search) as the Grep tool drives it
 * (files_with_matches sorted newest first) against `rg -l/-n/-c` and
 * `git grep`. Glob rows: the Glob tool itself (dispatched in a session,
 * its list cap raised to print every match; lib/fs walker without stat,
 * glob match, sensitive-file filter, stat of the matches, newest first)
 * against `rg --files -g` and `git ls-files`.
 *
 * Every tool runs as a child process writing its output into a pipe the
 * benchmark drains (ours: a fork that searches, formats like rg and
 * writes), so the rusage wait4 returns is that child's alone (what
 * RUSAGE_SELF says inside ours, and RUSAGE_CHILDREN of an exec'ed tool):
 * CPU = user + system time, peak memory = ru_maxrss. Wall time is the
 * best of N runs with a warm page cache. Output line counts are printed so
 * the tools can be seen to agree.
 *
 * Peak memory: Linux carries the peak RSS of a process that calls exec
 * into ru_maxrss of the new program, so the tools are started through
 * bench-search-spawn (a small process that reports their rusage); ours run
 * in a fork of this benchmark, so their figure includes the benchmark's
 * resident pages that the fork maps (the benchmark's size is printed): an
 * upper bound.
 *
 *   bench-search [--spawn path/to/bench-search-spawn] [corpus-dir] [runs]
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agenttools/agenttools.h"
#include "search/search.h"

extern char **environ;

typedef struct measure {
    double ms;
    double cpu_ms; /* user + system */
    long rss_kb;
    size_t lines;
    bool ok;
} measure;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static size_t drain(int fd)
{
    static char buf[1 << 16];
    size_t lines = 0;
    for (;;) {
        ssize_t r = read(fd, buf, sizeof buf);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        for (ssize_t i = 0; i < r; i++)
            lines += buf[i] == '\n';
    }
    return lines;
}

static measure finish(pid_t pid, int rfd, double t0)
{
    measure m = {0, 0, 0, 0, false};
    m.lines = drain(rfd);
    close(rfd);
    int status = 0;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0)
        return m;
    m.ms = now_ms() - t0;
    m.rss_kb = ru.ru_maxrss;
    m.cpu_ms = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
               (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
    /* grep-like tools exit 1 when nothing matched */
    m.ok = WIFEXITED(status) && WEXITSTATUS(status) <= 1;
    return m;
}

/* bench-search-spawn, when given: the tools' rusage comes from it. */
static const char *spawn_path;

static measure run_tool(char *const argv[])
{
    measure m = {0, 0, 0, 0, false};
    int p[2], q[2] = {-1, -1};
    if (pipe(p) != 0)
        return m;
    if (spawn_path != NULL && pipe(q) != 0) {
        close(p[0]);
        close(p[1]);
        return m;
    }
    char *av[32];
    int k = 0;
    if (spawn_path != NULL)
        av[k++] = (char *)spawn_path;
    for (int i = 0; argv[i] != NULL && k < 31; i++)
        av[k++] = argv[i];
    av[k] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    posix_spawn_file_actions_addclose(&fa, p[0]);
    posix_spawn_file_actions_addclose(&fa, p[1]);
    if (spawn_path != NULL) {
        posix_spawn_file_actions_adddup2(&fa, q[1], 3);
        posix_spawn_file_actions_addclose(&fa, q[0]);
        posix_spawn_file_actions_addclose(&fa, q[1]);
    }
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", 0, 0);
    double t0 = now_ms();
    pid_t pid;
    int rc = posix_spawnp(&pid, av[0], &fa, NULL, av, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(p[1]);
    if (q[1] >= 0)
        close(q[1]);
    if (rc != 0) {
        close(p[0]);
        if (q[0] >= 0)
            close(q[0]);
        return m;
    }
    m = finish(pid, p[0], t0);
    if (spawn_path != NULL) {
        char line[128];
        ssize_t r = read(q[0], line, sizeof line - 1);
        long rss = 0, ut = 0, st = 0;
        line[r > 0 ? r : 0] = '\0';
        if (sscanf(line, "%ld %ld %ld", &rss, &ut, &st) == 3) {
            m.rss_kb = rss;
            m.cpu_ms = (double)(ut + st) / 1e3;
        } else {
            m.ok = false;
        }
        close(q[0]);
    }
    return m;
}

static measure run_ours(const char *root, const agti_search_opts *o)
{
    measure m = {0, 0, 0, 0, false};
    int p[2];
    if (pipe(p) != 0)
        return m;
    double t0 = now_ms();
    pid_t pid = fork();
    if (pid < 0)
        return m;
    if (pid == 0) {
        close(p[0]);
        agti_searcher *s = NULL;
        agti_search_result res;
        if (agti_searcher_new(&s, o) != AGT_OK || agti_search_tree(s, root, &res) != AGT_OK) {
            fprintf(stderr, "ours: %s\n", agt_error_message());
            _exit(2);
        }
        /* Grep's files_with_matches lists the newest first. */
        if (o->mode == AGTI_SEARCH_FILES)
            agti_search_sort_by_mtime(&res);
        agti_buf b = AGTI_BUF_INIT;
        agti_search_format(&b, s, &res, true);
        size_t off = 0;
        while (off < b.len) {
            ssize_t w = write(p[1], b.ptr + off, b.len - off);
            if (w <= 0)
                break;
            off += (size_t)w;
        }
        _exit(res.nfiles > 0 ? 0 : 1);
    }
    close(p[1]);
    return finish(pid, p[0], t0);
}

/* The Glob tool itself, dispatched in a session rooted at the corpus with
 * its list cap raised so that every match is printed, as rg does. The
 * registry and the session are made once, before the timed forks: an
 * agent has them already when the model calls Glob. */
static agt_session *glob_session;

static int glob_session_new(const char *root)
{
    agt_registry *reg = NULL;
    if (agt_registry_new(&reg) != AGT_OK || agt_registry_load_builtin(reg, "chat") != AGT_OK ||
        agt_session_new(&glob_session, reg, root) != AGT_OK ||
        agt_session_set_file_limit(glob_session, AGT_FILE_LIMIT_GLOB_RESULTS, 1000000) != AGT_OK) {
        fprintf(stderr, "bench-search: session: %s\n", agt_error_message());
        return -1;
    }
    return 0;
}

static measure run_glob(const char *pattern)
{
    measure m = {0, 0, 0, 0, false};
    int p[2];
    if (pipe(p) != 0)
        return m;
    double t0 = now_ms();
    pid_t pid = fork();
    if (pid < 0)
        return m;
    if (pid == 0) {
        close(p[0]);
        agt_result *res = NULL;
        char *args = agti_aprintf("{\"pattern\": \"%s\"}", pattern);
        if (args == NULL ||
            agt_session_dispatch(glob_session, "c1", "Glob", args, &res) != AGT_OK ||
            agt_result_is_error(res)) {
            fprintf(stderr, "ours: %s\n", res ? agt_result_text(res) : agt_error_message());
            _exit(2);
        }
        const char *text = agt_result_text(res);
        size_t len = strlen(text), off = 0;
        while (off < len) {
            ssize_t w = write(p[1], text + off, len - off);
            if (w <= 0)
                break;
            off += (size_t)w;
        }
        if (write(p[1], "\n", 1) != 1)
            _exit(2);
        _exit(0);
    }
    close(p[1]);
    return finish(pid, p[0], t0);
}

static double self_rss_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024;
}

static bool is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int prepare(const char *corpus)
{
    char *git = agti_aprintf("%s/.git", corpus);
    bool have = git != NULL && is_dir(git);
    free(git);
    if (have)
        return 0;
    printf("preparing %s (copy of /usr/include and /usr/share/doc, git commit)...\n", corpus);
    fflush(stdout);
    char *cmd = agti_aprintf(
        "rm -rf '%s' && mkdir -p '%s' && cp -r /usr/include '%s/include' 2>/dev/null; "
        "cp -r /usr/share/doc '%s/doc' 2>/dev/null; cd '%s' && git init -q && "
        "git add -A >/dev/null 2>&1 && git -c user.name=bench -c user.email=bench@invalid "
        "commit -q -m corpus >/dev/null 2>&1",
        corpus, corpus, corpus, corpus, corpus);
    int rc = cmd != NULL && system(cmd) == 0 ? 0 : -1;
    free(cmd);
    return rc;
}

typedef struct row {
    const char *name;
    const char *pattern;
    bool regex;
    bool icase;
    int mode;
} row;

/* Keeps the fastest wall time, the lowest CPU time and the highest peak RSS. */
static void best(measure *acc, measure m)
{
    if (!m.ok)
        return;
    if (!acc->ok) {
        *acc = m;
        return;
    }
    if (m.ms < acc->ms)
        acc->ms = m.ms;
    if (m.cpu_ms < acc->cpu_ms)
        acc->cpu_ms = m.cpu_ms;
    if (m.rss_kb > acc->rss_kb)
        acc->rss_kb = m.rss_kb;
}

int main(int argc, char **argv)
{
    const char *broot = getenv("MESON_BUILD_ROOT");
    if (argc > 2 && strcmp(argv[1], "--spawn") == 0) {
        spawn_path = argv[2];
        argv += 2;
        argc -= 2;
    }
    char *corpus = argc > 1 ? agti_strdup(argv[1])
                            : agti_aprintf("%s/bench-search-corpus", broot ? broot : ".");
    if (corpus == NULL)
        return 1;
    int runs = argc > 2 ? atoi(argv[2]) : 5;
    if (runs < 1)
        runs = 1;
    if (prepare(corpus) != 0) {
        fprintf(stderr, "bench-search: cannot prepare the corpus in %s\n", corpus);
        return 1;
    }
    static const row rows[] = {
        {"literal   files", "struct timespec", false, false, AGTI_SEARCH_FILES},
        {"literal   content", "struct timespec", false, false, AGTI_SEARCH_CONTENT},
        {"literal   count", "struct timespec", false, false, AGTI_SEARCH_COUNT},
        {"regex     files", "(unsigned|signed) (char|short|long)\\s+\\w+;", true, false,
         AGTI_SEARCH_FILES},
        {"regex     content", "(unsigned|signed) (char|short|long)\\s+\\w+;", true, false,
         AGTI_SEARCH_CONTENT},
        {"regex     count", "(unsigned|signed) (char|short|long)\\s+\\w+;", true, false,
         AGTI_SEARCH_COUNT},
        {"-i        files", "deprecated", false, true, AGTI_SEARCH_FILES},
        {"-i        content", "deprecated", false, true, AGTI_SEARCH_CONTENT},
        {"-i        count", "deprecated", false, true, AGTI_SEARCH_COUNT},
        {"rare      files", "ZZQ_no_such_thing", false, false, AGTI_SEARCH_FILES},
        {"regex-rare content", "xyzzy\\d+plugh", true, false, AGTI_SEARCH_CONTENT},
    };
    /* Warm the page cache. */
    char *warm[] = {"rg", "-c", "warmup", corpus, NULL};
    run_tool(warm);
    run_tool(warm);

    printf("corpus: %s, best of %d runs, wall ms; rss = peak resident MiB; lines = output lines\n",
           corpus, runs);
    printf("ours run in a fork of this benchmark (%.1f MiB resident), whose pages it maps count in "
           "ours' MiB (an upper bound); the "
           "tools' are %s\n",
           self_rss_mib(),
           spawn_path ? "their own (bench-search-spawn)" : "NOT their own (no --spawn)");
    printf("%-18s | %7s %7s %7s %7s %6s | %6s %6s %6s %6s | %5s %5s %5s | %6s %6s %6s\n", "row",
           "wall:us", "rg", "rg-def", "git", "us/rg", "cpu:us", "rg", "git", "us/rg", "MiB:us",
           "rg", "git", "lines", "rg", "git");
    bool all_ok = true;
    double worst = 0, worst_cpu = 0;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const row *r = &rows[i];
        agti_search_opts o;
        memset(&o, 0, sizeof o);
        o.pattern = r->pattern;
        o.literal = !r->regex;
        o.case_insensitive = r->icase;
        o.mode = r->mode;
        const char *mflag = r->mode == AGTI_SEARCH_FILES   ? "-l"
                            : r->mode == AGTI_SEARCH_COUNT ? "-c"
                                                           : "-n";
        char *rg[12] = {0}, *gg[14] = {0}; /* rd below copies all of rg */
        int k = 0;
        rg[k++] = "rg";
        rg[k++] = (char *)mflag;
        rg[k++] = r->regex ? "-P" : "-F";
        if (r->icase)
            rg[k++] = "-i";
        rg[k++] = "-e";
        rg[k++] = (char *)r->pattern;
        rg[k++] = corpus;
        rg[k] = NULL;
        k = 0;
        gg[k++] = "git";
        gg[k++] = "-C";
        gg[k++] = corpus;
        gg[k++] = "grep";
        gg[k++] = (char *)mflag;
        gg[k++] = r->regex ? "-P" : "-F";
        if (r->icase)
            gg[k++] = "-i";
        gg[k++] = "-e";
        gg[k++] = (char *)r->pattern;
        gg[k] = NULL;
        /* For regex rows also ripgrep's default engine (Rust regex); the
         * ratio is taken against the faster of the two. */
        char *rd[12];
        for (int x = 0; x < 12; x++)
            rd[x] = rg[x];
        rd[2] = "--no-pcre2";
        measure mo = {0}, mr = {0}, mg = {0}, md = {0};
        for (int n = 0; n < runs; n++) {
            best(&mo, run_ours(corpus, &o));
            best(&mr, run_tool(rg));
            if (r->regex)
                best(&md, run_tool(rd));
            best(&mg, run_tool(gg));
        }
        char rdef[16] = "-";
        double rg_ms = mr.ms, rg_cpu = mr.cpu_ms;
        if (r->regex && md.ok) {
            snprintf(rdef, sizeof rdef, "%.1f", md.ms);
            if (md.ms < rg_ms)
                rg_ms = md.ms;
            if (md.cpu_ms < rg_cpu)
                rg_cpu = md.cpu_ms;
        }
        double q1 = rg_ms > 0 ? mo.ms / rg_ms : 0;
        if (q1 > worst)
            worst = q1;
        all_ok = all_ok && mo.ok && mr.ok;
        double c1 = rg_cpu > 0 ? mo.cpu_ms / rg_cpu : 0;
        if (c1 > worst_cpu)
            worst_cpu = c1;
        printf(
            "%-18s | %7.1f %7.1f %7s %7.1f %6.2f | %6.0f %6.0f %6.0f %6.2f | %5.1f %5.1f %5.1f | "
            "%6zu %6zu %6zu\n",
            r->name, mo.ms, mr.ms, rdef, mg.ms, q1, mo.cpu_ms, rg_cpu, mg.cpu_ms, c1,
            (double)mo.rss_kb / 1024, (double)mr.rss_kb / 1024, (double)mg.rss_kb / 1024, mo.lines,
            mr.lines, mg.lines);
        fflush(stdout);
    }
    /* Glob rows: rg --files -g and git ls-files with the same selection. */
    static const struct {
        const char *name, *pattern, *git[4];
    } grows[] = {
        {"glob      **/*.h", "**/*.h", {":(glob)**/*.h", NULL}},
        {"glob      *.c", "*.c", {"*.c", NULL}},
        {"glob      braces", "*.{png,svg,gz}", {"*.png", "*.svg", "*.gz", NULL}},
    };
    if (glob_session_new(corpus) != 0)
        return 1;
    printf("glob rows: the session is made before the forks; baseline now %.1f MiB\n",
           self_rss_mib());
    for (size_t i = 0; i < sizeof grows / sizeof grows[0]; i++) {
        char *rg[] = {"rg", "--files", "-g", (char *)grows[i].pattern, corpus, NULL};
        char *gg[10] = {"git", "-C", corpus, "ls-files", "--"};
        int k = 5;
        for (int j = 0; grows[i].git[j] != NULL; j++)
            gg[k++] = (char *)grows[i].git[j];
        gg[k] = NULL;
        /* Also rg on one thread (a parallel walk can lose on 2 CPUs); the
         * ratio is taken against the faster of the two. */
        char *r1[] = {"rg", "-j1", "--files", "-g", (char *)grows[i].pattern, corpus, NULL};
        measure mo = {0}, mr = {0}, mg = {0}, m1 = {0};
        for (int n = 0; n < runs; n++) {
            best(&mo, run_glob(grows[i].pattern));
            best(&mr, run_tool(rg));
            best(&m1, run_tool(r1));
            best(&mg, run_tool(gg));
        }
        char rj1[16] = "-";
        double rg_ms = mr.ms, rg_cpu = mr.cpu_ms;
        if (m1.ok) {
            snprintf(rj1, sizeof rj1, "%.1f", m1.ms);
            if (m1.ms < rg_ms)
                rg_ms = m1.ms;
            if (m1.cpu_ms < rg_cpu)
                rg_cpu = m1.cpu_ms;
        }
        double q1 = rg_ms > 0 ? mo.ms / rg_ms : 0;
        double c1 = rg_cpu > 0 ? mo.cpu_ms / rg_cpu : 0;
        if (q1 > worst)
            worst = q1;
        if (c1 > worst_cpu)
            worst_cpu = c1;
        all_ok = all_ok && mo.ok && mr.ok;
        printf(
            "%-18s | %7.1f %7.1f %7s %7.1f %6.2f | %6.0f %6.0f %6.0f %6.2f | %5.1f %5.1f %5.1f | "
            "%6zu %6zu %6zu\n",
            grows[i].name, mo.ms, mr.ms, rj1, mg.ms, q1, mo.cpu_ms, rg_cpu, mg.cpu_ms, c1,
            (double)mo.rss_kb / 1024, (double)mr.rss_kb / 1024, (double)mg.rss_kb / 1024, mo.lines,
            mr.lines, mg.lines);
        fflush(stdout);
    }
    printf("rg-def: rg's default regex engine (regex rows), rg -j1 (glob rows); us/rg is against "
           "the faster rg of the row, whose CPU time is printed.\n");
    printf("Worst ratio: wall %.2f, "
           "CPU %.2f (%s)\n",
           worst, worst_cpu,
           worst <= 1.0 ? "no slower than ripgrep on every row" : "slower than ripgrep on a row");
    return all_ok ? 0 : 1;
}
