/*
 * The session's background state: the task manager (created on first use),
 * the clock, the idle flag, and the queue of events that agt_session_tick()
 * hands to the host (finished background tasks, cron fires).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"
#include "events_internal.h"
#include "session_internal.h"

/* Bytes of a finished task's output quoted in its notification. */
#define EVENT_PREVIEW_BYTES 2048

static int64_t realtime_ms(void *payload)
{
    (void)payload;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct agti_session_bg *agti_session_bg(agt_session *s)
{
    if (s->bg != NULL)
        return s->bg;
    struct agti_session_bg *bg = calloc(1, sizeof *bg);
    json_t *events = json_array(), *quiet = json_object();
    if (bg == NULL || events == NULL || quiet == NULL) {
        free(bg);
        json_decref(events);
        json_decref(quiet);
        agti_oom();
        return NULL;
    }
    bg->clock = realtime_ms;
    bg->events = events;
    bg->quiet = quiet;
    s->bg = bg;
    return bg;
}

void agti_session_bg_free(struct agti_session_bg *bg)
{
    if (bg == NULL)
        return;
    agti_tasks_free(bg->tasks);
    free(bg->log_dir);
    json_decref(bg->events);
    json_decref(bg->quiet);
    json_decref(bg->restored);
    agti_crontab_clear(&bg->cron);
    for (size_t i = 0; i < bg->n_ext; i++) {
        free(bg->ext[i].id);
        free(bg->ext[i].kind);
        free(bg->ext[i].description);
    }
    free(bg->ext);
    free(bg);
}

/* ---- external tasks (background sub-agents) ---- */

void agti_ext_snapshot_free(agti_ext_snapshot *snap)
{
    if (snap == NULL)
        return;
    free(snap->output);
    free(snap->message);
    free(snap->preview);
    memset(snap, 0, sizeof *snap);
}

agti_ext_task *agti_session_ext_find(agt_session *s, const char *id)
{
    struct agti_session_bg *bg = s != NULL ? s->bg : NULL;
    for (size_t i = 0; bg != NULL && id != NULL && i < bg->n_ext; i++)
        if (strcmp(bg->ext[i].id, id) == 0)
            return &bg->ext[i];
    return NULL;
}

int agti_session_ext_add(agt_session *s, const char *id, const char *kind, const char *description,
                         const agti_ext_task_ops *ops, void *payload)
{
    struct agti_session_bg *bg = agti_session_bg(s);
    if (bg == NULL)
        return AGT_ENOMEM;
    char *desc = agti_strdup(description != NULL ? description : "");
    if (desc == NULL)
        return agti_oom();
    agti_ext_task *t = agti_session_ext_find(s, id);
    if (t == NULL) {
        agti_ext_task *grown = realloc(bg->ext, (bg->n_ext + 1) * sizeof *grown);
        if (grown == NULL) {
            free(desc);
            return agti_oom();
        }
        bg->ext = grown;
        t = &bg->ext[bg->n_ext];
        memset(t, 0, sizeof *t);
        t->id = agti_strdup(id);
        t->kind = agti_strdup(kind);
        if (t->id == NULL || t->kind == NULL) {
            free(t->id);
            free(t->kind);
            free(desc);
            return agti_oom();
        }
        bg->n_ext++;
    }
    free(t->description);
    t->description = desc;
    t->ops = ops;
    t->payload = payload;
    t->reported = false;
    return AGT_OK;
}

void agti_session_ext_remove(agt_session *s, const char *id)
{
    agti_ext_task *t = agti_session_ext_find(s, id);
    if (t == NULL)
        return;
    struct agti_session_bg *bg = s->bg;
    free(t->id);
    free(t->kind);
    free(t->description);
    size_t k = (size_t)(t - bg->ext);
    memmove(t, t + 1, (bg->n_ext - k - 1) * sizeof *t);
    bg->n_ext--;
}

bool agti_ext_status_active(const char *status)
{
    return strcmp(status, "running") == 0 || strcmp(status, "waiting for approval") == 0;
}

/* Ended external tasks become "task_finished" events with their kind; an
 * active one may have an event of its own (a sub-agent waits for approval). */
static int collect_ext_events(struct agti_session_bg *bg)
{
    for (size_t i = 0; i < bg->n_ext; i++) {
        agti_ext_task *t = &bg->ext[i];
        if (t->reported)
            continue;
        json_t *ev = t->ops->take_event ? t->ops->take_event(t->payload) : NULL;
        if (ev != NULL && json_array_append_new(bg->events, ev) != 0)
            return agti_oom();
        agti_ext_snapshot snap = {0};
        if (t->ops->snapshot(t->payload, &snap) != AGT_OK)
            return AGT_ENOMEM;
        if (agti_ext_status_active(snap.status)) {
            agti_ext_snapshot_free(&snap);
            continue;
        }
        json_t *o =
            json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "type", "task_finished", "kind",
                      t->kind, "task_id", t->id, "description", t->description, "status",
                      snap.status, "preview", snap.preview != NULL ? snap.preview : "", "message",
                      snap.message != NULL ? snap.message : "");
        agti_ext_snapshot_free(&snap);
        if (o == NULL || json_array_append_new(bg->events, o) != 0)
            return agti_oom();
        t->reported = true;
    }
    return AGT_OK;
}

