#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch_internal.h"
#include "schema/schema_internal.h"

/* Lists the tools offered in the phase, for the not-available message. */
static void list_offered(agti_buf *b, const agti_dispatch_env *env)
{
    const agt_registry *reg = env->reg;
    size_t shown = 0;
    for (size_t i = 0; i < reg->ntools; i++) {
        if (!agti_tool_offered(reg, &reg->tools[i], env->phase))
            continue;
        agti_buf_puts(b, shown++ ? ", " : "");
        agti_buf_puts(b, reg->tools[i].name);
    }
    if (shown == 0)
        agti_buf_puts(b, "(none)");
}

static int error_result(agt_result **out, const char *call_id, const char *tool, agti_buf *text,
                        int status, json_t *json)
{
    if (text->oom) {
        agti_buf_free(text);
        json_decref(json);
        return agti_oom();
    }
    agt_result *r = agti_result_new(call_id, tool, agti_buf_cstr(text), true, status);
    agti_buf_free(text);
    if (r != NULL && json != NULL) {
        r->json = agti_json_dump(json);
        if (r->json == NULL) {
            agt_result_free(r);
            r = NULL;
        }
    }
    json_decref(json);
    if (r == NULL)
        return agti_oom();
    *out = r;
    return AGT_OK;
}

static int not_available(const agti_dispatch_env *env, const char *call_id, const char *tool,
                         agt_result **out)
{
    agti_buf b = AGTI_BUF_INIT;
    agti_buf_puts(&b, "Tool '");
    agti_utf8_sanitize(&b, tool, strlen(tool));
    agti_buf_puts(&b, "' is not available here. Call one of the available tools instead: ");
    list_offered(&b, env);
    agti_buf_puts(&b, ".");
    return error_result(out, call_id, tool, &b, AGT_ENOTFOUND, NULL);
}

static void describe_violations(agti_buf *b, const char *tool, json_t *errors)
{
    agti_buf_printf(b, "The arguments for %s do not match its parameters (%zu problem%s):\n", tool,
                    json_array_size(errors), json_array_size(errors) == 1 ? "" : "s");
    size_t i;
    json_t *e;
    json_array_foreach(errors, i, e)
    {
        const char *path = json_string_value(json_object_get(e, "instance_path"));
        const char *msg = json_string_value(json_object_get(e, "message"));
        agti_buf_puts(b, "- ");
        agti_buf_puts(b, path && path[0] ? path : "(arguments)");
        agti_buf_puts(b, ": ");
        agti_buf_puts(b, msg ? msg : "invalid");
        agti_buf_putc(b, '\n');
    }
    agti_buf_printf(b, "Fix these and call %s again.", tool);
}

/* Appends the JSON Pointer token of a member name or index to ptr. */
static void pointer_token(agti_buf *ptr, const char *tok, size_t len)
{
    agti_buf_putc(ptr, '/');
    for (size_t i = 0; i < len; i++) {
        if (tok[i] == '~')
            agti_buf_puts(ptr, "~0");
        else if (tok[i] == '/')
            agti_buf_puts(ptr, "~1");
        else if (tok[i] == '\0')
            agti_buf_puts(ptr, "\\u0000");
        else
            agti_buf_putc(ptr, tok[i]);
    }
}

/* Whether a string or member name in v holds a NUL character; builds no
 * pointer, so the common case (no NUL) writes nothing. */
