#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "registry_internal.h"

extern const char agti_builtin_review_json[];
extern const size_t agti_builtin_review_json_len;
extern const char agti_builtin_chat_json[];
extern const size_t agti_builtin_chat_json_len;

static const char *const access_names[] = {"read", "write", "execute", "network", "host"};

agt_provider_fn agti_builtin_provider_find(const char *name)
{
    for (size_t i = 0; i < agti_builtin_provider_count; i++)
        if (strcmp(agti_builtin_providers[i].name, name) == 0)
            return agti_builtin_providers[i].fn;
    return NULL;
}

static void tool_clear(agti_tool *t)
{
    free(t->name);
    free(t->provider);
    free(t->description);
    json_decref(t->entry);
    agt_schema_free(t->schema);
    memset(t, 0, sizeof *t);
}

int agt_registry_new(agt_registry **out)
{
    if (out == NULL)
        return agti_error(AGT_EINVAL, "agt_registry_new: out is NULL");
    *out = calloc(1, sizeof **out);
    return *out ? AGT_OK : agti_oom();
}

void agt_registry_free(agt_registry *reg)
{
    if (reg == NULL)
        return;
    for (size_t i = 0; i < reg->ntools; i++)
        tool_clear(&reg->tools[i]);
    free(reg->tools);
    for (size_t i = 0; i < reg->nhosts; i++)
        free(reg->hosts[i].name);
    free(reg->hosts);
    free(reg);
}

const agti_tool *agti_registry_find(const agt_registry *reg, const char *name)
{
    if (reg == NULL || name == NULL)
        return NULL;
    for (size_t i = 0; i < reg->ntools; i++)
        if (strcmp(reg->tools[i].name, name) == 0)
            return &reg->tools[i];
    return NULL;
}

static const agti_host_provider *host_find(const agt_registry *reg, const char *name)
{
    for (size_t i = 0; i < reg->nhosts; i++)
        if (strcmp(reg->hosts[i].name, name) == 0)
            return &reg->hosts[i];
    return NULL;
}

bool agti_registry_provider(const agt_registry *reg, const agti_tool *t, agt_provider_fn *fn,
                            void **payload)
{
    const agti_host_provider *h = host_find(reg, t->name);
    if (h == NULL && strcmp(t->provider, t->name) != 0)
        h = host_find(reg, t->provider);
    if (h != NULL) {
        *fn = h->fn;
        *payload = h->payload;
        return true;
    }
    *fn = agti_builtin_provider_find(t->provider);
    *payload = NULL;
    return *fn != NULL;
}

bool agti_tool_offered(const agt_registry *reg, const agti_tool *t, int phase)
{
    if (phase == AGT_PHASE_PLAN && !t->plan_task)
        return false;
    if (phase == AGT_PHASE_MAIN && !t->main_task)
        return false;
    agt_provider_fn fn;
    void *payload;
    return agti_registry_provider(reg, t, &fn, &payload);
}

/* ---- loading ------------------------------------------------------------ */

/* The embedded sets, parsed on demand (they are small). */
static json_t *builtin_set(const char *set)
{
    if (strcmp(set, "review") == 0)
        return agti_json_parse(agti_builtin_review_json, agti_builtin_review_json_len,
                               "built-in review set");
    if (strcmp(set, "chat") == 0)
        return agti_json_parse(agti_builtin_chat_json, agti_builtin_chat_json_len,
                               "built-in chat set");
    agti_error(AGT_ENOTFOUND, "unknown built-in tool set '%s' (expected \"review\" or \"chat\")",
               set);
    return NULL;
}

/* The embedded sets parsed during one load: each is parsed the first time
 * an entry needs it, once per load rather than once per entry (re-parsing
 * per entry was 80% of loading the chat set). Owned by the loading call. */
typedef struct builtin_cache {
    json_t *sets[2];
} builtin_cache;

static void builtin_cache_free(builtin_cache *c)
{
    for (size_t s = 0; s < 2; s++)
        json_decref(c->sets[s]);
}

/* The built-in entry of a tool name in either set (new reference), or NULL. */
static json_t *builtin_entry(builtin_cache *c, const char *name)
{
    static const char *const sets[] = {"review", "chat"};
    for (size_t s = 0; s < 2; s++) {
        if (c->sets[s] == NULL)
            c->sets[s] = builtin_set(sets[s]);
        size_t i;
        json_t *e;
        json_array_foreach(c->sets[s], i, e)
        {
            const char *n = json_string_value(json_object_get(e, "name"));
            if (n != NULL && strcmp(n, name) == 0)
                return json_incref(e);
        }
    }
    return NULL;
}

