/*
 * Session save and restore.
 *
 * The saved document is {"format": 1, "<section>": ..., ...}. Each section
 * is owned by one component and listed once in `sections` below, with four
 * functions:
 *   save(s, &value)       the section's JSON (set *value = NULL to omit it);
 *   load(s, value, &tmp)  parse and check `value` (NULL when the file has no
 *                         such section: build the default) into a temporary,
 *                         without touching the session; AGT_EINVALID with a
 *                         message naming the field on bad input;
 *   commit(s, tmp)        swap the temporary in (cannot fail);
 *   discard(tmp)          free a temporary that was not committed.
 * Restore runs every load first and commits only when all succeeded, so a
 * truncated or corrupt file leaves the session unchanged.
 *
 * OTHER COMPONENTS: to save your state (cron table, background tasks, ...),
 * write those four functions in your own file, declare them in your
 * internal header, and add ONE line to `sections` (keys must be unique).
 * Unknown keys are ignored on restore, so older libraries read newer files
 * as far as they understand them; bump AGTI_SAVE_FORMAT only for a change
 * an older reader would misread.
 */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "events_internal.h"
#include "fs/fs.h"
#include "policy.h"
#include "review_internal.h"
#include "sandbox_settings.h"
#include "seen.h"
#include "session_internal.h"

#define AGTI_SAVE_FORMAT 1

typedef struct agti_save_section {
    const char *key;
    int (*save)(const agt_session *s, json_t **value);
    int (*load)(agt_session *s, json_t *value, void **tmp);
    void (*commit)(agt_session *s, void *tmp);
    void (*discard)(void *tmp);
} agti_save_section;

static const char *const mode_names[] = {"manual", "plan", "yolo", "auto"};

static int mode_from(json_t *v, const char *field, int *mode)
{
    const char *name = json_string_value(v);
    for (int m = 0; name != NULL && m < 4; m++)
        if (strcmp(name, mode_names[m]) == 0) {
            *mode = m;
            return AGT_OK;
        }
    return agti_error(AGT_EINVALID,
                      "session file: \"%s\" must be \"manual\", \"plan\", \"yolo\" or \"auto\"",
                      field);
}

/* ---- mode ---- */

static int mode_save(const agt_session *s, json_t **value)
{
    *value = json_string(mode_names[s->mode]);
    return *value ? AGT_OK : agti_oom();
}

static int mode_load(agt_session *s, json_t *value, void **tmp)
{
    (void)s;
    int mode = AGT_MODE_MANUAL;
    if (value != NULL) {
        int rc = mode_from(value, "mode", &mode);
        if (rc != AGT_OK)
            return rc;
    }
    int *m = malloc(sizeof *m);
    if (m == NULL)
        return agti_oom();
    *m = mode;
    *tmp = m;
    return AGT_OK;
}

static void mode_commit(agt_session *s, void *tmp)
{
    s->mode = *(int *)tmp; /* not set_mode: the plan section restores mode_before */
    free(tmp);
}

/* ---- rules ---- */

static int rules_save(const agt_session *s, json_t **value)
{
    const agti_ruleset *rs = &s->policy->rules;
    json_t *doc = json_pack("{s:[], s:[], s:[], s:[]}", "allow", "ask", "deny", "session");
    static const char *const lists[] = {"allow", "ask", "deny"};
    for (size_t i = 0; doc != NULL && i < rs->n; i++) {
        const agti_rule *r = rs->rules[i];
        json_t *list = json_object_get(doc, r->session ? "session" : lists[r->kind]);
        if (json_array_append_new(list, json_string(r->text)) != 0) {
            json_decref(doc);
            doc = NULL;
        }
    }
    *value = doc;
    return doc ? AGT_OK : agti_oom();
}

static void rules_discard(void *tmp)
{
    if (tmp != NULL)
        agti_ruleset_clear(tmp);
    free(tmp);
}

