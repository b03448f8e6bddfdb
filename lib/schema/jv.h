/*
 * A compact read-only JSON value tree for validation: parsed straight from
 * text into an arena (strings without escapes point into the text), or
 * converted from a jansson value. Lengths everywhere: strings may hold NUL.
 */
#ifndef AGT_LIB_SCHEMA_JV_H
#define AGT_LIB_SCHEMA_JV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_t;

enum {
    AGTI_JV_NULL,
    AGTI_JV_FALSE,
    AGTI_JV_TRUE,
    AGTI_JV_INT,
    AGTI_JV_REAL,
    AGTI_JV_STRING,
    AGTI_JV_ARRAY,
    AGTI_JV_OBJECT,
    /* a number a double or int64_t cannot hold exactly: u.s/len is its text */
    AGTI_JV_BIG
};

typedef struct agti_jv agti_jv;
typedef struct agti_jkv agti_jkv;

struct agti_jv {
    uint8_t type;
    size_t len; /* string bytes, array items, object members, BIG text bytes */
    union {
        int64_t i;
        double d;
        const char *s;
        const agti_jv *a;
        const agti_jkv *o;
    } u;
};

struct agti_jkv {
    const char *key;
    size_t klen;
    agti_jv val;
};

typedef struct agti_jchunk agti_jchunk;

/* Bump allocator: a caller-provided first block (usually on the stack), then
 * heap chunks. */
typedef struct agti_jarena {
    char *buf;
    size_t used, cap;
    agti_jchunk *heap;
} agti_jarena;

void agti_jarena_init(agti_jarena *a, void *first, size_t size);
void *agti_jarena_alloc(agti_jarena *a, size_t size);
void agti_jarena_free(agti_jarena *a);

/* Parses len bytes of JSON text (any value at top level; NUL in strings
 * allowed; nesting deeper than 2048 is refused). Integers that fit int64_t
 * are AGTI_JV_INT; other numbers with at most 15 significant digits are
 * AGTI_JV_REAL (len 1 when written without fraction or exponent); numbers
 * with more digits, or beyond the range of a double, are AGTI_JV_BIG with
 * u.s/len pointing at their text inside `text`. On failure records AGT_EPARSE ("what: invalid JSON
 * at line L, column C: reason") or AGT_ENOMEM and returns NULL. */
const agti_jv *agti_jv_parse(agti_jarena *a, const char *text, size_t len, const char *what);

/* agti_jv_parse, and *jansson_differs (when not NULL) says whether the text
 * held what jansson refuses and jv reads (an integer past 64 bits, a number
 * kept as AGTI_JV_BIG, a NUL in a member name), even where a repeated key
 * dropped it from the value. */
const agti_jv *agti_jv_parse_ex(agti_jarena *a, const char *text, size_t len, const char *what,
                                bool *jansson_differs);

/* Converts a jansson value (borrowed: strings point into it). NULL on OOM or
 * when nested deeper than 10000 levels (*too_deep set). */
const agti_jv *agti_jv_from_json(agti_jarena *a, const struct json_t *v, bool *too_deep);

/* Member lookup (first match); NULL when absent. */
const agti_jv *agti_jv_get(const agti_jv *obj, const char *key, size_t klen);

/* Appends the compact JSON text of v to b: a real number in the shortest
 * form that reads back as the same double, with ".0" when it would
 * otherwise read as an integer; a big number as its text. */
struct agti_buf;
void agti_jv_dump(struct agti_buf *b, const agti_jv *v);

/* Validates a parsed instance (see agti_schema_validate_json). */
struct agt_schema;
int agti_schema_validate_jv(const struct agt_schema *s, const agti_jv *instance,
                            struct json_t **errors_out);

#endif