int64_t agti_session_now_ms(agt_session *s)
{
    struct agti_session_bg *bg = agti_session_bg(s);
    if (bg == NULL)
        return realtime_ms(NULL);
    return bg->clock(bg->clock_payload);
}

/* mkdir -p with mode 0700 for the parts it creates. */
static int make_dirs(const char *path)
{
    char *p = agti_strdup(path);
    if (p == NULL)
        return agti_oom();
    for (char *q = p + 1;; q++) {
        if (*q != '/' && *q != '\0')
            continue;
        char c = *q;
        *q = '\0';
        if (mkdir(p, 0700) != 0 && errno != EEXIST) {
            int rc = agti_error(AGT_EIO, "cannot create the task log directory '%s': %s", p,
                                strerror(errno));
            free(p);
            return rc;
        }
        *q = c;
        if (c == '\0')
            break;
    }
    struct stat st;
    int ok = stat(p, &st) == 0 && S_ISDIR(st.st_mode);
    free(p);
    return ok ? AGT_OK
              : agti_error(AGT_EIO, "the task log directory '%s' is not a directory", path);
}

static char *default_log_dir(void)
{
    const char *tmp = getenv("TMPDIR");
    if (tmp == NULL || tmp[0] != '/')
        tmp = "/tmp";
    uint32_t token;
    if (getrandom(&token, sizeof token, GRND_NONBLOCK) != (ssize_t)sizeof token)
        token = (uint32_t)getpid() ^ (uint32_t)realtime_ms(NULL);
    return agti_aprintf("%s/agenttools-%u/%08x", tmp, (unsigned)getuid(), (unsigned)token);
}

int agti_session_log_dir(agt_session *s, const char **out)
{
    struct agti_session_bg *bg = agti_session_bg(s);
    if (bg == NULL)
        return AGT_ENOMEM;
    if (bg->log_dir == NULL && (bg->log_dir = default_log_dir()) == NULL)
        return agti_oom();
    int rc = make_dirs(bg->log_dir);
    if (rc != AGT_OK)
        return rc;
    *out = bg->log_dir;
    return AGT_OK;
}

int agti_session_tasks(agt_session *s, agti_tasks **out)
{
    struct agti_session_bg *bg = agti_session_bg(s);
    if (bg == NULL)
        return AGT_ENOMEM;
    if (bg->tasks == NULL) {
        const char *dir;
        int rc = agti_session_log_dir(s, &dir);
        if (rc != AGT_OK)
            return rc;
        agti_tasks_opts o = {0};
        o.log_dir = dir;
        o.max_running = bg->max_running;
        o.preview_bytes = EVENT_PREVIEW_BYTES;
        rc = agti_tasks_new(&bg->tasks, &o);
        if (rc != AGT_OK)
            return rc;
    }
    *out = bg->tasks;
    return AGT_OK;
}

