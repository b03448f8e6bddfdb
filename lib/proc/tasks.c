/*
 * Background task manager: many processes pumped together from the caller's
 * thread, each with an id "bash-XXXXXXXX", a log file, and one "finished"
 * event when it ends.
 */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "proc.h"

#define DEFAULT_MAX_RUNNING 16
#define DEFAULT_MAX_FINISHED 256
#define DEFAULT_PREVIEW 2048
#define DEFAULT_TAIL (32u * 1024)

typedef struct task {
    char id[16];
    char *command;
    char *description;
    agti_proc *proc;
    bool evented;
} task;

struct agti_tasks {
    task **v; /* in start order */
    size_t n, cap;
    char *log_dir;
    size_t max_running, max_finished, preview;
    agti_clock_fn clock;
    void *clock_ctx;
    agti_task_event *ev;
    size_t nev, cap_ev;
    uint32_t fallback_seed;
    struct pollfd *fds;
    size_t cap_fds;
};

int agti_tasks_new(agti_tasks **out, const agti_tasks_opts *opts)
{
    if (out == NULL || opts == NULL || opts->log_dir == NULL || opts->log_dir[0] == '\0')
        return agti_error(AGT_EINVAL, "tasks: a log directory is required");
    *out = NULL;
    agti_tasks *m = calloc(1, sizeof *m);
    if (m == NULL)
        return agti_oom();
    m->log_dir = agti_strdup(opts->log_dir);
    if (m->log_dir == NULL) {
        free(m);
        return agti_oom();
    }
    m->max_running = opts->max_running ? opts->max_running : DEFAULT_MAX_RUNNING;
    m->max_finished = opts->max_finished ? opts->max_finished : DEFAULT_MAX_FINISHED;
    m->preview = opts->preview_bytes ? opts->preview_bytes : DEFAULT_PREVIEW;
    m->clock = opts->clock ? opts->clock : agti_proc_monotonic_ms;
    m->clock_ctx = opts->clock_ctx;
    *out = m;
    return AGT_OK;
}

static void task_free(task *t)
{
    if (t == NULL)
        return;
    agti_proc_free(t->proc);
    free(t->command);
    free(t->description);
    free(t);
}

static void event_clear(agti_task_event *e)
{
    free(e->id);
    free(e->reason);
    free(e->preview);
    free(e->log_path);
}

void agti_task_events_free(agti_task_event *events, size_t n)
{
    for (size_t i = 0; events && i < n; i++)
        event_clear(&events[i]);
    free(events);
}

void agti_tasks_free(agti_tasks *m)
{
    if (m == NULL)
        return;
    for (size_t i = 0; i < m->n; i++) {
        agti_proc_kill_now(m->v[i]->proc, "task manager closed");
        task_free(m->v[i]);
    }
    free(m->v);
    for (size_t i = 0; i < m->nev; i++)
        event_clear(&m->ev[i]);
    free(m->ev);
    free(m->fds);
    free(m->log_dir);
    free(m);
}

static task *find(const agti_tasks *m, const char *id)
{
    for (size_t i = 0; id && i < m->n; i++)
        if (strcmp(m->v[i]->id, id) == 0)
            return m->v[i];
    return NULL;
}

size_t agti_tasks_running(const agti_tasks *m)
{
    size_t k = 0;
    for (size_t i = 0; m && i < m->n; i++)
        k += !agti_proc_done(m->v[i]->proc);
    return k;
}

size_t agti_tasks_count(const agti_tasks *m)
{
    return m ? m->n : 0;
}

static void new_id(agti_tasks *m, char id[16])
{
    for (;;) {
        uint32_t r;
        if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
            /* No entropy yet (early boot): ids need to be unique, not secret. */
            m->fallback_seed =
                m->fallback_seed * 1664525u + 1013904223u + (uint32_t)agti_proc_monotonic_ms(NULL);
            r = m->fallback_seed;
        }
        snprintf(id, 16, "bash-%08x", r);
        if (find(m, id) == NULL)
            return;
    }
}

int agti_tasks_start(agti_tasks *m, const char *command, const char *description,
                     const agti_proc_opts *popts, char id_out[16])
{
    if (m == NULL || id_out == NULL)
        return agti_error(AGT_EINVAL, "tasks: NULL argument");
    id_out[0] = '\0';
    size_t running = agti_tasks_running(m);
    if (running >= m->max_running)
        return agti_error(AGT_ELIMIT,
                          "tasks: %zu background tasks are already running (the limit is %zu); "
                          "wait for one to finish or stop one",
                          running, m->max_running);
    if (agti_grow(&m->v, &m->cap, m->n, sizeof *m->v, 16) != AGT_OK)
        return AGT_ENOMEM;
    task *t = calloc(1, sizeof *t);
    if (t == NULL)
        return agti_oom();
    new_id(m, t->id);
    t->command = agti_strdup(command ? command : "");
    t->description = agti_strdup(description ? description : "");
    char *log_path = agti_aprintf("%s/%s.log", m->log_dir, t->id);
    if (t->command == NULL || t->description == NULL || log_path == NULL) {
        free(log_path);
        task_free(t);
        return agti_oom();
    }
    agti_proc_opts o;
    if (popts)
        o = *popts;
    else
        agti_proc_opts_init(&o);
    o.log_path = log_path;
    if (o.clock == NULL) {
        o.clock = m->clock;
        o.clock_ctx = m->clock_ctx;
    }
    int rc = agti_proc_spawn(&t->proc, command, &o);
    free(log_path);
    if (rc != AGT_OK) {
        task_free(t);
        return rc;
    }
    m->v[m->n++] = t;
    memcpy(id_out, t->id, sizeof t->id);
    return AGT_OK;
}

