/*
 * FetchURL end to end: agt_session_dispatch with the built-in provider (no
 * host provider) against fetch_server.py on 127.0.0.1 (ephemeral port,
 * started here, gone when its stdin closes). Expected texts are worked out by
 * hand from the pages in fetch_server.py; the engine-level checks (time cap,
 * refused schemes) call lib/net directly.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agenttools/agenttools.h"
#include "harness.h"
#include "net/net.h"
#include "../model/fake_server.h"

/* the same start/stop as the model tests' server: port on stdout, gone when
 * its stdin closes */
static fake_server srv;
static agt_session *sess;

static char *url_of(const char *path)
{
    static char buf[4][256];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "http://127.0.0.1:%d%s", srv.port, path);
    return buf[k];
}

/* FetchURL through session s; the result (never NULL on AGT_OK). */
static agt_result *fetch_url_in(agt_session *s, const char *url)
{
    char args[512];
    snprintf(args, sizeof args, "{\"url\":\"%s\"}", url);
    agt_result *r = NULL;
    int rc = agt_session_dispatch(s, "f", "FetchURL", args, &r);
    if (rc != AGT_OK || r == NULL) {
        t_diag("dispatch of %s: %d %s", url, rc, agt_error_message());
        return NULL;
    }
    return r;
}

/* FetchURL through the test's session (private addresses allowed). */
static agt_result *fetch_url(const char *url)
{
    return fetch_url_in(sess, url);
}

static const char *text_of(const agt_result *r)
{
    return r ? agt_result_text(r) : "";
}

/* The text after the header block (first blank line). */
static const char *body_of(const agt_result *r)
{
    const char *p = strstr(text_of(r), "\n\n");
    return p ? p + 2 : "";
}

/* The first 120 bytes of s on one line, for a TAP test name. */
static const char *one_line(const char *s)
{
    static char buf[4][128];
    static int k;
    k = (k + 1) % 4;
    size_t i = 0;
    for (; s[i] && i < sizeof buf[k] - 1; i++)
        buf[k][i] = (s[i] == '\n' || s[i] == '\r') ? ' ' : s[i];
    buf[k][i] = '\0';
    return buf[k];
}

static int requests_seen(void)
{
    agt_result *r = fetch_url(url_of("/_count"));
    int n = atoi(body_of(r));
    agt_result_free(r);
    return n;
}

static void test_html(void)
{
    agt_result *r = fetch_url(url_of("/page.html"));
    T_EQ_INT(r ? agt_result_is_error(r) : -1, 0, "HTML page: not an error");
    if (!agti_html_available()) {
        T_CHECK(strstr(text_of(r), "no HTML parser") != NULL, "HTML without libxml2: noted");
        agt_result_free(r);
        return;
    }
    char want[1024];
    snprintf(want, sizeof want,
             "Title: Fetch test page\n\n# Main title\n\nFirst paragraph with a [relative "
             "link](http://127.0.0.1:%d/docs/intro.html) and `inline_code()`.\n\n## Steps\n\n- "
             "Install & configure\n- Run [the tool](https://example.org/run)\n\n```\nint "
             "main(void)\n{\n    return 0;\n}\n```\n\nName | Value\nalpha | 1",
             srv.port);
    T_EQ_STR(body_of(r), want,
             "HTML: <main> only; nav/header/footer/script/style/form/aside/noscript/svg dropped; "
             "headings, link resolved, code, list, pre fenced, table rows");
    T_CHECK(strncmp(text_of(r), "Fetched ", 8) == 0 && strstr(text_of(r), url_of("/page.html")) &&
                strstr(text_of(r), "HTTP 200") && strstr(text_of(r), "text/html") &&
                strstr(text_of(r), "main text extracted from HTML"),
            "HTML: first line names URL, status, type and what was done: %.160s",
            one_line(text_of(r)));
    agt_result_free(r);

    r = fetch_url(url_of("/lists.html"));
    T_EQ_STR(body_of(r), "1. First\n   - inner a\n   - inner b\n2. Second\n\n- plain",
             "HTML: <article>; ordered list numbered, nested list indented under its item");
    agt_result_free(r);
}

