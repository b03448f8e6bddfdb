/*
 * Cron expressions: parsing into per-field bitmasks (Vixie cron semantics,
 * see include/agenttools/cron.h) and fire-time search. The search works on
 * local wall-clock calendar fields and skips whole months, days and hours
 * with bit scans; only the final wall time is mapped to an instant through
 * the time zone.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/core.h"
#include "cron/cron_internal.h"

/* Valid instants for `after`: 0001-01-01T00:00:00Z .. 9999-12-31T23:59:59Z. */
#define AFTER_MIN INT64_C(-62135596800)
#define AFTER_MAX INT64_C(253402300799)

static const char *const month_names[13] = {"",    "jan", "feb", "mar", "apr", "may", "jun",
                                            "jul", "aug", "sep", "oct", "nov", "dec"};
static const char *const wday_names[8] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat", ""};

typedef struct field_spec {
    const char *name;
    int min, max; /* accepted values */
    int star_max; /* upper end of `*` and of `a/n` */
    const char *const *names;
    int nnames;
} field_spec;

static const field_spec specs[AGTI_CRON_NFIELDS] = {
    {"minute", 0, 59, 59, NULL, 0},          {"hour", 0, 23, 23, NULL, 0},
    {"day-of-month", 1, 31, 31, NULL, 0},    {"month", 1, 12, 12, month_names, 13},
    {"day-of-week", 0, 7, 6, wday_names, 7},
};

static bool is_space(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f';
}

static bool is_digit(char ch)
{
    return ch >= '0' && ch <= '9';
}