static json_t *task_event_json(agti_tasks *m, const agti_task_event *e)
{
    agti_task_info info;
    const char *desc = "";
    if (agti_tasks_get(m, e->id, &info) == AGT_OK)
        desc = info.description;
    const char *state = agti_proc_state_name(e->state);
    agti_buf msg = AGTI_BUF_INIT;
    agti_buf_printf(&msg, "Background task %s", e->id);
    if (desc[0] != '\0')
        agti_buf_printf(&msg, " (%s)", desc);
    if (e->state == AGTI_PROC_COMPLETED)
        agti_buf_puts(&msg, " completed with exit code 0.");
    else if (e->state == AGTI_PROC_FAILED && e->exit_code >= 0)
        agti_buf_printf(&msg, " failed with exit code %d.", e->exit_code);
    else if (e->state == AGTI_PROC_FAILED && e->signal > 0)
        agti_buf_printf(&msg, " failed: killed by signal %d.", e->signal);
    else
        agti_buf_printf(&msg, " ended: %s%s%s.", state, e->reason ? ", " : "",
                        e->reason ? e->reason : "");
    agti_buf_printf(&msg, "\nFull output: %s", e->log_path);
    if (e->preview != NULL && e->preview[0] != '\0')
        agti_buf_printf(&msg, "\nLast output:\n%s", e->preview);
    else
        agti_buf_puts(&msg, "\n(no output)");
    if (msg.oom) {
        agti_buf_free(&msg);
        return NULL;
    }
    json_t *o = json_pack(
        "{s:s, s:s, s:s, s:s, s:o, s:i, s:o, s:s, s:s, s:s}", "type", "task_finished", "task_id",
        e->id, "description", desc, "status", state, "exit_code",
        e->exit_code >= 0 ? json_integer(e->exit_code) : json_null(), "signal", e->signal, "reason",
        e->reason ? json_string(e->reason) : json_null(), "output_path", e->log_path, "preview",
        e->preview ? e->preview : "", "message", agti_buf_cstr(&msg));
    agti_buf_free(&msg);
    return o;
}

int agti_session_collect_task_events(agt_session *s)
{
    struct agti_session_bg *bg = agti_session_bg(s);
    if (bg == NULL)
        return AGT_ENOMEM;
    if (bg->tasks == NULL)
        return AGT_OK;
    agti_task_event *ev = NULL;
    size_t n = 0;
    int rc = agti_tasks_take_events(bg->tasks, &ev, &n);
    if (rc != AGT_OK)
        return rc;
    for (size_t i = 0; i < n && rc == AGT_OK; i++) {
        if (json_object_get(bg->quiet, ev[i].id) != NULL) {
            json_object_del(bg->quiet, ev[i].id);
            continue;
        }
        json_t *o = task_event_json(bg->tasks, &ev[i]);
        if (o == NULL || json_array_append_new(bg->events, o) != 0)
            rc = agti_oom();
    }
    agti_task_events_free(ev, n);
    return rc;
}

int agt_session_set_clock(agt_session *s, agt_clock_fn fn, void *payload)
{
    if (s == NULL)
        return agti_error(AGT_EINVAL, "agt_session_set_clock: session is NULL");
    struct agti_session_bg *bg = agti_session_bg(s);
    if (bg == NULL)
        return AGT_ENOMEM;
    bg->clock = fn ? fn : realtime_ms;
    bg->clock_payload = fn ? payload : NULL;
    return AGT_OK;
}

int agt_session_set_idle(agt_session *s, int idle)
{
    if (s == NULL)
        return agti_error(AGT_EINVAL, "agt_session_set_idle: session is NULL");
    struct agti_session_bg *bg = agti_session_bg(s);
    if (bg == NULL)
        return AGT_ENOMEM;
    bg->idle = idle != 0;
    return AGT_OK;
}