static void test_redirects(void)
{
    char want[1024];
    agt_result *r = fetch_url(url_of("/r1"));
    snprintf(want, sizeof want,
             "Fetched http://127.0.0.1:%d/plain.txt (HTTP 200, text/plain; charset=utf-8, 46 "
             "bytes, after 3 redirects): text passed through.\n\nline one\n  indented <b>not "
             "html</b>\nlast line\n",
             srv.port);
    T_EQ_STR(text_of(r), want, "redirect chain 302 -> 301 (absolute) -> 307 (relative) followed");
    agt_result_free(r);

    r = fetch_url(url_of("/loop-a"));
    snprintf(want, sizeof want,
             "Could not fetch the URL: too many redirects (more than 10) fetching %s; the "
             "redirects go round in a loop: %s -> %s -> %s",
             url_of("/loop-a"), url_of("/loop-a"), url_of("/loop-b"), url_of("/loop-a"));
    T_EQ_INT(r ? agt_result_is_error(r) : -1, 1, "redirect loop: error result");
    T_EQ_STR(text_of(r), want, "redirect loop: reported as a loop with its chain");
    agt_result_free(r);

    r = fetch_url(url_of("/hop/0"));
    snprintf(want, sizeof want,
             "Could not fetch the URL: too many redirects (more than 10) fetching %s",
             url_of("/hop/0"));
    T_EQ_STR(text_of(r), want, "11 distinct redirects: over the limit, not a loop");
    agt_result_free(r);

    int before = requests_seen();
    r = fetch_url(url_of("/to-file"));
    T_EQ_INT(r ? agt_result_is_error(r) : -1, 1, "redirect to file: refused");
    T_CHECK(strstr(text_of(r), "other than http or https") != NULL, "redirect to file: %s",
            one_line(text_of(r)));
    agt_result_free(r);
    r = fetch_url(url_of("/to-ftp"));
    T_CHECK(r && agt_result_is_error(r) && strstr(text_of(r), "other than http or https"),
            "redirect to ftp: refused: %s", one_line(text_of(r)));
    agt_result_free(r);
    T_EQ_INT(requests_seen(), before + 2, "only the two redirecting pages were requested");
}

static void test_status_and_caps(void)
{
    char want[1024];
    agt_result *r = fetch_url(url_of("/missing"));
    snprintf(want, sizeof want,
             "HTTP 404 from %s: the page was not fetched. Response starts: No such page: "
             "/missing\n",
             url_of("/missing"));
    T_EQ_INT(r ? agt_result_is_error(r) : -1, 1, "404: error result");
    T_EQ_STR(text_of(r), want, "404: status and the start of the body");
    agt_result_free(r);

    r = fetch_url(url_of("/big"));
    T_EQ_INT(r ? agt_result_is_error(r) : -1, 0, "11 MiB body: not an error");
    T_CHECK(strstr(text_of(r), "The body was cut at 5242880 bytes.") != NULL,
            "11 MiB body: the size cap is stated");
    T_CHECK(strstr(text_of(r), "Showing the first 100000 of 5242880 bytes of text.") != NULL,
            "11 MiB body: the text cap is stated");
    const char *b = body_of(r);
    size_t blen = strlen(b);
    T_EQ_INT((long)blen, 100000, "11 MiB body: 100000 bytes of text shown");
    int lines_ok = 1;
    for (size_t i = 0; i + 16 <= blen; i += 16)
        lines_ok &= memcmp(b + i, "0123456789abcde\n", 16) == 0;
    T_CHECK(lines_ok, "11 MiB body: the text is the start of the body");
    agt_result_free(r);

    /* the time cap, with a short limit (the tool's is 30 s) */
    agti_fetch_opts o = {.max_bytes = 4096,
                         .timeout_ms = 1000,
                         .connect_ms = 1000,
                         .max_redirects = 5,
                         .allow_private = true};
    agti_fetch_result fr;
    T_EQ_INT(agti_fetch(url_of("/slow"), &o, &fr), AGT_ETIMEOUT, "slow server: AGT_ETIMEOUT");
    snprintf(want, sizeof want, "fetching %s took longer than 1000 ms", url_of("/slow"));
    T_EQ_STR(agt_error_message(), want, "slow server: the time cap is stated");
    agti_fetch_result_free(&fr);
}

