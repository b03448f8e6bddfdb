/*
 * bench-scale-tree: writes a deterministic source tree for bench/scale/run.
 *
 *   bench-scale-tree DIR NFILES [SEED]
 *
 * DIR must not exist. The tree has NFILES files that a search sees (not
 * ignored), plus about 6% more that the root .gitignore (build/, *.log) and
 * nested .gitignore files (*.tmp) hide. Folders nest as a real repository
 * does: each holds 2-15 files and 2-7 subfolders until its share of files is
 * used up, so depth grows with the logarithm of NFILES (up to 15 levels at 1M).
 * File kinds by weight: C, headers, Python, JavaScript, TypeScript, Go,
 * Rust, Java, Markdown, JSON, text, YAML, 0.5% binary (a NUL in the first
 * bytes). Sizes: 3-200 lines, most short (about 1.6 KB mean), 0.1% large
 * (64-256 KB). About 1% of the files hold the word EINVAL; Python files
 * hold `def name(self` methods. Modification times are spread over 2025
 * from the same generator, so "newest first" orders are fixed too.
 * Everything comes from one splitmix64 stream seeded with SEED (default
 * 19): the same arguments give the same bytes, names and times.
 * Written with open/write/close and mkdir only (no stdio per file); prints
 * the counts and the seconds it took.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static uint64_t rng_state;

static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static unsigned below(unsigned n)
{
    return (unsigned)(rnd() % n);
}
static double unit(void)
{
    return (double)(rnd() >> 11) / 9007199254740992.0;
}

static const char *const words[] = {
    "alpha",  "buffer", "cache",  "config", "parse",  "render", "socket", "stream", "token",
    "value",  "index",  "queue",  "writer", "reader", "handle", "client", "server", "event",
    "record", "schema", "module", "loader", "state",  "update", "commit", "branch", "merge",
    "diff",   "patch",  "search", "match",  "filter", "format", "encode", "decode", "hash",
    "table",  "entry",  "list",   "node",   "graph",  "path",   "file",   "folder", "worker",
    "thread", "lock",   "timer",  "signal", "retry",  "limit",  "offset", "count",  "total"};
#define NWORDS (sizeof words / sizeof words[0])

static const char *const dirs[] = {"src",   "lib",   "core",     "util",  "net",  "io",
                                   "api",   "cmd",   "internal", "pkg",   "app",  "web",
                                   "tests", "docs",  "tools",    "proto", "ui",   "db",
                                   "auth",  "cache", "crypto",   "jobs",  "http", "plugins"};
#define NDIRS (sizeof dirs / sizeof dirs[0])

enum kind { K_C, K_H, K_PY, K_JS, K_TS, K_GO, K_RS, K_JAVA, K_MD, K_JSON, K_TXT, K_YAML, K_N };
static const char *const ext[K_N] = {".c",  ".h",    ".py", ".js",   ".ts",  ".go",
                                     ".rs", ".java", ".md", ".json", ".txt", ".yaml"};
static const unsigned weight[K_N] = {15, 12, 15, 10, 8, 8, 7, 5, 8, 5, 4, 3};

static enum kind pick_kind(void)
{
    unsigned r = below(100);
    for (int k = 0; k < K_N; k++) {
        if (r < weight[k])
            return (enum kind)k;
        r -= weight[k];
    }
    return K_TXT;
}

static char *buf;
static size_t cap = 1 << 20, len;

static void put(const char *s)
{
    size_t n = strlen(s);
    if (len + n + 1 > cap) {
        while (len + n + 1 > cap)
            cap *= 2;
        buf = realloc(buf, cap);
        if (buf == NULL) {
            perror("realloc");
            exit(1);
        }
    }
    memcpy(buf + len, s, n);
    len += n;
}

static const char *w(void)
{
    return words[below(NWORDS)];
}

/* One line of text in the style of kind k. */
static void line(enum kind k, int einval)
{
    char l[256];
    const char *a = w(), *b = w(), *c = w();
    unsigned n = below(1000);
    switch (k) {
    case K_C:
    case K_H:
        switch (below(6)) {
        case 0:
            snprintf(l, sizeof l, "static int %s_%s(struct %s *p, size_t n)\n", a, b, c);
            break;
        case 1:
            snprintf(l, sizeof l, "    if (p->%s == NULL)\n        return -%s;\n", a,
                     einval ? "EINVAL" : "ENOMEM");
            break;
        case 2:
            snprintf(l, sizeof l, "    p->%s_%s = %u; /* %s the %s */\n", a, b, n, c, a);
            break;
        case 3:
            snprintf(l, sizeof l, "#define %s_%s_MAX %u\n", a, b, n);
            break;
        case 4:
            snprintf(l, sizeof l,
                     "    for (size_t i = 0; i < n; i++)\n        %s[i] = %s(%s, i);\n", a, b, c);
            break;
        default:
            snprintf(l, sizeof l, "}\n\n");
            break;
        }
        break;
    case K_PY:
        switch (below(5)) {
        case 0:
            snprintf(l, sizeof l, "    def %s_%s(self, %s=None):\n", a, b, c);
            break;
        case 1:
            snprintf(l, sizeof l, "        self.%s = %s(%s)\n", a, b, c);
            break;
        case 2:
            snprintf(l, sizeof l, "class %s%s:\n    \"\"\"The %s of a %s.\"\"\"\n", a, b, c, a);
            break;
        case 3:
            snprintf(l, sizeof l, "        if not %s:\n            raise ValueError(\"%s: %s\")\n",
                     a, einval ? "EINVAL" : b, c);
            break;
        default:
            snprintf(l, sizeof l, "        return self.%s + %u\n", a, n);
            break;
        }
        break;
    case K_JS:
    case K_TS:
        switch (below(4)) {
        case 0:
            snprintf(l, sizeof l, "export function %s%s(%s%s) {\n", a, b, c,
                     k == K_TS ? ": number" : "");
            break;
        case 1:
            snprintf(l, sizeof l, "  const %s = await %s.%s(%u);\n", a, b, c, n);
            break;
        case 2:
            snprintf(l, sizeof l, "  if (!%s) throw new Error('%s %s');\n", a,
                     einval ? "EINVAL" : b, c);
            break;
        default:
            snprintf(l, sizeof l, "}\n");
            break;
        }
        break;
    case K_GO:
        switch (below(4)) {
        case 0:
            snprintf(l, sizeof l, "func (s *%s) %s%s(%s int) error {\n", a, b, c, a);
            break;
        case 1:
            snprintf(l, sizeof l, "\tif %s == nil {\n\t\treturn %s\n\t}\n", a,
                     einval ? "syscall.EINVAL" : "io.EOF");
            break;
        case 2:
            snprintf(l, sizeof l, "\t%s := s.%s[%u]\n", a, b, n);
            break;
        default:
            snprintf(l, sizeof l, "}\n");
            break;
        }
        break;
    case K_RS:
        switch (below(4)) {
        case 0:
            snprintf(l, sizeof l, "pub fn %s_%s(%s: &mut %s) -> Result<(), Error> {\n", a, b, c, a);
            break;
        case 1:
            snprintf(l, sizeof l, "    let %s = %s.%s(%u)?;\n", a, b, c, n);
            break;
        case 2:
            snprintf(l, sizeof l, "    // %s: %s the %s\n", einval ? "EINVAL" : "note", a, b);
            break;
        default:
            snprintf(l, sizeof l, "}\n");
            break;
        }
        break;
    case K_JAVA:
        switch (below(3)) {
        case 0:
            snprintf(l, sizeof l, "    public %s %s%s(int %s) {\n", a, b, c, a);
            break;
        case 1:
            snprintf(l, sizeof l, "        return this.%s.%s(%u);\n    }\n", a, b, n);
            break;
        default:
            snprintf(l, sizeof l, "    // TODO %s %s\n", einval ? "EINVAL" : a, b);
            break;
        }
        break;
    case K_MD:
        switch (below(3)) {
        case 0:
            snprintf(l, sizeof l, "## The %s %s\n\n", a, b);
            break;
        case 1:
            snprintf(l, sizeof l, "Each %s keeps its %s until the %s %s (%s).\n", a, b, c, "ends",
                     einval ? "EINVAL" : "see below");
            break;
        default:
            snprintf(l, sizeof l, "* `%s_%s`: %u %ss\n", a, b, n, c);
            break;
        }
        break;
    case K_JSON:
        snprintf(l, sizeof l, "  \"%s_%s\": {\"%s\": %u, \"err\": \"%s\"},\n", a, b, c, n,
                 einval ? "EINVAL" : "none");
        break;
    case K_YAML:
        snprintf(l, sizeof l, "%s:\n  %s: %u\n  %s: %s\n", a, b, n, c, einval ? "EINVAL" : "ok");
        break;
    default:
        snprintf(l, sizeof l, "%s %s %s %u %s\n", a, b, c, n, einval ? "EINVAL" : "");
        break;
    }
    put(l);
}

