/*
 * Bounded HTTP GET for FetchURL. Redirects are followed here, one request
 * at a time, so that every hop is checked the same way:
 *
 * - without a proxy, libcurl's open-socket callback judges the address each
 *   connection really goes to (after DNS, every address tried);
 * - through a proxy (chosen here from the environment as libcurl would, and
 *   handed to libcurl explicitly), the connection goes to the proxy, which
 *   is the host's choice and is not judged; the target host is resolved here
 *   and every address it has must be public before the request, or the
 *   CONNECT of an https tunnel, is sent to the proxy. A name that does not
 *   resolve here is refused (it cannot be checked). The proxy resolves the
 *   name again itself: an answer that changes between the two lookups (DNS
 *   rebinding) is beyond what a client can check.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

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
    bool proxied;                       /* this hop's connections go to the host's proxy */
    char refused[INET6_ADDRSTRLEN + 2]; /* the first address refused */
    const char *what;
} guard;

static curl_socket_t open_checked(void *ud, curlsocktype purpose, struct curl_sockaddr *a)
{
    guard *g = ud;
    const char *what = NULL;
    (void)purpose;
    if (!g->allow && !g->proxied && agti_net_addr_private(&a->addr, &what)) {
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

/* ---- the proxy a URL goes through (libcurl's environment rules) ------- */

static const char *env_nonempty(const char *name)
{
    const char *v = getenv(name);
    return v != NULL && v[0] != '\0' ? v : NULL;
}

/* Whether the IP literal host lies in the CIDR entry "a.b.c.d/n" or
 * "x::y/n" (or equals the address entry without a prefix). */
static bool in_cidr(const char *host, const char *entry, size_t elen)
{
    char addr[INET6_ADDRSTRLEN + 8];
    const char *sl = memchr(entry, '/', elen);
    size_t alen = sl ? (size_t)(sl - entry) : elen;
    if (alen >= sizeof addr)
        return false;
    memcpy(addr, entry, alen);
    addr[alen] = '\0';
    unsigned char h[16], e[16];
    int fam = strchr(host, ':') ? AF_INET6 : AF_INET;
    if (inet_pton(fam, host, h) != 1 || inet_pton(fam, addr, e) != 1)
        return false;
    unsigned max = fam == AF_INET6 ? 128 : 32;
    unsigned bits = max;
    if (sl != NULL) {
        char num[8];
        size_t nl = elen - alen - 1;
        if (nl == 0 || nl >= sizeof num)
            return false;
        memcpy(num, sl + 1, nl);
        num[nl] = '\0';
        char *end;
        unsigned long b = strtoul(num, &end, 10);
        if (*end != '\0' || b > max)
            return false;
        bits = (unsigned)b;
    }
    for (unsigned i = 0; i < bits; i++) {
        unsigned char m = (unsigned char)(0x80u >> (i % 8));
        if ((h[i / 8] & m) != (e[i / 8] & m))
            return false;
    }
    return true;
}

/* no_proxy as libcurl reads it: "*" exempts every host; else a comma (or
 * space) separated list of names, each matching the host itself or any
 * name below it (a leading '.' is dropped), case-insensitively, and of IP
 * addresses or CIDR ranges matching an IP literal host. */
static bool no_proxy_match(const char *list, const char *host)
{
    size_t hl = strlen(host);
    while (hl > 0 && host[hl - 1] == '.')
        hl--;
    bool ip = strchr(host, ':') != NULL || strspn(host, "0123456789.") == strlen(host);
    for (const char *p = list; *p;) {
        while (*p == ',' || *p == ' ' || *p == '\t')
            p++;
        size_t n = strcspn(p, ", \t");
        if (n == 0)
            break;
        const char *e = p;
        p += n;
        if (n == 1 && e[0] == '*')
            return true;
        if (ip) {
            if (in_cidr(host, e, n))
                return true;
            continue;
        }
        if (e[0] == '.') {
            e++;
            n--;
        }
        while (n > 0 && e[n - 1] == '.')
            n--;
        if (n == 0 || n > hl)
            continue;
        if (strncasecmp(host + hl - n, e, n) == 0 && (n == hl || host[hl - n - 1] == '.'))
            return true;
    }
    return false;
}

/* The proxy libcurl would take from the environment for a URL with this
 * scheme and host (http_proxy for http, in lower case only; https_proxy or
 * HTTPS_PROXY for https; else all_proxy or ALL_PROXY; none when no_proxy or
 * NO_PROXY names the host), or NULL. */
static const char *proxy_for(const char *scheme, const char *host)
{
    const char *np = env_nonempty("no_proxy");
    if (np == NULL)
        np = env_nonempty("NO_PROXY");
    if (np != NULL && no_proxy_match(np, host))
        return NULL;
    const char *p = NULL;
    if (strcasecmp(scheme, "http") == 0)
        p = env_nonempty("http_proxy");
    else if (strcasecmp(scheme, "https") == 0 && (p = env_nonempty("https_proxy")) == NULL)
        p = env_nonempty("HTTPS_PROXY");
    if (p == NULL && (p = env_nonempty("all_proxy")) == NULL)
        p = env_nonempty("ALL_PROXY");
    return p;
}

/* The scheme and the host of url (brackets of an IPv6 literal removed,
 * international names in punycode). AGT_EINVAL when it has none. */
static int url_parts(const char *url, char **scheme, char **host)
{
    *scheme = *host = NULL;
    CURLU *u = curl_url();
    if (u == NULL)
        return agti_oom();
    unsigned flags = 0;
#ifdef CURLU_PUNYCODE
    flags |= CURLU_PUNYCODE;
#endif
    char *sc = NULL, *h = NULL;
    int rc = AGT_OK;
    if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_SCHEME, &sc, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &h, flags) != CURLUE_OK) {
        rc = agti_error(AGT_EINVAL, "'%.200s' is not a URL FetchURL can fetch (no host)", url);
    } else {
        size_t n = strlen(h);
        *scheme = agti_strdup(sc);
        *host =
            n >= 2 && h[0] == '[' && h[n - 1] == ']' ? agti_strndup(h + 1, n - 2) : agti_strdup(h);
        if (*scheme == NULL || *host == NULL)
            rc = agti_oom();
        /* a zone ("fe80::1%eth0") is not part of the address */
        char *pct = *host ? strchr(*host, '%') : NULL;
        if (pct != NULL)
            *pct = '\0';
    }
    curl_free(sc);
    curl_free(h);
    curl_url_cleanup(u);
    if (rc != AGT_OK) {
        free(*scheme);
        free(*host);
        *scheme = *host = NULL;
    }
    return rc;
}

