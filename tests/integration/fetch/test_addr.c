/* Which addresses FetchURL may reach by default: each row's verdict comes
 * from the IANA special-purpose address registries (see lib/net/addr.c),
 * including the IPv6 forms that carry an IPv4 address. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/un.h>

#include "harness.h"
#include "net/net.h"

static int judge(const char *text)
{
    struct sockaddr_in in4;
    struct sockaddr_in6 in6;
    memset(&in4, 0, sizeof in4);
    memset(&in6, 0, sizeof in6);
    if (inet_pton(AF_INET, text, &in4.sin_addr) == 1) {
        in4.sin_family = AF_INET;
        return agti_net_addr_private((const struct sockaddr *)&in4, NULL);
    }
    if (inet_pton(AF_INET6, text, &in6.sin6_addr) == 1) {
        in6.sin6_family = AF_INET6;
        return agti_net_addr_private((const struct sockaddr *)&in6, NULL);
    }
    return -1;
}

int main(void)
{
    static const struct {
        const char *addr;
        int private_;
    } rows[] = {
        {"127.0.0.1", 1},
        {"127.255.255.254", 1},
        {"0.0.0.0", 1},
        {"0.1.2.3", 1},
        {"10.0.0.1", 1},
        {"10.255.255.255", 1},
        {"172.16.0.1", 1},
        {"172.31.255.255", 1},
        {"172.15.255.255", 0},
        {"172.32.0.0", 0},
        {"192.168.1.1", 1},
        {"192.169.0.1", 0},
        {"169.254.169.254", 1},
        {"169.254.0.1", 1},
        {"100.64.0.1", 1},
        {"100.127.255.255", 1},
        {"100.63.255.255", 0},
        {"100.128.0.0", 0},
        {"224.0.0.1", 1},
        {"255.255.255.255", 1},
        {"192.0.2.10", 1},
        {"8.8.8.8", 0},
        {"1.1.1.1", 0},
        {"93.184.216.34", 0},
        {"::", 1},
        {"::1", 1},
        {"fe80::1", 1},
        {"febf::1", 1},
        {"fc00::1", 1},
        {"fd00:ec2::254", 1},
        {"fec0::1", 1},
        {"ff02::1", 1},
        {"::ffff:127.0.0.1", 1},
        {"::ffff:10.1.2.3", 1},
        {"::ffff:169.254.169.254", 1},
        {"::ffff:8.8.8.8", 0},
        {"::127.0.0.1", 1},
        {"64:ff9b::7f00:1", 1},
        {"64:ff9b::808:808", 0},
        {"2002:7f00:1::", 1},
        {"2002:a9fe:a9fe::1", 1},
        {"2002:808:808::1", 0},
        {"2001:db8::1", 1},
        {"2001:4860:4860::8888", 0},
        {"2606:4700::1111", 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        T_EQ_INT(judge(rows[i].addr), rows[i].private_, "%s: %s", rows[i].addr,
                 rows[i].private_ ? "not public" : "public");
    const char *what = NULL;
    struct sockaddr_in in4;
    memset(&in4, 0, sizeof in4);
    in4.sin_family = AF_INET;
    inet_pton(AF_INET, "169.254.169.254", &in4.sin_addr);
    agti_net_addr_private((const struct sockaddr *)&in4, &what);
    T_EQ_STR(what, "link-local (169.254.0.0/16, cloud metadata)", "the metadata address is named");
    struct sockaddr_un un;
    memset(&un, 0, sizeof un);
    un.sun_family = AF_UNIX;
    T_EQ_INT(agti_net_addr_private((const struct sockaddr *)&un, NULL), 1, "AF_UNIX: not public");
    T_EQ_INT(agti_net_addr_private(NULL, NULL), 1, "NULL: not public");
    return t_done();
}
