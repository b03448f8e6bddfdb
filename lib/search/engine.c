/*
 * The matcher: one searcher (compiled pattern + filters) shared read-only by
 * all threads, one agti_sworker per thread. The regex runs over the whole
 * buffer with PCRE2_MULTILINE and match offsets are mapped back to lines,
 * which is much faster than one pcre2_match call per line; outside
 * multiline mode a match that crosses a line end is re-checked within its
 * own line, which gives ripgrep's "a line matches" semantics.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "search/search_internal.h"

int64_t agti_search_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + (int64_t)ts.tv_nsec;
}

/* ---- compile ---------------------------------------------------------- */

static bool is_plain_literal(const char *p, size_t n)
{
    static const char meta[] = "\\^$.|?*+()[]{}";
    for (size_t i = 0; i < n; i++)
        if (p[i] == '\0' || memchr(meta, p[i], sizeof meta - 1) != NULL)
            return false;
    return true;
}

static bool ascii_alpha(unsigned c)
{
    return (c | 0x20u) >= 'a' && (c | 0x20u) <= 'z';
}

/* A byte every match must contain, from PCRE2's analysis of the pattern,
 * so a file without it is skipped by one memchr. Inline option changes
 * ("(?i)", "(*UCP)") can make that byte caseless without PCRE2 telling us,
 * so such patterns get no prefilter. */
static void set_prefilter(agti_searcher *s)
{
    uint32_t type = 0, unit = 0;
    s->nreq = 0;
    for (size_t i = 0; i + 1 < s->plen; i++)
        if (s->pattern[i] == '(' && (s->pattern[i + 1] == '?' || s->pattern[i + 1] == '*') &&
            !s->o.literal)
            return;
    if (pcre2_pattern_info(s->code, PCRE2_INFO_LASTCODETYPE, &type) == 0 && type == 1)
        pcre2_pattern_info(s->code, PCRE2_INFO_LASTCODEUNIT, &unit);
    else if (pcre2_pattern_info(s->code, PCRE2_INFO_FIRSTCODETYPE, &type) == 0 && type == 1)
        pcre2_pattern_info(s->code, PCRE2_INFO_FIRSTCODEUNIT, &unit);
    else
        return;
    if (unit > 0xff)
        return;
    s->req[s->nreq++] = (unsigned char)unit;
    if (s->o.case_insensitive) {
        if (unit >= 0x80)
            s->nreq = 0;
        else if (ascii_alpha(unit))
            s->req[s->nreq++] = (unsigned char)(unit ^ 0x20u);
    }
}

static int compile_regex(agti_searcher *s)
{
    uint32_t flags = PCRE2_UTF | PCRE2_MATCH_INVALID_UTF;
    if (s->o.case_insensitive)
        flags |= PCRE2_CASELESS;
    if (s->o.literal)
        flags |= PCRE2_LITERAL;
    else {
        /* UCP: \w, \d, \s, \b (as in both of ripgrep's engines) and the
         * POSIX classes (as in rg -P) are Unicode-aware. ALT_CIRCUMFLEX: '^' also matches after a
         * newline that ends the subject, which the retry of a line alone
         * (subject cut at the line's end) needs for an empty line: '^\s*$'
         * over three blank lines matched only the last one. */
        flags |= PCRE2_MULTILINE | PCRE2_UCP | PCRE2_ALT_CIRCUMFLEX;
        if (s->o.multiline)
            flags |= PCRE2_DOTALL;
    }
    int err = 0;
    PCRE2_SIZE erroff = 0;
    s->code = pcre2_compile((PCRE2_SPTR)s->pattern, s->plen, flags, &err, &erroff, NULL);
    if (s->code == NULL) {
        PCRE2_UCHAR msg[256];
        if (pcre2_get_error_message(err, msg, sizeof msg) < 0)
            strcpy((char *)msg, "unknown error");
        if (err == PCRE2_ERROR_NOMEMORY)
            return agti_oom();
        return agti_error(AGT_EPARSE, "regex '%s': error at offset %zu: %s", s->pattern,
                          (size_t)erroff, (const char *)msg);
    }
    /* Without JIT (unsupported CPU, no executable memory) the interpreter
     * gives the same results, only slower. */
    (void)pcre2_jit_compile(s->code, PCRE2_JIT_COMPLETE);
    if (flags & PCRE2_UCP) {
        /* Unicode \w and friends cost up to 1.6x on ASCII text (\w+_t\b
         * over /usr/include: 0.56 -> 0.91 s); ASCII files use this one. A
         * failure here only means every file takes the UCP code. */
        s->code_ascii =
            pcre2_compile((PCRE2_SPTR)s->pattern, s->plen, flags & ~PCRE2_UCP, &err, &erroff, NULL);
        if (s->code_ascii != NULL)
            (void)pcre2_jit_compile(s->code_ascii, PCRE2_JIT_COMPLETE);
    }
    set_prefilter(s);
    agti_req rq;
    rq.n = 0;
    if (s->o.literal && !s->o.multiline && !s->o.no_line_prefilter) {
        /* A fixed string here is caseless with k, s or non-ASCII letters:
         * its longest run without them is required. */
        size_t best = 0, bl = 0;
        for (size_t i = 0, st = 0; i <= s->plen; i++) {
            unsigned char c = i < s->plen ? (unsigned char)s->pattern[i] : 0;
            bool ok = i < s->plen && c < 0x80 && (c | 0x20u) != 'k' && (c | 0x20u) != 's';
            if (!ok) {
                if (i - st > bl) {
                    best = st;
                    bl = i - st;
                }
                st = i + 1;
            }
        }
        if (bl > AGTI_REQ_LEN)
            bl = AGTI_REQ_LEN;
        if (bl > 0) {
            rq.n = 1;
            rq.len[0] = (unsigned char)bl;
            memcpy(rq.s[0], s->pattern + best, bl);
        }
        s->line_local = true;
    } else if (!s->o.multiline) {
        s->line_local = agti_regex_required(s->pattern, s->plen, s->o.case_insensitive, &rq);
        if (s->o.no_line_prefilter)
            rq.n = 0;
    }
    if (rq.n > 0) {
        bool usable = true;
        for (size_t i = 0; i < rq.n; i++)
            usable = usable && rq.len[i] >= 2; /* one byte: PCRE2's own start scan is as good */
        for (size_t i = 0; usable && i < rq.n; i++) {
            int rc = agti_lit_init(&s->reqlit[i], rq.s[i], rq.len[i], s->o.case_insensitive);
            if (rc != AGT_OK)
                return rc;
            s->nreqlit = i + 1;
        }
    }
    return AGT_OK;
}

