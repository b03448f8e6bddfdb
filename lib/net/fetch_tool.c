/*
 * FetchURL provider: fetches an http(s) URL and gives the model readable
 * text. HTML is reduced to its main text (html.c); plain text, markdown,
 * JSON and XML pass through (converted to UTF-8 from their charset); other
 * types are refused with their type and size.
 */
#include <errno.h>
#include <iconv.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "net.h"
#include "session/fs_settings.h"

#define FETCH_MAX_BYTES ((size_t)5 << 20)
#define FETCH_MAX_TEXT ((size_t)100000)
#define FETCH_TIMEOUT_MS 30000
#define FETCH_MAX_REDIRECTS 10

/* The charset parameter of a Content-Type, copied into buf; NULL when none. */
static const char *charset_of(const char *ct, char *buf, size_t cap)
{
    const char *p = ct ? strcasestr(ct, "charset=") : NULL;
    if (!p)
        return NULL;
    p += 8;
    if (*p == '"')
        p++;
    size_t n = strcspn(p, "\"; \t");
    if (n == 0 || n >= cap)
        return NULL;
    memcpy(buf, p, n);
    buf[n] = 0;
    return buf;
}

/* WHATWG Encoding: browsers decode the Latin-1 and ASCII labels as
 * windows-1252, and pages labelled so often use its 0x80-0x9F characters
 * (curly quotes, dashes, the euro sign). */
static const char *browser_charset(const char *cs)
{
    static const char *const latin1[] = {"iso-8859-1", "iso8859-1",   "iso_8859-1", "latin1",
                                         "l1",         "cp819",       "ibm819",     "us-ascii",
                                         "ascii",      "csisolatin1", NULL};
    for (size_t i = 0; cs && latin1[i]; i++)
        if (strcasecmp(cs, latin1[i]) == 0)
            return "WINDOWS-1252";
    return cs;
}

static bool type_is(const char *ct, const char *prefix)
{
    return ct && strncasecmp(ct, prefix, strlen(prefix)) == 0;
}

static bool textual(const char *ct)
{
    if (type_is(ct, "text/") || type_is(ct, "application/json") || type_is(ct, "application/xml") ||
        type_is(ct, "application/javascript") || type_is(ct, "application/x-yaml") ||
        type_is(ct, "application/yaml") || type_is(ct, "application/toml"))
        return true;
    const char *semi = strchr(ct, ';');
    size_t n = semi ? (size_t)(semi - ct) : strlen(ct);
    return (n > 5 && strncasecmp(ct + n - 5, "+json", 5) == 0) ||
           (n > 4 && strncasecmp(ct + n - 4, "+xml", 4) == 0);
}

/* Appends text converted from charset to UTF-8 (invalid sequences → U+FFFD). */
static void to_utf8(agti_buf *out, const char *s, size_t len, const char *charset)
{
    if (!charset || strcasecmp(charset, "utf-8") == 0 || strcasecmp(charset, "utf8") == 0) {
        agti_utf8_sanitize(out, s, len);
        return;
    }
    iconv_t cd = iconv_open("UTF-8", charset);
    if (cd == (iconv_t)-1) {
        agti_utf8_sanitize(out, s, len);
        return;
    }
    agti_buf tmp = AGTI_BUF_INIT;
    char *in = (char *)s;
    size_t left = len;
    char chunk[4096];
    while (left > 0) {
        char *o = chunk;
        size_t room = sizeof chunk;
        size_t r = iconv(cd, &in, &left, &o, &room);
        agti_buf_put(&tmp, chunk, sizeof chunk - room);
        if (r == (size_t)-1 && errno != E2BIG) {
            agti_buf_puts(&tmp, "\xef\xbf\xbd"); /* skip one undecodable byte */
            in++;
            left--;
        }
    }
    iconv_close(cd);
    agti_utf8_sanitize(out, agti_buf_cstr(&tmp), tmp.len);
    agti_buf_free(&tmp);
}

static bool looks_html(const char *s, size_t len)
{
    while (len && (*s == ' ' || *s == '\n' || *s == '\r' || *s == '\t')) {
        s++;
        len--;
    }
    return (len >= 9 && strncasecmp(s, "<!doctype", 9) == 0) ||
           (len >= 5 && strncasecmp(s, "<html", 5) == 0);
}

static int finish(agt_call *call, agti_buf *out, bool error)
{
    if (out->oom) {
        agti_buf_free(out);
        return agti_oom();
    }
    int rc = error ? agt_call_set_error(call, agti_buf_cstr(out))
                   : agt_call_set_text(call, agti_buf_cstr(out));
    agti_buf_free(out);
    return rc;
}