static bool is_alpha(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

static char lower(char ch)
{
    return ch >= 'A' && ch <= 'Z' ? (char)(ch - 'A' + 'a') : ch;
}

/* Reports an error about one list item of a field. */
static int item_error(const field_spec *f, const char *item, size_t len, const char *fmt, ...)
    AGTI_PRINTF(4, 5);

static int item_error(const field_spec *f, const char *item, size_t len, const char *fmt, ...)
{
    agti_buf b = AGTI_BUF_INIT;
    va_list ap;
    agti_buf_printf(&b, "cron: %s field: ", f->name);
    va_start(ap, fmt);
    agti_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    agti_buf_printf(&b, " in '%.*s'", (int)len, item);
    if (b.oom) {
        agti_buf_free(&b);
        return agti_oom();
    }
    int rc = agti_error(AGT_EPARSE, "%s", agti_buf_cstr(&b));
    agti_buf_free(&b);
    return rc;
}

/* Names an unexpected byte; control and non-ASCII bytes in hex. */
static int unexpected(const field_spec *f, const char *item, size_t len, char ch)
{
    unsigned char u = (unsigned char)ch;
    if (u < 0x20 || u >= 0x7f)
        return item_error(f, item, len, "unexpected byte 0x%02x", u);
    return item_error(f, item, len, "unexpected character '%c'", ch);
}

/* Reads a value (number or 3-letter name) at *p (< end). */
static int parse_value(const field_spec *f, const char *item, size_t len, const char **p,
                       const char *end, int *out)
{
    const char *s = *p;
    if (s < end && is_digit(*s)) {
        long v = 0;
        while (s < end && is_digit(*s)) {
            if (v <= 100000)
                v = v * 10 + (*s - '0');
            s++;
        }
        if (v < f->min || v > f->max)
            return item_error(f, item, len, "value %.*s out of range %d-%d", (int)(s - *p), *p,
                              f->min, f->max);
        *out = (int)v;
        *p = s;
        return AGT_OK;
    }
    if (s < end && is_alpha(*s)) {
        while (s < end && is_alpha(*s))
            s++;
        size_t n = (size_t)(s - *p);
        if (!f->names)
            return item_error(f, item, len, "names are not allowed here ('%.*s')", (int)n, *p);
        if (n == 3) {
            for (int i = 0; i < f->nnames; i++) {
                const char *nm = f->names[i];
                if (nm[0] && lower((*p)[0]) == nm[0] && lower((*p)[1]) == nm[1] &&
                    lower((*p)[2]) == nm[2]) {
                    *out = i;
                    *p = s;
                    return AGT_OK;
                }
            }
        }
        return item_error(f, item, len, "unknown %s name '%.*s' (use %s)", f->name, (int)n, *p,
                          f->names == month_names ? "jan..dec" : "sun..sat");
    }
    if (s < end && *s == '-')
        return item_error(f, item, len, "negative values are not allowed");
    if (s >= end)
        return item_error(f, item, len, "missing value");
    return unexpected(f, item, len, *s);
}

/* Parses one comma-separated item [item, item+len) and sets its bits. */
static int parse_item(const field_spec *f, const char *item, size_t len, uint64_t *mask,
                      agti_cron_item *out)
{
    const char *p = item, *end = item + len;
    int lo, hi, step = 1, rc;
    bool star = false, range = false;
    if (len == 0)
        return item_error(f, item, len, "empty list item");
    if (*p == '*') {
        star = true;
        lo = f->min;
        hi = f->star_max;
        p++;
    } else {
        if ((rc = parse_value(f, item, len, &p, end, &lo)) != AGT_OK)
            return rc;
        hi = lo;
        if (p < end && *p == '-') {
            p++;
            bool hi_name = p < end && is_alpha(*p);
            if ((rc = parse_value(f, item, len, &p, end, &hi)) != AGT_OK)
                return rc;
            /* `sat-sun`, `mon-sun`: Sunday ends a week written with names. */
            if (f->max == 7 && hi_name && hi == 0 && lo > 0)
                hi = 7;
            if (lo > hi)
                return item_error(f, item, len, "reversed range %d-%d", lo, hi);
            range = true;
        }
    }
    if (p < end && *p == '/') {
        const char *s = ++p;
        long v = 0;
        while (p < end && is_digit(*p)) {
            if (v <= 100000)
                v = v * 10 + (*p - '0');
            p++;
        }
        if (p == s)
            return item_error(f, item, len, p < end ? "step must be a number" : "empty step");
        if (p < end)
            return item_error(f, item, len, "step must be a number");
        long span = f->max - f->min + 1;
        if (v == 0)
            return item_error(f, item, len, "step 0");
        if (v > span)
            return item_error(f, item, len, "step %.*s larger than the field's span %ld",
                              (int)(p - s), s, span);
        step = (int)v;
        if (!star && !range)
            hi = f->star_max > lo ? f->star_max : lo;
    }
    if (p < end) {
        if (*p == '-' && range)
            return item_error(f, item, len, "a range has exactly two ends");
        return unexpected(f, item, len, *p);
    }
    for (int v = lo; v <= hi; v += step)
        *mask |= UINT64_C(1) << (f->max == 7 && v == 7 ? 0 : v);
    out->lo = lo;
    out->hi = hi;
    out->step = step;
    out->star = star;
    return AGT_OK;
}

/* The Quartz/cronie extensions in the day fields (L, W, #, ?) are not part
 * of the grammar; a field holding one is refused naming the extension, so
 * the model rewrites the schedule instead of guessing at the syntax. */
static int extension_error(const field_spec *f, const char *text, size_t len)
{
    bool dom = f->min == 1 && f->max == 31, dow = f->max == 7;
    if (!dom && !dow)
        return AGT_OK;
    const char *what = NULL;
    for (size_t i = 0; i < len && what == NULL; i++) {
        char ch = text[i];
        if (ch == '?')
            what = "'?' (no specific value) is a Quartz extension; write '*'";
        else if (ch == '#' && dow)
            what = "'#' (the n-th weekday of the month) is not supported";
        else if ((ch == 'L' || ch == 'l') && dom)
            what = "'L' (the last day of the month) is not supported";
        else if ((ch == 'W' || ch == 'w') && dom)
            what = "'W' (the nearest weekday) is not supported";
        else if ((ch == 'L' || ch == 'l') && dow && i > 0 && text[i - 1] >= '0' &&
                 text[i - 1] <= '7')
            what = "'L' after a weekday (its last one in the month) is not supported";
    }
    if (what == NULL)
        return AGT_OK;
    return item_error(f, text, len, "%s (5-field cron: only *, values, ranges, lists and steps)",
                      what);
}

static int parse_field(const field_spec *f, const char *text, size_t len, uint64_t *mask,
                       agti_cron_field *field)
{
    const char *p = text, *end = text + len;
    int erc = extension_error(f, text, len);
    if (erc != AGT_OK)
        return erc;
    memset(field, 0, sizeof *field);
    field->star = len > 0 && text[0] == '*';
    *mask = 0;
    for (;;) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *e = comma ? comma : end;
        agti_cron_item item;
        if (e == p)
            return item_error(f, text, len, "empty list item");
        int rc = parse_item(f, p, (size_t)(e - p), mask, &item);
        if (rc != AGT_OK)
            return rc;
        if (field->nitems < AGTI_CRON_MAX_ITEMS)
            field->items[field->nitems] = item;
        field->nitems++;
        if (!comma)
            break;
        p = comma + 1;
    }
    return AGT_OK;
}

