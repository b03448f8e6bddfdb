/*
 * Saving and restoring an agent (see agent.h): agt_agent_save() and
 * agt_agent_restore(), with its sub-agents and its background tasks (which
 * come back "lost").
 */

#include <stdlib.h>
#include <string.h>

#include "agent/agent_internal.h"
#include "session/fs_settings.h"

/* A background task that ran when the state was saved: its thread is gone,
 * so it shows as "lost" (TaskList, TaskOutput, one task_finished event). */
typedef struct lost_task {
    char id[32];
    char kind[8];
    char *description;
} lost_task;

static int lost_snapshot(void *payload, agti_ext_snapshot *out)
{
    lost_task *t = payload;
    memset(out, 0, sizeof *out);
    out->status = "lost";
    out->output = agti_strdup("");
    out->preview = agti_strdup("");
    out->message = agti_aprintf(
        "Background %s %s (%s) was running when the session was saved; its work was lost. "
        "Start it again if the task still matters.",
        strcmp(t->kind, "swarm") == 0 ? "swarm" : "sub-agent", t->id, t->description);
    if (!out->output || !out->preview || !out->message) {
        agti_ext_snapshot_free(out);
        return agti_oom();
    }
    return AGT_OK;
}

static int lost_stop(void *payload, const char *reason)
{
    (void)payload;
    (void)reason;
    return AGT_ESTATE;
}

static int lost_wait(void *payload, int64_t ms)
{
    (void)payload;
    (void)ms;
    return AGT_OK;
}

static int lost_poll_fd(void *payload)
{
    (void)payload;
    return -1;
}

static const agti_ext_task_ops lost_ops = {lost_snapshot, lost_stop, lost_wait, lost_poll_fd, NULL};

typedef struct lost_list {
    lost_task **v;
    size_t n;
} lost_list;

static void lost_list_free(lost_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i]->description);
        free(l->v[i]);
    }
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

void agti_agent_lost_free_all(agt_agent *root)
{
    for (size_t i = 0; i < root->n_lost; i++)
        agti_session_ext_remove(root->session, root->lost[i]->id);
    lost_list l = {root->lost, root->n_lost};
    lost_list_free(&l);
    root->lost = NULL;
    root->n_lost = 0;
}

static int parse_lost(json_t *tasks, lost_list *l)
{
    if (tasks && !json_is_array(tasks))
        return agti_error(AGT_EPARSE, "agent state: \"tasks\" is not an array");
    size_t n = json_array_size(tasks);
    if (n == 0)
        return AGT_OK;
    if (!(l->v = calloc(n, sizeof *l->v)))
        return agti_oom();
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_array_get(tasks, i);
        const char *id = json_string_value(json_object_get(o, "id"));
        const char *kind = json_string_value(json_object_get(o, "kind"));
        const char *desc = json_string_value(json_object_get(o, "description"));
        if (!id || !desc || !kind || (strcmp(kind, "agent") && strcmp(kind, "swarm")) ||
            strlen(id) == 0 || strlen(id) >= 32) {
            lost_list_free(l);
            return agti_error(AGT_EPARSE,
                              "agent state: tasks[%zu] needs \"id\" (1..31 bytes), \"kind\" "
                              "(agent or swarm) and \"description\"",
                              i);
        }
        lost_task *t = calloc(1, sizeof *t);
        if (!t || !(t->description = agti_strdup(desc))) {
            free(t);
            lost_list_free(l);
            return agti_oom();
        }
        snprintf(t->id, sizeof t->id, "%s", id);
        snprintf(t->kind, sizeof t->kind, "%s", kind);
        l->v[l->n++] = t;
    }
    return AGT_OK;
}

#define STATE_VERSION 1

/* {"version","messages","turns","tokens_used","stop","waiting":[{"id","name",
 * "arguments","answered","text","is_error"[,"suspended":{...}]}]} of one
 * agent; NULL on OOM. */