static int compile_filters(agti_searcher *s, const agti_search_opts *o)
{
    if (o->nglobs > 0) {
        s->inc = calloc(o->nglobs, sizeof *s->inc);
        s->exc = calloc(o->nglobs, sizeof *s->exc);
        if (s->inc == NULL || s->exc == NULL)
            return agti_oom();
    }
    for (size_t i = 0; i < o->nglobs; i++) {
        const char *g = o->globs[i];
        if (g == NULL || g[0] == '\0' || (g[0] == '!' && g[1] == '\0'))
            return agti_error(AGT_EINVAL, "glob filter %zu is empty", i);
        bool neg = g[0] == '!';
        agti_glob **slot = neg ? &s->exc[s->nexc++] : &s->inc[s->ninc++];
        int rc = agti_glob_compile(slot, neg ? g + 1 : g, 0);
        if (rc != AGT_OK) {
            agti_error_prefix("glob filter '%s'", g);
            return rc;
        }
    }
    if (o->ntypes > 0) {
        s->typeg = calloc(o->ntypes, sizeof *s->typeg);
        if (s->typeg == NULL)
            return agti_oom();
    }
    for (size_t i = 0; i < o->ntypes; i++) {
        const char *globs = agti_search_type_globs(o->types[i]);
        if (globs == NULL)
            /* The whole list (181 names) would be cut by the error buffer. */
            return agti_error(AGT_EINVAL,
                              "unknown file type '%s': type takes ripgrep's type names, such as "
                              "c, cpp, py, js, ts, rust, go, java, sh, md, json, yaml, docker, "
                              "make (ripgrep 13's --type-list has them all); for other files use "
                              "glob, for example '*.%s'",
                              o->types[i] ? o->types[i] : "(null)",
                              o->types[i] ? o->types[i] : "ext");
        int rc = agti_glob_compile(&s->typeg[s->ntypeg++], globs, 0);
        if (rc != AGT_OK)
            return rc;
    }
    if (o->npathspecs > 0)
        return agti_pathspec_compile(&s->ps, o->pathspecs, o->npathspecs);
    return AGT_OK;
}

/* True when the regex has the escape \n outside a character class: outside
 * multiline mode it can never match, since a match lies within one line
 * (ripgrep refuses it too; [^\n] stays fine). \Q...\E and [:class:] are
 * skipped. */
static bool has_newline_escape(const char *p, size_t n)
{
    bool in_class = false;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        if (c == '\\') {
            if (i + 1 >= n)
                break;
            char e = p[i + 1];
            if (e == 'Q') {
                size_t j = i + 2;
                while (j + 1 < n && !(p[j] == '\\' && p[j + 1] == 'E'))
                    j++;
                i = j + 1;
                continue;
            }
            if (e == 'n' && !in_class)
                return true;
            i++;
            continue;
        }
        if (in_class) {
            if (c == '[' && i + 1 < n && p[i + 1] == ':') {
                /* [:alpha:] inside a class: its ']' does not end the class */
                size_t j = i + 2;
                while (j + 1 < n && !(p[j] == ':' && p[j + 1] == ']'))
                    j++;
                i = j + 1;
            } else if (c == ']') {
                in_class = false;
            }
            continue;
        }
        if (c == '[') {
            in_class = true;
            size_t j = i + 1;
            if (j < n && p[j] == '^')
                j++;
            if (j < n && p[j] == ']') /* a leading ']' is a member */
                j++;
            i = j - 1;
        }
    }
    return false;
}

