/*
 * Endpoint configuration shared by the example CLIs. Order of precedence for
 * every setting: command line, then the chosen provider of the config file,
 * then the environment.
 */
#include "cli_config.h"
#include "cli_schema.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char cli_config_usage[] =
    "model endpoint (shared by agt-review and agt-chat):\n"
    "  --model NAME        model name sent to the server; replay:FILE answers from a JSONL file\n"
    "  --base-url URL      endpoint base URL (e.g. http://127.0.0.1:11434/v1)\n"
    "  --protocol P        openai (Chat Completions, default) or anthropic (Messages)\n"
    "  --provider NAME     a named provider of the config file\n"
    "  --config FILE       config file (default $XDG_CONFIG_HOME/agenttools/config.json)\n"
    "  --show-config       print the endpoint these settings resolve to (never the key), exit\n"
    "  keys come from the environment: AGT_API_KEY, else OPENAI_API_KEY, ANTHROPIC_API_KEY\n"
    "  or KIMI_API_KEY (with OPENAI_BASE_URL, ANTHROPIC_BASE_URL, KIMI_BASE_URL), or from\n"
    "  the provider's \"api_key_env\" in the config file; AGT_MODEL sets a default model.\n";

static void set_err(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
}

static const char *env_nonempty(const char *name)
{
    const char *v = getenv(name);
    return (v != NULL && v[0] != '\0') ? v : NULL;
}

int cli_config_take_arg(cli_config *cfg, int argc, char **argv, int *i, char *err, size_t errlen)
{
    static const char *names[] = {"--base-url", "--model", "--protocol", "--provider", "--config"};
    const char **slots[] = {&cfg->opt_base_url, &cfg->opt_model, &cfg->opt_protocol,
                            &cfg->opt_provider, &cfg->opt_config};
    const char *arg = argv[*i];
    if (strcmp(arg, "--show-config") == 0) {
        cfg->opt_show = 1;
        return 1;
    }
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        size_t n = strlen(names[k]);
        if (strncmp(arg, names[k], n) != 0)
            continue;
        if (arg[n] == '=') {
            *slots[k] = arg + n + 1;
            return 1;
        }
        if (arg[n] != '\0')
            continue;
        if (*i + 1 >= argc) {
            set_err(err, errlen, "%s needs a value", names[k]);
            return -1;
        }
        *i += 1;
        *slots[k] = argv[*i];
        return 1;
    }
    return 0;
}

int cli_config_file_path(char *buf, size_t len)
{
    const char *xdg = env_nonempty("XDG_CONFIG_HOME");
    int n;
    if (xdg != NULL) {
        n = snprintf(buf, len, "%s/agenttools/config.json", xdg);
    } else {
        const char *home = env_nonempty("HOME");
        if (home == NULL)
            return -1;
        n = snprintf(buf, len, "%s/.config/agenttools/config.json", home);
    }
    return (n < 0 || (size_t)n >= len) ? -1 : 0;
}

static int parse_protocol(const char *s, int *out)
{
    if (strcmp(s, "openai") == 0)
        *out = CLI_PROTO_OPENAI;
    else if (strcmp(s, "anthropic") == 0)
        *out = CLI_PROTO_ANTHROPIC;
    else
        return -1;
    return 0;
}

/* Loads the config file; *root stays NULL when the default file is absent. */
static int load_file(const cli_config *cfg, json_t **root, char *path, size_t pathlen, char *err,
                     size_t errlen)
{
    struct stat st;
    *root = NULL;
    if (cfg->opt_config != NULL) {
        snprintf(path, pathlen, "%s", cfg->opt_config);
        if (stat(path, &st) != 0) {
            set_err(err, errlen, "config file %s does not exist (--config)", path);
            return -1;
        }
    } else if (cli_config_file_path(path, pathlen) != 0 || stat(path, &st) != 0) {
        return 0;
    }
    json_error_t je;
    *root = json_load_file(path, 0, &je);
    if (*root == NULL) {
        set_err(err, errlen, "config file %s: line %d: %s", path, je.line, je.text);
        return -1;
    }
    if (!json_is_object(*root)) {
        set_err(err, errlen, "config file %s: the top level must be a JSON object", path);
        json_decref(*root);
        *root = NULL;
        return -1;
    }
    /* Every key and type against examples/common/cli-config.schema.json, so a
       misspelt key ("modle") is an error naming it rather than ignored. */
    char *text = json_dumps(*root, JSON_COMPACT);
    char what[4200];
    snprintf(what, sizeof what, "config file %s", path);
    int bad = text == NULL || cli_schema_check(cli_config_schema_json, cli_config_schema_json_len,
                                               text, strlen(text), what, err, errlen) != 0;
    free(text);
    if (bad) {
        json_decref(*root);
        *root = NULL;
        return -1;
    }
    return 0;
}