/* The end of the captured output, at most max bytes, from a character start. */
static char *preview_of(const agti_proc *p, size_t max)
{
    char *all;
    size_t len;
    if (agti_proc_output(p, &all, &len) != AGT_OK)
        return NULL;
    if (len <= max)
        return all;
    size_t off = len - max;
    while (off < len && ((unsigned char)all[off] & 0xC0) == 0x80)
        off++;
    memmove(all, all + off, len - off + 1);
    return all;
}

static int add_event(agti_tasks *m, task *t)
{
    if (agti_grow(&m->ev, &m->cap_ev, m->nev, sizeof *m->ev, 16) != AGT_OK)
        return AGT_ENOMEM;
    agti_task_event *e = &m->ev[m->nev];
    memset(e, 0, sizeof *e);
    const char *reason = agti_proc_reason(t->proc);
    e->id = agti_strdup(t->id);
    e->state = agti_proc_state_get(t->proc);
    e->exit_code = agti_proc_exit_code(t->proc);
    e->signal = agti_proc_signal(t->proc);
    e->reason = reason ? agti_strdup(reason) : NULL;
    e->preview = preview_of(t->proc, m->preview);
    e->log_path = agti_strdup(agti_proc_log_path(t->proc));
    if (e->id == NULL || (reason && e->reason == NULL) || e->preview == NULL ||
        e->log_path == NULL) {
        event_clear(e);
        return agti_oom();
    }
    m->nev++;
    t->evented = true;
    return AGT_OK;
}

/* Drops the oldest finished tasks beyond max_finished (their events are
 * already queued). */
static void evict(agti_tasks *m)
{
    size_t finished = 0;
    for (size_t i = 0; i < m->n; i++)
        finished += m->v[i]->evented;
    size_t w = 0;
    for (size_t i = 0; i < m->n; i++) {
        task *t = m->v[i];
        if (finished > m->max_finished && t->evented) {
            task_free(t);
            finished--;
            continue;
        }
        m->v[w++] = t;
    }
    m->n = w;
}

static int collect(agti_tasks *m)
{
    int rc = AGT_OK;
    bool any = false;
    for (size_t i = 0; i < m->n; i++) {
        task *t = m->v[i];
        if (!t->evented && agti_proc_done(t->proc)) {
            int r = add_event(m, t);
            if (r != AGT_OK)
                rc = r;
            any = true;
        }
    }
    if (any)
        evict(m);
    return rc;
}

size_t agti_tasks_poll_fds(const agti_tasks *m, struct pollfd *fds, size_t cap)
{
    size_t n = 0;
    struct pollfd two[2];
    for (size_t i = 0; m && i < m->n; i++) {
        size_t k = agti_proc_poll_fds(m->v[i]->proc, two);
        for (size_t j = 0; j < k; j++, n++)
            if (n < cap)
                fds[n] = two[j];
    }
    return n;
}

int64_t agti_tasks_next_deadline(const agti_tasks *m)
{
    int64_t best = -1;
    for (size_t i = 0; m && i < m->n; i++) {
        int64_t d = agti_proc_next_deadline(m->v[i]->proc);
        if (d >= 0 && (best < 0 || d < best))
            best = d;
    }
    return best;
}

int agti_tasks_pump(agti_tasks *m, int timeout_ms)
{
    if (m == NULL)
        return agti_error(AGT_EINVAL, "tasks: NULL handle");
    size_t need = agti_tasks_poll_fds(m, NULL, 0);
    if (need > m->cap_fds) {
        struct pollfd *nf = realloc(m->fds, need * sizeof *nf);
        if (nf == NULL)
            return agti_oom();
        m->fds = nf;
        m->cap_fds = need;
    }
    size_t n = agti_tasks_poll_fds(m, m->fds, m->cap_fds);
    int running = (int)agti_tasks_running(m);
    int64_t wait = timeout_ms;
    int64_t dl = agti_tasks_next_deadline(m);
    if (dl >= 0) {
        int64_t left = dl - m->clock(m->clock_ctx);
        if (left < 0)
            left = 0;
        if (wait < 0 || left < wait)
            wait = left;
    }
    if (running == 0)
        wait = 0;
    if (wait > INT32_MAX)
        wait = INT32_MAX;
    if (wait != 0 || n > 0) {
        int pr = poll(m->fds, (nfds_t)n, (int)wait);
        if (pr < 0 && errno != EINTR)
            return agti_error(AGT_EIO, "tasks: poll: %s", strerror(errno));
    }
    int rc = AGT_OK;
    for (size_t i = 0; i < m->n; i++) {
        if (agti_proc_done(m->v[i]->proc))
            continue;
        int r = agti_proc_pump(m->v[i]->proc, 0);
        if (r != AGT_OK)
            rc = r;
    }
    int r = collect(m);
    return rc != AGT_OK ? rc : r;
}

