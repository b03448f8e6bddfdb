/*
 * Shared configuration of the example CLIs (agt-review, agt-chat): which
 * model endpoint to talk to, resolved from the command line, a JSON config
 * file and the environment. Keys are held here but never printed.
 */
#ifndef CLI_CONFIG_H
#define CLI_CONFIG_H

#include <stddef.h>

enum cli_protocol { CLI_PROTO_OPENAI = 0, CLI_PROTO_ANTHROPIC = 1 };

typedef struct cli_config {
    /* As given on the command line (NULL when not given). */
    const char *opt_base_url;
    const char *opt_model;
    const char *opt_protocol;
    const char *opt_provider;
    const char *opt_config;
    int opt_show; /* --show-config: print the resolved endpoint and exit */
    /* A model name from the repository (agt-review's .agenttools/review.json):
       after --model, before the provider's; alone it configures nothing. */
    const char *repo_model;
    /* Resolved by cli_config_resolve(); owned by the struct. */
    char *base_url;
    char *model;       /* model name sent to the server */
    char *replay_path; /* set for --model replay:FILE */
    char *api_key;
    char *provider;   /* provider name from the config file, or NULL */
    char *key_source; /* where the key came from ("AGT_API_KEY", "config file", ...) */
    int protocol;
    int configured; /* 1: a model is set up; 0: nothing configured at all */
    /* Request settings of the provider entry (config file only). */
    long long max_tokens; /* 0: none */
    int max_tokens_field; /* 0: "max_tokens", 1: "max_completion_tokens" */
    char *extra_body;     /* JSON object text, or NULL */
    char *extra_headers;  /* JSON object text {"Name": "value"}, or NULL; never printed */
    /* The provider's prices in currency units per million tokens; -1 unset. */
    double price_input, price_output;
    /* The file's "permissions" {"allow","ask","deny"} as JSON text, and the
       file it came from; NULL when the file has none. */
    char *permissions;
    char *config_path;
} cli_config;

/* Help text for the options below (for usage()). */
extern const char cli_config_usage[];

/*
 * Consumes one configuration option at argv[*i] (--base-url, --model,
 * --protocol, --provider, --config, with its value as the next argument or
 * after '='). Returns 1 when consumed (and advances *i past the value), 0
 * when argv[*i] is not one of them, -1 on a missing value (err filled).
 */
int cli_config_take_arg(cli_config *cfg, int argc, char **argv, int *i, char *err, size_t errlen);

/*
 * Resolves the settings: command line, then the config file's provider, then
 * the environment. Returns 0 (cfg->configured says whether a model is set up)
 * or -1 with a one-line message in err saying which setting is wrong and how
 * to set it.
 */
int cli_config_resolve(cli_config *cfg, char *err, size_t errlen);

/* A one-line description of the endpoint for progress output (no key). */
void cli_config_describe(const cli_config *cfg, char *buf, size_t len);

/* The config file path that is read ($XDG_CONFIG_HOME or ~/.config). */
int cli_config_file_path(char *buf, size_t len);

void cli_config_free(cli_config *cfg);

#endif
