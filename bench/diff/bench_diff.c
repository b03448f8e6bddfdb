/*
 * Diff engine benchmark.
 *
 * 1. Builds a large real diff at run time (no network): a temporary git
 *    repository commits a copy of /usr/include, applies a deterministic edit
 *    to every third text file (a changed, a dropped and an inserted line at
 *    fixed strides), commits again, and runs `git diff HEAD~1 HEAD`.
 * 2. Parse throughput (MB/s) of agt_diff_parse against libgit2's
 *    git_diff_from_buffer (linked directly) and `git apply --numstat`.
 * 3. Anchoring: 10,000 snippets (two consecutive new-side lines each, plus
 *    10% that match nowhere) on a 100,000-line cut of the same diff.
 * Prints the ratios. Usage: bench-diff [workdir] (default: a mkdtemp dir).
 */
#include <ftw.h>
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agenttools/diff.h"
#include "diff/diff_internal.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *read_all(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, fp) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(fp);
    if (b) {
        b[n] = '\0';
        *len = (size_t)n;
    }
    return b;
}

static int run(const char *cmd)
{
    int rc = system(cmd);
    if (rc != 0)
        fprintf(stderr, "bench-diff: command failed (%d): %s\n", rc, cmd);
    return rc;
}

static unsigned long file_counter;

/* Deterministic edit of every third regular text file: line n % 10 == 0 gets
 * a suffix, n % 37 == 0 is dropped, after n % 23 == 0 a line is inserted. */
static int edit_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)ftw;
    if (type != FTW_F || !S_ISREG(st->st_mode) || st->st_size == 0)
        return 0;
    if (file_counter++ % 3 != 0)
        return 0;
    size_t len;
    char *text = read_all(path, &len);
    if (!text)
        return 0;
    if (memchr(text, '\0', len)) {
        free(text);
        return 0;
    }
    FILE *out = fopen(path, "wb");
    if (!out) {
        free(text);
        return 0;
    }
    unsigned long n = 0;
    for (char *p = text, *e = text + len; p < e;) {
        char *nl = memchr(p, '\n', (size_t)(e - p));
        size_t l = nl ? (size_t)(nl - p) : (size_t)(e - p);
        n++;
        if (n % 37 != 0) {
            fwrite(p, 1, l, out);
            if (n % 10 == 0)
                fputs(" /* bench edit */", out);
            fputc('\n', out);
        }
        if (n % 23 == 0)
            fprintf(out, "/* bench insert %lu */\n", n);
        p = nl ? nl + 1 : e;
    }
    fclose(out);
    free(text);
    return 0;
}

static double best_of(int reps, double (*fn)(const char *, size_t, void *), const char *t, size_t n,
                      void *arg)
{
    double best = 1e30;
    for (int i = 0; i < reps; i++) {
        double s = fn(t, n, arg);
        if (s < best)
            best = s;
    }
    return best;
}

static double time_agt(const char *t, size_t n, void *arg)
{
    size_t *files = arg;
    double s = now_s();
    agt_diff *d = NULL;
    if (agt_diff_parse(&d, t, n) != AGT_OK) {
        fprintf(stderr, "agt_diff_parse: %s\n", agt_error_message());
        exit(1);
    }
    double e = now_s() - s;
    *files = agt_diff_file_count(d);
    agt_diff_free(d);
    return e;
}

static double time_git2(const char *t, size_t n, void *arg)
{
    size_t *files = arg;
    double s = now_s();
    git_diff *d = NULL;
    if (git_diff_from_buffer(&d, t, n) != 0) {
        fprintf(stderr, "git_diff_from_buffer: %s\n", git_error_last()->message);
        exit(1);
    }
    double e = now_s() - s;
    *files = git_diff_num_deltas(d);
    git_diff_free(d);
    return e;
}

static double time_git_apply(const char *t, size_t n, void *arg)
{
    (void)t;
    (void)n;
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "cd '%s' && git apply --numstat big.diff > /dev/null",
             (const char *)arg);
    double s = now_s();
    if (run(cmd) != 0)
        exit(1);
    return now_s() - s;
}

/* Appends a JSON string of the trimmed text to b. */
static void put_snippet(agti_buf *b, const agt_diff *d, const agti_diff_line *l1,
                        const agti_diff_line *l2)
{
    agti_buf s = AGTI_BUF_INIT;
    agti_buf_put(&s, d->text.ptr + l1->off, l1->len);
    agti_buf_putc(&s, '\n');
    agti_buf_put(&s, d->text.ptr + l2->off, l2->len);
    agti_diff_json_string(b, s.ptr, s.len);
    agti_buf_free(&s);
}