int agt_session_tick(agt_session *s, int64_t now_ms, char **events_json)
{
    if (events_json != NULL)
        *events_json = NULL;
    if (s == NULL || events_json == NULL)
        return agti_error(AGT_EINVAL, "agt_session_tick: session or events_json is NULL");
    struct agti_session_bg *bg = agti_session_bg(s);
    if (bg == NULL)
        return AGT_ENOMEM;
    if (now_ms < 0)
        now_ms = bg->clock(bg->clock_payload);
    int rc = AGT_OK;
    if (bg->tasks != NULL)
        rc = agti_tasks_pump(bg->tasks, 0);
    int crc = agti_session_collect_task_events(s);
    if (rc == AGT_OK)
        rc = crc;
    crc = collect_ext_events(bg);
    if (rc == AGT_OK)
        rc = crc;
    if (bg->idle) {
        crc = agti_crontab_collect(&bg->cron, now_ms / 1000, bg->events);
        if (rc == AGT_OK)
            rc = crc;
    }
    char *text = agti_json_dump(bg->events);
    if (text == NULL)
        return agti_oom();
    json_array_clear(bg->events);
    *events_json = text;
    return rc;
}

int agt_session_poll_fds(agt_session *s, int *fds, size_t cap, size_t *n_out)
{
    if (s == NULL || n_out == NULL || (fds == NULL && cap > 0))
        return agti_error(AGT_EINVAL, "agt_session_poll_fds: session, fds or n_out is NULL");
    *n_out = 0;
    if (s->bg == NULL)
        return AGT_OK;
    size_t got = 0;
    if (s->bg->tasks != NULL) {
        size_t need = agti_tasks_poll_fds(s->bg->tasks, NULL, 0);
        struct pollfd *p = calloc(need ? need : 1, sizeof *p);
        if (p == NULL)
            return agti_oom();
        got = agti_tasks_poll_fds(s->bg->tasks, p, need);
        for (size_t i = 0; i < got && i < cap; i++)
            fds[i] = p[i].fd;
        free(p);
    }
    /* external tasks whose end is not reported yet: readable when they end */
    for (size_t i = 0; i < s->bg->n_ext; i++) {
        agti_ext_task *t = &s->bg->ext[i];
        int fd = t->reported || t->ops->poll_fd == NULL ? -1 : t->ops->poll_fd(t->payload);
        if (fd < 0)
            continue;
        if (got < cap)
            fds[got] = fd;
        got++;
    }
    *n_out = got;
    return AGT_OK;
}

int agt_session_next_deadline(agt_session *s, int64_t now_ms, int64_t *out_ms)
{
    if (s == NULL || out_ms == NULL)
        return agti_error(AGT_EINVAL, "agt_session_next_deadline: session or out_ms is NULL");
    *out_ms = -1;
    struct agti_session_bg *bg = s->bg;
    if (bg == NULL)
        return AGT_OK;
    if (now_ms < 0)
        now_ms = bg->clock(bg->clock_payload);
    if (bg->tasks != NULL) {
        int64_t d = agti_tasks_next_deadline(bg->tasks);
        if (d >= 0) {
            int64_t left = d - agti_proc_monotonic_ms(NULL);
            *out_ms = now_ms + (left > 0 ? left : 0);
        }
    }
    if (bg->idle) {
        int64_t f = agti_crontab_next_fire(&bg->cron);
        if (f >= 0 && (*out_ms < 0 || f * 1000 < *out_ms))
            *out_ms = f * 1000;
    }
    return AGT_OK;
}

/* Settings that shape the task manager can change only before it exists. */
static int before_tasks(agt_session *s, const char *what, struct agti_session_bg **out)
{
    struct agti_session_bg *bg = agti_session_bg(s);
    if (bg == NULL)
        return AGT_ENOMEM;
    if (bg->tasks != NULL)
        return agti_error(AGT_ESTATE, "%s: a command already ran in this session; set it first",
                          what);
    *out = bg;
    return AGT_OK;
}

