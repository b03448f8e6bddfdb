/* Public API of the JSON Schema component: options, compile, validate. */
#include <stdlib.h>
#include <string.h>

#include "schema_internal.h"
#include "schema_priv.h"

int agt_schema_options_new(agt_schema_options **out)
{
    if (out == NULL)
        return agti_error(AGT_EINVAL, "agt_schema_options_new: out is NULL");
    *out = calloc(1, sizeof **out);
    if (*out == NULL)
        return agti_oom();
    (*out)->draft = AGT_DRAFT_AUTO;
    return AGT_OK;
}

void agt_schema_options_free(agt_schema_options *opts)
{
    if (opts == NULL)
        return;
    for (size_t i = 0; i < opts->n_res; i++) {
        free(opts->res_uris[i]);
        json_decref(opts->res_docs[i]);
    }
    free(opts->res_uris);
    free(opts->res_docs);
    free(opts);
}

int agt_schema_options_set_draft(agt_schema_options *opts, int draft)
{
    if (opts == NULL)
        return agti_error(AGT_EINVAL, "agt_schema_options_set_draft: opts is NULL");
    if (draft != AGT_DRAFT_AUTO && draft != AGT_DRAFT_4 && draft != AGT_DRAFT_6 &&
        draft != AGT_DRAFT_7 && draft != AGT_DRAFT_2019_09 && draft != AGT_DRAFT_2020_12)
        return agti_error(AGT_EINVAL,
                          "agt_schema_options_set_draft: unknown draft %d (use AGT_DRAFT_AUTO, "
                          "AGT_DRAFT_4, AGT_DRAFT_6, AGT_DRAFT_7, AGT_DRAFT_2019_09 or "
                          "AGT_DRAFT_2020_12)",
                          draft);
    opts->draft = draft;
    return AGT_OK;
}

int agt_schema_options_set_format_assertion(agt_schema_options *opts, int on)
{
    if (opts == NULL)
        return agti_error(AGT_EINVAL, "agt_schema_options_set_format_assertion: opts is NULL");
    opts->format_assert = on != 0;
    return AGT_OK;
}

int agt_schema_options_add_resource(agt_schema_options *opts, const char *uri, const char *json,
                                    size_t len)
{
    if (opts == NULL || uri == NULL || json == NULL)
        return agti_error(AGT_EINVAL, "agt_schema_options_add_resource: %s is NULL",
                          opts == NULL  ? "opts"
                          : uri == NULL ? "uri"
                                        : "json");
    if (uri[0] == '\0' || strchr(uri, '#') != NULL)
        return agti_error(AGT_EINVAL,
                          "agt_schema_options_add_resource: uri '%s' must be an absolute URI "
                          "without a fragment",
                          uri);
    json_t *doc = agti_json_parse(json, len, uri);
    if (doc == NULL)
        return agt_error_code();
    if (opts->n_res == opts->cap_res) {
        size_t nc = opts->cap_res ? opts->cap_res * 2 : 4;
        char **nu = realloc(opts->res_uris, nc * sizeof *nu);
        if (nu)
            opts->res_uris = nu;
        json_t **nd = nu ? realloc(opts->res_docs, nc * sizeof *nd) : NULL;
        if (nd == NULL) {
            json_decref(doc);
            return agti_oom();
        }
        opts->res_docs = nd;
        opts->cap_res = nc;
    }
    char *u = agti_strdup(uri);
    if (u == NULL) {
        json_decref(doc);
        return agti_oom();
    }
    opts->res_uris[opts->n_res] = u;
    opts->res_docs[opts->n_res] = doc;
    opts->n_res++;
    return AGT_OK;
}

int agt_schema_options_set_resolver(agt_schema_options *opts, agt_schema_resolve_fn fn,
                                    void *payload)
{
    if (opts == NULL)
        return agti_error(AGT_EINVAL, "agt_schema_options_set_resolver: opts is NULL");
    opts->resolver = fn;
    opts->payload = payload;
    return AGT_OK;
}

int agt_schema_resolution_provide(agt_schema_resolution *resolution, const char *json, size_t len)
{
    if (resolution == NULL || json == NULL)
        return agti_error(AGT_EINVAL, "agt_schema_resolution_provide: %s is NULL",
                          resolution == NULL ? "resolution" : "json");
    json_t *doc = agti_json_parse(json, len, "resolved document");
    if (doc == NULL)
        return agt_error_code();
    json_decref(resolution->doc);
    resolution->doc = doc;
    return AGT_OK;
}

int agt_schema_compile(agt_schema **out, const char *json, size_t len)
{
    return agt_schema_compile_with(out, json, len, NULL);
}

int agt_schema_compile_with(agt_schema **out, const char *json, size_t len,
                            const agt_schema_options *opts)
{
    if (out == NULL)
        return agti_error(AGT_EINVAL, "agt_schema_compile: out is NULL");
    *out = NULL;
    if (json == NULL)
        return agti_error(AGT_EINVAL, "agt_schema_compile: json is NULL");
    json_t *doc = agti_json_parse(json, len, "schema");
    if (doc == NULL)
        return agt_error_code();
    int rc = agti_schema_compile_json(out, doc, opts);
    json_decref(doc);
    return rc;
}

int agt_schema_validate(const agt_schema *schema, const char *instance, size_t len,
                        char **errors_json)
{
    if (errors_json)
        *errors_json = NULL;
    if (schema == NULL || instance == NULL)
        return agti_error(AGT_EINVAL, "agt_schema_validate: %s is NULL",
                          schema == NULL ? "schema" : "instance");
    _Alignas(16) char first[8192];
    agti_jarena a;
    agti_jarena_init(&a, first, sizeof first);
    const agti_jv *inst = agti_jv_parse(&a, instance, len, "instance");
    if (inst == NULL) {
        agti_jarena_free(&a);
        return agt_error_code();
    }
    json_t *errors = NULL;
    int rc = agti_schema_validate_jv(schema, inst, errors_json ? &errors : NULL);
    agti_jarena_free(&a);
    if (rc == AGT_EINVALID && errors_json && errors) {
        *errors_json = agti_json_dump(errors);
        if (*errors_json == NULL) {
            json_decref(errors);
            return agti_oom();
        }
    }
    json_decref(errors);
    return rc;
}

void agt_schema_free(agt_schema *schema)
{
    agti_schema_destroy(schema);
}
