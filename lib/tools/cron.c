/*
 * CronCreate, CronList, CronDelete: the model's view of the session's cron
 * table (lib/session/crontab.c). "Now" comes from the session clock.
 */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "dispatch/dispatch_internal.h"
#include "session/events_internal.h"
#include "session/session_internal.h"
#include "tools_internal.h"

static int refuse(agt_call *call, int code, const char *lead)
{
    agti_buf b = AGTI_BUF_INIT;
    agti_buf_printf(&b, "%s: %s", lead, agt_error_message());
    int rc = agti_tool_finish(call, &b, NULL, true);
    return rc == AGT_OK ? code : rc;
}

/* One job as CronList and CronCreate show it. */
static json_t *job_json(const agti_cron_job *j, int64_t now_s, int64_t fire_s, char **human)
{
    *human = NULL;
    if (agt_cron_describe(j->cron, human) != AGT_OK)
        return NULL;
    char when[40];
    agti_cron_format_time(fire_s, when);
    int64_t age = now_s > j->created_s ? (now_s - j->created_s) / 86400 : 0;
    bool stale = j->recurring && now_s - j->created_s > AGTI_CRON_STALE_AFTER_S;
    json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:b, s:I, s:b}", "id", j->id, "cron",
                          agt_cron_expression(j->cron), "humanSchedule", *human, "nextFireAt", when,
                          "recurring", j->recurring, "ageDays", (json_int_t)age, "stale", stale);
    if (o != NULL && j->paused && json_object_set_new(o, "paused", json_true()) != 0) {
        json_decref(o);
        o = NULL;
    }
    return o;
}

int agti_tool_croncreate(agt_call *call, void *payload)
{
    (void)payload;
    agt_session *s = agt_call_session(call);
    json_t *a = agti_call_args_json(call);
    const char *expr = json_string_value(json_object_get(a, "cron"));
    const char *prompt = json_string_value(json_object_get(a, "prompt"));
    json_t *rv = json_object_get(a, "recurring");
    bool recurring = rv == NULL || json_is_true(rv);
    struct agti_session_bg *bg = agti_session_bg(s);
    if (bg == NULL)
        return AGT_ENOMEM;
    if (expr == NULL || prompt == NULL)
        return agti_error(AGT_EINVAL, "CronCreate needs cron and prompt");
    int64_t now_s = agti_session_now_ms(s) / 1000;
    const agti_cron_job *j = NULL;
    int rc = agti_crontab_add(&bg->cron, expr, prompt, recurring, now_s, &j);
    if (rc == AGT_ENOMEM)
        return rc;
    if (rc == AGT_EPARSE)
        return refuse(call, rc, "The cron expression is refused");
    if (rc != AGT_OK)
        return refuse(call, rc, "The job was not created");
    int64_t fire = agti_cron_job_fire_time(j, j->next_s);
    char *human = NULL;
    json_t *o = job_json(j, now_s, fire, &human);
    if (o == NULL) {
        agt_free(human);
        return agti_oom();
    }
    agti_buf b = AGTI_BUF_INIT;
    agti_buf_printf(&b, "Scheduled cron job %s: %s (%s, %s).\nNext fire: %s", j->id, human,
                    agt_cron_expression(j->cron), recurring ? "recurring" : "one-shot",
                    json_string_value(json_object_get(o, "nextFireAt")));
    if (recurring)
        agti_buf_puts(&b, "\nIt fires until deleted with CronDelete, for at most 7 days.");
    else
        agti_buf_puts(&b, "\nIt fires once and is then deleted.");
    agt_free(human);
    return agti_tool_finish(call, &b, o, false);
}

static int by_fire(const void *x, const void *y)
{
    const int64_t *a = x, *b = y;
    return (a[0] > b[0]) - (a[0] < b[0]);
}

int agti_tool_cronlist(agt_call *call, void *payload)
{
    (void)payload;
    agt_session *s = agt_call_session(call);
    struct agti_session_bg *bg = agti_session_bg(s);
    if (bg == NULL)
        return AGT_ENOMEM;
    const agti_crontab *t = &bg->cron;
    int64_t now_s = agti_session_now_ms(s) / 1000;
    /* pairs (fire time, index), sorted by fire time */
    int64_t *order = calloc(t->n ? t->n * 2 : 2, sizeof *order);
    json_t *arr = json_array();
    if (order == NULL || arr == NULL) {
        free(order);
        json_decref(arr);
        return agti_oom();
    }
    for (size_t i = 0; i < t->n; i++) {
        order[2 * i] = agti_cron_job_fire_time(&t->jobs[i], t->jobs[i].next_s);
        order[2 * i + 1] = (int64_t)i;
    }
    qsort(order, t->n, 2 * sizeof *order, by_fire);
    agti_buf b = AGTI_BUF_INIT;
    if (t->n == 0)
        agti_buf_puts(&b, "No scheduled cron jobs.");
    for (size_t k = 0; k < t->n; k++) {
        const agti_cron_job *j = &t->jobs[order[2 * k + 1]];
        char *human = NULL;
        json_t *o = job_json(j, now_s, order[2 * k], &human);
        if (o == NULL) {
            agt_free(human);
            free(order);
            json_decref(arr);
            agti_buf_free(&b);
            return agti_oom();
        }
        if (k > 0)
            agti_buf_puts(&b, "\n---\n");
        agti_buf_printf(&b,
                        "id: %s\ncron: %s\nhumanSchedule: %s\nnextFireAt: %s\nrecurring: %s\n"
                        "ageDays: %lld\nstale: %s",
                        j->id, agt_cron_expression(j->cron), human,
                        json_string_value(json_object_get(o, "nextFireAt")),
                        j->recurring ? "true" : "false",
                        (long long)json_integer_value(json_object_get(o, "ageDays")),
                        json_is_true(json_object_get(o, "stale")) ? "true" : "false");
        if (j->paused)
            agti_buf_puts(&b, "\npaused: true (by the user: it does not fire until resumed)");
        agt_free(human);
        json_array_append_new(arr, o);
    }
    free(order);
    return agti_tool_finish(call, &b, arr, false);
}

int agti_tool_crondelete(agt_call *call, void *payload)
{
    (void)payload;
    agt_session *s = agt_call_session(call);
    const char *id = json_string_value(json_object_get(agti_call_args_json(call), "id"));
    struct agti_session_bg *bg = agti_session_bg(s);
    if (bg == NULL)
        return AGT_ENOMEM;
    const agti_cron_job *j = id ? agti_crontab_find(&bg->cron, id) : NULL;
    agti_buf b = AGTI_BUF_INIT;
    if (j == NULL) {
        agti_buf_printf(&b, "No cron job with id %s. CronList shows the scheduled jobs.",
                        id ? id : "");
        int rc = agti_tool_finish(call, &b, NULL, true);
        return rc == AGT_OK ? AGT_ENOTFOUND : rc;
    }
    agti_buf_printf(&b, "Deleted cron job %s (%s, %s).", j->id, agt_cron_expression(j->cron),
                    j->recurring ? "recurring" : "one-shot");
    if (b.oom) {
        agti_buf_free(&b);
        return agti_oom();
    }
    agti_crontab_remove(&bg->cron, id);
    return agti_tool_finish(call, &b, NULL, false);
}
