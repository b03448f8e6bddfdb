/*
 * Time zones for fire-time computation: the process zone (localtime_r and
 * tm_gmtoff), or an IANA zone read from a TZif file (RFC 8536) plus its POSIX
 * TZ footer rule (POSIX.1-2017 section 8.3, with the RFC 8536 extension of
 * transition hours -167..167). Reading the file ourselves avoids setenv("TZ")
 * and its races with other threads.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "core/core.h"
#include "cron/zone.h"

/* One end of a daylight-saving period in a POSIX TZ rule. */
typedef struct rule_date {
    char kind; /* 'J' Julian 1..365 without Feb 29, 'N' zero-based 0..365, 'M' month.week.day */
    int n, m, w, d;
    int32_t time; /* seconds after local midnight, -167h..167h */
} rule_date;

typedef struct posix_tz {
    int32_t std_off; /* UTC offsets: local = utc + off */
    int32_t dst_off;
    bool has_dst;
    rule_date start, end;
} posix_tz;

struct agti_zone {
    int64_t *trans; /* transition instants, ascending */
    uint8_t *ttype; /* type index per transition */
    size_t ntrans;
    int32_t *toff; /* UTC offset per type */
    size_t ntypes;
    bool has_rule;
    posix_tz rule;
    size_t refs; /* cache users (agti_zone_acquire); 0 = not shared */
};

void agti_zone_free(agti_zone *z)
{
    if (!z)
        return;
    free(z->trans);
    free(z->ttype);
    free(z->toff);
    free(z);
}

/* ---- POSIX TZ rules ---------------------------------------------------- */

static bool parse_num(const char **p, int max, int *out)
{
    const char *s = *p;
    int v = 0;
    if (*s < '0' || *s > '9')
        return false;
    while (*s >= '0' && *s <= '9') {
        v = v * 10 + (*s - '0');
        if (v > max)
            return false;
        s++;
    }
    *p = s;
    *out = v;
    return true;
}

/* [+-]hh[:mm[:ss]] with hh <= max_h; returns seconds. */
static bool parse_hms(const char **p, int max_h, int32_t *out)
{
    int sign = 1, h = 0, m = 0, s = 0;
    if (**p == '+' || **p == '-') {
        sign = **p == '-' ? -1 : 1;
        (*p)++;
    }
    if (!parse_num(p, max_h, &h))
        return false;
    if (**p == ':') {
        (*p)++;
        if (!parse_num(p, 59, &m))
            return false;
        if (**p == ':') {
            (*p)++;
            if (!parse_num(p, 59, &s))
                return false;
        }
    }
    *out = (int32_t)(sign * (h * 3600 + m * 60 + s));
    return true;
}

