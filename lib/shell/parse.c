/*
 * The grammar of the shell command language (XCU 2.9 and 2.10) with bash's
 * additions: lists, and-or lists, pipelines (|, |&, !, time), simple
 * commands with assignments and redirections, compound commands (( ), { },
 * if, while, until, for, select, case, [[ ]], (( ))), function definitions
 * and here-documents. A recursive descent over the text itself (the shell's
 * tokens depend on where they occur), one pass, nothing re-read except the
 * short look-ahead that tells `((` arithmetic from nested subshells.
 *
 * Recursion is bounded by p->depth (AGTI_SH_MAX_DEPTH): every construct
 * that nests goes through agti_shp_enter. Memory comes from an arena with a
 * budget proportional to the input, so no input can make it grow without
 * bound.
 */
#include <limits.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shell/parse_internal.h"

/* Arena bytes allowed: this many times the input, plus a fixed slack. */
#define SH_BUDGET_FACTOR 64u
#define SH_BUDGET_SLACK (8u << 20) /* room for AGTI_SH_MAX_COMMANDS short commands */
/* Functions kept out of their callers' frames: the grammar recurses through
 * parse_simple/parse_compound once per nesting level, so what is inlined
 * there is paid 256 times at the depth limit. */
#if defined(__GNUC__)
#define SH_NOINLINE __attribute__((noinline))
#else
#define SH_NOINLINE
#endif

/* Arena chunks start small (most scripts are one line) and double. */
#define SH_CHUNK_MIN (4u * 1024u)
#define SH_CHUNK_MAX (1024u * 1024u)
/* Bytes the `((` look-ahead may scan in all: this many times the input. */
#define SH_LOOKAHEAD_FACTOR 8u
#define SH_LOOKAHEAD_SLACK (64u * 1024u)

enum sh_kw {
    KW_NONE,
    KW_IF,
    KW_THEN,
    KW_ELSE,
    KW_ELIF,
    KW_FI,
    KW_DO,
    KW_DONE,
    KW_CASE,
    KW_ESAC,
    KW_WHILE,
    KW_UNTIL,
    KW_FOR,
    KW_SELECT,
    KW_IN,
    KW_FUNCTION,
    KW_TIME,
    KW_LBRACE,
    KW_RBRACE,
    KW_BANG,
    KW_DLBRACK,
    KW_DRBRACK,
    KW_COPROC
};

/* Sorted by length; kw_first[n] is the first of length n. */
static const struct {
    const char *word;
    size_t len;
    int kw;
} keywords[] = {
    {"{", 1, KW_LBRACE},      {"}", 1, KW_RBRACE},
    {"!", 1, KW_BANG},        {"if", 2, KW_IF},
    {"fi", 2, KW_FI},         {"do", 2, KW_DO},
    {"in", 2, KW_IN},         {"[[", 2, KW_DLBRACK},
    {"]]", 2, KW_DRBRACK},    {"for", 3, KW_FOR},
    {"then", 4, KW_THEN},     {"else", 4, KW_ELSE},
    {"elif", 4, KW_ELIF},     {"done", 4, KW_DONE},
    {"case", 4, KW_CASE},     {"esac", 4, KW_ESAC},
    {"time", 4, KW_TIME},     {"while", 5, KW_WHILE},
    {"until", 5, KW_UNTIL},   {"select", 6, KW_SELECT},
    {"coproc", 6, KW_COPROC}, {"function", 8, KW_FUNCTION},
};
static const size_t kw_first[10] = {22, 0, 3, 9, 10, 17, 19, 22, 21, 22};

/* ---- failure, arena, depth ----------------------------------------------- */

void agti_shp_fail(sh_parser *p, int status, size_t pos, const char *fmt, ...)
{
    if (p->failed)
        return;
    p->failed = true;
    p->status = status;
    if (!p->err)
        return;
    p->err->status = status;
    p->err->offset = p->base + pos;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err->message, sizeof p->err->message, fmt, ap);
    va_end(ap);
}

void *agti_shp_alloc(sh_parser *p, size_t n)
{
    void *r = agti_shp_alloc_raw(p, n);
    if (r)
        memset(r, 0, n);
    return r;
}

void *agti_shp_alloc_raw(sh_parser *p, size_t n)
{
    agti_sh_arena *a = &p->sc->arena;
    size_t more = agti_sh_arena_need(a, n);
    if (more > 0 && a->bytes + more > p->budget) {
        agti_shp_fail(p, AGTI_SH_ENOMEM, p->pos,
                      "the script needs more than %zu bytes of parser memory "
                      "(%u times its length): refused",
                      p->budget, SH_BUDGET_FACTOR);
        return NULL;
    }
    void *r = agti_sh_arena_alloc(a, n);
    if (!r)
        agti_shp_fail(p, AGTI_SH_ENOMEM, p->pos, "out of memory");
    return r;
}

bool agti_shp_grow(sh_parser *p, void **arr, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return true;
    size_t ncap = *cap ? *cap * 2 : 4;
    void *a = agti_shp_alloc(p, ncap * elem);
    if (!a)
        return false;
    if (*cap)
        memcpy(a, *arr, *cap * elem);
    *arr = a;
    *cap = ncap;
    return true;
}

bool agti_shp_enter(sh_parser *p, size_t pos)
{
    if (p->failed)
        return false;
    if (p->depth >= AGTI_SH_MAX_DEPTH) {
        agti_shp_fail(p, AGTI_SH_ETOODEEP, pos,
                      "constructs nest deeper than %d levels at byte %zu: refused",
                      AGTI_SH_MAX_DEPTH, p->base + pos);
        return false;
    }
    p->depth++;
    return true;
}

void agti_shp_leave(sh_parser *p)
{
    p->depth--;
}

/* ---- characters and tokens ------------------------------------------------ */

static int at(const sh_parser *p, size_t k)
{
    return p->pos + k < p->end ? (unsigned char)p->s[p->pos + k] : -1;
}

void agti_shp_skip_blanks(sh_parser *p)
{
    while (p->pos < p->end) {
        char c = p->s[p->pos];
        if (c == ' ' || c == '\t') {
            p->pos++;
        } else if (c == '\\' && at(p, 1) == '\n') {
            p->pos += 2;
        } else if (c == '#') {
            while (p->pos < p->end && p->s[p->pos] != '\n')
                p->pos++;
        } else {
            break;
        }
    }
}

/* Blanks, comments and newline tokens (reading here-doc bodies at each). */
static bool skip_linebreaks(sh_parser *p)
{
    for (;;) {
        agti_shp_skip_blanks(p);
        if (at(p, 0) != '\n')
            return true;
        p->pos++;
        if (!agti_shp_read_heredocs(p))
            return false;
    }
}

/* The reserved word at p->pos (unquoted, followed by a metacharacter or the
 * end), or KW_NONE. */
static int peek_kw_scan(const sh_parser *p, size_t *len);

static int peek_kw(const sh_parser *p, size_t *len)
{
    sh_parser *m = (sh_parser *)(uintptr_t)p; /* the cache only */
    if (m->kw_s != p->s || m->kw_pos != p->pos || m->kw_end != p->end) {
        m->kw_len = 0;
        m->kw = peek_kw_scan(p, &m->kw_len);
        m->kw_s = p->s;
        m->kw_pos = p->pos;
        m->kw_end = p->end;
    }
    if (len && m->kw != KW_NONE)
        *len = m->kw_len;
    return m->kw;
}

static int peek_kw_scan(const sh_parser *p, size_t *len)
{
    size_t i = p->pos;
    while (i < p->end && i - p->pos < 9) {
        char c = p->s[i];
        if (agti_shp_is_meta(c))
            break;
        if (!((c >= 'a' && c <= 'z') || c == '{' || c == '}' || c == '!' || c == '[' || c == ']'))
            return KW_NONE;
        i++;
    }
    if (i < p->end && !agti_shp_is_meta(p->s[i]))
        return KW_NONE;
    size_t n = i - p->pos;
    if (n == 0)
        return KW_NONE;
    const char *w = p->s + p->pos;
    /* keywords[] is sorted by length: look at the ones of length n only */
    for (size_t k = kw_first[n]; k < sizeof keywords / sizeof keywords[0] && keywords[k].len == n;
         k++) {
        size_t j = 0;
        while (j < n && keywords[k].word[j] == w[j])
            j++;
        if (j == n) {
            if (len)
                *len = n;
            return keywords[k].kw;
        }
    }
    return KW_NONE;
}

