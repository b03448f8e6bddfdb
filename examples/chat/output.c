/*
 * agt-chat: machine-readable output for scripts (-p with --output-format
 * json or stream-json). stream-json writes one JSON object per line as the
 * turn goes (text pieces, tool calls, their output, usage, notifications);
 * both end with a "result" object: the final message, the tool calls, the
 * token counts, and whether the turn failed.
 */
#include "chat.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

int chat_out_parse(const char *name)
{
    if (strcmp(name, "text") == 0)
        return CHAT_OUT_TEXT;
    if (strcmp(name, "json") == 0)
        return CHAT_OUT_JSON;
    if (strcmp(name, "stream-json") == 0)
        return CHAT_OUT_STREAM;
    return -1;
}

void chat_out_init(chat_out *o, int format)
{
    memset(o, 0, sizeof *o);
    o->format = format; /* the list of calls is made at the first call */
}

void chat_out_fini(chat_out *o)
{
    json_decref(o->calls);
    memset(o, 0, sizeof *o);
}

/* The length of a valid UTF-8 sequence starting at s (n bytes there), 0
 * when invalid, -1 when it is cut short by the end of the buffer. */
static int seq_len(const unsigned char *s, size_t n)
{
    int want = s[0] < 0x80                             ? 1
               : (s[0] & 0xE0) == 0xC0 && s[0] >= 0xC2 ? 2
               : (s[0] & 0xF0) == 0xE0                 ? 3
               : (s[0] & 0xF8) == 0xF0 && s[0] <= 0xF4 ? 4
                                                       : 0;
    if (want == 0)
        return 0;
    for (int k = 1; k < want; k++) {
        if ((size_t)k >= n)
            return -1;
        if ((s[k] & 0xC0) != 0x80)
            return 0;
    }
    if (want == 3 && ((s[0] == 0xE0 && s[1] < 0xA0) || (s[0] == 0xED && s[1] >= 0xA0)))
        return 0;
    if (want == 4 && ((s[0] == 0xF0 && s[1] < 0x90) || (s[0] == 0xF4 && s[1] >= 0x90)))
        return 0;
    return want;
}

json_t *chat_out_string(const char *data, size_t len, unsigned char carry[4], size_t *ncarry)
{
    size_t total = (ncarry != NULL ? *ncarry : 0) + len;
    unsigned char *in = malloc(total + 1);
    char *fixed = malloc(total * 3 + 1);
    if (in == NULL || fixed == NULL) {
        free(in);
        free(fixed);
        return NULL;
    }
    size_t k = 0;
    if (ncarry != NULL) {
        memcpy(in, carry, *ncarry);
        k = *ncarry;
        *ncarry = 0;
    }
    memcpy(in + k, data, len);
    size_t w = 0;
    for (size_t i = 0; i < total;) {
        int n = seq_len(in + i, total - i);
        if (n < 0 && ncarry != NULL && total - i < 4) {
            /* cut by the end of this piece: kept for the next one */
            memcpy(carry, in + i, total - i);
            *ncarry = total - i;
            break;
        }
        if (n <= 0) {
            memcpy(fixed + w, "\xef\xbf\xbd", 3); /* U+FFFD */
            w += 3;
            i++;
            continue;
        }
        memcpy(fixed + w, in + i, (size_t)n);
        w += (size_t)n;
        i += (size_t)n;
    }
    json_t *s = json_stringn(fixed, w);
    free(in);
    free(fixed);
    return s;
}

void chat_out_line(json_t *obj)
{
    if (obj == NULL)
        return;
    char *s = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (s != NULL) {
        fputs(s, stdout);
        fputc('\n', stdout);
        fflush(stdout);
    }
    free(s);
    json_decref(obj);
}

void chat_out_call(chat_out *o, const char *id, const char *name, const char *args, int is_error,
                   const char *preview)
{
    json_t *a = json_loads(args != NULL ? args : "{}", 0, NULL);
    json_t *call = json_pack("{s:s, s:s, s:o, s:b, s:s}", "id", id, "name", name, "arguments",
                             a != NULL ? a : json_string(args != NULL ? args : ""), "is_error",
                             is_error, "preview", preview != NULL ? preview : "");
    if (call == NULL)
        return;
    if (o->calls == NULL && (o->calls = json_array()) == NULL) {
        json_decref(call);
        return;
    }
    if (o->format == CHAT_OUT_STREAM) {
        json_t *ev = json_deep_copy(call);
        json_object_set_new(ev, "type", json_string("tool_finished"));
        chat_out_line(ev);
    }
    json_array_append_new(o->calls, call);
}

int chat_out_result(chat_out *o, const char *text, const char *stop, const char *error, int turns,
                    int64_t prompt_tokens, int64_t completion_tokens)
{
    if (o->calls == NULL && (o->calls = json_array()) == NULL)
        return -1;
    json_t *r =
        json_pack("{s:s, s:s, s:b, s:s, s:s?, s:i, s:O, s:{s:I, s:I}}", "type", "result", "result",
                  text != NULL ? text : "", "is_error", error != NULL, "stop_reason", stop, "error",
                  error, "turns", turns, "tool_calls", o->calls, "usage", "prompt_tokens",
                  (json_int_t)prompt_tokens, "completion_tokens", (json_int_t)completion_tokens);
    if (r == NULL)
        return -1;
    chat_out_line(r);
    return 0;
}
