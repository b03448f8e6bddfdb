/*
 * TaskList, TaskOutput, TaskStop: the model's view of the session's
 * background tasks (lib/proc's task manager).
 */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "dispatch/dispatch_internal.h"
#include "proc/proc.h"
#include "session/events_internal.h"
#include "session/session_internal.h"
#include "tools_internal.h"

#define TASK_TAIL_BYTES (32 * 1024)
#define TASKLIST_MAX 100

static int unknown_task(agt_call *call, const char *id)
{
    agti_buf b = AGTI_BUF_INIT;
    agti_buf_printf(&b,
                    "No background task with id '%s'. TaskList (active_only false) shows "
                    "the known tasks.",
                    id);
    agti_tool_finish(call, &b, NULL, true);
    return AGT_ENOTFOUND;
}

/* "completed, exit code 0", "failed, exit code 2", "killed: stopped: why". */
static void put_state(agti_buf *b, const agti_task_info *t)
{
    agti_buf_puts(b, agti_proc_state_name(t->state));
    if (t->state == AGTI_PROC_RUNNING)
        return;
    if (t->exit_code >= 0)
        agti_buf_printf(b, ", exit code %d", t->exit_code);
    else if (t->signal > 0 && t->reason == NULL) /* a signal we did not send */
        agti_buf_printf(b, ", signal %d", t->signal);
    if (t->reason != NULL)
        agti_buf_printf(b, " (%s)", t->reason);
}

static json_t *info_json(const agti_task_info *t)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:o, s:i, s:o, s:I, s:s, s:I}", "task_id", t->id,
                     "description", t->description, "command", t->command, "status",
                     agti_proc_state_name(t->state), "exit_code",
                     t->exit_code >= 0 ? json_integer(t->exit_code) : json_null(), "signal",
                     t->signal, "reason", t->reason ? json_string(t->reason) : json_null(), "pid",
                     (json_int_t)t->pid, "output_path", t->log_path, "output_bytes",
                     (json_int_t)t->output_bytes);
}

static agti_tasks *existing_tasks(agt_session *s)
{
    struct agti_session_bg *bg = s->bg;
    if (bg == NULL || bg->tasks == NULL)
        return NULL;
    agti_tasks_pump(bg->tasks, 0);
    return bg->tasks;
}