static bool is_terminator_kw(int kw)
{
    return kw == KW_THEN || kw == KW_ELSE || kw == KW_ELIF || kw == KW_FI || kw == KW_DO ||
           kw == KW_DONE || kw == KW_ESAC || kw == KW_RBRACE;
}

static const char *kw_name(int kw)
{
    for (size_t k = 0; k < sizeof keywords / sizeof keywords[0]; k++)
        if (keywords[k].kw == kw)
            return keywords[k].word;
    return "?";
}

/* Describes the token at p->pos for an error message. */
static const char *token_desc(const sh_parser *p, char *buf, size_t n)
{
    if (p->pos >= p->end)
        return "end of input";
    size_t kl = 0;
    int kw = peek_kw(p, &kl);
    if (kw != KW_NONE) {
        snprintf(buf, n, "`%s`", kw_name(kw));
        return buf;
    }
    char c = p->s[p->pos];
    if (c == '\n')
        return "newline";
    if ((c == ';' || c == '&' || c == '|') && at(p, 1) == c)
        snprintf(buf, n, "`%c%c`", c, c);
    else
        snprintf(buf, n, "`%c`", c);
    return buf;
}

static void fail_unexpected(sh_parser *p, const char *where)
{
    char b[16];
    agti_shp_fail(p, AGTI_SH_ESYNTAX, p->pos, "unexpected %s at byte %zu%s%s",
                  token_desc(p, b, sizeof b), p->base + p->pos, where ? " " : "",
                  where ? where : "");
}

static bool expect_kw(sh_parser *p, int kw, const char *what, size_t open)
{
    if (p->failed)
        return false;
    size_t len = 0;
    if (peek_kw(p, &len) == kw) {
        p->pos += len;
        return true;
    }
    char b[16];
    agti_shp_fail(p, AGTI_SH_ESYNTAX, p->pos,
                  "`%s` expected %s (started at byte %zu), found %s at byte %zu", kw_name(kw), what,
                  p->base + open, token_desc(p, b, sizeof b), p->base + p->pos);
    return false;
}

/* ---- nodes and commands ------------------------------------------------------ */

static agti_sh_node *new_node(sh_parser *p, int kind, size_t start)
{
    agti_sh_node *n = agti_shp_alloc(p, sizeof *n);
    if (!n)
        return NULL;
    n->kind = kind;
    n->cmd = -1;
    n->func = -1;
    n->offset = p->base + start;
    return n;
}

static bool add_child(sh_parser *p, agti_sh_node *n, agti_sh_node *c, size_t *cap)
{
    if (!agti_shp_grow(p, (void **)&n->children, cap, n->nchildren, sizeof *n->children))
        return false;
    n->children[n->nchildren++] = c;
    return true;
}

static void end_node(sh_parser *p, agti_sh_node *n)
{
    n->length = p->base + p->pos - n->offset;
}

static int add_cmd(sh_parser *p, const agti_sh_cmd *c)
{
    agti_sh_script *sc = p->sc;
    if (sc->ncmds >= AGTI_SH_MAX_COMMANDS) {
        agti_shp_fail(p, AGTI_SH_ETOOMANY, c->offset - p->base,
                      "more than %d simple commands: refused", AGTI_SH_MAX_COMMANDS);
        return -1;
    }
    if (agti_grow(&sc->cmds, &sc->capcmds, sc->ncmds, sizeof *sc->cmds, 16) != AGT_OK) {
        agti_shp_fail(p, AGTI_SH_ENOMEM, p->pos, "out of memory");
        return -1;
    }
    agti_sh_cmd *d = &sc->cmds[sc->ncmds];
    *d = *c;
    d->flags |= p->ctx;
    d->function = p->func;
    return (int)sc->ncmds++;
}

static bool stdin_redir(const agti_sh_redir *r)
{
    if (r->fd > 0 || r->fd_var)
        return false;
    return r->op == AGTI_SHR_IN || r->op == AGTI_SHR_RDWR || r->op == AGTI_SHR_HEREDOC ||
           r->op == AGTI_SHR_HEREDOC_TAB || r->op == AGTI_SHR_HERESTRING ||
           r->op == AGTI_SHR_DUP_IN;
}

static void mark_range(sh_parser *p, size_t first, unsigned flag)
{
    for (size_t i = first; i < p->sc->ncmds; i++)
        p->sc->cmds[i].flags |= flag;
}

static void mark_pending(sh_parser *p, size_t first, unsigned flag)
{
    for (size_t i = first; i < p->npend; i++)
        p->pend[i].ctx |= flag;
}

/* ---- redirections -------------------------------------------------------------- */

/* Length of the redirection operator at p->pos + k, and its op. */
static size_t redir_op(const sh_parser *p, size_t k, int *op)
{
    int c0 = at(p, k), c1 = at(p, k + 1), c2 = at(p, k + 2);
    if (c0 == '<') {
        if (c1 == '(')
            return 0;
        if (c1 == '<' && c2 == '<')
            return *op = AGTI_SHR_HERESTRING, 3;
        if (c1 == '<' && c2 == '-')
            return *op = AGTI_SHR_HEREDOC_TAB, 3;
        if (c1 == '<')
            return *op = AGTI_SHR_HEREDOC, 2;
        if (c1 == '&')
            return *op = AGTI_SHR_DUP_IN, 2;
        if (c1 == '>')
            return *op = AGTI_SHR_RDWR, 2;
        return *op = AGTI_SHR_IN, 1;
    }
    if (c0 == '>') {
        if (c1 == '(')
            return 0;
        if (c1 == '>')
            return *op = AGTI_SHR_APPEND, 2;
        if (c1 == '|')
            return *op = AGTI_SHR_CLOBBER, 2;
        if (c1 == '&')
            return *op = AGTI_SHR_DUP_OUT, 2;
        return *op = AGTI_SHR_OUT, 1;
    }
    if (c0 == '&' && c1 == '>') {
        if (c2 == '>')
            return *op = AGTI_SHR_APPEND_ERR, 3;
        return *op = AGTI_SHR_OUT_ERR, 2;
    }
    return 0;
}

/* Whether a redirection starts at p->pos: [n]op or {name}op. *prefix gets the
 * length of the fd number or {name}. */
static bool redir_ahead(const sh_parser *p, size_t *prefix, int *op)
{
    size_t i = 0;
    while (at(p, i) >= '0' && at(p, i) <= '9')
        i++;
    if (i == 0 && at(p, 0) == '{') {
        size_t j = 1;
        int c = at(p, j);
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') {
            while ((c = at(p, j)) >= 0 && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                                           c == '_' || (c >= '0' && c <= '9')))
                j++;
            if (at(p, j) == '}') {
                int c2 = at(p, j + 1);
                if (c2 == '<' || c2 == '>')
                    i = j + 1;
            }
        }
    }
    size_t n = redir_op(p, i, op);
    if (n == 0)
        return false;
    if (i > 0 && p->s[p->pos] != '{' && *op == AGTI_SHR_OUT_ERR)
        return false; /* `2&>` is not one token */
    *prefix = i;
    return true;
}

static bool word_is(const agti_sh_word *w, const char *s)
{
    return strlen(s) == w->vlen && memcmp(w->value, s, w->vlen) == 0;
}

static bool harmless_target(const agti_sh_word *w)
{
    if (w->flags & (AGTI_SHW_DYNAMIC | AGTI_SHW_GLOB | AGTI_SHW_BRACE | AGTI_SHW_TILDE))
        return false;
    if (word_is(w, "/dev/null") || word_is(w, "/dev/stdout") || word_is(w, "/dev/stderr"))
        return true;
    if (w->vlen > 8 && memcmp(w->value, "/dev/fd/", 8) == 0) {
        for (size_t i = 8; i < w->vlen; i++)
            if (w->value[i] < '0' || w->value[i] > '9')
                return false;
        return true;
    }
    return false;
}

/* An fd for >& / <& : digits, digits followed by `-` (move), or `-`. */
static bool fd_word(const agti_sh_word *w)
{
    if (w->flags & (AGTI_SHW_DYNAMIC | AGTI_SHW_GLOB | AGTI_SHW_BRACE | AGTI_SHW_TILDE))
        return false;
    if (word_is(w, "-"))
        return true;
    size_t i = 0;
    while (i < w->vlen && w->value[i] >= '0' && w->value[i] <= '9')
        i++;
    if (i == 0)
        return false;
    return i == w->vlen || (i + 1 == w->vlen && w->value[i] == '-');
}

