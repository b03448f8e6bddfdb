/* The approval policy of a session: its lifetime, and the rule lists as the
 * host adds, loads and reads them. */
#include <stdlib.h>
#include <string.h>

#include "approval_internal.h"
#include "core/core.h"
#include "policy.h"
#include "session_internal.h"

agti_policy *agti_policy_new(void)
{
    agti_policy *p = calloc(1, sizeof *p);
    if (p == NULL)
        return NULL;
    p->hook_budget_ms = 5000;
    p->mode_before_plan = AGT_MODE_MANUAL;
    return p;
}

void agti_policy_free(agti_policy *p)
{
    if (p == NULL)
        return;
    agti_subappr_free(p->sub);
    agti_ruleset_clear(&p->rules);
    agti_policy_drop_pending(p);
    free(p->pending);
    free(p->plan_file);
    free(p);
}

/* ---- public API -------------------------------------------------------- */

int agt_session_add_rule(agt_session *s, int kind, const char *rule)
{
    if (s == NULL || rule == NULL)
        return agti_error(AGT_EINVAL, "agt_session_add_rule: session or rule is NULL");
    if (kind < AGT_RULE_ALLOW || kind > AGT_RULE_DENY)
        return agti_error(AGT_EINVAL, "agt_session_add_rule: unknown rule kind %d", kind);
    agti_rule *r;
    int rc = agti_rule_parse(rule, kind, s->root, &r);
    if (rc != AGT_OK)
        return rc;
    return agti_ruleset_add(&s->policy->rules, r);
}

static const char *const kind_names[] = {"allow", "ask", "deny"};

/* Parses {"allow":[...],...} into a new rule list (all or nothing). */
int agti_rules_from_json(agt_session *s, json_t *doc, agti_ruleset *into, const char *where)
{
    if (!json_is_object(doc))
        return agti_error(AGT_EINVALID, "%s: expected an object with allow, ask and deny lists",
                          where);
    for (int k = AGT_RULE_ALLOW; k <= AGT_RULE_DENY; k++) {
        json_t *list = json_object_get(doc, kind_names[k]);
        if (list == NULL)
            continue;
        if (!json_is_array(list))
            return agti_error(AGT_EINVALID, "%s: \"%s\" must be an array of rule strings", where,
                              kind_names[k]);
        size_t i;
        json_t *v;
        json_array_foreach(list, i, v)
        {
            if (!json_is_string(v))
                return agti_error(AGT_EINVALID, "%s: %s[%zu] is not a string", where, kind_names[k],
                                  i);
            agti_rule *r;
            int rc = agti_rule_parse(json_string_value(v), k, s->root, &r);
            if (rc == AGT_EINVALID)
                agti_error_prefix("%s: %s[%zu]", where, kind_names[k], i);
            if (rc == AGT_OK)
                rc = agti_ruleset_add(into, r);
            if (rc != AGT_OK)
                return rc;
        }
    }
    return AGT_OK;
}

int agt_session_load_rules(agt_session *s, const char *json, size_t len)
{
    if (s == NULL || json == NULL)
        return agti_error(AGT_EINVAL, "agt_session_load_rules: session or json is NULL");
    json_t *doc = agti_json_parse(json, len, "rules");
    if (doc == NULL)
        return agt_error_code();
    agti_ruleset tmp = {0};
    int rc = agti_rules_from_json(s, doc, &tmp, "rules");
    json_decref(doc);
    for (size_t i = 0; rc == AGT_OK && i < tmp.n; i++) {
        rc = agti_ruleset_add(&s->policy->rules, tmp.rules[i]);
        tmp.rules[i] = NULL;
        if (rc != AGT_OK) {
            /* roll back what was moved so the call stays all or nothing */
            agti_ruleset *rs = &s->policy->rules;
            for (size_t j = 0; j < i; j++)
                agti_rule_free(rs->rules[--rs->n]);
            rs->dirty = true;
        }
    }
    for (size_t i = 0; i < tmp.n; i++)
        if (rc != AGT_OK)
            agti_rule_free(tmp.rules[i]);
    tmp.n = 0;
    agti_ruleset_clear(&tmp);
    return rc;
}

json_t *agti_rules_to_json(const agti_ruleset *rs)
{
    json_t *doc = json_pack("{s:[], s:[], s:[], s:[]}", "allow", "ask", "deny", "session");
    if (doc == NULL)
        return NULL;
    for (size_t i = 0; i < rs->n; i++) {
        const agti_rule *r = rs->rules[i];
        if (json_array_append_new(json_object_get(doc, kind_names[r->kind]),
                                  json_string(r->text)) != 0 ||
            (r->session &&
             json_array_append_new(json_object_get(doc, "session"), json_string(r->text)) != 0)) {
            json_decref(doc);
            return NULL;
        }
    }
    return doc;
}

int agt_session_rules(const agt_session *s, char **out_json)
{
    if (s == NULL || out_json == NULL)
        return agti_error(AGT_EINVAL, "agt_session_rules: session or out_json is NULL");
    json_t *doc = agti_rules_to_json(&s->policy->rules);
    *out_json = doc ? agti_json_dump(doc) : NULL;
    json_decref(doc);
    return *out_json ? AGT_OK : agti_oom();
}