static void test_charsets(void)
{
    agt_result *r = fetch_url(url_of("/latin1"));
    if (agti_html_available())
        T_EQ_STR(body_of(r), "Caf\xc3\xa9 na\xc3\xafve \xc2\xa9 2024",
                 "ISO-8859-1 HTML (charset in Content-Type) converted to UTF-8");
    agt_result_free(r);

    r = fetch_url(url_of("/latin1-quotes.txt"));
    T_EQ_STR(body_of(r), "\xe2\x80\x9cquoted\xe2\x80\x9d \xe2\x82\xac 5\n",
             "ISO-8859-1 label read as windows-1252, as browsers do (WHATWG Encoding)");
    agt_result_free(r);

    r = fetch_url(url_of("/sjis.txt"));
    T_EQ_STR(body_of(r),
             "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x81\xae\xe3\x83\x86\xe3\x82\xad\xe3\x82\xb9"
             "\xe3\x83\x88\n",
             "Shift_JIS text converted to UTF-8");
    agt_result_free(r);

    r = fetch_url(url_of("/sjis-meta.html"));
    if (agti_html_available())
        T_EQ_STR(body_of(r),
                 "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x81\xae\xe3\x83\x86\xe3\x82\xad\xe3\x82"
                 "\xb9\xe3\x83\x88",
                 "Shift_JIS HTML (charset only in <meta>) converted to UTF-8");
    agt_result_free(r);

    r = fetch_url(url_of("/bad-utf8.txt"));
    T_EQ_STR(body_of(r), "ok \xef\xbf\xbd\xef\xbf\xbd end\n", "invalid UTF-8 bytes replaced");
    agt_result_free(r);
}

static void test_passthrough(void)
{
    char want[512];
    agt_result *r = fetch_url(url_of("/gzip.txt"));
    T_EQ_STR(body_of(r), "line one\n  indented <b>not html</b>\nlast line\n",
             "gzip-encoded body decoded");
    T_CHECK(strstr(text_of(r), "46 bytes") != NULL, "gzip: decoded size reported: %.120s",
            one_line(text_of(r)));
    agt_result_free(r);

    r = fetch_url(url_of("/data.json"));
    snprintf(
        want, sizeof want,
        "Fetched %s (HTTP 200, application/json, 51 bytes): text passed through.\n\n{\"name\": "
        "\"agenttools\", \"tags\": [\"a\", \"b\"], \"n\": 3}\n",
        url_of("/data.json"));
    T_EQ_STR(text_of(r), want, "JSON passed through as it came");
    agt_result_free(r);

    snprintf(want, sizeof want, "HTTP://127.0.0.1:%d/plain.txt", srv.port);
    r = fetch_url(want);
    T_EQ_STR(body_of(r), "line one\n  indented <b>not html</b>\nlast line\n",
             "upper-case scheme accepted");
    agt_result_free(r);

    r = fetch_url(url_of("/image.png"));
    T_EQ_INT(r ? agt_result_is_error(r) : -1, 1, "binary type: error result");
    T_CHECK(strstr(text_of(r), "is image/png content (80 bytes)") != NULL,
            "binary type: type and size named: %s", one_line(text_of(r)));
    agt_result_free(r);
}

