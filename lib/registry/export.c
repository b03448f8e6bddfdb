#include <ctype.h>
#include <stdlib.h>
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

/*
 * A title from a tool name: words split at '_', '-' and case changes
 * ("ReadMediaFile" -> "Read media file", "code_search" -> "Code search",
 * "FetchURL" -> "Fetch URL"); a run of capitals stays one word as it is.
 */
static char *title_of(const char *name)
{
    size_t n = strlen(name);
    char *out = malloc(n * 2 + 1);
    if (out == NULL)
        return NULL;
    size_t o = 0;
    int words = 0;
    for (size_t i = 0; i < n;) {
        while (i < n && (name[i] == '_' || name[i] == '-'))
            i++;
        if (i >= n)
            break;
        size_t j = i + 1;
        int upper_run = isupper((unsigned char)name[i]) && j < n && isupper((unsigned char)name[j]);
        if (upper_run) {
            /* "URLParser": "URL", then "Parser" */
            while (j < n && isupper((unsigned char)name[j]) &&
                   !(j + 1 < n && islower((unsigned char)name[j + 1])))
                j++;
        } else {
            while (j < n && name[j] != '_' && name[j] != '-' && !isupper((unsigned char)name[j]))
                j++;
        }
        if (words++ > 0)
            out[o++] = ' ';
        for (size_t k = i; k < j; k++) {
            char ch = name[k];
            if (!upper_run)
                ch = (char)(k == i && words == 1 ? toupper((unsigned char)ch)
                                                 : tolower((unsigned char)ch));
            out[o++] = ch;
        }
        i = j;
    }
    out[o] = '\0';
    return out;
}

/*
 * MCP tool annotations from the access class: reads neither change nor
 * reach outside the workspace; writes change files (may overwrite: destructive,
 * not idempotent); commands can do anything (destructive, open world);
 * network tools read the open world. Host tools: only the title (the host
 * knows what they do; MCP's defaults apply).
 */
static json_t *mcp_annotations(const agti_tool *t)
{
    char *title = title_of(t->name);
    if (title == NULL)
        return NULL;
    json_t *a = json_pack("{s:s}", "title", title);
    free(title);
    if (a == NULL)
        return NULL;
    int ro, destructive, idempotent, open_world;
    switch (t->access) {
    case AGT_ACCESS_READ:
        ro = 1, destructive = 0, idempotent = 1, open_world = 0;
        break;
    case AGT_ACCESS_WRITE:
        ro = 0, destructive = 1, idempotent = 0, open_world = 0;
        break;
    case AGT_ACCESS_EXECUTE:
        ro = 0, destructive = 1, idempotent = 0, open_world = 1;
        break;
    case AGT_ACCESS_NETWORK:
        ro = 1, destructive = 0, idempotent = 0, open_world = 1;
        break;
    default:
        return a;
    }
    if (json_object_set_new(a, "readOnlyHint", json_boolean(ro)) != 0 ||
        json_object_set_new(a, "destructiveHint", json_boolean(destructive)) != 0 ||
        json_object_set_new(a, "idempotentHint", json_boolean(idempotent)) != 0 ||
        json_object_set_new(a, "openWorldHint", json_boolean(open_world)) != 0) {
        json_decref(a);
        return NULL;
    }
    return a;
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
    case FMT_MCP: {
        json_t *ann = mcp_annotations(t);
        if (ann == NULL) {
            json_decref(params);
            return NULL;
        }
        return json_pack("{s:s, s:s, s:o, s:o}", "name", t->name, "description", t->description,
                         "inputSchema", params, "annotations", ann);
    }
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