int agti_tool_tasklist(agt_call *call, void *payload)
{
    (void)payload;
    agt_session *s = agt_call_session(call);
    json_t *a = agti_call_args_json(call);
    json_t *ao = json_object_get(a, "active_only");
    bool active_only = ao == NULL || json_is_true(ao);
    json_t *lv = json_object_get(a, "limit");
    size_t limit = json_is_integer(lv) ? (size_t)json_integer_value(lv) : 20;
    if (limit < 1 || limit > TASKLIST_MAX)
        limit = 20;
    agti_tasks *m = existing_tasks(s);
    agti_task_info infos[TASKLIST_MAX];
    size_t n = 0;
    if (m != NULL)
        agti_tasks_list(m, active_only, infos, limit, &n);
    size_t total = 0;
    if (m != NULL)
        total = active_only ? agti_tasks_running(m) : agti_tasks_count(m);
    /* background sub-agents and swarms (external tasks), newest first */
    agti_ext_snapshot *snaps = NULL;
    size_t n_ext = s->bg ? s->bg->n_ext : 0, n_ext_shown = 0;
    if (n_ext > 0 && (snaps = calloc(n_ext, sizeof *snaps)) == NULL)
        return agti_oom();
    for (size_t i = 0; i < n_ext; i++) {
        agti_ext_task *t = &s->bg->ext[n_ext - 1 - i];
        if (t->ops->snapshot(t->payload, &snaps[i]) != AGT_OK) {
            for (size_t k = 0; k < i; k++)
                agti_ext_snapshot_free(&snaps[k]);
            free(snaps);
            return agti_oom();
        }
        if (!active_only || agti_ext_status_active(snaps[i].status))
            total++;
    }
    /* records of a restored session follow (none of them runs) */
    json_t *restored = s->bg && !active_only ? s->bg->restored : NULL;
    total += json_array_size(restored);
    agti_buf b = AGTI_BUF_INIT;
    json_t *arr = json_array();
    if (arr == NULL) {
        for (size_t k = 0; k < n_ext; k++)
            agti_ext_snapshot_free(&snaps[k]);
        free(snaps);
        return agti_oom();
    }
    size_t shown = n + json_array_size(restored);
    for (size_t i = 0; i < n_ext; i++)
        shown += !active_only || agti_ext_status_active(snaps[i].status);
    if (shown > limit)
        shown = limit;
    if (shown == 0)
        agti_buf_puts(&b, active_only ? "No running background tasks." : "No background tasks.");
    else
        agti_buf_printf(&b, "%s: %zu%s",
                        active_only ? "Running background tasks" : "Background tasks", total,
                        shown < total ? " (newest first, " : "");
    if (shown > 0 && shown < total)
        agti_buf_printf(&b, "%zu shown)", shown);
    for (size_t i = 0; i < n; i++) {
        const agti_task_info *t = &infos[i];
        agti_buf_printf(&b, "\n%s [", t->id);
        put_state(&b, t);
        agti_buf_printf(&b, "] pid %ld", (long)t->pid);
        if (t->description[0] != '\0')
            agti_buf_printf(&b, " - %s", t->description);
        agti_buf_printf(&b, "\n  command: %s", t->command);
        json_array_append_new(arr, info_json(t));
    }
    for (size_t i = 0; i < n_ext && n + n_ext_shown < shown; i++) {
        agti_ext_task *t = &s->bg->ext[n_ext - 1 - i];
        if (active_only && !agti_ext_status_active(snaps[i].status))
            continue;
        n_ext_shown++;
        agti_buf_printf(&b, "\n%s [%s] %s", t->id, snaps[i].status,
                        strcmp(t->kind, "swarm") == 0 ? "sub-agent swarm" : "sub-agent");
        if (t->description[0] != '\0')
            agti_buf_printf(&b, " - %s", t->description);
        json_array_append_new(arr,
                              json_pack("{s:s, s:s, s:s, s:s}", "task_id", t->id, "kind", t->kind,
                                        "description", t->description, "status", snaps[i].status));
    }
    for (size_t k = 0; k < n_ext; k++)
        agti_ext_snapshot_free(&snaps[k]);
    free(snaps);
    for (size_t i = n + n_ext_shown; i < shown; i++) {
        json_t *r = json_array_get(restored, i - n - n_ext_shown);
        agti_buf_printf(&b, "\n%s [%s", json_string_value(json_object_get(r, "task_id")),
                        json_string_value(json_object_get(r, "status")));
        if (json_is_integer(json_object_get(r, "exit_code")))
            agti_buf_printf(&b, ", exit code %lld",
                            (long long)json_integer_value(json_object_get(r, "exit_code")));
        agti_buf_puts(&b, "] (from the restored session)");
        const char *d = json_string_value(json_object_get(r, "description"));
        if (d != NULL && d[0] != '\0')
            agti_buf_printf(&b, " - %s", d);
        agti_buf_printf(&b, "\n  command: %s", json_string_value(json_object_get(r, "command")));
        json_array_append(arr, r);
    }
    return agti_tool_finish(call, &b, arr, false);
}

/* TaskOutput for a task of a restored session: what was saved, and its log. */
static int restored_output(agt_call *call, json_t *r)
{
    const char *path = json_string_value(json_object_get(r, "output_path"));
    const char *desc = json_string_value(json_object_get(r, "description"));
    const char *reason = json_string_value(json_object_get(r, "reason"));
    json_t *code = json_object_get(r, "exit_code");
    agti_buf b = AGTI_BUF_INIT;
    agti_buf_printf(&b, "Task: %s", json_string_value(json_object_get(r, "task_id")));
    if (desc != NULL && desc[0] != '\0')
        agti_buf_printf(&b, " (%s)", desc);
    agti_buf_printf(&b, "\nStatus: %s", json_string_value(json_object_get(r, "status")));
    if (reason != NULL && reason[0] != '\0')
        agti_buf_printf(&b, " (%s)", reason);
    if (json_is_integer(code))
        agti_buf_printf(&b, "\nExit code: %lld", (long long)json_integer_value(code));
    else
        agti_buf_puts(&b, "\nExit code: none");
    agti_buf_printf(&b, "\nOutput path: %s", path);
    char *tail = NULL;
    size_t len = 0;
    if (agti_proc_read_log_tail(path, TASK_TAIL_BYTES, &tail, &len) != AGT_OK) {
        agti_buf_puts(&b, "\n(the log file cannot be read any more)");
    } else if (len == 0) {
        agti_buf_puts(&b, "\n(no output)");
    } else {
        agti_buf_puts(&b, "\nOutput (end of the log):\n");
        agti_buf_put(&b, tail, len);
    }
    free(tail);
    return agti_tool_finish(call, &b, json_incref(r), false);
}