int agti_searcher_new(agti_searcher **out, const agti_search_opts *opts)
{
    if (out == NULL || opts == NULL)
        return agti_error(AGT_EINVAL, "search: NULL argument");
    *out = NULL;
    if (opts->pattern == NULL)
        return agti_error(AGT_EINVAL, "search: the pattern is NULL");
    size_t plen = opts->pattern_len ? opts->pattern_len : strlen(opts->pattern);
    if (plen == 0)
        return agti_error(AGT_EINVAL, "search: the pattern is empty");
    if (opts->mode < AGTI_SEARCH_CONTENT || opts->mode > AGTI_SEARCH_COUNT)
        return agti_error(AGT_EINVAL, "search: unknown output mode %d", opts->mode);
    if (!opts->multiline && memchr(opts->pattern, '\n', plen) != NULL)
        return agti_error(AGT_EINVAL, "search: the pattern contains a line break; matches are "
                                      "found within one line unless multiline is set");
    if (!opts->multiline && !opts->literal && has_newline_escape(opts->pattern, plen))
        return agti_error(AGT_EINVAL,
                          "search: the pattern contains \\n (a line break), which never matches "
                          "within one line; set multiline to match across lines");
    agti_searcher *s = calloc(1, sizeof *s);
    if (s == NULL)
        return agti_oom();
    s->o = *opts;
    s->o.globs = s->o.types = s->o.pathspecs = NULL;
    s->o.home = NULL;
    s->pattern = agti_strndup(opts->pattern, plen);
    s->glob_base = opts->glob_base != NULL ? agti_strdup(opts->glob_base) : NULL;
    s->o.glob_base = s->glob_base;
    if (s->pattern == NULL || (opts->glob_base != NULL && s->glob_base == NULL)) {
        free(s->pattern);
        free(s->glob_base);
        free(s);
        return agti_oom();
    }
    s->plen = plen;
    s->max_line = opts->max_line_chars ? opts->max_line_chars : AGTI_SEARCH_DEFAULT_MAX_LINE;
    s->max_size = opts->max_file_size ? opts->max_file_size : AGTI_SEARCH_DEFAULT_MAX_FILE_SIZE;
    if (!s->o.match_limit)
        s->o.match_limit = AGTI_SEARCH_DEFAULT_MATCH_LIMIT;
    if (!s->o.depth_limit)
        s->o.depth_limit = AGTI_SEARCH_DEFAULT_DEPTH_LIMIT;
    bool literal = opts->literal || is_plain_literal(s->pattern, plen);
    int rc;
    /* The ASCII-caseless finder is exact only without k and s: PCRE2 (and
     * ripgrep) also match U+212A KELVIN SIGN for k and U+017F LONG S for s. */
    bool ascii = true;
    for (size_t i = 0; i < plen; i++) {
        unsigned char c = (unsigned char)s->pattern[i];
        ascii = ascii && c < 0x80 && (c | 0x20u) != 'k' && (c | 0x20u) != 's';
    }
    if (literal && (!opts->case_insensitive || ascii)) {
        s->use_lit = true;
        s->line_local = true;
        rc = agti_lit_init(&s->lit, s->pattern, plen, opts->case_insensitive);
    } else
        rc = compile_regex(s);
    if (rc == AGT_OK)
        rc = compile_filters(s, opts);
    if (rc != AGT_OK) {
        agti_searcher_free(s);
        return rc;
    }
    *out = s;
    return AGT_OK;
}

void agti_searcher_free(agti_searcher *s)
{
    if (s == NULL)
        return;
    if (s->own != NULL) {
        agti_sworker_fini(s->own);
        free(s->own);
    }
    pcre2_code_free(s->code);
    pcre2_code_free(s->code_ascii);
    free(s->glob_base);
    agti_lit_fini(&s->lit);
    for (size_t i = 0; i < s->nreqlit; i++)
        agti_lit_fini(&s->reqlit[i]);
    for (size_t i = 0; i < s->ninc; i++)
        agti_glob_free(s->inc[i]);
    for (size_t i = 0; i < s->nexc; i++)
        agti_glob_free(s->exc[i]);
    for (size_t i = 0; i < s->ntypeg; i++)
        agti_glob_free(s->typeg[i]);
    free(s->inc);
    free(s->exc);
    free(s->typeg);
    agti_pathspec_free(s->ps);
    free(s->pattern);
    free(s);
}