static long files_seen, files_ignored, dirs_made;
static const time_t y2025 = 1735689600;

static void write_file(int dfd, const char *name, int binary, enum kind k)
{
    len = 0;
    if (binary) {
        unsigned n = 200 + below(8000);
        put("\x89PNG\r\n");
        while (len < n) {
            char c[2] = {(char)(1 + below(255)), 0};
            put(c);
        }
        buf[8] = '\0'; /* a NUL in the first bytes: binary to rg and to us */
    } else {
        unsigned lines;
        if (below(1000) == 0)
            lines = 2000 + below(6000); /* 64-256 KB */
        else
            lines = 3 + (unsigned)(unit() * unit() * unit() * 200);
        int has_einval = below(100) < 4;
        unsigned at = has_einval ? below(lines) : ~0u;
        for (unsigned i = 0; i < lines; i++)
            line(k, i == at);
    }
    int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, "bench-scale-tree: %s: %s\n", name, strerror(errno));
        exit(1);
    }
    for (size_t off = 0; off < len;) {
        ssize_t m = write(fd, buf + off, len - off);
        if (m <= 0) {
            perror("write");
            exit(1);
        }
        off += (size_t)m;
    }
    struct timespec ts[2] = {{y2025 + (time_t)below(365 * 86400), 0}, {0, 0}};
    ts[1] = ts[0];
    futimens(fd, ts);
    close(fd);
}

