/*
 * libagenttools — cron expressions: parse, compute fire times, describe.
 *
 * Follows Vixie cron (crontab(5)) for the classic 5 fields
 *
 *     minute hour day-of-month month day-of-week
 *     0-59   0-23 1-31         1-12  0-7 (0 and 7 are Sunday)
 *
 * separated by any run of spaces or tabs. Each field is a comma list of items;
 * an item is `*`, a value `a`, a range `a-b` (a <= b), or one of those with a
 * step: `* /n` (written without the space), `a-b/n` (a, a+n, a+2n, ... <= b:
 * a step counts from the start of its range) and `a/n` (same as `a-max/n`, as
 * in cronie and croniter). Months and weekdays may be written as exactly three
 * letters, case-insensitive (jan..dec, sun..sat), also inside ranges
 * (`mon-fri`, `JUN-AUG`; `sun` ending a range is day 7, so `sat-sun` works).
 * Days: when BOTH day-of-month and day-of-week are restricted (neither field
 * starts with `*`) a day matches when EITHER field matches; when either field
 * starts with `*` both must match (Vixie rule, so day-of-month `* /2` with
 * day-of-week `1` means "odd days that are Mondays").
 *
 * Rejected (AGT_EPARSE, with a message naming the field and the token):
 * empty or blank text, a field count other than 5, values out of range,
 * negative numbers, step 0, a step larger than the field's span, an empty or
 * non-numeric step, unknown or full names (`monday`), reversed ranges
 * (`5-1`, `fri-mon`), `1-2-3`, `1.5`, empty list items (`1,`), the `@daily`
 * macros and the `L`/`W`/`#` extensions, and expressions that can never fire
 * (`0 0 30 2 *`, `0 0 31 4,6,9,11 *`).
 *
 * Fire times are wall-clock minutes (seconds 00) in a time zone: the process
 * zone (TZ, as localtime_r() sees it) for agt_cron_next(), or a named IANA zone
 * read from the system's TZif files for agt_cron_next_tz(). Daylight saving:
 *  - a wall time that does not exist (skipped by a spring-forward gap) fires
 *    once, at the first instant after the gap (for America/New_York on
 *    2026-03-08, `30 2 * * *` fires at 03:00 EDT = 07:00 UTC); several skipped
 *    wall times collapse into that single fire;
 *  - a wall time that occurs twice (repeated by a fall-back) fires once, at its
 *    first occurrence; the second pass through the repeated hour fires nothing
 *    (`* /15 * * * *` fires 01:00, 01:15, 01:30, 01:45 EDT, then 02:00 EST),
 *    also when `after` itself lies in the second pass.
 * So every wall time maps to exactly one instant, and the result is the
 * earliest such instant strictly after `after`.
 */
#ifndef AGENTTOOLS_CRON_H
#define AGENTTOOLS_CRON_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A parsed cron expression. Immutable: may be shared across threads. */
typedef struct agt_cron agt_cron;

/**
 * Parses a 5-field cron expression (grammar in the comment at the top of
 * this header).
 *
 * @param out  receives the expression; free with agt_cron_free(). Untouched
 *             on failure.
 * @param expr NUL-terminated text; copied.
 * @return AGT_OK; AGT_EINVAL when out or expr is NULL; AGT_EPARSE when the
 *         text is not a valid expression or can never fire (the message names
 *         the field and the offending token, for example
 *         "cron: minute field: value 60 out of range 0-59 in '60'");
 *         AGT_ENOMEM.
 */
AGT_EXTERN int agt_cron_parse(agt_cron **out, const char *expr);

/**
 * The first fire time strictly after `after_unix_s`, in the process time zone
 * (the TZ environment variable as localtime_r() reads it; call tzset() after
 * changing TZ). Daylight-saving rules as described at the top of this header.
 *
 * @param c            the expression.
 * @param after_unix_s seconds since 1970-01-01T00:00:00Z; must lie in years
 *                     0001..9999.
 * @param out_unix_s   receives the fire time, seconds since the epoch (UTC).
 * @return AGT_OK; AGT_EINVAL (NULL argument, `after` out of range, or the
 *         system cannot convert the time); AGT_ENOTFOUND when nothing fires
 *         within 400 years (never for an expression agt_cron_parse accepted).
 */
