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
    /* definition.parameters compiled; read it with agti_tool_schema(). A
     * built-in entry's schema is compiled on its first use (lazy): the
     * catalogue's schemas are known good (tests/unit/registry/
     * test_builtin_json.c compiles each), and compiling the 25 of the chat
     * set was 17% of a process's start-up. A host entry's is compiled at
     * load, so a bad schema is reported there. */
    agt_schema *schema;
    bool lazy; /* schema not compiled yet (built-in entry with parameters) */
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

/* The compiled argument schema of `t` (NULL when it has none), compiling a
 * built-in one on first use; safe from several threads. AGT_OK, or
 * AGT_ENOMEM (the error is set). */
int agti_tool_schema(const agti_tool *t, const agt_schema **out);

/* Whether `t` is offered in `phase` (has a provider and the phase flag). */
bool agti_tool_offered(const agt_registry *reg, const agti_tool *t, int phase);

#endif
