/*
 * Which addresses FetchURL may connect to: the public internet only, unless
 * the host allows more. Ranges from the IANA special-purpose registries
 * (RFC 6890 and its updates): RFC 1122 "this network" and loopback, RFC 1918
 * private, RFC 3927 link-local (169.254.169.254 is the cloud metadata
 * service), RFC 6598 shared (CGNAT), RFC 5736 protocol assignments, RFC 2544
 * benchmarking, RFC 5737 documentation, multicast and reserved; for IPv6
 * RFC 4291 (::, ::1, fe80::/10, ff00::/8, IPv4-mapped and -compatible),
 * RFC 4193 unique local (fc00::/7, also fd00:ec2::254 of EC2), RFC 3879
 * site-local, RFC 6052 NAT64 and RFC 3056 6to4 (judged by the IPv4 address
 * they carry), RFC 3849 documentation.
 */
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "net.h"

static bool v4_private(uint32_t a, const char **what)
{
    static const struct {
        uint32_t net;
        unsigned bits;
        const char *what;
    } r[] = {
        {0x00000000u, 8, "unspecified (0.0.0.0/8)"},
        {0x7f000000u, 8, "loopback"},
        {0x0a000000u, 8, "private (10.0.0.0/8)"},
        {0xac100000u, 12, "private (172.16.0.0/12)"},
        {0xc0a80000u, 16, "private (192.168.0.0/16)"},
        {0xa9fe0000u, 16, "link-local (169.254.0.0/16, cloud metadata)"},
        {0x64400000u, 10, "shared address space (100.64.0.0/10, CGNAT)"},
        {0xc0000000u, 24, "IETF protocol assignment (192.0.0.0/24)"},
        {0xc0000200u, 24, "documentation (192.0.2.0/24)"},
        {0xc6120000u, 15, "benchmarking (198.18.0.0/15)"},
        {0xc6336400u, 24, "documentation (198.51.100.0/24)"},
        {0xcb007100u, 24, "documentation (203.0.113.0/24)"},
        {0xe0000000u, 4, "multicast"},
        {0xf0000000u, 4, "reserved (240.0.0.0/4, broadcast)"},
    };
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++) {
        uint32_t mask = r[i].bits ? ~0u << (32 - r[i].bits) : 0;
        if ((a & mask) == r[i].net) {
            *what = r[i].what;
            return true;
        }
    }
    return false;
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static bool v6_private(const unsigned char *b, const char **what)
{
    static const unsigned char zero[16];
    if (memcmp(b, zero, 16) == 0) {
        *what = "unspecified (::)";
        return true;
    }
    if (memcmp(b, zero, 15) == 0 && b[15] == 1) {
        *what = "loopback (::1)";
        return true;
    }
    /* ::ffff:a.b.c.d (mapped): judged by the IPv4 address */
    if (memcmp(b, zero, 10) == 0 && b[10] == 0xff && b[11] == 0xff)
        return v4_private(be32(b + 12), what);
    /* ::a.b.c.d (IPv4-compatible, deprecated by RFC 4291): never public */
    if (memcmp(b, zero, 12) == 0) {
        *what = "IPv4-compatible IPv6 (::/96)";
        return true;
    }
    /* 64:ff9b::a.b.c.d and 64:ff9b:1::/48 (NAT64) */
    static const unsigned char nat64[12] = {0, 0x64, 0xff, 0x9b};
    if (memcmp(b, nat64, 12) == 0)
        return v4_private(be32(b + 12), what);
    if (b[0] == 0 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && b[4] == 0 && b[5] == 1) {
        *what = "local-use NAT64 (64:ff9b:1::/48)";
        return true;
    }
    if (b[0] == 0x20 && b[1] == 0x02) /* 2002:V4ADDR::/48 (6to4) */
        return v4_private(be32(b + 2), what);
    if ((b[0] & 0xfe) == 0xfc) {
        *what = "unique local (fc00::/7)";
        return true;
    }
    if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) {
        *what = "link-local (fe80::/10)";
        return true;
    }
    if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) {
        *what = "site-local (fec0::/10)";
        return true;
    }
    if (b[0] == 0xff) {
        *what = "multicast (ff00::/8)";
        return true;
    }
    if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8) {
        *what = "documentation (2001:db8::/32)";
        return true;
    }
    return false;
}

bool agti_net_addr_private(const struct sockaddr *sa, const char **what)
{
    const char *w = NULL;
    bool p;
    if (sa == NULL) {
        w = "no address";
        p = true;
    } else if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)sa;
        p = v4_private(ntohl(in->sin_addr.s_addr), &w);
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)(const void *)sa;
        p = v6_private(in6->sin6_addr.s6_addr, &w);
    } else {
        w = "not an internet address (a local socket)";
        p = true;
    }
    if (what != NULL)
        *what = p ? w : NULL;
    return p;
}
