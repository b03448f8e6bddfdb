/*
 * agt-review: the HTTP client of --post (libcurl, linked by the example
 * itself): one request at a time, a User-Agent on every request, JSON bodies,
 * and list endpoints followed through their Link rel="next" pagination.
 */
#include "post.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Answers larger than this are refused (a review API never sends that much). */
#define RV_HTTP_MAX ((size_t)64 << 20)
/* At most this many pages of a list are read. */
#define RV_HTTP_MAX_PAGES 100

typedef struct rv_sink {
    char *data;
    size_t len, cap;
    int over;
    char *next; /* Link rel="next" */
} rv_sink;

static size_t on_body(char *ptr, size_t size, size_t n, void *payload)
{
    rv_sink *s = payload;
    size_t add = size * n;
    if (s->len + add + 1 > RV_HTTP_MAX) {
        s->over = 1;
        return 0;
    }
    if (s->len + add + 1 > s->cap) {
        size_t cap = s->cap ? s->cap : 4096;
        while (cap < s->len + add + 1)
            cap *= 2;
        char *p = realloc(s->data, cap);
        if (p == NULL)
            return 0;
        s->data = p;
        s->cap = cap;
    }
    memcpy(s->data + s->len, ptr, add);
    s->len += add;
    s->data[s->len] = '\0';
    return add;
}

/* Finds <URL>; rel="next" in a Link header value (RFC 8288). */
char *rv_link_next(const char *v, size_t len)
{
    const char *end = v + len;
    const char *p = v;
    while (p < end) {
        const char *lt = memchr(p, '<', (size_t)(end - p));
        if (lt == NULL)
            return NULL;
        const char *gt = memchr(lt, '>', (size_t)(end - lt));
        if (gt == NULL)
            return NULL;
        const char *comma = gt;
        /* the parameters run to the next ",<" (a comma inside quotes is rare
         * enough in rel values to ignore) */
        while (comma < end && *comma != ',')
            comma++;
        for (const char *q = gt + 1; q + 3 <= comma; q++) {
            if (strncasecmp(q, "rel", 3) != 0)
                continue;
            const char *r = q + 3;
            while (r < comma && (*r == ' ' || *r == '='))
                r++;
            if (r < comma && *r == '"')
                r++;
            if ((size_t)(comma - r) >= 4 && strncasecmp(r, "next", 4) == 0 &&
                (r + 4 == comma || r[4] == '"' || r[4] == ' ' || r[4] == ';')) {
                size_t ul = (size_t)(gt - lt - 1);
                char *u = malloc(ul + 1);
                if (u != NULL) {
                    memcpy(u, lt + 1, ul);
                    u[ul] = '\0';
                }
                return u;
            }
        }
        p = comma + 1;
    }
    return NULL;
}

static size_t on_header(char *buf, size_t size, size_t n, void *payload)
{
    rv_sink *s = payload;
    size_t len = size * n;
    if (len > 5 && strncasecmp(buf, "link:", 5) == 0) {
        free(s->next);
        s->next = rv_link_next(buf + 5, len - 5);
    }
    return len;
}

int rv_http(const rv_http_ctx *h, const char *method, const char *url, const char *body,
            rv_resp *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    CURL *curl = curl_easy_init();
    if (curl == NULL) {
        snprintf(err, errlen, "cannot start an HTTP request (libcurl)");
        return -1;
    }
    rv_sink sink;
    memset(&sink, 0, sizeof sink);
    struct curl_slist *hl = NULL;
    char ua[128];
    snprintf(ua, sizeof ua, "User-Agent: agt-review/%s (libagenttools)", agt_version());
    hl = curl_slist_append(hl, ua);
    hl = curl_slist_append(hl, "Content-Type: application/json");
    for (size_t k = 0; k < h->n_headers; k++)
        hl = curl_slist_append(hl, h->headers[k]);
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, hl);
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
    if (body != NULL) {
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
    }
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &sink);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 30L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, 120L);
    /* redirects would resend the token to another host: not followed */
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
#else
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
    CURLcode cc = curl_easy_perform(curl);
    int rc = 0;
    if (cc != CURLE_OK) {
        snprintf(err, errlen, "%s %s: %s", method, url,
                 sink.over ? "the answer is over 64 MiB" : curl_easy_strerror(cc));
        rc = -1;
        free(sink.data);
        free(sink.next);
    } else {
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &out->status);
        out->body = sink.data != NULL ? sink.data : strdup("");
        out->len = sink.len;
        out->next = sink.next;
    }
    curl_slist_free_all(hl);
    curl_easy_cleanup(curl);
    return rc;
}