/* A string member of a provider entry, or NULL; -1 when present but not a string. */
static int member_str(json_t *obj, const char *key, const char **out)
{
    json_t *v = obj != NULL ? json_object_get(obj, key) : NULL;
    *out = NULL;
    if (v == NULL || json_is_null(v))
        return 0;
    if (!json_is_string(v))
        return -1;
    *out = json_string_value(v);
    if ((*out)[0] == '\0')
        *out = NULL;
    return 0;
}

static int pick_provider(cli_config *cfg, json_t *root, const char *path, json_t **prov, char *err,
                         size_t errlen)
{
    const char *name = cfg->opt_provider;
    json_t *providers = root != NULL ? json_object_get(root, "providers") : NULL;
    *prov = NULL;
    if (name == NULL && root != NULL) {
        json_t *d = json_object_get(root, "default");
        if (d != NULL && !json_is_string(d)) {
            set_err(err, errlen, "config file %s: \"default\" must be a provider name (string)",
                    path);
            return -1;
        }
        name = d != NULL ? json_string_value(d) : NULL;
    }
    if (name == NULL)
        return 0;
    if (root == NULL) {
        set_err(err, errlen,
                "--provider %s: no config file (create %s with {\"providers\":{\"%s\":{...}}})",
                name, path, name);
        return -1;
    }
    if (providers != NULL && !json_is_object(providers)) {
        set_err(err, errlen, "config file %s: \"providers\" must be an object", path);
        return -1;
    }
    *prov = providers != NULL ? json_object_get(providers, name) : NULL;
    if (*prov == NULL || !json_is_object(*prov)) {
        set_err(err, errlen, "provider \"%s\" is not defined in %s (add it under \"providers\")",
                name, path);
        return -1;
    }
    cfg->provider = strdup(name);
    return 0;
}

/* Key families of the environment, tried in this order. */
static const struct {
    const char *key;
    const char *base;
    int protocol; /* -1: any */
    const char *default_base;
} env_families[] = {
    {"AGT_API_KEY", "AGT_BASE_URL", -1, NULL},
    {"OPENAI_API_KEY", "OPENAI_BASE_URL", CLI_PROTO_OPENAI, "https://api.openai.com/v1"},
    {"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", CLI_PROTO_ANTHROPIC,
     "https://api.anthropic.com/v1"},
    {"KIMI_API_KEY", "KIMI_BASE_URL", CLI_PROTO_OPENAI, "https://api.moonshot.ai/v1"},
};

static int is_local_url(const char *url)
{
    const char *p = strstr(url, "://");
    p = p != NULL ? p + 3 : url;
    return strncmp(p, "127.", 4) == 0 || strncmp(p, "localhost", 9) == 0 ||
           strncmp(p, "[::1]", 5) == 0 || strncmp(p, "0.0.0.0", 7) == 0;
}

static int resolve_provider_fields(cli_config *cfg, json_t *prov, const char *path,
                                   const char **base, const char **model, const char **proto,
                                   const char **key, const char **key_env, char *err, size_t errlen)
{
    static const char *fields[] = {"base_url", "model", "protocol", "api_key", "api_key_env"};
    const char **outs[] = {base, model, proto, key, key_env};
    for (size_t k = 0; k < 5; k++) {
        if (member_str(prov, fields[k], outs[k]) != 0) {
            set_err(err, errlen, "config file %s: provider \"%s\": \"%s\" must be a string", path,
                    cfg->provider, fields[k]);
            return -1;
        }
    }
    return 0;
}

/* max_tokens, max_tokens_field, extra_body and headers of a provider entry
   (their types are checked by the schema already). */