static void bench_anchor(const char *diff, size_t len)
{
    /* cut at the first file boundary after 100,000 hunk lines */
    agt_diff *full = NULL;
    agt_diff_parse(&full, diff, len);
    size_t cut = len;
    for (size_t i = 0; i < full->nfiles; i++) {
        const agti_diff_file *f = &full->files[i];
        if (f->first_line + f->nlines >= 100000) {
            cut = f->raw_end;
            break;
        }
    }
    agt_diff_free(full);
    agt_diff *d = NULL;
    if (agt_diff_parse(&d, diff, cut) != AGT_OK) {
        fprintf(stderr, "cut parse: %s\n", agt_error_message());
        exit(1);
    }
    /* 10,000 snippets: 9,000 pairs of consecutive new-side lines, 1,000 misses */
    agti_buf req = AGTI_BUF_INIT;
    agti_buf_putc(&req, '[');
    unsigned long long x = 88172645463325252ull;
    int made = 0;
    while (made < 10000) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        size_t fi = (size_t)(x % d->nfiles);
        const agti_diff_file *f = &d->files[fi];
        if (made)
            agti_buf_putc(&req, ',');
        agti_buf_puts(&req, "{\"path\":");
        agti_diff_json_string(&req, f->new_path ? f->new_path : f->old_path,
                              strlen(f->new_path ? f->new_path : f->old_path));
        agti_buf_puts(&req, ",\"existing_code\":");
        if (made % 10 == 9 || f->nlines < 2) {
            agti_buf_printf(&req, "\"no such line %d\\nanywhere %d\"", made, made);
        } else {
            uint32_t p = (uint32_t)((x >> 20) % (f->nlines - 1));
            const agti_diff_line *l1 = &d->lines[f->first_line + p];
            const agti_diff_line *l2 = &d->lines[f->first_line + p + 1];
            put_snippet(&req, d, l1, l2);
        }
        agti_buf_putc(&req, '}');
        made++;
    }
    agti_buf_putc(&req, ']');
    char *out = NULL;
    double s = now_s();
    int rc = agt_diff_anchor_batch(d, req.ptr, req.len, &out);
    double e = now_s() - s;
    if (rc != AGT_OK) {
        fprintf(stderr, "anchor batch: %s\n", agt_error_message());
        exit(1);
    }
    size_t anchored = 0, ambiguous = 0, unanchored = 0;
    for (const char *p = out; (p = strstr(p, "\"method\":\"")) != NULL; p++) {
        if (strncmp(p + 10, "unanchored", 10) == 0)
            unanchored++;
        else
            anchored++;
    }
    for (const char *p = out; (p = strstr(p, "\"ambiguous\":true")) != NULL; p++)
        ambiguous++;
    printf("anchoring: %d snippets on %zu files / %zu diff lines: %.3f s "
           "(%.0f snippets/s, index build included)\n",
           made, d->nfiles, d->nlines, e, made / e);
    printf("  results: %zu placed (%zu of them ambiguous), %zu unanchored; target < 1 s: %s\n",
           anchored - ambiguous, ambiguous, unanchored, e < 1.0 ? "met" : "NOT met");
    agt_free(out);
    agti_buf_free(&req);
    agt_diff_free(d);
}

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)type;
    (void)ftw;
    return remove(path);
}

int main(int argc, char **argv)
{
    char tmpl[] = "/tmp/bench-diff-XXXXXX";
    const char *dir = argc > 1 ? argv[1] : mkdtemp(tmpl);
    if (!dir) {
        perror("mkdtemp");
        return 1;
    }
    char cmd[8192], path[4096];
    snprintf(path, sizeof path, "%s/big.diff", dir);
    if (access(path, R_OK) != 0) {
        printf("building the test diff in %s (git repo with a copy of /usr/include)...\n", dir);
        snprintf(cmd, sizeof cmd,
                 "cd '%s' && git init -q repo && cp -r /usr/include repo/include && "
                 "rm -rf repo/include/node repo/include/llvm-14 && cd repo && "
                 "git -c core.autocrlf=false add -A && "
                 "git -c user.name=b -c user.email=b@b commit -q -m base",
                 dir);
        if (run(cmd) != 0)
            return 1;
        snprintf(path, sizeof path, "%s/repo/include", dir);
        nftw(path, edit_one, 32, FTW_PHYS);
        snprintf(cmd, sizeof cmd,
                 "cd '%s/repo' && git add -A && "
                 "git -c user.name=b -c user.email=b@b commit -q -m edit && "
                 "git diff HEAD~1 HEAD > ../big.diff",
                 dir);
        if (run(cmd) != 0)
            return 1;
        snprintf(path, sizeof path, "%s/big.diff", dir);
    }
    size_t len = 0;
    char *diff = read_all(path, &len);
    if (!diff) {
        perror(path);
        return 1;
    }
    double mb = (double)len / (1024.0 * 1024.0);
    size_t f1 = 0, f2 = 0;
    git_libgit2_init();
    /* interleaved, best of 7 each, so both see the same machine state */
    double t_agt = 1e30, t_git2 = 1e30;
    for (int i = 0; i < 7; i++) {
        double a = time_agt(diff, len, &f1), g = time_git2(diff, len, &f2);
        t_agt = a < t_agt ? a : t_agt;
        t_git2 = g < t_git2 ? g : t_git2;
    }
    double t_apply = best_of(3, time_git_apply, diff, len, (void *)dir);
    printf("diff: %.1f MiB, %zu files (libgit2 sees %zu)\n", mb, f1, f2);
    printf("parse agt_diff_parse:           %8.1f MB/s (%.3f s)\n", mb / t_agt, t_agt);
    printf("parse git_diff_from_buffer:     %8.1f MB/s (%.3f s)   ratio agt/libgit2 = %.2fx\n",
           mb / t_git2, t_git2, t_git2 / t_agt);
    printf("git apply --numstat (process):  %8.1f MB/s (%.3f s)   ratio agt/git-apply = %.2fx\n",
           mb / t_apply, t_apply, t_apply / t_agt);
    bench_anchor(diff, len);
    free(diff);
    git_libgit2_shutdown();
    if (argc <= 1)
        nftw(dir, rm_one, 32, FTW_DEPTH | FTW_PHYS);
    return 0;
}