SH_NOINLINE static bool parse_redir(sh_parser *p, agti_sh_redir *r, size_t prefix, int op)
{
    size_t start = p->pos;
    r->fd = -1;
    if (prefix && p->s[p->pos] == '{') {
        r->fd_var = true;
    } else if (prefix) {
        long fd = 0;
        for (size_t i = 0; i < prefix; i++) {
            fd = fd * 10 + (p->s[p->pos + i] - '0');
            if (fd > INT_MAX)
                fd = INT_MAX;
        }
        r->fd = (int)fd;
    }
    p->pos += prefix;
    int dummy;
    p->pos += redir_op(p, 0, &dummy);
    r->op = op;
    agti_shp_skip_blanks(p);
    bool procsubst = (at(p, 0) == '<' || at(p, 0) == '>') && at(p, 1) == '(';
    if (p->pos >= p->end || (agti_shp_is_meta(p->s[p->pos]) && !procsubst)) {
        char b[16];
        agti_shp_fail(p, AGTI_SH_ESYNTAX, p->pos,
                      "the redirection at byte %zu needs a %s, found %s", p->base + start,
                      op == AGTI_SHR_HEREDOC || op == AGTI_SHR_HEREDOC_TAB ? "delimiter word"
                                                                           : "target word",
                      token_desc(p, b, sizeof b));
        return false;
    }
    if (!agti_shp_word(p, &r->target, 0))
        return false;
    if (op == AGTI_SHR_HEREDOC || op == AGTI_SHR_HEREDOC_TAB) {
        r->heredoc_expands = !(r->target.flags & AGTI_SHW_QUOTED);
        return true;
    }
    switch (op) {
    case AGTI_SHR_OUT:
    case AGTI_SHR_APPEND:
    case AGTI_SHR_CLOBBER:
    case AGTI_SHR_RDWR:
    case AGTI_SHR_OUT_ERR:
    case AGTI_SHR_APPEND_ERR:
        r->writes = !harmless_target(&r->target);
        break;
    case AGTI_SHR_DUP_OUT:
        r->writes = !fd_word(&r->target) && !harmless_target(&r->target);
        break;
    default:
        r->writes = false;
    }
    return true;
}

/* Queues the here-documents among redirs (their bodies follow the next
 * newline token). */
static bool queue_heredocs(sh_parser *p, agti_sh_redir *redirs, size_t n, unsigned ctx)
{
    for (size_t i = 0; i < n; i++) {
        if (redirs[i].op != AGTI_SHR_HEREDOC && redirs[i].op != AGTI_SHR_HEREDOC_TAB)
            continue;
        if (agti_grow(&p->pend, &p->cappend, p->npend, sizeof *p->pend, 8) != AGT_OK) {
            agti_shp_fail(p, AGTI_SH_ENOMEM, p->pos, "out of memory");
            return false;
        }
        p->pend[p->npend].r = &redirs[i];
        p->pend[p->npend].ctx = ctx | p->ctx;
        p->pend[p->npend].func = p->func;
        p->npend++;
    }
    return true;
}

/* Reads one body at p->pos; returns false on error. */
static bool read_one_heredoc(sh_parser *p, const sh_pending *pd)
{
    agti_sh_redir *r = pd->r;
    bool strip = r->op == AGTI_SHR_HEREDOC_TAB;
    agti_buf body = AGTI_BUF_INIT;
    size_t body_start = p->pos, body_end = p->pos;
    while (p->pos < p->end) {
        size_t ls = p->pos;
        const char *nl = memchr(p->s + ls, '\n', p->end - ls);
        size_t le = nl ? (size_t)(nl - p->s) : p->end;
        size_t cs = ls;
        if (strip)
            while (cs < le && p->s[cs] == '\t')
                cs++;
        if (le - cs == r->target.vlen && memcmp(p->s + cs, r->target.value, le - cs) == 0) {
            body_end = ls;
            p->pos = nl ? le + 1 : le;
            goto done;
        }
        /* Inside $( ), bash also ends the body at a line `DELIM)`, the `)`
         * closing the substitution. */
        if (p->in_cmdsubst > 0 && le - cs > r->target.vlen &&
            memcmp(p->s + cs, r->target.value, r->target.vlen) == 0 &&
            p->s[cs + r->target.vlen] == ')') {
            body_end = ls;
            p->pos = cs + r->target.vlen;
            goto done;
        }
        agti_buf_put(&body, p->s + cs, le - cs);
        if (nl)
            agti_buf_putc(&body, '\n');
        p->pos = nl ? le + 1 : le;
        body_end = p->pos;
    }
    /* Delimited by the end of the text: bash warns and takes the body. */
done:
    if (body.oom) {
        agti_buf_free(&body);
        agti_shp_fail(p, AGTI_SH_ENOMEM, p->pos, "out of memory");
        return false;
    }
    r->heredoc_len = body.len;
    r->heredoc = agti_shp_strdup(p, agti_buf_cstr(&body), body.len);
    agti_buf_free(&body);
    if (!r->heredoc)
        return false;
    if (!r->heredoc_expands)
        return true;
    size_t after = p->pos;
    unsigned save_ctx = p->ctx;
    int save_func = p->func;
    p->ctx = pd->ctx | AGTI_SHC_IN_SUBST;
    p->func = pd->func;
    bool ok = agti_shp_heredoc_body(p, body_start, body_end);
    p->ctx = save_ctx;
    p->func = save_func;
    p->pos = after;
    return ok;
}

bool agti_shp_read_heredocs(sh_parser *p)
{
    if (p->npend <= p->pend_floor)
        return !p->failed;
    /* Take the queue: bodies may hold substitutions with here-docs of
     * their own, which queue and read inside the body. */
    size_t n = p->npend - p->pend_floor;
    sh_pending *mine = malloc(n * sizeof *mine);
    if (!mine) {
        agti_shp_fail(p, AGTI_SH_ENOMEM, p->pos, "out of memory");
        return false;
    }
    memcpy(mine, p->pend + p->pend_floor, n * sizeof *mine);
    p->npend = p->pend_floor;
    bool ok = true;
    for (size_t i = 0; ok && i < n; i++)
        ok = read_one_heredoc(p, &mine[i]);
    free(mine);
    return ok && !p->failed;
}

/* ---- simple commands ----------------------------------------------------------------- */

typedef struct word_vec {
    agti_sh_word *v;
    size_t n, cap;
} word_vec;

static agti_sh_word *push_word(sh_parser *p, word_vec *wv)
{
    if (!agti_shp_grow(p, (void **)&wv->v, &wv->cap, wv->n, sizeof *wv->v))
        return NULL;
    return &wv->v[wv->n++];
}

static bool synth_word(sh_parser *p, word_vec *wv, const char *s, size_t off, size_t len)
{
    agti_sh_word *w = push_word(p, wv);
    if (!w)
        return false;
    w->vlen = strlen(s);
    w->value = agti_shp_strdup(p, s, w->vlen);
    w->offset = p->base + off;
    w->length = len;
    return w->value != NULL;
}

/* name=( words ) : p->pos at `(`; the word's value becomes
 * "name=(v1 v2 ...)". */
SH_NOINLINE static bool parse_array_assign(sh_parser *p, agti_sh_word *w, size_t start)
{
    agti_buf v = AGTI_BUF_INIT;
    agti_buf_put(&v, w->value, w->vlen);
    agti_buf_putc(&v, '(');
    size_t open = p->pos++;
    bool first = true, ok = agti_shp_enter(p, open);
    while (ok) {
        ok = skip_linebreaks(p);
        if (!ok)
            break;
        if (p->pos >= p->end) {
            agti_shp_fail(p, AGTI_SH_ESYNTAX, open,
                          "unterminated array assignment ( starting at byte %zu", p->base + open);
            ok = false;
            break;
        }
        if (p->s[p->pos] == ')') {
            p->pos++;
            break;
        }
        if (agti_shp_is_meta(p->s[p->pos])) {
            fail_unexpected(p, "in an array assignment");
            ok = false;
            break;
        }
        agti_sh_word e;
        ok = agti_shp_word(p, &e, 0);
        if (ok) {
            if (!first)
                agti_buf_putc(&v, ' ');
            agti_buf_put(&v, e.value, e.vlen);
            w->flags |= e.flags;
            first = false;
        }
    }
    if (ok)
        agti_shp_leave(p);
    agti_buf_putc(&v, ')');
    if (ok && v.oom) {
        agti_shp_fail(p, AGTI_SH_ENOMEM, open, "out of memory");
        ok = false;
    }
    if (ok) {
        w->vlen = v.len;
        w->value = agti_shp_strdup(p, agti_buf_cstr(&v), v.len);
        w->offset = p->base + start;
        w->length = p->pos - start;
        ok = w->value != NULL;
    }
    agti_buf_free(&v);
    return ok;
}