static bool parse_name(const char **p)
{
    const char *s = *p;
    if (*s == '<') {
        s++;
        while (*s && *s != '>')
            s++;
        if (*s != '>' || s == *p + 1)
            return false;
        *p = s + 1;
        return true;
    }
    while ((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z'))
        s++;
    if (s == *p)
        return false;
    *p = s;
    return true;
}

static bool parse_date(const char **p, rule_date *r)
{
    r->time = 7200;
    if (**p == 'J') {
        (*p)++;
        r->kind = 'J';
        if (!parse_num(p, 365, &r->n) || r->n < 1)
            return false;
    } else if (**p == 'M') {
        (*p)++;
        r->kind = 'M';
        if (!parse_num(p, 12, &r->m) || r->m < 1 || **p != '.')
            return false;
        (*p)++;
        if (!parse_num(p, 5, &r->w) || r->w < 1 || **p != '.')
            return false;
        (*p)++;
        if (!parse_num(p, 6, &r->d))
            return false;
    } else {
        r->kind = 'N';
        if (!parse_num(p, 365, &r->n))
            return false;
    }
    if (**p == '/') {
        (*p)++;
        if (!parse_hms(p, 167, &r->time))
            return false;
    }
    return true;
}

static bool parse_posix(const char *s, posix_tz *tz)
{
    int32_t v;
    memset(tz, 0, sizeof *tz);
    if (!parse_name(&s) || !parse_hms(&s, 24, &v))
        return false;
    tz->std_off = -v;
    if (*s == '\0')
        return true;
    if (!parse_name(&s))
        return false;
    tz->has_dst = true;
    tz->dst_off = tz->std_off + 3600;
    if (*s != ',' && *s != '\0') {
        if (!parse_hms(&s, 24, &v))
            return false;
        tz->dst_off = -v;
    }
    if (*s == '\0') {
        /* POSIX leaves the default rule to the implementation; glibc and
         * tzcode use the US rule. */
        tz->start = (rule_date){'M', 0, 3, 2, 0, 7200};
        tz->end = (rule_date){'M', 0, 11, 1, 0, 7200};
        return true;
    }
    if (*s != ',')
        return false;
    s++;
    if (!parse_date(&s, &tz->start) || *s != ',')
        return false;
    s++;
    if (!parse_date(&s, &tz->end))
        return false;
    return *s == '\0';
}

/* Local midnight (as a day count) of the rule date in year y. */
static int64_t rule_day(const rule_date *r, int64_t y)
{
    int64_t jan1 = agti_days_from_civil(y, 1, 1);
    if (r->kind == 'J')
        return jan1 + r->n - 1 + (agti_is_leap(y) && r->n >= 60 ? 1 : 0);
    if (r->kind == 'N')
        return jan1 + r->n;
    int64_t first = agti_days_from_civil(y, r->m, 1);
    int wd1 = agti_weekday(first);
    int day = 1 + (r->d - wd1 + 7) % 7 + (r->w - 1) * 7;
    while (day > agti_days_in_month(y, r->m))
        day -= 7;
    return first + day - 1;
}

static int32_t posix_offset(const posix_tz *tz, int64_t t)
{
    if (!tz->has_dst)
        return tz->std_off;
    int64_t y;
    int m, d;
    agti_civil_from_days(agti_floordiv(t + tz->std_off, 86400), &y, &m, &d);
    int64_t start = rule_day(&tz->start, y) * 86400 + tz->start.time - tz->std_off;
    int64_t end = rule_day(&tz->end, y) * 86400 + tz->end.time - tz->dst_off;
    bool dst;
    if (start < end)
        dst = t >= start && t < end;
    else
        dst = !(t >= end && t < start);
    return dst ? tz->dst_off : tz->std_off;
}

/* The offset at t and the interval [*lo, *hi) around t over which it holds:
 * between the neighbouring rule transitions of the years around t. */
static void posix_span(const posix_tz *tz, int64_t t, int32_t *off, int64_t *lo, int64_t *hi)
{
    *lo = INT64_MIN;
    *hi = INT64_MAX;
    if (!tz->has_dst) {
        *off = tz->std_off;
        return;
    }
    int64_t y;
    int m, d, last = -1; /* kind of the latest transition <= t: 0 start, 1 end */
    agti_civil_from_days(agti_floordiv(t + tz->std_off, 86400), &y, &m, &d);
    for (int64_t yy = y - 1; yy <= y + 1; yy++) {
        int64_t e[2] = {rule_day(&tz->start, yy) * 86400 + tz->start.time - tz->std_off,
                        rule_day(&tz->end, yy) * 86400 + tz->end.time - tz->dst_off};
        for (int k = 0; k < 2; k++) {
            if (e[k] <= t && e[k] >= *lo) {
                *lo = e[k];
                last = k;
            }
            if (e[k] > t && e[k] < *hi)
                *hi = e[k];
        }
    }
    if (last < 0)
        *off = posix_offset(tz, t);
    else
        *off = last == 0 ? tz->dst_off : tz->std_off;
}

int agti_zone_from_posix(agti_zone **out, const char *rule)
{
    posix_tz tz;
    if (!out || !rule)
        return agti_error(AGT_EINVAL, "zone: NULL argument");
    if (!parse_posix(rule, &tz))
        return agti_error(AGT_EPARSE, "zone: invalid POSIX TZ rule '%s'", rule);
    agti_zone *z = calloc(1, sizeof *z);
    if (!z)
        return agti_oom();
    z->has_rule = true;
    z->rule = tz;
    *out = z;
    return AGT_OK;
}

/* ---- TZif -------------------------------------------------------------- */

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static int64_t be64(const unsigned char *p)
{
    return (int64_t)((uint64_t)be32(p) << 32 | be32(p + 4));
}

typedef struct tzif_header {
    char version;
    size_t isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt;
} tzif_header;

static bool read_header(const unsigned char *p, size_t len, tzif_header *h)
{
    if (len < 44 || memcmp(p, "TZif", 4) != 0)
        return false;
    h->version = (char)p[4];
    h->isutcnt = be32(p + 20);
    h->isstdcnt = be32(p + 24);
    h->leapcnt = be32(p + 28);
    h->timecnt = be32(p + 32);
    h->typecnt = be32(p + 36);
    h->charcnt = be32(p + 40);
    return h->typecnt >= 1 && h->typecnt <= 256 && h->timecnt <= 100000 && h->leapcnt <= 100000 &&
           h->charcnt <= 100000 && h->isutcnt <= 256 && h->isstdcnt <= 256;
}

static size_t block_size(const tzif_header *h, size_t tsize)
{
    return h->timecnt * tsize + h->timecnt + h->typecnt * 6 + h->charcnt +
           h->leapcnt * (tsize + 4) + h->isstdcnt + h->isutcnt;
}

int agti_zone_from_tzif(agti_zone **out, const unsigned char *data, size_t len, const char *what)
{
    tzif_header h;
    size_t tsize = 4;
    const unsigned char *p = data;
    if (!out || !data)
        return agti_error(AGT_EINVAL, "zone: NULL argument");
    if (!read_header(p, len, &h))
        return agti_error(AGT_EPARSE, "zone %s: not a TZif file (bad header)", what);
    if (h.version >= '2') {
        size_t skip = 44 + block_size(&h, 4);
        if (skip > len)
            return agti_error(AGT_EPARSE, "zone %s: truncated TZif file", what);
        p += skip;
        len -= skip;
        if (!read_header(p, len, &h))
            return agti_error(AGT_EPARSE, "zone %s: bad TZif v2 header", what);
        tsize = 8;
    }
    size_t need = 44 + block_size(&h, tsize);
    if (need > len)
        return agti_error(AGT_EPARSE, "zone %s: truncated TZif data", what);

    agti_zone *z = calloc(1, sizeof *z);
    if (!z)
        return agti_oom();
    z->ntrans = h.timecnt;
    z->ntypes = h.typecnt;
    z->trans = malloc((h.timecnt ? h.timecnt : 1) * sizeof *z->trans);
    z->ttype = malloc(h.timecnt ? h.timecnt : 1);
    z->toff = malloc(h.typecnt * sizeof *z->toff);
    if (!z->trans || !z->ttype || !z->toff) {
        agti_zone_free(z);
        return agti_oom();
    }
    const unsigned char *q = p + 44;
    for (size_t i = 0; i < h.timecnt; i++, q += tsize) {
        z->trans[i] = tsize == 8 ? be64(q) : (int64_t)(int32_t)be32(q);
        if (i > 0 && z->trans[i] <= z->trans[i - 1]) {
            agti_zone_free(z);
            return agti_error(AGT_EPARSE, "zone %s: transitions not ascending", what);
        }
    }
    for (size_t i = 0; i < h.timecnt; i++, q++) {
        z->ttype[i] = *q;
        if (*q >= h.typecnt) {
            agti_zone_free(z);
            return agti_error(AGT_EPARSE, "zone %s: bad local time type index", what);
        }
    }
    for (size_t i = 0; i < h.typecnt; i++, q += 6) {
        int32_t off = (int32_t)be32(q);
        if (off < -25 * 3600 || off > 26 * 3600) {
            agti_zone_free(z);
            return agti_error(AGT_EPARSE, "zone %s: UTC offset %d out of range", what, off);
        }
        z->toff[i] = off;
    }
    if (tsize == 8) {
        /* Footer: "\n<POSIX TZ string>\n" (may be empty). */
        const unsigned char *f = p + need, *end = p + len;
        if (f < end && *f == '\n') {
            const unsigned char *nl = memchr(f + 1, '\n', (size_t)(end - f - 1));
            if (nl && nl > f + 1) {
                char buf[128];
                size_t n = (size_t)(nl - f - 1);
                bool ok = n < sizeof buf && !memchr(f + 1, '\0', n);
                if (ok) {
                    memcpy(buf, f + 1, n);
                    buf[n] = '\0';
                    ok = parse_posix(buf, &z->rule);
                }
                if (!ok) {
                    agti_zone_free(z);
                    return agti_error(AGT_EPARSE, "zone %s: bad POSIX TZ footer", what);
                }
                z->has_rule = true;
            }
        }
    }
    *out = z;
    return AGT_OK;
}

static bool valid_zone_name(const char *name)
{
    if (name[0] == '/' || name[0] == '\0' || strlen(name) > 255)
        return false;
    for (const char *s = name; *s; s++) {
        char ch = *s;
        if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
              ch == '_' || ch == '-' || ch == '+' || ch == '/' || ch == '.'))
            return false;
    }
    /* No "." or ".." component, no empty component. */
    const char *c = name;
    while (*c) {
        const char *e = strchr(c, '/');
        size_t n = e ? (size_t)(e - c) : strlen(c);
        if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
            return false;
        c += n;
        if (*c == '/')
            c++;
        if (e && *c == '\0')
            return false;
    }
    return true;
}