/* A glob against relpath, or against glob_base/relpath when one is set. */
static bool glob_hits(const agti_searcher *s, const agti_glob *g, const char *relpath, size_t len)
{
    if (agti_glob_match(g, relpath, len, false))
        return true;
    const char *base = s->o.glob_base;
    if (base == NULL || base[0] == '\0')
        return false;
    char stack[4096];
    size_t bl = strlen(base);
    /* a deep tree can hold paths past PATH_MAX (the walk opens each folder
     * relative to its parent): those go through the heap */
    char *full = bl + 1 + len < sizeof stack ? stack : malloc(bl + 2 + len);
    if (full == NULL)
        return false;
    memcpy(full, base, bl);
    full[bl] = '/';
    memcpy(full + bl + 1, relpath, len);
    full[bl + 1 + len] = '\0';
    bool hit = agti_glob_match(g, full, bl + 1 + len, false);
    if (full != stack)
        free(full);
    return hit;
}

bool agti_searcher_selects(const agti_searcher *s, const char *relpath, size_t len)
{
    if (s->ntypeg > 0) {
        bool any = false;
        for (size_t i = 0; i < s->ntypeg && !any; i++)
            any = agti_glob_match(s->typeg[i], relpath, len, false);
        if (!any)
            return false;
    }
    if (s->ninc > 0) {
        bool any = false;
        for (size_t i = 0; i < s->ninc && !any; i++)
            any = glob_hits(s, s->inc[i], relpath, len);
        if (!any)
            return false;
    }
    for (size_t i = 0; i < s->nexc; i++)
        if (glob_hits(s, s->exc[i], relpath, len))
            return false;
    return s->ps == NULL || agti_pathspec_match(s->ps, relpath);
}

/* ---- per-thread state ------------------------------------------------- */

int agti_sworker_init(agti_sworker *w, const agti_searcher *s)
{
    memset(w, 0, sizeof *w);
    if (s->code == NULL)
        return AGT_OK;
    w->md = pcre2_match_data_create(1, NULL);
    w->mctx = pcre2_match_context_create(NULL);
    w->jit = pcre2_jit_stack_create(32 * 1024, 1024 * 1024, NULL);
    if (w->md == NULL || w->mctx == NULL || w->jit == NULL) {
        agti_sworker_fini(w);
        return agti_oom();
    }
    pcre2_set_match_limit(w->mctx, s->o.match_limit);
    pcre2_set_depth_limit(w->mctx, s->o.depth_limit);
    pcre2_jit_stack_assign(w->mctx, NULL, w->jit);
    return AGT_OK;
}

void agti_sworker_fini(agti_sworker *w)
{
    pcre2_match_data_free(w->md);
    pcre2_match_context_free(w->mctx);
    pcre2_jit_stack_free(w->jit);
    free(w->buf);
    memset(w, 0, sizeof *w);
}

/* ---- matching --------------------------------------------------------- */

static bool all_ascii_dropping(const agti_sworker *w, const char *d, size_t len);

/* First match in d[start..end) (end is the subject's end for PCRE2):
 * 1 found, 0 none, < 0 a PCRE2 error code. */
static int find(const agti_searcher *s, agti_sworker *w, const char *d, size_t end, size_t start,
                size_t *ms, size_t *me)
{
    if (s->use_lit) {
        const char *p = agti_lit_find(&s->lit, d + start, end - start);
        if (p == NULL)
            return 0;
        *ms = (size_t)(p - d);
        *me = *ms + s->plen;
        return 1;
    }
    if (w->code == NULL)
        w->code = s->code_ascii != NULL && all_ascii_dropping(w, w->data, w->len) ? s->code_ascii
                                                                                  : s->code;
    int rc = pcre2_match(w->code, (PCRE2_SPTR)d, end, start, 0, w->md, w->mctx);
    if (rc == PCRE2_ERROR_NOMATCH)
        return 0;
    if (rc < 0)
        return rc;
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(w->md);
    *ms = ov[0];
    *me = ov[1] < ov[0] ? ov[0] : ov[1]; /* \K in a lookahead can put the end first */
    return 1;
}

typedef struct collector {
    const agti_searcher *s;
    const char *d;
    size_t len;
    agti_search_file *f;
    agti_buf arena;
    size_t *toff; /* text offsets in arena, fixed up at the end */
    size_t lcap;
    size_t cur_off; /* a line start whose number is cur_line */
    uint64_t cur_line;
    bool any;
    uint64_t last_line;
    size_t emitted_end; /* offset just past the last emitted line */
    unsigned pending_after;
    bool oom;
} collector;

/* Newlines in p[0..n): line numbers are counted only up to the matched
 * lines, 16 bytes at a time (byte counters summed every 255 blocks). */
static size_t count_nl(const char *p, size_t n)
{
    size_t k = 0, i = 0;
#if defined(__SSE2__)
    const __m128i nl = _mm_set1_epi8('\n');
    const __m128i zero = _mm_setzero_si128();
    while (i + 16 <= n) {
        __m128i acc = zero;
        for (int b = 0; b < 255 && i + 16 <= n; b++, i += 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
            acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(v, nl));
        }
        __m128i sums = _mm_sad_epu8(acc, zero);
        k += (size_t)_mm_cvtsi128_si32(sums) + (size_t)_mm_extract_epi16(sums, 4);
    }