int agti_tasks_stop(agti_tasks *m, const char *id, const char *reason)
{
    if (m == NULL)
        return agti_error(AGT_EINVAL, "tasks: NULL handle");
    task *t = find(m, id);
    if (t == NULL)
        return agti_error(AGT_ENOTFOUND, "tasks: no task with id '%s'", id ? id : "(null)");
    if (agti_proc_done(t->proc))
        return agti_error(AGT_ESTATE, "tasks: task %s has already finished (%s)", t->id,
                          agti_proc_state_name(agti_proc_state_get(t->proc)));
    int rc = agti_proc_stop(t->proc, reason);
    if (rc == AGT_ESTATE)
        agti_error_prefix("tasks: task %s", t->id);
    return rc;
}

int agti_tasks_wait(agti_tasks *m, const char *id, int64_t timeout_ms)
{
    if (m == NULL)
        return agti_error(AGT_EINVAL, "tasks: NULL handle");
    char key[16];
    if (find(m, id) == NULL)
        return agti_error(AGT_ENOTFOUND, "tasks: no task with id '%s'", id ? id : "(null)");
    snprintf(key, sizeof key, "%s", id);
    int64_t until = timeout_ms >= 0 ? m->clock(m->clock_ctx) + timeout_ms : -1;
    for (;;) {
        task *t = find(m, key);
        if (t == NULL || agti_proc_done(t->proc))
            return AGT_OK;
        int slice = -1;
        if (until >= 0) {
            int64_t left = until - m->clock(m->clock_ctx);
            if (left <= 0) {
                agti_tasks_pump(m, 0);
                t = find(m, key);
                if (t == NULL || agti_proc_done(t->proc))
                    return AGT_OK;
                return agti_error(AGT_ETIMEOUT, "tasks: task %s is still running after %lld ms",
                                  key, (long long)timeout_ms);
            }
            slice = left > INT32_MAX ? INT32_MAX : (int)left;
        }
        int rc = agti_tasks_pump(m, slice);
        if (rc != AGT_OK)
            return rc;
    }
}

static void fill_info(const task *t, agti_task_info *info)
{
    info->id = t->id;
    info->command = t->command;
    info->description = t->description;
    info->state = agti_proc_state_get(t->proc);
    info->exit_code = agti_proc_exit_code(t->proc);
    info->signal = agti_proc_signal(t->proc);
    info->reason = agti_proc_reason(t->proc);
    info->log_path = agti_proc_log_path(t->proc);
    info->pid = agti_proc_pid(t->proc);
    info->started_ms = agti_proc_started_ms(t->proc);
    info->ended_ms = agti_proc_ended_ms(t->proc);
    info->output_bytes = agti_proc_output_bytes(t->proc);
}

int agti_tasks_get(const agti_tasks *m, const char *id, agti_task_info *info)
{
    if (m == NULL || info == NULL)
        return agti_error(AGT_EINVAL, "tasks: NULL argument");
    const task *t = find(m, id);
    if (t == NULL)
        return agti_error(AGT_ENOTFOUND, "tasks: no task with id '%s'", id ? id : "(null)");
    fill_info(t, info);
    return AGT_OK;
}

void agti_tasks_list(const agti_tasks *m, bool active_only, agti_task_info *infos, size_t cap,
                     size_t *n)
{
    size_t k = 0;
    for (size_t i = m ? m->n : 0; i-- > 0 && k < cap;) {
        const task *t = m->v[i];
        if (active_only && agti_proc_done(t->proc))
            continue;
        fill_info(t, &infos[k++]);
    }
    if (n)
        *n = k;
}

int agti_tasks_tail(const agti_tasks *m, const char *id, size_t max_bytes, char **out, size_t *len)
{
    if (m == NULL || out == NULL)
        return agti_error(AGT_EINVAL, "tasks: NULL argument");
    const task *t = find(m, id);
    if (t == NULL)
        return agti_error(AGT_ENOTFOUND, "tasks: no task with id '%s'", id ? id : "(null)");
    return agti_proc_read_log_tail(agti_proc_log_path(t->proc),
                                   max_bytes ? max_bytes : DEFAULT_TAIL, out, len);
}

int agti_tasks_take_events(agti_tasks *m, agti_task_event **events, size_t *n)
{
    if (m == NULL || events == NULL || n == NULL)
        return agti_error(AGT_EINVAL, "tasks: NULL argument");
    *events = m->nev ? m->ev : NULL;
    *n = m->nev;
    if (m->nev) {
        m->ev = NULL;
        m->nev = m->cap_ev = 0;
    }
    return AGT_OK;
}
