/*
 * FetchURL (lib/net) against fake_server.py's /web/ pages on 127.0.0.1:
 * HTML reduced to main text, a non-UTF-8 charset (HTML and plain text),
 * markdown passed through, gzip, a redirect, a redirect loop, a redirect to
 * ftp:, a 404, a 10 MB body (cut at 5 MB), a binary type, a non-http URL and
 * a slow server (time cap).
 */
#include <stdlib.h>
#include <string.h>

#include "agenttools/registry.h"
#include "agenttools/session.h"
#include "agent_fixture.h"
#include "harness.h"
#include "net/net.h"

static fake_server srv;
static agt_session *sess;

static agt_result *fetch(const char *path)
{
    char args[512];
    if (strstr(path, "://"))
        snprintf(args, sizeof args, "{\"url\":\"%s\"}", path);
    else
        snprintf(args, sizeof args, "{\"url\":\"http://127.0.0.1:%d/web/%s\"}", srv.port, path);
    agt_result *r = NULL;
    int rc = agt_session_dispatch(sess, "f1", "FetchURL", args, &r);
    if (rc != AGT_OK) {
        t_diag("dispatch failed: %d %s", rc, agt_error_message());
        return NULL;
    }
    return r;
}

/* Text for a TAP line: newlines flattened, at most 200 bytes. */
static const char *flat(const char *s)
{
    static char buf[201];
    size_t i = 0;
    for (; s && s[i] && i < 200; i++)
        buf[i] = (s[i] == '\n' || s[i] == '\r') ? ' ' : s[i];
    buf[i] = 0;
    return buf;
}

/* The text after the header line. */
static const char *body_of(const agt_result *r)
{
    const char *t = r ? agt_result_text(r) : "";
    const char *p = strstr(t, "\n\n");
    return p ? p + 2 : "";
}

