/*
 * Unit tests of the cron engine: the shared corpus (TZ=UTC), daylight-saving
 * cases computed by hand for America/New_York and Europe/Berlin (through the
 * process TZ and through agt_cron_next_tz), descriptions, errors, internals.
 * Expected instants were checked with `TZ=<zone> date -d @<epoch>`.
 */
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agenttools/cron.h"
#include "core/core.h"
#include "cron/cron_internal.h"
#include "cron/zone.h"
#include "harness.h"

static void set_tz(const char *tz)
{
    setenv("TZ", tz, 1);
    tzset();
}

/* "YYYY-MM-DDTHH:MM:SS" read as UTC, via libc (independent of lib/cron). */
static int64_t iso(const char *s)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    if (sscanf(s, "%d-%d-%dT%d:%d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
               &tm.tm_min, &tm.tm_sec) != 6)
        return INT64_MIN;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return (int64_t)timegm(&tm);
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    agti_buf b = AGTI_BUF_INIT;
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        agti_buf_put(&b, chunk, n);
    fclose(f);
    *len = b.len;
    return agti_buf_detach(&b);
}

static void test_corpus(void)
{
    const char *dir = getenv("AGT_SHARED_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/corpus/cron/cases.json", dir ? dir : "../shared");
    size_t len = 0;
    char *text = read_file(path, &len);
    if (!T_CHECK(text != NULL, "corpus: read %s", path))
        return;
    json_t *cases = agti_json_parse(text, len, path);
    free(text);
    if (!T_CHECK(json_is_array(cases), "corpus: array"))
        return;
    T_EQ_INT(json_array_size(cases), 92, "corpus: 92 cases");
    size_t i;
    json_t *cs;
    json_array_foreach(cases, i, cs)
    {
        const char *expr = json_string_value(json_object_get(cs, "expr"));
        agt_cron *c = NULL;
        int rc = agt_cron_parse(&c, expr);
        if (json_is_true(json_object_get(cs, "error"))) {
            T_EQ_INT(rc, AGT_EPARSE, "corpus %zu: '%s' rejected (%s)", i, expr,
                     agt_error_message());
            T_CHECK(c == NULL, "corpus %zu: out untouched", i);
            continue;
        }
        T_EQ_INT(rc, AGT_OK, "corpus %zu: '%s' parses", i, expr);
        if (rc != AGT_OK) {
            t_diag("%s", agt_error_message());
            continue;
        }
        int64_t t = iso(json_string_value(json_object_get(cs, "from")));
        json_t *next = json_object_get(cs, "next");
        for (size_t k = 0; k < json_array_size(next); k++) {
            const char *want = json_string_value(json_array_get(next, k));
            int64_t got = 0;
            rc = agt_cron_next(c, t, &got);
            T_CHECK(rc == AGT_OK && got == iso(want), "corpus %zu: '%s' fire %zu = %s (got %lld)",
                    i, expr, k + 1, want, (long long)got);
            t = iso(want);
        }
        agt_cron_free(c);
    }
    json_decref(cases);
}

/* Checks a chain of fires: want[k] is the first fire strictly after want[k-1]
 * (want[0] after `from`), both through the process zone and by zone name. */
static void check_chain(const char *zone, const char *expr, const char *from,
                        const char *const *want, int n)
{
    agt_cron *c = NULL;
    if (!T_CHECK(agt_cron_parse(&c, expr) == AGT_OK, "%s '%s' parses", zone, expr))
        return;
    set_tz(zone);
    int64_t t = iso(from), t2 = iso(from);
    for (int k = 0; k < n; k++) {
        int64_t got = 0, got2 = 0;
        int rc = agt_cron_next(c, t, &got);
        T_CHECK(rc == AGT_OK && got == iso(want[k]),
                "%s '%s' after %s: fire %d = %sZ (process TZ; got %lld rc %d)", zone, expr, from,
                k + 1, want[k], (long long)got, rc);
        t = iso(want[k]);
        set_tz("UTC");
        rc = agt_cron_next_tz(c, t2, zone, &got2);
        T_CHECK(rc == AGT_OK && got2 == iso(want[k]),
                "%s '%s' after %s: fire %d = %sZ (agt_cron_next_tz; got %lld rc %d)", zone, expr,
                from, k + 1, want[k], (long long)got2, rc);
        t2 = iso(want[k]);
        set_tz(zone);
    }
    set_tz("UTC");
    agt_cron_free(c);
}

