/*
 * Internal: proleptic Gregorian calendar arithmetic and time zones (the
 * process zone through localtime_r, or a TZif file read by hand, RFC 8536).
 */
#ifndef AGT_LIB_CRON_ZONE_H
#define AGT_LIB_CRON_ZONE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- calendar ------------------------------------------------------------
 * Proleptic Gregorian arithmetic on day counts since 1970-01-01 (H. Hinnant's
 * days_from_civil / civil_from_days, 400-year eras). Inline: the fire-time
 * search calls them for every month and day it visits. */

static inline int64_t agti_floordiv(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    return q;
}

static inline int64_t agti_floormod(int64_t a, int64_t b)
{
    return a - agti_floordiv(a, b) * b;
}

static inline bool agti_is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static inline int agti_days_in_month(int64_t y, int m)
{
    static const int len[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m == 2 && agti_is_leap(y))
        return 29;
    return len[m - 1];
}

static inline int64_t agti_days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = agti_floordiv(y, 400);
    int64_t yoe = y - era * 400;                         /* [0, 399] */
    int64_t mp = m > 2 ? m - 3 : m + 9;                  /* [0, 11] */
    int64_t doy = (153 * mp + 2) / 5 + d - 1;            /* [0, 365] */
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy; /* [0, 146096] */
    return era * 146097 + doe - 719468;
}

static inline void agti_civil_from_days(int64_t days, int64_t *y, int *m, int *d)
{
    int64_t z = days + 719468;
    int64_t era = agti_floordiv(z, 146097);
    int64_t doe = z - era * 146097; /* [0, 146096] */
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100); /* [0, 365] */
    int64_t mp = (5 * doy + 2) / 153;                      /* [0, 11] */
    int64_t dd = doy - (153 * mp + 2) / 5 + 1;
    int64_t mm = mp < 10 ? mp + 3 : mp - 9;
    *y = yoe + era * 400 + (mm <= 2);
    *m = (int)mm;
    *d = (int)dd;
}

static inline int agti_weekday(int64_t days)
{
    /* 1970-01-01 was a Thursday (4). */
    return (int)agti_floormod(days + 4, 7);
}

/* ---- zones (zone.c) ---------------------------------------------------- */

typedef struct agti_zone agti_zone;

/* Loads an IANA zone from $TZDIR or /usr/share/zoneinfo. Codes: AGT_EINVAL
 * (bad name), AGT_ENOTFOUND, AGT_EIO, AGT_EPARSE (not TZif), AGT_ENOMEM. */
int agti_zone_load(agti_zone **out, const char *name);
/* Parses TZif bytes (for tests and fuzzing); same codes as agti_zone_load. */
int agti_zone_from_tzif(agti_zone **out, const unsigned char *data, size_t len, const char *what);
/* Parses a POSIX TZ rule string such as "EST5EDT,M3.2.0,M11.1.0". */
int agti_zone_from_posix(agti_zone **out, const char *rule);
void agti_zone_free(agti_zone *z);

/* A shared, read-only zone for `name` from a process-wide cache: the TZif
 * file is read and parsed once, and checked again (device, inode, size,
 * mtime) at most once per AGTI_ZONE_RECHECK_S seconds, so a tzdata upgrade
 * is picked up without a restart. Thread-safe. The zone stays valid until
 * agti_zone_release, even if the cache replaces it meanwhile. Same codes as
 * agti_zone_load (errors are not cached). */
#define AGTI_ZONE_RECHECK_S 10
int agti_zone_acquire(const char *name, const agti_zone **out);
void agti_zone_release(const agti_zone *z);
/* Empties the cache (zones still acquired stay valid until released); for
 * tests and leak checkers. */
void agti_zone_cache_clear(void);
/* Tests: seconds between checks of a cached zone's file (default
 * AGTI_ZONE_RECHECK_S; 0 = check at every acquire). */
void agti_zone_cache_set_recheck(int seconds);

/* UTC offset in seconds (local = utc + offset) at instant `utc`. zone NULL
 * means the process zone (localtime_r). AGT_EINVAL when the system cannot
 * convert the instant. */
int agti_zone_offset(const agti_zone *z, int64_t utc, int32_t *off);

/* Like agti_zone_offset for a loaded zone (z not NULL), also giving the
 * interval [*lo, *hi) around utc over which the offset does not change
 * (INT64_MIN / INT64_MAX when unbounded). */
int agti_zone_span(const agti_zone *z, int64_t utc, int32_t *off, int64_t *lo, int64_t *hi);

/* Resolution of a local wall time `wall` (seconds, as if UTC) to an instant:
 * *n is 1 (unique: first), 2 (repeated by a fall-back: first < second) or 0
 * (skipped by a gap: first is the instant the gap ends). */
int agti_zone_resolve(const agti_zone *z, int64_t wall, int *n, int64_t *first, int64_t *second);

#endif