/* The checks agti_zone_load and agti_zone_acquire share: the arguments and
 * the name; *dir is the folder the zone files are in ($TZDIR or the
 * system's). */
static int zone_args(const void *out, const char *name, const char **dir)
{
    if (!out || !name)
        return agti_error(AGT_EINVAL, "zone: NULL argument");
    if (!valid_zone_name(name))
        return agti_error(AGT_EINVAL, "zone: invalid time zone name '%s'", name);
    *dir = getenv("TZDIR");
    if (!*dir || !**dir)
        *dir = "/usr/share/zoneinfo";
    return AGT_OK;
}

int agti_zone_load(agti_zone **out, const char *name)
{
    const char *dir;
    int arc = zone_args(out, name, &dir);
    if (arc != AGT_OK)
        return arc;
    char *path = agti_aprintf("%s/%s", dir, name);
    if (!path)
        return agti_oom();
    FILE *f = fopen(path, "rb");
    if (!f) {
        int e = errno;
        int rc = agti_error(e == ENOENT || e == ENOTDIR ? AGT_ENOTFOUND : AGT_EIO,
                            "zone: cannot open %s: %s", path, strerror(e));
        free(path);
        return rc;
    }
    enum { CAP = 1 << 20 };
    unsigned char *data = malloc(CAP);
    if (!data) {
        fclose(f);
        free(path);
        return agti_oom();
    }
    size_t len = fread(data, 1, CAP, f);
    int rc;
    if (ferror(f))
        rc = agti_error(AGT_EIO, "zone: cannot read %s", path);
    else
        rc = agti_zone_from_tzif(out, data, len, name);
    fclose(f);
    free(data);
    free(path);
    return rc;
}

