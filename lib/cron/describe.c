/*
 * English descriptions of cron expressions ("every 5 minutes", "at 09:00 on
 * weekdays"). The grammar is documented with agt_cron_describe() in
 * include/agenttools/cron.h; shapes outside it fall back to the expression.
 */
#include <stdlib.h>

#include "core/core.h"
#include "cron/cron_internal.h"

static const char *const month_full[13] = {"",        "January",  "February", "March",  "April",
                                           "May",     "June",     "July",     "August", "September",
                                           "October", "November", "December"};
static const char *const wday_full[8] = {"Sunday",   "Monday", "Tuesday",  "Wednesday",
                                         "Thursday", "Friday", "Saturday", "Sunday"};

static bool field_full(const agti_cron_field *f)
{
    return f->nitems == 1 && f->items[0].star && f->items[0].step == 1;
}

/* `*` / `* /n` alone: returns n (1 for `*`), else 0. */
static int star_step(const agti_cron_field *f)
{
    return f->nitems == 1 && f->items[0].star ? f->items[0].step : 0;
}

/* Every item a value or a plain range (no `*`, no step), all kept. */
static bool plain_items(const agti_cron_field *f)
{
    if (f->nitems > AGTI_CRON_MAX_ITEMS)
        return false;
    for (int i = 0; i < f->nitems; i++)
        if (f->items[i].star || f->items[i].step != 1)
            return false;
    return true;
}

static bool single_values(const agti_cron_field *f)
{
    if (!plain_items(f))
        return false;
    for (int i = 0; i < f->nitems; i++)
        if (f->items[i].lo != f->items[i].hi)
            return false;
    return true;
}

static bool one_value(const agti_cron_field *f)
{
    return f->nitems == 1 && single_values(f);
}

static void put_separator(agti_buf *b, int i, int n)
{
    if (i == 0)
        return;
    agti_buf_puts(b, i == n - 1 ? " and " : ", ");
}

/* "1, 15 and 20 through 25" or with names. */
static void put_items(agti_buf *b, const agti_cron_field *f, const char *const *names)
{
    for (int i = 0; i < f->nitems; i++) {
        const agti_cron_item *it = &f->items[i];
        put_separator(b, i, f->nitems);
        if (names)
            agti_buf_puts(b, names[it->lo]);
        else
            agti_buf_printf(b, "%d", it->lo);
        if (it->hi != it->lo) {
            agti_buf_puts(b, " through ");
            if (names)
                agti_buf_puts(b, names[it->hi]);
            else
                agti_buf_printf(b, "%d", it->hi);
        }
    }
}

/* Rewrites a field of plain items (values and ranges, as written) from its
 * parsed set: each value once, ascending, maximal runs of three or more
 * values as one range ("1-10,5-15" -> 1 through 15, "7,0" -> 0). Weekdays
 * that contain both Saturday and Sunday count Sunday as 7, so a run wraps
 * ("0,5-6" -> Friday through Sunday). Returns false when more items than the
 * field holds would come out (the caller then describes by the expression). */
static bool canon_field(agti_cron_field *f, uint64_t set, int lo, int hi, bool wday)
{
    if (!plain_items(f) || (f->nitems == 1 && f->items[0].star))
        return true;
    if (wday && (set & 1) && (set >> 6 & 1) && hi == 6) {
        set = (set & ~(uint64_t)1) | (uint64_t)1 << 7;
        lo = 1;
        hi = 7;
    }
    int n = 0;
    for (int v = lo; v <= hi;) {
        if (!(set >> v & 1)) {
            v++;
            continue;
        }
        int e = v;
        while (e + 1 <= hi && (set >> (e + 1) & 1))
            e++;
        int parts = e - v >= 2 ? 1 : e - v + 1;
        if (n + parts > AGTI_CRON_MAX_ITEMS)
            return false;
        for (int k = 0; k < parts; k++) {
            agti_cron_item *it = &f->items[n++];
            it->lo = parts == 1 ? v : v + k;
            it->hi = parts == 1 ? e : v + k;
            it->step = 1;
            it->star = false;
        }
        v = e + 1;
    }
    f->nitems = n;
    return true;
}