#endif
    for (; i < n; i++)
        k += p[i] == '\n';
    return k;
}

static uint64_t line_no_at(collector *c, size_t off)
{
    c->cur_line += count_nl(c->d + c->cur_off, off - c->cur_off);
    c->cur_off = off;
    return c->cur_line;
}

static size_t line_end(const char *d, size_t len, size_t off)
{
    const char *p = off < len ? memchr(d + off, '\n', len - off) : NULL;
    return p ? (size_t)(p - d) : len;
}

static size_t line_start(const char *d, size_t floor, size_t off)
{
    const char *p = off > floor ? memrchr(d + floor, '\n', off - floor) : NULL;
    return p ? (size_t)(p - d) + 1 : floor;
}

/* Appends the line's text: no "\r" before the line end, invalid UTF-8
 * replaced, at most max_line characters from character skip on (each
 * invalid byte counts as one). Returns whether it was cut at the end. */
static bool put_text(collector *c, const char *p, size_t n, size_t skip)
{
    agti_buf *b = &c->arena;
    if (n > 0 && p[n - 1] == '\r')
        n--;
    if (skip == 0 && n <= c->s->max_line && agti_utf8_valid(p, n)) {
        agti_buf_put(b, p, n);
        return false;
    }
    size_t i = 0, chars = 0;
    while (i < n && chars < skip + c->s->max_line) {
        uint32_t cp;
        size_t k = agti_utf8_decode((const unsigned char *)p + i, n - i, &cp);
        if (chars >= skip) {
            if (k == 0)
                agti_buf_put(b, "\xEF\xBF\xBD", 3);
            else
                agti_buf_put(b, p + i, k);
        }
        i += k == 0 ? 1 : k;
        chars++;
    }
    return i < n;
}

/* Where the window of a cut match line starts (characters; 0: at the
 * line's start): the match at byte ms of the line ls..le starts past three
 * quarters of max_line. */
static size_t window_from(collector *c, size_t ls, size_t le, size_t ms)
{
    size_t max = c->s->max_line;
    if (ms == SIZE_MAX || ms <= ls || le - ls <= max)
        return 0;
    size_t i = ls, chars = 0;
    while (i < ms) {
        uint32_t cp;
        size_t k = agti_utf8_decode((const unsigned char *)c->d + i, le - i, &cp);
        i += k == 0 ? 1 : k;
        chars++;
    }
    return chars >= max - max / 4 ? chars - max / 4 : 0;
}

static void emit(collector *c, size_t ls, size_t le, uint64_t lineno, bool is_match, size_t ms)
{
    agti_search_file *f = c->f;
    if (f->nlines == c->lcap) {
        size_t ncap = c->lcap ? 2 * c->lcap : 16;
        agti_search_line *nl = realloc(f->lines, ncap * sizeof *nl);
        if (nl == NULL) {
            c->oom = true;
            return;
        }
        f->lines = nl;
        size_t *nt = realloc(c->toff, ncap * sizeof *nt);
        if (nt == NULL) {
            c->oom = true;
            return;
        }
        c->toff = nt;
        c->lcap = ncap;
    }
    agti_search_line *l = &f->lines[f->nlines];
    memset(l, 0, sizeof *l);
    l->line_no = lineno;
    l->offset = ls;
    l->is_match = is_match;
    l->group_start = !c->any || lineno != c->last_line + 1;
    size_t start = c->arena.len;
    l->cut_from = is_match ? window_from(c, ls, le, ms) : 0;
    l->cut = put_text(c, c->d + ls, le - ls, l->cut_from);
    l->len = c->arena.len - start;
    agti_buf_putc(&c->arena, '\0');
    c->toff[f->nlines++] = start;
    c->any = true;
    c->last_line = lineno;
    c->emitted_end = le < c->len ? le + 1 : c->len;
}

/* Emits pending after-context lines that start before upto. */
static void emit_after(collector *c, size_t upto)
{
    while (c->pending_after > 0 && c->emitted_end < upto && c->emitted_end < c->len) {
        size_t ls = c->emitted_end;
        emit(c, ls, line_end(c->d, c->len, ls), c->last_line + 1, false, SIZE_MAX);
        c->pending_after--;
    }
    c->pending_after = 0;
}

/* ms: where the match starts (SIZE_MAX: not known, multiline mode). */
static void emit_match_line(collector *c, size_t ls, size_t le, size_t ms)
{
    uint64_t lineno = line_no_at(c, ls);
    emit_after(c, ls);
    size_t floor = c->any ? c->emitted_end : 0;
    size_t start = ls;
    unsigned k = 0;
    while (k < c->s->o.before && start > floor) {
        start = line_start(c->d, floor, start - 1);
        k++;
    }
    for (unsigned j = 0; j < k; j++) {
        size_t e = line_end(c->d, c->len, start);
        emit(c, start, e, lineno - k + j, false, SIZE_MAX);
        start = e + 1;
    }
    emit(c, ls, le, lineno, true, ms);
    c->pending_after = c->s->o.after;
}

