/*
 * Next-fire throughput of the cron engine against Debian's python3-croniter
 * on the same expressions (the corpus's valid ones plus common schedules),
 * in the same run, in UTC and in America/New_York (ours through the public
 * agt_cron_next_tz; croniter with a zoneinfo start). Known differences:
 * croniter 1.3.5 skips March 1 after February 21 for `0 0 * /10 * *` (day 1,
 * 11, 21, 31), and in a zone with daylight saving, a fire reached across a
 * change of offset keeps the old offset (`0 12 * jan,jul *` in New York
 * fires on 2026-07-01 at 11:00 EDT, then at 12:00; `0 9 * * *` fires at
 * 08:00 and 09:00 EDT on 2026-03-08), so its chains that cross one end
 * fires short of ours; the unit tests check ours minute by minute
 * (tests/unit/cron).
 * Prints fires/s of both, the ratios, and how many final fire times agree.
 * Rates use CPU time (this process, and the Python process for croniter),
 * so a busy machine skews them less.
 *
 *   meson compile -C build bench-cron     or    ./bench_cron [C-fires-per-expr]
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agenttools/cron.h"
#include "core/core.h"

static const char *const common[] = {
    "* * * * *",         "*/5 * * * *",
    "*/15 * * * *",      "0 * * * *",
    "0 */2 * * *",       "0 9 * * *",
    "0 9 * * 1-5",       "30 14 1 * *",
    "0 0 * * 0",         "0 0 1 1 *",
    "0,30 9-17 * * 1-5", "15 3 * * sun",
    "0 12 1,15 * *",     "*/10 8-18 * * mon-fri",
    "0 0 1 */3 *",       "45 23 28-31 * *",
    "0 6 * * 6,0",       "0 0 13 * 5",
    "0 4 8-14 * 1",      "0 0 29 2 *",
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *py_script = "import sys, json, time\n"
                               "from datetime import datetime, timezone\n"
                               "from zoneinfo import ZoneInfo\n"
                               "from croniter import croniter\n"
                               "exprs = json.load(open(sys.argv[1])); n = int(sys.argv[2])\n"
                               "start = datetime(2026, 1, 1, tzinfo=timezone.utc)\n"
                               "start = start.astimezone(ZoneInfo(sys.argv[3]))\n"
                               "last = []\n"
                               "t0 = time.process_time()\n"
                               "for e in exprs:\n"
                               "    it = croniter(e, start)\n"
                               "    v = 0\n"
                               "    for _ in range(n):\n"
                               "        v = it.get_next(float)\n"
                               "    last.append(int(v))\n"
                               "dt = time.process_time() - t0\n"
                               "print(len(exprs) * n, dt)\n"
                               "for v in last: print(v)\n";

/* croniter in a child process on the same expressions and chains, in zone
 * `zone`: prints its rate, our rate's ratio to it and how many last fires
 * agree with `last`. 0 when croniter ran. */
static int run_croniter(json_t *list, int n_py, const char *zone, const int64_t *last, size_t nexpr,
                        double our_rate)
{
    char jpath[] = "/tmp/bench-cron-XXXXXX", spath[] = "/tmp/bench-cron-py-XXXXXX";
    int jfd = mkstemp(jpath), sfd = mkstemp(spath);
    if (jfd < 0 || sfd < 0)
        return 1;
    char *dump = json_dumps(list, JSON_COMPACT);
    if (!dump || write(jfd, dump, strlen(dump)) < 0 || write(sfd, py_script, strlen(py_script)) < 0)
        return 1;
    free(dump);
    close(jfd);
    close(sfd);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s %s %d %s", spath, jpath, n_py, zone);
    FILE *p = popen(cmd, "r");
    long py_fires = 0;
    double py_dt = 0;
    size_t agree = 0;
    if (p && fscanf(p, "%ld %lf", &py_fires, &py_dt) == 2) {
        for (size_t i = 0; i < nexpr; i++) {
            long long v;
            if (fscanf(p, "%lld", &v) != 1)
                break;
            if (v == last[i])
                agree++;
            else if (i - agree < 3)
                printf("  %s: differs from croniter: '%s' (ours %lld, croniter %lld)\n", zone,
                       json_string_value(json_array_get(list, i)), (long long)last[i], v);
        }
    }
    int st = p ? pclose(p) : -1;
    unlink(jpath);
    unlink(spath);
    if (st != 0 || py_fires == 0 || py_dt <= 0) {
        printf("  croniter (%s): failed to run (/usr/bin/python3 with python3-croniter)\n", zone);
        return 1;
    }
    double rate_py = (double)py_fires / py_dt;
    printf("  croniter get_next (%s): %12.0f fires/s; ours / croniter %.1fx; last fire after %d "
           "steps agrees on %zu of %zu expressions\n",
           zone, rate_py, our_rate / rate_py, n_py, agree, nexpr);
    return 0;
}

