/* "format" assertions: date-time, date, time (RFC 3339), email (RFC 5321,
 * simplified to dot-atom local parts), uri (RFC 3986 absolute URI), uuid
 * (RFC 4122 text form), ipv4 (dotted quad), ipv6 (RFC 4291 text forms). */
#include <arpa/inet.h>
#include <string.h>

#include "schema_priv.h"

int agti_schema_format_id(const char *name)
{
    static const struct {
        const char *name;
        int id;
    } names[] = {
        {"date-time", AGTI_FMT_DATE_TIME}, {"date", AGTI_FMT_DATE}, {"time", AGTI_FMT_TIME},
        {"email", AGTI_FMT_EMAIL},         {"uri", AGTI_FMT_URI},   {"uuid", AGTI_FMT_UUID},
        {"ipv4", AGTI_FMT_IPV4},           {"ipv6", AGTI_FMT_IPV6}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i].name) == 0)
            return names[i].id;
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

static bool check_email(const char *s, size_t len)
{
    const char *at = memchr(s, '@', len);
    if (at == NULL)
        return false;
    size_t ll = (size_t)(at - s), dl = len - ll - 1;
    if (ll == 0 || ll > 64 || dl == 0 || memchr(at + 1, '@', dl) != NULL)
        return false;
    if (s[0] == '.' || s[ll - 1] == '.')
        return false;
    for (size_t i = 0; i < ll; i++) {
        char c = s[i];
        if (c == '.' && s[i + 1] == '.')
            return false;
        if (!is_alnum(c) && !strchr(".!#$%&'*+/=?^_`{|}~-", c))
            return false;
    }
    const char *d = at + 1;
    if (d[0] == '[' && d[dl - 1] == ']') {
        if (dl > 6 && strncmp(d + 1, "IPv6:", 5) == 0)
            return check_ipv6(d + 6, dl - 7);
        return check_ipv4(d + 1, dl - 2);
    }
    return check_hostname(d, dl);
}

static bool check_uri(const char *s, size_t len)
{
    size_t i = 0;
    if (len == 0 || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
        return false;
    while (i < len && (is_alnum(s[i]) || s[i] == '+' || s[i] == '-' || s[i] == '.'))
        i++;
    if (i >= len || s[i] != ':')
        return false;
    i++;
    bool in_host = false;
    size_t auth_end = len;
    if (i + 1 < len && s[i] == '/' && s[i + 1] == '/') {
        size_t j = i + 2;
        while (j < len && s[j] != '/' && s[j] != '?' && s[j] != '#')
            j++;
        auth_end = j;
        in_host = true;
    }
    for (; i < len; i++) {
        char c = s[i];
        if (i >= auth_end)
            in_host = false;
        if (c == '%') {
            if (i + 2 >= len || !is_hexc(s[i + 1]) || !is_hexc(s[i + 2]))
                return false;
            i += 2;
            continue;
        }
        if (is_alnum(c) || strchr("-._~:/?#@!$&'()*+,;=", c))
            continue;
        if ((c == '[' || c == ']') && in_host)
            continue;
        return false;
    }
    return true;
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

bool agti_schema_format_check(int fmt, const char *s, size_t len)
{
    if (memchr(s, '\0', len) != NULL)
        return false;
    switch (fmt) {
    case AGTI_FMT_DATE_TIME:
        return check_date_time(s, len);
    case AGTI_FMT_DATE:
        return check_date(s, len);
    case AGTI_FMT_TIME:
        return check_time(s, len);
    case AGTI_FMT_EMAIL:
        return check_email(s, len);
    case AGTI_FMT_URI:
        return check_uri(s, len);
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
