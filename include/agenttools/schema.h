/*
 * libagenttools — JSON Schema: compile a schema once, validate many instances.
 *
 * Follows JSON Schema drafts 4, 6, 7, 2019-09 and 2020-12 (core, applicator,
 * validation, unevaluated, format and content vocabularies), each with its
 * own keywords: draft 4's "id" and boolean exclusiveMaximum/Minimum,
 * $recursiveRef/$recursiveAnchor in 2019-09, $dynamicRef/$dynamicAnchor in
 * 2020-12; "$vocabulary" of a custom meta-schema is honoured. "format" is an
 * annotation unless assertion is switched on with
 * agt_schema_options_set_format_assertion() (or by a format-assertion
 * vocabulary). Remote references are never fetched: register documents with
 * agt_schema_options_add_resource() or answer them from a resolver callback.
 *
 * Semantics worth knowing: 1.0 is an integer (not in draft 4); "pattern" and
 * "patternProperties" are unanchored ECMA-262 searches (PCRE2);
 * string lengths count Unicode code points; "enum", "const" and
 * "uniqueItems" compare numbers by value (1 == 1.0).
 */
#ifndef AGENTTOOLS_SCHEMA_H
#define AGENTTOOLS_SCHEMA_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A compiled schema. Immutable once compiled: may be shared across threads. */
typedef struct agt_schema agt_schema;

/** Compile-time settings (opaque). */
typedef struct agt_schema_options agt_schema_options;

/** Drafts. Append-only. */
enum agt_schema_draft {
    AGT_DRAFT_AUTO = 0,       /**< from "$schema"; draft 2020-12 when absent */
    AGT_DRAFT_7 = 7,          /**< draft-07 */
    AGT_DRAFT_2020_12 = 2020, /**< draft 2020-12 */
    AGT_DRAFT_4 = 4,          /**< draft-04 */
    AGT_DRAFT_6 = 6,          /**< draft-06 */
    AGT_DRAFT_2019_09 = 2019  /**< draft 2019-09 */
};

/** Handle given to a resolver callback so it can answer with a document. */
typedef struct agt_schema_resolution agt_schema_resolution;

/**
 * Resolver callback: called during compilation for an absolute URI (without
 * fragment) that no registered resource and no "$id" in the schema provides.
 * To answer, call agt_schema_resolution_provide() and return 0. Return 0 without
 * providing to say "unknown" (compilation then fails with AGT_ENOTFOUND naming
 * the URI); return non-zero to cancel compilation (AGT_ECANCELLED).
 */
typedef int (*agt_schema_resolve_fn)(const char *uri, agt_schema_resolution *resolution,
                                     void *payload);

/**
 * Creates compile options with the defaults: draft from "$schema", format as
 * annotation only, no resources, no resolver.
 *
 * @param out receives the options; free with agt_schema_options_free().
 * @return AGT_OK, AGT_EINVAL (out is NULL), AGT_ENOMEM.
 */
AGT_EXTERN int agt_schema_options_new(agt_schema_options **out);

/** Frees options; NULL is a no-op. */
AGT_EXTERN void agt_schema_options_free(agt_schema_options *opts);

/**
 * Sets the draft used when the schema has no "$schema" (AGT_DRAFT_AUTO:
 * 2020-12): AGT_DRAFT_4, AGT_DRAFT_6, AGT_DRAFT_7, AGT_DRAFT_2019_09 or
 * AGT_DRAFT_2020_12. A "$schema" in the schema wins.
 *
 * @return AGT_OK, AGT_EINVAL for an unknown draft value.
 */
AGT_EXTERN int agt_schema_options_set_draft(agt_schema_options *opts, int draft);

/**
 * Turns "format" into an assertion (on != 0) for every format of the drafts:
 * date-time, date, time, duration (RFC 3339), email, idn-email (RFC 5321,
 * RFC 6531), hostname, idn-hostname (RFC 1123, IDNA2008), ipv4, ipv6 (dotted
 * quad, RFC 4291), uri, uri-reference, iri, iri-reference (RFC 3986, RFC 3987),
 * uri-template (RFC 6570), json-pointer (RFC 6901), relative-json-pointer,
 * regex (ECMA-262) and uuid (RFC 4122); unknown formats stay annotations.
 *
 * @return AGT_OK, AGT_EINVAL (opts is NULL).
 */