static bool valid_tool_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 64)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-'))
            return false;
    }
    return true;
}

static int entry_error(size_t index, const char *name, const char *what)
{
    if (name != NULL)
        return agti_error(AGT_EINVALID, "tool entry %zu (\"%s\"): %s", index, name, what);
    return agti_error(AGT_EINVALID, "tool entry %zu: %s", index, what);
}

static int optional_bool(json_t *e, const char *key, bool dflt, bool *out, size_t index,
                         const char *name)
{
    json_t *v = json_object_get(e, key);
    if (v == NULL) {
        *out = dflt;
        return AGT_OK;
    }
    if (!json_is_boolean(v)) {
        char msg[96];
        snprintf(msg, sizeof msg, "\"%s\" must be true or false", key);
        return entry_error(index, name, msg);
    }
    *out = json_is_true(v);
    return AGT_OK;
}

static int parse_access(json_t *v, int *out)
{
    const char *s = json_string_value(v);
    for (int i = 0; s != NULL && i < (int)(sizeof access_names / sizeof *access_names); i++) {
        if (strcmp(s, access_names[i]) == 0) {
            *out = i;
            return AGT_OK;
        }
    }
    return AGT_EINVALID;
}

/* Whether a "parameters" schema object admits a JSON object: its "type",
 * when present, is "object" or an array that contains "object". */
static bool schema_allows_object(json_t *params)
{
    json_t *type = json_object_get(params, "type");
    if (type == NULL)
        return true;
    if (json_is_string(type))
        return strcmp(json_string_value(type), "object") == 0;
    size_t i;
    json_t *v;
    json_array_foreach(type, i, v)
    {
        if (json_is_string(v) && strcmp(json_string_value(v), "object") == 0)
            return true;
    }
    return false;
}

static int compile_params(json_t *params, agt_schema **out)
{
    *out = NULL;
    char *ptext = agti_json_dump(params);
    if (ptext == NULL)
        return agti_oom();
    int rc = agt_schema_compile(out, ptext, strlen(ptext));
    free(ptext);
    return rc;
}

/* Serialises the first compilation of built-in schemas; taken only while a
 * tool's schema is still NULL. */
static pthread_mutex_t lazy_mu = PTHREAD_MUTEX_INITIALIZER;