static agti_sh_node *parse_function_body(sh_parser *p, const agti_sh_word *name, size_t start);

static bool is_declaration(const agti_sh_word *w)
{
    return !(w->flags & AGTI_SHW_DYNAMIC) &&
           (word_is(w, "declare") || word_is(w, "local") || word_is(w, "export") ||
            word_is(w, "readonly") || word_is(w, "typeset"));
}

/* Pushes a copy of *x (elem bytes) on a parser stack. */
static bool stack_push(sh_parser *p, void **v, size_t *n, size_t *cap, const void *x, size_t elem)
{
    if (*n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 32;
        void *a = realloc(*v, ncap * elem);
        if (!a) {
            agti_shp_fail(p, AGTI_SH_ENOMEM, p->pos, "out of memory");
            return false;
        }
        *v = a;
        *cap = ncap;
    }
    memcpy((char *)*v + *n * elem, x, elem);
    (*n)++;
    return true;
}

/* Elements at..at+n of a parser stack (NULL while nothing was pushed on
 * it) copied into the arena; NULL for none. */
static void *stack_copy(sh_parser *p, const void *stack, size_t at, size_t n, size_t elem, bool *ok)
{
    if (n == 0)
        return NULL; /* stack may be NULL: no pointer arithmetic on it */
    void *d = agti_shp_alloc_raw(p, n * elem);
    if (!d)
        *ok = false;
    else
        memcpy(d, (const char *)stack + at * elem, n * elem);
    return d;
}

/* Lists a parsed simple command: its assignments are wstack[wbase ..
 * wbase + nas), its words the rest of wstack above wbase, its redirections
 * rstack above rbase; pops them (kept out of parse_simple, which is on the
 * recursion path of every nested substitution, to keep its frame small). */
SH_NOINLINE static agti_sh_node *finish_simple(sh_parser *p, size_t start, size_t end, size_t wbase,
                                               size_t nas, size_t rbase)
{
    agti_sh_cmd c = {0};
    bool ok = true;
    c.nassigns = nas;
    c.assigns = stack_copy(p, p->wstack, wbase, nas, sizeof *p->wstack, &ok);
    c.argc = p->nwstack - wbase - nas;
    c.argv = stack_copy(p, p->wstack, wbase + nas, c.argc, sizeof *p->wstack, &ok);
    size_t nrd = p->nrstack - rbase;
    agti_sh_redir *rd = stack_copy(p, p->rstack, rbase, nrd, sizeof *p->rstack, &ok);
    c.redirs = rd;
    c.nredirs = nrd;
    p->nwstack = wbase;
    p->nrstack = rbase;
    if (!ok)
        return NULL;
    c.offset = p->base + start;
    c.length = end - start;
    if (c.argc == 0)
        c.flags |= AGTI_SHC_ASSIGN_ONLY;
    for (size_t i = 0; i < nrd; i++)
        if (stdin_redir(&rd[i]))
            c.flags |= AGTI_SHC_STDIN_REDIR;
    int idx = add_cmd(p, &c);
    if (idx < 0)
        return NULL;
    if (!queue_heredocs(p, rd, nrd, 0))
        return NULL;
    agti_sh_node *n = new_node(p, AGTI_SHN_SIMPLE, start);
    if (!n)
        return NULL;
    n->cmd = idx;
    n->length = end - start;
    return n;
}

static agti_sh_node *parse_simple(sh_parser *p)
{
    size_t start = p->pos;
    /* this command's words and redirections: the stacks above these */
    size_t wbase = p->nwstack, rbase = p->nrstack, nas = 0;
    size_t end = p->pos;
    for (;;) {
        agti_shp_skip_blanks(p);
        if (p->pos >= p->end)
            break;
        char c = p->s[p->pos];
        size_t prefix = 0;
        int op = 0;
        if (redir_ahead(p, &prefix, &op)) {
            agti_sh_redir r;
            memset(&r, 0, sizeof r);
            if (!parse_redir(p, &r, prefix, op) ||
                !stack_push(p, (void **)&p->rstack, &p->nrstack, &p->caprstack, &r, sizeof r))
                return NULL;
            end = p->pos;
            continue;
        }
        if (agti_shp_is_meta(c) && !((c == '<' || c == '>') && at(p, 1) == '('))
            break;
        size_t ws = p->pos;
        size_t ap = agti_shp_assign_prefix(p);
        p->ap_pos = ws;
        p->ap_len = ap;
        p->ap_known = true;
        /* before the command word an assignment; after it, an argument, but
         * declare/local/export/readonly/typeset take name=(...) arrays too */
        size_t nav = p->nwstack - wbase - nas;
        bool assign = nav == 0 && ap > 0;
        bool array_ok = assign || (nav > 0 && ap > 0 && is_declaration(&p->wstack[wbase + nas]));
        agti_sh_word w;
        if (!agti_shp_word(p, &w, 0))
            return NULL;
        if (array_ok && at(p, 0) == '(' && w.length == ap && !parse_array_assign(p, &w, ws))
            return NULL;
        if (!stack_push(p, (void **)&p->wstack, &p->nwstack, &p->capwstack, &w, sizeof w))
            return NULL;
        if (assign)
            nas++;
        end = p->pos;
    }
    if (p->failed)
        return NULL;
    size_t nw = p->nwstack - wbase, nrd = p->nrstack - rbase;
    if (at(p, 0) == '(' && nw == 1 && nas == 0 && nrd == 0) {
        agti_sh_word name = p->wstack[wbase];
        p->nwstack = wbase;
        p->pos++;
        agti_shp_skip_blanks(p);
        if (at(p, 0) != ')') {
            fail_unexpected(p, "after `NAME(` (a function definition needs `()`)");
            return NULL;
        }
        p->pos++;
        return parse_function_body(p, &name, start);
    }
    if (nw == 0 && nrd == 0) {
        fail_unexpected(p, "where a command was expected");
        return NULL;
    }
    return finish_simple(p, start, end, wbase, nas, rbase);
}

/* ---- compound commands ---------------------------------------------------------------- */

static agti_sh_node *parse_command(sh_parser *p);
static bool command_ahead(const sh_parser *p);

/* A list that must hold at least one command. */
static agti_sh_node *nonempty_list(sh_parser *p, const char *what, size_t open)
{
    agti_sh_node *l = agti_shp_list(p);
    if (l && l->nchildren == 0) {
        char b[16];
        agti_shp_fail(p, AGTI_SH_ESYNTAX, p->pos,
                      "%s (started at byte %zu) is empty: found %s at byte %zu", what,
                      p->base + open, token_desc(p, b, sizeof b), p->base + p->pos);
        return NULL;
    }
    return l;
}

SH_NOINLINE static agti_sh_node *parse_if(sh_parser *p, size_t start)
{
    agti_sh_node *n = new_node(p, AGTI_SHN_IF, start);
    size_t cap = 0;
    int kw = KW_IF;
    while (n && (kw == KW_IF || kw == KW_ELIF)) {
        agti_sh_node *cond = nonempty_list(p, "the condition of `if`", start);
        if (!cond || !add_child(p, n, cond, &cap) ||
            !expect_kw(p, KW_THEN, "after the condition of `if`", start))
            return NULL;
        agti_sh_node *body = nonempty_list(p, "the `then` branch", start);
        if (!body || !add_child(p, n, body, &cap))
            return NULL;
        size_t len = 0;
        kw = peek_kw(p, &len);
        if (kw == KW_ELIF || kw == KW_ELSE)
            p->pos += len;
    }
    if (!n)
        return NULL;
    if (kw == KW_ELSE) {
        agti_sh_node *body = nonempty_list(p, "the `else` branch", start);
        if (!body || !add_child(p, n, body, &cap))
            return NULL;
    }
    if (!expect_kw(p, KW_FI, "to close `if`", start))
        return NULL;
    return n;
}