static void test_refused_schemes(void)
{
    int before = requests_seen();
    static const char *const bad[] = {"file:///etc/passwd", "ftp://127.0.0.1/x",
                                      "gopher://127.0.0.1/1", "javascript:alert(1)"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        agt_result *r = fetch_url(bad[i]);
        T_CHECK(r && agt_result_is_error(r) && strstr(text_of(r), "/url") != NULL,
                "%s: refused by the schema: %.120s", bad[i], one_line(text_of(r)));
        agt_result_free(r);
        agti_fetch_opts o = {.max_bytes = 1024,
                             .timeout_ms = 1000,
                             .connect_ms = 1000,
                             .max_redirects = 5,
                             .allow_private = true};
        agti_fetch_result fr;
        T_EQ_INT(agti_fetch(bad[i], &o, &fr), AGT_EINVAL, "%s: engine refuses it", bad[i]);
        T_CHECK(strstr(agt_error_message(), "only http:// and https://") != NULL, "%s: %s", bad[i],
                agt_error_message());
        agti_fetch_result_free(&fr);
    }
    char ftp[128];
    snprintf(ftp, sizeof ftp, "ftp://127.0.0.1:%d/plain.txt", srv.port);
    agti_fetch_opts o = {.max_bytes = 1024,
                         .timeout_ms = 1000,
                         .connect_ms = 1000,
                         .max_redirects = 5,
                         .allow_private = true};
    agti_fetch_result fr;
    T_EQ_INT(agti_fetch(ftp, &o, &fr), AGT_EINVAL, "ftp:// to the test server: refused");
    agti_fetch_result_free(&fr);
    T_EQ_INT(requests_seen(), before, "no request reached the server for refused schemes");
}

/* libcurl's own proxy variables apply: a dead proxy makes the fetch fail
 * until no_proxy exempts 127.0.0.1. */
static void test_proxy_env(void)
{
    unsetenv("no_proxy");
    unsetenv("NO_PROXY");
    setenv("http_proxy", "http://127.0.0.1:9", 1);
    agt_result *r = fetch_url(url_of("/plain.txt"));
    T_CHECK(r && agt_result_is_error(r), "http_proxy from the environment is used: %.120s",
            one_line(text_of(r)));
    agt_result_free(r);
    setenv("no_proxy", "127.0.0.1", 1);
    r = fetch_url(url_of("/plain.txt"));
    T_CHECK(r && !agt_result_is_error(r), "no_proxy from the environment is used");
    agt_result_free(r);
    unsetenv("http_proxy");
}

/* By default FetchURL connects to public addresses only, judged on the
 * address after DNS (localhost is a name): the server counts requests, and
 * none arrives. The same URL works once the host allows it. */
