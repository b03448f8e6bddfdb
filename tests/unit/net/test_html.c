/*
 * Unit tests of HTML to text (lib/net/html.c) on inputs the fuzz target
 * fuzz_html found.
 */
#include <string.h>

#include "core/core.h"
#include "harness.h"
#include "net/net.h"

/* A document declared UTF-8 (by the HTTP charset) that holds bytes invalid
 * in UTF-8: libxml2 passed them through, so the FetchURL text was not
 * UTF-8. Each invalid byte becomes U+FFFD. */
static void test_invalid_utf8(void)
{
    const char doc[] = "<p>caf\xe9 \x97ok\xc3\xa9</p>";
    agti_buf b = AGTI_BUF_INIT;
    T_EQ_INT(agti_html_to_text(doc, sizeof doc - 1, "utf-8", NULL, &b), AGT_OK, "converted");
    T_CHECK(agti_utf8_valid(agti_buf_cstr(&b), b.len), "the text is UTF-8");
    T_EQ_STR(agti_buf_cstr(&b), "caf\xef\xbf\xbd \xef\xbf\xbdok\xc3\xa9",
             "invalid bytes replaced, valid ones kept");
    agti_buf_free(&b);

    /* text already in the buffer stays as it is (a paragraph starts after a
     * blank line) */
    agti_buf_puts(&b, "before\n");
    T_EQ_INT(agti_html_to_text(doc, sizeof doc - 1, "utf-8", NULL, &b), AGT_OK,
             "converted after existing text");
    T_EQ_STR(agti_buf_cstr(&b), "before\n\ncaf\xef\xbf\xbd \xef\xbf\xbdok\xc3\xa9",
             "existing text kept, the new text cleaned");
    agti_buf_free(&b);

    /* the same bytes declared Latin-1 are characters, nothing replaced */
    T_EQ_INT(agti_html_to_text(doc, sizeof doc - 1, "iso-8859-1", NULL, &b), AGT_OK,
             "converted as Latin-1");
    T_EQ_STR(agti_buf_cstr(&b), "caf\xc3\xa9 \xc2\x97ok\xc3\x83\xc2\xa9", "Latin-1 decoded");
    agti_buf_free(&b);
}

int main(void)
{
    if (!agti_html_available()) {
        printf("1..0 # SKIP this build has no HTML parser (libxml2)\n");
        return 0;
    }
    test_invalid_utf8();
    return t_done();
}