static int sub(int dfd, const char *name)
{
    if (mkdirat(dfd, name, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "bench-scale-tree: mkdir %s: %s\n", name, strerror(errno));
        exit(1);
    }
    dirs_made++;
    int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        perror("openat");
        exit(1);
    }
    return fd;
}

static void ignored_files(int dfd, const char *suffix, unsigned n)
{
    char name[96];
    for (unsigned i = 0; i < n; i++) {
        snprintf(name, sizeof name, "%s_%u%s", w(), i, suffix);
        write_file(dfd, name, 0, K_TXT);
        files_ignored++;
    }
}

/* Fills the folder dfd with budget visible files. */
static void fill(int dfd, long budget, int depth)
{
    char name[96];
    long here = budget;
    unsigned nsub = 0;
    if (budget > 15) {
        here = 2 + below(14);
        nsub = 2 + below(6);
    }
    if (depth > 0 && below(100) < 2) { /* a nested .gitignore and what it hides */
        int fd = openat(dfd, ".gitignore", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd >= 0) {
            if (write(fd, "*.tmp\n", 6) != 6)
                perror("write");
            close(fd);
        }
        ignored_files(dfd, ".tmp", 1 + below(3));
    }
    for (long i = 0; i < here; i++) {
        enum kind k = pick_kind();
        int binary = below(200) == 0;
        snprintf(name, sizeof name, "%s_%s%ld%s", w(), w(), i, binary ? ".png" : ext[k]);
        write_file(dfd, name, binary, k);
        files_seen++;
    }
    if (below(100) < 1)
        ignored_files(dfd, ".log", 1);
    if (depth > 0 && below(100) < 3) { /* a build output folder */
        int b = sub(dfd, "build");
        ignored_files(b, ".o", 2 + below(20));
        close(b);
    }
    long rest = budget - here;
    if (nsub == 0 || rest <= 0)
        return;
    double wsum = 0, wt[8];
    for (unsigned i = 0; i < nsub; i++)
        wsum += (wt[i] = 0.2 + unit());
    long given = 0;
    for (unsigned i = 0; i < nsub; i++) {
        long share = i + 1 == nsub ? rest - given : (long)((double)rest * wt[i] / wsum);
        if (share <= 0)
            continue;
        given += share;
        snprintf(name, sizeof name, "%s%u", dirs[below(NDIRS)], i);
        int fd = sub(dfd, name);
        fill(fd, share, depth + 1);
        close(fd);
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fputs("usage: bench-scale-tree DIR NFILES [SEED]\n", stderr);
        return 2;
    }
    long n = strtol(argv[2], NULL, 10);
    rng_state = argc > 3 ? strtoull(argv[3], NULL, 10) : 19;
    if (n <= 0 || mkdir(argv[1], 0755) != 0) {
        fprintf(stderr, "bench-scale-tree: cannot create %s (it must not exist): %s\n", argv[1],
                strerror(errno));
        return 1;
    }
    buf = malloc(cap);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int root = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int fd = openat(root, ".gitignore", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const char *gi = "build/\n*.log\nnode_modules/\n";
    if (fd < 0 || write(fd, gi, strlen(gi)) != (ssize_t)strlen(gi)) {
        perror(".gitignore");
        return 1;
    }
    close(fd);
    fill(root, n, 0);
    close(root);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("%ld files (+%ld ignored, +.gitignore files), %ld folders, %.1f s\n", files_seen,
           files_ignored, dirs_made,
           (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    return 0;
}
