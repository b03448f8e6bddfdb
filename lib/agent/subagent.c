/*
 * Sub-agents (see agent.h): the Agent and AgentSwarm tools, creating and
 * running sub-agents with their time limit, their approvals (asked of the host
 * or the root session's approver, suspended calls continued later) and their
 * reports; the public setters of sub-agents.
 */

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/agent_internal.h"
#include "session/fs_settings.h"
#include "session/outside.h"

#define SUB_MAX_MS (30LL * 24 * 3600 * 1000)
/* AgentSwarm's ramp (the reference's): this many sub-agents start at once,
 * then one more every SWARM_RAMP_MS */
#define SWARM_RAMP_START 5u
#define SWARM_RAMP_MS 700

/* ---- sub-agent profiles ----------------------------------------------- */

/* The read-only tools of the chat set an explorer gets; a planner adds its
 * todo list. Both are told so in their system prompt, and the agent loop
 * refuses any other tool they call (agti_agent_sub_allows). */
static const char *const EXPLORE_TOOLS[] = {"Read",          "Grep",      "Glob",
                                            "ReadMediaFile", "WebSearch", "FetchURL"};
#define N_EXPLORE (sizeof EXPLORE_TOOLS / sizeof EXPLORE_TOOLS[0])

static void profile_clear(agti_profile *p)
{
    free(p->name);
    free(p->description);
    json_decref(p->tools);
    free(p->prompt);
    memset(p, 0, sizeof *p);
}

/* Adds or replaces a profile; tools is taken. */
static int profile_put(agt_agent *a, const char *name, const char *desc, json_t *tools,
                       const char *prompt)
{
    agti_profile np = {agti_strdup(name), agti_strdup(desc), tools,
                       prompt ? agti_strdup(prompt) : NULL};
    if (!np.name || !np.description || (prompt && !np.prompt)) {
        profile_clear(&np);
        return agti_oom();
    }
    for (size_t i = 0; i < a->n_profiles; i++)
        if (strcmp(a->profiles[i].name, name) == 0) {
            profile_clear(&a->profiles[i]);
            a->profiles[i] = np;
            return AGT_OK;
        }
    agti_profile *grown = realloc(a->profiles, (a->n_profiles + 1) * sizeof *grown);
    if (!grown) {
        profile_clear(&np);
        return agti_oom();
    }
    a->profiles = grown;
    a->profiles[a->n_profiles++] = np;
    return AGT_OK;
}

static json_t *explore_tools(bool todo)
{
    json_t *t = json_array();
    for (size_t i = 0; t && i < N_EXPLORE; i++)
        if (json_array_append_new(t, json_string(EXPLORE_TOOLS[i]))) {
            json_decref(t);
            return NULL;
        }
    if (t && todo && json_array_append_new(t, json_string("TodoList"))) {
        json_decref(t);
        return NULL;
    }
    return t;
}

int agti_agent_profiles_init(agt_agent *a)
{
    if (a->n_profiles > 0)
        return AGT_OK;
    json_t *ex = explore_tools(false), *pl = explore_tools(true);
    if (!ex || !pl) {
        json_decref(ex);
        json_decref(pl);
        return agti_oom();
    }
    int rc =
        profile_put(a, "coder", "writes and changes code, runs commands: every tool", NULL, NULL);
    if (rc == AGT_OK)
        rc = profile_put(a, "explore",
                         "reads and searches the workspace and the web, changes nothing", ex,
                         "Your profile is explore: you can read and search (Read, Grep, Glob, "
                         "ReadMediaFile, WebSearch, FetchURL) but not change files or run "
                         "commands. Report what you found with file paths and line numbers.");
    else
        json_decref(ex);
    if (rc == AGT_OK)
        rc = profile_put(a, "plan",
                         "reads and searches, keeps a todo list, and writes an implementation "
                         "plan; changes nothing",
                         pl,
                         "Your profile is plan: you can read and search (Read, Grep, Glob, "
                         "ReadMediaFile, WebSearch, FetchURL) and keep a todo list (TodoList), "
                         "but not change files or run commands. Your report is an "
                         "implementation plan: the steps in order, the files and functions each "
                         "one changes, and the risks.");
    else
        json_decref(pl);
    return rc;
}

void agti_agent_profiles_free(agt_agent *a)
{
    for (size_t i = 0; i < a->n_profiles; i++)
        profile_clear(&a->profiles[i]);
    free(a->profiles);
    a->profiles = NULL;
    a->n_profiles = 0;
}

const agti_profile *agti_agent_profile_find(agt_agent *root, const char *name)
{
    if (agti_agent_profiles_init(root) != AGT_OK)
        return NULL;
    for (size_t i = 0; i < root->n_profiles; i++)
        if (strcmp(root->profiles[i].name, name) == 0)
            return &root->profiles[i];
    return NULL;
}

/* "coder (...), explore (...), plan (...)": for the unknown-type answer. */
char *agti_agent_profile_list(agt_agent *root)
{
    agti_buf b = AGTI_BUF_INIT;
    for (size_t i = 0; i < root->n_profiles; i++)
        agti_buf_printf(&b, "%s%s (%s)", i ? ", " : "", root->profiles[i].name,
                        root->profiles[i].description);
    return agti_buf_detach(&b);
}

bool agti_agent_sub_allows(const sub *sb, const char *tool)
{
    if (!sb || !sb->tools)
        return true;
    size_t i;
    json_t *v;
    json_array_foreach(sb->tools, i, v)
    {
        if (strcmp(json_string_value(v), tool) == 0)
            return true;
    }
    return false;
}

void agti_agent_sub_free(sub *sb)
{
    if (!sb)
        return;
    agt_agent_free(sb->agent);
    agt_session_free(sb->session);
    agt_model_free(sb->own_model);
    free(sb->item);
    free(sb->profile);
    json_decref(sb->tools);
    free(sb->base_prompt);
    free(sb);
}

/* Why name is not a profile name, or NULL: 1 to 64 of [a-z0-9_-]. */
static const char *bad_profile_name(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > 64)
        return "name must be 1 to 64 characters";
    for (size_t i = 0; i < n; i++)
        if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9') ||
              name[i] == '_' || name[i] == '-'))
            return "name may only hold a-z, 0-9, '_' and '-'";
    return NULL;
}

int agt_agent_add_subagent_profile(agt_agent *a, const char *name, const char *description,
                                   const char *tools_json, const char *system_prompt_addition)
{
    if (!a || !name || !description)
        return agti_error(AGT_EINVAL, "agt_agent_add_subagent_profile: %s is NULL",
                          !a      ? "agent"
                          : !name ? "name"
                                  : "description");
    if (a->self)
        return agti_error(AGT_EINVAL,
                          "agt_agent_add_subagent_profile: %s is a sub-agent; add "
                          "profiles to the root agent",
                          a->self->id);
    const char *why = bad_profile_name(name);
    if (why)
        return agti_error(AGT_EINVAL, "agt_agent_add_subagent_profile: '%s': %s", name, why);
    if (description[0] == '\0')
        return agti_error(AGT_EINVAL, "agt_agent_add_subagent_profile: empty description");
    json_t *tools = NULL;
    if (tools_json) {
        json_error_t je;
        tools = json_loads(tools_json, JSON_REJECT_DUPLICATES, &je);
        bool ok = json_is_array(tools);
        for (size_t i = 0; ok && i < json_array_size(tools); i++) {
            const char *t = json_string_value(json_array_get(tools, i));
            ok = t && t[0] != '\0';
        }
        if (!ok) {
            json_decref(tools);
            return agti_error(AGT_EINVAL,
                              "agt_agent_add_subagent_profile: tools_json must be a JSON array "
                              "of tool names (non-empty strings), or NULL for every tool");
        }
    }
    int rc = agti_agent_profiles_init(a);
    if (rc != AGT_OK) {
        json_decref(tools);
        return rc;
    }
    return profile_put(a, name, description, tools,
                       system_prompt_addition && system_prompt_addition[0] ? system_prompt_addition
                                                                           : NULL);
}

sub *agti_agent_sub_find(agt_agent *root, const char *id)
{
    sub *found = NULL;
    pthread_mutex_lock(&root->subs_lock);
    for (size_t i = 0; id && i < root->n_subs; i++)
        if (strcmp(root->subs[i]->id, id) == 0)
            found = root->subs[i];
    pthread_mutex_unlock(&root->subs_lock);
    return found;
}