static void test_dst(void)
{
    /* America/New_York, 2026-03-08: at 02:00 EST (07:00Z) clocks jump to
     * 03:00 EDT; wall times 02:00..02:59 do not exist. Our rule: a skipped
     * wall time fires once, at the first instant after the gap = 03:00 EDT =
     * 07:00Z. The next day 02:30 EDT = 06:30Z. */
    const char *ny1[] = {"2026-03-08T07:00:00", "2026-03-09T06:30:00"};
    check_chain("America/New_York", "30 2 * * *", "2026-03-08T05:00:00", ny1, 2);
    /* 02:00 is skipped too; 03:00 itself is the same instant. */
    const char *ny2[] = {"2026-03-08T07:00:00"};
    check_chain("America/New_York", "0 2 * * *", "2026-03-08T05:00:00", ny2, 1);
    check_chain("America/New_York", "0 3 * * *", "2026-03-08T05:00:00", ny2, 1);
    /* `*` /15 from 01:45 EST (06:45Z): 02:00, 02:15, 02:30, 02:45 are skipped
     * and collapse into one fire at 07:00Z (03:00 EDT), then 03:15 EDT. */
    const char *ny3[] = {"2026-03-08T07:00:00", "2026-03-08T07:15:00"};
    check_chain("America/New_York", "*/15 * * * *", "2026-03-08T06:45:00", ny3, 2);

    /* America/New_York, 2026-11-01: at 02:00 EDT (06:00Z) clocks fall back to
     * 01:00 EST; 01:00..01:59 occur twice (05:00Z-05:59Z EDT, 06:00Z-06:59Z
     * EST). `30 1 * * *` fires once, at the first occurrence 01:30 EDT =
     * 05:30Z; the next fire is 2026-11-02 01:30 EST = 06:30Z. */
    const char *ny4[] = {"2026-11-01T05:30:00", "2026-11-02T06:30:00"};
    check_chain("America/New_York", "30 1 * * *", "2026-11-01T04:00:00", ny4, 2);
    /* `*` /15 from 01:40 EDT: 01:45 EDT (05:45Z), then the second pass is not
     * fired again: 02:00 EST = 07:00Z, 02:15 EST = 07:15Z. */
    const char *ny5[] = {"2026-11-01T05:45:00", "2026-11-01T07:00:00", "2026-11-01T07:15:00"};
    check_chain("America/New_York", "*/15 * * * *", "2026-11-01T05:40:00", ny5, 3);
    /* Starting inside the second pass (01:10 EST = 06:10Z): the wall times
     * 01:15..01:45 already had their (first) occurrence, so 02:00 EST. */
    const char *ny6[] = {"2026-11-01T07:00:00"};
    check_chain("America/New_York", "*/15 * * * *", "2026-11-01T06:10:00", ny6, 1);
    /* Hourly from 00:30 EDT: 01:00 EDT (05:00Z), 02:00 EST (07:00Z). */
    const char *ny7[] = {"2026-11-01T05:00:00", "2026-11-01T07:00:00"};
    check_chain("America/New_York", "0 * * * *", "2026-11-01T04:30:00", ny7, 2);
    /* 2040 is past the TZif transition table (ends 2037): the POSIX footer
     * rule EST5EDT,M3.2.0,M11.1.0 applies. 2040-03-01 is a Thursday, so the
     * second Sunday is March 11: 02:30 is skipped -> 03:00 EDT = 07:00Z. */
    const char *ny8[] = {"2040-03-11T07:00:00", "2040-03-12T06:30:00"};
    check_chain("America/New_York", "30 2 * * *", "2040-03-11T05:00:00", ny8, 2);

    /* Europe/Berlin, 2026-03-29: at 02:00 CET (01:00Z) clocks jump to 03:00
     * CEST. 02:30 is skipped -> 03:00 CEST = 01:00Z; next day 02:30 CEST =
     * 00:30Z. */
    const char *be1[] = {"2026-03-29T01:00:00", "2026-03-30T00:30:00"};
    check_chain("Europe/Berlin", "30 2 * * *", "2026-03-28T23:00:00", be1, 2);
    /* Europe/Berlin, 2026-10-25: at 03:00 CEST (01:00Z) clocks fall back to
     * 02:00 CET; 02:00..02:59 occur at 00:00Z-00:59Z (CEST) and 01:00Z-01:59Z
     * (CET). `30 2` fires at the first, 02:30 CEST = 00:30Z; next day 02:30
     * CET = 01:30Z. */
    const char *be2[] = {"2026-10-25T00:30:00", "2026-10-26T01:30:00"};
    check_chain("Europe/Berlin", "30 2 * * *", "2026-10-24T22:00:00", be2, 2);
    /* `0,30 * * * *` from 02:40 CEST (00:40Z): next wall time 03:00 = 03:00
     * CET = 02:00Z (02:00 and 02:30 CET are the repeated pass). */
    const char *be3[] = {"2026-10-25T02:00:00", "2026-10-25T02:30:00"};
    check_chain("Europe/Berlin", "0,30 * * * *", "2026-10-25T00:40:00", be3, 2);
}

