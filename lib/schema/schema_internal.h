/*
 * Internal API of the JSON Schema component for the layers above it
 * (dispatch, registry): compile from and validate jansson values directly,
 * without a round trip through text.
 */
#ifndef AGT_LIB_SCHEMA_INTERNAL_H
#define AGT_LIB_SCHEMA_INTERNAL_H

#include "agenttools/schema.h"

struct json_t;

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

/* Reads JSON text into a jansson value as agti_json_parse does (same
 * values, same errors: JSON_DECODE_ANY, NUL allowed in strings), through
 * the validator's reader, which is many times faster than jansson's on long
 * strings; text jansson would read differently (integers past 64 bits, a
 * NUL in a member name) or refuses goes to jansson. NULL with the error set
 * (AGT_EPARSE, AGT_EINVAL, AGT_ENOMEM). */
struct json_t *agti_schema_parse_json(const char *text, size_t len, const char *what);

#endif
