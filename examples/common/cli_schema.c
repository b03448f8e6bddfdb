/* JSON Schema checks of the example CLIs' files, through agt_schema_*. */
#include "cli_schema.h"

#include <agenttools/agenttools.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

/* The last reference token of a JSON pointer, unescaped (~1 is /, ~0 is ~). */
static void last_token(const char *ptr, char *out, size_t len)
{
    const char *p = strrchr(ptr, '/');
    size_t n = 0;
    for (p = p != NULL ? p + 1 : ptr; *p != '\0' && n + 1 < len; p++) {
        if (p[0] == '~' && (p[1] == '0' || p[1] == '1')) {
            out[n++] = p[1] == '0' ? '~' : '/';
            p++;
        } else {
            out[n++] = *p;
        }
    }
    out[n] = '\0';
}

static void describe(json_t *v, const char *what, size_t more, char *err, size_t errlen)
{
    const char *ip = json_string_value(json_object_get(v, "instance_path"));
    const char *kw = json_string_value(json_object_get(v, "keyword"));
    const char *msg = json_string_value(json_object_get(v, "message"));
    char tail[64] = "";
    if (more > 0)
        snprintf(tail, sizeof tail, " (and %zu more problem%s)", more, more == 1 ? "" : "s");
    if (ip == NULL)
        ip = "";
    if (msg == NULL)
        msg = "invalid";
    if (kw != NULL &&
        (strcmp(kw, "additionalProperties") == 0 || strcmp(kw, "unevaluatedProperties") == 0)) {
        /* the violation is reported at the unknown member: name it and its object */
        char key[256];
        last_token(ip, key, sizeof key);
        const char *slash = strrchr(ip, '/');
        int parent = slash != NULL ? (int)(slash - ip) : 0;
        const char *allowed = strstr(msg, "(allowed:");
        snprintf(err, errlen, "%s: unknown key \"%s\" %s%.*s%s%s%s", what, key,
                 parent > 0 ? "in " : "at the top level", parent, ip, allowed != NULL ? " " : "",
                 allowed != NULL ? allowed : "", tail);
        return;
    }
    snprintf(err, errlen, "%s: at %s: %s%s", what, ip[0] != '\0' ? ip : "the top level", msg, tail);
}

int cli_schema_check(const char *schema, size_t schema_len, const char *text, size_t len,
                     const char *what, char *err, size_t errlen)
{
    agt_schema *s = NULL;
    char *errors = NULL;
    if (agt_schema_compile(&s, schema, schema_len) != AGT_OK) {
        snprintf(err, errlen, "%s: the embedded schema does not compile: %s", what,
                 agt_error_message());
        return -1;
    }
    int rc = agt_schema_validate(s, text, len, &errors);
    agt_schema_free(s);
    if (rc == AGT_OK)
        return 0;
    if (rc != AGT_EINVALID || errors == NULL) {
        snprintf(err, errlen, "%s: %s", what, agt_error_message());
        agt_free(errors);
        return -1;
    }
    json_t *list = json_loads(errors, 0, NULL);
    agt_free(errors);
    size_t n = json_array_size(list);
    /* an unknown key says the most: prefer it to the other violations */
    size_t pick = 0;
    for (size_t i = 0; i < n; i++) {
        const char *kw = json_string_value(json_object_get(json_array_get(list, i), "keyword"));
        if (kw != NULL && strcmp(kw, "additionalProperties") == 0) {
            pick = i;
            break;
        }
    }
    if (n == 0)
        snprintf(err, errlen, "%s: %s", what, agt_error_message());
    else
        describe(json_array_get(list, pick), what, n - 1, err, errlen);
    json_decref(list);
    return -1;
}
