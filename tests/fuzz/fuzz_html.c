/*
 * libFuzzer target for HTML to text (lib/net/html.c, over libxml2's HTML
 * parser). Input: flags byte (bits 0-1: no charset, "utf-8",
 * "iso-8859-1", "windows-1252"; bit 2: no base URL), then the document.
 * Invariants: the text is valid UTF-8 without NUL bytes; the same document
 * converts to the same text twice.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "net/net.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const charsets[4] = {NULL, "utf-8", "iso-8859-1", "windows-1252"};
    if (size < 1 || size > 65536 || !agti_html_available())
        return 0;
    const char *cs = charsets[data[0] & 3];
    const char *base = data[0] & 4 ? NULL : "https://example.org/docs/page.html?q=1";
    agti_buf a = AGTI_BUF_INIT, b = AGTI_BUF_INIT;
    int rc = agti_html_to_text((const char *)data + 1, size - 1, cs, base, &a);
    int rc2 = agti_html_to_text((const char *)data + 1, size - 1, cs, base, &b);
    if (rc != rc2 || a.len != b.len || (a.len && memcmp(a.ptr, b.ptr, a.len) != 0))
        abort();
    if (rc == AGT_OK && !a.oom) {
        if (!agti_utf8_valid(agti_buf_cstr(&a), a.len) || memchr(agti_buf_cstr(&a), 0, a.len))
            abort();
    }
    agti_buf_free(&a);
    agti_buf_free(&b);
    return 0;
}