void rv_resp_free(rv_resp *r)
{
    free(r->body);
    free(r->next);
    memset(r, 0, sizeof *r);
}

/* The API's own error text, for messages: "message" (GitHub, GitLab) or the
 * first bytes of the body. */
static void rv_http_describe(const rv_resp *r, char *buf, size_t len)
{
    json_t *j = json_loads(r->body != NULL ? r->body : "", 0, NULL);
    json_t *m = json_object_get(j, "message");
    char *dumped = NULL;
    const char *text = json_string_value(m);
    if (text == NULL && m != NULL)
        text = dumped = json_dumps(m, JSON_COMPACT);
    if (text == NULL)
        text = json_string_value(json_object_get(j, "error"));
    if (text == NULL)
        text = r->body != NULL ? r->body : "";
    json_t *errors = json_object_get(j, "errors");
    char *es = errors != NULL ? json_dumps(errors, JSON_COMPACT) : NULL;
    snprintf(buf, len, "HTTP %ld: %.300s%s%.300s", r->status, text, es ? " " : "", es ? es : "");
    free(es);
    free(dumped);
    json_decref(j);
}

int rv_http_json(const rv_http_ctx *h, const char *method, const char *url, json_t *body,
                 json_t **out, char *err, size_t errlen)
{
    char *text = body != NULL ? json_dumps(body, JSON_COMPACT) : NULL;
    rv_resp r;
    *out = NULL;
    if (h->log != NULL) {
        fprintf(h->log, "%s %s\n%s\n", method, url, text != NULL ? text : "");
        fflush(h->log);
    }
    int rc = rv_http(h, method, url, text, &r, err, errlen);
    free(text);
    if (rc != 0)
        return -1;
    if (r.status < 200 || r.status > 299) {
        char d[800];
        rv_http_describe(&r, d, sizeof d);
        snprintf(err, errlen, "%s %s: %s", method, url, d);
        rv_resp_free(&r);
        return -1;
    }
    json_error_t je;
    *out = r.len > 0 ? json_loads(r.body, 0, &je) : json_object();
    if (*out == NULL) {
        snprintf(err, errlen, "%s %s: the answer is not JSON (%s)", method, url, je.text);
        rv_resp_free(&r);
        return -1;
    }
    rv_resp_free(&r);
    return 0;
}

int rv_http_list(const rv_http_ctx *h, const char *url, json_t **out, char *err, size_t errlen)
{
    json_t *all = json_array();
    char *u = strdup(url);
    for (int page = 0; u != NULL; page++) {
        if (page >= RV_HTTP_MAX_PAGES) {
            snprintf(err, errlen, "GET %s: more than %d pages", url, RV_HTTP_MAX_PAGES);
            goto fail;
        }
        rv_resp r;
        if (rv_http(h, "GET", u, NULL, &r, err, errlen) != 0)
            goto fail;
        if (r.status != 200) {
            char d[800];
            rv_http_describe(&r, d, sizeof d);
            snprintf(err, errlen, "GET %s: %s", u, d);
            rv_resp_free(&r);
            goto fail;
        }
        json_t *arr = json_loads(r.body, 0, NULL);
        if (!json_is_array(arr)) {
            snprintf(err, errlen, "GET %s: the answer is not a JSON array", u);
            json_decref(arr);
            rv_resp_free(&r);
            goto fail;
        }
        json_array_extend(all, arr);
        json_decref(arr);
        free(u);
        u = r.next;
        r.next = NULL;
        rv_resp_free(&r);
    }
    *out = all;
    return 0;
fail:
    free(u);
    json_decref(all);
    *out = NULL;
    return -1;
}
