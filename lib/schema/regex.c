/* ECMA-262 regular expressions ("pattern", "patternProperties", format
 * "regex") on PCRE2. The differences that matter for JSON Schema are
 * translated: \d, \w and \b are ASCII-only in ECMA-262, \s is its WhiteSpace
 * and LineTerminator set (with U+FEFF, without U+0085), "." stops at the four
 * line terminators, \uXXXX and \u{X...} escapes, "[^]" and "[]", a literal "["
 * inside a class, and "$" only matching at the very end. What ECMA-262 (in
 * its Unicode mode, as JSON Schema uses it) rejects is rejected: escapes of
 * letters it does not define (\a, \A, \Z, ...) and "(?" groups other than
 * (?:, (?=, (?!, (?<=, (?<! and (?<name> (no inline flags, comments or
 * Python's (?P...)). */
#include <stdio.h>
#include <string.h>

#include "schema_priv.h"

static bool is_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* ECMA-262 accepts the long names of general categories ("Letter") and the
 * "General_Category=" / "gc=" / "Script=" / "sc=" / "Script_Extensions=" /
 * "scx=" forms; PCRE2 10.42 knows only the short names and bare script names. */
static const struct {
    const char *lng, *shrt;
} gc_names[] = {
    {"Letter", "L"},
    {"Cased_Letter", "L&"},
    {"Uppercase_Letter", "Lu"},
    {"Lowercase_Letter", "Ll"},
    {"Titlecase_Letter", "Lt"},
    {"Modifier_Letter", "Lm"},
    {"Other_Letter", "Lo"},
    {"Mark", "M"},
    {"Combining_Mark", "M"},
    {"Nonspacing_Mark", "Mn"},
    {"Spacing_Mark", "Mc"},
    {"Enclosing_Mark", "Me"},
    {"Number", "N"},
    {"Decimal_Number", "Nd"},
    {"digit", "Nd"},
    {"Letter_Number", "Nl"},
    {"Other_Number", "No"},
    {"Punctuation", "P"},
    {"punct", "P"},
    {"Connector_Punctuation", "Pc"},
    {"Dash_Punctuation", "Pd"},
    {"Open_Punctuation", "Ps"},
    {"Close_Punctuation", "Pe"},
    {"Initial_Punctuation", "Pi"},
    {"Final_Punctuation", "Pf"},
    {"Other_Punctuation", "Po"},
    {"Symbol", "S"},
    {"Math_Symbol", "Sm"},
    {"Currency_Symbol", "Sc"},
    {"Modifier_Symbol", "Sk"},
    {"Other_Symbol", "So"},
    {"Separator", "Z"},
    {"Space_Separator", "Zs"},
    {"Line_Separator", "Zl"},
    {"Paragraph_Separator", "Zp"},
    {"Other", "C"},
    {"Control", "Cc"},
    {"cntrl", "Cc"},
    {"Format", "Cf"},
    {"Surrogate", "Cs"},
    {"Private_Use", "Co"},
    {"Unassigned", "Cn"},
};

/* Appends the PCRE2 form of a property name (the text between the braces). */
static void put_property(agti_buf *out, const char *name, size_t n)
{
    static const char *prefixes[] = {
        "General_Category=", "gc=", "Script=", "sc=", "Script_Extensions=", "scx="};
    for (size_t k = 0; k < sizeof prefixes / sizeof prefixes[0]; k++) {
        size_t pl = strlen(prefixes[k]);
        if (n > pl && memcmp(name, prefixes[k], pl) == 0) {
            name += pl;
            n -= pl;
            break;
        }
    }
    for (size_t k = 0; k < sizeof gc_names / sizeof gc_names[0]; k++) {
        if (strlen(gc_names[k].lng) == n && memcmp(gc_names[k].lng, name, n) == 0) {
            agti_buf_puts(out, gc_names[k].shrt);
            return;
        }
    }
    agti_buf_put(out, name, n);
}

/* ECMA-262 WhiteSpace and LineTerminator code points (21.2.2.12, 11.2, 11.3). */
#define ECMA_SPACE                                                                                 \
    "\\t\\n\\x{0b}\\f\\r \\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}"  \
    "\\x{3000}\\x{feff}"
#define ECMA_WORD "A-Za-z0-9_"