/* Brute-force reference for zones whose DST shift is one hour (New York,
 * Berlin): walk UTC minutes; an instant t fires when its wall time matches
 * and is that wall time's first occurrence (the instant an hour earlier did
 * not show the same wall time), or when t ends a spring-forward gap and a
 * wall minute inside the skipped hour matches. */
static bool wall_matches(const agt_cron *c, int64_t wall)
{
    time_t tt = (time_t)wall;
    struct tm tm;
    gmtime_r(&tt, &tm);
    bool md = c->mdays >> tm.tm_mday & 1, wd = c->wdays >> tm.tm_wday & 1;
    bool day = c->day_or ? (md || wd) : (md && wd);
    return (c->minutes >> tm.tm_min & 1) && (c->hours >> tm.tm_hour & 1) &&
           (c->months >> (tm.tm_mon + 1) & 1) && day;
}

static long utc_offset(int64_t t)
{
    time_t tt = (time_t)t;
    struct tm tm;
    localtime_r(&tt, &tm);
    return tm.tm_gmtoff;
}

static int64_t brute_next(const agt_cron *c, int64_t after, int64_t limit)
{
    for (int64_t t = (after / 60 + 1) * 60; t <= limit; t += 60) {
        long o = utc_offset(t), prev = utc_offset(t - 60);
        int64_t wall = t + o;
        if (wall_matches(c, wall) && utc_offset(t - 3600) != o + 3600)
            return t;
        if (o - prev == 3600)
            for (int64_t w = wall - 3600; w < wall; w += 60)
                if (wall_matches(c, w))
                    return t;
    }
    return -1;
}

static void test_bruteforce(const char *zone, const char *const *transitions, int ntrans)
{
    static const char *const exprs[] = {
        "* * * * *",  "*/15 * * * *",   "30 * * * *",    "0 */2 * * *",
        "30 2 * * *", "0 1,2,3 * * *",  "59 1 * * *",    "*/20 0-3 * * 0",
        "0 2 * * *",  "45 1,2 * * sun", "*/7 1-2 * * *", "0 3 * mar,oct,nov *",
    };
    set_tz(zone);
    uint32_t rnd = 12345;
    int bad = 0, checked = 0;
    for (int k = 0; k < 240; k++) {
        rnd = rnd * 1103515245u + 12345u;
        const char *expr = exprs[(rnd >> 8) % (sizeof exprs / sizeof exprs[0])];
        rnd = rnd * 1103515245u + 12345u;
        int64_t base = iso(transitions[(rnd >> 8) % (uint32_t)ntrans]);
        rnd = rnd * 1103515245u + 12345u;
        int64_t after = base - 3 * 3600 + (int64_t)((rnd >> 4) % (6 * 3600));
        agt_cron *c = NULL;
        if (agt_cron_parse(&c, expr) != AGT_OK)
            continue;
        int64_t limit = after + 3 * 86400, want = brute_next(c, after, limit), got = 0, got_tz = 0;
        int rc = agt_cron_next(c, after, &got);
        int rc2 = agt_cron_next_tz(c, after, zone, &got_tz);
        bool ok = rc == AGT_OK && rc2 == AGT_OK && got == got_tz &&
                  (want >= 0 ? got == want : got > limit);
        checked++;
        if (!ok && bad++ < 5)
            t_diag("%s '%s' after %lld: brute %lld, next %lld, next_tz %lld", zone, expr,
                   (long long)after, (long long)want, (long long)got, (long long)got_tz);
        agt_cron_free(c);
    }
    T_CHECK(bad == 0 && checked == 240, "%s: %d random DST-window cases agree with brute force",
            zone, checked);
    set_tz("UTC");
}

static void expect_error(const char *expr, const char *msg_part)
{
    agt_cron *c = NULL;
    int rc = agt_cron_parse(&c, expr);
    T_EQ_INT(rc, AGT_EPARSE, "'%s' rejected", expr);
    T_CHECK(strstr(agt_error_message(), msg_part) != NULL, "'%s' message has \"%s\" (got \"%s\")",
            expr, msg_part, agt_error_message());
    agt_cron_free(c);
}