SH_NOINLINE static agti_sh_node *parse_loop(sh_parser *p, int kind, size_t start)
{
    agti_sh_node *n = new_node(p, kind, start);
    size_t cap = 0;
    if (!n)
        return NULL;
    agti_sh_node *cond = nonempty_list(p, "the loop condition", start);
    if (!cond || !add_child(p, n, cond, &cap) ||
        !expect_kw(p, KW_DO, "after the loop condition", start))
        return NULL;
    agti_sh_node *body = nonempty_list(p, "the loop body", start);
    if (!body || !add_child(p, n, body, &cap) || !expect_kw(p, KW_DONE, "to close the loop", start))
        return NULL;
    return n;
}

/* do list done, or bash's { list } */
static bool parse_do_group(sh_parser *p, agti_sh_node *n, size_t *cap, size_t start)
{
    size_t len = 0;
    int kw = peek_kw(p, &len);
    if (kw != KW_DO && kw != KW_LBRACE)
        return expect_kw(p, KW_DO, "in the `for`/`select` loop", start);
    p->pos += len;
    agti_sh_node *body = nonempty_list(p, "the loop body", start);
    if (!body || !add_child(p, n, body, cap))
        return false;
    return expect_kw(p, kw == KW_DO ? KW_DONE : KW_RBRACE, "to close the loop", start);
}

/* The expression of (( )) between es and the closing `))` at p->pos - 2,
 * without the blanks around it. */
static void arith_span(const sh_parser *p, size_t *es, size_t *len)
{
    size_t a = *es, b = p->pos - 2;
    while (a < b && (p->s[a] == ' ' || p->s[a] == '\t' || p->s[a] == '\n'))
        a++;
    while (b > a && (p->s[b - 1] == ' ' || p->s[b - 1] == '\t' || p->s[b - 1] == '\n'))
        b--;
    *es = a;
    *len = b - a;
}

/* Lists a [[ ]] / (( )) command whose argv is av, written from start to
 * p->pos; its index, or -1. */
static int add_keyword_cmd(sh_parser *p, size_t start, const word_vec *av)
{
    agti_sh_cmd c = {0};
    c.argv = av->v;
    c.argc = av->n;
    c.flags = AGTI_SHC_KEYWORD;
    c.offset = p->base + start;
    c.length = p->pos - start;
    return add_cmd(p, &c);
}

/* The same, with its node of kind COND or ARITH. */
static agti_sh_node *keyword_node(sh_parser *p, int kind, size_t start, const word_vec *av)
{
    agti_sh_node *n = new_node(p, kind, start);
    if (!n || (n->cmd = add_keyword_cmd(p, start, av)) < 0)
        return NULL;
    return n;
}

/* Reads the arithmetic expression after `((` (opened at `open`, p->pos
 * just past it) up to and past `))`, into the argv "((" EXPR "))" of a
 * keyword command; EXPR is the expression as written without the blanks
 * around it, flagged DYNAMIC when it holds expansions. */
static bool arith_words(sh_parser *p, size_t open, word_vec *av)
{
    unsigned fl = 0;
    size_t es = p->pos, elen = 0;
    if (!agti_shp_arith(p, open, &fl))
        return false;
    arith_span(p, &es, &elen);
    char *e = agti_shp_strdup(p, p->s + es, elen);
    if (!e || !synth_word(p, av, "((", open, 2) || !synth_word(p, av, e, es, elen) ||
        !synth_word(p, av, "))", p->pos - 2, 2))
        return false;
    av->v[1].flags = fl;
    return true;
}

SH_NOINLINE static agti_sh_node *parse_for(sh_parser *p, int kind, size_t start)
{
    agti_sh_node *n = new_node(p, kind, start);
    size_t cap = 0, wcap = 0;
    if (!n)
        return NULL;
    agti_shp_skip_blanks(p);
    if (kind == AGTI_SHN_FOR && at(p, 0) == '(' && at(p, 1) == '(') {
        size_t open = p->pos;
        p->pos += 2;
        /* evaluated like (( )): listed as a keyword command */
        word_vec av = {0};
        if (!arith_words(p, open, &av))
            return NULL;
        n->arith = true;
        if (!agti_shp_grow(p, (void **)&n->words, &wcap, 0, sizeof *n->words))
            return NULL;
        n->words[n->nwords++] = av.v[1];
        if ((n->cmd = add_keyword_cmd(p, open, &av)) < 0)
            return NULL;
        agti_shp_skip_blanks(p);
        if (at(p, 0) == ';')
            p->pos++;
        if (!skip_linebreaks(p) || !parse_do_group(p, n, &cap, start))
            return NULL;
        return n;
    }
    if (p->pos >= p->end || agti_shp_is_meta(p->s[p->pos])) {
        fail_unexpected(p, "where the loop variable was expected");
        return NULL;
    }
    if (!agti_shp_word(p, &n->word, 0))
        return NULL;
    agti_shp_skip_blanks(p);
    size_t save = p->pos;
    if (!skip_linebreaks(p))
        return NULL;
    size_t len = 0;
    if (peek_kw(p, &len) == KW_IN) {
        p->pos += len;
        n->has_in = true;
        for (;;) {
            agti_shp_skip_blanks(p);
            if (p->pos >= p->end)
                break;
            char c = p->s[p->pos];
            if (c == ';' || c == '\n')
                break;
            if (agti_shp_is_meta(c)) {
                fail_unexpected(p, "in the word list of the loop");
                return NULL;
            }
            if (!agti_shp_grow(p, (void **)&n->words, &wcap, n->nwords, sizeof *n->words) ||
                !agti_shp_word(p, &n->words[n->nwords], 0))
                return NULL;
            n->nwords++;
        }
        if (at(p, 0) == ';')
            p->pos++;
        if (!skip_linebreaks(p))
            return NULL;
    } else {
        (void)save;
        if (at(p, 0) == ';') {
            p->pos++;
            if (!skip_linebreaks(p))
                return NULL;
        }
    }
    if (!parse_do_group(p, n, &cap, start))
        return NULL;
    return n;
}

SH_NOINLINE static agti_sh_node *parse_case(sh_parser *p, size_t start)
{
    agti_sh_node *n = new_node(p, AGTI_SHN_CASE, start);
    size_t cap = 0;
    if (!n)
        return NULL;
    agti_shp_skip_blanks(p);
    if (p->pos >= p->end || agti_shp_is_meta(p->s[p->pos])) {
        fail_unexpected(p, "where the `case` word was expected");
        return NULL;
    }
    if (!agti_shp_word(p, &n->word, 0) || !skip_linebreaks(p) ||
        !expect_kw(p, KW_IN, "after the `case` word", start))
        return NULL;
    for (;;) {
        if (!skip_linebreaks(p))
            return NULL;
        size_t len = 0;
        if (peek_kw(p, &len) == KW_ESAC) {
            p->pos += len;
            return n;
        }
        size_t is = p->pos;
        agti_sh_node *item = NULL;
        if (at(p, 0) == '(')
            p->pos++;
        size_t wcap = 0;
        word_vec pats = {0};
        for (;;) {
            agti_shp_skip_blanks(p);
            if (p->pos >= p->end || agti_shp_is_meta(p->s[p->pos])) {
                fail_unexpected(p, "where a `case` pattern was expected");
                return NULL;
            }
            agti_sh_word *w = push_word(p, &pats);
            if (!w || !agti_shp_word(p, w, 0))
                return NULL;
            agti_shp_skip_blanks(p);
            if (at(p, 0) == '|' && at(p, 1) != '|') {
                p->pos++;
                continue;
            }
            if (at(p, 0) == ')') {
                p->pos++;
                break;
            }
            fail_unexpected(p, "after a `case` pattern (`)` or `|` expected)");
            return NULL;
        }
        (void)wcap;
        item = agti_shp_list(p);
        if (!item)
            return NULL;
        item->words = pats.v;
        item->nwords = pats.n;
        item->offset = p->base + is;
        if (!add_child(p, n, item, &cap))
            return NULL;
        if (at(p, 0) == ';' && at(p, 1) == ';' && at(p, 2) == '&') {
            item->case_term = AGTI_SH_CASE_TEST_NEXT;
            p->pos += 3;
        } else if (at(p, 0) == ';' && at(p, 1) == ';') {
            item->case_term = AGTI_SH_CASE_BREAK;
            p->pos += 2;
        } else if (at(p, 0) == ';' && at(p, 1) == '&') {
            item->case_term = AGTI_SH_CASE_FALLTHROUGH;
            p->pos += 2;
        } else if (peek_kw(p, &len) == KW_ESAC) {
            item->case_term = AGTI_SH_CASE_BREAK;
            end_node(p, item);
            p->pos += len;
            return n;
        } else {
            if (!p->failed)
                expect_kw(p, KW_ESAC, "to close `case`", start);
            return NULL;
        }
        end_node(p, item);
    }
}