/* TaskOutput for a background sub-agent or swarm: its state, then its
 * transcript (and, once ended, its report), the last 32 KiB. */
static int ext_output(agt_call *call, agti_ext_task *t, bool block, int64_t wait_s)
{
    bool still_running = false;
    if (block && t->ops->wait(t->payload, wait_s * 1000) == AGT_ETIMEOUT)
        still_running = true;
    agti_ext_snapshot snap = {0};
    if (t->ops->snapshot(t->payload, &snap) != AGT_OK)
        return agti_oom();
    agti_buf b = AGTI_BUF_INIT;
    agti_buf_printf(&b, "Task: %s", t->id);
    if (t->description[0] != '\0')
        agti_buf_printf(&b, " (%s)", t->description);
    agti_buf_printf(&b, "\nKind: %s\nStatus: %s",
                    strcmp(t->kind, "swarm") == 0 ? "sub-agent swarm" : "sub-agent", snap.status);
    if (still_running)
        agti_buf_printf(&b, "\nStill running after waiting %lld s.", (long long)wait_s);
    size_t len = snap.output != NULL ? strlen(snap.output) : 0;
    if (len == 0) {
        agti_buf_puts(&b,
                      strcmp(snap.status, "running") == 0 ? "\n(no output yet)" : "\n(no output)");
    } else if (len > TASK_TAIL_BYTES) {
        size_t from = len - TASK_TAIL_BYTES;
        while (from < len && ((unsigned char)snap.output[from] & 0xC0) == 0x80)
            from++;
        agti_buf_printf(&b, "\nOutput (last %zu bytes):\n", len - from);
        agti_buf_puts(&b, snap.output + from);
    } else {
        agti_buf_puts(&b, "\nOutput:\n");
        agti_buf_puts(&b, snap.output);
    }
    json_t *j =
        json_pack("{s:s, s:s, s:s, s:s, s:b}", "task_id", t->id, "kind", t->kind, "description",
                  t->description, "status", snap.status, "still_running_after_wait", still_running);
    agti_ext_snapshot_free(&snap);
    return agti_tool_finish(call, &b, j, false);
}

int agti_tool_taskoutput(agt_call *call, void *payload)
{
    (void)payload;
    agt_session *s = agt_call_session(call);
    json_t *a = agti_call_args_json(call);
    const char *id = json_string_value(json_object_get(a, "task_id"));
    bool block = json_is_true(json_object_get(a, "block"));
    json_t *tv = json_object_get(a, "timeout");
    int64_t wait_s = json_is_integer(tv) ? (int64_t)json_integer_value(tv) : 30;
    if (wait_s < 0 || wait_s > 3600)
        wait_s = 30;
    agti_ext_task *ext = agti_session_ext_find(s, id);
    if (ext != NULL)
        return ext_output(call, ext, block, wait_s);
    agti_tasks *m = existing_tasks(s);
    agti_task_info t;
    if (id != NULL && (m == NULL || agti_tasks_get(m, id, &t) != AGT_OK) &&
        agti_session_restored_task(s, id) != NULL)
        return restored_output(call, agti_session_restored_task(s, id));
    if (id == NULL || m == NULL || agti_tasks_get(m, id, &t) != AGT_OK)
        return unknown_task(call, id ? id : "");
    bool still_running = false;
    if (block) {
        int rc = agti_tasks_wait(m, id, wait_s * 1000);
        if (rc == AGT_ETIMEOUT)
            still_running = true;
        else if (rc != AGT_OK)
            return rc;
    }
    if (agti_tasks_get(m, id, &t) != AGT_OK)
        return unknown_task(call, id);
    char *tail = NULL;
    size_t len = 0;
    int rc = agti_tasks_tail(m, id, TASK_TAIL_BYTES, &tail, &len);
    if (rc != AGT_OK)
        return rc;
    agti_buf b = AGTI_BUF_INIT;
    agti_buf_printf(&b, "Task: %s", t.id);
    if (t.description[0] != '\0')
        agti_buf_printf(&b, " (%s)", t.description);
    agti_buf_puts(&b, "\nStatus: ");
    put_state(&b, &t);
    if (t.state != AGTI_PROC_RUNNING) {
        if (t.exit_code >= 0)
            agti_buf_printf(&b, "\nExit code: %d", t.exit_code);
        else
            agti_buf_puts(&b, "\nExit code: none");
    }
    if (still_running)
        agti_buf_printf(&b, "\nStill running after waiting %lld s.", (long long)wait_s);
    agti_buf_printf(&b, "\nOutput path: %s (%llu bytes; read it with Read for everything)",
                    t.log_path, (unsigned long long)t.output_bytes);
    if (len == 0) {
        agti_buf_puts(&b, t.state == AGTI_PROC_RUNNING ? "\n(no output yet)" : "\n(no output)");
    } else {
        if (t.output_bytes > len)
            agti_buf_printf(&b, "\nOutput (last %zu bytes):\n", len);
        else
            agti_buf_puts(&b, "\nOutput:\n");
        agti_buf_put(&b, tail, len);
    }
    free(tail);
    json_t *j = info_json(&t);
    if (j != NULL)
        json_object_set_new(j, "still_running_after_wait", json_boolean(still_running));
    return agti_tool_finish(call, &b, j, false);
}

