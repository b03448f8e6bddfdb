/*
 * bench-scale: the in-process rows of bench/scale/run, through the public
 * API only (agenttools/diff.h, cron.h, session.h). One mode and size per
 * process, so that bench/scale/run reads each size's own peak RSS (wait4).
 *
 *   bench-scale anchor LINES [REPS]   parse a change set of LINES diff lines
 *                                     (100 files' worth at 100,000), set the
 *                                     post-change content of its files and
 *                                     anchor LINES/10 comments in one
 *                                     agt_diff_anchor_batch call
 *   bench-scale cron N [REPS]         N cron expressions: parse all, the next
 *                                     fire over all of them (agt_cron_next
 *                                     for each, the earliest kept), the same
 *                                     in Europe/Berlin (agt_cron_next_tz)
 *   bench-scale session N [REPS]      N jobs in a session's scheduler:
 *                                     CronCreate calls (agt_session_dispatch),
 *                                     agt_session_next_deadline,
 *                                     agt_session_tick, agt_session_cron_list,
 *                                     agt_session_save / agt_session_restore
 *                                     into a fresh session, delete all
 *
 * Each operation runs REPS times (default 11) on fresh state; prints one
 * line per operation, "op <name> <median ms> <min ms>" (CPU time), then
 * "rss_before_kb <peak RSS after building the inputs>", and the check lines
 * ("check ..."), worked out from how the inputs were built, which
 * bench/scale/run compares before it reports a number.
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "agenttools/agenttools.h"

/* CPU time of this (single-threaded) process: on a busy machine, time spent
 * waiting for a core is left out, as in bench/cron. */
static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void report(const char *name, double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    printf("op %s %.3f %.3f\n", name, v[n / 2], v[0]);
}

static long peak_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static void die(const char *what, int rc)
{
    fprintf(stderr, "bench-scale: %s: %d %s\n", what, rc, agt_error_message());
    exit(1);
}

/* ---- text buffers ------------------------------------------------------ */

typedef struct {
    char *p;
    size_t n, cap;
} sbuf;

static void sb_add(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_add(sbuf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int m = vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
        va_end(ap);
        if (m >= 0 && (size_t)m < b->cap - b->n) {
            b->n += (size_t)m;
            return;
        }
        b->cap = b->cap ? b->cap * 2 : 1 << 16;
        b->p = realloc(b->p, b->cap);
        if (b->p == NULL) {
            perror("realloc");
            exit(1);
        }
    }
}

/* ---- anchoring ---------------------------------------------------------- *
 * File f (of nfiles) is FILE_LINES lines long after the change; hunk h
 * (HUNKS per file) replaces 8 lines by 11 at new line 1 + h * STRIDE + 3,
 * with 3 context lines either side: 25 diff lines a hunk, 40 hunks, 1,000
 * diff lines (plus 2 header lines) a file. Every line's text names its file
 * and its place, so a snippet matches one place only. Comments, one per 10
 * diff lines, in a fixed rotation of 20:
 *   12 hunk_new  (1-3 added lines, addressed to their file),
 *    2 hunk_old  (1-2 deleted lines),
 *    3 file      (2 lines between hunks, in the post-change content only),
 *    2 moved     (added lines of another file, addressed to this one),
 *    1 unanchored (text that is nowhere). */
#define HUNKS 40
#define STRIDE 60
#define FILE_LINES (HUNKS * STRIDE + 100)

static void new_line(sbuf *b, int f, int ln)
{
    sb_add(b, "    value_%d_%d = compute(state_%d, %d);\n", f, ln, f, ln * 7 % 1000);
}

static void old_line(sbuf *b, int f, int h, int k)
{
    sb_add(b, "    legacy_%d_%d_%d = previous(%d);\n", f, h, k, k);
}

/* new-file line number of added line k (0..10) of hunk h */
static int added_at(int h, int k)
{
    return 1 + h * STRIDE + 3 + k;
}

