#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "net.h"
#include "net/curl_dl.h"

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

/* The address check: libcurl asks for every socket it connects, after its
 * DNS lookup, for each address it tries and each redirect, so what is
 * judged is where the connection really goes (a name that resolves to
 * 127.0.0.1, or to a public address first and a private one later, is
 * caught at connect time). */
typedef struct guard {
    bool allow;
    char refused[INET6_ADDRSTRLEN + 2]; /* the first address refused */
    const char *what;
} guard;

static curl_socket_t open_checked(void *ud, curlsocktype purpose, struct curl_sockaddr *a)
{
    guard *g = ud;
    const char *what = NULL;
    (void)purpose;
    if (!g->allow && agti_net_addr_private(&a->addr, &what)) {
        if (g->refused[0] == '\0') {
            const void *raw = NULL;
            if (a->family == AF_INET)
                raw = &((const struct sockaddr_in *)(const void *)&a->addr)->sin_addr;
            else if (a->family == AF_INET6)
                raw = &((const struct sockaddr_in6 *)(const void *)&a->addr)->sin6_addr;
            if (raw == NULL || !inet_ntop(a->family, raw, g->refused, sizeof g->refused))
                snprintf(g->refused, sizeof g->refused, "(address family %d)", a->family);
            g->what = what;
        }
        return CURL_SOCKET_BAD;
    }
    return socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
}

static void set_guard(CURL *h, guard *g)
{
    curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, open_checked);
    curl_easy_setopt(h, CURLOPT_OPENSOCKETDATA, g);
}

/* A transfer that sends no byte for this long is given up (a stalled server
 * should not hold the call for the whole time cap). */
#define FETCH_STALL_S 20L

static size_t discard(char *p, size_t size, size_t n, void *ud)
{
    (void)p, (void)ud;
    return size * n;
}

/* After curl gave up on too many redirects: walks the chain one hop at a time
 * (bodies discarded) to tell a loop from a long chain, and appends
 * "; the redirects go round in a loop: A -> B -> A" when it is a loop. */
static void describe_loop(const char *url, const agti_fetch_opts *o, agti_buf *msg)
{
    long max = o->max_redirects < 0 ? 0 : o->max_redirects;
    char **seen = calloc((size_t)max + 2, sizeof *seen);
    CURL *h = seen ? curl_easy_init() : NULL;
    char *cur = agti_strdup(url);
    long n = 0;
    long loop_at = -1;
    guard g = {o->allow_private, "", NULL};
    while (h && cur && n <= max && loop_at < 0) {
        for (long i = 0; i < n; i++)
            if (strcmp(seen[i], cur) == 0)
                loop_at = i;
        if (loop_at >= 0)
            break;
        curl_easy_reset(h);
        curl_easy_setopt(h, CURLOPT_URL, cur);
#if LIBCURL_VERSION_NUM >= 0x075500
        curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#else
        curl_easy_setopt(h, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
        set_guard(h, &g);
        curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)o->timeout_ms);
        curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)o->connect_ms);
        curl_easy_setopt(h, CURLOPT_USERAGENT, "libagenttools/" AGT_VERSION_STRING " (FetchURL)");
        char *next = NULL;
        if (curl_easy_perform(h) != CURLE_OK ||
            curl_easy_getinfo(h, CURLINFO_REDIRECT_URL, &next) != CURLE_OK || next == NULL)
            break;
        seen[n++] = cur;
        cur = agti_strdup(next);
    }
    if (loop_at >= 0) {
        agti_buf_puts(msg, "; the redirects go round in a loop: ");
        for (long i = loop_at; i < n; i++) {
            agti_buf_puts(msg, seen[i]);
            agti_buf_puts(msg, " -> ");
        }
        agti_buf_puts(msg, cur);
    }
    for (long i = 0; i < n; i++)
        free(seen[i]);
    free(seen);
    free(cur);
    if (h)
        curl_easy_cleanup(h);
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
    if ((rc = agti_curl_ensure()) != AGT_OK)
        return rc;
    CURL *h = curl_easy_init();
    if (!h)
        return agti_error(AGT_ERROR, "libcurl could not create a handle");
    sink s = {r, o->max_bytes};
    guard g = {o->allow_private, "", NULL};
    set_guard(h, &g);
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
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, FETCH_STALL_S);
    char errbuf[CURL_ERROR_SIZE];
    errbuf[0] = '\0';
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
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
    else if (cc != CURLE_OK && g.refused[0] != '\0')
        rc = agti_error(AGT_EDENIED,
                        "fetching %s was refused: it connects to %s, which is not a public "
                        "address (%s); FetchURL only reaches public internet addresses unless "
                        "the host allows private ones",
                        eff ? eff : url, g.refused, g.what);
    else if (cc == CURLE_TOO_MANY_REDIRECTS) {
        agti_buf msg = AGTI_BUF_INIT;
        describe_loop(url, o, &msg);
        rc = agti_error(AGT_ENET, "too many redirects (more than %ld) fetching %s%s",
                        o->max_redirects, url, agti_buf_cstr(&msg));
        agti_buf_free(&msg);
    } else if (cc == CURLE_OPERATION_TIMEDOUT && strstr(errbuf, "too slow") != NULL)
        rc = agti_error(AGT_ETIMEOUT, "fetching %s stalled: no data for %ld s", url, FETCH_STALL_S);
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