int agti_tool_taskstop(agt_call *call, void *payload)
{
    (void)payload;
    agt_session *s = agt_call_session(call);
    json_t *a = agti_call_args_json(call);
    const char *id = json_string_value(json_object_get(a, "task_id"));
    const char *reason = json_string_value(json_object_get(a, "reason"));
    if (reason == NULL || reason[0] == '\0')
        reason = "Stopped by TaskStop";
    agti_ext_task *ext = agti_session_ext_find(s, id);
    if (ext != NULL) {
        agti_buf eb = AGTI_BUF_INIT;
        int src = ext->ops->stop(ext->payload, reason);
        agti_ext_snapshot snap = {0};
        if (ext->ops->snapshot(ext->payload, &snap) != AGT_OK)
            return agti_oom();
        if (src == AGT_ESTATE)
            agti_buf_printf(&eb, "Task %s had already ended: %s. Nothing was stopped.", id,
                            snap.status);
        else if (src == AGT_OK)
            agti_buf_printf(&eb, "Task %s was stopped; final state: %s (%s).", id, snap.status,
                            reason);
        else
            agti_buf_printf(&eb, "Task %s was asked to stop but is still %s.", id, snap.status);
        json_t *j =
            json_pack("{s:s, s:s, s:s, s:s, s:b}", "task_id", id, "kind", ext->kind, "description",
                      ext->description, "status", snap.status, "stopped", src == AGT_OK);
        agti_ext_snapshot_free(&snap);
        return agti_tool_finish(call, &eb, j, false);
    }
    agti_tasks *m = existing_tasks(s);
    agti_task_info t;
    json_t *old = NULL;
    if (id != NULL && (m == NULL || agti_tasks_get(m, id, &t) != AGT_OK) &&
        (old = agti_session_restored_task(s, id)) != NULL) {
        agti_buf ob = AGTI_BUF_INIT;
        agti_buf_printf(&ob,
                        "Task %s had already ended: %s (from the restored session). Nothing "
                        "was stopped.",
                        id, json_string_value(json_object_get(old, "status")));
        return agti_tool_finish(call, &ob, json_incref(old), false);
    }
    if (id == NULL || m == NULL || agti_tasks_get(m, id, &t) != AGT_OK)
        return unknown_task(call, id ? id : "");
    agti_buf b = AGTI_BUF_INIT;
    int rc = agti_tasks_stop(m, id, reason);
    if (rc == AGT_ESTATE) {
        agti_buf_printf(&b, "Task %s had already ended: ", id);
        put_state(&b, &t);
        agti_buf_puts(&b, ". Nothing was stopped.");
    } else if (rc != AGT_OK) {
        return rc;
    } else {
        /* TERM went out; KILL follows after the grace period */
        agti_tasks_wait(m, id, AGTI_PROC_DEFAULT_GRACE_MS + 1000);
        if (agti_tasks_get(m, id, &t) != AGT_OK)
            return unknown_task(call, id);
        agti_buf_printf(&b, "Task %s was stopped; final state: ", id);
        put_state(&b, &t);
        agti_buf_putc(&b, '.');
    }
    if (agti_tasks_get(m, id, &t) != AGT_OK)
        return unknown_task(call, id);
    json_t *j = info_json(&t);
    if (j != NULL)
        json_object_set_new(j, "stopped", json_boolean(rc == AGT_OK));
    return agti_tool_finish(call, &b, j, false);
}
