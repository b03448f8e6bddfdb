/*
 * Internal API of the JSON Schema component for the layers above it
 * (dispatch, registry): compile from and validate jansson values directly,
 * without a round trip through text.
 */
#ifndef AGT_LIB_SCHEMA_INTERNAL_H
#define AGT_LIB_SCHEMA_INTERNAL_H

#include <stddef.h>

#include "agenttools/schema.h"

struct json_t;

/* Reads JSON text as agti_json_parse(text, len, what) does, the same
 * values (types, member order, a repeated key's last value) and the same
 * error messages, faster: jv's reader (jv.c) scans a string with a table
 * where jansson takes a byte at a time through its stream (2 ms for the
 * string of a 100 KB Bash command); where the two may differ (text jv
 * refuses, an integer past 64 bits, a number past a double's range or
 * digits, a NUL in a key) jansson reads the text again. */
struct json_t *agti_schema_read_json(const char *text, size_t len, const char *what);

/* Compiles a schema given as a jansson value. The schema keeps its own
 * reference to `schema` (the caller keeps its own and must not modify the
 * value afterwards). opts may be NULL. Returns as agt_schema_compile_with(). */
int agti_schema_compile_json(agt_schema **out, struct json_t *schema,
                             const agt_schema_options *opts);

/* Validates a jansson value. errors_out NULL: stops at the first violation
 * (fastest). Otherwise *errors_out receives a new array of every violation,
 * each {"instance_path","schema_path","keyword","message"} (a new reference;
 * NULL when valid). Returns AGT_OK or AGT_EINVALID; AGT_EINVAL for NULL
 * arguments; AGT_ENOMEM. A "$ref" chain that loops without moving into the
 * instance, or nesting past the depth limit, makes the instance invalid with a
 * "$ref"/"depth" violation (message says which). */
int agti_schema_validate_json(const agt_schema *s, const struct json_t *instance,
                              struct json_t **errors_out);

#endif