static bool push_op_word(sh_parser *p, word_vec *av, size_t n)
{
    char op[4] = {0};
    memcpy(op, p->s + p->pos, n);
    if (!synth_word(p, av, op, p->pos, n))
        return false;
    p->pos += n;
    return true;
}

/* [[ ... ]] (p->pos past `[[`): the operands and operators as argv,
 * "[[" first and "]]" last. */
SH_NOINLINE static agti_sh_node *parse_cond(sh_parser *p, size_t start)
{
    word_vec av = {0};
    if (!synth_word(p, &av, "[[", start, 2))
        return NULL;
    for (;;) {
        if (!skip_linebreaks(p))
            return NULL;
        if (p->pos >= p->end) {
            agti_shp_fail(p, AGTI_SH_ESYNTAX, start, "unterminated [[ starting at byte %zu",
                          p->base + start);
            return NULL;
        }
        size_t len = 0;
        if (peek_kw(p, &len) == KW_DRBRACK) {
            if (!push_op_word(p, &av, 2))
                return NULL;
            break;
        }
        char c = p->s[p->pos];
        if ((c == '&' && at(p, 1) == '&') || (c == '|' && at(p, 1) == '|')) {
            if (!push_op_word(p, &av, 2))
                return NULL;
            continue;
        }
        if (c == '(' || c == ')' || ((c == '<' || c == '>') && at(p, 1) != '(')) {
            if (!push_op_word(p, &av, 1))
                return NULL;
            continue;
        }
        if (agti_shp_is_meta(c) && !((c == '<' || c == '>') && at(p, 1) == '(')) {
            fail_unexpected(p, "inside [[ ]]");
            return NULL;
        }
        bool regex =
            av.n > 1 && word_is(&av.v[av.n - 1], "=~") && !(av.v[av.n - 1].flags & AGTI_SHW_QUOTED);
        agti_sh_word *w = push_word(p, &av);
        if (!w || !agti_shp_word(p, w, regex ? SHW_MODE_REGEX : SHW_MODE_COND))
            return NULL;
    }
    return keyword_node(p, AGTI_SHN_COND, start, &av);
}

/* (( expr )) (p->pos past `((`). */
SH_NOINLINE static agti_sh_node *parse_arith_cmd(sh_parser *p, size_t start)
{
    word_vec av = {0};
    if (!arith_words(p, start, &av))
        return NULL;
    return keyword_node(p, AGTI_SHN_ARITH, start, &av);
}

static agti_sh_node *parse_group(sh_parser *p, int kind, size_t start)
{
    agti_sh_node *n = new_node(p, kind, start);
    size_t cap = 0;
    if (!n)
        return NULL;
    agti_sh_node *body =
        nonempty_list(p, kind == AGTI_SHN_GROUP ? "the { } group" : "the ( ) subshell", start);
    if (!body || !add_child(p, n, body, &cap))
        return NULL;
    if (kind == AGTI_SHN_GROUP)
        return expect_kw(p, KW_RBRACE, "to close `{`", start) ? n : NULL;
    if (at(p, 0) != ')') {
        char b[16];
        agti_shp_fail(p, AGTI_SH_ESYNTAX, p->pos,
                      "`)` expected to close the `(` at byte %zu, found %s at byte %zu",
                      p->base + start, token_desc(p, b, sizeof b), p->base + p->pos);
        return NULL;
    }
    p->pos++;
    return n;
}

/* Redirections after a compound command; they apply to every command in
 * it (recorded now, copied at the end once here-doc bodies are read). */
static bool compound_redirs(sh_parser *p, agti_sh_node *n, size_t first_cmd)
{
    size_t cap = 0;
    size_t body_end = p->sc->ncmds; /* not the commands of redirection targets */
    for (;;) {
        agti_shp_skip_blanks(p);
        size_t prefix = 0;
        int op = 0;
        if (!redir_ahead(p, &prefix, &op))
            break;
        if (!agti_shp_grow(p, (void **)&n->redirs, &cap, n->nredirs, sizeof *n->redirs))
            return false;
        memset(&n->redirs[n->nredirs], 0, sizeof n->redirs[0]);
        if (!parse_redir(p, &n->redirs[n->nredirs], prefix, op))
            return false;
        n->nredirs++;
    }
    if (n->nredirs == 0)
        return true;
    if (!queue_heredocs(p, n->redirs, n->nredirs, 0))
        return false;
    if (first_cmd == body_end) {
        /* Nothing inside runs (`case x in esac > f`) but the redirections are
         * still performed: list them as a command of their own. */
        agti_sh_cmd c = {0};
        c.redirs = n->redirs;
        c.nredirs = n->nredirs;
        c.flags = AGTI_SHC_ASSIGN_ONLY;
        c.offset = n->offset;
        c.length = p->base + p->pos - n->offset;
        for (size_t i = 0; i < n->nredirs; i++)
            if (stdin_redir(&n->redirs[i]))
                c.flags |= AGTI_SHC_STDIN_REDIR;
        return add_cmd(p, &c) >= 0;
    }
    if (agti_grow(&p->inh, &p->capinh, p->ninh, sizeof *p->inh, 8) != AGT_OK) {
        agti_shp_fail(p, AGTI_SH_ENOMEM, p->pos, "out of memory");
        return false;
    }
    p->inh[p->ninh].first = first_cmd;
    p->inh[p->ninh].end = body_end;
    p->inh[p->ninh].redirs = n->redirs;
    p->inh[p->ninh].nredirs = n->nredirs;
    p->ninh++;
    return true;
}

static agti_sh_node *parse_compound(sh_parser *p, int kw, size_t kwlen)
{
    size_t start = p->pos;
    if (!agti_shp_enter(p, start))
        return NULL;
    size_t first_cmd = p->sc->ncmds;
    agti_sh_node *n = NULL;
    if (kw == KW_NONE && at(p, 0) == '(' && at(p, 1) == '(') {
        p->pos += 2;
        if (agti_shp_arith_ahead(p)) {
            n = parse_arith_cmd(p, start);
        } else {
            p->pos = start + 1;
            n = parse_group(p, AGTI_SHN_SUBSHELL, start);
        }
    } else if (kw == KW_NONE) {
        p->pos++;
        n = parse_group(p, AGTI_SHN_SUBSHELL, start);
    } else {
        p->pos += kwlen;
        switch (kw) {
        case KW_LBRACE:
            n = parse_group(p, AGTI_SHN_GROUP, start);
            break;
        case KW_IF:
            n = parse_if(p, start);
            break;
        case KW_WHILE:
            n = parse_loop(p, AGTI_SHN_WHILE, start);
            break;
        case KW_UNTIL:
            n = parse_loop(p, AGTI_SHN_UNTIL, start);
            break;
        case KW_FOR:
            n = parse_for(p, AGTI_SHN_FOR, start);
            break;
        case KW_SELECT:
            n = parse_for(p, AGTI_SHN_SELECT, start);
            break;
        case KW_CASE:
            n = parse_case(p, start);
            break;
        case KW_DLBRACK:
            n = parse_cond(p, start);
            break;
        default:
            break;
        }
    }
    agti_shp_leave(p);
    if (!n)
        return NULL;
    end_node(p, n);
    if (!compound_redirs(p, n, first_cmd))
        return NULL;
    return n;
}

static bool is_compound_start(const sh_parser *p, int kw)
{
    return kw == KW_LBRACE || kw == KW_IF || kw == KW_WHILE || kw == KW_UNTIL || kw == KW_FOR ||
           kw == KW_SELECT || kw == KW_CASE || kw == KW_DLBRACK ||
           (kw == KW_NONE && at(p, 0) == '(');
}

