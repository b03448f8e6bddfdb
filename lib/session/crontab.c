/*
 * The session's cron table: scheduled prompts with deterministic jitter,
 * coalescing of missed fires, one-shot deletion and the 7-day stale rule.
 * Time always comes from the caller (the session clock or the host's tick),
 * never from time() here, so the rules are testable without waiting.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"
#include "cron/cron_internal.h"
#include "events_internal.h"
#include "session_internal.h"

/* Missed fires counted one by one at most; beyond, the count is a floor.
 * (A year of an every-minute job is 525,600.) */
#define COALESCE_COUNT_MAX 2000000

void agti_cron_format_time(int64_t unix_s, char buf[40])
{
    if (unix_s < -62135596800LL || unix_s > 253402300799LL) { /* years 1..9999 */
        snprintf(buf, 40, "@%lld", (long long)unix_s);
        return;
    }
    time_t t = (time_t)unix_s;
    struct tm tm;
    if (localtime_r(&t, &tm) == NULL) {
        snprintf(buf, 40, "@%lld", (long long)unix_s);
        return;
    }
    long goff = tm.tm_gmtoff;
    char sign = goff < 0 ? '-' : '+';
    int off = (int)((goff < 0 ? -goff : goff) % 86400);
    size_t n = strftime(buf, 40, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, 40 - n, "%c%02d:%02d", sign, off / 3600, (off / 60) % 60);
}

static uint32_t id_hash(const char *id)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *id; id++) {
        h ^= (unsigned char)*id;
        h *= 16777619u;
    }
    return h;
}

int64_t agti_cron_jitter_s(const char *id, bool recurring, int64_t fire_s, int64_t period_s)
{
    uint32_t h = id_hash(id);
    if (recurring) {
        int64_t max = period_s / 10;
        if (max > AGTI_CRON_RECURRING_JITTER_MAX_S)
            max = AGTI_CRON_RECURRING_JITTER_MAX_S;
        if (max <= 0)
            return 0;
        return (int64_t)(h % (uint64_t)(max + 1));
    }
    time_t t = (time_t)fire_s;
    struct tm tm;
    if (localtime_r(&t, &tm) == NULL || (tm.tm_min != 0 && tm.tm_min != 30))
        return 0;
    return -(int64_t)(h % (AGTI_CRON_ONESHOT_JITTER_MAX_S + 1));
}

int64_t agti_cron_job_fire_time(const agti_cron_job *j, int64_t sched_s)
{
    int64_t period = 0;
    if (j->recurring && agti_cron_gap_after(j->cron, NULL, sched_s, &period) != AGT_OK)
        period = 0;
    int64_t t = sched_s + agti_cron_jitter_s(j->id, j->recurring, sched_s, period);
    /* a one-shot job moved earlier never fires before it was created */
    return t < j->created_s ? j->created_s : t;
}

const agti_cron_job *agti_crontab_find(const agti_crontab *t, const char *id)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcasecmp(t->jobs[i].id, id) == 0)
            return &t->jobs[i];
    return NULL;
}

static void job_clear(agti_cron_job *j)
{
    agt_cron_free(j->cron);
    free(j->prompt);
}

static void new_id(const agti_crontab *t, char id[9])
{
    for (;;) {
        uint32_t r;
        if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
            /* ids must be unique in the table, not secret */
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            r = (uint32_t)ts.tv_nsec ^ ((uint32_t)getpid() << 16) ^ (uint32_t)t->n;
        }
        snprintf(id, 9, "%08x", (unsigned)r);
        if (agti_crontab_find(t, id) == NULL)
            return;
    }
}