AGT_EXTERN int agt_cron_next(const agt_cron *c, int64_t after_unix_s, int64_t *out_unix_s);

/**
 * Like agt_cron_next(), in an explicit IANA time zone (for example
 * "America/New_York", "Europe/Berlin", "UTC") read from the TZif file under
 * /usr/share/zoneinfo (or $TZDIR) together with its POSIX TZ rule for times
 * after the last listed transition (RFC 8536). Does not touch the process TZ,
 * so it is safe to call from several threads. Each zone's file is read once
 * per process and kept; it is checked again (device, inode, size, mtime) at
 * most every 10 seconds, so a tzdata upgrade takes effect without a restart.
 *
 * @param tz_name zone name: letters, digits, '_', '-', '+' and '/' only, no
 *                ".." component, not absolute. NULL or "" means the process
 *                zone (same as agt_cron_next()).
 * @return as agt_cron_next(), plus AGT_ENOTFOUND when the zone file does not
 *         exist, AGT_EINVAL for a malformed name, AGT_EPARSE when the file is
 *         not a valid TZif file, AGT_EIO when it cannot be read.
 */
AGT_EXTERN int agt_cron_next_tz(const agt_cron *c, int64_t after_unix_s, const char *tz_name,
                                int64_t *out_unix_s);

/**
 * Describes the schedule in English, for example "every 5 minutes",
 * "every hour", "at 09:00 on weekdays", "at 14:30 on day 1 of the month".
 * Grammar: TIME [DAYS] [in MONTHS], where
 *  - TIME is "every minute", "every N minutes", "every hour",
 *    "every hour at minute M", "every hour at minutes M1 and M2",
 *    "every N hours" (at minute 0), "every N hours at minute M",
 *    "every minute from HH:00 to HH:59", "every N minutes from HH:00 to HH:59",
 *    "every hour from HH:MM to HH:MM" (an hour range), or
 *    "at HH:MM[, HH:MM][ and HH:MM]" (24-hour clock, at most 8 times);
 *  - DAYS is "on day D of the month", "on days D1, D2 and D3 through D4 of the
 *    month", "on day D of MONTH" (one day, one month), "on weekdays"
 *    (Monday to Friday), "on weekends", "on Monday", "on Monday and
 *    Wednesday", "on Tuesday through Thursday", both day forms joined with
 *    " or " when both day fields are restricted, or "every day" after an
 *    "at HH:MM" time;
 *  - MONTHS is "January", "January and July", "June through August".
 * Each field is described from its set of values, not as written: every
 * value once, ascending, three or more consecutive values as a range
 * ("7,0" is "Sunday", "1-10,5-15" is "1 through 15"; with both Saturday and
 * Sunday in the set, Sunday comes last: "0,5-6" is "Friday through Sunday").
 * A shape this grammar does not cover (steps in the day or month fields, more
 * than 8 times, ...) is described by the normalized expression itself.
 *
 * @param out receives a NUL-terminated UTF-8 string; free with agt_free().
 * @return AGT_OK, AGT_EINVAL (NULL argument), AGT_ENOMEM.
 */
AGT_EXTERN int agt_cron_describe(const agt_cron *c, char **out);

/**
 * The normalized expression: the five fields as written, separated by one
 * space, without leading or trailing white space.
 *
 * @return borrowed from c (valid until agt_cron_free); NULL when c is NULL.
 */
AGT_EXTERN const char *agt_cron_expression(const agt_cron *c);

/** Frees an expression; NULL is a no-op. */
AGT_EXTERN void agt_cron_free(agt_cron *c);

#ifdef __cplusplus
}
#endif

#endif /* AGENTTOOLS_CRON_H */