/* The sub-agent whose session made this call, or NULL for the root's. */
static sub *caller_of(agt_agent *root, agt_call *callp)
{
    agt_session *s = agt_call_session(callp);
    sub *found = NULL;
    pthread_mutex_lock(&root->subs_lock);
    for (size_t i = 0; i < root->n_subs; i++)
        if (root->subs[i]->session == s)
            found = root->subs[i];
    pthread_mutex_unlock(&root->subs_lock);
    return found;
}

/* Time spent waiting in an approver is not working time: it moves the
 * deadline of sb, and of the foreground parents waiting for it (up to the
 * sub-agent a background task runs), by ms. */
static void clock_pause(sub *sb, int64_t ms)
{
    for (sub *p = sb; p && ms > 0; p = p->parent) {
        int64_t d = atomic_load(&p->agent->deadline);
        while (d != 0 && !atomic_compare_exchange_weak(&p->agent->deadline, &d, d + ms))
            ;
        atomic_fetch_add(&p->paused_ms, ms);
        if (atomic_load(&p->busy))
            break;
    }
}

static int sub_approve(agt_approval *req, void *payload)
{
    sub *sb = payload;
    int64_t t0 = agti_agent_mono_ms();
    int d = sb->root->approver(sb->id, req, sb->root->approver_payload);
    clock_pause(sb, agti_agent_mono_ms() - t0);
    return d;
}

/* Whether a sub-agent runs (or waits) inside a background task now. */
bool agti_agent_in_background(const sub *sb)
{
    for (const sub *p = sb; p; p = p->parent)
        if (atomic_load(&p->busy))
            return true;
    return false;
}

/* An APPROVE_SESSION answer to a sub-agent's request: the rule goes to the
 * root session (so the whole tree and later sub-agents get it, as they copy
 * the root's rules) and to the existing sub-agents that do not run in the
 * background (their sessions are another thread's now). except already has
 * it. A rule the session refuses is dropped: the call was approved once.
 * The same for the folder outside the workspace the request asked to admit
 * (request: its JSON, with "outside"; may be NULL): the user approved it
 * for the session, and the session is the root's. */
static void share_session_rule(agt_agent *root, const sub *except, const char *rule,
                               const json_t *request)
{
    bool write = false;
    const char *dir = request ? agti_outside_of_request(request, &write) : NULL;
    bool has_rule = rule != NULL && agti_session_add_session_rule(root->session, rule) == AGT_OK;
    bool has_dir = dir != NULL && agti_outside_add_root(root->session, dir, write) == AGT_OK;
    if (!has_rule && !has_dir)
        return;
    pthread_mutex_lock(&root->subs_lock);
    for (size_t i = 0; i < root->n_subs; i++) {
        if (root->subs[i] == except || agti_agent_in_background(root->subs[i]))
            continue;
        if (has_rule)
            agti_session_add_session_rule(root->subs[i]->session, rule);
        if (has_dir)
            agti_outside_add_root(root->subs[i]->session, dir, write);
    }
    pthread_mutex_unlock(&root->subs_lock);
}

/* The approver of a foreground sub-agent on the host's thread: the root
 * session's approver, asked with "agent_id" in the request. */
static int sub_forward(agt_approval *req, void *payload)
{
    sub *sb = payload;
    agt_approver_fn fn;
    void *fp;
    agti_session_approver(sb->root->session, &fn, &fp);
    if (!fn) {
        agt_approval_set_reason(req, "the host removed its approver");
        return AGT_DECISION_REJECT;
    }
    if (agti_approval_tag(req, sb->id) != AGT_OK)
        return AGT_DECISION_REJECT;
    int64_t t0 = agti_agent_mono_ms();
    int d = fn(req, fp);
    clock_pause(sb, agti_agent_mono_ms() - t0);
    if (d == AGT_DECISION_APPROVE_SESSION) {
        json_t *j = json_loads(agt_approval_json(req), 0, NULL);
        const char *tool = json_string_value(json_object_get(j, "tool"));
        const char *rule = agti_approval_session_rule(req);
        if (tool && strcmp(tool, "ExitPlanMode") != 0)
            share_session_rule(sb->root, sb, rule, j);
        json_decref(j);
    }
    return d;
}

/* Chooses how a sub-agent's calls that need approval are asked: the host's
 * sub-agent approver (it takes precedence); else, on the host's thread, the
 * root session's approver; else they wait (the run pauses). */
static int sub_use_approver(sub *sb, bool host)
{
    agt_agent *root = sb->root;
    if (root->approver)
        return agt_session_set_approver(sb->session, sub_approve, sb);
    agt_approver_fn fn = NULL;
    void *fp = NULL;
    if (host)
        agti_session_approver(root->session, &fn, &fp);
    return agt_session_set_approver(sb->session, fn ? sub_forward : NULL, sb);
}

/* A new sub-agent: its own session (same registry and workspace, the parent
 * session's mode, rules and folders beyond the workspace), its own conversation and todo list.
 * parent is the sub-agent that starts it (NULL: the root agent). */
static int sub_new(agt_agent *root, agt_session *parent_s, sub *parent, bool own_model,
                   const agti_profile *prof, sub **out)
{
    sub *sb = calloc(1, sizeof *sb);
    if (!sb)
        return agti_oom();
    if (!(sb->profile = agti_strdup(prof->name)) ||
        (prof->tools && !(sb->tools = json_deep_copy(prof->tools)))) {
        agti_agent_sub_free(sb);
        return agti_oom();
    }
    sb->root = root;
    sb->parent = parent;
    sb->level = parent ? parent->level + 1 : 1;
    atomic_init(&sb->busy, false);
    int rc =
        agt_session_new(&sb->session, agt_session_registry(parent_s), agt_session_root(parent_s));
    char *rules = NULL;
    if (rc == AGT_OK)
        rc = agt_session_set_mode(sb->session, agt_session_mode(parent_s));
    if (rc == AGT_OK)
        rc = agti_session_copy_secrets(sb->session, parent_s);
    if (rc == AGT_OK)
        rc = agt_session_rules(parent_s, &rules);
    if (rc == AGT_OK)
        rc = agt_session_load_rules(sb->session, rules, strlen(rules));
    agt_free(rules);
    /* the folders beyond the workspace too: what the user approved for the
     * session is not asked again by a later sub-agent */
    if (rc == AGT_OK)
        rc = agti_outside_copy_roots(sb->session, parent_s);
    if (rc == AGT_OK && own_model)
        rc = agti_model_clone(&sb->own_model, root->model);
    if (rc == AGT_OK)
        rc = agt_agent_new(&sb->agent, sb->session, sb->own_model ? sb->own_model : root->model);
    if (rc == AGT_OK) {
        sb->agent->self = sb;
        /* a sub-agent's child takes its parent's prompt (which has the note
         * already): the root's conversation may be in use on another thread */
        json_t *first = json_array_get(parent ? parent->agent->messages : root->messages, 0);
        const char *sys = NULL;
        if (first && strcmp(json_string_value(json_object_get(first, "role")), "system") == 0)
            sys = json_string_value(json_object_get(first, "content"));
        char *prompt = parent && parent->base_prompt ? agti_strdup(parent->base_prompt)
                       : parent && sys               ? agti_strdup(sys)
                       : sys                         ? agti_aprintf("%s\n\n%s", sys, SUB_PROMPT)
                                                     : agti_strdup(SUB_PROMPT);
        char *full = !prompt        ? NULL
                     : prof->prompt ? agti_aprintf("%s\n\n%s", prompt, prof->prompt)
                                    : agti_strdup(prompt);
        sb->base_prompt = prompt;
        rc = full ? agt_agent_set_system_prompt(sb->agent, full) : agti_oom();
        free(full);
        sb->agent->max_turns = root->max_turns;
        sb->agent->window = root->window;
        sb->agent->percent = root->percent;
    }
    if (rc != AGT_OK) {
        agti_agent_sub_free(sb);
        return rc;
    }
    /* grown and appended in one step: sub-agents of background tasks and
     * swarm workers start their own sub-agents concurrently */
    pthread_mutex_lock(&root->subs_lock);
    sub **grown = realloc(root->subs, (root->n_subs + 1) * sizeof *grown);
    if (grown) {
        root->subs = grown;
        snprintf(sb->id, sizeof sb->id, "agent-%zu", root->n_subs + 1);
        root->subs[root->n_subs++] = sb;
    }
    pthread_mutex_unlock(&root->subs_lock);
    if (!grown) {
        agti_agent_sub_free(sb);
        return agti_oom();
    }
    *out = sb;
    return AGT_OK;
}