/* ---- the zone cache --------------------------------------------------- */

enum { ZONE_CACHE_MAX = 64 };

typedef struct zone_entry {
    char *path;      /* $TZDIR/name when it was loaded */
    agti_zone *zone; /* holds one reference */
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
    time_t checked; /* CLOCK_MONOTONIC seconds of the last stat */
} zone_entry;

static pthread_mutex_t zone_lock = PTHREAD_MUTEX_INITIALIZER;
static zone_entry zone_cache[ZONE_CACHE_MAX];
static size_t zone_count;
static int zone_recheck = AGTI_ZONE_RECHECK_S;

static time_t mono_s(void)
{
    struct timespec ts;
#ifdef CLOCK_MONOTONIC_COARSE
    if (clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) == 0)
        return ts.tv_sec;
#endif
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec;
}

static bool same_file(const zone_entry *e, const struct stat *st)
{
    return e->dev == st->st_dev && e->ino == st->st_ino && e->size == st->st_size &&
           e->mtime.tv_sec == st->st_mtim.tv_sec && e->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

/* Drops one reference; frees the zone with the last. Caller holds the lock. */
static void zone_unref_locked(agti_zone *z)
{
    if (z && --z->refs == 0)
        agti_zone_free(z);
}

static void entry_drop_locked(size_t i)
{
    zone_unref_locked(zone_cache[i].zone);
    free(zone_cache[i].path);
    zone_cache[i] = zone_cache[--zone_count];
    memset(&zone_cache[zone_count], 0, sizeof zone_cache[zone_count]);
}

int agti_zone_acquire(const char *name, const agti_zone **out)
{
    if (out)
        *out = NULL;
    const char *dir;
    int arc = zone_args(out, name, &dir);
    if (arc != AGT_OK)
        return arc;
    size_t dl = strlen(dir), nl = strlen(name);
    time_t now = mono_s();
    pthread_mutex_lock(&zone_lock);
    for (size_t i = 0; i < zone_count; i++) {
        zone_entry *e = &zone_cache[i];
        if (strncmp(e->path, dir, dl) != 0 || e->path[dl] != '/' ||
            memcmp(e->path + dl + 1, name, nl + 1) != 0)
            continue;
        if (now - e->checked < zone_recheck) {
            e->zone->refs++;
            *out = e->zone;
            pthread_mutex_unlock(&zone_lock);
            return AGT_OK;
        }
        struct stat st;
        if (stat(e->path, &st) == 0 && same_file(e, &st)) {
            e->checked = now;
            e->zone->refs++;
            *out = e->zone;
            pthread_mutex_unlock(&zone_lock);
            return AGT_OK;
        }
        entry_drop_locked(i); /* changed or gone: load it again */
        break;
    }
    pthread_mutex_unlock(&zone_lock);

    /* Load outside the lock; stat first so that a file replaced during the
     * read is seen as changed at the next check. */
    char *path = agti_aprintf("%s/%s", dir, name);
    if (!path)
        return agti_oom();
    struct stat st;
    bool have_st = stat(path, &st) == 0;
    agti_zone *z;
    int rc = agti_zone_load(&z, name);
    if (rc != AGT_OK) {
        free(path);
        return rc;
    }
    z->refs = 1; /* the caller's */
    pthread_mutex_lock(&zone_lock);
    bool cached = false;
    for (size_t i = 0; i < zone_count; i++)
        if (strcmp(zone_cache[i].path, path) == 0) {
            cached = true; /* another thread loaded it meanwhile: keep theirs */
            break;
        }
    if (!cached && have_st) {
        if (zone_count == ZONE_CACHE_MAX)
            entry_drop_locked(0);
        zone_entry *e = &zone_cache[zone_count++];
        e->path = path;
        path = NULL;
        e->zone = z;
        z->refs++;
        e->dev = st.st_dev;
        e->ino = st.st_ino;
        e->size = st.st_size;
        e->mtime = st.st_mtim;
        e->checked = now;
    }
    pthread_mutex_unlock(&zone_lock);
    free(path);
    *out = z;
    return AGT_OK;
}

void agti_zone_release(const agti_zone *z)
{
    if (!z)
        return;
    pthread_mutex_lock(&zone_lock);
    zone_unref_locked((agti_zone *)z);
    pthread_mutex_unlock(&zone_lock);
}

void agti_zone_cache_set_recheck(int seconds)
{
    pthread_mutex_lock(&zone_lock);
    zone_recheck = seconds < 0 ? 0 : seconds;
    pthread_mutex_unlock(&zone_lock);
}

void agti_zone_cache_clear(void)
{
    pthread_mutex_lock(&zone_lock);
    while (zone_count > 0)
        entry_drop_locked(zone_count - 1);
    pthread_mutex_unlock(&zone_lock);
}

/* ---- offsets and wall-time resolution ------------------------------------ */

int agti_zone_offset(const agti_zone *z, int64_t utc, int32_t *off)
{
    if (!z) {
        time_t t = (time_t)utc;
        struct tm tm;
        if ((int64_t)t != utc || !localtime_r(&t, &tm))
            return agti_error(AGT_EINVAL, "cron: cannot convert time %lld to local time",
                              (long long)utc);
        *off = (int32_t)tm.tm_gmtoff;
        return AGT_OK;
    }
    if (z->ntrans == 0 || utc >= z->trans[z->ntrans - 1]) {
        if (z->has_rule) {
            *off = posix_offset(&z->rule, utc);
            return AGT_OK;
        }
        *off = z->ntrans == 0 ? z->toff[0] : z->toff[z->ttype[z->ntrans - 1]];
        return AGT_OK;
    }
    if (utc < z->trans[0]) {
        *off = z->toff[0];
        return AGT_OK;
    }
    size_t lo = 0, hi = z->ntrans - 1; /* trans[lo] <= utc < trans[hi] */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (z->trans[mid] <= utc)
            lo = mid;
        else
            hi = mid;
    }
    *off = z->toff[z->ttype[lo]];
    return AGT_OK;
}

