/*
 * Internal interface of the cron engine, for the session-level scheduler
 * (CronCreate/CronList/CronDelete: jitter, coalescing) and for tests.
 * Never installed.
 */
#ifndef AGT_LIB_CRON_INTERNAL_H
#define AGT_LIB_CRON_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "agenttools/cron.h"
#include "cron/zone.h"

/* Items kept per field for agt_cron_describe(); a field with more items is
 * described by the expression text. */
#define AGTI_CRON_MAX_ITEMS 8

enum agti_cron_field_id {
    AGTI_CRON_MINUTE = 0,
    AGTI_CRON_HOUR,
    AGTI_CRON_MDAY,
    AGTI_CRON_MONTH,
    AGTI_CRON_WDAY,
    AGTI_CRON_NFIELDS
};

/* One list item as written: lo..hi every step. A single value has lo == hi
 * and step 1; `*` is min..max step 1, flagged star. Weekday 7 stays 7 here
 * (it is folded into 0 only in the bitmask). */
typedef struct agti_cron_item {
    int lo, hi, step;
    bool star;
} agti_cron_item;

typedef struct agti_cron_field {
    int nitems; /* number of items written (may exceed the array) */
    bool star;  /* field text starts with '*' (Vixie's DOM_STAR/DOW_STAR) */
    agti_cron_item items[AGTI_CRON_MAX_ITEMS];
} agti_cron_field;

struct agt_cron {
    uint64_t minutes; /* bit m: minute m (0..59) */
    uint32_t hours;   /* bit h: hour h (0..23) */
    uint32_t mdays;   /* bit d: day of month d (1..31) */
    uint32_t months;  /* bit m: month m (1..12) */
    uint32_t wdays;   /* bit w: weekday w (0 = Sunday .. 6); 7 folded into 0 */
    bool day_or;      /* both day fields restricted: a day matches if either does */
    /* wday_by_first[w]: bit d (1..31) set when day d of a month whose day 1 is
     * weekday w falls on a weekday in `wdays`. */
    uint32_t wday_by_first[7];
    agti_cron_field fields[AGTI_CRON_NFIELDS];
    char *expr; /* normalized text */
};

/* Fire-time search horizon: the Gregorian calendar repeats every 400 years,
 * so nothing found in 401 years means never. */
#define AGTI_CRON_HORIZON_YEARS 401

/* True when some date of the 400-year Gregorian cycle satisfies the month,
 * day-of-month and day-of-week fields (the time fields are never empty).
 * Sets *why (static text) to a reason when it returns false. */
bool agti_cron_can_fire(const agt_cron *c, const char **why);

/* First fire strictly after `after` in `zone` (NULL: process zone). Same codes
 * as agt_cron_next(). */
int agti_cron_next_in(const agt_cron *c, const agti_zone *zone, int64_t after, int64_t *out);

/* The gap in seconds between the fire time `fire` and the next one in `zone`
 * (NULL: process zone): the period the scheduler's jitter rule uses,
 * "up to min(10% of the period, 15 min)". For `* /5 * * * *` it is 300 s;
 * for `0 9 * * 1-5` it is 86400 s from Monday to Thursday and 259200 s from
 * Friday. Same codes as agt_cron_next(). */
int agti_cron_gap_after(const agt_cron *c, const agti_zone *zone, int64_t fire, int64_t *out_s);

#endif