static int limit_error(int rc)
{
    if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT ||
        rc == PCRE2_ERROR_HEAPLIMIT || rc == PCRE2_ERROR_JIT_STACKLIMIT) {
        PCRE2_UCHAR msg[128];
        pcre2_get_error_message(rc, msg, sizeof msg);
        return agti_error(AGT_ELIMIT, "the regex is too expensive on this file (%s); simplify it",
                          (const char *)msg);
    }
    if (rc == PCRE2_ERROR_NOMEMORY)
        return agti_oom();
    PCRE2_UCHAR msg[128];
    pcre2_get_error_message(rc, msg, sizeof msg);
    return agti_error(AGT_ERROR, "regex match failed: %s", (const char *)msg);
}

static bool out_of_time(agti_sworker *w)
{
    if (w->deadline_ns == 0)
        return false;
    if (agti_search_now_ns() >= w->deadline_ns)
        w->timed_out = true;
    return w->timed_out;
}

/* A mapped file is scanned in windows of about this many bytes (ending at
 * a line end); the pages of a window done with are dropped from the
 * process (they stay in the page cache), so a big file adds about one
 * window to the resident size instead of its size. */
#define WINDOW ((size_t)128 << 10)

/* Drops the whole pages of d[from..to) when d is mapped. */
static void drop_pages(const agti_sworker *w, const char *d, size_t from, size_t to)
{
    static size_t page;
    if (!w->mapped || to <= from)
        return;
    if (page == 0) {
        long ps = sysconf(_SC_PAGESIZE);
        page = ps > 0 ? (size_t)ps : 4096;
    }
    uintptr_t a = ((uintptr_t)(d + from) + page - 1) & ~(uintptr_t)(page - 1);
    uintptr_t b = (uintptr_t)(d + to) & ~(uintptr_t)(page - 1);
    if (b > a)
        (void)madvise((void *)a, b - a, MADV_DONTNEED);
}

/* Where the window from pos ends: the line end at or after pos + WINDOW, or len. */
static size_t window_end(const char *d, size_t len, size_t pos)
{
    if (len - pos <= WINDOW)
        return len;
    const char *p = memchr(d + pos + WINDOW, '\n', len - pos - WINDOW);
    return p ? (size_t)(p - d) : len;
}

/* The first hit at or after pos of any of the required literals, or len.
 * next[i] caches literal i's first hit at or after some earlier pos
 * (SIZE_MAX: not looked for yet; len: none further). */
static size_t next_required(const agti_searcher *s, const char *d, size_t len, size_t pos,
                            size_t *next)
{
    size_t best = len;
    for (size_t i = 0; i < s->nreqlit; i++) {
        if (next[i] == SIZE_MAX || (next[i] < pos && next[i] < len)) {
            const char *h = agti_lit_find(&s->reqlit[i], d + pos, len - pos);
            next[i] = h ? (size_t)(h - d) : len;
        }
        if (next[i] < best)
            best = next[i];
    }
    return best;
}

/* Line mode: a line matches when the pattern matches within it. With
 * required literals, the regex runs only on each line that holds one, with
 * the subject ending at the line's end: for the patterns the extractor
 * accepts (no lookaround, no \z) a match within a line is the same either
 * way, and a line without a required literal has none. */
static int search_lines(collector *c, agti_sworker *w, int mode, size_t cap)
{
    const char *d = c->d;
    size_t len = c->len, pos = 0, count = 0;
    size_t next[AGTI_REQ_MAX];
    for (size_t i = 0; i < AGTI_REQ_MAX; i++)
        next[i] = SIZE_MAX;
    /* Mapped data goes window by window: the subject ends at lim. */
    bool windowed = w->mapped && c->s->line_local && len > WINDOW;
    size_t lim = windowed ? window_end(d, len, 0) : len, dropped = 0;
    while (pos < len) {
        size_t ms, me;
        int r;
        size_t ls, le;
        if (pos > lim) {
            /* past the window: line numbers counted through it, its pages dropped */
            if (mode == AGTI_SEARCH_CONTENT)
                line_no_at(c, pos);
            drop_pages(w, d, dropped, pos);
            dropped = pos;
            lim = window_end(d, len, pos);
        }
        if (c->s->nreqlit > 0) {
            size_t h = next_required(c->s, d, lim, pos, next);
            if (h >= lim) {
                if (lim >= len)
                    break;
                pos = lim + 1;
                continue;
            }
            ls = line_start(d, pos, h);
            le = line_end(d, len, h);
            r = find(c->s, w, d, le, ls, &ms, &me);
            if (r < 0)
                return limit_error(r);
            if (r == 0) {
                pos = le + 1;
                continue;
            }
            goto matched;
        }
        r = find(c->s, w, d, lim, pos, &ms, &me);
        if (r < 0)
            return limit_error(r);
        if (r == 0 && lim < len) {
            pos = lim + 1;
            continue;
        }
        if (r == 0 || (ms == len && d[len - 1] == '\n'))
            break;
        ls = line_start(d, pos, ms);
        le = line_end(d, len, ms);
        if (me > le) {
            /* The match crossed the line end: does the line match alone? */
            r = find(c->s, w, d, le, ls, &ms, &me);
            if (r < 0)
                return limit_error(r);
            if (r == 0) {
                pos = le + 1;
                continue;
            }
        }
    matched:
        if (cap && count == cap) {
            c->f->truncated = true;
            break;
        }
        count++;
        if (mode == AGTI_SEARCH_FILES)
            break;
        if (mode == AGTI_SEARCH_CONTENT)
            emit_match_line(c, ls, le, ms);
        pos = le + 1;
        if ((count & 1023) == 0 && out_of_time(w)) {
            c->f->truncated = true;
            break;
        }
    }
    c->f->nmatch_lines = count;
    return AGT_OK;
}