/* Starts a stretch of a sub-agent's run on its clock. A run (an Agent
 * call, a swarm item, a background task, a resume: "agent-N") starts with
 * the root's limit; its continuation after an approval pause (fresh false)
 * gets what was left, so the pause does not count. A sub-agent its parent
 * waits for also stops at the parent's deadline (a background one does not). */
static int64_t sub_clock_start(sub *sb, bool fresh)
{
    if (fresh || !sb->clock_set) {
        sb->limit_ms = atomic_load(&sb->root->subagent_ms);
        sb->left_ms = sb->limit_ms;
        sb->clock_set = true;
    }
    int64_t start = agti_agent_mono_ms();
    atomic_store(&sb->paused_ms, 0);
    int64_t d = 0;
    if (sb->limit_ms > 0)
        d = start + (sb->left_ms > 0 ? sb->left_ms : 0);
    sb->capped = NULL;
    int64_t pd =
        sb->parent && !atomic_load(&sb->busy) ? atomic_load(&sb->parent->agent->deadline) : 0;
    if (pd != 0 && (d == 0 || pd < d)) {
        d = pd;
        sb->capped = sb->parent;
    }
    atomic_store(&sb->agent->deadline, d != 0 && d < 1 ? 1 : d);
    return start;
}

/* Ends a stretch: the working time it took (approver waits left out) is
 * taken from what is left. */
static void sub_clock_stop(sub *sb, int64_t start)
{
    if (sb->limit_ms > 0)
        sb->left_ms -= agti_agent_mono_ms() - start - atomic_load(&sb->paused_ms);
    atomic_store(&sb->agent->deadline, 0);
}

/* Runs a sub-agent until it ends or pauses (AGT_EPENDING: calls wait for
 * approval, see sub_use_approver); host: it runs on the host's thread. */
int agti_agent_sub_run(sub *sb, bool host)
{
    sb->on_host = host;
    int rc = sub_use_approver(sb, host);
    if (rc != AGT_OK)
        return rc;
    int64_t start = sub_clock_start(sb, true);
    rc = agt_agent_run(sb->agent);
    sub_clock_stop(sb, start);
    return rc;
}

/* Continues a paused sub-agent whose waiting calls were all answered. */
int agti_agent_sub_resume(sub *sb, bool host)
{
    sb->on_host = host;
    int rc = sub_use_approver(sb, host);
    if (rc != AGT_OK)
        return rc;
    int64_t start = sub_clock_start(sb, false);
    rc = agt_agent_resume(sb->agent);
    sub_clock_stop(sb, start);
    return rc;
}

/* Whether sb waits in the tree under agent a (a's suspended calls, down). */
bool agti_agent_in_tree(agt_agent *a, const sub *sb)
{
    for (size_t i = 0; a->waiting && i < a->n_calls; i++) {
        const susp *sp = a->calls[i].susp;
        for (size_t k = 0; sp && k < sp->n; k++)
            if (sp->subs[k] == sb || agti_agent_in_tree(sp->subs[k]->agent, sb))
                return true;
    }
    return false;
}

struct sub *agti_agent_waiting_sub(agt_agent *a, const char *id)
{
    agt_agent *root = a->self ? a->self->root : a;
    sub *sb = agti_agent_sub_find(root, id);
    return sb && sb->agent->waiting && agti_agent_in_tree(a, sb) ? sb : NULL;
}

/* The pending item (agt_session_pending() shape) of the call parked in
 * sb's session as call_id, unless it is an ExitPlanMode (new reference), or
 * NULL: what an APPROVE_SESSION answer shares (its suggested rule, its
 * folder outside the workspace). */
static json_t *parked_item(sub *sb, const char *call_id)
{
    char *pj = NULL;
    if (agt_session_pending(sb->session, &pj) != AGT_OK)
        return NULL;
    json_t *list = json_loads(pj, 0, NULL);
    agt_free(pj);
    json_t *item = NULL;
    size_t i;
    json_t *p;
    json_array_foreach(list, i, p)
    {
        const char *id = json_string_value(json_object_get(p, "call_id"));
        const char *tool = json_string_value(json_object_get(p, "tool"));
        if (id && tool && strcmp(id, call_id) == 0 && strcmp(tool, "ExitPlanMode") != 0)
            item = json_incref(p);
    }
    json_decref(list);
    return item;
}

int agti_agent_answer_in_sub(struct sub *sb, const char *call_id, int decision, const char *reason)
{
    /* APPROVE_SESSION: the rule and the folder are the root's, as with the
     * session approver */
    json_t *item = decision == AGT_DECISION_APPROVE_SESSION ? parked_item(sb, call_id) : NULL;
    int rc = agt_agent_answer(sb->agent, call_id, decision, reason);
    if (rc == AGT_OK && item)
        share_session_rule(sb->root, sb, json_string_value(json_object_get(item, "suggested_rule")),
                           item);
    json_decref(item);
    if (rc == AGT_ENOTFOUND)
        agti_error(AGT_ENOTFOUND, "no tool call '%s/%s' waits for approval", sb->id, call_id);
    return rc;
}

/* "'agent-1/call_1' (Write)": the first call under a that still waits for
 * an answer (malloc'd), or NULL when all are answered. */
char *agti_agent_first_unanswered(agt_agent *a)
{
    for (size_t i = 0; i < a->n_calls; i++) {
        call *c = &a->calls[i];
        if (c->answered)
            continue;
        if (!c->susp)
            return a->self ? agti_aprintf("'%s/%s' (%s)", a->self->id, c->id, c->name)
                           : agti_aprintf("'%s' (%s)", c->id, c->name);
        for (size_t k = 0; k < c->susp->n; k++) {
            sub *sb = c->susp->subs[k];
            char *w = sb->agent->waiting ? agti_agent_first_unanswered(sb->agent) : NULL;
            if (w)
                return w;
        }
    }
    return NULL;
}

/* Appends the waiting calls of sub-agents under agent a to list: as
 * AGT_AGENT_APPROVAL events (event: those not announced yet, marked) or in
 * the agt_session_pending() shape. */
int agti_agent_collect_waiting(agt_agent *a, json_t *list, bool event)
{
    json_t *pend = NULL;
    if (a->self && !event) {
        char *pj = NULL;
        int rc = agt_session_pending(a->session, &pj);
        if (rc != AGT_OK)
            return rc;
        pend = json_loads(pj, 0, NULL);
        agt_free(pj);
        if (!pend)
            return agti_oom();
    }
    int rc = AGT_OK;
    for (size_t i = 0; rc == AGT_OK && i < a->n_calls; i++) {
        call *c = &a->calls[i];
        if (c->answered)
            continue;
        if (c->susp) {
            for (size_t k = 0; rc == AGT_OK && k < c->susp->n; k++)
                if (c->susp->subs[k]->agent->waiting)
                    rc = agti_agent_collect_waiting(c->susp->subs[k]->agent, list, event);
            continue;
        }
        if (!a->self || (event && c->announced))
            continue;
        char *qid = agti_aprintf("%s/%s", a->self->id, c->id);
        json_t *item = NULL;
        if (qid && event) {
            item = json_pack("{s:s,s:s,s:s,s:s}", "id", qid, "name", c->name, "arguments", c->args,
                             "agent_id", a->self->id);
            c->announced = true;
        } else if (qid) {
            size_t j;
            json_t *p;
            json_array_foreach(pend, j, p)
            {
                const char *pid = json_string_value(json_object_get(p, "call_id"));
                if (pid && strcmp(pid, c->id) == 0) {
                    item = json_deep_copy(p);
                    if (item) {
                        json_object_set_new(item, "call_id", json_string(qid));
                        json_object_set_new(item, "agent_id", json_string(a->self->id));
                    }
                    break;
                }
            }
            if (!item) /* not parked in its session (restored): still listed */
                item = json_pack("{s:s,s:s,s:s,s:s,s:s}", "call_id", qid, "tool", c->name,
                                 "arguments", c->args, "reason", "", "agent_id", a->self->id);
        }
        free(qid);
        if (!item || json_array_append_new(list, item))
            rc = agti_oom();
    }
    json_decref(pend);
    return rc;
}