static void anchor_mode(long lines, int reps)
{
    int nfiles = (int)(lines / 1000);
    if (nfiles < 1)
        nfiles = 1;
    sbuf diff = {0}, comments = {0};
    sbuf *content = calloc((size_t)nfiles, sizeof *content);
    for (int f = 0; f < nfiles; f++) {
        sb_add(&diff, "diff --git a/src/mod%d/file%d.c b/src/mod%d/file%d.c\n", f % 10, f, f % 10,
               f);
        sb_add(&diff, "--- a/src/mod%d/file%d.c\n+++ b/src/mod%d/file%d.c\n", f % 10, f, f % 10, f);
        int shift = 0; /* new = old + 3 per earlier hunk */
        for (int h = 0; h < HUNKS; h++) {
            int nstart = 1 + h * STRIDE;
            sb_add(&diff, "@@ -%d,14 +%d,17 @@\n", nstart - shift, nstart);
            for (int k = 0; k < 3; k++) {
                sb_add(&diff, " ");
                new_line(&diff, f, nstart + k);
            }
            for (int k = 0; k < 8; k++) {
                sb_add(&diff, "-");
                old_line(&diff, f, h, k);
            }
            for (int k = 0; k < 11; k++) {
                sb_add(&diff, "+");
                new_line(&diff, f, added_at(h, k));
            }
            for (int k = 0; k < 3; k++) {
                sb_add(&diff, " ");
                new_line(&diff, f, nstart + 14 + k);
            }
            shift += 3;
        }
        for (int ln = 1; ln <= FILE_LINES; ln++)
            new_line(&content[f], f, ln);
    }
    long ncomments = lines / 10;
    long want[5] = {0}; /* hunk_new, hunk_old, file, moved, unanchored */
    sb_add(&comments, "[");
    for (long c = 0; c < ncomments; c++) {
        int f = (int)(c * 7919 % nfiles), h = (int)(c / 20 % HUNKS);
        int slot = (int)(c % 20);
        sbuf s = {0};
        int path_f = f;
        if (slot < 12) {
            int k = (int)(c % 9), n = 1 + (int)(c % 3);
            for (int i = 0; i < n; i++)
                new_line(&s, f, added_at(h, k + i));
            want[0]++;
        } else if (slot < 14) {
            old_line(&s, f, h, (int)(c % 7));
            old_line(&s, f, h, (int)(c % 7) + 1);
            want[1]++;
        } else if (slot < 17) {
            int ln = 1 + h * STRIDE + 30 + (int)(c % 20); /* between hunks */
            new_line(&s, f, ln);
            new_line(&s, f, ln + 1);
            want[2]++;
        } else if (slot < 19 && nfiles > 1) {
            path_f = (f + 1) % nfiles;
            new_line(&s, f, added_at(h, 4));
            want[3]++;
        } else {
            sb_add(&s, "    nowhere_%ld = absent(%ld);\n", c, c);
            want[4]++;
        }
        s.p[s.n - 1] = '\0'; /* no final newline */
        sb_add(&comments, "%s{\"path\":\"src/mod%d/file%d.c\",\"existing_code\":\"", c ? "," : "",
               path_f % 10, path_f);
        for (char *q = s.p; *q; q++)
            sb_add(&comments, *q == '\n' ? "\\n" : "%c", *q);
        sb_add(&comments, "\"}");
        free(s.p);
    }
    sb_add(&comments, "]");
    printf("rss_before_kb %ld\n", peak_kb());
    printf("check input %ld diff lines, %d files, %ld comments, %d content lines\n",
           (long)nfiles * (HUNKS * 25 + 2), nfiles, ncomments, nfiles * FILE_LINES);
    printf("check want hunk_new=%ld hunk_old=%ld file=%ld moved=%ld unanchored=%ld\n", want[0],
           want[1], want[2], want[3], want[4]);

    double *tp = calloc((size_t)reps, sizeof(double)), *tc = calloc((size_t)reps, sizeof(double)),
           *ta = calloc((size_t)reps, sizeof(double));
    for (int r = 0; r < reps; r++) {
        agt_diff *d = NULL;
        double t0 = now_ms();
        int rc = agt_diff_parse(&d, diff.p, diff.n);
        if (rc != AGT_OK)
            die("agt_diff_parse", rc);
        double t1 = now_ms();
        char path[64];
        for (int f = 0; f < nfiles; f++) {
            snprintf(path, sizeof path, "src/mod%d/file%d.c", f % 10, f);
            if ((rc = agt_diff_set_content(d, path, content[f].p, content[f].n)) != AGT_OK)
                die("agt_diff_set_content", rc);
        }
        double t2 = now_ms();
        char *out = NULL;
        if ((rc = agt_diff_anchor_batch(d, comments.p, comments.n, &out)) != AGT_OK)
            die("agt_diff_anchor_batch", rc);
        double t3 = now_ms();
        tp[r] = t1 - t0;
        tc[r] = t2 - t1;
        ta[r] = t3 - t2;
        if (r == 0) {
            json_t *a = json_loads(out, 0, NULL);
            long got[5] = {0}, ambiguous = 0;
            static const char *const m[5] = {"hunk_new", "hunk_old", "file", "moved", "unanchored"};
            for (size_t i = 0; i < json_array_size(a); i++) {
                json_t *o = json_array_get(a, i);
                const char *mm = json_string_value(json_object_get(o, "method"));
                ambiguous += json_is_true(json_object_get(o, "ambiguous"));
                for (int k = 0; k < 5; k++)
                    got[k] += mm && strcmp(mm, m[k]) == 0;
            }
            printf("check got  hunk_new=%ld hunk_old=%ld file=%ld moved=%ld unanchored=%ld "
                   "(ambiguous %ld, %zu results)\n",
                   got[0], got[1], got[2], got[3], got[4], ambiguous, json_array_size(a));
            json_decref(a);
        }
        agt_free(out);
        agt_diff_free(d);
    }
    report("parse", tp, reps);
    report("set_content", tc, reps);
    report("anchor_batch", ta, reps);
}