/* Multiline mode: every line a match touches is a matched line; COUNT
 * counts matches (as ripgrep -c -U does). */
static int search_multi(collector *c, agti_sworker *w, int mode, size_t cap)
{
    const char *d = c->d;
    size_t len = c->len, pos = 0, count = 0, lines = 0, floor = 0;
    size_t reported_end = 0; /* offset past the last line counted */
    bool any = false;
    while (pos <= len) {
        size_t ms, me;
        int r = find(c->s, w, d, len, pos, &ms, &me);
        if (r < 0)
            return limit_error(r);
        if (r == 0 || (ms == len && (len == 0 || d[len - 1] == '\n')))
            break;
        size_t ls = line_start(d, floor, ms);
        size_t last = me > ms ? me - 1 : ms;
        size_t le = line_end(d, len, last);
        if (!any || ls >= reported_end)
            count++;
        if (mode == AGTI_SEARCH_FILES) {
            count = 1;
            break;
        }
        if (mode == AGTI_SEARCH_COUNT && cap && count > cap) {
            count--;
            c->f->truncated = true;
            break;
        }
        if (mode == AGTI_SEARCH_CONTENT) {
            size_t x = ls;
            while (x <= le && x < len) {
                size_t e = line_end(d, len, x);
                if (!c->any || x >= c->emitted_end) {
                    if (cap && lines == cap) {
                        c->f->truncated = true;
                        goto done;
                    }
                    emit_match_line(c, x, e, SIZE_MAX);
                    lines++;
                }
                x = e + 1;
            }
        }
        any = true;
        reported_end = le + 1;
        floor = ls;
        if (me > ms)
            pos = me;
        else {
            pos = ms + 1;
            while (pos < len && ((unsigned char)d[pos] & 0xC0u) == 0x80u)
                pos++;
        }
        if ((count & 1023) == 0 && out_of_time(w)) {
            c->f->truncated = true;
            break;
        }
    }
done:
    c->f->nmatch_lines = mode == AGTI_SEARCH_CONTENT ? lines : count;
    return AGT_OK;
}

/* True when d[0..len) holds no byte >= 0x80. */
static bool all_ascii(const char *d, size_t len)
{
    size_t i = 0;
    uint64_t acc = 0;
    for (; i + 32 <= len; i += 32) {
        uint64_t a, b, c, e;
        memcpy(&a, d + i, 8);
        memcpy(&b, d + i + 8, 8);
        memcpy(&c, d + i + 16, 8);
        memcpy(&e, d + i + 24, 8);
        acc |= a | b | c | e;
        if (acc & UINT64_C(0x8080808080808080))
            return false;
    }
    for (; i < len; i++)
        acc |= (unsigned char)d[i];
    return (acc & UINT64_C(0x8080808080808080)) == 0;
}

/* The checks over the whole data before the search, window by window
 * (each dropped when mapped): the first NUL byte at or after from (NULL:
 * none), and over d[0..len) (len cut before that NUL by the caller) whether
 * a byte of the file prefilter is present and whether all bytes are ASCII. */
static const char *find_nul(const agti_sworker *w, const char *d, size_t from, size_t len)
{
    for (size_t off = from; off < len; off += WINDOW) {
        size_t n = len - off < WINDOW ? len - off : WINDOW;
        const char *z = memchr(d + off, '\0', n);
        if (z != NULL)
            return z;
        drop_pages(w, d, off, off + n);
    }
    return NULL;
}

static bool prefilter_rejects(const agti_searcher *s, const agti_sworker *w, const char *d,
                              size_t len)
{
    if (s->nreq == 0)
        return false;
    for (size_t off = 0; off < len; off += WINDOW) {
        size_t n = len - off < WINDOW ? len - off : WINDOW;
        for (int i = 0; i < s->nreq; i++)
            if (memchr(d + off, s->req[i], n) != NULL)
                return false;
        drop_pages(w, d, off, off + n);
    }
    return true;
}