int agt_session_set_task_log_dir(agt_session *s, const char *dir)
{
    if (s == NULL || dir == NULL || dir[0] != '/')
        return agti_error(AGT_EINVAL,
                          "agt_session_set_task_log_dir: the directory must be an absolute path");
    struct agti_session_bg *bg = NULL;
    int rc = before_tasks(s, "agt_session_set_task_log_dir", &bg);
    if (rc != AGT_OK)
        return rc;
    char *copy = agti_strdup(dir);
    if (copy == NULL)
        return agti_oom();
    free(bg->log_dir);
    bg->log_dir = copy;
    return AGT_OK;
}

int agt_session_set_max_tasks(agt_session *s, int max)
{
    if (s == NULL || max < 1 || max > 4096)
        return agti_error(AGT_EINVAL, "agt_session_set_max_tasks: %d is not in 1..4096", max);
    struct agti_session_bg *bg = NULL;
    int rc = before_tasks(s, "agt_session_set_max_tasks", &bg);
    if (rc != AGT_OK)
        return rc;
    bg->max_running = (size_t)max;
    return AGT_OK;
}

int agt_session_set_background_on_timeout(agt_session *s, int on)
{
    if (s == NULL)
        return agti_error(AGT_EINVAL, "agt_session_set_background_on_timeout: session is NULL");
    struct agti_session_bg *bg = agti_session_bg(s);
    if (bg == NULL)
        return AGT_ENOMEM;
    bg->background_on_timeout = on != 0;
    return AGT_OK;
}

int agt_session_set_tool_output_callback(agt_session *s, agt_tool_output_fn fn, void *payload)
{
    if (s == NULL)
        return agti_error(AGT_EINVAL, "agt_session_set_tool_output_callback: session is NULL");
    struct agti_session_bg *bg = agti_session_bg(s);
    if (bg == NULL)
        return AGT_ENOMEM;
    bg->output_fn = fn;
    bg->output_payload = fn != NULL ? payload : NULL;
    return AGT_OK;
}

/* ---- save and restore ------------------------------------------------ */

json_t *agti_session_restored_task(const agt_session *s, const char *id)
{
    if (s->bg == NULL || id == NULL)
        return NULL;
    size_t i;
    json_t *t;
    json_array_foreach(s->bg->restored, i, t)
    {
        if (strcmp(json_string_value(json_object_get(t, "task_id")), id) == 0)
            return t;
    }
    return NULL;
}

static json_t *saved_task(const agti_task_info *t)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:o, s:i, s:o, s:s, s:I}", "task_id", t->id, "command",
                     t->command, "description", t->description, "status",
                     agti_proc_state_name(t->state), "exit_code",
                     t->exit_code >= 0 ? json_integer(t->exit_code) : json_null(), "signal",
                     t->signal, "reason", t->reason ? json_string(t->reason) : json_null(),
                     "output_path", t->log_path, "output_bytes", (json_int_t)t->output_bytes);
}

int agti_tasks_section_save(const agt_session *s, json_t **value)
{
    *value = NULL;
    const struct agti_session_bg *bg = s->bg;
    if (bg == NULL || (bg->tasks == NULL && json_array_size(bg->restored) == 0))
        return AGT_OK;
    json_t *arr = json_array();
    if (arr == NULL)
        return agti_oom();
    size_t n = bg->tasks ? agti_tasks_count(bg->tasks) : 0, got = 0;
    agti_task_info *infos = calloc(n ? n : 1, sizeof *infos);
    if (infos == NULL) {
        json_decref(arr);
        return agti_oom();
    }
    if (bg->tasks != NULL)
        agti_tasks_list(bg->tasks, false, infos, n, &got);
    int rc = AGT_OK;
    for (size_t i = 0; i < got && rc == AGT_OK; i++)
        if (json_array_append_new(arr, saved_task(&infos[i])) != 0)
            rc = agti_oom();
    free(infos);
    size_t i;
    json_t *t;
    json_array_foreach(bg->restored, i, t)
    {
        if (rc == AGT_OK && json_array_append(arr, t) != 0)
            rc = agti_oom();
    }
    if (rc != AGT_OK) {
        json_decref(arr);
        return rc;
    }
    *value = arr;
    return AGT_OK;
}