static void test_errors(void)
{
    expect_error("", "empty expression");
    expect_error(" \t ", "empty expression");
    expect_error("* * * *", "expected 5 fields");
    expect_error("* * * * * *", "got 6");
    expect_error("60 * * * *", "minute field: value 60 out of range 0-59 in '60'");
    expect_error("* 24 * * *", "hour field: value 24 out of range 0-23 in '24'");
    expect_error("* * 0 * *", "day-of-month field: value 0 out of range 1-31");
    expect_error("* * * 13 *", "month field: value 13 out of range 1-12");
    expect_error("* * * * 8", "day-of-week field: value 8 out of range 0-7");
    expect_error("*/0 * * * *", "minute field: step 0 in '*/0'");
    expect_error("*/x * * * *", "step must be a number in '*/x'");
    expect_error("*/ * * * *", "empty step in '*/'");
    expect_error("*/61 * * * *", "larger than the field's span 60");
    expect_error("a * * * *", "minute field: names are not allowed here");
    expect_error("* * * foo *", "unknown month name 'foo'");
    expect_error("* * * * mon-foo", "unknown day-of-week name 'foo' (use sun..sat) in 'mon-foo'");
    expect_error("* * * * monday", "unknown day-of-week name 'monday'");
    expect_error("* * * january *", "unknown month name 'january'");
    expect_error("-1 * * * *", "negative values are not allowed in '-1'");
    expect_error("1, * * * *", "empty list item in '1,'");
    expect_error(",1 * * * *", "empty list item in ',1'");
    expect_error("1-2-3 * * * *", "a range has exactly two ends in '1-2-3'");
    expect_error("1.5 * * * *", "unexpected character '.' in '1.5'");
    expect_error("5-1 * * * *", "reversed range 5-1 in '5-1'");
    expect_error("* * * * fri-mon", "reversed range 5-1 in 'fri-mon'");
    expect_error("* * * dec-jan *", "reversed range 12-1");
    /* Macros and the Quartz/cronie extensions are named as unsupported
     * (they read "expected 5 fields", "names are not allowed here ('L')",
     * "unexpected character '#'", which sent the model guessing). */
    expect_error("@daily", "cron: macros such as '@daily' are not supported; write the 5 fields "
                           "(minute hour day-of-month month day-of-week): '0 0 * * *'");
    expect_error("@Weekly", "such as '@weekly' are not supported; write the 5 fields (minute "
                            "hour day-of-month month day-of-week): '0 0 * * 0'");
    expect_error("@reboot", "cron: '@' macros are not supported; write the 5 fields");
    expect_error("0 0 L * *", "cron: day-of-month field: 'L' (the last day of the month) is not "
                              "supported (5-field cron: only *, values, ranges, lists and steps) "
                              "in 'L'");
    expect_error("0 0 1,15W * *", "day-of-month field: 'W' (the nearest weekday) is not "
                                  "supported (5-field cron: only *, values, ranges, lists and "
                                  "steps) in '1,15W'");
    expect_error("0 0 * * 1#2", "day-of-week field: '#' (the n-th weekday of the month) is not "
                                "supported");
    expect_error("0 0 * * 5L", "day-of-week field: 'L' after a weekday (its last one in the "
                               "month) is not supported");
    expect_error("0 0 ? * 1", "day-of-month field: '?' (no specific value) is a Quartz "
                              "extension; write '*'");
    expect_error("*-5 * * * *", "unexpected character '-' in '*-5'");
    expect_error("1\x01 * * * *", "minute field: unexpected byte 0x01");
    expect_error("* * * * 1\xc3\xa9", "day-of-week field: unexpected byte 0xc3");
    expect_error("1- * * * *", "missing value in '1-'");
    expect_error("99999999999999999999 * * * *", "out of range 0-59");
    /* Never fire: parse-time AGT_EPARSE. */
    expect_error("0 0 30 2 *", "can never fire");
    expect_error("0 0 31 4,6,9,11 *", "can never fire");
    expect_error("0 0 30,31 feb *", "can never fire");

    agt_cron *c = NULL;
    T_EQ_INT(agt_cron_parse(NULL, "* * * * *"), AGT_EINVAL, "parse: out NULL");
    T_EQ_INT(agt_cron_parse(&c, NULL), AGT_EINVAL, "parse: expr NULL");
    T_EQ_INT(agt_cron_parse(&c, "* * * * *"), AGT_OK, "parse every minute");
    int64_t out = 0;
    T_EQ_INT(agt_cron_next(NULL, 0, &out), AGT_EINVAL, "next: c NULL");
    T_EQ_INT(agt_cron_next(c, 0, NULL), AGT_EINVAL, "next: out NULL");
    T_EQ_INT(agt_cron_next(c, INT64_MAX, &out), AGT_EINVAL, "next: after too large");
    T_EQ_INT(agt_cron_next(c, INT64_MIN, &out), AGT_EINVAL, "next: after too small");
    T_EQ_INT(agt_cron_next_tz(c, 0, "../etc/passwd", &out), AGT_EINVAL, "next_tz: '..' refused");
    T_EQ_INT(agt_cron_next_tz(c, 0, "/etc/localtime", &out), AGT_EINVAL,
             "next_tz: absolute refused");
    T_EQ_INT(agt_cron_next_tz(c, 0, "Mars/Olympus_Mons", &out), AGT_ENOTFOUND,
             "next_tz: unknown zone");
    T_EQ_INT(agt_cron_next_tz(c, 0, "zone.tab", &out), AGT_EPARSE, "next_tz: not TZif");
    T_EQ_INT(agt_cron_next_tz(c, 0, "America/New_York", &out), AGT_OK, "next_tz: NY at epoch");
    T_EQ_INT(out, 60, "next_tz: every minute from 0 -> 60");
    T_EQ_INT(agt_cron_next_tz(c, 59, NULL, &out), AGT_OK, "next_tz: NULL zone = process");
    T_EQ_INT(out, 60, "next_tz: 59 -> 60");
    T_EQ_INT(agt_cron_next(c, -1, &out), AGT_OK, "next before the epoch");
    T_EQ_INT(out, 0, "next: -1 -> 0");
    T_EQ_INT(agt_cron_next(c, 253402300799, &out), AGT_OK, "next at 9999-12-31T23:59:59");
    T_EQ_INT(out, 253402300800, "next: year 10000");
    T_EQ_STR(agt_cron_expression(c), "* * * * *", "expression text");
    T_CHECK(agt_cron_expression(NULL) == NULL, "expression of NULL");
    char *d = NULL;
    T_EQ_INT(agt_cron_describe(NULL, &d), AGT_EINVAL, "describe: c NULL");
    T_EQ_INT(agt_cron_describe(c, NULL), AGT_EINVAL, "describe: out NULL");
    agt_cron_free(c);
    agt_cron_free(NULL);
}