static int rules_load(agt_session *s, json_t *value, void **tmp)
{
    agti_ruleset *rs = calloc(1, sizeof *rs);
    if (rs == NULL)
        return agti_oom();
    int rc = AGT_OK;
    if (value != NULL) {
        rc = agti_rules_from_json(s, value, rs, "session file: rules");
        json_t *session = json_object_get(value, "session");
        if (rc == AGT_OK && session != NULL && !json_is_array(session))
            rc = agti_error(AGT_EINVALID, "session file: rules.session must be an array");
        size_t i;
        json_t *v;
        json_array_foreach(session, i, v)
        {
            if (rc != AGT_OK)
                break;
            agti_rule *r = NULL;
            rc = json_is_string(v)
                     ? agti_rule_parse(json_string_value(v), AGT_RULE_ALLOW, s->root, &r)
                     : agti_error(AGT_EINVALID, "rules.session[%zu] is not a string", i);
            if (rc == AGT_OK) {
                r->session = true;
                rc = agti_ruleset_add(rs, r);
            } else if (rc == AGT_EINVALID) {
                agti_error_prefix("session file: rules.session[%zu]", i);
            }
        }
    }
    if (rc != AGT_OK) {
        rules_discard(rs);
        return rc;
    }
    *tmp = rs;
    return AGT_OK;
}

static void rules_commit(agt_session *s, void *tmp)
{
    agti_ruleset_clear(&s->policy->rules);
    s->policy->rules = *(agti_ruleset *)tmp;
    s->policy->rules.dirty = true;
    free(tmp);
}

/* ---- todos ---- */

static int todos_save(const agt_session *s, json_t **value)
{
    *value = json_deep_copy(s->todos);
    return *value ? AGT_OK : agti_oom();
}

static int todos_load(agt_session *s, json_t *value, void **tmp)
{
    (void)s;
    static const char *const states[] = {"pending", "in_progress", "done"};
    if (value != NULL && !json_is_array(value))
        return agti_error(AGT_EINVALID, "session file: \"todos\" must be an array");
    json_t *copy = json_array();
    size_t i;
    json_t *t;
    json_array_foreach(value, i, t)
    {
        json_t *title = json_object_get(t, "title"), *status = json_object_get(t, "status");
        bool ok = json_is_string(title) && json_string_length(title) > 0 && json_is_string(status);
        bool known = false;
        for (size_t k = 0; ok && k < 3; k++)
            known |= strcmp(json_string_value(status), states[k]) == 0;
        if (!ok || !known) {
            json_decref(copy);
            return agti_error(AGT_EINVALID,
                              "session file: todos[%zu] needs a \"title\" and a \"status\" "
                              "(pending, in_progress or done)",
                              i);
        }
        /* what TodoList itself refuses: a blank title, and a NUL, which
         * would cut the title where the list is shown */
        const char *tt = json_string_value(title);
        size_t tlen = json_string_length(title);
        if (memchr(tt, '\0', tlen) != NULL || strspn(tt, " \t\r\n") == tlen) {
            json_decref(copy);
            return agti_error(AGT_EINVALID,
                              "session file: todos[%zu].title is blank or holds a NUL character "
                              "(\\u0000); TodoList accepts neither",
                              i);
        }
        json_array_append_new(copy, json_pack("{s:O, s:O}", "title", title, "status", status));
    }
    if (copy == NULL || json_array_size(copy) != json_array_size(value)) {
        json_decref(copy);
        return agti_oom();
    }
    *tmp = copy;
    return AGT_OK;
}

static void todos_commit(agt_session *s, void *tmp)
{
    json_decref(s->todos);
    s->todos = tmp;
}

static void todos_discard(void *tmp)
{
    json_decref(tmp);
}

/* ---- plan ---- */

typedef struct plan_tmp {
    char *file;
    int mode_before;
} plan_tmp;

static int plan_save(const agt_session *s, json_t **value)
{
    const agti_policy *p = s->policy;
    *value = json_pack("{s:s?, s:s}", "file", p->plan_file, "mode_before",
                       mode_names[p->mode_before_plan]);
    return *value ? AGT_OK : agti_oom();
}

static void plan_discard(void *tmp)
{
    plan_tmp *t = tmp;
    if (t != NULL)
        free(t->file);
    free(t);
}

static int plan_load(agt_session *s, json_t *value, void **tmp)
{
    plan_tmp *t = calloc(1, sizeof *t);
    if (t == NULL)
        return agti_oom();
    int rc = AGT_OK;
    if (value != NULL && !json_is_object(value))
        rc = agti_error(AGT_EINVALID, "session file: \"plan\" must be an object");
    json_t *file = json_object_get(value, "file");
    json_t *before = json_object_get(value, "mode_before");
    if (rc == AGT_OK && file != NULL && !json_is_null(file)) {
        const char *f = json_string_value(file);
        if (f == NULL || f[0] != '/')
            rc = agti_error(AGT_EINVALID, "session file: plan.file must be an absolute path");
        else if ((rc = agti_plan_path_check(s, f, true, &t->file)) != AGT_OK && rc != AGT_ENOMEM) {
            char *m = agti_strdup(agt_error_message());
            rc = m ? agti_error(AGT_EINVALID, "session file: plan.file: %s", m) : agti_oom();
            free(m);
        }
    }
    if (rc == AGT_OK && before != NULL) {
        rc = mode_from(before, "plan.mode_before", &t->mode_before);
        if (rc == AGT_OK && t->mode_before == AGT_MODE_PLAN)
            rc = agti_error(AGT_EINVALID, "session file: plan.mode_before cannot be \"plan\"");
    }
    if (rc != AGT_OK) {
        plan_discard(t);
        return rc;
    }
    *tmp = t;
    return AGT_OK;
}