/* ---- cron ---------------------------------------------------------------- */

static char *expr_for(long i)
{
    char *e = malloc(64);
    int m = (int)(i % 60), h = (int)(i / 60 % 24), d = 1 + (int)(i / 1440 % 28);
    switch (i % 5) {
    case 0:
        snprintf(e, 64, "%d %d * * *", m, h);
        break;
    case 1:
        snprintf(e, 64, "%d %d * * 1-5", m, h);
        break;
    case 2:
        snprintf(e, 64, "%d %d %d * *", m, h, d);
        break;
    case 3:
        snprintf(e, 64, "*/%d %d-%d * * *", 2 + (int)(i % 29), h % 12, 12 + h % 12);
        break;
    default:
        snprintf(e, 64, "%d %d * %d mon", m, h, 1 + (int)(i % 12));
        break;
    }
    return e;
}

#define T0 1796022000LL /* 2026-11-30T07:00:00Z, a Monday */

static void cron_mode(long n, int reps)
{
    char **ex = calloc((size_t)n, sizeof *ex);
    for (long i = 0; i < n; i++)
        ex[i] = expr_for(i);
    agt_cron **c = calloc((size_t)n, sizeof *c);
    printf("rss_before_kb %ld\n", peak_kb());
    double *tp = calloc((size_t)reps, sizeof(double)), *tn = calloc((size_t)reps, sizeof(double)),
           *tz = calloc((size_t)reps, sizeof(double));
    int64_t first = 0, first_tz = 0;
    for (int r = 0; r < reps; r++) {
        double t0 = now_ms();
        for (long i = 0; i < n; i++) {
            int rc = agt_cron_parse(&c[i], ex[i]);
            if (rc != AGT_OK)
                die(ex[i], rc);
        }
        double t1 = now_ms();
        int64_t after = T0 + r * 3600, best = INT64_MAX, v;
        for (long i = 0; i < n; i++) {
            if (agt_cron_next(c[i], after, &v) == AGT_OK && v < best)
                best = v;
        }
        double t2 = now_ms();
        int64_t best_tz = INT64_MAX;
        for (long i = 0; i < n; i++) {
            if (agt_cron_next_tz(c[i], after, "Europe/Berlin", &v) == AGT_OK && v < best_tz)
                best_tz = v;
        }
        double t3 = now_ms();
        if (r == 0) {
            first = best;
            first_tz = best_tz;
        }
        tp[r] = t1 - t0;
        tn[r] = t2 - t1;
        tz[r] = t3 - t2;
        for (long i = 0; i < n; i++)
            agt_cron_free(c[i]);
    }
    printf("check earliest after %lld: %lld (process TZ), %lld (Europe/Berlin)\n", (long long)T0,
           (long long)first, (long long)first_tz);
    report("parse_all", tp, reps);
    report("next_fire_all", tn, reps);
    report("next_fire_all_tz", tz, reps);
}

static int64_t clock_ms = T0 * 1000;
static int64_t fixed_clock(void *p)
{
    (void)p;
    return clock_ms;
}