/* Returns NULL, or what ECMA-262 rejects in the pattern. */
static const char *translate(const char *s, size_t n, agti_buf *out)
{
    bool in_class = false;
    size_t i = 0;
    while (i < n) {
        char c = s[i];
        if (!in_class && c == '(' && i + 1 < n && s[i + 1] == '?') {
            char k = i + 2 < n ? s[i + 2] : '\0';
            char k2 = i + 3 < n ? s[i + 3] : '\0';
            bool ok = k == ':' || k == '=' || k == '!' ||
                      (k == '<' && (k2 == '=' || k2 == '!' || (k2 >= 'A' && k2 <= 'Z') ||
                                    (k2 >= 'a' && k2 <= 'z') || k2 == '_' || k2 == '$'));
            if (!ok)
                return "only (?:, (?=, (?!, (?<=, (?<! and (?<name> groups are ECMA-262 (no "
                       "inline flags, comments or (?P...))";
        }
        if (!in_class && c == '.') {
            agti_buf_puts(out, "[^\\n\\r\\x{2028}\\x{2029}]");
            i++;
            continue;
        }
        if (c == '\\' && i + 1 < n) {
            char e = s[i + 1];
            i += 2;
            switch (e) {
            case 's':
                agti_buf_puts(out, in_class ? ECMA_SPACE : "[" ECMA_SPACE "]");
                continue;
            case 'S':
                agti_buf_puts(out, in_class ? "\\S" : "[^" ECMA_SPACE "]");
                continue;
            case 'b':
                if (in_class) {
                    agti_buf_puts(out, "\\x{08}"); /* backspace inside a class */
                    continue;
                }
                agti_buf_puts(out, "(?:(?<=[" ECMA_WORD "])(?![" ECMA_WORD "])|(?<![" ECMA_WORD
                                   "])(?=[" ECMA_WORD "]))");
                continue;
            case 'B':
                agti_buf_puts(out, "(?:(?<=[" ECMA_WORD "])(?=[" ECMA_WORD "])|(?<![" ECMA_WORD
                                   "])(?![" ECMA_WORD "]))");
                continue;
            case 'd':
                agti_buf_puts(out, in_class ? "0-9" : "[0-9]");
                continue;
            case 'D':
                agti_buf_puts(out, in_class ? "\\D" : "[^0-9]");
                continue;
            case 'w':
                agti_buf_puts(out, in_class ? "A-Za-z0-9_" : "[A-Za-z0-9_]");
                continue;
            case 'W':
                agti_buf_puts(out, in_class ? "\\W" : "[^A-Za-z0-9_]");
                continue;
            case 'p':
            case 'P':
                if (i < n && s[i] == '{') {
                    const char *close = memchr(s + i, '}', n - i);
                    if (close) {
                        agti_buf_putc(out, '\\');
                        agti_buf_putc(out, e);
                        agti_buf_putc(out, '{');
                        put_property(out, s + i + 1, (size_t)(close - (s + i + 1)));
                        agti_buf_putc(out, '}');
                        i = (size_t)(close - s) + 1;
                        continue;
                    }
                }
                agti_buf_putc(out, '\\');
                agti_buf_putc(out, e);
                continue;
            case 'u':
                if (i + 4 <= n && is_hex(s[i]) && is_hex(s[i + 1]) && is_hex(s[i + 2]) &&
                    is_hex(s[i + 3])) {
                    agti_buf_puts(out, "\\x{");
                    agti_buf_put(out, s + i, 4);
                    agti_buf_putc(out, '}');
                    i += 4;
                    continue;
                }
                if (i < n && s[i] == '{') {
                    agti_buf_puts(out, "\\x");
                    continue;
                }
                agti_buf_putc(out, 'u');
                continue;
            case 'f':
            case 'n':
            case 'r':
            case 't':
            case 'v':
            case 'c':
            case 'x':
            case 'k':
                agti_buf_putc(out, '\\');
                agti_buf_putc(out, e);
                continue;
            default:
                if ((e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z'))
                    return "an escaped letter that ECMA-262 does not define (it has \\d \\D \\w "
                           "\\W \\s \\S \\b \\B \\f \\n \\r \\t \\v \\cX \\xHH \\uHHHH \\k<name> "
                           "\\p{..} \\P{..})";
                agti_buf_putc(out, '\\');
                agti_buf_putc(out, e);
                continue;
            }
        }
        if (!in_class && c == '[') {
            size_t j = i + 1;
            bool neg = j < n && s[j] == '^';
            if (neg)
                j++;
            if (j < n && s[j] == ']') {
                agti_buf_puts(out, neg ? "[\\s\\S]" : "(?!)");
                i = j + 1;
                continue;
            }
            agti_buf_put(out, s + i, j - i);
            i = j;
            in_class = true;
            continue;
        }
        if (in_class && c == '[') {
            agti_buf_puts(out, "\\[");
            i++;
            continue;
        }
        if (in_class && c == ']')
            in_class = false;
        agti_buf_putc(out, c);
        i++;
    }
    return NULL;
}

pcre2_code *agti_schema_regex_compile(const char *src, size_t len, char *err, size_t errlen)
{
    agti_buf b = AGTI_BUF_INIT;
    const char *why = translate(src, len, &b);
    if (why != NULL) {
        snprintf(err, errlen, "invalid regular expression '%s': %s", src, why);
        agti_buf_free(&b);
        return NULL;
    }
    if (b.oom) {
        snprintf(err, errlen, "out of memory");
        agti_buf_free(&b);
        return NULL;
    }
    int ec = 0;
    PCRE2_SIZE off = 0;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)agti_buf_cstr(&b), b.len,
                                   PCRE2_UTF | PCRE2_UCP | PCRE2_DOLLAR_ENDONLY, &ec, &off, NULL);
    agti_buf_free(&b);
    if (re == NULL) {
        PCRE2_UCHAR msg[160];
        pcre2_get_error_message(ec, msg, sizeof msg);
        snprintf(err, errlen, "invalid regular expression '%s': %s", src, (const char *)msg);
        return NULL;
    }
    (void)pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
    return re;
}

bool agti_schema_regex_valid(const char *src, size_t len)
{
    agti_buf b = AGTI_BUF_INIT;
    const char *why = translate(src, len, &b);
    if (why != NULL || b.oom) {
        agti_buf_free(&b);
        return false;
    }
    int ec = 0;
    PCRE2_SIZE off = 0;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)agti_buf_cstr(&b), b.len,
                                   PCRE2_UTF | PCRE2_UCP | PCRE2_DOLLAR_ENDONLY, &ec, &off, NULL);
    agti_buf_free(&b);
    pcre2_code_free(re);
    /* ECMA-262 (since ES2018) allows lookbehinds of any width; PCRE2 before
     * 10.43 only fixed-width ones, which is PCRE2's limit, not the
     * pattern's fault */
    return re != NULL || ec == PCRE2_ERROR_LOOKBEHIND_NOT_FIXED_LENGTH;
}
