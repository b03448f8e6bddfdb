/*
 * libFuzzer target: the required-literal extractor (lib/search/required.c)
 * on arbitrary patterns, checked against PCRE2 itself: whenever PCRE2
 * (compiled with the flags of the search engine) matches within a line of
 * the subject, that line holds one of the extracted literals; otherwise the
 * prefilter would lose the line.
 * Input: one flag byte (bit 0: case-insensitive), the pattern, '\n', the
 * subject (lines separated by '\n').
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "search/search_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2 || size > 4096)
        return 0;
    bool icase = (data[0] & 1) != 0;
    const char *p = (const char *)data + 1;
    size_t rest = size - 1;
    const char *nl = memchr(p, '\n', rest);
    size_t plen = nl ? (size_t)(nl - p) : rest;
    const char *subj = nl ? nl + 1 : "";
    size_t slen = nl ? rest - plen - 1 : 0;
    agti_req rq;
    bool ok = agti_regex_required(p, plen, icase, &rq);
    if (!ok && rq.n != 0)
        abort();
    for (size_t i = 0; i < rq.n; i++)
        if (rq.len[i] == 0 || rq.len[i] > AGTI_REQ_LEN || memchr(rq.s[i], '\n', rq.len[i]))
            abort();
    if (rq.n == 0 || plen == 0)
        return 0;
    uint32_t flags = PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | PCRE2_MULTILINE | PCRE2_UCP |
                     PCRE2_ALT_CIRCUMFLEX | (icase ? PCRE2_CASELESS : 0);
    int err;
    PCRE2_SIZE off;
    pcre2_code *code = pcre2_compile((PCRE2_SPTR)p, plen, flags, &err, &off, NULL);
    if (code == NULL)
        return 0;
    pcre2_match_data *md = pcre2_match_data_create(1, NULL);
    pcre2_match_context *mc = pcre2_match_context_create(NULL);
    pcre2_set_match_limit(mc, 100000);
    pcre2_set_depth_limit(mc, 1000);
    agti_lit lits[AGTI_REQ_MAX];
    for (size_t i = 0; i < rq.n; i++)
        agti_lit_init(&lits[i], rq.s[i], rq.len[i], icase);
    size_t ls = 0;
    while (ls <= slen) {
        const char *e = memchr(subj + ls, '\n', slen - ls);
        size_t le = e ? (size_t)(e - subj) : slen;
        int rc = pcre2_match(code, (PCRE2_SPTR)subj, le, ls, 0, md, mc);
        if (rc >= 0) {
            bool found = false;
            for (size_t i = 0; i < rq.n && !found; i++)
                found = agti_lit_find(&lits[i], subj + ls, le - ls) != NULL;
            if (!found)
                abort(); /* a matching line without any required literal */
        }
        if (e == NULL)
            break;
        ls = le + 1;
    }
    for (size_t i = 0; i < rq.n; i++)
        agti_lit_fini(&lits[i]);
    pcre2_match_context_free(mc);
    pcre2_match_data_free(md);
    pcre2_code_free(code);
    return 0;
}