static void test_semantics(void)
{
    struct {
        const char *expr, *from, *want;
    } cases[] = {
        /* Tabs and surrounding white space; names in ranges and lists. */
        {"\t0\t12 *  * sat-sun ", "2026-01-01T00:00:00", "2026-01-03T12:00:00"},
        /* a/n = a-max/n: minute 50, then next hour's 5. */
        {"5/15 * * * *", "2026-01-01T00:50:00", "2026-01-01T01:05:00"},
        /* Vixie: day-of-month starting with '*' -> AND with day-of-week:
         * odd days (*\/2 = 1,3,..,31) that are Mondays: 2026-01-05 Mon (odd). */
        {"0 0 */2 * 1", "2026-01-01T00:00:00", "2026-01-05T00:00:00"},
        /* Both restricted -> OR: Jan 2 (day 2) before the first Monday. */
        {"0 0 2 * 1", "2026-01-01T00:00:00", "2026-01-02T00:00:00"},
        /* Feb 29 on a Sunday with the AND rule: 2032-02-29 is a Sunday. */
        {"0 0 29 2 */7", "2026-01-01T00:00:00", "2032-02-29T00:00:00"},
        /* After 2088-02-29 (a Sunday) the next Sunday Feb 29 is 2128, a
         * 40-year gap (2100 is not a leap year); checked with Python's
         * datetime. */
        {"0 0 29 2 */7", "2088-03-01T00:00:00", "2128-02-29T00:00:00"},
        /* Seconds in `after` are dropped: strictly after 10:07:30 -> 10:08. */
        {"* * * * *", "2026-03-10T10:07:30", "2026-03-10T10:08:00"},
        /* Leading zeros and 7 = Sunday in a list. */
        {"05 07 * * 7", "2026-01-01T00:00:00", "2026-01-04T07:05:00"},
    };
    set_tz("UTC");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        agt_cron *c = NULL;
        int64_t got = 0;
        int rc = agt_cron_parse(&c, cases[i].expr);
        if (rc == AGT_OK)
            rc = agt_cron_next(c, iso(cases[i].from), &got);
        T_CHECK(rc == AGT_OK && got == iso(cases[i].want), "'%s' after %s -> %s (got %lld, %s)",
                cases[i].expr, cases[i].from, cases[i].want, (long long)got,
                rc ? agt_error_message() : "ok");
        agt_cron_free(c);
    }
    agt_cron *c = NULL;
    T_EQ_INT(agt_cron_parse(&c, " \t0\t12 *  * sat-sun "), AGT_OK, "parse with tabs");
    T_EQ_STR(agt_cron_expression(c), "0 12 * * sat-sun", "normalized text");
    agt_cron_free(c);
}