/* The body of a function (p->pos after `()` or the name): a compound
 * command; its commands are flagged IN_FUNCTION. */
SH_NOINLINE static agti_sh_node *parse_function_body(sh_parser *p, const agti_sh_word *name,
                                                     size_t start)
{
    if (!skip_linebreaks(p))
        return NULL;
    size_t len = 0;
    int kw = peek_kw(p, &len);
    if (!is_compound_start(p, kw)) {
        char b[16];
        agti_shp_fail(p, AGTI_SH_ESYNTAX, p->pos,
                      "the body of function `%s` must be a compound command ({ ...; }, ( ... ), "
                      "if, ...): found %s at byte %zu",
                      name->value, token_desc(p, b, sizeof b), p->base + p->pos);
        return NULL;
    }
    agti_sh_script *sc = p->sc;
    if (agti_grow(&sc->funcs, &sc->capfuncs, sc->nfuncs, sizeof *sc->funcs, 4) != AGT_OK) {
        agti_shp_fail(p, AGTI_SH_ENOMEM, p->pos, "out of memory");
        return NULL;
    }
    int fi = (int)sc->nfuncs++;
    sc->funcs[fi].name = agti_shp_strdup(p, name->value, name->vlen);
    sc->funcs[fi].first_cmd = sc->ncmds;
    sc->funcs[fi].ncmds = 0;
    if (!sc->funcs[fi].name)
        return NULL;
    agti_sh_node *n = new_node(p, AGTI_SHN_FUNCTION, start);
    if (!n)
        return NULL;
    n->func = fi;
    n->word = *name;
    unsigned save_ctx = p->ctx;
    int save_func = p->func;
    p->ctx |= AGTI_SHC_IN_FUNCTION;
    p->func = fi;
    agti_sh_node *body = parse_compound(p, kw, len);
    p->ctx = save_ctx;
    p->func = save_func;
    size_t cap = 0;
    if (!body || !add_child(p, n, body, &cap))
        return NULL;
    sc->funcs[fi].ncmds = sc->ncmds - sc->funcs[fi].first_cmd;
    end_node(p, n);
    return n;
}

/* coproc [NAME] compound-command, or coproc simple-command: runs
 * asynchronously, so its commands are flagged BACKGROUND. */
SH_NOINLINE static agti_sh_node *parse_coproc(sh_parser *p, size_t kwlen)
{
    size_t start = p->pos;
    p->pos += kwlen;
    agti_shp_skip_blanks(p);
    agti_sh_node *n = new_node(p, AGTI_SHN_COPROC, start);
    if (!n)
        return NULL;
    n->word.value = agti_shp_strdup(p, "COPROC", 6);
    n->word.vlen = 6;
    n->word.offset = p->base + start;
    if (!n->word.value)
        return NULL;
    /* NAME followed by a compound command */
    size_t i = p->pos;
    while (i < p->end &&
           ((p->s[i] >= 'a' && p->s[i] <= 'z') || (p->s[i] >= 'A' && p->s[i] <= 'Z') ||
            (p->s[i] >= '0' && p->s[i] <= '9') || p->s[i] == '_'))
        i++;
    if (i > p->pos && i < p->end && (p->s[i] == ' ' || p->s[i] == '\t')) {
        size_t save = p->pos;
        p->pos = i;
        agti_shp_skip_blanks(p);
        size_t l2 = 0;
        int kw2 = peek_kw(p, &l2);
        if (is_compound_start(p, kw2)) {
            n->word.value = agti_shp_strdup(p, p->s + save, i - save);
            n->word.vlen = i - save;
            n->word.offset = p->base + save;
            n->word.length = i - save;
            if (!n->word.value)
                return NULL;
        } else {
            p->pos = save;
        }
    }
    if (!command_ahead(p)) {
        fail_unexpected(p, "after `coproc`");
        return NULL;
    }
    size_t first_cmd = p->sc->ncmds, first_pend = p->npend;
    size_t len = 0;
    int kw = peek_kw(p, &len);
    agti_sh_node *c = is_compound_start(p, kw) ? parse_compound(p, kw, len) : parse_simple(p);
    size_t cap = 0;
    if (!c || !add_child(p, n, c, &cap))
        return NULL;
    mark_range(p, first_cmd, AGTI_SHC_BACKGROUND);
    mark_pending(p, first_pend, AGTI_SHC_BACKGROUND);
    end_node(p, n);
    return n;
}

static agti_sh_node *parse_command(sh_parser *p)
{
    size_t len = 0;
    int kw = peek_kw(p, &len);
    if (kw == KW_FUNCTION) {
        size_t start = p->pos;
        p->pos += len;
        agti_shp_skip_blanks(p);
        if (p->pos >= p->end || agti_shp_is_meta(p->s[p->pos])) {
            fail_unexpected(p, "where the function name was expected");
            return NULL;
        }
        agti_sh_word name;
        if (!agti_shp_word(p, &name, 0))
            return NULL;
        agti_shp_skip_blanks(p);
        if (at(p, 0) == '(') {
            p->pos++;
            agti_shp_skip_blanks(p);
            if (at(p, 0) != ')') {
                fail_unexpected(p, "after `function NAME (`");
                return NULL;
            }
            p->pos++;
        }
        return parse_function_body(p, &name, start);
    }
    if (kw == KW_COPROC)
        return parse_coproc(p, len);
    if (is_compound_start(p, kw))
        return parse_compound(p, kw, len);
    /* `time` past the start of a pipeline is the time command; `!` there is
     * a syntax error, as in bash */
    if (kw != KW_NONE && kw != KW_IN && kw != KW_DRBRACK && kw != KW_TIME) {
        fail_unexpected(p, NULL);
        return NULL;
    }
    return parse_simple(p);
}

/* ---- pipelines, and-or lists, lists ------------------------------------------------------ */

static bool command_ahead(const sh_parser *p)
{
    if (p->pos >= p->end)
        return false;
    char c = p->s[p->pos];
    if (c == '\n' || c == ';' || c == '&' || c == '|' || c == ')') {
        /* `&>file` alone is a redirection-only command */
        return c == '&' && at(p, 1) == '>';
    }
    size_t len = 0;
    return !is_terminator_kw(peek_kw(p, &len));
}

static agti_sh_node *parse_pipeline(sh_parser *p)
{
    size_t start = p->pos;
    bool bang = false, timed = false;
    for (;;) {
        size_t len = 0;
        int kw = peek_kw(p, &len);
        if (kw == KW_BANG) {
            bang = !bang;
            p->pos += len;
        } else if (kw == KW_TIME && !timed) {
            timed = true;
            p->pos += len;
            agti_shp_skip_blanks(p);
            if (at(p, 0) == '-' && at(p, 1) == 'p' &&
                (at(p, 2) < 0 || agti_shp_is_meta((char)at(p, 2))))
                p->pos += 2;
            /* bash's TIMEIGN: `--` after time [-p] ends its options and
             * is no command (`time -- rm -rf d` was read as a command
             * named `--` and ran rm past a deny rule) */
            agti_shp_skip_blanks(p);
            if (at(p, 0) == '-' && at(p, 1) == '-' &&
                (at(p, 2) < 0 || agti_shp_is_meta((char)at(p, 2))))
                p->pos += 2;
        } else {
            break;
        }
        agti_shp_skip_blanks(p);
    }
    if (!command_ahead(p)) {
        if (bang || timed) {
            /* bash takes `!` and `time` with no command (status 1 / times) */
            agti_sh_node *e = new_node(p, AGTI_SHN_PIPELINE, start);
            if (e) {
                e->bang = bang;
                e->timed = timed;
                end_node(p, e);
            }
            return e;
        }
        fail_unexpected(p, "where a command was expected");
        return NULL;
    }
    agti_sh_node *first = parse_command(p);
    if (!first)
        return NULL;
    agti_shp_skip_blanks(p);
    bool pipe = at(p, 0) == '|' && at(p, 1) != '|';
    if (!pipe && !bang && !timed)
        return first;
    agti_sh_node *n = new_node(p, AGTI_SHN_PIPELINE, start);
    size_t cap = 0;
    if (!n || !add_child(p, n, first, &cap))
        return NULL;
    n->bang = bang;
    n->timed = timed;
    while (at(p, 0) == '|' && at(p, 1) != '|') {
        p->pos += at(p, 1) == '&' ? 2 : 1;
        if (!skip_linebreaks(p))
            return NULL;
        if (!command_ahead(p)) {
            fail_unexpected(p, "after `|`");
            return NULL;
        }
        size_t first_cmd = p->sc->ncmds, first_pend = p->npend;
        agti_sh_node *c = parse_command(p);
        if (!c || !add_child(p, n, c, &cap))
            return NULL;
        mark_range(p, first_cmd, AGTI_SHC_PIPED_IN);
        mark_pending(p, first_pend, AGTI_SHC_PIPED_IN);
        agti_shp_skip_blanks(p);
    }
    end_node(p, n);
    return n;
}