static int resolve_request_fields(cli_config *cfg, json_t *prov)
{
    json_t *v = json_object_get(prov, "max_tokens");
    if (json_is_integer(v))
        cfg->max_tokens = json_integer_value(v);
    v = json_object_get(prov, "max_tokens_field");
    cfg->max_tokens_field =
        json_is_string(v) && strcmp(json_string_value(v), "max_completion_tokens") == 0;
    v = json_object_get(prov, "extra_body");
    if (json_is_object(v) && (cfg->extra_body = json_dumps(v, JSON_COMPACT)) == NULL)
        return -1;
    v = json_object_get(prov, "headers");
    if (json_is_object(v) && (cfg->extra_headers = json_dumps(v, JSON_COMPACT)) == NULL)
        return -1;
    v = json_object_get(prov, "prices");
    cfg->price_input = json_is_number(json_object_get(v, "input_per_mtok"))
                           ? json_number_value(json_object_get(v, "input_per_mtok"))
                           : -1;
    cfg->price_output = json_is_number(json_object_get(v, "output_per_mtok"))
                            ? json_number_value(json_object_get(v, "output_per_mtok"))
                            : -1;
    return 0;
}

static int resolve_key(cli_config *cfg, const char *p_key, const char *p_key_env, int proto_fixed,
                       const char **env_base, char *err, size_t errlen)
{
    *env_base = NULL;
    if (p_key_env != NULL) {
        const char *v = env_nonempty(p_key_env);
        if (v == NULL) {
            set_err(err, errlen,
                    "provider \"%s\" reads its key from $%s, which is not set (export %s=...)",
                    cfg->provider, p_key_env, p_key_env);
            return -1;
        }
        cfg->api_key = strdup(v);
        cfg->key_source = strdup(p_key_env);
        return 0;
    }
    if (p_key != NULL) {
        cfg->api_key = strdup(p_key);
        cfg->key_source = strdup("config file");
        return 0;
    }
    for (size_t k = 0; k < sizeof env_families / sizeof env_families[0]; k++) {
        const char *v = env_nonempty(env_families[k].key);
        if (v == NULL)
            continue;
        if (proto_fixed && env_families[k].protocol >= 0 &&
            env_families[k].protocol != cfg->protocol)
            continue;
        cfg->api_key = strdup(v);
        cfg->key_source = strdup(env_families[k].key);
        if (env_families[k].protocol >= 0)
            cfg->protocol = env_families[k].protocol;
        *env_base = env_nonempty(env_families[k].base);
        if (*env_base == NULL)
            *env_base = env_families[k].default_base;
        return 0;
    }
    (void)err;
    (void)errlen;
    return 0;
}

