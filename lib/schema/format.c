/* "format" assertions: date-time, date, time, duration (RFC 3339 and its
 * appendix A), email and idn-email (RFC 5321 / RFC 6531 mailboxes), hostname
 * (RFC 1123, with A-labels checked as IDNA2008) and idn-hostname (IDNA2008,
 * RFC 5890-5893, by libidn2), ipv4 (dotted quad), ipv6 (RFC 4291 text forms),
 * uri, uri-reference, iri, iri-reference (RFC 3986 / RFC 3987), uri-template
 * (RFC 6570), json-pointer (RFC 6901), relative-json-pointer
 * (draft-bhutton-relative-json-pointer-00), regex (ECMA-262) and uuid
 * (RFC 4122 text form). */
#include <arpa/inet.h>
#include <idn2.h>
#include <stdlib.h>
#include <string.h>

#include "schema_priv.h"

static const char *const fmt_names[] = {"",
                                        "date-time",
                                        "date",
                                        "time",
                                        "email",
                                        "uri",
                                        "uuid",
                                        "ipv4",
                                        "ipv6",
                                        "duration",
                                        "hostname",
                                        "idn-hostname",
                                        "idn-email",
                                        "uri-reference",
                                        "iri",
                                        "iri-reference",
                                        "uri-template",
                                        "json-pointer",
                                        "relative-json-pointer",
                                        "regex",
                                        "hostname"};

const char *agti_schema_format_name(int fmt)
{
    return fmt > 0 && fmt < (int)(sizeof fmt_names / sizeof fmt_names[0]) ? fmt_names[fmt] : "";
}

int agti_schema_format_id(const char *name)
{
    for (int i = 1; i < AGTI_FMT_HOSTNAME_1123; i++)
        if (strcmp(name, fmt_names[i]) == 0)
            return i;
    return AGTI_FMT_NONE;
}

static bool digits(const char *s, size_t n, int *val)
{
    int v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (s[i] - '0');
    }
    *val = v;
    return true;
}

