/*
 * libFuzzer target for the model client's answer parsing: the SSE splitter
 * and the OpenAI / Anthropic stream event handlers of lib/model/http.c
 * (compiled into this target, since they are static: the transfer is fed
 * through its libcurl write callback without a network), the whole-body
 * parsers, and the response assembly of lib/model/response.c.
 * Input: flags byte, chunking seed byte, then the HTTP body. flags bit 0:
 * Anthropic (else OpenAI), bit 1: a whole JSON body (else an event stream),
 * bit 2: the stream callback cancels after 3 pieces.
 * Invariants: the body fed in one piece and in chunks of pseudo-random
 * sizes gives the same status, message and response JSON; an accepted
 * answer's JSON reads back (agt_model_response_parse) to the same JSON;
 * the streamed pieces add up to the response's text and thinking.
 */
#include "../../lib/model/http.c"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct pieces {
    agti_buf text, thinking;
    int n, cancel_after;
} pieces;

static int on_piece(int kind, const char *text, size_t len, void *payload)
{
    pieces *p = payload;
    if (kind == AGT_STREAM_TEXT)
        agti_buf_put(&p->text, text, len);
    else if (kind == AGT_STREAM_THINKING)
        agti_buf_put(&p->thinking, text, len);
    return p->cancel_after > 0 && ++p->n >= p->cancel_after;
}

typedef struct outcome {
    int rc;
    char *message;
    char *json;
    char *text, *thinking; /* as streamed */
} outcome;

/* What attempt() does with a 200 answer, minus libcurl. */
static void run(agt_model *m, const char *body, size_t len, bool stream, unsigned seed,
                int cancel_after, outcome *o)
{
    pieces p = {AGTI_BUF_INIT, AGTI_BUF_INIT, 0, cancel_after};
    agti_stream_sink sink = {on_piece, &p};
    agt_model_response *r = agti_resp_new();
    if (r == NULL)
        abort();
    xfer x = {0};
    x.m = m;
    x.sink = &sink;
    x.r = r;
    x.retry_after_ms = -1;
    x.status = 200;
    x.event_stream = stream;
    size_t off = 0;
    while (off < len && !x.err) {
        size_t n = len - off;
        if (seed != 0) {
            seed = seed * 1103515245u + 12345u;
            n = 1 + (seed >> 16) % 7;
            if (n > len - off)
                n = len - off;
        }
        if (on_write((char *)body + off, 1, n, &x) != n)
            break;
        off += n;
    }
    int rc = AGT_OK;
    if (x.err) {
        rc = x.err;
    } else if (x.n_events || x.event_stream) {
        if (x.line.len)
            sse_line(&x, x.line.ptr, x.line.len);
        if (!x.err)
            dispatch_event(&x);
        if (x.err)
            rc = x.err;
        else if (!x.done && !x.finished)
            rc = agti_error(AGT_ENET, "stream ended after %zu events", x.n_events);
    } else {
        rc = finish_body(&x);
    }
    xfer_free(&x);
    if (rc == AGT_OK)
        rc = agti_resp_finish(r);
    o->rc = rc;
    o->message = rc == AGT_OK ? NULL : strdup(agt_error_message());
    o->json = rc == AGT_OK ? strdup(agt_model_response_json(r)) : NULL;
    o->text = agti_buf_detach(&p.text);
    o->thinking = agti_buf_detach(&p.thinking);
    if (rc == AGT_OK && cancel_after == 0) {
        /* the pieces add up to the answer */
        if (strcmp(o->text ? o->text : "", agt_model_response_text(r)) != 0 ||
            strcmp(o->thinking ? o->thinking : "", agt_model_response_thinking(r)) != 0)
            abort();
    }
    agt_model_response_free(r);
}

static void outcome_free(outcome *o)
{
    free(o->message);
    free(o->json);
    free(o->text);
    free(o->thinking);
}

static bool streq(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static agt_model *models[2];
    if (size < 2 || size > 65536)
        return 0;
    unsigned flags = data[0];
    int proto = flags & 1 ? AGT_PROTOCOL_ANTHROPIC : AGT_PROTOCOL_OPENAI;
    agt_model **m = &models[flags & 1];
    if (*m == NULL && agt_model_new(m, proto) != AGT_OK)
        abort();
    const char *body = (const char *)data + 2;
    size_t len = size - 2;
    bool stream = (flags & 2) == 0;
    int cancel_after = flags & 4 ? 3 : 0;

    outcome whole = {0}, chunked = {0};
    run(*m, body, len, stream, 0, cancel_after, &whole);
    run(*m, body, len, stream, data[1] | 0x100u, cancel_after, &chunked);
    if (whole.rc != AGT_ENOMEM && chunked.rc != AGT_ENOMEM &&
        (whole.rc != chunked.rc || !streq(whole.message, chunked.message) ||
         !streq(whole.json, chunked.json))) {
        fprintf(stderr, "whole: %d %s %s\nchunked: %d %s %s\n", whole.rc, whole.message, whole.json,
                chunked.rc, chunked.message, chunked.json);
        abort();
    }
    if (whole.rc == AGT_OK) {
        agt_model_response *back = NULL;
        if (agt_model_response_parse(&back, whole.json, strlen(whole.json)) != AGT_OK ||
            strcmp(agt_model_response_json(back), whole.json) != 0) {
            fprintf(stderr, "read back: %s\n%s\n", whole.json,
                    back ? agt_model_response_json(back) : agt_error_message());
            abort();
        }
        agt_model_response_free(back);
    }
    outcome_free(&whole);
    outcome_free(&chunked);
    return 0;
}