int agti_tool_fetchurl(agt_call *call, void *payload)
{
    (void)payload;
    json_t *args = json_loads(agt_call_args(call), 0, NULL);
    const char *url = json_string_value(json_object_get(args, "url"));
    agti_buf out = AGTI_BUF_INIT;
    if (!url || !*url) {
        json_decref(args);
        agti_buf_puts(&out, "FetchURL needs a \"url\" string (http:// or https://).");
        return finish(call, &out, true);
    }
    agti_fetch_opts o = {FETCH_MAX_BYTES, FETCH_TIMEOUT_MS, 10000, FETCH_MAX_REDIRECTS,
                         agti_session_fetch_private(agt_call_session(call))};
    agti_fetch_result r;
    int rc = agti_fetch(url, &o, &r);
    if (rc != AGT_OK) {
        agti_buf_printf(&out, "Could not fetch the URL: %s", agt_error_message());
        agti_fetch_result_free(&r);
        json_decref(args);
        return rc == AGT_ENOMEM ? rc : finish(call, &out, true);
    }
    const char *ct = r.content_type;
    char csbuf[64];
    const char *cs = browser_charset(charset_of(ct, csbuf, sizeof csbuf));
    const char *body = agti_buf_cstr(&r.body);
    if (r.status < 200 || r.status >= 300) {
        agti_buf_printf(&out, "HTTP %ld from %s: the page was not fetched.", r.status, r.final_url);
        if (r.body.len) {
            agti_buf snippet = AGTI_BUF_INIT;
            size_t n = agti_utf8_floor(body, r.body.len < 300 ? r.body.len : 300);
            to_utf8(&snippet, body, n, cs);
            agti_buf_printf(&out, " Response starts: %s", agti_buf_cstr(&snippet));
            agti_buf_free(&snippet);
        }
        agti_fetch_result_free(&r);
        json_decref(args);
        return finish(call, &out, true);
    }
    bool html = type_is(ct, "text/html") || type_is(ct, "application/xhtml+xml") ||
                (!ct && looks_html(body, r.body.len));
    bool text = !html && (ct ? textual(ct) : agti_utf8_valid(body, r.body.len));
    if (!html && !text) {
        agti_buf_printf(&out,
                        "%s is %s content (%zu bytes%s), which FetchURL does not show: it returns "
                        "text, HTML and markdown only.",
                        r.final_url, ct ? ct : "binary", r.body.len, r.truncated ? " or more" : "");
        agti_fetch_result_free(&r);
        json_decref(args);
        return finish(call, &out, true);
    }
    agti_buf content = AGTI_BUF_INIT;
    const char *how;
    if (html && agti_html_available()) {
        rc = agti_html_to_text(body, r.body.len, cs, r.final_url, &content);
        how = "main text extracted from HTML (scripts, styles and navigation dropped)";
        if (rc != AGT_OK) {
            agti_buf_truncate(&content, 0);
            to_utf8(&content, body, r.body.len, cs);
            how = "raw HTML (the HTML parser failed on it)";
        }
    } else if (html) {
        to_utf8(&content, body, r.body.len, cs);
        how = "raw HTML (no HTML parser: libxml2 is not installed)";
    } else {
        to_utf8(&content, body, r.body.len, cs);
        how = type_is(ct, "text/markdown") ? "markdown passed through" : "text passed through";
    }
    agti_buf_printf(&out, "Fetched %s (HTTP %ld, %s, %zu bytes", r.final_url, r.status,
                    ct ? ct : "no content type", r.body.len);
    if (r.redirects)
        agti_buf_printf(&out, ", after %ld redirect%s", r.redirects, r.redirects == 1 ? "" : "s");
    agti_buf_printf(&out, "): %s.", how);
    if (r.truncated)
        agti_buf_printf(&out, " The body was cut at %zu bytes.", o.max_bytes);
    size_t keep = content.len;
    if (keep > FETCH_MAX_TEXT) {
        keep = agti_utf8_floor(agti_buf_cstr(&content), FETCH_MAX_TEXT);
        agti_buf_printf(&out, " Showing the first %zu of %zu bytes of text.", keep, content.len);
    }
    agti_buf_puts(&out, "\n\n");
    agti_buf_put(&out, agti_buf_cstr(&content), keep);
    if (content.oom)
        out.oom = true;
    agti_buf_free(&content);
    agti_fetch_result_free(&r);
    json_decref(args);
    return finish(call, &out, false);
}