int agti_crontab_add(agti_crontab *t, const char *expr, const char *prompt, bool recurring,
                     int64_t now_s, const agti_cron_job **out)
{
    if (t->n >= AGTI_CRON_MAX_JOBS)
        return agti_error(AGT_ELIMIT,
                          "this session already has %d scheduled jobs, the most it can hold; "
                          "delete one with CronDelete first",
                          AGTI_CRON_MAX_JOBS);
    size_t plen = strlen(prompt);
    if (plen == 0)
        return agti_error(AGT_EINVAL, "the prompt is empty");
    if (plen > AGTI_CRON_MAX_PROMPT)
        return agti_error(AGT_EINVAL, "the prompt is %zu bytes of UTF-8; at most %d are allowed",
                          plen, AGTI_CRON_MAX_PROMPT);
    agti_cron_job j = {0};
    int rc = agt_cron_parse(&j.cron, expr);
    if (rc != AGT_OK)
        return rc;
    rc = agt_cron_next(j.cron, now_s, &j.next_s);
    if (rc != AGT_OK) {
        agt_cron_free(j.cron);
        return rc == AGT_ENOTFOUND
                   ? agti_error(AGT_EPARSE, "cron: '%s' never fires", agt_cron_expression(j.cron))
                   : rc;
    }
    if (agti_grow(&t->jobs, &t->cap, t->n, sizeof *t->jobs, 8) != AGT_OK) {
        agt_cron_free(j.cron);
        return AGT_ENOMEM;
    }
    if ((j.prompt = agti_strdup(prompt)) == NULL) {
        agt_cron_free(j.cron);
        return agti_oom();
    }
    new_id(t, j.id);
    j.recurring = recurring;
    j.created_s = now_s;
    j.last_fire_s = -1;
    t->jobs[t->n] = j;
    *out = &t->jobs[t->n];
    t->n++;
    return AGT_OK;
}

static void remove_at(agti_crontab *t, size_t i)
{
    job_clear(&t->jobs[i]);
    memmove(&t->jobs[i], &t->jobs[i + 1], (t->n - i - 1) * sizeof t->jobs[0]);
    t->n--;
}

int agti_crontab_remove(agti_crontab *t, const char *id)
{
    for (size_t i = 0; i < t->n; i++) {
        if (strcasecmp(t->jobs[i].id, id) == 0) {
            remove_at(t, i);
            return AGT_OK;
        }
    }
    return agti_error(AGT_ENOTFOUND, "No cron job with id %s", id);
}

void agti_crontab_clear(agti_crontab *t)
{
    for (size_t i = 0; i < t->n; i++)
        job_clear(&t->jobs[i]);
    free(t->jobs);
    t->jobs = NULL;
    t->n = t->cap = 0;
}

int64_t agti_crontab_next_fire(const agti_crontab *t)
{
    int64_t best = -1;
    for (size_t i = 0; i < t->n; i++) {
        if (t->jobs[i].paused)
            continue;
        int64_t f = agti_cron_job_fire_time(&t->jobs[i], t->jobs[i].next_s);
        if (best < 0 || f < best)
            best = f;
    }
    return best;
}

static json_t *fire_event(const agti_cron_job *j, int64_t sched_s, long count, bool stale,
                          bool deleted)
{
    char when[40];
    agti_cron_format_time(sched_s, when);
    const char *expr = agt_cron_expression(j->cron);
    agti_buf msg = AGTI_BUF_INIT;
    agti_buf_printf(&msg,
                    "<cron-fire id=\"%s\" cron=\"%s\" scheduledAt=\"%s\" coalescedCount=\"%ld\"",
                    j->id, expr, when, count);
    if (stale)
        agti_buf_puts(&msg, " stale=\"true\"");
    agti_buf_printf(&msg, ">\n%s\n</cron-fire>", j->prompt);
    if (stale)
        agti_buf_puts(&msg, "\nThis recurring job is older than 7 days and has now been deleted; "
                            "create it again with CronCreate to keep it.");
    if (msg.oom) {
        agti_buf_free(&msg);
        return NULL;
    }
    json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:b, s:s, s:I, s:b, s:b, s:s}", "type", "cron_fire",
                          "id", j->id, "cron", expr, "prompt", j->prompt, "recurring", j->recurring,
                          "scheduled_at", when, "coalesced_count", (json_int_t)count, "stale",
                          stale, "deleted", deleted, "message", agti_buf_cstr(&msg));
    agti_buf_free(&msg);
    return o;
}

int agti_crontab_collect(agti_crontab *t, int64_t now_s, json_t *events)
{
    for (size_t i = 0; i < t->n;) {
        agti_cron_job *j = &t->jobs[i];
        if (j->paused || agti_cron_job_fire_time(j, j->next_s) > now_s) {
            i++;
            continue;
        }
        /* count the scheduled fires that came due since the last delivery */
        long count = 1;
        int64_t last = j->next_s, n = -1;
        if (agt_cron_next(j->cron, last, &n) != AGT_OK)
            n = -1;
        while (j->recurring && n >= 0 && agti_cron_job_fire_time(j, n) <= now_s) {
            if (count < COALESCE_COUNT_MAX) {
                count++;
                last = n;
                if (agt_cron_next(j->cron, n, &n) != AGT_OK)
                    n = -1;
            } else if (agt_cron_next(j->cron, now_s, &n) != AGT_OK) {
                n = -1; /* skip ahead; the count stays a floor */
            } else {
                break;
            }
        }
        bool stale = j->recurring && now_s - j->created_s > AGTI_CRON_STALE_AFTER_S;
        bool deleted = !j->recurring || stale || n < 0;
        json_t *ev = fire_event(j, last, count, stale, deleted);
        if (ev == NULL || json_array_append_new(events, ev) != 0)
            return agti_oom();
        if (deleted) {
            remove_at(t, i);
            continue;
        }
        j->last_fire_s = now_s;
        j->next_s = n;
        i++;
    }
    return AGT_OK;
}