static void test_private_refused(agt_registry *reg, const char *root)
{
    agt_session *def = NULL;
    T_EQ_INT(agt_session_new(&def, reg, root), AGT_OK, "default session");
    int before = requests_seen();
    char urls[6][128], want[256];
    snprintf(urls[0], sizeof urls[0], "http://127.0.0.1:%d/plain.txt", srv.port);
    snprintf(urls[1], sizeof urls[1], "http://localhost:%d/plain.txt", srv.port);
    snprintf(urls[2], sizeof urls[2], "http://[::ffff:127.0.0.1]:%d/plain.txt", srv.port);
    snprintf(urls[3], sizeof urls[3], "http://0.0.0.0:%d/plain.txt", srv.port);
    snprintf(urls[4], sizeof urls[4], "http://169.254.169.254/latest/meta-data/");
    snprintf(urls[5], sizeof urls[5], "http://[::1]:%d/plain.txt", srv.port);
    static const char *const addr[6] = {"127.0.0.1",       NULL, "::ffff:127.0.0.1", "0.0.0.0",
                                        "169.254.169.254", "::1"};
    static const char *const what[6] = {"loopback",
                                        NULL,
                                        "loopback",
                                        "unspecified (0.0.0.0/8)",
                                        "link-local (169.254.0.0/16, cloud metadata)",
                                        "loopback (::1)"};
    for (int i = 0; i < 6; i++) {
        agt_result *r = NULL;
        char args[1024];
        snprintf(args, sizeof args, "{\"url\":\"%s\"}", urls[i]);
        T_EQ_INT(agt_session_dispatch(def, "p", "FetchURL", args, &r), AGT_OK, "%s: dispatched",
                 urls[i]);
        const char *t = r ? text_of(r) : "";
        T_CHECK(r && agt_result_is_error(r), "%s: refused by default: %s", urls[i], one_line(t));
        if (addr[i] != NULL) {
            snprintf(want, sizeof want, "it connects to %s, which is not a public address (%s)",
                     addr[i], what[i]);
            T_CHECK(strstr(t, want) != NULL, "%s: names the address: %s", urls[i], one_line(t));
        } else {
            T_CHECK(strstr(t, "which is not a public address (loopback") != NULL,
                    "%s: the name's address is judged: %s", urls[i], one_line(t));
        }
        T_CHECK(strstr(t, "plain text") == NULL, "%s: no content", urls[i]);
        agt_result_free(r);
    }
    T_EQ_INT(requests_seen(), before + 0, "no request reached the server by default");
    T_EQ_INT(agt_session_set_fetch_private(def, 1), AGT_OK, "allow private addresses");
    agt_result *r = fetch_url_in(def, urls[1]);
    T_CHECK(r && !agt_result_is_error(r), "allowed: localhost fetched: %s",
            r ? one_line(text_of(r)) : "");
    agt_result_free(r);
    T_EQ_INT(requests_seen(), before + 1, "allowed: the request reached the server");
    T_EQ_INT(agt_session_set_fetch_private(def, 0), AGT_OK, "refuse again");
    r = fetch_url_in(def, urls[0]);
    T_CHECK(r && agt_result_is_error(r), "refused again");
    agt_result_free(r);
    agt_session_free(def);
}

/* ---- a fake HTTP proxy on 127.0.0.1 ------------------------------------ */

/* Counts connections and keeps the first line of each request: a CONNECT
 * gets 403, a GET of a URL ending in /redir a 302 to the cloud metadata
 * address, any other GET 200 "via proxy\n"; every connection is closed. */
typedef struct fake_proxy {
    int lfd;
    int port;
    pthread_t th;
    pthread_mutex_t mu;
    int conns;
    char last[512];
    volatile int stop;
} fake_proxy;

static void *proxy_main(void *arg)
{
    fake_proxy *p = arg;
    for (;;) {
        int c = accept(p->lfd, NULL, NULL);
        if (c < 0)
            continue;
        if (p->stop) {
            close(c);
            break;
        }
        char req[8192];
        size_t got = 0;
        ssize_t n;
        while (got + 1 < sizeof req && (n = read(c, req + got, sizeof req - 1 - got)) > 0) {
            got += (size_t)n;
            req[got] = '\0';
            if (strstr(req, "\r\n\r\n") != NULL)
                break;
        }
        req[got] = '\0';
        size_t l1 = strcspn(req, "\r\n");
        pthread_mutex_lock(&p->mu);
        p->conns++;
        snprintf(p->last, sizeof p->last, "%.*s", (int)l1, req);
        pthread_mutex_unlock(&p->mu);
        const char *resp;
        if (strncmp(req, "CONNECT ", 8) == 0)
            resp = "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
        else if (l1 > 15 && strstr(req, "/redir HTTP/1.1") != NULL)
            resp = "HTTP/1.1 302 Found\r\nLocation: http://169.254.169.254/latest/meta-data/\r\n"
                   "Content-Length: 0\r\nConnection: close\r\n\r\n";
        else
            resp = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n"
                   "Connection: close\r\n\r\nvia proxy\n";
        (void)!write(c, resp, strlen(resp));
        close(c);
    }
    return NULL;
}

