/* Helpers shared by the in-process benchmarks (bench/apply_patch,
 * bench/edit): a monotonic clock, medians, whole-file I/O, the work folder
 * and a fresh session. */
#ifndef AGT_BENCH_UTIL_H
#define AGT_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agenttools/agenttools.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of the n timings in t (sorts t). */
__attribute__((unused)) static double median(double *t, size_t n)
{
    qsort(t, n, sizeof t[0], cmp_d);
    return t[n / 2];
}

/* Writes data[0..len) to path or exits naming prog. */
__attribute__((unused)) static void put(const char *prog, const char *path, const char *data,
                                        size_t len)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(data, 1, len, f) != len) {
        fprintf(stderr, "%s: cannot write %s\n", prog, path);
        exit(1);
    }
    fclose(f);
}

/* The whole file at path (malloc'd, *len its size), or NULL. */
__attribute__((unused)) static char *get(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (b != NULL && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    if (b != NULL)
        *len = (size_t)n;
    return b;
}

/* The work folder: argv[1] when given, else a new "agt-bench-STEM-XXXXXX"
 * under TMPDIR. 0, or -1 when it cannot be made. */
__attribute__((unused)) static int work_dir(char *dir, size_t cap, int argc, char **argv,
                                            const char *stem)
{
    if (argc > 1) {
        snprintf(dir, cap, "%s", argv[1]);
        return 0;
    }
    const char *t = getenv("TMPDIR");
    snprintf(dir, cap, "%s/agt-bench-%s-XXXXXX", t && *t ? t : "/tmp", stem);
    return mkdtemp(dir) ? 0 : -1;
}

/* A new session over dir in yolo mode (*s freed first), made before a run's
 * clock starts: the original files put back between runs are a change
 * behind the session's back, which the editing tools' staleness check
 * refuses. 0, or -1. */
__attribute__((unused)) static int fresh_session(agt_session **s, agt_registry *reg,
                                                 const char *dir)
{
    agt_session_free(*s);
    *s = NULL;
    if (agt_session_new(s, reg, dir) != AGT_OK)
        return -1;
    agt_session_set_mode(*s, AGT_MODE_YOLO);
    return 0;
}

#endif