int agti_zone_span(const agti_zone *z, int64_t utc, int32_t *off, int64_t *lo, int64_t *hi)
{
    size_t n = z->ntrans;
    if (n == 0 || utc >= z->trans[n - 1]) {
        if (z->has_rule) {
            posix_span(&z->rule, utc, off, lo, hi);
            if (n > 0 && *lo < z->trans[n - 1])
                *lo = z->trans[n - 1];
            return AGT_OK;
        }
        *off = n == 0 ? z->toff[0] : z->toff[z->ttype[n - 1]];
        *lo = n == 0 ? INT64_MIN : z->trans[n - 1];
        *hi = INT64_MAX;
        return AGT_OK;
    }
    if (utc < z->trans[0]) {
        *off = z->toff[0];
        *lo = INT64_MIN;
        *hi = z->trans[0];
        return AGT_OK;
    }
    size_t a = 0, b = n - 1; /* trans[a] <= utc < trans[b] */
    while (b - a > 1) {
        size_t mid = a + (b - a) / 2;
        if (z->trans[mid] <= utc)
            a = mid;
        else
            b = mid;
    }
    *off = z->toff[z->ttype[a]];
    *lo = z->trans[a];
    *hi = z->trans[b];
    return AGT_OK;
}

int agti_zone_resolve(const agti_zone *z, int64_t wall, int *n, int64_t *first, int64_t *second)
{
    /* Offsets stay within +-26 h, so every instant showing `wall` lies within
     * 26 h of it; the offsets 30 h before and after bracket them (assuming at
     * most one transition in that window, true of every zone in use). */
    int32_t oa = 0, ob = 0, ca = 0, cb = 0; /* set by agti_zone_offset; zeroed for GCC -O3 */
    int rc;
    if ((rc = agti_zone_offset(z, wall - 30 * 3600, &oa)) != AGT_OK ||
        (rc = agti_zone_offset(z, wall + 30 * 3600, &ob)) != AGT_OK)
        return rc;
    int64_t ua = wall - oa, ub = wall - ob;
    if ((rc = agti_zone_offset(z, ua, &ca)) != AGT_OK ||
        (rc = agti_zone_offset(z, ub, &cb)) != AGT_OK)
        return rc;
    bool va = ca == oa, vb = cb == ob;
    if (va && vb && ua != ub) {
        *n = 2;
        *first = ua < ub ? ua : ub;
        *second = ua < ub ? ub : ua;
        return AGT_OK;
    }
    if (va || vb) {
        *n = 1;
        *first = *second = va ? ua : ub;
        return AGT_OK;
    }
    /* In a gap: the offset grows (ob > oa), so ub < ua; the gap ends at the
     * first instant in (ub, ua] whose offset differs from the one at ub. */
    int64_t lo = ub < ua ? ub : ua, hi = ub < ua ? ua : ub;
    int32_t olo;
    if ((rc = agti_zone_offset(z, lo, &olo)) != AGT_OK)
        return rc;
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        int32_t om;
        if ((rc = agti_zone_offset(z, mid, &om)) != AGT_OK)
            return rc;
        if (om == olo)
            lo = mid;
        else
            hi = mid;
    }
    *n = 0;
    *first = *second = hi;
    return AGT_OK;
}