/* Gives the root's host an AGT_AGENT_APPROVAL event for each sub-agent
 * call that started waiting since the last time. */
void agti_agent_announce(agt_agent *a)
{
    if (a->self || !a->event_fn)
        return;
    json_t *list = json_array();
    if (list && agti_agent_collect_waiting(a, list, true) == AGT_OK) {
        size_t i;
        json_t *ev;
        json_array_foreach(list, i, ev)
            agti_agent_emit_json(a, AGT_AGENT_APPROVAL, json_incref(ev));
    }
    json_decref(list);
}

static int ask_item(agt_agent *root, const json_t *item, int *decision, char **reason);

/* An approval_needed event of a background task, seen by the root's loop
 * on the host's thread: with an approver on the root session, each call is
 * asked there and answered (the task goes on by itself), and the event's
 * message says so. Without one, the event stays as it is for the host. */
int agti_agent_ask_bg_event(agt_agent *a, json_t *ev)
{
    agt_approver_fn fn = NULL;
    void *fp = NULL;
    agti_session_approver(a->session, &fn, &fp);
    if (a->self || !fn)
        return AGT_OK;
    size_t i, approved = 0, n = 0;
    json_t *item;
    int rc = AGT_OK;
    json_array_foreach(json_object_get(ev, "calls"), i, item)
    {
        int decision;
        char *reason = NULL;
        rc = ask_item(a, item, &decision, &reason);
        if (rc == AGT_OK)
            rc = agt_agent_answer(a, json_string_value(json_object_get(item, "call_id")), decision,
                                  reason);
        free(reason);
        if (rc == AGT_ENOMEM)
            return rc;
        n++;
        approved += rc == AGT_OK && decision == AGT_DECISION_APPROVE;
        rc = AGT_OK;
    }
    const char *kind = json_string_value(json_object_get(ev, "kind"));
    char *msg = agti_aprintf("Background %s %s (%s) asked for the user's approval of %zu tool "
                             "call%s: %zu approved, %zu declined. It goes on by itself.",
                             kind && strcmp(kind, "swarm") == 0 ? "swarm" : "sub-agent",
                             json_string_value(json_object_get(ev, "task_id")),
                             json_string_value(json_object_get(ev, "description")), n,
                             n == 1 ? "" : "s", approved, n - approved);
    if (!msg || json_object_set_new(ev, "message", json_string(msg)))
        rc = agti_oom();
    free(msg);
    return rc;
}

/* agt_session_pending() of the root session: the sub-agents' waiting calls. */
static int pending_ext(void *payload, json_t *list)
{
    agt_agent *root = payload;
    int rc = root->waiting ? agti_agent_collect_waiting(root, list, false) : AGT_OK;
    for (size_t i = 0; rc == AGT_OK && i < root->n_bgs; i++) {
        bgtask *t = root->bgs[i];
        pthread_mutex_lock(&t->lock);
        size_t k;
        json_t *c;
        if (t->waiting && !t->done)
            json_array_foreach(t->wait_calls, k, c)
            {
                if (json_array_append_new(list, json_deep_copy(c)) != 0)
                    rc = agti_oom();
            }
        pthread_mutex_unlock(&t->lock);
    }
    return rc;
}

/* "Sub-agent agent-1 (desc) finished after N model calls[: error][note].
 * Resume it with ...\n\n<answer>"; *failed for a run that failed. */
/* Whether a run with status rc stopped at its time limit. */
bool agti_agent_sub_timed_out(const sub *sb, int rc)
{
    return rc == AGT_ETIMEOUT && sb->agent->timed_out;
}

/* "stopped at its 30-minute time limit" (or "300 ms", or "the time limit
 * of agent-1": its parent's ran out first). */
static void time_limit_phrase(agti_buf *b, const sub *sb)
{
    long long ms = (long long)sb->limit_ms;
    if (sb->capped)
        agti_buf_printf(b, "stopped at the time limit of %s", sb->capped->id);
    else if (ms % 60000 == 0)
        agti_buf_printf(b, "stopped at its %lld-minute time limit", ms / 60000);
    else if (ms % 1000 == 0)
        agti_buf_printf(b, "stopped at its %lld-second time limit", ms / 1000);
    else
        agti_buf_printf(b, "stopped at its %lld ms time limit", ms);
}

/* "finished", "stopped at its budget", "stopped at its ... time limit" or
 * "failed" for a run that ended with rc. */
static void outcome_phrase(agti_buf *b, const sub *sb, int rc)
{
    if (agti_agent_sub_timed_out(sb, rc))
        time_limit_phrase(b, sb);
    else
        agti_buf_puts(b, rc == AGT_OK       ? "finished"
                         : rc == AGT_ELIMIT ? "stopped at its budget"
                                            : "failed");
}

char *agti_agent_report(sub *sb, int rc, const char *desc, int turns_before, const char *note,
                        bool *failed)
{
    agti_buf out = AGTI_BUF_INIT;
    *failed = rc != AGT_OK && rc != AGT_ELIMIT && !agti_agent_sub_timed_out(sb, rc);
    int t = sb->agent->turns - turns_before;
    agti_buf_printf(&out, "Sub-agent %s (%s) ", sb->id, desc ? desc : "task");
    outcome_phrase(&out, sb, rc);
    agti_buf_printf(&out, " after %d model call%s", t, t == 1 ? "" : "s");
    if (*failed)
        agti_buf_printf(&out, ": %s", agt_error_message());
    if (note)
        agti_buf_puts(&out, note);
    agti_buf_printf(&out, ". Resume it with resume: \"%s\".", sb->id);
    if (*agt_agent_text(sb->agent))
        agti_buf_printf(&out, "\n\n%s", agt_agent_text(sb->agent));
    return agti_buf_detach(&out);
}

/* The template with every {{item}} replaced. */
static char *fill_template(const char *tpl, const char *item)
{
    agti_buf b = AGTI_BUF_INIT;
    const char *p;
    while ((p = strstr(tpl, "{{item}}")) != NULL) {
        agti_buf_put(&b, tpl, (size_t)(p - tpl));
        agti_buf_puts(&b, item);
        tpl = p + 8;
    }
    agti_buf_puts(&b, tpl);
    return agti_buf_detach(&b);
}

typedef struct swarm {
    sub **subs;
    size_t n;
    atomic_size_t next;
    bgtask *bg; /* a background swarm: progress lines */
} swarm;

static void *swarm_worker(void *arg)
{
    swarm *w = arg;
    for (;;) {
        size_t i = atomic_fetch_add(&w->next, 1);
        if (i >= w->n)
            return NULL;
        sub *sb = w->subs[i];
        sb->rc =
            sb->agent->waiting ? agti_agent_sub_resume(sb, false) : agti_agent_sub_run(sb, false);
        if (w->bg)
            agti_agent_bg_note(w->bg, "%s %s after %d model calls\n", sb->id,
                               sb->rc == AGT_OK                       ? "finished"
                               : agti_agent_sub_timed_out(sb, sb->rc) ? "stopped at its time limit"
                                                                      : "ended",
                               sb->agent->turns - sb->turns_before);
    }
}

/* Runs the prepared sub-agents. workers 1: one after the other on this
 * thread. Otherwise concurrency ramps up as in the reference: SWARM_RAMP_START
 * workers start at once, then one more every SWARM_RAMP_MS while sub-agents
 * wait for one, up to workers (0: no cap but the number of sub-agents).
 * With a cap of SWARM_RAMP_START or less this thread is one of the workers;
 * otherwise it starts workers and waits (it works itself only when no
 * thread could be started). */