static bool check_date(const char *s, size_t len)
{
    static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int y, m, d;
    if (len != 10 || s[4] != '-' || s[7] != '-')
        return false;
    if (!digits(s, 4, &y) || !digits(s + 5, 2, &m) || !digits(s + 8, 2, &d))
        return false;
    if (m < 1 || m > 12 || d < 1 || d > mdays[m - 1])
        return false;
    if (m == 2 && d == 29 && !((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
        return false;
    return true;
}

static bool check_time(const char *s, size_t len)
{
    int h, mi, sec, oh = 0, om = 0;
    if (len < 9 || s[2] != ':' || s[5] != ':')
        return false;
    if (!digits(s, 2, &h) || !digits(s + 3, 2, &mi) || !digits(s + 6, 2, &sec))
        return false;
    size_t i = 8;
    if (i < len && s[i] == '.') {
        size_t j = ++i;
        while (i < len && s[i] >= '0' && s[i] <= '9')
            i++;
        if (i == j)
            return false;
    }
    if (i >= len)
        return false;
    int sign = 0;
    if (s[i] == 'Z' || s[i] == 'z') {
        if (i + 1 != len)
            return false;
    } else if (s[i] == '+' || s[i] == '-') {
        sign = s[i] == '+' ? 1 : -1;
        if (len - i != 6 || s[i + 3] != ':' || !digits(s + i + 1, 2, &oh) ||
            !digits(s + i + 4, 2, &om) || oh > 23 || om > 59)
            return false;
    } else {
        return false;
    }
    if (h > 23 || mi > 59 || sec > 60)
        return false;
    if (sec == 60) {
        /* a leap second is only valid at 23:59:60 UTC */
        int utc = h * 60 + mi - sign * (oh * 60 + om);
        utc = ((utc % 1440) + 1440) % 1440;
        if (utc != 23 * 60 + 59)
            return false;
    }
    return true;
}

static bool check_date_time(const char *s, size_t len)
{
    if (len < 20 || (s[10] != 'T' && s[10] != 't'))
        return false;
    return check_date(s, 10) && check_time(s + 11, len - 11);
}

static bool is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static bool is_hexc(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static bool check_hostname(const char *s, size_t len)
{
    if (len == 0 || len > 253)
        return false;
    size_t lab = 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == '.') {
            if (lab == 0 || s[i - 1] == '-')
                return false;
            lab = 0;
            continue;
        }
        if (!is_alnum(c) && c != '-')
            return false;
        if (c == '-' && lab == 0)
            return false;
        if (++lab > 63)
            return false;
    }
    return lab > 0 && s[len - 1] != '-';
}

static bool check_ipv4(const char *s, size_t len)
{
    char tmp[16];
    unsigned char addr[4];
    if (len == 0 || len >= sizeof tmp)
        return false;
    memcpy(tmp, s, len);
    tmp[len] = '\0';
    return inet_pton(AF_INET, tmp, addr) == 1;
}

static bool check_ipv6(const char *s, size_t len)
{
    char tmp[64];
    unsigned char addr[16];
    if (len == 0 || len >= sizeof tmp)
        return false;
    memcpy(tmp, s, len);
    tmp[len] = '\0';
    return inet_pton(AF_INET6, tmp, addr) == 1;
}

static bool check_uuid(const char *s, size_t len)
{
    if (len != 36)
        return false;
    for (size_t i = 0; i < 36; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (s[i] != '-')
                return false;
        } else if (!is_hexc(s[i])) {
            return false;
        }
    }
    return true;
}

/* ---- duration (RFC 3339 appendix A) --------------------------------- */

/* One chain of "digits unit" parts whose units follow each other in order
 * (dur-year = 1*DIGIT "Y" [dur-month], ...): "1Y2M", "2M3D", not "1Y3D". */
static bool dur_chain(const char *s, size_t len, size_t *i, const char *units)
{
    size_t start = *i;
    int last = -1;
    while (*i < len) {
        size_t j = *i;
        while (j < len && s[j] >= '0' && s[j] <= '9')
            j++;
        if (j == *i || j >= len)
            break;
        const char *u = strchr(units, s[j]);
        if (u == NULL || s[j] == '\0')
            break;
        int pos = (int)(u - units);
        if (last >= 0 && pos != last + 1)
            return false;
        last = pos;
        *i = j + 1;
    }
    return *i > start;
}

static bool check_duration(const char *s, size_t len)
{
    if (len < 3 || s[0] != 'P')
        return false;
    size_t i = 1;
    /* dur-week */
    size_t j = i;
    while (j < len && s[j] >= '0' && s[j] <= '9')
        j++;
    if (j > i && j + 1 == len && s[j] == 'W')
        return true;
    bool any = false;
    if (i < len && s[i] != 'T') {
        if (!dur_chain(s, len, &i, "YMD"))
            return false;
        any = true;
    }
    if (i < len && s[i] == 'T') {
        i++;
        if (!dur_chain(s, len, &i, "HMS"))
            return false;
        any = true;
    }
    return any && i == len;
}

/* ---- hostnames -------------------------------------------------------- */

/* IDNA2008 (RFC 5891 section 5, RFC 5892, RFC 5893) on the whole name, by
 * libidn2 without the UTS #46 mapping: the name must already be in its
 * lookup form. A-labels are decoded and checked the same way. */
static bool idna_ok(const char *s, size_t len, bool nfc)
{
    char *tmp = malloc(len + 1);
    if (tmp == NULL)
        return false;
    memcpy(tmp, s, len);
    tmp[len] = '\0';
    uint8_t *out = NULL;
    int rc = idn2_lookup_u8((const uint8_t *)tmp, &out, IDN2_NO_TR46 | (nfc ? IDN2_NFC_INPUT : 0));
    bool ok = rc == IDN2_OK && out != NULL && strlen((const char *)out) <= 253;
    if (ok) {
        /* every label of the ASCII form at most 63 octets */
        size_t lab = 0;
        for (const uint8_t *p = out; *p; p++) {
            lab = *p == '.' ? 0 : lab + 1;
            if (lab > 63)
                ok = false;
        }
    }
    idn2_free(out);
    free(tmp);
    return ok;
}

static bool has_alabel(const char *s, size_t len)
{
    for (size_t i = 0; i + 4 <= len; i++)
        if ((i == 0 || s[i - 1] == '.') && (s[i] == 'x' || s[i] == 'X') &&
            (s[i + 1] == 'n' || s[i + 1] == 'N') && s[i + 2] == '-' && s[i + 3] == '-')
            return true;
    return false;
}

static bool check_idn_name(const char *s, size_t len, bool nfc);

/* Decodes the UTF-8 code point at *p (the text is valid UTF-8). */
static uint32_t next_cp(const unsigned char **p)
{
    const unsigned char *q = *p;
    uint32_t c = q[0];
    int n = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
    if (n > 1)
        c &= 0x3fu >> (n - 1);
    for (int i = 1; i < n && q[i]; i++)
        c = (c << 6) | (q[i] & 0x3fu);
    *p = q + n;
    return c;
}

/* Bidi classes R, AL and AN (what makes a label right-to-left, RFC 5893
 * section 1.4), by block; the Extended Arabic-Indic digits are EN. */
static bool is_rtl(uint32_t c)
{
    return (c >= 0x0590 && c <= 0x08ff && !(c >= 0x06f0 && c <= 0x06f9)) ||
           (c >= 0xfb1d && c <= 0xfdff) || (c >= 0xfe70 && c <= 0xfeff) ||
           (c >= 0x10800 && c <= 0x10fff) || (c >= 0x1e800 && c <= 0x1efff);
}

static bool is_greek(uint32_t c)
{
    return (c >= 0x0370 && c <= 0x03ff) || (c >= 0x1f00 && c <= 0x1fff);
}

static bool is_hebrew(uint32_t c)
{
    return (c >= 0x0590 && c <= 0x05ff) || (c >= 0xfb1d && c <= 0xfb4f);
}

static bool is_kana_han(uint32_t c)
{
    return (c >= 0x3040 && c <= 0x30ff && c != 0x30fb) || (c >= 0x31f0 && c <= 0x31ff) ||
           (c >= 0x3400 && c <= 0x4dbf) || (c >= 0x4e00 && c <= 0x9fff) ||
           (c >= 0xf900 && c <= 0xfaff) || (c >= 0x20000 && c <= 0x3134f);
}

/* Per label of a name in U-label form: no "--" in positions 3 and 4 (RFC
 * 5891 4.2.3.1), the CONTEXTO rules of RFC 5892 appendix A.3 to A.9, and of
 * RFC 5893's Bidi rule what a name with right-to-left labels needs: every
 * label starts with a letter (rule 1), and a right-to-left label does not mix
 * European and Arabic-Indic digits (rule 4). */
static bool ulabel_rules(const char *name)
{
    uint32_t cps[64];
    bool bidi = false;
    for (const unsigned char *p = (const unsigned char *)name; *p;)
        if (is_rtl(next_cp(&p)))
            bidi = true;
    const unsigned char *p = (const unsigned char *)name;
    while (*p) {
        size_t n = 0;
        while (*p && *p != '.') {
            uint32_t c = next_cp(&p);
            if (n < 64)
                cps[n] = c;
            n++;
        }
        if (*p == '.')
            p++;
        if (n > 64)
            return false;
        if (n >= 4 && cps[2] == '-' && cps[3] == '-')
            return false;
        bool rtl = false, en = false, an = false, ext = false, kana = false, dot = false;
        for (size_t i = 0; i < n; i++) {
            uint32_t c = cps[i];
            rtl = rtl || is_rtl(c);
            en = en || (c >= '0' && c <= '9') || (c >= 0x06f0 && c <= 0x06f9);
            an = an || (c >= 0x0660 && c <= 0x0669);
            ext = ext || (c >= 0x06f0 && c <= 0x06f9);
            kana = kana || is_kana_han(c);
            dot = dot || c == 0x30fb;
            if (c == 0x00b7 && (i == 0 || i + 1 >= n || cps[i - 1] != 'l' || cps[i + 1] != 'l'))
                return false;
            if (c == 0x0375 && (i + 1 >= n || !is_greek(cps[i + 1])))
                return false;
            if ((c == 0x05f3 || c == 0x05f4) && (i == 0 || !is_hebrew(cps[i - 1])))
                return false;
        }
        if (dot && !kana)
            return false;
        if (an && ext)
            return false; /* A.8, A.9: Arabic-Indic digits mixed with extended ones */
        if (bidi && n > 0 &&
            ((cps[0] >= '0' && cps[0] <= '9') || (cps[0] >= 0x0660 && cps[0] <= 0x0669) ||
             (cps[0] >= 0x06f0 && cps[0] <= 0x06f9)))
            return false;
        if (rtl && en && an)
            return false;
    }
    return true;
}

/* RFC 1123 host names: LDH labels of 1 to 63 octets, 253 in all; a label
 * with "--" in positions 3 and 4 must be a valid A-label (RFC 5891 4.2.3.1). */
static bool check_dns_hostname(const char *s, size_t len)
{
    if (!check_hostname(s, len))
        return false;
    for (size_t i = 0; i + 4 <= len; i++)
        if ((i == 0 || s[i - 1] == '.') && s[i + 2] == '-' && s[i + 3] == '-' &&
            !((s[i] == 'x' || s[i] == 'X') && (s[i + 1] == 'n' || s[i + 1] == 'N')))
            return false;
    return !has_alabel(s, len) || check_idn_name(s, len, false);
}

static bool check_idn_hostname(const char *s, size_t len)
{
    return check_idn_name(s, len, false);
}

/* A name in IDNA2008 form; nfc: normalise first (RFC 6531 mail domains). */
static bool check_idn_name(const char *s, size_t len, bool nfc)
{
    if (len == 0)
        return false;
    /* the label separators of RFC 3490 3.1 read as "." */
    char *t = malloc(len + 1);
    if (t == NULL)
        return false;
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        const unsigned char *u = (const unsigned char *)s + i;
        if (i + 2 < len && ((u[0] == 0xe3 && u[1] == 0x80 && u[2] == 0x82) ||
                            (u[0] == 0xef && u[1] == 0xbc && u[2] == 0x8e) ||
                            (u[0] == 0xef && u[1] == 0xbd && u[2] == 0xa1))) {
            t[n++] = '.';
            i += 2;
            continue;
        }
        t[n++] = s[i];
    }
    t[n] = '\0';
    bool ok = true;
    /* no empty labels, no leading or trailing hyphen, no "--" at 3-4 but
     * in A-labels */
    size_t lab_start = 0;
    for (size_t i = 0; i <= n && ok; i++) {
        if (i < n && t[i] != '.')
            continue;
        size_t ll = i - lab_start;
        const char *l = t + lab_start;
        if (ll == 0 || l[0] == '-' || l[ll - 1] == '-')
            ok = false;
        else if (ll >= 4 && l[2] == '-' && l[3] == '-' &&
                 !((l[0] == 'x' || l[0] == 'X') && (l[1] == 'n' || l[1] == 'N')))
            ok = false;
        lab_start = i + 1;
    }
    ok = ok && idna_ok(t, n, nfc);
    if (ok) {
        /* the rules libidn2 leaves out, on the U-labels (A-labels decoded) */
        char *u = NULL;
        if (idn2_to_unicode_8z8z(t, &u, 0) != IDN2_OK || u == NULL)
            ok = false;
        else
            ok = ulabel_rules(u);
        idn2_free(u);
    }
    free(t);
    return ok;
}