static bool has_nul(json_t *v)
{
    if (json_is_string(v))
        return memchr(json_string_value(v), '\0', json_string_length(v)) != NULL;
    if (json_is_object(v)) {
        const char *key;
        size_t klen;
        json_t *m;
        json_object_keylen_foreach(v, key, klen, m)
        {
            if (memchr(key, '\0', klen) != NULL || has_nul(m))
                return true;
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *m;
        json_array_foreach(v, i, m)
        {
            if (has_nul(m))
                return true;
        }
    }
    return false;
}

/* Writes the JSON Pointer of the first string or member name in v that holds
 * a NUL character to ptr (v is known to hold one). */
static bool nul_pointer(json_t *v, agti_buf *ptr)
{
    if (json_is_string(v))
        return memchr(json_string_value(v), '\0', json_string_length(v)) != NULL;
    size_t mark = ptr->len;
    if (json_is_object(v)) {
        const char *key;
        size_t klen;
        json_t *m;
        json_object_keylen_foreach(v, key, klen, m)
        {
            pointer_token(ptr, key, klen);
            if (memchr(key, '\0', klen) != NULL || nul_pointer(m, ptr))
                return true;
            agti_buf_truncate(ptr, mark);
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *m;
        json_array_foreach(v, i, m)
        {
            agti_buf_printf(ptr, "/%zu", i);
            if (nul_pointer(m, ptr))
                return true;
            agti_buf_truncate(ptr, mark);
        }
    }
    return false;
}

/* Finds the first string or member name that holds a NUL character and
 * writes its JSON Pointer to ptr. Providers read arguments as C strings, which
 * would end silently at the NUL (a path "a.txt\u0000x" read a.txt). The
 * pointer is built only when there is a NUL: every call passes here. */
bool agti_args_find_nul(json_t *v, agti_buf *ptr)
{
    return has_nul(v) && nul_pointer(v, ptr);
}

/* JSON Schema's "integer" admits numbers with a zero fraction (2.0), which
 * jansson keeps as reals and json_integer_value reads as 0 (Bash ran
 * {"timeout": 1.0} with its default timeout). The top-level arguments the
 * tool declares "integer" become integers, saturated to the json_int_t range,
 * so providers see the value the schema accepted. */
int agti_args_integral(const agti_tool *t, json_t *args)
{
    json_t *def = json_object_get(t->entry, "definition");
    json_t *props = json_object_get(json_object_get(def, "parameters"), "properties");
    const char *key;
    json_t *v;
    void *tmp;
    json_object_foreach_safe(args, tmp, key, v)
    {
        json_t *type = json_object_get(json_object_get(props, key), "type");
        if (!json_is_real(v) || !json_is_string(type) ||
            strcmp(json_string_value(type), "integer") != 0)
            continue;
        double d = json_real_value(v);
        json_int_t i = d >= 9223372036854775807.0    ? LLONG_MAX
                       : d <= -9223372036854775808.0 ? LLONG_MIN
                                                     : (json_int_t)d;
        if (json_object_set_new(args, key, json_integer(i)) != 0)
            return agti_oom();
    }
    return AGT_OK;
}

/* Parses and validates the arguments; on a bad call builds the error result
 * and returns AGT_EINVALID (result in *out). */
static int parse_args(const agti_tool *t, const char *call_id, const char *args_json, json_t **args,
                      agt_result **out)
{
    const char *text = (args_json == NULL || args_json[0] == '\0') ? "{}" : args_json;
    json_t *v = agti_schema_parse_json(text, strlen(text), "arguments");
    if (v == NULL) {
        if (agt_error_code() == AGT_ENOMEM)
            return AGT_ENOMEM;
        agti_buf b = AGTI_BUF_INIT;
        agti_buf_printf(&b,
                        "The arguments for %s are not valid JSON (%s). Call %s again with a JSON "
                        "object that matches its parameters.",
                        t->name, agt_error_message() + strlen("arguments: "), t->name);
        int rc = error_result(out, call_id, t->name, &b, AGT_EPARSE, NULL);
        return rc == AGT_OK ? AGT_EINVALID : rc;
    }
    if (!json_is_object(v)) {
        json_decref(v);
        agti_buf b = AGTI_BUF_INIT;
        agti_buf_printf(&b,
                        "The arguments for %s must be a JSON object of named parameters, not a "
                        "single value. Call %s again with an object.",
                        t->name, t->name);
        int rc = error_result(out, call_id, t->name, &b, AGT_EINVALID, NULL);
        return rc == AGT_OK ? AGT_EINVALID : rc;
    }
    agti_buf where = AGTI_BUF_INIT;
    if (agti_args_find_nul(v, &where)) {
        json_decref(v);
        agti_buf b = AGTI_BUF_INIT;
        agti_buf_printf(&b,
                        "The arguments for %s contain a NUL character (\\u0000) at %s; paths, "
                        "patterns, commands and text cannot hold it. Call %s again without it.",
                        t->name, where.oom ? "(arguments)" : agti_buf_cstr(&where), t->name);
        agti_buf_free(&where);
        int rc = error_result(out, call_id, t->name, &b, AGT_EINVALID, NULL);
        return rc == AGT_OK ? AGT_EINVALID : rc;
    }
    agti_buf_free(&where);
    const agt_schema *schema = NULL;
    int src = agti_tool_schema(t, &schema);
    if (src != AGT_OK) {
        json_decref(v);
        return src;
    }
    if (schema != NULL) {
        json_t *errors = NULL;
        int rc = agti_schema_validate_json(schema, v, &errors);
        if (rc == AGT_EINVALID) {
            json_decref(v);
            agti_buf b = AGTI_BUF_INIT;
            describe_violations(&b, t->name, errors);
            json_t *doc = json_pack("{s:o}", "errors", errors);
            rc = error_result(out, call_id, t->name, &b, AGT_EINVALID, doc);
            return rc == AGT_OK ? AGT_EINVALID : rc;
        }
        json_decref(errors);
        if (rc == AGT_OK)
            rc = agti_args_integral(t, v);
        if (rc != AGT_OK) {
            json_decref(v);
            return rc;
        }
    }
    *args = v;
    return AGT_OK;
}

static void call_release(agt_call *c)
{
    json_decref(c->args);
    free(c->tool_copy);
    c->tool_copy = NULL;
    free(c->args_dump);
    free(c->outside_dir);
    c->outside_dir = NULL;
    agti_buf_free(&c->text);
    json_decref(c->json);
}

/* Turns what the provider left in the call into a result. */
static int finish_call(agt_call *c, int prc, agt_result **out)
{
    agti_buf b = AGTI_BUF_INIT;
    bool is_error = c->is_error;
    int status = AGT_OK;
    /* the provider's text becomes the result's as it is, without a copy
     * (a Read or Bash result can be hundreds of KiB) */
    bool take = prc == AGT_OK || (c->text_set && c->is_error);
    if (prc != AGT_OK) {
        is_error = true;
        status = prc;
        if (!take && prc == AGT_ENOMEM)
            agti_buf_printf(&b, "%s failed: the host ran out of memory.", c->tool);
        else if (!take)
            agti_buf_printf(&b, "%s failed: %s", c->tool, agt_error_message());
    } else if (is_error) {
        status = AGT_ERROR;
    }
    if (take) {
        b = c->text;
        c->text = (agti_buf)AGTI_BUF_INIT;
    }
    if (b.oom) {
        agti_buf_free(&b);
        return agti_oom();
    }
    agt_result *r = agti_result_new(c->id, c->tool, "", is_error, status);
    char *text = r != NULL ? agti_buf_detach(&b) : NULL;
    if (text == NULL) {
        agti_buf_free(&b);
        agt_result_free(r);
        return agti_oom();
    }
    free(r->text);
    r->text = text;
    if (c->json != NULL && (r->json = agti_json_dump(c->json)) == NULL) {
        agt_result_free(r);
        return agti_oom();
    }
    *out = r;
    return AGT_OK;
}

/* Look-up, parsing, validation, built-in checks and the gate: the part of a
 * dispatch that runs on the caller's thread in call order. AGT_OK with *fn
 * set: the call is ready for its provider. AGT_OK with *out set: answered
 * already (not available, bad arguments, refused); AGT_EPENDING: parked by
 * the gate; another code: failed. On every return but "ready" the call is
 * released. */
static int prepare(const agti_dispatch_env *env, agt_call *c, const char *call_id, const char *tool,
                   const char *args_json, agt_provider_fn *fn, void **payload, agt_result **out)
{
    *out = NULL;
    *fn = NULL;
    memset(c, 0, sizeof *c);
    const agti_tool *t = agti_registry_find(env->reg, tool);
    /* agti_tool_offered() without its provider look-up: the one below
     * answers both whether there is a provider and which */
    if (t == NULL || (env->phase == AGT_PHASE_PLAN && !t->plan_task) ||
        (env->phase == AGT_PHASE_MAIN && !t->main_task) ||
        !agti_registry_provider(env->reg, t, fn, payload)) {
        *fn = NULL;
        return not_available(env, call_id, tool, out);
    }
    agt_provider_fn found = *fn;
    *fn = NULL;
    c->id = call_id;
    /* a copy: an approver or pre-hook (of this call, or of a later call of
     * a concurrent group prepared before this one runs) may remove the tool
     * from the registry, which frees its name */
    c->tool_copy = agti_strdup(t->name);
    if (c->tool_copy == NULL)
        return agti_oom();
    c->tool = c->tool_copy;
    c->entry = t;
    c->session = env->session;
    c->args_text = (args_json == NULL || args_json[0] == '\0') ? "{}" : args_json;
    int rc = parse_args(t, call_id, args_json, &c->args, out);
    if (rc != AGT_OK) {
        call_release(c);
        return rc == AGT_EINVALID ? AGT_OK : rc;
    }
    if ((rc = agti_builtin_check(c)) != AGT_OK) {
        rc = finish_call(c, rc, out);
        call_release(c);
        return rc;
    }
    if (env->gate != NULL) {
        rc = env->gate(env->gate_ctx, c, out);
        if (rc != AGT_OK) {
            call_release(c);
            return rc == AGT_EDENIED ? AGT_OK : rc;
        }
    }
    c->entry = NULL; /* host callbacks ran: the registry may have changed */
    *fn = found;
    return AGT_OK;
}

/* The provider and the result: one thread, since finish_call reads the
 * provider's thread-local last error. Releases the call. */
static int execute(agt_call *c, agt_provider_fn fn, void *payload, agt_result **out)
{
    int prc = fn(c, payload);
    if (prc == AGT_OK && c->suspended) {
        call_release(c);
        return AGT_EPENDING;
    }
    int rc = finish_call(c, prc, out);
    call_release(c);
    return rc;
}

int agti_dispatch(const agti_dispatch_env *env, const char *call_id, const char *tool,
                  const char *args_json, agt_result **out)
{
    if (out == NULL || tool == NULL)
        return agti_error(AGT_EINVAL, "agt_session_dispatch: tool or out is NULL");
    *out = NULL;
    if (call_id == NULL)
        call_id = "";
    agt_call c;
    agt_provider_fn fn;
    void *payload = NULL;
    int rc = prepare(env, &c, call_id, tool, args_json, &fn, &payload, out);
    if (rc != AGT_OK || fn == NULL)
        return rc;
    return execute(&c, fn, payload, out);
}

/* ---- split dispatch (concurrent read-only calls) ------------------------ */

struct agti_prepared {
    agt_call call;
    agt_provider_fn fn;
    void *payload;
    char *id; /* the call's strings, kept until it has run */
    char *args;
};

int agti_dispatch_prepare(const agti_dispatch_env *env, const char *call_id, const char *tool,
                          const char *args_json, agti_prepared **prep, agt_result **out)
{
    if (prep == NULL || out == NULL || tool == NULL)
        return agti_error(AGT_EINVAL, "agti_dispatch_prepare: tool, prep or out is NULL");
    *prep = NULL;
    *out = NULL;
    agti_prepared *p = calloc(1, sizeof *p);
    if (p == NULL)
        return agti_oom();
    p->id = agti_strdup(call_id ? call_id : "");
    p->args = args_json ? agti_strdup(args_json) : NULL;
    if (p->id == NULL || (args_json != NULL && p->args == NULL)) {
        agti_prepared_free(p);
        return agti_oom();
    }
    int rc = prepare(env, &p->call, p->id, tool, p->args, &p->fn, &p->payload, out);
    if (rc != AGT_OK || p->fn == NULL) {
        p->fn = NULL; /* released by prepare */
        agti_prepared_free(p);
        return rc;
    }
    *prep = p;
    return AGT_OK;
}

bool agti_prepared_parallel_safe(const agti_prepared *p)
{
    return p != NULL && agti_provider_parallel_safe(p->fn);
}

int agti_dispatch_execute(agti_prepared *p, agt_result **out)
{
    *out = NULL;
    if (p->fn == NULL)
        return agti_error(AGT_ESTATE, "tool call '%s' has run already", p->id);
    agt_provider_fn fn = p->fn;
    p->fn = NULL;
    return execute(&p->call, fn, p->payload, out);
}

void agti_prepared_free(agti_prepared *p)
{
    if (p == NULL)
        return;
    if (p->fn != NULL)
        call_release(&p->call);
    free(p->id);
    free(p->args);
    free(p);
}

bool agti_dispatch_parallel_safe(const agti_dispatch_env *env, const char *tool)
{
    const agti_tool *t = tool ? agti_registry_find(env->reg, tool) : NULL;
    agt_provider_fn fn;
    void *payload;
    return t != NULL && agti_tool_offered(env->reg, t, env->phase) &&
           agti_registry_provider(env->reg, t, &fn, &payload) && agti_provider_parallel_safe(fn);
}