static agti_sh_node *parse_and_or(sh_parser *p)
{
    agti_sh_node *left = parse_pipeline(p);
    while (left) {
        agti_shp_skip_blanks(p);
        int c0 = at(p, 0);
        if (!((c0 == '&' || c0 == '|') && at(p, 1) == c0))
            break;
        size_t start = left->offset - p->base;
        p->pos += 2;
        if (!skip_linebreaks(p))
            return NULL;
        if (!command_ahead(p)) {
            fail_unexpected(p, c0 == '&' ? "after `&&`" : "after `||`");
            return NULL;
        }
        agti_sh_node *right = parse_pipeline(p);
        if (!right)
            return NULL;
        agti_sh_node *n = new_node(p, c0 == '&' ? AGTI_SHN_AND : AGTI_SHN_OR, start);
        size_t cap = 0;
        if (!n || !add_child(p, n, left, &cap) || !add_child(p, n, right, &cap))
            return NULL;
        end_node(p, n);
        left = n;
    }
    return left;
}

agti_sh_node *agti_shp_list(sh_parser *p)
{
    agti_sh_node *n = new_node(p, AGTI_SHN_LIST, p->pos);
    size_t cap = 0, scap = 0;
    if (!n)
        return NULL;
    for (;;) {
        if (!skip_linebreaks(p))
            return NULL;
        if (!command_ahead(p))
            break;
        size_t first_cmd = p->sc->ncmds, first_pend = p->npend;
        agti_sh_node *c = parse_and_or(p);
        if (!c || !add_child(p, n, c, &cap))
            return NULL;
        if (!agti_shp_grow(p, (void **)&n->sep, &scap, n->nchildren - 1, 1))
            return NULL;
        char sep = 0;
        agti_shp_skip_blanks(p);
        int c0 = at(p, 0), c1 = at(p, 1);
        if (c0 == ';' && c1 != ';' && c1 != '&') {
            sep = ';';
            p->pos++;
        } else if (c0 == '&' && c1 != '&' && c1 != '>') {
            sep = '&';
            p->pos++;
            mark_range(p, first_cmd, AGTI_SHC_BACKGROUND);
            mark_pending(p, first_pend, AGTI_SHC_BACKGROUND);
        } else if (c0 == '\n') {
            sep = '\n';
            p->pos++;
            if (!agti_shp_read_heredocs(p))
                return NULL;
        }
        n->sep[n->nchildren - 1] = sep;
        if (sep == 0)
            break;
    }
    if (p->failed)
        return NULL;
    end_node(p, n);
    return n;
}

/* ---- entry points ------------------------------------------------------------------------ */

static void free_script(agti_sh_script *s)
{
    agti_sh_arena_free(&s->arena);
    free(s->cmds);
    free(s->funcs);
    free(s);
}

/* Copies each compound command's redirections onto the commands inside it,
 * marked inherited, now that here-doc bodies are known. */
static bool apply_inherited(sh_parser *p)
{
    for (size_t k = 0; k < p->ninh; k++) {
        const sh_inherit *ih = &p->inh[k];
        for (size_t i = ih->first; i < ih->end; i++) {
            agti_sh_cmd *c = &p->sc->cmds[i];
            agti_sh_redir *r = agti_shp_alloc(p, (c->nredirs + ih->nredirs) * sizeof *r);
            if (!r)
                return false;
            if (c->nredirs)
                memcpy(r, c->redirs, c->nredirs * sizeof *r);
            for (size_t j = 0; j < ih->nredirs; j++) {
                r[c->nredirs + j] = ih->redirs[j];
                r[c->nredirs + j].inherited = true;
                if (stdin_redir(&ih->redirs[j]))
                    c->flags |= AGTI_SHC_STDIN_REDIR;
            }
            c->redirs = r;
            c->nredirs += ih->nredirs;
        }
    }
    return true;
}

int agti_sh_parse(const char *text, size_t len, agti_sh_script **out, agti_sh_error *err)
{
    return agti_sh_parse_at_depth(text, len, 0, out, err);
}

int agti_sh_parse_at_depth(const char *text, size_t len, int depth, agti_sh_script **out,
                           agti_sh_error *err)
{
    *out = NULL;
    if (err) {
        memset(err, 0, sizeof *err);
    }
    if (len > AGTI_SH_MAX_INPUT) {
        if (err) {
            err->status = AGTI_SH_ETOOLONG;
            err->offset = AGTI_SH_MAX_INPUT;
            snprintf(err->message, sizeof err->message,
                     "the script is %zu bytes, over the limit of %u: refused", len,
                     AGTI_SH_MAX_INPUT);
        }
        return AGTI_SH_ETOOLONG;
    }
    const char *nul = len ? memchr(text, '\0', len) : NULL;
    if (nul) {
        if (err) {
            err->status = AGTI_SH_ESYNTAX;
            err->offset = (size_t)(nul - text);
            snprintf(err->message, sizeof err->message, "NUL byte at byte %zu",
                     (size_t)(nul - text));
        }
        return AGTI_SH_ESYNTAX;
    }
    agti_sh_script *sc = calloc(1, sizeof *sc);
    if (!sc) {
        if (err) {
            err->status = AGTI_SH_ENOMEM;
            snprintf(err->message, sizeof err->message, "out of memory");
        }
        return AGTI_SH_ENOMEM;
    }
    agti_sh_arena_init(&sc->arena, SH_CHUNK_MIN, SH_CHUNK_MAX);
    if (depth < 0)
        depth = 0;
    if (depth >= AGTI_SH_MAX_DEPTH) {
        free(sc);
        if (err) {
            err->status = AGTI_SH_ETOODEEP;
            snprintf(err->message, sizeof err->message,
                     "re-parses nest deeper than %d levels: refused", AGTI_SH_MAX_DEPTH);
        }
        return AGTI_SH_ETOODEEP;
    }
    sh_parser p = {0};
    p.depth = depth;
    p.s = len ? text : "";
    p.end = len;
    p.err = err;
    p.sc = sc;
    p.func = -1;
    p.budget = len * SH_BUDGET_FACTOR + SH_BUDGET_SLACK;
    p.lookahead_left = len * SH_LOOKAHEAD_FACTOR + SH_LOOKAHEAD_SLACK;
    agti_sh_node *root = agti_shp_list(&p);
    if (root && p.pos < p.end)
        fail_unexpected(&p, NULL);
    if (!p.failed)
        agti_shp_read_heredocs(&p);
    if (!p.failed)
        apply_inherited(&p);
    free(p.pend);
    free(p.wstack);
    free(p.rstack);
    free(p.inh);
    agti_buf_free(&p.scratch);
    if (p.failed) {
        free_script(sc);
        return p.status;
    }
    sc->root = root;
    *out = sc;
    return AGTI_SH_OK;
}

void agti_sh_free(agti_sh_script *s)
{
    if (s)
        free_script(s);
}

const agti_sh_node *agti_sh_root(const agti_sh_script *s)
{
    return s->root;
}

size_t agti_sh_ncmds(const agti_sh_script *s)
{
    return s->ncmds;
}

const agti_sh_cmd *agti_sh_cmd_at(const agti_sh_script *s, size_t i)
{
    return i < s->ncmds ? &s->cmds[i] : NULL;
}

size_t agti_sh_nfuncs(const agti_sh_script *s)
{
    return s->nfuncs;
}

const agti_sh_func *agti_sh_func_at(const agti_sh_script *s, size_t i)
{
    return i < s->nfuncs ? &s->funcs[i] : NULL;
}