/* ---- save and restore ------------------------------------------------ */

int agti_cron_section_save(const agt_session *s, json_t **value)
{
    *value = NULL;
    if (s->bg == NULL || s->bg->cron.n == 0)
        return AGT_OK;
    const agti_crontab *t = &s->bg->cron;
    json_t *arr = json_array();
    if (arr == NULL)
        return agti_oom();
    for (size_t i = 0; i < t->n; i++) {
        const agti_cron_job *j = &t->jobs[i];
        json_t *o = json_pack("{s:s, s:s, s:s, s:b, s:I, s:o, s:I}", "id", j->id, "cron",
                              agt_cron_expression(j->cron), "prompt", j->prompt, "recurring",
                              j->recurring, "created", (json_int_t)j->created_s, "last_fire",
                              j->last_fire_s >= 0 ? json_integer(j->last_fire_s) : json_null(),
                              "next", (json_int_t)j->next_s);
        if (o != NULL && j->paused && json_object_set_new(o, "paused", json_true()) != 0) {
            json_decref(o);
            o = NULL;
        }
        if (o == NULL || json_array_append_new(arr, o) != 0) {
            json_decref(arr);
            return agti_oom();
        }
    }
    *value = arr;
    return AGT_OK;
}

static bool hex8(const char *id)
{
    if (id == NULL || strlen(id) != 8)
        return false;
    for (int i = 0; i < 8; i++)
        if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f') ||
              (id[i] >= 'A' && id[i] <= 'F')))
            return false;
    return true;
}

static int load_job(agti_crontab *t, size_t i, json_t *o)
{
    const char *id = json_string_value(json_object_get(o, "id"));
    const char *expr = json_string_value(json_object_get(o, "cron"));
    const char *prompt = json_string_value(json_object_get(o, "prompt"));
    json_t *rec = json_object_get(o, "recurring"), *created = json_object_get(o, "created");
    json_t *last = json_object_get(o, "last_fire"), *next = json_object_get(o, "next");
    json_t *paused = json_object_get(o, "paused");
    if (!hex8(id) || expr == NULL || prompt == NULL || !json_is_boolean(rec) ||
        !json_is_integer(created) || (last && !json_is_null(last) && !json_is_integer(last)) ||
        (next && !json_is_integer(next)) || (paused && !json_is_boolean(paused)))
        return agti_error(AGT_EINVALID,
                          "saved session: cron[%zu] needs an 8-hex-digit id, cron, prompt, "
                          "recurring (boolean), created (integer), last_fire (integer or null), "
                          "and paused, when given, a boolean",
                          i);
    if (agti_crontab_find(t, id) != NULL)
        return agti_error(AGT_EINVALID, "saved session: cron[%zu]: id %s appears twice", i, id);
    const agti_cron_job *j = NULL;
    int64_t c = (int64_t)json_integer_value(created);
    int rc = agti_crontab_add(t, expr, prompt, json_is_true(rec), c, &j);
    if (rc == AGT_ENOMEM)
        return rc;
    if (rc != AGT_OK)
        return agti_error(AGT_EINVALID, "saved session: cron[%zu]: %s", i, agt_error_message());
    agti_cron_job *mj = &t->jobs[t->n - 1];
    snprintf(mj->id, sizeof mj->id, "%s", id);
    for (char *p = mj->id; *p; p++)
        if (*p >= 'A' && *p <= 'F')
            *p = (char)(*p - 'A' + 'a');
    mj->last_fire_s = json_is_integer(last) ? (int64_t)json_integer_value(last) : -1;
    mj->paused = json_is_true(paused);
    if (json_is_integer(next))
        mj->next_s = (int64_t)json_integer_value(next);
    else if (mj->last_fire_s >= 0 &&
             agt_cron_next(mj->cron, mj->last_fire_s, &mj->next_s) != AGT_OK)
        return agti_error(AGT_EINVALID, "saved session: cron[%zu]: no fire after last_fire", i);
    return AGT_OK;
}