static int proxy_start(fake_proxy *p)
{
    memset(p, 0, sizeof *p);
    pthread_mutex_init(&p->mu, NULL);
    p->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof a;
    if (p->lfd < 0 || bind(p->lfd, (struct sockaddr *)&a, sizeof a) != 0 ||
        listen(p->lfd, 16) != 0 || getsockname(p->lfd, (struct sockaddr *)&a, &al) != 0)
        return -1;
    p->port = ntohs(a.sin_port);
    return pthread_create(&p->th, NULL, proxy_main, p) == 0 ? 0 : -1;
}

static void proxy_stop(fake_proxy *p)
{
    p->stop = 1;
    int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((uint16_t)p->port);
    (void)!connect(c, (struct sockaddr *)&a, sizeof a);
    pthread_join(p->th, NULL);
    close(c);
    close(p->lfd);
    pthread_mutex_destroy(&p->mu);
}

static int proxy_conns(fake_proxy *p, char *last, size_t cap)
{
    pthread_mutex_lock(&p->mu);
    int n = p->conns;
    if (last != NULL)
        snprintf(last, cap, "%s", p->last);
    pthread_mutex_unlock(&p->mu);
    return n;
}

/* With a proxy in the environment the request goes to the proxy, and the
 * target is judged before anything is sent: private, loopback, link-local
 * targets (by name, IPv6 and numeric forms too) are refused and the proxy
 * receives nothing, for plain requests, CONNECT tunnels and redirects. The
 * proxy itself is on 127.0.0.1 and is used: it is the host's choice. */