/* ---- mailboxes (RFC 5321 4.1.2, RFC 6531 3.3) ------------------------- */

static bool check_mailbox(const char *s, size_t len, bool intl)
{
    const char *at = NULL;
    size_t ll;
    if (len > 0 && s[0] == '"') {
        /* Quoted-string local part: qtextSMTP or quoted-pairSMTP */
        size_t i = 1;
        for (; i < len && s[i] != '"'; i++) {
            unsigned char c = (unsigned char)s[i];
            if (c == '\\') {
                if (++i >= len || s[i] < 32 || s[i] > 126)
                    return false;
            } else if ((c < 32 || c > 126) && !(intl && c >= 0x80)) {
                return false;
            }
        }
        if (i >= len || i + 1 >= len || s[i + 1] != '@')
            return false;
        at = s + i + 1;
        ll = i + 1;
    } else {
        at = memchr(s, '@', len);
        if (at == NULL)
            return false;
        ll = (size_t)(at - s);
        if (ll == 0 || s[0] == '.' || s[ll - 1] == '.')
            return false;
        for (size_t i = 0; i < ll; i++) {
            unsigned char c = (unsigned char)s[i];
            if (c == '.' && s[i + 1] == '.')
                return false;
            if (!is_alnum((char)c) && !strchr(".!#$%&'*+/=?^_`{|}~-", c) && !(intl && c >= 0x80))
                return false;
        }
    }
    if (!intl && ll > 64)
        return false;
    const char *d = at + 1;
    size_t dl = len - ll - 1;
    if (dl == 0)
        return false;
    if (d[0] == '[') {
        if (d[dl - 1] != ']')
            return false;
        if (dl > 6 && strncmp(d + 1, "IPv6:", 5) == 0)
            return check_ipv6(d + 6, dl - 7);
        return check_ipv4(d + 1, dl - 2);
    }
    return intl ? check_idn_name(d, dl, true) : check_dns_hostname(d, dl);
}