static json_t *state_json(const agt_agent *a)
{
    json_t *waiting = json_array();
    json_t *susp_calls = agti_session_suspended_json(a->session);
    for (size_t i = 0; waiting && susp_calls && a->waiting && i < a->n_calls; i++) {
        const call *c = &a->calls[i];
        json_t *w =
            json_pack("{s:s,s:s,s:s,s:b,s:s?,s:b}", "id", c->id, "name", c->name, "arguments",
                      c->args, "answered", c->answered, "text", c->text, "is_error", c->is_error);
        if (w && c->susp) {
            json_t *ids = json_array();
            for (size_t k = 0; ids && k < c->susp->n; k++)
                json_array_append_new(ids, json_string(c->susp->subs[k]->id));
            const char *sargs = c->args, *snote = NULL, *scontext = NULL;
            size_t j;
            json_t *e;
            json_array_foreach(susp_calls, j, e)
            {
                if (strcmp(json_string_value(json_object_get(e, "call_id")), c->id) == 0) {
                    sargs = json_string_value(json_object_get(e, "arguments"));
                    snote = json_string_value(json_object_get(e, "note"));
                    scontext = json_string_value(json_object_get(e, "context"));
                }
            }
            json_t *sp =
                ids ? json_pack("{s:b,s:o,s:s?,s:s?,s:b,s:s,s:s?,s:s*}", "swarm", c->susp->swarm,
                                "subs", ids, "description", c->susp->desc, "note", c->susp->note,
                                "parallel", c->susp->parallel, "session_arguments", sargs,
                                "session_note", snote, "session_context", scontext)
                    : NULL;
            if (!sp || json_object_set_new(w, "suspended", sp)) {
                json_decref(w);
                w = NULL;
            }
        }
        if (!w || json_array_append_new(waiting, w)) {
            json_decref(waiting);
            waiting = NULL;
        }
    }
    json_decref(susp_calls);
    if (!waiting)
        return NULL;
    return json_pack("{s:i,s:O,s:i,s:I,s:i,s:o}", "version", STATE_VERSION, "messages", a->messages,
                     "turns", a->turns, "tokens_used", (json_int_t)a->tokens_used, "stop", a->stop,
                     "waiting", waiting);
}

/* One sub-agent: its conversation and session, or only its place when it
 * runs in the background now (its state is another thread's). */
