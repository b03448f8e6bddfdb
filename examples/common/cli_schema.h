/*
 * JSON Schema checks of the example CLIs' own files (the config file,
 * .agenttools/review.json), with the library's validator (schema.h).
 */
#ifndef CLI_SCHEMA_H
#define CLI_SCHEMA_H

#include <stddef.h>

/* The schemas, embedded at build time from the *.schema.json files. */
extern const char cli_config_schema_json[];
extern const size_t cli_config_schema_json_len;

/*
 * Validates len bytes of JSON text against a schema. Returns 0 when valid;
 * -1 with a one-line message in err: "FILE: unknown key "modle" at
 * /providers/work (allowed: ...)" for a key the schema does not know, else
 * "FILE: at /json/pointer: <the validator's message>", with "(and N more
 * problems)" when there are several. what names the file in the message.
 */
int cli_schema_check(const char *schema, size_t schema_len, const char *text, size_t len,
                     const char *what, char *err, size_t errlen);

#endif