/* ---- URIs and IRIs (RFC 3986 section 3 and 4.1, RFC 3987 2.2) ---------- */

static bool is_unreserved(unsigned char c)
{
    return is_alnum((char)c) || c == '-' || c == '.' || c == '_' || c == '~';
}

static bool is_sub_delim(unsigned char c)
{
    return c != '\0' && strchr("!$&'()*+,;=", c) != NULL;
}

/* Scans characters of the class `extra` adds to unreserved / pct-encoded /
 * sub-delims (and, for IRIs, non-ASCII characters) from *i up to a stop
 * character or the end; false on a character outside the class. */
static bool uri_scan(const char *s, size_t len, size_t *i, const char *extra, const char *stops,
                     bool iri)
{
    while (*i < len) {
        unsigned char c = (unsigned char)s[*i];
        if (c != '\0' && strchr(stops, c))
            return true;
        if (c == '%') {
            if (*i + 2 >= len || !is_hexc(s[*i + 1]) || !is_hexc(s[*i + 2]))
                return false;
            *i += 3;
            continue;
        }
        if (is_unreserved(c) || is_sub_delim(c) || (c != '\0' && strchr(extra, c)) ||
            (iri && c >= 0x80)) {
            (*i)++;
            continue;
        }
        return false;
    }
    return true;
}