int cli_config_resolve(cli_config *cfg, char *err, size_t errlen)
{
    char path[4096] = "";
    json_t *root = NULL, *prov = NULL;
    const char *p_base = NULL, *p_model = NULL, *p_proto = NULL, *p_key = NULL, *p_key_env = NULL;
    const char *env_base = NULL;
    int rc = -1, proto_fixed = 0;

    cfg->price_input = cfg->price_output = -1;
    if (load_file(cfg, &root, path, sizeof path, err, errlen) != 0)
        return -1;
    json_t *perm = root != NULL ? json_object_get(root, "permissions") : NULL;
    if (perm != NULL) {
        cfg->permissions = json_dumps(perm, JSON_COMPACT);
        cfg->config_path = strdup(path);
        if (cfg->permissions == NULL || cfg->config_path == NULL) {
            set_err(err, errlen, "out of memory");
            goto done;
        }
    }
    if (pick_provider(cfg, root, path, &prov, err, errlen) != 0)
        goto done;
    if (prov != NULL && resolve_provider_fields(cfg, prov, path, &p_base, &p_model, &p_proto,
                                                &p_key, &p_key_env, err, errlen) != 0)
        goto done;
    if (prov != NULL && resolve_request_fields(cfg, prov) != 0) {
        set_err(err, errlen, "out of memory");
        goto done;
    }

    cfg->protocol = CLI_PROTO_OPENAI;
    const char *proto = cfg->opt_protocol != NULL ? cfg->opt_protocol : p_proto;
    if (proto == NULL)
        proto = env_nonempty("AGT_PROTOCOL");
    if (proto != NULL) {
        if (parse_protocol(proto, &cfg->protocol) != 0) {
            set_err(err, errlen,
                    "unknown protocol \"%s\": use --protocol openai or --protocol anthropic",
                    proto);
            goto done;
        }
        proto_fixed = 1;
    }

    const char *model = cfg->opt_model != NULL ? cfg->opt_model : cfg->repo_model;
    if (model == NULL)
        model = p_model;
    if (model == NULL)
        model = env_nonempty("AGT_MODEL");
    int repo_model_only = model != NULL && model == cfg->repo_model && p_model == NULL &&
                          env_nonempty("AGT_MODEL") == NULL;
    if (model != NULL && model != cfg->repo_model && strncmp(model, "replay:", 7) == 0) {
        if (model[7] == '\0') {
            set_err(err, errlen, "--model replay:FILE needs a file name after \"replay:\"");
            goto done;
        }
        cfg->replay_path = strdup(model + 7);
        cfg->model = strdup("replay");
        cfg->configured = 1;
        rc = 0;
        goto done;
    }

    if (resolve_key(cfg, p_key, p_key_env, proto_fixed, &env_base, err, errlen) != 0)
        goto done;

    const char *base = cfg->opt_base_url != NULL ? cfg->opt_base_url : p_base;
    if (base == NULL)
        base = env_base;
    /* the repository's model name alone does not turn the preview into a
       review: an endpoint or a key must be there too */
    cfg->configured = (model != NULL && (!repo_model_only || cfg->api_key != NULL)) ||
                      cfg->opt_base_url != NULL || prov != NULL;
    if (!cfg->configured) {
        rc = 0;
        goto done;
    }
    if (model == NULL) {
        if (prov != NULL)
            set_err(err, errlen,
                    "no model name: add \"model\" to provider \"%s\" in %s, or pass --model NAME",
                    cfg->provider, path);
        else
            set_err(err, errlen, "no model name: pass --model NAME or set AGT_MODEL");
        goto done;
    }
    if (base == NULL)
        base = cfg->protocol == CLI_PROTO_ANTHROPIC ? "https://api.anthropic.com/v1"
                                                    : "https://api.openai.com/v1";
    if (strncmp(base, "http://", 7) != 0 && strncmp(base, "https://", 8) != 0) {
        set_err(err, errlen, "base URL \"%s\" must start with http:// or https:// (--base-url)",
                base);
        goto done;
    }
    if (cfg->api_key == NULL && !is_local_url(base)) {
        set_err(err, errlen,
                "no API key for %s: export AGT_API_KEY (or OPENAI_API_KEY, ANTHROPIC_API_KEY, "
                "KIMI_API_KEY), or set \"api_key_env\" for the provider in the config file",
                base);
        goto done;
    }
    cfg->model = strdup(model);
    cfg->base_url = strdup(base);
    rc = 0;
done:
    json_decref(root);
    return rc;
}

void cli_config_describe(const cli_config *cfg, char *buf, size_t len)
{
    if (!cfg->configured)
        snprintf(buf, len, "no model configured");
    else if (cfg->replay_path != NULL)
        snprintf(buf, len, "replay model %s", cfg->replay_path);
    else {
        char extra[128] = "";
        if (cfg->max_tokens > 0)
            snprintf(extra, sizeof extra, ", %s %lld",
                     cfg->max_tokens_field ? "max_completion_tokens" : "max_tokens",
                     cfg->max_tokens);
        if (cfg->extra_body != NULL)
            strncat(extra, ", extra body fields", sizeof extra - strlen(extra) - 1);
        if (cfg->extra_headers != NULL)
            strncat(extra, ", extra headers", sizeof extra - strlen(extra) - 1);
        snprintf(buf, len, "%s at %s (%s protocol%s%s%s%s%s)", cfg->model, cfg->base_url,
                 cfg->protocol == CLI_PROTO_ANTHROPIC ? "anthropic" : "openai",
                 cfg->key_source != NULL ? ", key from " : ", no key",
                 cfg->key_source != NULL ? cfg->key_source : "",
                 cfg->provider != NULL ? ", provider " : "",
                 cfg->provider != NULL ? cfg->provider : "", extra);
    }
}

void cli_config_free(cli_config *cfg)
{
    if (cfg == NULL)
        return;
    free(cfg->base_url);
    free(cfg->model);
    free(cfg->replay_path);
    if (cfg->api_key != NULL)
        memset(cfg->api_key, 0, strlen(cfg->api_key));
    free(cfg->api_key);
    free(cfg->provider);
    free(cfg->key_source);
    free(cfg->extra_body);
    free(cfg->permissions);
    free(cfg->config_path);
    if (cfg->extra_headers != NULL)
        memset(cfg->extra_headers, 0, strlen(cfg->extra_headers));
    free(cfg->extra_headers);
    memset(cfg, 0, sizeof *cfg);
}