static agt_session *new_session(agt_registry *reg, const char *ws)
{
    agt_session *s = NULL;
    int rc = agt_session_new(&s, reg, ws);
    if (rc != AGT_OK)
        die("agt_session_new", rc);
    agt_session_set_mode(s, AGT_MODE_YOLO);
    agt_session_set_clock(s, fixed_clock, NULL);
    return s;
}

static void session_mode(long n, int reps)
{
    agt_registry *reg = NULL;
    char ws[] = "/tmp/bench-scale-XXXXXX";
    if (mkdtemp(ws) == NULL || agt_registry_new(&reg) != AGT_OK ||
        agt_registry_load_builtin(reg, "chat") != AGT_OK)
        die("set-up", -1);
    printf("rss_before_kb %ld\n", peak_kb());
    double *t[7];
    for (int k = 0; k < 7; k++)
        t[k] = calloc((size_t)reps, sizeof(double));
    long created = 0;
    char first_error[512] = "";
    for (int r = 0; r < reps; r++) {
        agt_session *s = new_session(reg, ws);
        double t0 = now_ms();
        created = 0;
        for (long i = 0; i < n; i++) {
            char args[160], *e = expr_for(i);
            snprintf(args, sizeof args,
                     "{\"cron\":\"%s\",\"prompt\":\"check job %ld\",\"recurring\":true}", e, i);
            free(e);
            agt_result *res = NULL;
            int rc = agt_session_dispatch(s, "c", "CronCreate", args, &res);
            if (rc != AGT_OK)
                die("dispatch CronCreate", rc);
            if (agt_result_is_error(res)) {
                if (first_error[0] == '\0')
                    snprintf(first_error, sizeof first_error, "job %ld: %s", i + 1,
                             agt_result_text(res));
            } else {
                created++;
            }
            agt_result_free(res);
        }
        double t1 = now_ms();
        int64_t dl = 0;
        agt_session_set_idle(s, 1); /* cron fires count only while idle */
        agt_session_next_deadline(s, -1, &dl);
        double t2 = now_ms();
        char *ev = NULL;
        agt_session_tick(s, -1, &ev); /* nothing is due at the creation instant */
        double t3 = now_ms();
        char *list = NULL;
        agt_session_cron_list(s, &list);
        double t4 = now_ms();
        char *saved = NULL;
        int rc = agt_session_save(s, &saved);
        if (rc != AGT_OK)
            die("agt_session_save", rc);
        double t5 = now_ms();
        agt_session *s2 = new_session(reg, ws);
        if ((rc = agt_session_restore(s2, saved, strlen(saved))) != AGT_OK)
            die("agt_session_restore", rc);
        double t6 = now_ms();
        json_t *a = json_loads(list, 0, NULL);
        for (size_t i = 0; i < json_array_size(a); i++)
            agt_session_cron_delete(s2,
                                    json_string_value(json_object_get(json_array_get(a, i), "id")));
        double t7 = now_ms();
        if (r == 0) {
            char *left = NULL;
            agt_session_cron_list(s2, &left);
            printf("check created %ld of %ld; listed %zu; events at creation %s; deadline %lld "
                   "s after now; after deleting all: %s\n",
                   created, n, json_array_size(a), ev, (long long)(dl / 1000 - T0), left);
            if (first_error[0])
                printf("check first refusal: %s\n", first_error);
            agt_free(left);
        }
        json_decref(a);
        double v[7] = {t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t6 - t5, t7 - t6};
        for (int k = 0; k < 7; k++)
            t[k][r] = v[k];
        agt_free(ev);
        agt_free(list);
        agt_free(saved);
        agt_session_free(s2);
        agt_session_free(s);
    }
    static const char *const names[7] = {"create_all", "next_deadline", "tick",      "cron_list",
                                         "save",       "restore",       "delete_all"};
    for (int k = 0; k < 7; k++)
        report(names[k], t[k], reps);
    agt_registry_free(reg);
    rmdir(ws);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fputs("usage: bench-scale anchor|cron|session N [REPS]\n", stderr);
        return 2;
    }
    long n = strtol(argv[2], NULL, 10);
    int reps = argc > 3 ? atoi(argv[3]) : 11;
    if (n <= 0 || reps <= 0)
        return 2;
    if (strcmp(argv[1], "anchor") == 0)
        anchor_mode(n, reps);
    else if (strcmp(argv[1], "cron") == 0)
        cron_mode(n, reps);
    else if (strcmp(argv[1], "session") == 0)
        session_mode(n, reps);
    else
        return 2;
    return 0;
}