static bool check_authority(const char *s, size_t len, bool iri)
{
    size_t i = 0;
    const char *at = memchr(s, '@', len);
    if (at) {
        size_t ul = (size_t)(at - s);
        if (!uri_scan(s, ul, &i, ":", "", iri) || i != ul)
            return false;
        i = ul + 1;
    }
    if (i < len && s[i] == '[') {
        const char *close = memchr(s + i, ']', len - i);
        if (close == NULL)
            return false;
        size_t hl = (size_t)(close - (s + i)) - 1;
        const char *h = s + i + 1;
        if (hl > 1 && (h[0] == 'v' || h[0] == 'V')) {
            size_t k = 1;
            while (k < hl && is_hexc(h[k]))
                k++;
            if (k == 1 || k >= hl || h[k] != '.' || k + 1 >= hl)
                return false;
            for (k++; k < hl; k++)
                if (!is_unreserved((unsigned char)h[k]) && !is_sub_delim((unsigned char)h[k]) &&
                    h[k] != ':')
                    return false;
        } else if (!check_ipv6(h, hl)) {
            return false;
        }
        i = (size_t)(close - s) + 1;
    } else {
        if (!uri_scan(s, len, &i, "", ":", iri))
            return false;
    }
    if (i < len) {
        if (s[i] != ':')
            return false;
        for (i++; i < len; i++)
            if (s[i] < '0' || s[i] > '9')
                return false;
    }
    return true;
}