void agti_agent_swarm_run(sub **subs, size_t n, int workers, bgtask *bg)
{
    swarm w = {subs, n, 0, bg};
    if (workers == 1 || n <= 1) {
        swarm_worker(&w);
        return;
    }
    size_t cap = workers <= 0 || (size_t)workers > n ? n : (size_t)workers;
    pthread_t *th = calloc(cap, sizeof *th);
    if (!th) {
        swarm_worker(&w);
        return;
    }
    size_t started = 0;
    if (cap <= SWARM_RAMP_START) {
        /* no ramp left to run: this thread is one of the cap workers */
        while (started + 1 < cap && pthread_create(&th[started], NULL, swarm_worker, &w) == 0)
            started++;
        swarm_worker(&w);
        for (size_t k = 0; k < started; k++)
            pthread_join(th[k], NULL);
        free(th);
        return;
    }
    while (started < SWARM_RAMP_START && pthread_create(&th[started], NULL, swarm_worker, &w) == 0)
        started++;
    if (started == 0) {
        free(th);
        swarm_worker(&w);
        return;
    }
    while (started < cap && atomic_load(&w.next) < n) {
        /* the ramp's step, in short sleeps so that a swarm whose items are
         * all taken stops adding workers at once */
        for (int slept = 0; slept < SWARM_RAMP_MS && atomic_load(&w.next) < n; slept += 20) {
            struct timespec ts = {0, 20 * 1000000L};
            nanosleep(&ts, NULL);
        }
        if (atomic_load(&w.next) >= n || pthread_create(&th[started], NULL, swarm_worker, &w) != 0)
            break;
        started++;
    }
    for (size_t k = 0; k < started; k++)
        pthread_join(th[k], NULL);
    free(th);
}

/* Asks the root session's approver (on the host's thread) about one
 * waiting call (agt_session_pending() shape: qualified "call_id",
 * "agent_id"); the request has the sub-agent's own call id and
 * "agent_id". APPROVE_SESSION stores the rule as sub_forward does and
 * becomes APPROVE; anything else but APPROVE becomes REJECT. */
static int ask_item(agt_agent *root, const json_t *item, int *decision, char **reason)
{
    *decision = AGT_DECISION_REJECT;
    *reason = NULL;
    const char *aid = json_string_value(json_object_get(item, "agent_id"));
    const char *qid = json_string_value(json_object_get(item, "call_id"));
    if (!aid || !qid || strncmp(qid, aid, strlen(aid)) != 0 || qid[strlen(aid)] != '/')
        return agti_error(AGT_EINVAL, "not a sub-agent's call");
    json_t *req = json_deep_copy(item);
    if (!req || json_object_set_new(req, "call_id", json_string(qid + strlen(aid) + 1))) {
        json_decref(req);
        return agti_oom();
    }
    char *text = agti_json_dump(req);
    json_decref(req);
    char *rule = NULL;
    int rc = text ? agti_session_ask(root->session, text, decision, reason, &rule) : agti_oom();
    free(text);
    if (rc == AGT_OK && *decision == AGT_DECISION_APPROVE_SESSION) {
        const char *tool = json_string_value(json_object_get(item, "tool"));
        if (tool && strcmp(tool, "ExitPlanMode") != 0)
            share_session_rule(root, NULL, rule, item);
        *decision = AGT_DECISION_APPROVE;
    } else if (rc == AGT_OK && *decision != AGT_DECISION_APPROVE) {
        *decision = AGT_DECISION_REJECT;
    }
    free(rule);
    return rc;
}

/* Asks the root session's approver about every call waiting under sb, and
 * answers it. */
static int ask_for_tree(agt_agent *root, sub *sb)
{
    json_t *list = json_array();
    int rc = list ? agti_agent_collect_waiting(sb->agent, list, false) : agti_oom();
    size_t i;
    json_t *item;
    json_array_foreach(list, i, item)
    {
        if (rc != AGT_OK)
            break;
        int decision;
        char *reason = NULL;
        rc = ask_item(root, item, &decision, &reason);
        sub *x = agti_agent_sub_find(root, json_string_value(json_object_get(item, "agent_id")));
        if (rc == AGT_OK && x) {
            const char *qid = json_string_value(json_object_get(item, "call_id"));
            rc = agt_agent_answer(x->agent, qid + strlen(x->id) + 1, decision, reason);
        }
        if (rc != AGT_ENOMEM)
            rc = AGT_OK; /* a failed answer leaves the call waiting: the swarm pauses */
        free(reason);
    }
    json_decref(list);
    return rc;
}

/* After a round of a swarm: while sub-agents wait for approval and the root
 * session has an approver that may be asked here (host), asks it about
 * their calls and resumes them (concurrently as the round ran). AGT_OK when
 * none waits, AGT_EPENDING when some still do. */
static int swarm_settle(agt_agent *root, sub **subs, size_t n, bool parallel, bool host)
{
    sub **again = calloc(n ? n : 1, sizeof *again);
    if (!again)
        return agti_oom();
    int rc = AGT_OK;
    for (int round = 0; round < 100; round++) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (subs[i]->rc == AGT_EPENDING)
                again[m++] = subs[i];
        if (m == 0) {
            rc = AGT_OK;
            break;
        }
        agt_approver_fn fn = NULL;
        void *fp = NULL;
        if (host)
            agti_session_approver(root->session, &fn, &fp);
        rc = AGT_EPENDING;
        if (!fn)
            break;
        for (size_t i = 0; i < m && rc != AGT_ENOMEM; i++)
            if (ask_for_tree(root, again[i]) == AGT_ENOMEM)
                rc = AGT_ENOMEM;
        if (rc == AGT_ENOMEM)
            break;
        /* only those whose calls are all answered go on */
        size_t k = 0;
        for (size_t i = 0; i < m; i++) {
            char *w = agti_agent_first_unanswered(again[i]->agent);
            if (!w)
                again[k++] = again[i];
            free(w);
        }
        if (k == 0)
            break;
        agti_agent_swarm_run(again, k, parallel ? root->swarm_max : 1, NULL);
    }
    free(again);
    return rc;
}

char *agti_agent_swarm_report(sub **subs, size_t n, bool parallel)
{
    agti_buf out = AGTI_BUF_INIT;
    size_t ok = 0;
    for (size_t i = 0; i < n; i++)
        ok += subs[i]->rc == AGT_OK;
    agti_buf_printf(&out, "AgentSwarm: %zu sub-agent%s, %zu finished, %zu did not%s.", n,
                    n == 1 ? "" : "s", ok, n - ok, parallel ? "" : " (run one after the other)");
    for (size_t i = 0; i < n; i++) {
        sub *sb = subs[i];
        int t = sb->agent->turns - sb->turns_before;
        agti_buf_printf(&out, "\n\n## %s%s%s: ", sb->id, sb->item ? " — " : "",
                        sb->item ? sb->item : "");
        outcome_phrase(&out, sb, sb->rc);
        agti_buf_printf(&out, " after %d model call%s\n", t, t == 1 ? "" : "s");
        if (sb->rc != AGT_OK && sb->rc != AGT_ELIMIT && !agti_agent_sub_timed_out(sb, sb->rc))
            agti_buf_printf(&out, "(%s)\n", agt_status_string(sb->rc));
        agti_buf_puts(&out, agt_agent_text(sb->agent));
    }
    return agti_buf_detach(&out);
}

/* The report of a finished suspended call: its result, with the post-hook. */
static int complete_call(agt_agent *a, call *c, const char *report, bool failed)
{
    agt_result *res = NULL;
    int rc = agti_session_complete(a->session, c->id, report, failed, &res);
    if (rc == AGT_OK)
        rc = agti_agent_set_result(c, res);
    agt_result_free(res);
    if (rc != AGT_OK)
        return rc;
    agti_agent_susp_free(c->susp);
    c->susp = NULL;
    agti_agent_finished_event(a, c);
    return AGT_OK;
}

/* Continues the sub-agents of a suspended call, whose waiting calls were
 * all answered; completes the call when they are done. */