AGT_EXTERN int agt_schema_options_set_format_assertion(agt_schema_options *opts, int on);

/**
 * Registers a document under an absolute URI so "$ref"s to it resolve
 * without a resolver. The text is copied.
 *
 * @param uri absolute URI without fragment, e.g. "http://localhost:1234/name.json".
 * @param json the document (UTF-8 JSON), len bytes.
 * @return AGT_OK, AGT_EPARSE (not JSON; the message gives line and column),
 *         AGT_EINVAL, AGT_ENOMEM.
 */
AGT_EXTERN int agt_schema_options_add_resource(agt_schema_options *opts, const char *uri,
                                               const char *json, size_t len);

/**
 * Installs a resolver callback (NULL removes it). The payload is passed back
 * unchanged and must stay valid while the options are used.
 *
 * @return AGT_OK, AGT_EINVAL (opts is NULL).
 */
AGT_EXTERN int agt_schema_options_set_resolver(agt_schema_options *opts, agt_schema_resolve_fn fn,
                                               void *payload);

/**
 * Answers a resolver callback with a document (copied).
 *
 * @return AGT_OK, AGT_EPARSE (not JSON), AGT_EINVAL, AGT_ENOMEM.
 */
AGT_EXTERN int agt_schema_resolution_provide(agt_schema_resolution *resolution, const char *json,
                                             size_t len);

/**
 * Compiles a schema with default options.
 *
 * @param out receives the compiled schema; free with agt_schema_free().
 * @param json the schema (an object or a boolean), len bytes of UTF-8 JSON.
 * @return AGT_OK; AGT_EPARSE for text that is not JSON; AGT_EINVALID for a
 *         schema that breaks the draft's rules (the message gives the JSON
 *         pointer into the schema and the keyword); AGT_ENOTFOUND for an
 *         unresolvable "$ref"; AGT_EINVAL; AGT_ENOMEM.
 */
AGT_EXTERN int agt_schema_compile(agt_schema **out, const char *json, size_t len);

/**
 * Compiles a schema with the given options (NULL = defaults). Returns as
 * agt_schema_compile(), plus AGT_ECANCELLED when the resolver cancelled.
 * The options may be freed after the call.
 */
AGT_EXTERN int agt_schema_compile_with(agt_schema **out, const char *json, size_t len,
                                       const agt_schema_options *opts);

/**
 * Validates an instance.
 *
 * @param schema a compiled schema.
 * @param instance len bytes of UTF-8 JSON.
 * @param errors_json when not NULL and the instance is invalid, receives a JSON
 *        array of every violation, each
 *        {"instance_path":"/a/0","schema_path":"/properties/a/items/type",
 *         "keyword":"type","message":"..."}; instance_path and schema_path are
 *        JSON pointers (RFC 6901). Free with agt_free(). Set to NULL otherwise.
 * The instance is parsed per RFC 8259 (nesting up to 2048 levels; for a
 * repeated key the last value wins). Numbers keep the value written:
 * integers beyond 64 bits, decimals with more than 15 significant digits and
 * numbers beyond the range of a double (1e400) are compared exactly by
 * minimum/maximum/exclusive*, multipleOf, enum, const and uniqueItems, in the
 * instance and in a schema compiled from text (a jansson value holds doubles).
 * A "$ref" that leads back to a schema already being evaluated at the same
 * instance location (a loop that never ends), or evaluation nested
 * deeper than 3000 schema levels, makes the instance invalid with a
 * violation of keyword "$ref" or "depth" saying so.
 *
 * @return AGT_OK (valid), AGT_EINVALID (invalid; agt_error_message() names
 *         the first violation), AGT_EPARSE (instance is not JSON; the message
 *         gives line and column), AGT_EINVAL (schema or instance NULL),
 *         AGT_ENOMEM.
 */
AGT_EXTERN int agt_schema_validate(const agt_schema *schema, const char *instance, size_t len,
                                   char **errors_json);

/** Frees a compiled schema; NULL is a no-op. */
AGT_EXTERN void agt_schema_free(agt_schema *schema);

#ifdef __cplusplus
}
#endif

#endif /* AGENTTOOLS_SCHEMA_H */