static bool all_ascii_dropping(const agti_sworker *w, const char *d, size_t len)
{
    for (size_t off = 0; off < len; off += WINDOW) {
        size_t n = len - off < WINDOW ? len - off : WINDOW;
        if (!all_ascii(d + off, n))
            return false;
        drop_pages(w, d, off, off + n);
    }
    return true;
}

int agti_search_data(const agti_searcher *s, agti_sworker *w, const char *data, size_t len,
                     agti_search_file *out, bool *matched, bool *binary)
{
    memset(out, 0, sizeof *out);
    *matched = false;
    *binary = false;
    if (len == 0)
        data = "";
    size_t probe = len < AGTI_SEARCH_BINARY_PROBE ? len : AGTI_SEARCH_BINARY_PROBE;
    int mode = s->o.mode;
    /* the tree's reader looked at the probe's bytes as it read them */
    bool probed = w->nul_free >= probe;
    w->nul_free = 0;
    if (!probed && memchr(data, '\0', probe) != NULL) {
        *binary = true;
        if (!s->o.binary_report)
            return AGT_OK;
        mode = AGTI_SEARCH_FILES;
    }
    size_t full_len = len;
    uint64_t nul_line = 0;
    if (!*binary && len > probe && !s->o.binary_report) {
        /* A NUL further in (a log with a zero-filled tail, a text header on
         * binary data): search the lines before it only, so no line of
         * binary data is printed; ripgrep likewise stops at the first NUL
         * it meets. */
        const char *z = find_nul(w, data, probe, len);
        if (z != NULL) {
            const char *nl = memrchr(data, '\n', (size_t)(z - data));
            len = nl != NULL ? (size_t)(nl + 1 - data) : 0;
            nul_line = 1;
            for (size_t off = 0; off < len; off += WINDOW) {
                size_t n = len - off < WINDOW ? len - off : WINDOW;
                nul_line += count_nl(data + off, n);
                drop_pages(w, data, off, off + n);
            }
        }
    }
    if (prefilter_rejects(s, w, data, len)) {
        *binary = nul_line > 0;
        return AGT_OK;
    }
    /* Which code runs is decided when the regex first runs on this file:
     * most files never get that far (no required literal, no byte of the
     * prefilter), and the check is a pass over the whole file. */
    w->code = NULL;
    w->data = data;
    w->len = len;
    collector c;
    memset(&c, 0, sizeof c);
    c.s = s;
    c.d = data;
    c.len = len;
    c.f = out;
    c.cur_line = 1;
    size_t cap = s->o.max_matches_per_file;
    int rc = s->o.multiline ? search_multi(&c, w, mode, cap) : search_lines(&c, w, mode, cap);
    if (rc == AGT_OK && mode == AGTI_SEARCH_CONTENT)
        emit_after(&c, len);
    if (rc == AGT_OK && (c.oom || c.arena.oom))
        rc = agti_oom();
    if (rc != AGT_OK) {
        free(c.toff);
        agti_buf_free(&c.arena);
        agti_search_file_clear(out);
        return rc;
    }
    if (out->nlines > 0) {
        out->arena = c.arena.ptr;
        for (size_t i = 0; i < out->nlines; i++)
            out->lines[i].text = out->arena + c.toff[i];
    } else {
        agti_buf_free(&c.arena);
    }
    free(c.toff);
    out->binary = *binary;
    out->size = full_len;
    out->binary_from_line = nul_line;
    *matched = out->nmatch_lines > 0;
    if (nul_line > 0 && !*matched)
        *binary = true; /* counted with the binary files skipped */
    return AGT_OK;
}

int agti_searcher_search_buffer(agti_searcher *s, const char *path, const char *data, size_t len,
                                agti_search_file *out, bool *matched, bool *binary)
{
    if (s == NULL || path == NULL || (data == NULL && len > 0) || out == NULL || matched == NULL ||
        binary == NULL)
        return agti_error(AGT_EINVAL, "search: NULL argument");
    if (s->own == NULL) {
        s->own = calloc(1, sizeof *s->own);
        if (s->own == NULL)
            return agti_oom();
        int rc = agti_sworker_init(s->own, s);
        if (rc != AGT_OK) {
            free(s->own);
            s->own = NULL;
            return rc;
        }
    }
    int rc = agti_search_data(s, s->own, data, len, out, matched, binary);
    if (rc != AGT_OK) {
        agti_error_prefix("%s", path);
        return rc;
    }
    out->path = agti_strdup(path);
    if (out->path == NULL) {
        agti_search_file_clear(out);
        return agti_oom();
    }
    return AGT_OK;
}

void agti_search_file_clear(agti_search_file *f)
{
    if (f == NULL)
        return;
    free(f->path);
    free(f->lines);
    free(f->arena);
    memset(f, 0, sizeof *f);
}
