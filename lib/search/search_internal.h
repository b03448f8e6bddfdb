/* Shared between the files of lib/search: the searcher and per-thread state. */
#ifndef AGT_LIB_SEARCH_INTERNAL_H
#define AGT_LIB_SEARCH_INTERNAL_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "fs/fs.h"
#include "search/search.h"

/* Fixed-string matcher (literal.c): case-sensitive or ASCII-caseless. */
enum { AGTI_LIT_SCALAR = 0, AGTI_LIT_SSE2, AGTI_LIT_AVX2 };
typedef struct agti_lit {
    unsigned char *needle; /* letters lower-cased when folding */
    unsigned char *mask;   /* 0x20 where the byte is a folded letter, else 0 */
    size_t n;
    size_t k1, k2; /* the two rarest positions, compared first */
    int simd;      /* AGTI_LIT_*: the widest loop the CPU runs (tests lower it) */
} agti_lit;

int agti_lit_init(agti_lit *l, const char *needle, size_t n, bool icase);
void agti_lit_fini(agti_lit *l);
/* First occurrence in hay[0..len), or NULL. */
const char *agti_lit_find(const agti_lit *l, const char *hay, size_t len);

/* Required literals of a regex (required.c): every match contains at least
 * one of s[0..n) (members cut to AGTI_REQ_LEN bytes). */
#define AGTI_REQ_MAX 8
#define AGTI_REQ_LEN 32
typedef struct agti_req {
    size_t n;
    unsigned char len[AGTI_REQ_MAX];
    char s[AGTI_REQ_MAX][AGTI_REQ_LEN];
} agti_req;

/* Fills *out for the PCRE2 pattern p[0..n) compiled with PCRE2_UTF |
 * PCRE2_MULTILINE (and PCRE2_CASELESS when icase), without DOTALL or
 * EXTENDED (out->n == 0: no required literal). Returns false (and
 * out->n == 0) when the pattern uses syntax the extractor does not know;
 * true means whether a line matches depends on that line alone (no
 * lookaround, \z, \G...), so a subject may end at any line end. */
bool agti_regex_required(const char *p, size_t n, bool icase, agti_req *out);

struct agti_searcher {
    agti_search_opts o; /* copy; the pointer arrays are only read by agti_searcher_new */
    char *pattern;
    size_t plen;
    char *glob_base; /* copy of o.glob_base (o.glob_base points here) */
    bool use_lit;    /* fixed string (ASCII if caseless): agti_lit instead of PCRE2 */
    agti_lit lit;
    pcre2_code *code;       /* NULL with use_lit */
    pcre2_code *code_ascii; /* the pattern without PCRE2_UCP (NULL when code has
                               none): the same matches on a file of ASCII bytes
                               only, and \w \d \s \b run faster without UCP */
    /* Line prefilter (line mode only): a line can match only if it holds
     * one of these (agti_regex_required); 0: none. */
    agti_lit reqlit[AGTI_REQ_MAX];
    size_t nreqlit;
    bool line_local;      /* agti_regex_required knew the pattern (or use_lit): lines can be
                             searched in windows that end at a line end */
    unsigned char req[2]; /* prefilter: a file without any of these bytes cannot match */
    int nreq;
    size_t max_line;
    uint64_t max_size;
    agti_glob **inc;
    size_t ninc;
    agti_glob **exc;
    size_t nexc;
    agti_glob **typeg;
    size_t ntypeg;
    agti_pathspec *ps;
    struct agti_sworker *own; /* for agti_searcher_search_buffer */
};

/* Per-thread matching state. */
typedef struct agti_sworker {
    pcre2_match_data *md;
    pcre2_match_context *mctx;
    pcre2_jit_stack *jit;
    const pcre2_code *code; /* for the current file: the searcher's code or code_ascii
                               (NULL: not chosen yet, from data[0..len) when the regex
                               first runs) */
    const char *data;
    size_t len;
    char *buf; /* reused read buffer */
    size_t cap;
    bool mapped;         /* the data searched is a private read-only file mapping: pages done
                            with may be dropped (MADV_DONTNEED) and read again from the file */
    size_t nul_free;     /* the first bytes of buf known to hold no NUL (read_file's probe);
                            agti_search_data takes it and resets it */
    int64_t deadline_ns; /* CLOCK_MONOTONIC; 0: none */
    bool timed_out;
} agti_sworker;

int agti_sworker_init(agti_sworker *w, const agti_searcher *s);
void agti_sworker_fini(agti_sworker *w);
int64_t agti_search_now_ns(void);

/* Searches data[0..len); see agti_searcher_search_buffer. Binary check
 * included. Returns AGT_OK, AGT_ELIMIT (regex limit) or AGT_ENOMEM; on
 * error *out is cleared. */
int agti_search_data(const agti_searcher *s, agti_sworker *w, const char *data, size_t len,
                     agti_search_file *out, bool *matched, bool *binary);

#endif