bool agti_cron_can_fire(const agt_cron *c, const char **why)
{
    if (c->day_or)
        return true; /* every month has every weekday */
    for (int m = 1; m <= 12; m++) {
        if (!(c->months >> m & 1))
            continue;
        int dim = m == 2 ? 29 : agti_days_in_month(2001, m);
        uint64_t days = (UINT64_C(1) << (dim + 1)) - 2;
        /* With the AND rule every (month, day) pair meets every weekday
         * somewhere in the 400-year cycle, so only the dates matter. */
        if (c->mdays & days)
            return true;
    }
    if (why)
        *why = "none of its days of the month exist in its months (February has at most 29 "
               "days; April, June, September and November have 30)";
    return false;
}

int agt_cron_parse(agt_cron **out, const char *expr)
{
    if (!out || !expr)
        return agti_error(AGT_EINVAL, "cron: %s is NULL", out ? "expr" : "out");
    const char *tok[AGTI_CRON_NFIELDS];
    size_t toklen[AGTI_CRON_NFIELDS];
    int n = 0;
    const char *p = expr;
    for (;;) {
        while (*p && is_space(*p))
            p++;
        if (!*p)
            break;
        const char *s = p;
        while (*p && !is_space(*p))
            p++;
        if (n < AGTI_CRON_NFIELDS) {
            tok[n] = s;
            toklen[n] = (size_t)(p - s);
        }
        n++;
    }
    if (n == 0)
        return agti_error(AGT_EPARSE, "cron: empty expression");
    if (tok[0][0] == '@') {
        /* Vixie's macros: name the 5 fields each one stands for. */
        static const char *const macros[][2] = {
            {"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
            {"@weekly", "0 0 * * 0"}, {"@daily", "0 0 * * *"},    {"@midnight", "0 0 * * *"},
            {"@hourly", "0 * * * *"}};
        for (size_t i = 0; i < sizeof macros / sizeof macros[0]; i++)
            if (n == 1 && toklen[0] == strlen(macros[i][0]) &&
                strncasecmp(tok[0], macros[i][0], toklen[0]) == 0)
                return agti_error(AGT_EPARSE,
                                  "cron: macros such as '%s' are not supported; write the 5 "
                                  "fields (minute hour day-of-month month day-of-week): '%s'",
                                  macros[i][0], macros[i][1]);
        return agti_error(AGT_EPARSE,
                          "cron: '@' macros are not supported; write the 5 fields (minute hour "
                          "day-of-month month day-of-week), for example '0 0 * * *' for daily, "
                          "in '%s'",
                          expr);
    }
    if (n != AGTI_CRON_NFIELDS)
        return agti_error(AGT_EPARSE,
                          "cron: expected 5 fields (minute hour day-of-month month "
                          "day-of-week), got %d in '%s'",
                          n, expr);

    agt_cron *c = calloc(1, sizeof *c);
    if (!c)
        return agti_oom();
    uint64_t mask[AGTI_CRON_NFIELDS];
    for (int i = 0; i < AGTI_CRON_NFIELDS; i++) {
        int rc = parse_field(&specs[i], tok[i], toklen[i], &mask[i], &c->fields[i]);
        if (rc != AGT_OK) {
            free(c);
            return rc;
        }
    }
    c->minutes = mask[AGTI_CRON_MINUTE];
    c->hours = (uint32_t)mask[AGTI_CRON_HOUR];
    c->mdays = (uint32_t)mask[AGTI_CRON_MDAY];
    c->months = (uint32_t)mask[AGTI_CRON_MONTH];
    c->wdays = (uint32_t)mask[AGTI_CRON_WDAY];
    c->day_or = !c->fields[AGTI_CRON_MDAY].star && !c->fields[AGTI_CRON_WDAY].star;
    for (int w = 0; w < 7; w++) {
        uint32_t m = 0;
        for (int d = 1; d <= 31; d++)
            if (c->wdays >> ((w + d - 1) % 7) & 1)
                m |= UINT32_C(1) << d;
        c->wday_by_first[w] = m;
    }

    agti_buf b = AGTI_BUF_INIT;
    for (int i = 0; i < AGTI_CRON_NFIELDS; i++) {
        if (i)
            agti_buf_putc(&b, ' ');
        agti_buf_put(&b, tok[i], toklen[i]);
    }
    if (b.oom) {
        agti_buf_free(&b);
        free(c);
        return agti_oom();
    }
    c->expr = agti_buf_detach(&b);
    if (!c->expr) {
        free(c);
        return agti_oom();
    }

    const char *why = NULL;
    if (!agti_cron_can_fire(c, &why)) {
        int rc = agti_error(AGT_EPARSE, "cron: expression '%s' can never fire: %s", c->expr, why);
        agt_cron_free(c);
        return rc;
    }
    *out = c;
    return AGT_OK;
}

void agt_cron_free(agt_cron *c)
{
    if (!c)
        return;
    free(c->expr);
    free(c);
}

const char *agt_cron_expression(const agt_cron *c)
{
    return c ? c->expr : NULL;
}

/* Lowest set bit at or above `from` (from may be 64: none). */
static int next_bit(uint64_t mask, int from)
{
    if (from >= 64)
        return -1;
    uint64_t m = mask & (~UINT64_C(0) << from);
    return m ? __builtin_ctzll(m) : -1;
}

/* Days of month m of year y that match the day fields, as bits 1..31. */
static uint64_t month_days(const agt_cron *c, int64_t y, int m)
{
    int dim = agti_days_in_month(y, m);
    uint64_t len = (UINT64_C(1) << (dim + 1)) - 2;
    uint64_t md = c->mdays & len;
    uint64_t wd = c->wday_by_first[agti_weekday(agti_days_from_civil(y, m, 1))] & len;
    return c->day_or ? (md | wd) : (md & wd);
}

/* First matching wall-clock minute at or after `start` (minutes since
 * 1970-01-01T00:00 local). */
static int next_wall(const agt_cron *c, int64_t start, int64_t *out)
{
    int64_t days = agti_floordiv(start, 1440);
    int rest = (int)(start - days * 1440);
    int h = rest / 60, mi = rest % 60, m, d;
    int64_t y;
    agti_civil_from_days(days, &y, &m, &d);
    int64_t ylimit = y + AGTI_CRON_HORIZON_YEARS;
    while (y <= ylimit) {
        if (!(c->months >> m & 1)) {
            int nm = next_bit(c->months, m + 1);
            if (nm < 0) {
                y++;
                nm = next_bit(c->months, 1);
            }
            m = nm;
            d = 1;
            h = mi = 0;
            continue;
        }
        int nd = next_bit(month_days(c, y, m), d);
        if (nd < 0) {
            if (++m > 12) {
                m = 1;
                y++;
            }
            d = 1;
            h = mi = 0;
            continue;
        }
        if (nd != d) {
            d = nd;
            h = mi = 0;
        }
        int nh = next_bit(c->hours, h);
        if (nh < 0) {
            d++;
            h = mi = 0;
            continue;
        }
        if (nh != h) {
            h = nh;
            mi = 0;
        }
        int nmi = next_bit(c->minutes, mi);
        if (nmi < 0) {
            h++;
            mi = 0;
            continue;
        }
        *out = agti_days_from_civil(y, m, d) * 1440 + h * 60 + nmi;
        return AGT_OK;
    }
    return agti_error(AGT_ENOTFOUND, "cron: '%s' does not fire within %d years", c->expr,
                      AGTI_CRON_HORIZON_YEARS);
}

/* Instants showing a wall time w lie within MARGIN of it (offsets stay
 * within -25 h..+26 h). */
#define MARGIN (27 * 3600)

/* The common case, without agti_zone_resolve's probes: when no transition
 * can lie between `after` and every instant that could show w, w maps to
 * the one instant w - off. A loaded zone knows the span of `after`'s offset;
 * for the process zone two more probes check it, assuming (true of every zone
 * in use) that transitions are more than 4 days apart. Returns AGT_ENOTFOUND
 * when the general resolution is needed. */
static int fast_resolve(const agti_zone *zone, int64_t after, int32_t off, int64_t lo, int64_t hi,
                        int64_t w, int64_t *out)
{
    if (zone) {
        if (w - MARGIN >= lo && w + MARGIN < hi) {
            *out = w - off;
            return AGT_OK;
        }
        return AGT_ENOTFOUND;
    }
    int64_t from = w - MARGIN < after ? w - MARGIN : after;
    if (w + MARGIN - from > 4 * 86400)
        return AGT_ENOTFOUND;
    int32_t o1 = off, o2;
    /* When w - MARGIN >= after the window starts at `after`, whose offset is known. */
    if ((from < after && agti_zone_offset(NULL, from, &o1) != AGT_OK) ||
        agti_zone_offset(NULL, w + MARGIN, &o2) != AGT_OK || o1 != off || o2 != off)
        return AGT_ENOTFOUND;
    *out = w - off;
    return AGT_OK;
}

int agti_cron_next_in(const agt_cron *c, const agti_zone *zone, int64_t after, int64_t *out)
{
    if (!c || !out)
        return agti_error(AGT_EINVAL, "cron: %s is NULL", c ? "out" : "expression");
    if (after < AFTER_MIN || after > AFTER_MAX)
        return agti_error(AGT_EINVAL, "cron: time %lld is outside years 0001..9999",
                          (long long)after);
    int32_t off;
    int64_t lo = INT64_MAX, hi = INT64_MIN; /* empty: no known span */
    int rc =
        zone ? agti_zone_span(zone, after, &off, &lo, &hi) : agti_zone_offset(NULL, after, &off);
    if (rc != AGT_OK)
        return rc;
    int64_t start = agti_floordiv(after + off, 60) + 1;
    /* Each wall time maps to one instant (first occurrence; the end of a
     * gap), monotonically, so the first mapped instant after `after` is the
     * answer. A wall time after after's own can map to or before `after`
     * only right around a fall-back; a few steps pass it. */
    for (int i = 0; i < 4 * 1440; i++) {
        int64_t wm = 0, first = 0, second = 0;
        int n = 0;
        if ((rc = next_wall(c, start, &wm)) != AGT_OK)
            return rc;
        int64_t w = wm * 60;
        if (fast_resolve(zone, after, off, lo, hi, w, &first) == AGT_OK && first > after) {
            *out = first;
            return AGT_OK;
        }
        if ((rc = agti_zone_resolve(zone, w, &n, &first, &second)) != AGT_OK)
            return rc;
        if (first > after) {
            *out = first;
            return AGT_OK;
        }
        start = wm + 1;
    }
    return agti_error(AGT_ENOTFOUND, "cron: '%s': no fire time found after %lld", c->expr,
                      (long long)after);
}

int agti_cron_gap_after(const agt_cron *c, const agti_zone *zone, int64_t fire, int64_t *out_s)
{
    int64_t next;
    int rc = agti_cron_next_in(c, zone, fire, &next);
    if (rc != AGT_OK)
        return rc;
    if (!out_s)
        return agti_error(AGT_EINVAL, "cron: out is NULL");
    *out_s = next - fire;
    return AGT_OK;
}

int agt_cron_next(const agt_cron *c, int64_t after_unix_s, int64_t *out_unix_s)
{
    return agti_cron_next_in(c, NULL, after_unix_s, out_unix_s);
}

int agt_cron_next_tz(const agt_cron *c, int64_t after_unix_s, const char *tz_name,
                     int64_t *out_unix_s)
{
    if (!tz_name || !*tz_name)
        return agti_cron_next_in(c, NULL, after_unix_s, out_unix_s);
    if (!c || !out_unix_s)
        return agti_error(AGT_EINVAL, "cron: %s is NULL", c ? "out" : "expression");
    const agti_zone *z;
    int rc = agti_zone_acquire(tz_name, &z); /* parsed once per process */
    if (rc != AGT_OK)
        return rc;
    rc = agti_cron_next_in(c, z, after_unix_s, out_unix_s);
    agti_zone_release(z);
    return rc;
}
