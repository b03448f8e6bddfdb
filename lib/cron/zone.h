/*
 * Internal: proleptic Gregorian calendar arithmetic and time zones (the
 * process zone through localtime_r, or a TZif file read by hand, RFC 8536).
 */
#ifndef AGT_LIB_CRON_ZONE_H
#define AGT_LIB_CRON_ZONE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- calendar (civil.c) ------------------------------------------------ */

bool agti_is_leap(int64_t y);
/* Days in month m (1..12) of year y. */
int agti_days_in_month(int64_t y, int m);
/* Days since 1970-01-01 of y-m-d (m 1..12, d 1..31); any year. */
int64_t agti_days_from_civil(int64_t y, int m, int d);
/* Inverse of agti_days_from_civil. */
void agti_civil_from_days(int64_t days, int64_t *y, int *m, int *d);
/* Weekday of a day count: 0 = Sunday .. 6 = Saturday. */
int agti_weekday(int64_t days);
/* Floor division and modulo for possibly negative a (b > 0). */
int64_t agti_floordiv(int64_t a, int64_t b);
int64_t agti_floormod(int64_t a, int64_t b);

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

/* UTC offset in seconds (local = utc + offset) at instant `utc`. zone NULL
 * means the process zone (localtime_r). AGT_EINVAL when the system cannot
 * convert the instant. */
int agti_zone_offset(const agti_zone *z, int64_t utc, int32_t *off);

/* Resolution of a local wall time `wall` (seconds, as if UTC) to an instant:
 * *n is 1 (unique: first), 2 (repeated by a fall-back: first < second) or 0
 * (skipped by a gap: first is the instant the gap ends). */
int agti_zone_resolve(const agti_zone *z, int64_t wall, int *n, int64_t *first, int64_t *second);

#endif