/* A URI (scheme required) or URI reference, as RFC 3986 section 4.1 / RFC
 * 3987 define them. */
static bool check_uri_ref(const char *s, size_t len, bool need_scheme, bool iri)
{
    size_t i = 0;
    bool scheme = false;
    if (len > 0 && ((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z'))) {
        size_t j = 1;
        while (j < len && (is_alnum(s[j]) || s[j] == '+' || s[j] == '-' || s[j] == '.'))
            j++;
        if (j < len && s[j] == ':') {
            scheme = true;
            i = j + 1;
        }
    }
    if (need_scheme && !scheme)
        return false;
    if (i + 1 < len && s[i] == '/' && s[i + 1] == '/') {
        size_t a = i + 2, e = a;
        while (e < len && s[e] != '/' && s[e] != '?' && s[e] != '#')
            e++;
        if (!check_authority(s + a, e - a, iri))
            return false;
        i = e;
    } else if (!scheme) {
        /* path-noscheme: no ":" in the first segment */
        size_t e = i;
        while (e < len && s[e] != '/' && s[e] != '?' && s[e] != '#')
            e++;
        if (memchr(s + i, ':', e - i) != NULL)
            return false;
    }
    if (!uri_scan(s, len, &i, ":@/", "?#", iri))
        return false;
    if (i < len && s[i] == '?') {
        i++;
        if (!uri_scan(s, len, &i, ":@/?", "#", iri))
            return false;
    }
    if (i < len && s[i] == '#') {
        i++;
        if (!uri_scan(s, len, &i, ":@/?", "", iri))
            return false;
    }
    return i == len;
}

/* ---- uri-template (RFC 6570 section 2) -------------------------------- */

static bool check_uri_template(const char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        unsigned char c = (unsigned char)s[i];
        if (c == '{') {
            const char *close = memchr(s + i, '}', len - i);
            if (close == NULL)
                return false;
            size_t e = (size_t)(close - s), k = i + 1;
            if (k < e && strchr("+#./;?&=,!@|", s[k]))
                k++;
            /* variable-list = varspec *( "," varspec ) */
            for (;;) {
                size_t v = k;
                bool dot_ok = false;
                while (k < e) {
                    char ch = s[k];
                    if (is_alnum(ch) || ch == '_') {
                        k++;
                        dot_ok = true;
                    } else if (ch == '%' && k + 2 < e && is_hexc(s[k + 1]) && is_hexc(s[k + 2])) {
                        k += 3;
                        dot_ok = true;
                    } else if (ch == '.' && dot_ok && k + 1 < e && s[k + 1] != '.' &&
                               s[k + 1] != ',' && s[k + 1] != ':' && s[k + 1] != '*') {
                        k++;
                        dot_ok = false;
                    } else {
                        break;
                    }
                }
                if (k == v)
                    return false;
                if (k < e && s[k] == ':') {
                    size_t d = ++k;
                    while (k < e && s[k] >= '0' && s[k] <= '9')
                        k++;
                    if (k == d || k - d > 4 || s[d] == '0')
                        return false;
                } else if (k < e && s[k] == '*') {
                    k++;
                }
                if (k < e && s[k] == ',') {
                    k++;
                    continue;
                }
                break;
            }
            if (k != e)
                return false;
            i = e + 1;
            continue;
        }
        if (c == '%') {
            if (i + 2 >= len || !is_hexc(s[i + 1]) || !is_hexc(s[i + 2]))
                return false;
            i += 3;
            continue;
        }
        /* literals: any character but CTL, SP, DQUOTE, "%", "<", ">", "\\",
         * "^", "`", "{", "|", "}" (RFC 6570's literals also leave out "'"; the test suite says "an
         * apostrophe in a literal is valid", as RFC 3986 URIs may hold it) */
        if (c < 0x21 || c == 0x7f || strchr("\"<>\\^`{|}", c))
            return false;
        i++;
    }
    return true;
}

/* ---- JSON pointers ----------------------------------------------------- */

static bool check_json_pointer(const char *s, size_t len)
{
    if (len > 0 && s[0] != '/')
        return false;
    for (size_t i = 0; i < len; i++)
        if (s[i] == '~' && (i + 1 >= len || (s[i + 1] != '0' && s[i + 1] != '1')))
            return false;
    return true;
}

/* non-negative-integer [index-manipulation] ( "#" / json-pointer ) */
static bool check_relative_json_pointer(const char *s, size_t len)
{
    size_t i = 0;
    if (len == 0 || s[0] < '0' || s[0] > '9')
        return false;
    if (s[0] == '0')
        i = 1;
    else
        while (i < len && s[i] >= '0' && s[i] <= '9')
            i++;
    if (i < len && (s[i] == '+' || s[i] == '-')) {
        i++;
        if (i >= len || s[i] < '1' || s[i] > '9')
            return false;
        while (i < len && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    if (i < len && s[i] == '#')
        return i + 1 == len;
    return check_json_pointer(s + i, len - i);
}

bool agti_schema_format_check(int fmt, const char *s, size_t len)
{
    /* a NUL can be part of a JSON pointer or a regex, of nothing else */
    if (fmt != AGTI_FMT_JSON_POINTER && fmt != AGTI_FMT_RELATIVE_JSON_POINTER &&
        fmt != AGTI_FMT_REGEX && memchr(s, '\0', len) != NULL)
        return false;
    switch (fmt) {
    case AGTI_FMT_DATE_TIME:
        return check_date_time(s, len);
    case AGTI_FMT_DATE:
        return check_date(s, len);
    case AGTI_FMT_TIME:
        return check_time(s, len);
    case AGTI_FMT_EMAIL:
        return check_mailbox(s, len, false);
    case AGTI_FMT_IDN_EMAIL:
        return check_mailbox(s, len, true);
    case AGTI_FMT_URI:
        return check_uri_ref(s, len, true, false);
    case AGTI_FMT_URI_REFERENCE:
        return check_uri_ref(s, len, false, false);
    case AGTI_FMT_IRI:
        return check_uri_ref(s, len, true, true);
    case AGTI_FMT_IRI_REFERENCE:
        return check_uri_ref(s, len, false, true);
    case AGTI_FMT_DURATION:
        return check_duration(s, len);
    case AGTI_FMT_HOSTNAME:
        return check_dns_hostname(s, len);
    case AGTI_FMT_HOSTNAME_1123:
        return check_hostname(s, len);
    case AGTI_FMT_IDN_HOSTNAME:
        return check_idn_hostname(s, len);
    case AGTI_FMT_URI_TEMPLATE:
        return check_uri_template(s, len);
    case AGTI_FMT_JSON_POINTER:
        return check_json_pointer(s, len);
    case AGTI_FMT_RELATIVE_JSON_POINTER:
        return check_relative_json_pointer(s, len);
    case AGTI_FMT_REGEX:
        return agti_schema_regex_valid(s, len);
    case AGTI_FMT_UUID:
        return check_uuid(s, len);
    case AGTI_FMT_IPV4:
        return check_ipv4(s, len);
    case AGTI_FMT_IPV6:
        return check_ipv6(s, len);
    default:
        return true;
    }
}
