#include <string.h>

#include "core/core.h"
#include "registry_internal.h"

enum export_format { FMT_OPENAI, FMT_ANTHROPIC, FMT_MCP, FMT_NATIVE };

static json_t *tool_parameters(const agti_tool *t)
{
    json_t *p = json_object_get(json_object_get(t->entry, "definition"), "parameters");
    /* a copy, not a new reference: a frozen registry is read by many
     * threads, and a reference count change is a write */
    if (p != NULL)
        return json_deep_copy(p);
    /* a tool without parameters takes an empty object */
    return json_pack("{s:s, s:{}}", "type", "object", "properties");
}

static json_t *export_one(const agti_tool *t, enum export_format fmt)
{
    json_t *params = tool_parameters(t);
    if (params == NULL)
        return NULL;
    switch (fmt) {
    case FMT_OPENAI:
        return json_pack("{s:s, s:{s:s, s:s, s:o}}", "type", "function", "function", "name",
                         t->name, "description", t->description, "parameters", params);
    case FMT_ANTHROPIC:
        return json_pack("{s:s, s:s, s:o}", "name", t->name, "description", t->description,
                         "input_schema", params);
    case FMT_MCP:
        return json_pack("{s:s, s:s, s:o}", "name", t->name, "description", t->description,
                         "inputSchema", params);
    case FMT_NATIVE:
        json_decref(params);
        return json_deep_copy(t->entry);
    }
    json_decref(params);
    return NULL;
}

int agt_registry_export(const agt_registry *reg, const char *format, int phase, char **out_json)
{
    if (out_json != NULL)
        *out_json = NULL;
    if (reg == NULL || format == NULL || out_json == NULL)
        return agti_error(AGT_EINVAL, "agt_registry_export: %s",
                          reg == NULL ? "the registry is NULL"
                          : format == NULL
                              ? "format is NULL (pass \"openai\", \"anthropic\", \"mcp\" or "
                                "\"native\")"
                              : "out_json is NULL");
    if (phase != AGT_PHASE_ALL && phase != AGT_PHASE_PLAN && phase != AGT_PHASE_MAIN)
        return agti_error(AGT_EINVAL,
                          "agt_registry_export: unknown phase %d (pass AGT_PHASE_ALL, "
                          "AGT_PHASE_PLAN or AGT_PHASE_MAIN)",
                          phase);
    enum export_format fmt;
    if (strcmp(format, "openai") == 0)
        fmt = FMT_OPENAI;
    else if (strcmp(format, "anthropic") == 0)
        fmt = FMT_ANTHROPIC;
    else if (strcmp(format, "mcp") == 0)
        fmt = FMT_MCP;
    else if (strcmp(format, "native") == 0)
        fmt = FMT_NATIVE;
    else
        return agti_error(AGT_ENOTFOUND,
                          "unknown export format '%s' (expected openai, anthropic, mcp or native)",
                          format);
    json_t *arr = json_array();
    if (arr == NULL)
        return agti_oom();
    for (size_t i = 0; i < reg->ntools; i++) {
        const agti_tool *t = &reg->tools[i];
        if (!agti_tool_offered(reg, t, phase))
            continue;
        if (json_array_append_new(arr, export_one(t, fmt)) != 0) {
            json_decref(arr);
            return agti_oom();
        }
    }
    json_t *doc = arr;
    if (fmt == FMT_MCP) {
        doc = json_pack("{s:o}", "tools", arr);
        if (doc == NULL)
            return agti_oom();
    }
    *out_json = agti_json_dump(doc);
    json_decref(doc);
    return *out_json ? AGT_OK : agti_oom();
}