static int continue_call(agt_agent *a, call *c)
{
    susp *sp = c->susp;
    bool host = a->self ? a->self->on_host : true;
    agt_agent *root = a->self ? a->self->root : a;
    if (!sp->swarm) {
        sub *sb = sp->subs[0];
        int rc = sb->agent->waiting ? agti_agent_sub_resume(sb, host) : sb->rc;
        if (rc == AGT_EPENDING || rc == AGT_ENOMEM)
            return rc;
        sb->rc = rc;
        bool failed = false;
        char *report = agti_agent_report(sb, rc, sp->desc, sb->turns_before, sp->note, &failed);
        rc = report ? complete_call(a, c, report, failed) : agti_oom();
        free(report);
        return rc;
    }
    sub **again = calloc(sp->n, sizeof *again);
    if (!again)
        return agti_oom();
    size_t m = 0;
    int rc = AGT_OK;
    for (size_t i = 0; i < sp->n; i++) {
        sub *sb = sp->subs[i];
        if (!sb->agent->waiting)
            continue;
        again[m++] = sb;
        /* concurrent workers need a model each (a restored sub-agent has none) */
        if (rc == AGT_OK && sp->parallel && root->model->kind == AGTI_MODEL_HTTP &&
            !sb->own_model && (rc = agti_model_clone(&sb->own_model, root->model)) == AGT_OK)
            sb->agent->model = sb->own_model;
    }
    if (rc != AGT_OK) {
        free(again);
        return rc;
    }
    agti_agent_swarm_run(again, m, sp->parallel ? root->swarm_max : 1, NULL);
    free(again);
    rc = swarm_settle(root, sp->subs, sp->n, sp->parallel, host);
    if (rc != AGT_OK)
        return rc;
    agti_buf out = AGTI_BUF_INIT;
    char *report = agti_agent_swarm_report(sp->subs, sp->n, sp->parallel);
    if (report && sp->note)
        agti_buf_printf(&out, "%s\n(It ran in the foreground: %s.)", report, sp->note);
    else if (report)
        agti_buf_puts(&out, report);
    free(report);
    rc = !report || out.oom ? agti_oom() : complete_call(a, c, agti_buf_cstr(&out), false);
    agti_buf_free(&out);
    return rc;
}

int agti_agent_continue_suspended(agt_agent *a)
{
    bool pending = false;
    for (size_t i = 0; i < a->n_calls; i++) {
        if (!a->calls[i].susp)
            continue;
        int rc = continue_call(a, &a->calls[i]);
        if (rc == AGT_EPENDING)
            pending = true;
        else if (rc != AGT_OK)
            return rc;
    }
    return pending ? AGT_EPENDING : AGT_OK;
}

/* Ends a paused run without going on (its background task was stopped):
 * waiting calls are declined with reason, suspended calls (and the
 * sub-agents under them) end the same way, the results join the
 * conversation, so the agent can be resumed later with a new prompt. */
void agti_agent_abandon(agt_agent *a, const char *reason)
{
    for (size_t i = 0; a->waiting && i < a->n_calls; i++) {
        call *c = &a->calls[i];
        if (c->answered)
            continue;
        if (c->susp) {
            for (size_t k = 0; k < c->susp->n; k++) {
                sub *sb = c->susp->subs[k];
                if (sb->agent->waiting) {
                    agti_agent_abandon(sb->agent, reason);
                    sb->rc = AGT_ECANCELLED;
                }
            }
            char *t = agti_aprintf("Stopped while sub-agents waited for approval: %s", reason);
            if (!t || complete_call(a, c, t, true) != AGT_OK) {
                agti_session_drop_suspended(a->session, c->id);
                agti_agent_susp_free(c->susp);
                c->susp = NULL;
            }
            free(t);
        } else {
            agt_agent_answer(a, c->id, AGT_DECISION_REJECT, reason);
        }
        if (!c->answered) {
            free(c->text);
            c->text = agti_aprintf("Not run: %s", reason);
            c->is_error = true;
            c->answered = true;
        }
    }
    if (a->waiting) {
        agti_agent_append_results(a);
        a->waiting = false;
        a->stop = AGT_AGENT_STOP_CANCELLED;
    }
}

/* ---- the Agent and AgentSwarm tools ------------------------------------ */

/* Why a call cannot run in the background, or NULL when it can: only the
 * root agent's calls (their task belongs to its session), with a frozen
 * registry (shared read-only) and an HTTP model (copied per sub-agent). */
static const char *no_background(agt_agent *root, agt_call *callp, const sub *caller)
{
    if (caller)
        return "inside a sub-agent, sub-agents run in the foreground";
    if (!agt_registry_is_frozen(agt_session_registry(agt_call_session(callp))))
        return "background sub-agents need a frozen registry";
    if (root->model->kind != AGTI_MODEL_HTTP)
        return "background sub-agents need an HTTP model";
    return NULL;
}

static int refuse(agt_call *callp, json_t *args, const char *fmt, ...) AGTI_PRINTF(3, 4);
static int refuse(agt_call *callp, json_t *args, const char *fmt, ...)
{
    agti_buf mb = AGTI_BUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    agti_buf_vprintf(&mb, fmt, ap);
    va_end(ap);
    char *msg = agti_buf_detach(&mb);
    json_decref(args);
    int rc = msg ? agt_call_set_error(callp, msg) : agti_oom();
    free(msg);
    return rc;
}

/* Without an agent loop to pause (the host dispatched Agent or AgentSwarm
 * itself), the waiting calls under subs are declined and the sub-agents go
 * on, until none waits. */
static int decline_waiting(agt_agent *root, sub **subs, size_t n)
{
    for (int round = 0; round < 100; round++) {
        bool any = false;
        for (size_t i = 0; i < n; i++) {
            sub *sb = subs[i];
            if (sb->rc != AGT_EPENDING)
                continue;
            any = true;
            json_t *list = json_array();
            int rc = list ? agti_agent_collect_waiting(sb->agent, list, false) : agti_oom();
            size_t k;
            json_t *item;
            json_array_foreach(list, k, item)
            {
                const char *aid = json_string_value(json_object_get(item, "agent_id"));
                const char *qid = json_string_value(json_object_get(item, "call_id"));
                sub *x = agti_agent_sub_find(root, aid);
                if (x && qid && strlen(qid) > strlen(aid))
                    agt_agent_answer(x->agent, qid + strlen(aid) + 1, AGT_DECISION_REJECT,
                                     "a sub-agent started outside an agent loop cannot ask the "
                                     "user for approval; leave this step to the parent agent and "
                                     "say so in your answer");
            }
            json_decref(list);
            if (rc != AGT_OK)
                return rc;
            char *w = agti_agent_first_unanswered(sb->agent);
            if (w) { /* an answer failed: give up on this one */
                free(w);
                sb->rc =
                    agti_error(AGT_ESTATE, "sub-agent %s: a call could not be declined", sb->id);
                continue;
            }
            sb->rc = agti_agent_sub_resume(sb, sb->on_host);
        }
        if (!any)
            return AGT_OK;
    }
    return AGT_OK;
}

/* Whether the provider's call can be suspended: the calling agent's loop
 * dispatched it (not the host directly). */
static bool can_suspend(agt_agent *root, sub *caller)
{
    return (caller ? caller->agent : root)->dispatching > 0;
}

/* Suspends the provider's call on sp: the calling agent takes sp when
 * the dispatch returns AGT_EPENDING (took_pending). */
static int suspend_call(agt_agent *root, sub *caller, agt_call *callp, susp *sp)
{
    agt_agent *ca = caller ? caller->agent : root;
    agti_agent_susp_free(ca->new_susp);
    ca->new_susp = sp;
    agti_call_suspend(callp);
    return AGT_OK;
}

/* The profile a new sub-agent of this call gets (NULL: not found, the
 * reason is in *why, malloc'd; NULL too on ENOMEM with *why NULL). */
static const agti_profile *call_profile(agt_agent *root, const char *tool, const char *type,
                                        char **why)
{
    *why = NULL;
    const agti_profile *p = agti_agent_profile_find(root, type ? type : "coder");
    if (p || root->n_profiles == 0)
        return p;
    char *list = agti_agent_profile_list(root);
    *why = list ? agti_aprintf("%s: unknown subagent_type '%s'. The available ones: %s. Omit "
                               "subagent_type for coder.",
                               tool, type ? type : "coder", list)
                : NULL;
    free(list);
    return NULL;
}