/* proxy as shown in messages (they reach the model): without the user
 * name and password of "scheme://user:pass@host:port". */
static void proxy_display(const char *proxy, char *out, size_t cap)
{
    const char *sep = strstr(proxy, "://");
    const char *hostpart = sep ? sep + 3 : proxy;
    size_t hl = strcspn(hostpart, "/?#");
    const char *at = NULL;
    for (size_t i = 0; i < hl; i++)
        if (hostpart[i] == '@')
            at = hostpart + i;
    if (at == NULL) {
        snprintf(out, cap, "%s", proxy);
        return;
    }
    snprintf(out, cap, "%.*s%s", (int)(hostpart - proxy), proxy, at + 1);
}

/* Before a request goes to proxy: every address host resolves to here must
 * be public. AGT_EDENIED with the message otherwise. */
static int check_proxied_target(const char *url, const char *host, const char *proxy_raw)
{
    char proxy[512];
    proxy_display(proxy_raw, proxy, sizeof proxy);
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int e = getaddrinfo(host, NULL, &hints, &res);
    if (e != 0)
        return agti_error(AGT_EDENIED,
                          "fetching %s was refused: it would go through the proxy %s, and its "
                          "host %s cannot be resolved here (%s), so it cannot be checked to be a "
                          "public address first; FetchURL only reaches public internet addresses "
                          "unless the host allows private ones",
                          url, proxy, host, gai_strerror(e));
    int rc = AGT_OK;
    for (struct addrinfo *a = res; a != NULL && rc == AGT_OK; a = a->ai_next) {
        const char *what = NULL;
        if (!agti_net_addr_private(a->ai_addr, &what))
            continue;
        char text[INET6_ADDRSTRLEN + 2] = "?";
        const void *raw = NULL;
        if (a->ai_family == AF_INET)
            raw = &((const struct sockaddr_in *)(const void *)a->ai_addr)->sin_addr;
        else if (a->ai_family == AF_INET6)
            raw = &((const struct sockaddr_in6 *)(const void *)a->ai_addr)->sin6_addr;
        if (raw != NULL)
            inet_ntop(a->ai_family, raw, text, sizeof text);
        rc = agti_error(AGT_EDENIED,
                        "fetching %s was refused: it would go through the proxy %s to %s, which "
                        "is not a public address (%s); nothing was sent to the proxy; FetchURL "
                        "only reaches public internet addresses unless the host allows private "
                        "ones",
                        url, proxy, text, what);
    }
    freeaddrinfo(res);
    return rc;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* "; the redirects go round in a loop: A -> B -> A" for the first URL of
 * chain[0..n) that comes again, appended to msg (nothing without one). */
static void describe_loop(char *const *chain, size_t n, agti_buf *msg)
{
    for (size_t j = 1; j < n; j++) {
        for (size_t i = 0; i < j; i++) {
            if (strcmp(chain[i], chain[j]) != 0)
                continue;
            agti_buf_puts(msg, "; the redirects go round in a loop: ");
            for (size_t k = i; k < j; k++) {
                agti_buf_puts(msg, chain[k]);
                agti_buf_puts(msg, " -> ");
            }
            agti_buf_puts(msg, chain[j]);
            return;
        }
    }
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
    long max = o->max_redirects < 0 ? 0 : o->max_redirects;
    /* the URLs of the hops, the one after the last allowed redirect included */
    char **chain = calloc((size_t)max + 2, sizeof *chain);
    size_t nchain = 0;
    sink s = {r, o->max_bytes};
    guard g = {o->allow_private, false, "", NULL};
    set_guard(h, &g);
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#else
    curl_easy_setopt(h, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)o->connect_ms);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "libagenttools/" AGT_VERSION_STRING " (FetchURL)");
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, FETCH_STALL_S);
    char errbuf[CURL_ERROR_SIZE];
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    int64_t start = now_ms();
    char *cur = agti_strdup(url);
    CURLcode cc = CURLE_OK;
    char *eff = NULL, *ct = NULL;
    bool done = false;
    long connect_code = 0;
    char used_proxy[512] = "";
    if (chain == NULL || cur == NULL)
        rc = agti_oom();
    while (rc == AGT_OK && !done) {
        char *scheme = NULL, *host = NULL;
        if (strncasecmp(cur, "http://", 7) != 0 && strncasecmp(cur, "https://", 8) != 0) {
            cc = CURLE_UNSUPPORTED_PROTOCOL;
            break;
        }
        if ((rc = url_parts(cur, &scheme, &host)) != AGT_OK)
            break;
        const char *proxy = proxy_for(scheme, host);
        if (proxy != NULL && !o->allow_private)
            rc = check_proxied_target(cur, host, proxy);
        free(scheme);
        free(host);
        if (rc != AGT_OK)
            break;
        g.proxied = proxy != NULL;
        chain[nchain++] = cur;
        cur = NULL;
        /* the proxy decided here, explicitly ("" turns the environment's off) */
        curl_easy_setopt(h, CURLOPT_PROXY, proxy ? proxy : "");
        curl_easy_setopt(h, CURLOPT_URL, chain[nchain - 1]);
        int64_t left = o->timeout_ms - (now_ms() - start);
        curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(left > 0 ? left : 1));
        agti_buf_truncate(&r->body, 0);
        r->truncated = false;
        errbuf[0] = '\0';
        cc = curl_easy_perform(h);
        eff = ct = NULL;
        r->status = 0;
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
        curl_easy_getinfo(h, CURLINFO_EFFECTIVE_URL, &eff);
        curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct);
        if (cc == CURLE_WRITE_ERROR && r->truncated)
            cc = CURLE_OK;
        connect_code = 0;
        if (cc != CURLE_OK && proxy != NULL) {
            curl_easy_getinfo(h, CURLINFO_HTTP_CONNECTCODE, &connect_code);
            proxy_display(proxy, used_proxy, sizeof used_proxy);
        }
        char *next = NULL;
        if (cc != CURLE_OK || r->status < 300 || r->status > 399 ||
            curl_easy_getinfo(h, CURLINFO_REDIRECT_URL, &next) != CURLE_OK || next == NULL) {
            done = true;
            break;
        }
        if ((long)nchain > max) {
            cc = CURLE_TOO_MANY_REDIRECTS;
            cur = agti_strdup(next);
            if (cur != NULL)
                chain[nchain++] = cur;
            cur = NULL;
            break;
        }
        if ((cur = agti_strdup(next)) == NULL)
            rc = agti_oom();
    }
    r->redirects = nchain > 0 ? (long)nchain - 1 : 0;
    if (cc == CURLE_TOO_MANY_REDIRECTS)
        r->redirects = max;
    const char *last = cur ? cur : nchain > 0 ? chain[nchain - 1] : url;
    if (rc == AGT_OK) {
        r->final_url = agti_strdup(done && eff ? eff : last);
        r->content_type = done && ct ? agti_strdup(ct) : NULL;
    }
    if (rc != AGT_OK) {
        /* the message is set */
    } else if (r->body.oom || !r->final_url)
        rc = agti_oom();
    else if (cc != CURLE_OK && g.refused[0] != '\0')
        rc = agti_error(AGT_EDENIED,
                        "fetching %s was refused: it connects to %s, which is not a public "
                        "address (%s); FetchURL only reaches public internet addresses unless "
                        "the host allows private ones",
                        eff ? eff : last, g.refused, g.what);
    else if (cc == CURLE_TOO_MANY_REDIRECTS) {
        agti_buf msg = AGTI_BUF_INIT;
        describe_loop(chain, nchain, &msg);
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
    else if (cc != CURLE_OK && connect_code >= 300)
        rc = agti_error(AGT_ENET,
                        "fetching %s failed: the proxy %s answered HTTP %ld to the tunnel "
                        "request (CONNECT)",
                        last, used_proxy, connect_code);
    else if (cc != CURLE_OK)
        rc = agti_error(AGT_ENET, "fetching %s failed: %s", url, curl_easy_strerror(cc));
    for (size_t i = 0; i < nchain; i++)
        free(chain[i]);
    free(chain);
    free(cur);
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