static json_t *sub_json(const sub *sb)
{
    json_t *o = json_pack("{s:s,s:s?,s:s?,s:s?,s:O?}", "id", sb->id, "parent",
                          sb->parent ? sb->parent->id : NULL, "item", sb->item, "profile",
                          sb->profile, "tools", sb->tools);
    if (!o)
        return NULL;
    if (sb->lost || agti_agent_in_background(sb)) {
        if (json_object_set_new(o, "lost", json_true())) {
            json_decref(o);
            return NULL;
        }
        return o;
    }
    char *ss = NULL;
    json_t *sess = NULL;
    if (agt_session_save(sb->session, &ss) == AGT_OK)
        sess = json_loads(ss, 0, NULL);
    agt_free(ss);
    json_t *st = state_json(sb->agent);
    if (!sess || !st || json_object_set_new(o, "agent", st) ||
        json_object_set_new(o, "session", sess) ||
        json_object_set_new(o, "rc", json_integer(sb->rc)) ||
        json_object_set_new(o, "turns_before", json_integer(sb->turns_before)) ||
        json_object_set_new(o, "on_host", json_boolean(sb->on_host))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

int agt_agent_save(const agt_agent *a, char **out_json)
{
    if (!a || !out_json)
        return agti_error(AGT_EINVAL, "agt_agent_save: NULL argument");
    *out_json = NULL;
    json_t *root = state_json(a);
    json_t *subs = json_array();
    agt_agent *ra = (agt_agent *)a;
    pthread_mutex_lock(&ra->subs_lock);
    for (size_t i = 0; root && subs && i < a->n_subs; i++)
        if (json_array_append_new(subs, sub_json(a->subs[i]))) {
            json_decref(subs);
            subs = NULL;
        }
    pthread_mutex_unlock(&ra->subs_lock);
    if (root && subs && a->n_subs && json_object_set_new(root, "subs", subs) == 0)
        subs = NULL;
    json_decref(subs);
    /* background tasks that run now (or ran when restored): lost on restore */
    json_t *tasks = json_array();
    for (size_t i = 0; root && tasks && i < a->n_bgs; i++) {
        bgtask *t = a->bgs[i];
        pthread_mutex_lock(&t->lock);
        bool running = t->joinable && !t->done;
        json_t *o = running ? json_pack("{s:s,s:s,s:s}", "id", t->id, "kind",
                                        t->swarm ? "swarm" : "agent", "description", t->description)
                            : NULL;
        pthread_mutex_unlock(&t->lock);
        if (running && json_array_append_new(tasks, o)) {
            json_decref(tasks);
            tasks = NULL;
        }
    }
    for (size_t i = 0; root && tasks && i < a->n_lost; i++)
        if (json_array_append_new(tasks, json_pack("{s:s,s:s,s:s}", "id", a->lost[i]->id, "kind",
                                                   a->lost[i]->kind, "description",
                                                   a->lost[i]->description))) {
            json_decref(tasks);
            tasks = NULL;
        }
    if (!tasks || (json_array_size(tasks) && json_object_set_new(root, "tasks", tasks) == 0))
        tasks = NULL;
    json_decref(tasks);
    *out_json = root ? json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(root);
    return *out_json ? AGT_OK : agti_oom();
}

static int check_restored_messages(const json_t *msgs, const char *where)
{
    size_t i;
    json_t *m;
    json_array_foreach(msgs, i, m)
    {
        const char *role = json_string_value(json_object_get(m, "role"));
        if (!json_is_object(m) || !role ||
            (strcmp(role, "system") && strcmp(role, "user") && strcmp(role, "assistant") &&
             strcmp(role, "tool")))
            return agti_error(AGT_EPARSE, "%s: messages[%zu] has no valid \"role\"", where, i);
    }
    return AGT_OK;
}

/* A parsed agent state, not applied yet. */
typedef struct pstate {
    json_t *doc; /* the state object (borrowed) */
    call *calls;
    size_t n_calls;
} pstate;

static void pstate_free(pstate *ps)
{
    for (size_t i = 0; ps->calls && i < ps->n_calls; i++) {
        free(ps->calls[i].id);
        free(ps->calls[i].name);
        free(ps->calls[i].args);
        free(ps->calls[i].text);
        agti_agent_susp_free(ps->calls[i].susp);
    }
    free(ps->calls);
    ps->calls = NULL;
    ps->n_calls = 0;
}

/* Validates one agent state (where names it in messages) and takes its
 * waiting calls; the "suspended" members are resolved later. */
static int parse_state(json_t *st, const char *where, pstate *ps)
{
    memset(ps, 0, sizeof *ps);
    ps->doc = st;
    json_t *msgs = json_object_get(st, "messages");
    json_t *waiting = json_object_get(st, "waiting");
    json_t *turns = json_object_get(st, "turns");
    json_t *tokens = json_object_get(st, "tokens_used");
    json_t *stopv = json_object_get(st, "stop");
    int rc = AGT_OK;
    if (!json_is_object(st) || !json_is_integer(json_object_get(st, "version")))
        return agti_error(AGT_EPARSE, "%s: not an object with \"version\"", where);
    if (json_integer_value(json_object_get(st, "version")) != STATE_VERSION)
        return agti_error(AGT_EPARSE, "%s: unknown version %lld", where,
                          (long long)json_integer_value(json_object_get(st, "version")));
    if (!json_is_array(msgs))
        return agti_error(AGT_EPARSE, "%s: \"messages\" is not an array", where);
    if (waiting && !json_is_array(waiting))
        return agti_error(AGT_EPARSE, "%s: \"waiting\" is not an array", where);
    if ((turns && (!json_is_integer(turns) || json_integer_value(turns) < 0 ||
                   json_integer_value(turns) > INT32_MAX)) ||
        (tokens && (!json_is_integer(tokens) || json_integer_value(tokens) < 0)) ||
        (stopv && (!json_is_integer(stopv) || json_integer_value(stopv) < 0 ||
                   json_integer_value(stopv) > AGT_AGENT_STOP_ERROR)))
        return agti_error(AGT_EPARSE,
                          "%s: \"turns\", \"tokens_used\" and \"stop\" must be integers in range",
                          where);
    rc = check_restored_messages(msgs, where);
    size_t nw = json_array_size(waiting);
    if (rc != AGT_OK || nw == 0)
        return rc;
    if (!(ps->calls = calloc(nw, sizeof *ps->calls)))
        return agti_oom();
    ps->n_calls = nw;
    size_t i;
    json_t *w;
    json_array_foreach(waiting, i, w)
    {
        const char *id = json_string_value(json_object_get(w, "id"));
        const char *name = json_string_value(json_object_get(w, "name"));
        const char *args = json_string_value(json_object_get(w, "arguments"));
        const char *text = json_string_value(json_object_get(w, "text"));
        json_t *sp = json_object_get(w, "suspended");
        if (!id || !name || !args || (sp && !json_is_object(sp))) {
            rc = agti_error(AGT_EPARSE,
                            "%s: waiting[%zu] needs \"id\", \"name\" and \"arguments\" strings "
                            "(and \"suspended\" an object)",
                            where, i);
            break;
        }
        call *c = &ps->calls[i];
        c->id = agti_strdup(id);
        c->name = agti_strdup(name);
        c->args = agti_strdup(args);
        c->text = text ? agti_strdup(text) : NULL;
        c->answered = json_is_true(json_object_get(w, "answered")) && text && !sp;
        c->is_error = json_is_true(json_object_get(w, "is_error"));
        c->presented = true;
        c->announced = true;
        if (!c->id || !c->name || !c->args || (text && !c->text)) {
            rc = agti_oom();
            break;
        }
    }
    if (rc != AGT_OK)
        pstate_free(ps);
    return rc;
}

/* Applies a parsed state to an agent (takes its calls). */
static void apply_state(agt_agent *a, pstate *ps)
{
    json_t *st = ps->doc;
    json_t *msgs = json_object_get(st, "messages");
    agti_agent_calls_clear(a);
    a->calls = ps->calls;
    a->n_calls = ps->n_calls;
    ps->calls = NULL;
    ps->n_calls = 0;
    a->waiting = a->n_calls > 0;
    json_decref(a->messages);
    a->messages = json_incref(msgs);
    json_t *turns = json_object_get(st, "turns"), *tokens = json_object_get(st, "tokens_used");
    json_t *stopv = json_object_get(st, "stop");
    a->turns = turns ? (int)json_integer_value(turns) : 0;
    a->tokens_used = tokens ? json_integer_value(tokens) : 0;
    a->stop = stopv ? (int)json_integer_value(stopv) : AGT_AGENT_STOP_NONE;
    a->last_count = -1;
    free(a->last_text);
    a->last_text = NULL;
    for (size_t k = json_array_size(msgs); k-- > 0;) {
        json_t *m = json_array_get(msgs, k);
        if (strcmp(json_string_value(json_object_get(m, "role")), "assistant") == 0) {
            const char *t = json_string_value(json_object_get(m, "content"));
            a->last_text = agti_strdup(t ? t : "");
            break;
        }
    }
}

/* Restored sub-agents, built before anything is replaced. */
typedef struct rsubs {
    sub **v;
    pstate *ps; /* per sub-agent */
    size_t n;
} rsubs;

static void sub_destroy(sub *sb)
{
    agti_agent_sub_free(sb);
}

static void rsubs_free(rsubs *r)
{
    for (size_t i = 0; i < r->n; i++) {
        pstate_free(&r->ps[i]);
        if (r->v[i])
            sub_destroy(r->v[i]);
    }
    free(r->v);
    free(r->ps);
    memset(r, 0, sizeof *r);
}

static int restore_subs(agt_agent *a, json_t *list, rsubs *r)
{
    memset(r, 0, sizeof *r);
    if (list && !json_is_array(list))
        return agti_error(AGT_EPARSE, "agent state: \"subs\" is not an array");
    size_t n = json_array_size(list);
    if (n == 0)
        return AGT_OK;
    if (!(r->v = calloc(n, sizeof *r->v)) || !(r->ps = calloc(n, sizeof *r->ps))) {
        free(r->v);
        r->v = NULL;
        return agti_oom();
    }
    r->n = n;
    int rc = AGT_OK;
    for (size_t i = 0; rc == AGT_OK && i < n; i++) {
        json_t *o = json_array_get(list, i);
        char want[32], where[64];
        snprintf(want, sizeof want, "agent-%zu", i + 1);
        snprintf(where, sizeof where, "agent state: subs[%zu]", i);
        const char *id = json_string_value(json_object_get(o, "id"));
        json_t *parent = json_object_get(o, "parent"), *item = json_object_get(o, "item");
        json_t *rcv = json_object_get(o, "rc"), *tb = json_object_get(o, "turns_before");
        bool lost = json_is_true(json_object_get(o, "lost"));
        sub *par = NULL;
        if (!json_is_object(o) || !id || strcmp(id, want) != 0) {
            rc = agti_error(AGT_EPARSE, "%s: needs \"id\":\"%s\"", where, want);
            break;
        }
        if (parent && !json_is_null(parent)) {
            const char *pid = json_string_value(parent);
            for (size_t k = 0; pid && k < i; k++)
                if (strcmp(r->v[k]->id, pid) == 0)
                    par = r->v[k];
            if (!par || par->level >= SUB_MAX_DEPTH) {
                rc = agti_error(AGT_EPARSE,
                                "%s: \"parent\" must name an earlier sub-agent of level 1", where);
                break;
            }
        }
        if ((item && !json_is_null(item) && !json_is_string(item)) ||
            (!lost && (!json_is_integer(rcv) || json_integer_value(rcv) > 0 ||
                       json_integer_value(rcv) < -64 || !json_is_integer(tb) ||
                       json_integer_value(tb) < 0 || json_integer_value(tb) > INT32_MAX ||
                       !json_is_object(json_object_get(o, "session"))))) {
            rc = agti_error(AGT_EPARSE,
                            "%s: \"item\" must be a string, \"rc\" and \"turns_before\" "
                            "integers in range, \"session\" an object",
                            where);
            break;
        }
        sub *sb = calloc(1, sizeof *sb);
        if (!sb) {
            rc = agti_oom();
            break;
        }
        r->v[i] = sb;
        snprintf(sb->id, sizeof sb->id, "%s", id);
        sb->root = a;
        sb->parent = par;
        sb->level = par ? par->level + 1 : 1;
        sb->lost = lost;
        atomic_init(&sb->busy, false);
        sb->rc = lost ? AGT_OK : (int)json_integer_value(rcv);
        sb->turns_before = lost ? 0 : (int)json_integer_value(tb);
        sb->on_host = json_is_true(json_object_get(o, "on_host"));
        if (json_is_string(item) && !(sb->item = agti_strdup(json_string_value(item)))) {
            rc = agti_oom();
            break;
        }
        /* its profile: the name, and the tools it allows (kept as saved, so
         * a restored explorer still cannot write) */
        json_t *prof = json_object_get(o, "profile"), *tools = json_object_get(o, "tools");
        bool tools_ok = !tools || json_is_null(tools) || json_is_array(tools);
        for (size_t k = 0; tools_ok && k < json_array_size(tools); k++)
            tools_ok = json_is_string(json_array_get(tools, k));
        if ((prof && !json_is_null(prof) && !json_is_string(prof)) || !tools_ok) {
            rc = agti_error(AGT_EPARSE,
                            "%s: \"profile\" must be a string, \"tools\" an array of tool names",
                            where);
            break;
        }
        if ((json_is_string(prof) && !(sb->profile = agti_strdup(json_string_value(prof)))) ||
            (json_is_array(tools) && !(sb->tools = json_deep_copy(tools)))) {
            rc = agti_oom();
            break;
        }
        rc = agt_session_new(&sb->session, agt_session_registry(a->session),
                             agt_session_root(a->session));
        if (rc == AGT_OK)
            rc = agti_session_copy_secrets(sb->session, a->session);
        if (rc == AGT_OK)
            rc = agt_agent_new(&sb->agent, sb->session, a->model);
        if (rc != AGT_OK)
            break;
        sb->agent->self = sb;
        sb->agent->max_turns = a->max_turns;
        sb->agent->window = a->window;
        sb->agent->percent = a->percent;
        if (lost)
            continue;
        char *ss = json_dumps(json_object_get(o, "session"), JSON_COMPACT);
        rc = ss ? agt_session_restore(sb->session, ss, strlen(ss)) : agti_oom();
        free(ss);
        if (rc != AGT_OK) {
            if (rc != AGT_ENOMEM) {
                char *why = agti_strdup(agt_error_message());
                rc = why ? agti_error(AGT_EPARSE, "%s: session: %s", where, why) : agti_oom();
                free(why);
            }
            break;
        }
        snprintf(where, sizeof where, "agent state: subs[%zu].agent", i);
        rc = parse_state(json_object_get(o, "agent"), where, &r->ps[i]);
    }
    if (rc != AGT_OK)
        rsubs_free(r);
    return rc;
}

/* Resolves the "suspended" members of a parsed state's calls to the
 * restored sub-agents (each claimed once). */
static int resolve_susp(pstate *ps, const char *owner, rsubs *r, bool *claimed)
{
    json_t *waiting = json_object_get(ps->doc, "waiting");
    for (size_t i = 0; i < ps->n_calls; i++) {
        json_t *sp = json_object_get(json_array_get(waiting, i), "suspended");
        if (!sp)
            continue;
        json_t *ids = json_object_get(sp, "subs");
        json_t *desc = json_object_get(sp, "description"), *note = json_object_get(sp, "note");
        bool is_swarm = json_is_true(json_object_get(sp, "swarm"));
        size_t n = json_array_size(ids);
        if (!json_is_array(ids) || n == 0 || (!is_swarm && n != 1) ||
            !json_is_string(json_object_get(sp, "session_arguments")) ||
            (desc && !json_is_null(desc) && !json_is_string(desc)) ||
            (note && !json_is_null(note) && !json_is_string(note)))
            return agti_error(AGT_EPARSE,
                              "agent state: %s: waiting[%zu].suspended needs \"subs\" (one for "
                              "Agent), \"session_arguments\", string \"description\"/\"note\"",
                              owner, i);
        susp *s = calloc(1, sizeof *s);
        if (!s || !(s->subs = calloc(n, sizeof *s->subs))) {
            free(s);
            return agti_oom();
        }
        ps->calls[i].susp = s;
        s->swarm = is_swarm;
        s->parallel = json_is_true(json_object_get(sp, "parallel"));
        if ((json_is_string(desc) && !(s->desc = agti_strdup(json_string_value(desc)))) ||
            (json_is_string(note) && !(s->note = agti_strdup(json_string_value(note)))))
            return agti_oom();
        for (size_t k = 0; k < n; k++) {
            const char *id = json_string_value(json_array_get(ids, k));
            size_t j = 0;
            while (id && j < r->n && strcmp(r->v[j]->id, id) != 0)
                j++;
            if (!id || j == r->n || claimed[j] || strcmp(owner, id) == 0 || r->v[j]->lost)
                return agti_error(AGT_EPARSE,
                                  "agent state: %s: waiting[%zu].suspended.subs[%zu] is not a "
                                  "restored sub-agent that no other call waits for",
                                  owner, i, k);
            claimed[j] = true;
            s->subs[s->n++] = r->v[j];
        }
    }
    return AGT_OK;
}

/* Parks the restored sub-agents' waiting calls in their sessions again,
 * and keeps their suspended calls. */
static int repark_subs(rsubs *r)
{
    for (size_t i = 0; i < r->n; i++) {
        pstate *ps = &r->ps[i];
        json_t *waiting = json_object_get(ps->doc, "waiting");
        for (size_t k = 0; k < ps->n_calls; k++) {
            call *c = &ps->calls[k];
            int rc = AGT_OK;
            if (c->susp) {
                json_t *sp = json_object_get(json_array_get(waiting, k), "suspended");
                rc = agti_session_add_suspended(
                    r->v[i]->session, c->id, c->name,
                    json_string_value(json_object_get(sp, "session_arguments")),
                    json_string_value(json_object_get(sp, "session_note")),
                    json_string_value(json_object_get(sp, "session_context")));
            } else if (!c->answered) {
                rc = agti_session_repark(r->v[i]->session, c->id, c->name, c->args);
            }
            if (rc != AGT_OK && rc != AGT_ENOMEM) {
                char *why = agti_strdup(agt_error_message());
                rc =
                    why ? agti_error(AGT_EPARSE, "agent state: subs[%zu]: %s", i, why) : agti_oom();
                free(why);
            }
            if (rc != AGT_OK)
                return rc;
        }
    }
    return AGT_OK;
}

/* Frees every sub-agent of the root (none runs: agti_agent_bg_free_all first). */
static void subs_free(agt_agent *a)
{
    for (size_t i = 0; i < a->n_subs; i++)
        sub_destroy(a->subs[i]);
    free(a->subs);
    a->subs = NULL;
    a->n_subs = 0;
}

int agt_agent_restore(agt_agent *a, const char *json, size_t len)
{
    if (!a || !json)
        return agti_error(AGT_EINVAL, "agt_agent_restore: NULL argument");
    if (a->self)
        return agti_error(AGT_EINVAL, "agt_agent_restore: not a root agent");
    json_t *doc = agti_json_parse(json, len, "agent state");
    if (!doc)
        return AGT_EPARSE;
    pstate ps;
    rsubs r = {0};
    bool *claimed = NULL;
    int rc = parse_state(doc, "agent state", &ps);
    if (rc == AGT_OK)
        rc = restore_subs(a, json_object_get(doc, "subs"), &r);
    if (rc == AGT_OK && r.n && !(claimed = calloc(r.n, sizeof *claimed)))
        rc = agti_oom();
    if (rc == AGT_OK)
        rc = resolve_susp(&ps, "root", &r, claimed);
    for (size_t i = 0; rc == AGT_OK && i < r.n; i++)
        if (!r.v[i]->lost)
            rc = resolve_susp(&r.ps[i], r.v[i]->id, &r, claimed);
    if (rc == AGT_OK)
        rc = repark_subs(&r);
    free(claimed);
    lost_list lost = {0};
    if (rc == AGT_OK)
        rc = parse_lost(json_object_get(doc, "tasks"), &lost);
    json_t *waiting = json_object_get(doc, "waiting");
    for (size_t i = 0; rc == AGT_OK && i < ps.n_calls; i++) {
        /* the root session's record of a suspended call (replacing an old one) */
        if (!ps.calls[i].susp)
            continue;
        json_t *sp = json_object_get(json_array_get(waiting, i), "suspended");
        agti_session_drop_suspended(a->session, ps.calls[i].id);
        rc = agti_session_add_suspended(a->session, ps.calls[i].id, ps.calls[i].name,
                                        json_string_value(json_object_get(sp, "session_arguments")),
                                        json_string_value(json_object_get(sp, "session_note")),
                                        json_string_value(json_object_get(sp, "session_context")));
    }
    if (rc != AGT_OK) {
        for (size_t i = 0; i < ps.n_calls; i++)
            if (ps.calls[i].susp)
                agti_session_drop_suspended(a->session, ps.calls[i].id);
        lost_list_free(&lost);
        pstate_free(&ps);
        rsubs_free(&r);
        json_decref(doc);
        return rc;
    }
    /* commit: the old sub-agents and tasks go, the restored ones come */
    agti_agent_bg_free_all(a);
    agti_agent_lost_free_all(a);
    a->lost = lost.v;
    a->n_lost = lost.n;
    for (size_t i = 0; i < lost.n; i++)
        agti_session_ext_add(a->session, lost.v[i]->id, lost.v[i]->kind, lost.v[i]->description,
                             &lost_ops, lost.v[i]);
    pthread_mutex_lock(&a->subs_lock);
    subs_free(a);
    /* the root's old calls go first (they may name old sub-agents) */
    for (size_t i = 0; i < a->n_calls; i++)
        if (a->calls[i].susp) {
            bool kept = false;
            for (size_t k = 0; k < ps.n_calls; k++)
                kept |= ps.calls[k].susp && strcmp(ps.calls[k].id, a->calls[i].id) == 0;
            if (kept) { /* same id restored: keep the new record */
                agti_agent_susp_free(a->calls[i].susp);
                a->calls[i].susp = NULL;
            }
        }
    apply_state(a, &ps);
    a->subs = r.v;
    a->n_subs = r.n;
    for (size_t i = 0; i < r.n; i++) {
        if (!r.v[i]->lost)
            apply_state(r.v[i]->agent, &r.ps[i]);
        /* a child's system prompt is its parent's; lost ones get one too */
        if (r.v[i]->lost) {
            json_t *first = json_array_get(a->messages, 0);
            const char *sys = NULL;
            if (first && strcmp(json_string_value(json_object_get(first, "role")), "system") == 0)
                sys = json_string_value(json_object_get(first, "content"));
            char *prompt =
                sys ? agti_aprintf("%s\n\n%s", sys, SUB_PROMPT) : agti_strdup(SUB_PROMPT);
            if (prompt)
                agt_agent_set_system_prompt(r.v[i]->agent, prompt);
            free(prompt);
        }
    }
    pthread_mutex_unlock(&a->subs_lock);
    free(r.ps);
    json_decref(doc);
    return AGT_OK;
}
