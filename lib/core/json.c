#include <jansson.h>
#include <string.h>

#include "core.h"

json_t *agti_json_parse(const char *text, size_t len, const char *what)
{
    json_error_t err;
    if (text == NULL) {
        agti_error(AGT_EINVAL, "%s: no JSON text given (NULL)", what);
        return NULL;
    }
    json_t *v = json_loadb(text, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
    if (v == NULL) {
        if (json_error_code(&err) == json_error_out_of_memory)
            agti_oom();
        else
            agti_error(AGT_EPARSE, "%s: invalid JSON at line %d, column %d: %s", what, err.line,
                       err.column, err.text);
    }
    return v;
}

static int dump_to_buf(const char *data, size_t size, void *payload)
{
    agti_buf *b = payload;
    agti_buf_put(b, data, size);
    return b->oom ? -1 : 0;
}

/* Dumps through a callback so the text is allocated with our malloc even when
 * the host has installed its own jansson allocator. */
char *agti_json_dump(const json_t *v)
{
    agti_buf b = AGTI_BUF_INIT;
    if (json_dump_callback(v, dump_to_buf, &b,
                           JSON_COMPACT | JSON_ENCODE_ANY | JSON_PRESERVE_ORDER) != 0) {
        agti_buf_free(&b);
        return NULL;
    }
    return agti_buf_detach(&b);
}

json_t *agti_json_text(const char *s)
{
    if (s == NULL)
        return json_null();
    size_t n = strlen(s);
    if (agti_utf8_valid(s, n))
        return json_stringn(s, n);
    agti_buf b = AGTI_BUF_INIT;
    agti_utf8_sanitize(&b, s, n);
    json_t *j = b.oom ? NULL : json_stringn(agti_buf_cstr(&b), b.len);
    agti_buf_free(&b);
    return j;
}

void agti_json_pointer_append(agti_buf *b, const char *token)
{
    agti_buf_putc(b, '/');
    for (const char *p = token; *p; p++) {
        if (*p == '~')
            agti_buf_puts(b, "~0");
        else if (*p == '/')
            agti_buf_puts(b, "~1");
        else
            agti_buf_putc(b, *p);
    }
}