int main(int argc, char **argv)
{
    int status;
    if (!fx_begin(argc, argv, "test-fetch", NULL, 0, NULL, &srv, "fake server started", &status))
        return status;
    agt_registry *reg = NULL;
    agt_registry_new(&reg);
    agt_registry_load_builtin(reg, "chat");
    agt_registry_set_provider(reg, "FetchURL", agti_tool_fetchurl, NULL);
    agt_session_new(&sess, reg, "/tmp");
    agt_session_set_mode(sess, AGT_MODE_YOLO);
    agt_session_set_fetch_private(sess, 1); /* the fake server is on 127.0.0.1 */
    char want[1024];

    agt_result *r = fetch("page.html");
    if (agti_html_available()) {
        snprintf(want, sizeof want,
                 "Title: Test Page\n\n# Hello\n\nFirst paragraph with "
                 "[a link](http://127.0.0.1:%d/web/docs/a.html) and `x = 1`.\n\n- one\n- two\n\n"
                 "```\nint main(void)\n{\n    return 0;\n}\n```",
                 srv.port);
        T_EQ_STR(body_of(r), want,
                 "HTML: main text, headings, link, code, list; nav/script/style/footer dropped");
        T_CHECK(strstr(agt_result_text(r), "main text extracted from HTML") != NULL,
                "HTML: the result says it extracted: %s", flat(agt_result_text(r)));
    } else {
        T_CHECK(strstr(agt_result_text(r), "raw HTML (no HTML parser: libxml2 is not installed)") != NULL,
                "HTML without a parser: raw with a note");
        t_skip("no libxml2: extraction not tested");
    }
    T_EQ_INT(agt_result_is_error(r), 0, "HTML: not an error");
    agt_result_free(r);

    r = fetch("latin1.html");
    if (agti_html_available())
        T_EQ_STR(body_of(r), "caf\xc3\xa9", "ISO-8859-1 HTML converted to UTF-8");
    else
        t_skip("no libxml2");
    agt_result_free(r);

    r = fetch("latin1.txt");
    T_EQ_STR(body_of(r), "na\xc3\xafve caf\xc3\xa9", "ISO-8859-1 text converted to UTF-8");
    T_CHECK(strstr(agt_result_text(r), "text passed through") != NULL,
            "plain text: says passed through");
    agt_result_free(r);

    r = fetch("gzip.txt");
    T_EQ_STR(body_of(r), "compressed text\n", "gzip body decoded");
    agt_result_free(r);

    r = fetch("redirect");
    T_EQ_STR(body_of(r), "# Title\n\n*emphasis*\n", "redirect followed to the markdown");
    snprintf(want, sizeof want,
             "Fetched http://127.0.0.1:%d/web/readme.md (HTTP 200, text/markdown, 20 bytes, after "
             "1 redirect): markdown passed through.",
             srv.port);
    T_CHECK(strncmp(agt_result_text(r), want, strlen(want)) == 0, "redirect: header line: %s",
            flat(agt_result_text(r)));
    agt_result_free(r);

    r = fetch("loop");
    T_EQ_INT(agt_result_is_error(r), 1, "redirect loop: error result");
    T_CHECK(strstr(agt_result_text(r), "too many redirects (more than 10)") != NULL,
            "redirect loop: %s", flat(agt_result_text(r)));
    agt_result_free(r);

    r = fetch("toftp");
    T_EQ_INT(agt_result_is_error(r), 1, "redirect to ftp: error result");
    T_CHECK(strstr(agt_result_text(r), "other than http or https") != NULL, "redirect to ftp: %s",
            flat(agt_result_text(r)));
    agt_result_free(r);

    r = fetch("missing");
    T_EQ_INT(agt_result_is_error(r), 1, "404: error result");
    snprintf(want, sizeof want,
             "HTTP 404 from http://127.0.0.1:%d/web/missing: the page was not fetched. Response "
             "starts: no such page",
             srv.port);
    T_EQ_STR(agt_result_text(r), want, "404: status and body start");
    agt_result_free(r);

    r = fetch("big");
    T_EQ_INT(agt_result_is_error(r), 0, "10 MB: not an error");
    T_CHECK(strstr(agt_result_text(r), "The body was cut at 5242880 bytes.") != NULL,
            "10 MB: cut at 5 MB");
    T_CHECK(strstr(agt_result_text(r), "Showing the first 100000 of 5242880 bytes of text.") !=
                NULL,
            "10 MB: text capped at 100000 bytes");
    T_EQ_INT(strlen(body_of(r)), 100000, "10 MB: 100000 bytes shown");
    agt_result_free(r);

    r = fetch("image.png");
    T_EQ_INT(agt_result_is_error(r), 1, "binary: error result");
    T_CHECK(strstr(agt_result_text(r), "is image/png content (8 bytes)") != NULL,
            "binary: type and size: %s", flat(agt_result_text(r)));
    agt_result_free(r);

    r = fetch("file:///etc/passwd");
    T_EQ_INT(agt_result_is_error(r), 1, "file: URL refused");
    T_CHECK(strstr(agt_result_text(r), "does not match pattern") != NULL,
            "file: URL fails the schema: %s", flat(agt_result_text(r)));
    agt_result_free(r);
    agti_fetch_opts o0 = {1024, 1000, 1000, 5, true};
    agti_fetch_result fr0;
    T_EQ_INT(agti_fetch("file:///etc/passwd", &o0, &fr0), AGT_EINVAL,
             "engine: file: URL → AGT_EINVAL");
    T_CHECK(strstr(agt_error_message(), "only http:// and https://") != NULL, "engine: %s",
            agt_error_message());
    agti_fetch_result_free(&fr0);

    char url[256];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/web/slow", srv.port);
    agti_fetch_opts o = {1024, 500, 1000, 5, true};
    agti_fetch_result fr;
    T_EQ_INT(agti_fetch(url, &o, &fr), AGT_ETIMEOUT, "slow server: time cap → AGT_ETIMEOUT");
    agti_fetch_result_free(&fr);

    agt_session_free(sess);
    agt_registry_free(reg);
    return fx_end(&srv, NULL);
}
