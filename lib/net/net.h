/*
 * Network engine (internal): bounded HTTP GET and HTML reduction to text.
 */
#ifndef AGT_LIB_NET_H
#define AGT_LIB_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agenttools/dispatch.h"
#include "core/core.h"

typedef struct agti_fetch_opts {
    size_t max_bytes;   /* body bytes kept; the transfer stops after them */
    int64_t timeout_ms; /* whole transfer */
    int64_t connect_ms;
    long max_redirects;
    /* Connect to loopback, link-local, private and other non-public
     * addresses too (false: every connection, redirects included, is
     * checked on the address it really goes to, after DNS). */
    bool allow_private;
} agti_fetch_opts;

typedef struct agti_fetch_result {
    long status;
    char *final_url;
    char *content_type; /* NULL when the server sent none */
    agti_buf body;
    bool truncated; /* the body was cut at max_bytes */
    long redirects;
} agti_fetch_result;

/* GET over http/https only. Returns AGT_OK with any HTTP status in r;
 * AGT_EINVAL (not an http(s) URL), AGT_EDENIED (a connection to a
 * non-public address without allow_private: the message names it),
 * AGT_ENET (connection, too many redirects), AGT_ETIMEOUT. r is filled as
 * far as it got; free it with agti_fetch_result_free(). */
int agti_fetch(const char *url, const agti_fetch_opts *opts, agti_fetch_result *r);
void agti_fetch_result_free(agti_fetch_result *r);

struct sockaddr;
/* Whether a socket address is not on the public internet: loopback,
 * unspecified, link-local (cloud metadata), private, shared (CGNAT),
 * multicast, reserved; IPv6 forms carrying an IPv4 address (mapped,
 * compatible, NAT64, 6to4) are judged by it. *what gets a phrase such as
 * "loopback". An unknown family is not public. */
bool agti_net_addr_private(const struct sockaddr *sa, const char **what);

/* Whether this build has an HTML parser. */
bool agti_html_available(void);
/* Appends the readable main text of an HTML document (headings as '#',
 * list items as '-', links as [text](href), code kept) to out. charset may
 * be NULL (the document's own declaration or detection decides). */
int agti_html_to_text(const char *html, size_t len, const char *charset, const char *base_url,
                      agti_buf *out);

/* The FetchURL provider. */
int agti_tool_fetchurl(agt_call *call, void *payload);

#endif