int agti_cron_section_load(agt_session *s, json_t *value, void **tmp)
{
    *tmp = NULL;
    if (agti_session_bg(s) == NULL)
        return AGT_ENOMEM;
    agti_crontab *t = calloc(1, sizeof *t);
    if (t == NULL)
        return agti_oom();
    if (value != NULL && !json_is_array(value)) {
        free(t);
        return agti_error(AGT_EINVALID, "saved session: \"cron\" must be an array");
    }
    size_t i;
    json_t *o;
    json_array_foreach(value, i, o)
    {
        int rc = load_job(t, i, o);
        if (rc != AGT_OK) {
            agti_crontab_clear(t);
            free(t);
            return rc;
        }
    }
    *tmp = t;
    return AGT_OK;
}

void agti_cron_section_commit(agt_session *s, void *tmp)
{
    agti_crontab *t = tmp;
    agti_crontab_clear(&s->bg->cron); /* load created s->bg */
    s->bg->cron = *t;
    free(t);
}

void agti_cron_section_discard(void *tmp)
{
    agti_crontab *t = tmp;
    if (t != NULL)
        agti_crontab_clear(t);
    free(t);
}

/* ---- the host's view (agt_session_cron_*) ----------------------------- */

static agti_cron_job *find_job(agt_session *s, const char *id, const char *fn)
{
    if (s == NULL || id == NULL) {
        agti_error(AGT_EINVAL, "%s: %s is NULL", fn, s == NULL ? "the session" : "id");
        return NULL;
    }
    agti_crontab *t = s->bg ? &s->bg->cron : NULL;
    for (size_t i = 0; t && i < t->n; i++)
        if (strcasecmp(t->jobs[i].id, id) == 0)
            return &t->jobs[i];
    agti_error(AGT_ENOTFOUND, "%s: no cron job with id '%s' (agt_session_cron_list shows them)", fn,
               id);
    return NULL;
}

int agt_session_cron_list(agt_session *s, char **out_json)
{
    if (out_json != NULL)
        *out_json = NULL;
    if (s == NULL || out_json == NULL)
        return agti_error(AGT_EINVAL, "agt_session_cron_list: %s is NULL",
                          s == NULL ? "the session" : "out_json");
    json_t *arr = json_array();
    if (arr == NULL)
        return agti_oom();
    const agti_crontab *t = s->bg ? &s->bg->cron : NULL;
    for (size_t i = 0; t && i < t->n; i++) {
        const agti_cron_job *j = &t->jobs[i];
        json_t *o = json_pack(
            "{s:s, s:s, s:s, s:b, s:b, s:I, s:o, s:o}", "id", j->id, "cron",
            agt_cron_expression(j->cron), "prompt", j->prompt, "recurring", j->recurring, "paused",
            j->paused, "created", (json_int_t)j->created_s, "last_fire",
            j->last_fire_s >= 0 ? json_integer(j->last_fire_s) : json_null(), "next_fire",
            j->paused ? json_null() : json_integer(agti_cron_job_fire_time(j, j->next_s)));
        if (o == NULL || json_array_append_new(arr, o) != 0) {
            json_decref(arr);
            return agti_oom();
        }
    }
    *out_json = agti_json_dump(arr);
    json_decref(arr);
    return *out_json ? AGT_OK : agti_oom();
}

int agt_session_cron_delete(agt_session *s, const char *id)
{
    agti_cron_job *j = find_job(s, id, "agt_session_cron_delete");
    if (j == NULL)
        return agt_error_code();
    remove_at(&s->bg->cron, (size_t)(j - s->bg->cron.jobs));
    return AGT_OK;
}

int agt_session_cron_set_paused(agt_session *s, const char *id, int paused)
{
    agti_cron_job *j = find_job(s, id, "agt_session_cron_set_paused");
    if (j == NULL)
        return agt_error_code();
    if (!paused && j->paused) {
        /* the fires that fell due while paused are dropped, not delivered
         * in a burst: the next one is the first after now */
        int64_t next = -1;
        int rc = agt_cron_next(j->cron, agti_session_now_ms(s) / 1000, &next);
        if (rc == AGT_ENOTFOUND)
            return agti_error(AGT_ENOTFOUND,
                              "agt_session_cron_set_paused: cron job %s never fires again; "
                              "delete it",
                              j->id);
        if (rc != AGT_OK)
            return rc;
        j->next_s = next;
    }
    j->paused = paused != 0;
    return AGT_OK;
}