int main(int argc, char **argv)
{
    int n_c = argc > 1 ? atoi(argv[1]) : 20000;
    int n_py = 200; /* chain length, as croniter computes it */
    setenv("TZ", "UTC", 1);
    tzset();

    /* Expressions: corpus (valid ones) + common. */
    json_t *list = json_array();
    const char *dir = getenv("AGT_SHARED_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/corpus/cron/cases.json", dir ? dir : "../shared");
    json_error_t jerr;
    json_t *cases = json_load_file(path, 0, &jerr);
    size_t i;
    json_t *cs;
    if (!cases)
        fprintf(stderr, "bench-cron: cannot read %s (%s); common expressions only\n", path,
                jerr.text);
    json_array_foreach(cases, i, cs)
    {
        if (!json_is_true(json_object_get(cs, "error")))
            json_array_append(list, json_object_get(cs, "expr"));
    }
    for (i = 0; i < sizeof common / sizeof common[0]; i++)
        json_array_append_new(list, json_string(common[i]));
    json_decref(cases);
    size_t nexpr = json_array_size(list);

    agt_cron **crons = calloc(nexpr, sizeof *crons);
    int64_t *last = calloc(nexpr, sizeof *last);
    if (!crons || !last)
        return 1;
    for (i = 0; i < nexpr; i++) {
        const char *e = json_string_value(json_array_get(list, i));
        if (agt_cron_parse(&crons[i], e) != AGT_OK) {
            fprintf(stderr, "bench-cron: '%s': %s\n", e, agt_error_message());
            return 1;
        }
    }

    const int64_t start = 1767225600; /* 2026-01-01T00:00:00Z */
    double t0 = now_s();
    long fires = 0;
    for (i = 0; i < nexpr; i++) {
        int64_t t = start;
        for (int k = 0; k < n_c; k++) {
            /* Restart every n_py fires: the same chains croniter computes
             * (and yearly schedules stay within years 0001..9999). */
            if (k % n_py == 0)
                t = start;
            if (agt_cron_next(crons[i], t, &t) != AGT_OK) {
                fprintf(stderr, "bench-cron: %s\n", agt_error_message());
                return 1;
            }
            fires++;
        }
    }
    double dt_c = now_s() - t0;
    double rate_c = (double)fires / dt_c;

    /* The same chains in a named zone through the public call (DST rules
     * from the TZif file, read once per process and cached). */
    const char *zone = "America/New_York";
    t0 = now_s();
    long f2 = 0;
    for (i = 0; i < nexpr; i++) {
        int64_t t = start;
        for (int k = 0; k < n_c; k++) {
            if (k % n_py == 0)
                t = start;
            if (agt_cron_next_tz(crons[i], t, zone, &t) != AGT_OK) {
                fprintf(stderr, "bench-cron: %s\n", agt_error_message());
                return 1;
            }
            f2++;
        }
    }
    double rate_tz = (double)f2 / (now_s() - t0);
    int64_t *last_tz = calloc(nexpr, sizeof *last_tz);
    if (!last_tz)
        return 1;
    for (i = 0; i < nexpr; i++) {
        int64_t t = start, u = start;
        for (int k = 0; k < n_py; k++) {
            agt_cron_next(crons[i], t, &t);
            agt_cron_next_tz(crons[i], u, zone, &u);
        }
        last[i] = t;
        last_tz[i] = u;
    }

    printf("cron next-fire throughput, %zu expressions (corpus + common), CPU time\n", nexpr);
    printf("  libagenttools agt_cron_next (TZ=UTC):        %12.0f fires/s (%ld fires)\n", rate_c,
           fires);
    printf("  libagenttools agt_cron_next_tz (%s): %12.0f fires/s\n", zone, rate_tz);
    printf("  cost of a named zone / UTC:                  %12.2fx (target <= 2x)\n",
           rate_c / rate_tz);
    int st = 0;
    st |= run_croniter(list, n_py, "UTC", last, nexpr, rate_c);
    st |= run_croniter(list, n_py, zone, last_tz, nexpr, rate_tz);
    free(last_tz);
    for (i = 0; i < nexpr; i++)
        agt_cron_free(crons[i]);
    free(crons);
    free(last);
    json_decref(list);
    return st;
}