static const char *const task_states[] = {"running",   "completed", "failed",
                                          "timed_out", "killed",    "lost"};

static bool known_state(const char *st)
{
    for (size_t i = 0; st != NULL && i < sizeof task_states / sizeof task_states[0]; i++)
        if (strcmp(st, task_states[i]) == 0)
            return true;
    return false;
}

/* Whether path can be the log of task id: an absolute path whose last
 * component is "<id>.log" (the task manager's naming). A saved session is
 * input: TaskOutput reads the saved path, so any other file is refused. */
static bool log_path_of(const char *path, const char *id)
{
    const char *base = strrchr(path, '/');
    if (path[0] != '/' || strchr(id, '/') != NULL || base == NULL)
        return false;
    base++;
    size_t n = strlen(id);
    return strncmp(base, id, n) == 0 && strcmp(base + n, ".log") == 0;
}

int agti_tasks_section_load(agt_session *s, json_t *value, void **tmp)
{
    *tmp = NULL;
    if (agti_session_bg(s) == NULL)
        return AGT_ENOMEM;
    json_t *arr = json_array();
    if (arr == NULL)
        return agti_oom();
    if (value != NULL && !json_is_array(value)) {
        json_decref(arr);
        return agti_error(AGT_EINVALID, "saved session: \"tasks\" must be an array");
    }
    size_t i;
    json_t *t;
    json_array_foreach(value, i, t)
    {
        const char *id = json_string_value(json_object_get(t, "task_id"));
        const char *st = json_string_value(json_object_get(t, "status"));
        const char *path = json_string_value(json_object_get(t, "output_path"));
        json_t *code = json_object_get(t, "exit_code");
        if (!json_is_object(t) || id == NULL || id[0] == '\0' || !known_state(st) || path == NULL ||
            (code != NULL && !json_is_null(code) && !json_is_integer(code))) {
            json_decref(arr);
            return agti_error(AGT_EINVALID,
                              "saved session: tasks[%zu] needs a task_id, a known status, an "
                              "output_path and an integer or null exit_code",
                              i);
        }
        if (!log_path_of(path, id)) {
            json_decref(arr);
            return agti_error(AGT_EINVALID,
                              "saved session: tasks[%zu]: output_path '%s' is not the log of task "
                              "'%s' (an absolute path ending in /%s.log); TaskOutput would read it",
                              i, path, id, id);
        }
        const char *cmd = json_string_value(json_object_get(t, "command"));
        const char *desc = json_string_value(json_object_get(t, "description"));
        const char *reason = json_string_value(json_object_get(t, "reason"));
        bool lost = strcmp(st, "running") == 0 || strcmp(st, "lost") == 0;
        json_t *rec = json_pack(
            "{s:s, s:s, s:s, s:s, s:o, s:I, s:s, s:s, s:I}", "task_id", id, "command",
            cmd ? cmd : "", "description", desc ? desc : "", "status", lost ? "lost" : st,
            "exit_code", json_is_integer(code) ? json_incref(code) : json_null(), "signal",
            (json_int_t)json_integer_value(json_object_get(t, "signal")), "reason",
            lost ? "the session was saved while it ran; it is no longer tracked"
                 : (reason ? reason : ""),
            "output_path", path, "output_bytes",
            (json_int_t)json_integer_value(json_object_get(t, "output_bytes")));
        if (rec == NULL || json_array_append_new(arr, rec) != 0) {
            json_decref(arr);
            return agti_oom();
        }
    }
    *tmp = arr;
    return AGT_OK;
}

void agti_tasks_section_commit(agt_session *s, void *tmp)
{
    /* load created s->bg */
    json_decref(s->bg->restored);
    s->bg->restored = tmp;
}

void agti_tasks_section_discard(void *tmp)
{
    json_decref(tmp);
}