static void test_describe(void)
{
    struct {
        const char *expr, *want;
    } cases[] = {
        {"* * * * *", "every minute"},
        {"*/5 * * * *", "every 5 minutes"},
        {"*/15 * * * *", "every 15 minutes"},
        {"0 * * * *", "every hour"},
        {"15 * * * *", "every hour at minute 15"},
        {"0,30 * * * *", "every hour at minutes 0 and 30"},
        {"0 */2 * * *", "every 2 hours"},
        {"15 */6 * * *", "every 6 hours at minute 15"},
        {"0 9 * * *", "at 09:00 every day"},
        {"0 9 * * 1-5", "at 09:00 on weekdays"},
        {"0 9 * * mon-fri", "at 09:00 on weekdays"},
        {"30 14 1 * *", "at 14:30 on day 1 of the month"},
        {"0 0 1,15 * *", "at 00:00 on days 1 and 15 of the month"},
        {"0 0 1-7 * *", "at 00:00 on days 1 through 7 of the month"},
        {"0 0 1 1 *", "at 00:00 on day 1 of January"},
        {"0 10 * * 0,6", "at 10:00 on weekends"},
        {"0 10 * * sat,sun", "at 10:00 on weekends"},
        {"0 0 * * 0", "at 00:00 on Sunday"},
        {"0 0 * * 7", "at 00:00 on Sunday"},
        {"0 8 * * 1,3,5", "at 08:00 on Monday, Wednesday and Friday"},
        {"0 8 * * tue-thu", "at 08:00 on Tuesday through Thursday"},
        {"0 9,17 * * *", "at 09:00 and 17:00 every day"},
        {"0,30 9 * * 1-5", "at 09:00 and 09:30 on weekdays"},
        {"0 9-17 * * *", "every hour from 09:00 to 17:00"},
        {"*/15 9-17 * * 1-5", "every 15 minutes from 09:00 to 17:59 on weekdays"},
        {"* 3 * * *", "every minute from 03:00 to 03:59"},
        {"0 12 * jan,jul *", "at 12:00 every day in January and July"},
        {"0 0 * JUN-AUG *", "at 00:00 every day in June through August"},
        {"0 0 1 * 1", "at 00:00 on day 1 of the month or on Monday"},
        {"0 0 13 * 5", "at 00:00 on day 13 of the month or on Friday"},
        {"0 0 1 jan,apr *", "at 00:00 on day 1 of the month in January and April"},
        {"*/5 * * * 1-5", "every 5 minutes on weekdays"},
        {"0 * * dec *", "every hour in December"},
        /* Described from the parsed sets: duplicates once, in order,
         * overlapping ranges merged, Sunday after Saturday in a wrap. */
        {"0 0 * * 7,0", "at 00:00 on Sunday"},
        {"0 0 * * 0,7,1", "at 00:00 on Sunday and Monday"},
        {"15,15 * * * *", "every hour at minute 15"},
        {"0 0 1,1,15 * *", "at 00:00 on days 1 and 15 of the month"},
        {"0 0 1-10,5-15 * *", "at 00:00 on days 1 through 15 of the month"},
        {"0 0 1 1,1 *", "at 00:00 on day 1 of January"},
        {"0 12 * jul,jan,jan *", "at 12:00 every day in January and July"},
        {"0 8 * * 5,3,1", "at 08:00 on Monday, Wednesday and Friday"},
        {"0 8 * * 0,5-6", "at 08:00 on Friday through Sunday"},
        {"0 8 * * 5-7", "at 08:00 on Friday through Sunday"},
        {"0 0 * * 1-5,3", "at 00:00 on weekdays"},
        {"0 9-12,10 * * *", "every hour from 09:00 to 12:00"},
        {"0 0 2,3,4 * *", "at 00:00 on days 2 through 4 of the month"},
        /* Fallbacks: the normalized expression. */
        {"0 0 1 */3 *", "0 0 1 */3 *"},
        {"0 0 */2 * *", "0 0 */2 * *"},
        {"1-30/7 * * * *", "1-30/7 * * * *"},
        {"0,10,20 1,2,3 * * *", "0,10,20 1,2,3 * * *"},
        {"0  0   *  * *", "at 00:00 every day"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        agt_cron *c = NULL;
        char *d = NULL;
        int rc = agt_cron_parse(&c, cases[i].expr);
        if (rc == AGT_OK)
            rc = agt_cron_describe(c, &d);
        T_EQ_STR(d, cases[i].want, "describe '%s'", cases[i].expr);
        agt_free(d);
        agt_cron_free(c);
    }
}

static void test_internal(void)
{
    agt_cron *c = NULL;
    int64_t gap = 0;
    set_tz("UTC");
    T_EQ_INT(agt_cron_parse(&c, "*/5 * * * *"), AGT_OK, "parse */5");
    T_EQ_INT(agti_cron_gap_after(c, NULL, iso("2026-01-01T00:00:00"), &gap), AGT_OK, "gap */5");
    T_EQ_INT(gap, 300, "gap */5 = 300 s");
    agt_cron_free(c);
    T_EQ_INT(agt_cron_parse(&c, "0 9 * * 1-5"), AGT_OK, "parse weekdays");
    /* 2026-01-02 is a Friday: next fire Monday 2026-01-05 09:00 = 3 days. */
    T_EQ_INT(agti_cron_gap_after(c, NULL, iso("2026-01-02T09:00:00"), &gap), AGT_OK, "gap Friday");
    T_EQ_INT(gap, 259200, "gap Friday -> Monday = 259200 s");
    const char *why = NULL;
    T_CHECK(agti_cron_can_fire(c, &why), "weekdays can fire");
    agt_cron_free(c);

    /* Zones: POSIX rule and its offsets. */
    agti_zone *z = NULL;
    int32_t off = 0;
    T_EQ_INT(agti_zone_from_posix(&z, "CET-1CEST,M3.5.0,M10.5.0/3"), AGT_OK, "posix CET rule");
    T_EQ_INT(agti_zone_offset(z, iso("2026-03-29T00:59:59"), &off), AGT_OK, "offset before");
    T_EQ_INT(off, 3600, "CET before 01:00Z on 2026-03-29");
    T_EQ_INT(agti_zone_offset(z, iso("2026-03-29T01:00:00"), &off), AGT_OK, "offset after");
    T_EQ_INT(off, 7200, "CEST from 01:00Z on 2026-03-29");
    T_EQ_INT(agti_zone_offset(z, iso("2026-10-25T00:59:59"), &off), AGT_OK, "offset before end");
    T_EQ_INT(off, 7200, "CEST before 01:00Z on 2026-10-25");
    T_EQ_INT(agti_zone_offset(z, iso("2026-10-25T01:00:00"), &off), AGT_OK, "offset at end");
    T_EQ_INT(off, 3600, "CET from 01:00Z on 2026-10-25");
    agti_zone_free(z);
    /* Southern hemisphere: Australia/Sydney AEST-10AEDT,M10.1.0,M4.1.0/3.
     * 2026-01-15 is summer (+11), 2026-07-15 winter (+10). */
    T_EQ_INT(agti_zone_from_posix(&z, "AEST-10AEDT,M10.1.0,M4.1.0/3"), AGT_OK, "posix Sydney");
    agti_zone_offset(z, iso("2026-01-15T00:00:00"), &off);
    T_EQ_INT(off, 39600, "Sydney January +11");
    agti_zone_offset(z, iso("2026-07-15T00:00:00"), &off);
    T_EQ_INT(off, 36000, "Sydney July +10");
    agti_zone_free(z);
    z = NULL;
    T_EQ_INT(agti_zone_from_posix(&z, "<+0330>-3:30"), AGT_OK, "posix quoted name");
    agti_zone_offset(z, 0, &off);
    T_EQ_INT(off, 12600, "+03:30");
    agti_zone_free(z);
    T_EQ_INT(agti_zone_from_posix(&z, "EST5EDT,M13.1.0,M11.1.0"), AGT_EPARSE, "bad month");
    T_EQ_INT(agti_zone_from_posix(&z, "5EST"), AGT_EPARSE, "no name");
    const unsigned char junk[] = "TZif2\0\0\0";
    T_EQ_INT(agti_zone_from_tzif(&z, junk, sizeof junk, "junk"), AGT_EPARSE, "truncated TZif");
    T_EQ_INT(agti_zone_load(&z, "UTC"), AGT_OK, "load UTC");
    agti_zone_offset(z, iso("2026-07-01T00:00:00"), &off);
    T_EQ_INT(off, 0, "UTC offset 0");
    agti_zone_free(z);
    agti_zone_free(NULL);

    /* Calendar helpers against known dates. */
    T_EQ_INT(agti_days_from_civil(1970, 1, 1), 0, "epoch day");
    T_EQ_INT(agti_days_from_civil(2000, 3, 1), 11017, "2000-03-01");
    T_EQ_INT(agti_weekday(agti_days_from_civil(2026, 11, 29)), 0, "2026-11-29 is a Sunday");
    T_EQ_INT(agti_days_in_month(2100, 2), 28, "Feb 2100");
    T_EQ_INT(agti_days_in_month(2000, 2), 29, "Feb 2000");
}

/* Copies a file (a zone) to dst through a temp and a rename: a new inode,
 * as a tzdata upgrade does. */
static bool put_zone(const char *src, const char *dst)
{
    size_t len;
    char *data = read_file(src, &len);
    if (!data)
        return false;
    char *tmp = agti_aprintf("%s.new", dst);
    FILE *f = tmp ? fopen(tmp, "wb") : NULL;
    bool ok = f && fwrite(data, 1, len, f) == len;
    if (f)
        ok = fclose(f) == 0 && ok;
    ok = ok && rename(tmp, dst) == 0;
    free(tmp);
    free(data);
    return ok;
}

typedef struct zone_race {
    const agt_cron *c;
    int64_t after, fire_ny, fire_paris;
    int bad;
} zone_race;

static void *zone_reader(void *arg)
{
    zone_race *r = arg;
    for (int i = 0; i < 3000; i++) {
        int64_t out = 0;
        int rc = agt_cron_next_tz(r->c, r->after, "Test/Zone", &out);
        /* between the unlink-free rename steps the file always exists */
        if (rc != AGT_OK || (out != r->fire_ny && out != r->fire_paris))
            r->bad++;
    }
    return NULL;
}

/* agt_cron_next_tz reads a zone's TZif file once and keeps it (it was read
 * and parsed at every call: 13x the UTC path); a replaced file is read
 * again, a zone in use outlives its replacement, threads share the cache. */
static void test_zone_cache(void)
{
    char dir[] = "/tmp/agt-zone-XXXXXX";
    if (!mkdtemp(dir)) {
        T_CHECK(false, "zone cache: temp folder");
        return;
    }
    char *sub = agti_aprintf("%s/Test", dir), *zone = agti_aprintf("%s/Test/Zone", dir);
    T_CHECK(sub && zone && mkdir(sub, 0755) == 0, "zone cache: Test/ folder");
    T_CHECK(put_zone("/usr/share/zoneinfo/America/New_York", zone), "zone cache: NY as Test/Zone");
    const char *old_tzdir = getenv("TZDIR");
    char *saved = old_tzdir ? agti_strdup(old_tzdir) : NULL;
    setenv("TZDIR", dir, 1);
    agti_zone_cache_clear();

    agt_cron *c = NULL;
    T_EQ_INT(agt_cron_parse(&c, "0 9 * * *"), AGT_OK, "zone cache: parse");
    const int64_t after = iso("2026-07-01T00:00:00");
    const int64_t ny = iso("2026-07-01T13:00:00");    /* 09:00 EDT (-4) */
    const int64_t paris = iso("2026-07-01T07:00:00"); /* 09:00 CEST (+2) */
    int64_t out = 0;
    T_EQ_INT(agt_cron_next_tz(c, after, "Test/Zone", &out), AGT_OK, "zone cache: first call");
    T_EQ_INT(out, ny, "zone cache: 09:00 New York = 13:00Z");
    const agti_zone *a = NULL, *b = NULL;
    T_EQ_INT(agti_zone_acquire("Test/Zone", &a), AGT_OK, "zone cache: acquire");
    T_EQ_INT(agti_zone_acquire("Test/Zone", &b), AGT_OK, "zone cache: acquire again");
    T_CHECK(a != NULL && a == b, "zone cache: one parsed zone shared");
    agti_zone_release(b);

    /* the file is replaced (Paris): read again at the next check */
    agti_zone_cache_set_recheck(0);
    T_CHECK(put_zone("/usr/share/zoneinfo/Europe/Paris", zone), "zone cache: Paris as Test/Zone");
    T_EQ_INT(agt_cron_next_tz(c, after, "Test/Zone", &out), AGT_OK, "zone cache: after replace");
    T_EQ_INT(out, paris, "zone cache: replaced file read again: 09:00 Paris = 07:00Z");
    int32_t off = 0;
    T_EQ_INT(agti_zone_offset(a, after, &off), AGT_OK, "zone cache: held zone still usable");
    T_EQ_INT(off, -14400, "zone cache: the held zone is still New York (-4 h)");
    agti_zone_release(a);

    /* threads, while the file keeps changing between the two zones */
    zone_race r = {c, after, ny, paris, 0};
    pthread_t th[3];
    int started = 0;
    for (int i = 0; i < 3; i++)
        if (pthread_create(&th[i], NULL, zone_reader, &r) == 0)
            started++;
    for (int i = 0; i < 200; i++)
        put_zone(i % 2 ? "/usr/share/zoneinfo/Europe/Paris"
                       : "/usr/share/zoneinfo/America/New_York",
                 zone);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    T_EQ_INT(started, 3, "zone cache: 3 reader threads");
    T_EQ_INT(r.bad, 0, "zone cache: every threaded result is New York's or Paris's fire");

    /* the file is removed: not found, not served from the cache */
    unlink(zone);
    T_EQ_INT(agt_cron_next_tz(c, after, "Test/Zone", &out), AGT_ENOTFOUND,
             "zone cache: removed zone file is not found");

    agt_cron_free(c);
    agti_zone_cache_set_recheck(AGTI_ZONE_RECHECK_S);
    agti_zone_cache_clear();
    if (saved)
        setenv("TZDIR", saved, 1);
    else
        unsetenv("TZDIR");
    free(saved);
    rmdir(sub);
    rmdir(dir);
    free(sub);
    free(zone);
}

int main(void)
{
    set_tz("UTC");
    test_corpus();
    test_errors();
    test_semantics();
    test_describe();
    test_dst();
    const char *ny[] = {"2026-03-08T07:00:00", "2026-11-01T06:00:00", "2026-06-01T12:00:00"};
    test_bruteforce("America/New_York", ny, 3);
    const char *be[] = {"2026-03-29T01:00:00", "2026-10-25T01:00:00", "2026-01-15T12:00:00"};
    test_bruteforce("Europe/Berlin", be, 3);
    test_internal();
    test_zone_cache();
    return t_done();
}