static void test_proxy_targets(agt_registry *reg, const char *root)
{
    fake_proxy px;
    if (!T_CHECK(proxy_start(&px) == 0, "fake proxy on 127.0.0.1"))
        return;
    char purl[64];
    snprintf(purl, sizeof purl, "http://127.0.0.1:%d", px.port);
    setenv("http_proxy", purl, 1);
    setenv("https_proxy", purl, 1);
    setenv("no_proxy", "127.0.0.1", 1);
    setenv("NO_PROXY", "127.0.0.1", 1);
    agt_session *def = NULL;
    T_EQ_INT(agt_session_new(&def, reg, root), AGT_OK, "default session (no private addresses)");
    char last[512];

    /* a public target: the proxy gets the request and its answer is used */
    agt_result *r = fetch_url_in(def, "http://93.184.215.14/ok");
    T_CHECK(r && !agt_result_is_error(r), "public target through the proxy: %s",
            one_line(text_of(r)));
    T_EQ_STR(body_of(r), "via proxy\n", "the proxy's answer");
    agt_result_free(r);
    T_EQ_INT(proxy_conns(&px, last, sizeof last), 1, "one connection to the proxy");
    T_EQ_STR(last, "GET http://93.184.215.14/ok HTTP/1.1", "the proxy got the GET");

    static const struct {
        const char *url, *addr, *what;
    } bad[] = {
        {"http://169.254.169.254/latest/meta-data/", "169.254.169.254",
         "link-local (169.254.0.0/16, cloud metadata)"},
        {"https://169.254.169.254/latest/meta-data/", "169.254.169.254",
         "link-local (169.254.0.0/16, cloud metadata)"},
        {"http://10.1.2.3/admin", "10.1.2.3", "private (10.0.0.0/8)"},
        {"https://10.1.2.3/admin", "10.1.2.3", "private (10.0.0.0/8)"},
        {"http://192.168.1.1/", "192.168.1.1", "private (192.168.0.0/16)"},
        {"http://[fd00:ec2::254]/latest/", "fd00:ec2::254", "unique local (fc00::/7)"},
        {"http://[::ffff:169.254.169.254]/", "::ffff:169.254.169.254",
         "link-local (169.254.0.0/16, cloud metadata)"},
        /* 169.254.169.254 as one decimal number (169*2^24 + 254*2^16 +
         * 169*2^8 + 254) */
        {"http://2852039166/latest/", "169.254.169.254",
         "link-local (169.254.0.0/16, cloud metadata)"},
        {"http://127.0.0.2:8080/", "127.0.0.2", "loopback"},
    };
    char want[1024];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = fetch_url_in(def, bad[i].url);
        snprintf(want, sizeof want,
                 "Could not fetch the URL: fetching %s was refused: it would go through the "
                 "proxy %s to %s, which is not a public address (%s); nothing was sent to the "
                 "proxy; FetchURL only reaches public internet addresses unless the host allows "
                 "private ones",
                 bad[i].url, purl, bad[i].addr, bad[i].what);
        T_CHECK(r && agt_result_is_error(r), "%s: refused", bad[i].url);
        T_EQ_STR(text_of(r), want, "%s: the message", bad[i].url);
        agt_result_free(r);
    }
    /* localhost: a name, resolved here (to 127.0.0.1 or ::1, both loopback) */
    r = fetch_url_in(def, "http://localhost:8080/");
    snprintf(want, sizeof want,
             "Could not fetch the URL: fetching http://localhost:8080/ was refused: it would go "
             "through the proxy %s to ",
             purl);
    T_CHECK(r && strncmp(text_of(r), want, strlen(want)) == 0 &&
                strstr(text_of(r), ", which is not a public address (loopback") != NULL,
            "localhost through the proxy refused: %s", one_line(text_of(r)));
    agt_result_free(r);
    T_EQ_INT(proxy_conns(&px, NULL, 0), 1, "the proxy received nothing for refused targets");

    /* a redirect the proxy answers with: the next hop is judged too */
    r = fetch_url_in(def, "http://93.184.215.14/redir");
    snprintf(want, sizeof want,
             "Could not fetch the URL: fetching http://169.254.169.254/latest/meta-data/ was "
             "refused: it would go through the proxy %s to 169.254.169.254, which is not a public "
             "address (link-local (169.254.0.0/16, cloud metadata)); nothing was sent to the "
             "proxy; FetchURL only reaches public internet addresses unless the host allows "
             "private ones",
             purl);
    T_EQ_STR(text_of(r), want, "a redirect to the metadata address through the proxy");
    agt_result_free(r);
    T_EQ_INT(proxy_conns(&px, last, sizeof last), 2, "only the first hop reached the proxy");
    T_EQ_STR(last, "GET http://93.184.215.14/redir HTTP/1.1", "the first hop");

    /* https: a CONNECT tunnel to a public target is asked for (403 here) */
    r = fetch_url_in(def, "https://93.184.215.14/");
    snprintf(want, sizeof want,
             "Could not fetch the URL: fetching https://93.184.215.14/ failed: the proxy %s "
             "answered HTTP 403 to the tunnel request (CONNECT)",
             purl);
    T_EQ_STR(text_of(r), want, "the proxy's 403 to CONNECT fails the fetch");
    agt_result_free(r);
    T_EQ_INT(proxy_conns(&px, last, sizeof last), 3, "the CONNECT reached the proxy");
    T_EQ_STR(last, "CONNECT 93.184.215.14:443 HTTP/1.1", "the CONNECT line");

    /* a target no_proxy exempts goes direct and is judged at connect */
    setenv("no_proxy", "127.0.0.1,10.0.0.0/8", 1);
    r = fetch_url_in(def, "http://10.1.2.3/admin");
    T_EQ_STR(text_of(r),
             "Could not fetch the URL: fetching http://10.1.2.3/admin was refused: it connects "
             "to 10.1.2.3, which is not a public address (private (10.0.0.0/8)); FetchURL only "
             "reaches public internet addresses unless the host allows private ones",
             "no_proxy CIDR: direct, refused at connect");
    agt_result_free(r);
    T_EQ_INT(proxy_conns(&px, NULL, 0), 3, "the proxy received nothing for it");
    setenv("no_proxy", "127.0.0.1", 1);

    /* a proxy URL with credentials: the message shows it without them */
    char cred[96];
    snprintf(cred, sizeof cred, "http://alice:s3cret@127.0.0.1:%d", px.port);
    setenv("http_proxy", cred, 1);
    r = fetch_url_in(def, "http://10.1.2.3/admin");
    snprintf(want, sizeof want,
             "Could not fetch the URL: fetching http://10.1.2.3/admin was refused: it would go "
             "through the proxy %s to 10.1.2.3, which is not a public address (private "
             "(10.0.0.0/8)); nothing was sent to the proxy; FetchURL only reaches public internet "
             "addresses unless the host allows private ones",
             purl);
    T_EQ_STR(text_of(r), want, "the proxy's user name and password are not shown");
    agt_result_free(r);
    setenv("http_proxy", purl, 1);

    /* the host allows private addresses: the proxy gets the private target */
    T_EQ_INT(agt_session_set_fetch_private(def, 1), AGT_OK, "allow private addresses");
    r = fetch_url_in(def, "http://10.1.2.3/x");
    T_CHECK(r && !agt_result_is_error(r), "allowed: a private target through the proxy");
    agt_result_free(r);
    T_EQ_INT(proxy_conns(&px, last, sizeof last), 4, "allowed: it reached the proxy");
    T_EQ_STR(last, "GET http://10.1.2.3/x HTTP/1.1", "allowed: the GET");
    agt_session_free(def);
    unsetenv("http_proxy");
    unsetenv("https_proxy");
    proxy_stop(&px);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        printf("1..0 # SKIP usage: test-fetch-url PYTHON SERVER_SCRIPT\n");
        return 0;
    }
    setenv("no_proxy", "127.0.0.1", 1);
    setenv("NO_PROXY", "127.0.0.1", 1);
    unsetenv("http_proxy");
    unsetenv("HTTP_PROXY");
    unsetenv("all_proxy");
    unsetenv("ALL_PROXY");
    if (!T_CHECK(fake_server_start(&srv, argv[1], argv[2]) == 0, "local server on 127.0.0.1"))
        return t_done();
    char root[] = "/tmp/agt-fetch-XXXXXX";
    T_CHECK(mkdtemp(root) != NULL, "workspace");
    agt_registry *reg = NULL;
    agt_registry_new(&reg);
    T_EQ_INT(agt_registry_load_builtin(reg, "chat"), AGT_OK, "chat set");
    T_EQ_INT(agt_registry_is_offered(reg, "FetchURL", AGT_PHASE_MAIN), 1,
             "FetchURL is offered without a host provider (built in)");
    T_EQ_INT(agt_session_new(&sess, reg, root), AGT_OK, "session (manual mode)");
    /* the test server is on 127.0.0.1: this session allows it */
    T_EQ_INT(agt_session_set_fetch_private(sess, 1), AGT_OK, "allow private addresses");
    T_EQ_INT(agt_session_set_fetch_private(NULL, 1), AGT_EINVAL, "set_fetch_private: NULL");
    test_private_refused(reg, root);

    /* manual mode: FetchURL runs without asking (TOOLS.md, Approval) */
    agt_result *r = NULL;
    char args[256];
    snprintf(args, sizeof args, "{\"url\":\"%s\"}", url_of("/plain.txt"));
    T_EQ_INT(agt_session_dispatch(sess, "a", "FetchURL", args, &r), AGT_OK,
             "manual mode: FetchURL is not held for approval");
    agt_result_free(r);

    test_html();
    test_redirects();
    test_status_and_caps();
    test_charsets();
    test_passthrough();
    test_refused_schemes();
    test_proxy_env();
    test_proxy_targets(reg, root);

    agt_session_free(sess);
    agt_registry_free(reg);
    rmdir(root);
    fake_server_stop(&srv);
    return t_done();
}
