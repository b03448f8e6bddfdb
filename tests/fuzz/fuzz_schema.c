/*
 * libFuzzer target for the JSON Schema compiler and validator.
 * Input: schema '\0' instance ['\0' flags]. flags bit 0: draft-07 as the
 * default draft (else 2020-12), bit 1: format as an assertion, bit 2: a
 * resolver answers every remote "$ref" with the instance text (at most 4
 * times), bit 3: the instance is also registered as the resource
 * "http://localhost:1234/i.json".
 * Invariants: the instance gives the same verdict through the text path
 * (agt_schema_validate, with and without the error list) and the jansson
 * path (agti_schema_validate_json) whenever jansson reads it too; an
 * invalid instance with a list has a non-empty JSON array of violations,
 * a valid one none.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agenttools/agenttools.h"
#include "schema/schema_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct res {
    const char *text;
    size_t len;
    int calls;
} res;

static int resolve(const char *uri, agt_schema_resolution *r, void *payload)
{
    res *x = payload;
    (void)uri;
    if (x->calls++ >= 4)
        return 0;
    agt_schema_resolution_provide(r, x->text, x->len);
    return 0;
}

/* Whether every number in text reads the same as a double: no '.', 'e' or
 * 'E' and no run of more than 15 digits (a rough, safe over-approximation
 * over the whole text, strings included). */
static int exact_in_doubles(const char *text, size_t len)
{
    size_t run = 0;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (c == '.' || c == 'e' || c == 'E')
            return 0;
        run = c >= '0' && c <= '9' ? run + 1 : 0;
        if (run > 15)
            return 0;
    }
    return 1;
}

static int verdict(int rc)
{
    if (rc != AGT_OK && rc != AGT_EINVALID && rc != AGT_ENOMEM)
        abort();
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 16384)
        return 0;
    const char *d = (const char *)data;
    const char *z = memchr(d, '\0', size);
    size_t slen = z ? (size_t)(z - d) : size;
    const char *inst = z ? z + 1 : d + size;
    size_t rest = size - (size_t)(inst - d);
    const char *z2 = memchr(inst, '\0', rest);
    size_t ilen = z2 ? (size_t)(z2 - inst) : rest;
    unsigned flags = z2 && (size_t)(z2 - inst) + 1 < rest ? (unsigned char)z2[1] : 0;

    agt_schema_options *o = NULL;
    if (agt_schema_options_new(&o) != AGT_OK)
        return 0;
    agt_schema_options_set_draft(o, flags & 1 ? AGT_DRAFT_7 : AGT_DRAFT_2020_12);
    agt_schema_options_set_format_assertion(o, (flags & 2) != 0);
    res r = {inst, ilen, 0};
    if (flags & 4)
        agt_schema_options_set_resolver(o, resolve, &r);
    if (flags & 8)
        agt_schema_options_add_resource(o, "http://localhost:1234/i.json", inst, ilen);

    agt_schema *s = NULL;
    int rc = agt_schema_compile_with(&s, d, slen, o);
    agt_schema_options_free(o);
    if (rc != AGT_OK) {
        if (s != NULL || agt_error_message() == NULL || !*agt_error_message())
            abort();
        return 0;
    }
    char *errs = NULL;
    int v1 = agt_schema_validate(s, inst, ilen, &errs);
    if (v1 == AGT_EPARSE) {
        if (errs != NULL)
            abort();
    } else {
        verdict(v1);
        int v2 = verdict(agt_schema_validate(s, inst, ilen, NULL));
        if (v1 != AGT_ENOMEM && v2 != AGT_ENOMEM && v1 != v2)
            abort();
        if (v1 == AGT_EINVALID) {
            json_t *e = errs ? json_loads(errs, 0, NULL) : NULL;
            if (!json_is_array(e) || json_array_size(e) == 0)
                abort();
            json_decref(e);
        } else if (errs != NULL) {
            abort();
        }
        /* The jansson path reads numbers as doubles; the text path keeps the
         * written value (big integers, decimals compared exactly). They can
         * agree only when no fraction, exponent or long digit run is there. */
        json_t *j = exact_in_doubles(d, slen) && exact_in_doubles(inst, ilen)
                        ? json_loadb(inst, ilen, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL)
                        : NULL;
        if (j != NULL) {
            json_t *je = NULL;
            int v3 = verdict(agti_schema_validate_json(s, j, &je));
            int v4 = verdict(agti_schema_validate_json(s, j, NULL));
            if (v1 != AGT_ENOMEM && v3 != AGT_ENOMEM && v1 != v3)
                abort();
            if (v3 != AGT_ENOMEM && v4 != AGT_ENOMEM && v3 != v4)
                abort();
            if ((v3 == AGT_EINVALID) != (je != NULL && json_array_size(je) > 0))
                abort();
            json_decref(je);
            json_decref(j);
        }
    }
    agt_free(errs);
    agt_schema_free(s);
    return 0;
}