static void plan_commit(agt_session *s, void *tmp)
{
    plan_tmp *t = tmp;
    free(s->policy->plan_file);
    s->policy->plan_file = t->file;
    s->policy->mode_before_plan = t->mode_before;
    free(t);
}

/* One line per section; other components append theirs here. */
static const agti_save_section sections[] = {
    {"mode", mode_save, mode_load, mode_commit, free},
    {"rules", rules_save, rules_load, rules_commit, rules_discard},
    {"todos", todos_save, todos_load, todos_commit, todos_discard},
    {"plan", plan_save, plan_load, plan_commit, plan_discard},
    {"tasks", agti_tasks_section_save, agti_tasks_section_load, agti_tasks_section_commit,
     agti_tasks_section_discard},
    {"cron", agti_cron_section_save, agti_cron_section_load, agti_cron_section_commit,
     agti_cron_section_discard},
    {"comments", agti_review_section_save, agti_review_section_load, agti_review_section_commit,
     agti_review_section_discard},
    {"sandbox", agti_sandbox_section_save, agti_sandbox_section_load, agti_sandbox_section_commit,
     agti_sandbox_section_discard},
    {"seen", agti_seen_section_save, agti_seen_section_load, agti_seen_section_commit,
     agti_seen_section_discard},
};

#define NSECTIONS (sizeof sections / sizeof sections[0])

int agt_session_save(const agt_session *s, char **out_json)
{
    if (s == NULL || out_json == NULL)
        return agti_error(AGT_EINVAL, "agt_session_save: session or out_json is NULL");
    *out_json = NULL;
    json_t *doc = json_pack("{s:i}", "format", AGTI_SAVE_FORMAT);
    if (doc == NULL)
        return agti_oom();
    for (size_t i = 0; i < NSECTIONS; i++) {
        json_t *v = NULL;
        int rc = sections[i].save(s, &v);
        if (rc == AGT_OK && v != NULL && json_object_set_new(doc, sections[i].key, v) != 0)
            rc = agti_oom();
        if (rc != AGT_OK) {
            json_decref(doc);
            return rc;
        }
    }
    *out_json = agti_json_dump(doc);
    json_decref(doc);
    return *out_json ? AGT_OK : agti_oom();
}

int agt_session_restore(agt_session *s, const char *json, size_t len)
{
    if (s == NULL || json == NULL)
        return agti_error(AGT_EINVAL, "agt_session_restore: session or json is NULL");
    json_t *doc = agti_json_parse(json, len, "session file");
    if (doc == NULL)
        return agt_error_code();
    int rc = AGT_OK;
    json_t *format = json_object_get(doc, "format");
    if (!json_is_object(doc))
        rc = agti_error(AGT_EINVALID, "session file: expected a JSON object");
    else if (!json_is_integer(format) || json_integer_value(format) < 1)
        rc = agti_error(AGT_EINVALID,
                        "session file: \"format\" is missing or not a positive integer");
    else if (json_integer_value(format) > AGTI_SAVE_FORMAT)
        rc = agti_error(AGT_EUNSUPPORTED,
                        "session file: format %lld is newer than this library reads (%d)",
                        (long long)json_integer_value(format), AGTI_SAVE_FORMAT);
    void *tmp[NSECTIONS] = {0};
    size_t loaded = 0;
    for (; rc == AGT_OK && loaded < NSECTIONS; loaded++) {
        rc = sections[loaded].load(s, json_object_get(doc, sections[loaded].key), &tmp[loaded]);
        if (rc != AGT_OK)
            break;
    }
    json_decref(doc);
    if (rc != AGT_OK) {
        for (size_t i = 0; i < loaded; i++)
            sections[i].discard(tmp[i]);
        return rc;
    }
    for (size_t i = 0; i < NSECTIONS; i++)
        sections[i].commit(s, tmp[i]);
    agti_policy_drop_pending(s->policy);
    return AGT_OK;
}
