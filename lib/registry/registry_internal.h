/* Internal view of the tool registry, for the dispatcher and providers. */
#ifndef AGT_LIB_REGISTRY_INTERNAL_H
#define AGT_LIB_REGISTRY_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>

#include "agenttools/registry.h"
#include "agenttools/schema.h"

/* A built-in provider, implemented in lib/tools/ (the table lives there so the
 * registry does not depend on the providers' code, only on their names). */
typedef struct agti_builtin_provider {
    const char *name;
    agt_provider_fn fn;
} agti_builtin_provider;

extern const agti_builtin_provider agti_builtin_providers[];
extern const size_t agti_builtin_provider_count;

/* The built-in provider behind a tool or provider name, or NULL. */
agt_provider_fn agti_builtin_provider_find(const char *name);

typedef struct agti_tool {
    char *name;
    char *provider;    /* provider name: "provider" field, default = name */
    char *description; /* definition.description */
    json_t *entry;     /* the whole tools.json entry, as loaded (owned) */
    agt_schema *schema;
    bool plan_task;
    bool main_task;
    int access; /* AGT_ACCESS_* */
} agti_tool;

typedef struct agti_host_provider {
    char *name;
    agt_provider_fn fn;
    void *payload;
} agti_host_provider;

struct agt_registry {
    agti_tool *tools;
    size_t ntools;
    size_t cap; /* allocated entries in tools */
    agti_host_provider *hosts;
    size_t nhosts;
    bool frozen;
};

/* The entry named `name`, or NULL. */
const agti_tool *agti_registry_find(const agt_registry *reg, const char *name);

/* The provider that runs tool `t`: a host provider for its name, else a host
 * provider for its provider name, else the built-in provider of its provider
 * name. Returns false when there is none. */
bool agti_registry_provider(const agt_registry *reg, const agti_tool *t, agt_provider_fn *fn,
                            void **payload);

/* Whether `t` is offered in `phase` (has a provider and the phase flag). */
bool agti_tool_offered(const agt_registry *reg, const agti_tool *t, int phase);

#endif