/* Appends the time part; *at_time tells whether it was "at HH:MM...". */
static bool put_time(agti_buf *b, const agt_cron *c, bool *at_time)
{
    const agti_cron_field *mf = &c->fields[AGTI_CRON_MINUTE], *hf = &c->fields[AGTI_CRON_HOUR];
    int ms = star_step(mf), hs = star_step(hf);
    bool msingles = single_values(mf);
    *at_time = false;
    if (ms && hs == 1) {
        if (ms == 1)
            agti_buf_puts(b, "every minute");
        else
            agti_buf_printf(b, "every %d minutes", ms);
        return true;
    }
    if (msingles && hs) {
        if (hs == 1)
            agti_buf_puts(b, "every hour");
        else
            agti_buf_printf(b, "every %d hours", hs);
        if (c->minutes != 1) {
            agti_buf_puts(b, mf->nitems == 1 ? " at minute " : " at minutes ");
            put_items(b, mf, NULL);
        }
        return true;
    }
    if (hf->nitems == 1 && plain_items(hf)) {
        int lo = hf->items[0].lo, hi = hf->items[0].hi;
        if (ms) {
            if (ms == 1)
                agti_buf_puts(b, "every minute");
            else
                agti_buf_printf(b, "every %d minutes", ms);
            agti_buf_printf(b, " from %02d:00 to %02d:59", lo, hi);
            return true;
        }
        if (one_value(mf) && lo != hi) {
            int m = mf->items[0].lo;
            agti_buf_printf(b, "every hour from %02d:%02d to %02d:%02d", lo, m, hi, m);
            return true;
        }
    }
    if (msingles && single_values(hf)) {
        int n = __builtin_popcountll(c->minutes) * __builtin_popcount(c->hours);
        if (n > 8)
            return false;
        agti_buf_puts(b, "at ");
        int i = 0;
        for (int h = 0; h < 24; h++) {
            if (!(c->hours >> h & 1))
                continue;
            for (int m = 0; m < 60; m++) {
                if (!(c->minutes >> m & 1))
                    continue;
                put_separator(b, i++, n);
                agti_buf_printf(b, "%02d:%02d", h, m);
            }
        }
        *at_time = true;
        return true;
    }
    return false;
}

static bool put_days(agti_buf *b, const agt_cron *c, bool at_time)
{
    const agti_cron_field *df = &c->fields[AGTI_CRON_MDAY], *wf = &c->fields[AGTI_CRON_WDAY],
                          *mf = &c->fields[AGTI_CRON_MONTH];
    bool dfull = field_full(df), wfull = field_full(wf), mfull = field_full(mf);
    if ((!dfull && !plain_items(df)) || (!wfull && !plain_items(wf)) ||
        (!mfull && !plain_items(mf)))
        return false;
    if (!dfull && wfull && one_value(df) && one_value(mf)) {
        agti_buf_printf(b, " on day %d of %s", df->items[0].lo, month_full[mf->items[0].lo]);
        return true;
    }
    if (!dfull) {
        agti_buf_puts(b, one_value(df) ? " on day " : " on days ");
        put_items(b, df, NULL);
        agti_buf_puts(b, " of the month");
    }
    if (!wfull) {
        agti_buf_puts(b, dfull ? " on " : " or on ");
        if (c->wdays == 0x3e)
            agti_buf_puts(b, "weekdays");
        else if (c->wdays == 0x41)
            agti_buf_puts(b, "weekends");
        else
            put_items(b, wf, wday_full);
    }
    if (dfull && wfull && at_time)
        agti_buf_puts(b, " every day");
    if (!mfull) {
        agti_buf_puts(b, " in ");
        put_items(b, mf, month_full);
    }
    return true;
}

int agt_cron_describe(const agt_cron *c, char **out)
{
    if (!c || !out)
        return agti_error(AGT_EINVAL, "cron: %s is NULL", c ? "out" : "expression");
    /* Described from the parsed sets, not the items as written: "7,0" is
     * Sunday once. The copy shares expr with c, which is only read. */
    agt_cron d = *c;
    bool ok = canon_field(&d.fields[AGTI_CRON_MINUTE], d.minutes, 0, 59, false) &&
              canon_field(&d.fields[AGTI_CRON_HOUR], d.hours, 0, 23, false) &&
              canon_field(&d.fields[AGTI_CRON_MDAY], d.mdays, 1, 31, false) &&
              canon_field(&d.fields[AGTI_CRON_MONTH], d.months, 1, 12, false) &&
              canon_field(&d.fields[AGTI_CRON_WDAY], d.wdays, 0, 6, true);
    agti_buf b = AGTI_BUF_INIT;
    bool at_time;
    if (!ok || !put_time(&b, &d, &at_time) || !put_days(&b, &d, at_time)) {
        agti_buf_truncate(&b, 0);
        agti_buf_puts(&b, c->expr);
    }
    char *s = agti_buf_detach(&b);
    if (!s)
        return agti_oom();
    *out = s;
    return AGT_OK;
}
