#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "net.h"

typedef struct sink {
    agti_fetch_result *r;
    size_t max;
} sink;

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
    sink *s = ud;
    size_t len = size * n;
    size_t room = s->max > s->r->body.len ? s->max - s->r->body.len : 0;
    if (len > room) {
        agti_buf_put(&s->r->body, p, room);
        s->r->truncated = true;
        return 0; /* stop the transfer: the cap is reached */
    }
    agti_buf_put(&s->r->body, p, len);
    return s->r->body.oom ? 0 : len;
}

int agti_fetch(const char *url, const agti_fetch_opts *o, agti_fetch_result *r)
{
    memset(r, 0, sizeof *r);
    if (strncasecmp(url, "http://", 7) != 0 && strncasecmp(url, "https://", 8) != 0)
        return agti_error(AGT_EINVAL, "only http:// and https:// URLs can be fetched, not '%.100s'",
                          url);
    int rc = agti_ensure_init();
    if (rc != AGT_OK)
        return rc;
    CURL *h = curl_easy_init();
    if (!h)
        return agti_error(AGT_ERROR, "libcurl could not create a handle");
    sink s = {r, o->max_bytes};
    curl_easy_setopt(h, CURLOPT_URL, url);
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#else
    curl_easy_setopt(h, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
    curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(h, CURLOPT_MAXREDIRS, o->max_redirects);
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)o->timeout_ms);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)o->connect_ms);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "libagenttools/" AGT_VERSION_STRING " (FetchURL)");
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
    CURLcode cc = curl_easy_perform(h);
    char *eff = NULL, *ct = NULL;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
    curl_easy_getinfo(h, CURLINFO_EFFECTIVE_URL, &eff);
    curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct);
    curl_easy_getinfo(h, CURLINFO_REDIRECT_COUNT, &r->redirects);
    r->final_url = agti_strdup(eff ? eff : url);
    r->content_type = ct ? agti_strdup(ct) : NULL;
    if (cc == CURLE_WRITE_ERROR && r->truncated)
        cc = CURLE_OK;
    if (r->body.oom || !r->final_url)
        rc = agti_oom();
    else if (cc == CURLE_TOO_MANY_REDIRECTS)
        rc = agti_error(AGT_ENET, "too many redirects (more than %ld) fetching %s",
                        o->max_redirects, url);
    else if (cc == CURLE_OPERATION_TIMEDOUT)
        rc = agti_error(AGT_ETIMEOUT, "fetching %s took longer than %lld ms", url,
                        (long long)o->timeout_ms);
    else if (cc == CURLE_UNSUPPORTED_PROTOCOL)
        rc = agti_error(AGT_EINVAL,
                        "fetching %s: a redirect led to a scheme other than http or https", url);
    else if (cc != CURLE_OK)
        rc = agti_error(AGT_ENET, "fetching %s failed: %s", url, curl_easy_strerror(cc));
    curl_easy_cleanup(h);
    return rc;
}

void agti_fetch_result_free(agti_fetch_result *r)
{
    free(r->final_url);
    free(r->content_type);
    agti_buf_free(&r->body);
    memset(r, 0, sizeof *r);
}
