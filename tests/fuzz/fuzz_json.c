/*
 * libFuzzer target for the JSON readers: the validator's own parser
 * (agti_jv_parse, lib/schema/jv.c) against jansson as the library reads it
 * (agti_json_parse, lib/core/json.c), and the conversion of a jansson value
 * (agti_jv_from_json).
 * Invariants: text jansson accepts, jv accepts too, with the same value
 * (types, numbers, string bytes, members; a repeated key keeps its last
 * value in both); jv accepts more only where its documentation says so
 * (integers beyond 64 bits become doubles, where jansson refuses them;
 * "\u0000" in an object key);
 * agti_schema_read_json (dispatch's reader of arguments) gives jansson's
 * value (the same compact dump) or jansson's error message;
 * the compact dump of the value reads back to the same value; a rejection
 * sets an error message with line and column.
 */
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "schema/jv.h"
#include "schema/schema_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool same(const agti_jv *v, const json_t *j)
{
    switch (json_typeof(j)) {
    case JSON_NULL:
        return v->type == AGTI_JV_NULL;
    case JSON_TRUE:
        return v->type == AGTI_JV_TRUE;
    case JSON_FALSE:
        return v->type == AGTI_JV_FALSE;
    case JSON_INTEGER:
        return v->type == AGTI_JV_INT && v->u.i == json_integer_value(j);
    case JSON_REAL:
        if (v->type == AGTI_JV_BIG) {
            /* more than 15 significant digits (jansson's dump writes 17):
             * jv keeps the text, which must read as jansson's double */
            char tmp[512];
            if (v->len >= sizeof tmp)
                return false;
            memcpy(tmp, v->u.s, v->len);
            tmp[v->len] = '\0';
            return strtod(tmp, NULL) == json_real_value(j);
        }
        return v->type == AGTI_JV_REAL && v->u.d == json_real_value(j);
    case JSON_STRING:
        return v->type == AGTI_JV_STRING && v->len == json_string_length(j) &&
               (v->len == 0 || memcmp(v->u.s, json_string_value(j), v->len) == 0);
    case JSON_ARRAY:
        if (v->type != AGTI_JV_ARRAY || v->len != json_array_size(j))
            return false;
        for (size_t i = 0; i < v->len; i++)
            if (!same(&v->u.a[i], json_array_get(j, i)))
                return false;
        return true;
    case JSON_OBJECT: {
        if (v->type != AGTI_JV_OBJECT || v->len != json_object_size(j))
            return false;
        for (void *it = json_object_iter((json_t *)j); it;
             it = json_object_iter_next((json_t *)j, it)) {
            const agti_jv *w =
                agti_jv_get(v, json_object_iter_key(it), json_object_iter_key_len(it));
            if (w == NULL || !same(w, json_object_iter_value(it)))
                return false;
        }
        return true;
    }
    }
    return false;
}

/* Whether text holds an integer token of more than 18 digits (one jansson
 * refuses as too big and jv reads as a double). */
static bool has_long_integer(const char *s, size_t n)
{
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] >= '0' && s[i] <= '9') {
            if (++run > 18)
                return true;
        } else {
            run = 0;
        }
    }
    return false;
}

static void check_error(void)
{
    const char *m = agt_error_message();
    if (agt_error_code() == AGT_ENOMEM)
        return;
    if (agt_error_code() != AGT_EPARSE || m == NULL || strstr(m, "line ") == NULL)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536)
        return 0;
    const char *text = (const char *)data;
    _Alignas(16) char first[4096];
    agti_jarena a;
    agti_jarena_init(&a, first, sizeof first);
    const agti_jv *v = agti_jv_parse(&a, text, size, "fuzz");
    if (v == NULL)
        check_error();
    json_t *j = agti_json_parse(text, size, "fuzz");
    char *msg = j == NULL ? strdup(agt_error_message()) : NULL;
    if (j == NULL)
        check_error();
    /* the arguments reader of dispatch: jansson's value, or its message */
    json_t *r = agti_schema_read_json(text, size, "fuzz");
    if (j != NULL && r == NULL && agt_error_code() != AGT_ENOMEM)
        abort();
    if (j != NULL && r != NULL) {
        char *da = agti_json_dump(j), *db = agti_json_dump(r);
        if ((da && db && strcmp(da, db) != 0) || !json_equal(j, r))
            abort();
        free(da);
        free(db);
    }
    if (j == NULL && r != NULL)
        abort();
    if (j == NULL && msg != NULL && agt_error_code() != AGT_ENOMEM &&
        strcmp(msg, agt_error_message()) != 0)
        abort();
    json_decref(r);
    free(msg);

    if (j != NULL && v == NULL) {
        /* jansson read it, jv did not: only jv's depth limit may differ,
         * and jansson ends a top-level number at a NUL byte ("-1\0") */
        if (strstr(agt_error_message(), "nesting depth") == NULL && memchr(text, 0, size) == NULL)
            abort();
    } else if (j != NULL && v != NULL) {
        if (!same(v, j))
            abort();
        /* the dump reads back to the same value */
        char *dump = agti_json_dump(j);
        if (dump != NULL) {
            agti_jarena b;
            _Alignas(16) char first2[1024];
            agti_jarena_init(&b, first2, sizeof first2);
            const agti_jv *w = agti_jv_parse(&b, dump, strlen(dump), "dump");
            if (w == NULL || !same(w, j))
                abort();
            agti_jarena_free(&b);
            free(dump);
        }
        /* and the jansson value converts to the same tree */
        agti_jarena c;
        _Alignas(16) char first3[1024];
        agti_jarena_init(&c, first3, sizeof first3);
        bool deep = false;
        const agti_jv *x = agti_jv_from_json(&c, j, &deep);
        if (x == NULL || !same(x, j))
            abort();
        agti_jarena_free(&c);
    } else if (j == NULL && v != NULL) {
        /* jv read it, jansson did not: integers past 64 bits, and "\u0000"
         * in an object key (jansson refuses NUL in keys even with
         * JSON_ALLOW_NUL) */
        if (!has_long_integer(text, size) && !memmem(text, size, "\\u0000", 6) &&
            !memchr(text, 'e', size) && !memchr(text, 'E', size))
            abort(); /* (or a number past a double's range, 1e400, which jv keeps as text) */
    }
    json_decref(j);
    agti_jarena_free(&a);
    return 0;
}