int agti_tool_schema(const agti_tool *t, const agt_schema **out)
{
    agt_schema *s = __atomic_load_n(&t->schema, __ATOMIC_ACQUIRE);
    if (s != NULL || !t->lazy) {
        *out = s;
        return AGT_OK;
    }
    int rc = AGT_OK;
    pthread_mutex_lock(&lazy_mu);
    s = __atomic_load_n(&t->schema, __ATOMIC_ACQUIRE);
    if (s == NULL) {
        rc = compile_params(json_object_get(json_object_get(t->entry, "definition"), "parameters"),
                            &s);
        if (rc == AGT_OK)
            __atomic_store_n(&((agti_tool *)t)->schema, s, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&lazy_mu);
    if (rc != AGT_OK) {
        /* a built-in schema that does not compile (only memory can run out:
         * the catalogue's are tested): the call is refused, never run
         * unchecked */
        *out = NULL;
        if (rc == AGT_ENOMEM)
            return rc;
        char why[512];
        snprintf(why, sizeof why, "%s", agt_error_message());
        return agti_error(AGT_ERROR, "the argument schema of built-in tool %s does not compile: %s",
                          t->name, why);
    }
    *out = s;
    return AGT_OK;
}

/* Builds a tool from one tools.json entry. `need_provider`: refuse names that
 * no provider (host or built-in) and no built-in definition backs. `lazy`:
 * the entry is from the built-in catalogue; its schema is compiled on first
 * use (agti_tool_schema). */
static int tool_from_entry(const agt_registry *reg, builtin_cache *cache, json_t *e, size_t index,
                           bool need_provider, bool lazy, agti_tool *t)
{
    memset(t, 0, sizeof *t);
    if (!json_is_object(e))
        return entry_error(index, NULL, "must be a JSON object");
    const char *name = json_string_value(json_object_get(e, "name"));
    if (name == NULL)
        return entry_error(index, NULL, "\"name\" is missing or not a string");
    if (!valid_tool_name(name))
        return entry_error(index, name,
                           "\"name\" must be 1-64 characters of letters, digits, '_' or '-'");
    json_t *def = json_object_get(e, "definition");
    if (!json_is_object(def))
        return entry_error(index, name, "\"definition\" is missing or not an object");
    const char *dname = json_string_value(json_object_get(def, "name"));
    if (dname != NULL && strcmp(dname, name) != 0)
        return entry_error(index, name, "\"definition.name\" differs from \"name\"");
    json_t *desc = json_object_get(def, "description");
    if (desc != NULL && !json_is_string(desc))
        return entry_error(index, name, "\"definition.description\" must be a string");
    json_t *params = json_object_get(def, "parameters");
    if (params != NULL && !json_is_object(params))
        return entry_error(index, name, "\"definition.parameters\" must be a JSON Schema object");
    if (params != NULL && !schema_allows_object(params)) {
        char *ttext = agti_json_dump(json_object_get(params, "type"));
        if (ttext == NULL)
            return agti_oom();
        int erc = agti_error(AGT_EINVALID,
                             "tool entry %zu (\"%s\"): \"definition.parameters\" must describe an "
                             "object (its \"type\" is %.200s); the arguments of a call are always "
                             "a JSON object, so no call could pass it",
                             index, name, ttext);
        free(ttext);
        return erc;
    }
    json_t *pv = json_object_get(e, "provider");
    if (pv != NULL && (!json_is_string(pv) || json_string_length(pv) == 0))
        return entry_error(index, name, "\"provider\" must be a non-empty tool name");
    const char *provider = pv ? json_string_value(pv) : name;
    json_t *sv = json_object_get(e, "set");
    if (sv != NULL && !json_is_string(sv))
        return entry_error(index, name, "\"set\" must be a string");

    bool plan = false, main_task = true; /* set below; initialised for GCC -O3 */
    int rc = optional_bool(e, "plan_task", false, &plan, index, name);
    if (rc == AGT_OK)
        rc = optional_bool(e, "main_task", true, &main_task, index, name);
    if (rc != AGT_OK)
        return rc;

    /* the built-in entry of the provider is looked up only when needed (an
     * entry without "access", or one no provider backs): every built-in
     * entry has "access", and the lookup parses the embedded sets */
    bool has_provider = agti_builtin_provider_find(provider) != NULL ||
                        host_find(reg, name) != NULL || host_find(reg, provider) != NULL;
    json_t *av = json_object_get(e, "access");
    json_t *builtin = NULL;
    if (av == NULL || (need_provider && !has_provider))
        builtin = builtin_entry(cache, provider);
    if (need_provider && !has_provider && builtin == NULL) {
        if (pv != NULL)
            return entry_error(index, name,
                               "\"provider\" names no built-in tool and no host provider "
                               "(set one with agt_registry_set_provider before loading)");
        return entry_error(index, name,
                           "no provider runs this tool: use a built-in tool name, name one in "
                           "\"provider\", or set a host provider before loading");
    }
    int access = AGT_ACCESS_HOST;
    if (av == NULL && builtin != NULL)
        av = json_object_get(builtin, "access");
    if (av != NULL && parse_access(av, &access) != AGT_OK) {
        json_decref(builtin);
        return entry_error(index, name,
                           "\"access\" must be one of read, write, execute, network, host");
    }
    json_decref(builtin);

    agt_schema *schema = NULL;
    if (params != NULL && !lazy) {
        rc = compile_params(params, &schema);
        if (rc == AGT_ENOMEM)
            return rc;
        if (rc != AGT_OK) {
            char why[512];
            snprintf(why, sizeof why, "%s", agt_error_message());
            return agti_error(AGT_EINVALID,
                              "tool entry %zu (\"%s\"): \"definition.parameters\" is not a "
                              "valid JSON Schema: %s",
                              index, name, why);
        }
    }
    t->name = agti_strdup(name);
    t->provider = agti_strdup(provider);
    t->description = agti_strdup(desc ? json_string_value(desc) : "");
    t->schema = schema;
    t->lazy = params != NULL && lazy;
    t->plan_task = plan;
    t->main_task = main_task;
    t->access = access;
    t->entry = json_incref(e); /* the caller's array was parsed for this load */
    if (!t->name || !t->provider || !t->description || !t->entry) {
        tool_clear(t);
        return agti_oom();
    }
    return AGT_OK;
}

static int check_mutable(const agt_registry *reg, const char *fn)
{
    if (reg == NULL)
        return agti_error(AGT_EINVAL, "%s: registry is NULL", fn);
    if (reg->frozen)
        return agti_error(AGT_EFROZEN, "%s: the registry is frozen and cannot change", fn);
    return AGT_OK;
}

/* Loads `arr` into a fresh tool array; all or nothing. */
static int tools_from_array(const agt_registry *reg, json_t *arr, bool need_provider, bool lazy,
                            agti_tool **out, size_t *count)
{
    size_t n = json_array_size(arr);
    agti_tool *tools = calloc(n ? n : 1, sizeof *tools);
    if (tools == NULL)
        return agti_oom();
    int rc = AGT_OK;
    size_t i;
    builtin_cache cache = {{NULL, NULL}};
    for (i = 0; i < n && rc == AGT_OK; i++) {
        rc =
            tool_from_entry(reg, &cache, json_array_get(arr, i), i, need_provider, lazy, &tools[i]);
        for (size_t j = 0; rc == AGT_OK && j < i; j++)
            if (strcmp(tools[j].name, tools[i].name) == 0)
                rc = entry_error(i, tools[i].name, "the name is used by an earlier entry");
        if (rc != AGT_OK && tools[i].name != NULL)
            tool_clear(&tools[i]);
    }
    builtin_cache_free(&cache);
    if (rc != AGT_OK) {
        for (size_t j = 0; j + 1 < i; j++)
            tool_clear(&tools[j]);
        free(tools);
        return rc;
    }
    *out = tools;
    *count = n;
    return AGT_OK;
}

static int reserve_tools(agt_registry *reg, size_t extra)
{
    if (reg->ntools + extra <= reg->cap)
        return AGT_OK;
    size_t cap = reg->ntools + extra + 8;
    agti_tool *p = realloc(reg->tools, cap * sizeof *p);
    if (p == NULL)
        return agti_oom();
    reg->tools = p;
    reg->cap = cap;
    return AGT_OK;
}

/* Puts `t` into the registry, replacing an entry of the same name. Takes
 * ownership of t's contents. */
static int registry_put(agt_registry *reg, agti_tool *t)
{
    for (size_t i = 0; i < reg->ntools; i++) {
        if (strcmp(reg->tools[i].name, t->name) == 0) {
            tool_clear(&reg->tools[i]);
            reg->tools[i] = *t;
            return AGT_OK;
        }
    }
    if (reg->ntools == reg->cap && reserve_tools(reg, 1) != AGT_OK) {
        tool_clear(t);
        return AGT_ENOMEM;
    }
    reg->tools[reg->ntools++] = *t;
    return AGT_OK;
}

int agt_registry_load_builtin(agt_registry *reg, const char *set)
{
    int rc = check_mutable(reg, "agt_registry_load_builtin");
    if (rc != AGT_OK)
        return rc;
    if (set == NULL)
        return agti_error(AGT_EINVAL, "agt_registry_load_builtin: set is NULL");
    json_t *arr = builtin_set(set);
    if (arr == NULL)
        return agt_error_code();
    agti_tool *tools;
    size_t n;
    rc = tools_from_array(reg, arr, false, true, &tools, &n);
    json_decref(arr);
    if (rc != AGT_OK)
        return rc;
    if (reserve_tools(reg, n) != AGT_OK) {
        for (size_t i = 0; i < n; i++)
            tool_clear(&tools[i]);
        free(tools);
        return AGT_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        registry_put(reg, &tools[i]); /* cannot fail: capacity reserved above */
    free(tools);
    return AGT_OK;
}

int agt_registry_load_json(agt_registry *reg, const char *json, size_t len)
{
    int rc = check_mutable(reg, "agt_registry_load_json");
    if (rc != AGT_OK)
        return rc;
    json_t *arr = agti_json_parse(json, len, "tools.json");
    if (arr == NULL)
        return agt_error_code();
    if (!json_is_array(arr)) {
        json_decref(arr);
        return agti_error(AGT_EINVALID, "tools.json: the top level must be a JSON array of "
                                        "tool entries");
    }
    agti_tool *tools;
    size_t n;
    rc = tools_from_array(reg, arr, true, false, &tools, &n);
    json_decref(arr);
    if (rc != AGT_OK)
        return rc;
    for (size_t i = 0; i < reg->ntools; i++)
        tool_clear(&reg->tools[i]);
    free(reg->tools);
    reg->tools = tools;
    reg->ntools = n;
    reg->cap = n ? n : 1;
    return AGT_OK;
}

int agt_registry_add_json(agt_registry *reg, const char *entry_json, size_t len)
{
    int rc = check_mutable(reg, "agt_registry_add_json");
    if (rc != AGT_OK)
        return rc;
    json_t *e = agti_json_parse(entry_json, len, "tool entry");
    if (e == NULL)
        return agt_error_code();
    agti_tool t;
    builtin_cache cache = {{NULL, NULL}};
    rc = tool_from_entry(reg, &cache, e, 0, true, false, &t);
    builtin_cache_free(&cache);
    json_decref(e);
    if (rc != AGT_OK)
        return rc;
    return registry_put(reg, &t);
}

int agt_registry_set_provider(agt_registry *reg, const char *name, agt_provider_fn fn,
                              void *payload)
{
    int rc = check_mutable(reg, "agt_registry_set_provider");
    if (rc != AGT_OK)
        return rc;
    if (name == NULL || name[0] == '\0')
        return agti_error(AGT_EINVAL, "agt_registry_set_provider: the tool name is empty");
    for (size_t i = 0; i < reg->nhosts; i++) {
        if (strcmp(reg->hosts[i].name, name) != 0)
            continue;
        if (fn == NULL) {
            free(reg->hosts[i].name);
            reg->hosts[i] = reg->hosts[--reg->nhosts];
        } else {
            reg->hosts[i].fn = fn;
            reg->hosts[i].payload = payload;
        }
        return AGT_OK;
    }
    if (fn == NULL)
        return AGT_OK;
    agti_host_provider *p = realloc(reg->hosts, (reg->nhosts + 1) * sizeof *p);
    if (p == NULL)
        return agti_oom();
    reg->hosts = p;
    char *copy = agti_strdup(name);
    if (copy == NULL)
        return agti_oom();
    reg->hosts[reg->nhosts++] = (agti_host_provider){copy, fn, payload};
    return AGT_OK;
}

int agt_registry_remove(agt_registry *reg, const char *name)
{
    int rc = check_mutable(reg, "agt_registry_remove");
    if (rc != AGT_OK)
        return rc;
    if (name == NULL)
        return agti_error(AGT_EINVAL, "agt_registry_remove: name is NULL");
    for (size_t i = 0; i < reg->ntools; i++) {
        if (strcmp(reg->tools[i].name, name) == 0) {
            tool_clear(&reg->tools[i]);
            memmove(&reg->tools[i], &reg->tools[i + 1], (reg->ntools - i - 1) * sizeof *reg->tools);
            reg->ntools--;
            return AGT_OK;
        }
    }
    return agti_error(AGT_ENOTFOUND, "agt_registry_remove: no tool named '%s'", name);
}

int agt_registry_set_description(agt_registry *reg, const char *name, const char *description)
{
    int rc = check_mutable(reg, "agt_registry_set_description");
    if (rc != AGT_OK)
        return rc;
    if (name == NULL || description == NULL)
        return agti_error(AGT_EINVAL, "agt_registry_set_description: name or description is NULL");
    agti_tool *t = (agti_tool *)agti_registry_find(reg, name);
    if (t == NULL)
        return agti_error(AGT_ENOTFOUND, "agt_registry_set_description: no tool named '%s'", name);
    if (!agti_utf8_valid(description, strlen(description)))
        return agti_error(AGT_EINVAL,
                          "agt_registry_set_description: the description of '%s' "
                          "is not valid UTF-8",
                          name);
    char *copy = agti_strdup(description);
    json_t *js = json_string(description);
    if (copy == NULL || js == NULL) {
        free(copy);
        json_decref(js);
        return agti_oom();
    }
    /* the entry first: when it cannot take the text, neither changes (the
     * native export and the other formats would disagree) */
    if (json_object_set_new(json_object_get(t->entry, "definition"), "description", js) != 0) {
        free(copy);
        return agti_oom();
    }
    free(t->description);
    t->description = copy;
    return AGT_OK;
}

int agt_registry_freeze(agt_registry *reg)
{
    if (reg == NULL)
        return agti_error(AGT_EINVAL, "agt_registry_freeze: registry is NULL");
    reg->frozen = true;
    return AGT_OK;
}

int agt_registry_is_frozen(const agt_registry *reg)
{
    return reg != NULL && reg->frozen;
}

size_t agt_registry_count(const agt_registry *reg)
{
    return reg ? reg->ntools : 0;
}

const char *agt_registry_name_at(const agt_registry *reg, size_t i)
{
    return (reg != NULL && i < reg->ntools) ? reg->tools[i].name : NULL;
}

int agt_registry_is_offered(const agt_registry *reg, const char *name, int phase)
{
    const agti_tool *t = agti_registry_find(reg, name);
    return t != NULL && agti_tool_offered(reg, t, phase);
}

int agt_registry_access(const agt_registry *reg, const char *name)
{
    const agti_tool *t = agti_registry_find(reg, name);
    if (t == NULL)
        return agti_error(AGT_ENOTFOUND, "no tool named '%s'", name ? name : "(null)");
    return t->access;
}