static int agent_tool(agt_call *callp, void *payload)
{
    agt_agent *root = payload;
    json_t *args = json_loads(agt_call_args(callp), 0, NULL);
    const char *prompt = json_string_value(json_object_get(args, "prompt"));
    const char *desc = json_string_value(json_object_get(args, "description"));
    const char *resume = json_string_value(json_object_get(args, "resume"));
    const char *type = json_string_value(json_object_get(args, "subagent_type"));
    bool background = json_is_true(json_object_get(args, "run_in_background"));
    int rc = AGT_OK;
    sub *sb = NULL;
    sub *caller = caller_of(root, callp);
    if (!prompt)
        return refuse(callp, args, "Agent needs a \"prompt\".");
    if (resume && type)
        return refuse(callp, args,
                      "Agent takes resume or subagent_type, not both: resume continues %s with "
                      "the profile it has; subagent_type starts a new sub-agent. Drop one of "
                      "them.",
                      resume);
    const agti_profile *prof = NULL;
    if (!resume) {
        char *why = NULL;
        prof = call_profile(root, "Agent", type, &why);
        if (!prof) {
            if (!why) {
                json_decref(args);
                return agti_oom();
            }
            rc = refuse(callp, args, "%s", why);
            free(why);
            return rc;
        }
    }
    if (caller && caller->level >= SUB_MAX_DEPTH)
        return refuse(callp, args,
                      "Sub-agents are nested too deep (at most 2 levels): do this task yourself.");
    const char *why_fg = background ? no_background(root, callp, caller) : NULL;
    bool in_bg = background && !why_fg;
    if (resume) {
        sb = agti_agent_sub_find(root, resume);
        if (!sb) {
            pthread_mutex_lock(&root->subs_lock);
            size_t n = root->n_subs;
            pthread_mutex_unlock(&root->subs_lock);
            return refuse(callp, args,
                          "No sub-agent '%s' to resume; the ids are agent-1 to agent-%zu.", resume,
                          n);
        }
        if (sb->lost)
            return refuse(callp, args,
                          "Sub-agent %s ran in the background when the session was saved; its "
                          "work was lost. Start a new sub-agent for the task.",
                          resume);
        if (atomic_load(&sb->busy) || sb == caller)
            return refuse(callp, args,
                          "Sub-agent %s is still running%s: wait for its notification (or use "
                          "TaskOutput / TaskStop with task_id \"%s\"), then resume it.",
                          resume, sb == caller ? "" : " in the background", resume);
        if (in_bg && root->model->kind == AGTI_MODEL_HTTP && !sb->own_model) {
            rc = agti_model_clone(&sb->own_model, root->model);
            if (rc != AGT_OK) {
                json_decref(args);
                return rc;
            }
            sb->agent->model = sb->own_model;
        }
    } else {
        /* inside a sub-agent (maybe on another thread) or in the background
         * the root's model may be busy on another thread: an HTTP model is copied */
        rc = sub_new(root, agt_call_session(callp), caller,
                     (caller || in_bg) && root->model->kind == AGTI_MODEL_HTTP, prof, &sb);
        if (rc != AGT_OK) {
            json_decref(args);
            return rc;
        }
    }
    /* a finished background run of this sub-agent is joined before it runs again */
    bgtask *old = agti_agent_bg_find(root, sb->id);
    if (old && old->joinable && !in_bg) {
        pthread_join(old->th, NULL);
        old->joinable = false;
    }
    sb->turns_before = sb->agent->turns;
    rc = agt_agent_add_user_message(sb->agent, prompt);
    if (rc == AGT_OK && in_bg) {
        sub **one = malloc(sizeof *one);
        if (!one) {
            json_decref(args);
            return agti_oom();
        }
        one[0] = sb;
        rc = agti_agent_bg_start(root, sb->id, desc, false, one, 1, false);
        if (rc != AGT_OK) {
            json_decref(args);
            return rc;
        }
        agti_buf out = AGTI_BUF_INIT;
        agti_buf_printf(&out,
                        "Started sub-agent %s in the background: %s\nStatus: running\nYou will "
                        "get a notification with its report when it finishes; TaskOutput shows "
                        "its progress, TaskStop stops it, resume: \"%s\" continues it afterwards.",
                        sb->id, desc ? desc : "task", sb->id);
        json_t *j = json_pack("{s:s,s:s,s:s,s:s}", "task_id", sb->id, "kind", "agent",
                              "description", desc ? desc : "task", "status", "running");
        char *js = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
        json_decref(j);
        json_decref(args);
        rc = out.oom || !js ? agti_oom() : agt_call_set_text(callp, agti_buf_cstr(&out));
        if (rc == AGT_OK)
            rc = agt_call_set_json(callp, js, strlen(js));
        free(js);
        agti_buf_free(&out);
        return rc;
    }
    if (rc == AGT_OK)
        rc = agti_agent_sub_run(sb, caller ? caller->on_host : true);
    if (rc == AGT_EPENDING && !can_suspend(root, caller)) {
        sb->rc = rc;
        rc = decline_waiting(root, &sb, 1);
        if (rc == AGT_OK)
            rc = sb->rc;
    }
    if (rc == AGT_ENOMEM) {
        json_decref(args);
        return rc;
    }
    char *note = why_fg ? agti_aprintf(" (it ran in the foreground: %s)", why_fg) : NULL;
    if (rc == AGT_EPENDING) {
        /* the sub-agent waits for approval: this call waits with it */
        susp *sp = calloc(1, sizeof *sp);
        sub **one = malloc(sizeof *one);
        char *d = desc ? agti_strdup(desc) : NULL;
        json_decref(args);
        if (!sp || !one || (desc && !d)) {
            free(sp);
            free(one);
            free(d);
            free(note);
            return agti_oom();
        }
        one[0] = sb;
        *sp = (susp){false, one, 1, d, note, false};
        return suspend_call(root, caller, callp, sp);
    }
    bool failed = false;
    char *report = agti_agent_report(sb, rc, desc, sb->turns_before, note, &failed);
    free(note);
    json_decref(args);
    if (!report)
        return agti_oom();
    rc = failed ? agt_call_set_error(callp, report) : agt_call_set_text(callp, report);
    free(report);
    return rc;
}

