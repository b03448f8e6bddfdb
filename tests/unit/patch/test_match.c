/* The matching ladder of lib/patch on its own: which level decides, the
 * span it maps back to, the count of an ambiguous level, and how a
 * replacement is re-ended and re-indented. Expected values by hand. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "patch/patch.h"

static agti_match find(const char *text, const char *old, int max)
{
    agti_match m;
    if (agti_match_find(text, strlen(text), old, strlen(old), max, &m) != AGT_OK)
        memset(&m, 0xff, sizeof m);
    return m;
}

static void check_adapt(const char *text, const char *old, const char *nw, const char *want,
                        const char *name)
{
    agti_match m = find(text, old, AGTI_MATCH_UNICODE);
    size_t n = 0;
    char *r = m.count == 1
                  ? agti_match_adapt(text, strlen(text), &m, old, strlen(old), nw, strlen(nw), &n)
                  : NULL;
    T_EQ_STR(r, want, "adapt: %s", name);
    free(r);
}

int main(void)
{
    agti_match m = find("x\nab\nab\n", "ab", AGTI_MATCH_UNICODE);
    T_EQ_INT(m.level, AGTI_MATCH_EXACT, "exact level");
    T_EQ_INT(m.count, 2, "exact: two places");
    T_EQ_INT(m.lines[0], 2, "exact: first place line");
    T_EQ_INT(m.lines[1], 3, "exact: second place line");

    m = find("a\nb\nc\r\nd\n", "c\nd", AGTI_MATCH_UNICODE);
    T_EQ_INT(m.level, AGTI_MATCH_EOL, "mixed endings: level 1");
    T_EQ_INT(m.count, 1, "mixed endings: one place");
    T_EQ_INT(m.start, 4, "mixed endings: span start");
    T_EQ_INT(m.end, 8, "mixed endings: span end covers the CR");
    T_EQ_STR(m.why,
             "matched after normalising line endings: the file mixes LF and CRLF line "
             "endings",
             "mixed endings: why");

    m = find("a\nb\nc\r\nd\n", "c\nd", AGTI_MATCH_EXACT);
    T_EQ_INT(m.count, 0, "max level exact: no ladder");

    m = find("k = 1 \t\nk = 2\n", "k = 1\nk", AGTI_MATCH_UNICODE);
    T_EQ_INT(m.level, AGTI_MATCH_TRAILING, "trailing: level 2");
    T_EQ_INT(m.start, 0, "trailing: start");
    T_EQ_INT(m.end, 9, "trailing: end after the second k (offset 8)");

    m = find("\t\tfoo();\n", "  foo();", AGTI_MATCH_UNICODE);
    T_EQ_INT(m.level, AGTI_MATCH_INDENT, "indent: level 3");
    T_EQ_INT(m.start, 0, "indent: span starts at the line start");
    T_EQ_INT(m.end, 8, "indent: end");

    m = find("a\xe2\x80\x93"
             "b\n",
             "a-b", AGTI_MATCH_UNICODE);
    T_EQ_INT(m.level, AGTI_MATCH_UNICODE, "en dash: level 4");
    T_EQ_INT(m.end, 5, "en dash: span covers its three bytes");
    T_EQ_STR(m.why,
             "matched after folding Unicode look-alikes: the file has U+2013 (en dash) "
             "at line 1",
             "en dash: why");

    m = find("x\t\nx \n", "x\n", AGTI_MATCH_UNICODE);
    T_EQ_INT(m.level, AGTI_MATCH_TRAILING, "ambiguous at level 2 stops there");
    T_EQ_INT(m.count, 2, "ambiguous: two places");

    m = find("hello\n", "bye", AGTI_MATCH_UNICODE);
    T_EQ_INT(m.count, 0, "no level matches");
    m = find("hello\n", " \t", AGTI_MATCH_UNICODE);
    T_EQ_INT(m.count, 0, "white space only old never matches fuzzily");

    check_adapt("a\r\nb\nc\n", "a\nb\nc", "1\n2\n3\n4", "1\r\n2\n3\n4", "endings per line");
    check_adapt("\tif x:\n\t\ty\n", "    if x:\n        y", "    if x:\n        y\n        z",
                "\tif x:\n\t\ty\n\t\tz", "tabs");
    check_adapt("  a\n    b\n", "a\n  b", "a\n  b\n    c\nd", "  a\n    b\n      c\n  d",
                "uniform offset and extrapolated level");
    check_adapt("\tx\n", "    x", "    x\n\n    y", "\tx\n\n\ty", "blank line stays empty");
    return t_done();
}