static int swarm_tool(agt_call *callp, void *payload)
{
    agt_agent *root = payload;
    json_t *args = json_loads(agt_call_args(callp), 0, NULL);
    const char *tpl = json_string_value(json_object_get(args, "prompt_template"));
    json_t *items = json_object_get(args, "items");
    json_t *resume = json_object_get(args, "resume_agent_ids");
    bool background = json_is_true(json_object_get(args, "run_in_background"));
    size_t n_items = json_array_size(items), n_resume = json_array_size(resume);
    sub *caller = caller_of(root, callp);
    agti_buf out = AGTI_BUF_INIT;
    int rc = AGT_OK;
    sub **subs = NULL;
    size_t n = 0;
    if (caller && caller->level >= SUB_MAX_DEPTH)
        agti_buf_puts(
            &out, "Sub-agents are nested too deep (at most 2 levels): do these tasks yourself.");
    else if (n_items + n_resume == 0)
        agti_buf_puts(
            &out, "AgentSwarm needs \"items\" (with \"prompt_template\") or \"resume_agent_ids\".");
    else if (n_items + n_resume > SWARM_MAX_SUBS)
        agti_buf_printf(&out,
                        "AgentSwarm runs at most %d sub-agents per call, counting new and resumed "
                        "ones; this call asks for %zu (%zu new, %zu resumed). Split the work into "
                        "several AgentSwarm calls, one after the other.",
                        SWARM_MAX_SUBS, n_items + n_resume, n_items, n_resume);
    else if (n_items == 1 && n_resume == 0)
        agti_buf_puts(&out, "AgentSwarm needs at least 2 items when it resumes no sub-agent; "
                            "for a single task call Agent, or add resume_agent_ids to continue "
                            "existing sub-agents along with this item.");
    else if (n_items && !tpl)
        agti_buf_puts(&out,
                      "AgentSwarm needs a \"prompt_template\" containing {{item}} with \"items\".");
    const agti_profile *prof = NULL;
    if (!out.len && n_items) {
        char *why = NULL;
        prof = call_profile(root, "AgentSwarm",
                            json_string_value(json_object_get(args, "subagent_type")), &why);
        if (!prof && !why) {
            json_decref(args);
            return agti_oom();
        }
        if (!prof)
            agti_buf_puts(&out, why);
        free(why);
    }
    for (size_t i = 0; !out.len && i < n_resume; i++) {
        const char *id = json_string_value(json_array_get(resume, i));
        sub *r = agti_agent_sub_find(root, id);
        if (!r) {
            pthread_mutex_lock(&root->subs_lock);
            size_t have = root->n_subs;
            pthread_mutex_unlock(&root->subs_lock);
            agti_buf_printf(&out, "No sub-agent '%s' to resume; the ids are agent-1 to agent-%zu.",
                            id, have);
        } else if (r->lost) {
            agti_buf_printf(&out,
                            "Sub-agent %s ran in the background when the session was saved; its "
                            "work was lost. Start a new sub-agent for the task.",
                            id);
        } else if (atomic_load(&r->busy) || r == caller) {
            agti_buf_printf(
                &out, "Sub-agent %s is still running: wait for it to finish, then resume it.", id);
        }
    }
    if (out.len) {
        json_decref(args);
        rc = out.oom ? agti_oom() : agt_call_set_error(callp, agti_buf_cstr(&out));
        agti_buf_free(&out);
        return rc;
    }
    const char *why_fg = background ? no_background(root, callp, caller) : NULL;
    bool in_bg = background && !why_fg;
    /* Concurrent only when that is safe: a frozen registry (shared read-only
     * by the sub-sessions) and an HTTP model (copied per sub-agent). */
    bool parallel = root->swarm_max != 1 &&
                    agt_registry_is_frozen(agt_session_registry(agt_call_session(callp))) &&
                    root->model->kind == AGTI_MODEL_HTTP;
    bool copy_model = root->model->kind == AGTI_MODEL_HTTP && (parallel || caller || in_bg);
    subs = calloc(n_items + n_resume, sizeof *subs);
    if (!subs)
        rc = agti_oom();
    for (size_t i = 0; rc == AGT_OK && i < n_items + n_resume; i++) {
        sub *sb = NULL;
        char *prompt = NULL;
        if (i < n_items) {
            const char *item = json_string_value(json_array_get(items, i));
            rc = sub_new(root, agt_call_session(callp), caller, copy_model, prof, &sb);
            if (rc == AGT_OK && !(sb->item = agti_strdup(item)))
                rc = agti_oom();
            prompt = rc == AGT_OK ? fill_template(tpl, item) : NULL;
        } else {
            sb = agti_agent_sub_find(root, json_string_value(json_array_get(resume, i - n_items)));
            bgtask *old = agti_agent_bg_find(root, sb->id);
            if (old && old->joinable) {
                pthread_join(old->th, NULL);
                old->joinable = false;
            }
            if (copy_model && !sb->own_model) {
                rc = agti_model_clone(&sb->own_model, root->model);
                if (rc == AGT_OK)
                    sb->agent->model = sb->own_model;
            }
            prompt = tpl && sb->item
                         ? fill_template(tpl, sb->item)
                         : agti_strdup("Continue your task, then give your final report.");
        }
        if (rc == AGT_OK && !prompt)
            rc = agti_oom();
        if (rc == AGT_OK) {
            sb->turns_before = sb->agent->turns;
            sb->rc = AGT_OK;
            rc = agt_agent_add_user_message(sb->agent, prompt);
            subs[n++] = sb;
        }
        free(prompt);
    }
    if (rc == AGT_OK && in_bg) {
        char id[32];
        snprintf(id, sizeof id, "swarm-%zu", root->n_swarms + 1);
        char *desc = agti_aprintf("%zu sub-agents", n);
        rc = desc ? agti_agent_bg_start(root, id, desc, true, subs, n, parallel) : agti_oom();
        subs = NULL; /* taken (or freed) by agti_agent_bg_start */
        if (rc == AGT_OK) {
            root->n_swarms++;
            agti_buf_printf(&out, "Started AgentSwarm %s in the background: %zu sub-agents (", id,
                            n);
            for (size_t i = 0; i < n; i++) {
                bgtask *t = agti_agent_bg_find(root, id);
                agti_buf_printf(&out, "%s%s", i ? ", " : "", t->subs[i]->id);
            }
            agti_buf_printf(&out,
                            ")\nStatus: running\nYou will get a notification with the combined "
                            "report when all have finished; TaskOutput shows progress, TaskStop "
                            "stops them all.");
            rc = out.oom ? agti_oom() : agt_call_set_text(callp, agti_buf_cstr(&out));
            json_t *j = json_pack("{s:s,s:s,s:s,s:s}", "task_id", id, "kind", "swarm",
                                  "description", desc, "status", "running");
            char *js = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
            json_decref(j);
            if (rc == AGT_OK)
                rc = js ? agt_call_set_json(callp, js, strlen(js)) : agti_oom();
            free(js);
        }
        free(desc);
        agti_buf_free(&out);
        json_decref(args);
        return rc;
    }
    for (size_t i = 0; rc == AGT_OK && parallel && i < n; i++) {
        const char *t;
        rc = agti_agent_offered_tools(subs[i]->agent, &t);
    }
    if (rc == AGT_OK) {
        agti_agent_swarm_run(subs, n, parallel ? root->swarm_max : 1, NULL);
        rc = swarm_settle(root, subs, n, parallel, caller ? caller->on_host : true);
        if (rc == AGT_EPENDING && !can_suspend(root, caller))
            rc = decline_waiting(root, subs, n);
    }
    if (rc == AGT_EPENDING) {
        /* some sub-agents wait for approval: the swarm call waits with them */
        susp *sp = calloc(1, sizeof *sp);
        char *note = why_fg ? agti_strdup(why_fg) : NULL;
        agti_buf_free(&out);
        json_decref(args);
        if (!sp || (why_fg && !note)) {
            free(sp);
            free(note);
            free(subs);
            return agti_oom();
        }
        *sp = (susp){true, subs, n, NULL, note, parallel};
        return suspend_call(root, caller, callp, sp);
    }
    if (rc == AGT_OK) {
        char *report = agti_agent_swarm_report(subs, n, parallel);
        if (report && why_fg)
            agti_buf_printf(&out, "%s\n(It ran in the foreground: %s.)", report, why_fg);
        else if (report)
            agti_buf_puts(&out, report);
        free(report);
        rc = !report || out.oom ? agti_oom() : agt_call_set_text(callp, agti_buf_cstr(&out));
    }
    free(subs);
    agti_buf_free(&out);
    json_decref(args);
    return rc;
}

int agt_agent_enable_subagents(agt_agent *a)
{
    if (!a)
        return agti_error(AGT_EINVAL, "agt_agent_enable_subagents: agent is NULL");
    agt_registry *reg = agt_session_registry(a->session);
    int rc = agt_registry_set_provider(reg, "Agent", agent_tool, a);
    if (rc == AGT_OK)
        rc = agt_registry_set_provider(reg, "AgentSwarm", swarm_tool, a);
    if (rc == AGT_OK && !a->self)
        rc = agti_session_set_pending_ext(a->session, pending_ext, a);
    return rc;
}

int agt_agent_set_swarm_concurrency(agt_agent *a, int max)
{
    if (!a || max < 0 || max > SWARM_MAX_SUBS)
        return agti_error(AGT_EINVAL, "agt_agent_set_swarm_concurrency: %s",
                          a ? "max not in 0..128 (0: no cap)" : "agent is NULL");
    a->swarm_max = max;
    return AGT_OK;
}

int agt_agent_set_subagent_timeout(agt_agent *a, int64_t ms)
{
    if (!a || ms < 0 || ms > SUB_MAX_MS)
        return agti_error(AGT_EINVAL, "agt_agent_set_subagent_timeout: %s",
                          !a       ? "agent is NULL"
                          : ms < 0 ? "negative limit"
                                   : "limit over 30 days (2592000000 ms); 0 means no limit");
    atomic_store(&a->subagent_ms, ms);
    return AGT_OK;
}

int agt_agent_set_subagent_approver(agt_agent *a, agt_subagent_approver_fn fn, void *payload)
{
    if (!a)
        return agti_error(AGT_EINVAL, "agt_agent_set_subagent_approver: agent is NULL");
    pthread_mutex_lock(&a->subs_lock);
    for (size_t i = 0; i < a->n_subs; i++)
        if (atomic_load(&a->subs[i]->busy)) {
            pthread_mutex_unlock(&a->subs_lock);
            return agti_error(AGT_ESTATE,
                              "agt_agent_set_subagent_approver: sub-agent %s runs "
                              "in the background; set the approver before",
                              a->subs[i]->id);
        }
    a->approver = fn;
    a->approver_payload = payload;
    int rc = AGT_OK;
    for (size_t i = 0; rc == AGT_OK && i < a->n_subs; i++)
        rc = agt_session_set_approver(a->subs[i]->session, fn ? sub_approve : NULL,
                                      fn ? a->subs[i] : NULL);
    pthread_mutex_unlock(&a->subs_lock);
    return rc;
}
