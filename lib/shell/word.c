/*
 * Shell words: quoting (' " \ $'...' $"..."), quote removal, and the
 * expansions inside a word ($name, ${...}, $(...), `...`, $((...)), $[...],
 * <(...), >(...)). The value of a word is its static text; an expansion
 * keeps its source text there and marks the word dynamic. Command and
 * process substitutions are parsed by the grammar (parse.c) in place, so
 * their commands join the script's command list; `...` bodies are unescaped
 * first and parsed as a text of their own.
 *
 * Where bash and POSIX differ, this follows what bash 5 parses (checked
 * against bash itself in tests/unit/shell): `'` quotes inside "${...}" for
 * finding its end, <( and >( start a process substitution anywhere in a
 * word, [[ ]] takes extglob patterns and =~ takes ( | ) in its regex.
 */
#include <stdint.h>
#include <string.h>

#include "shell/parse_internal.h"

#define SH_EXP_UNQUOTED 0x1u /* expansion outside double quotes */

static bool lex_dollar(sh_parser *p, agti_buf *v, unsigned *fl, bool dq);
static bool lex_backtick(sh_parser *p, agti_buf *v, unsigned *fl, bool dq);
static bool lex_dquote(sh_parser *p, agti_buf *v, unsigned *fl);

/* A byte with no meaning of its own inside an unquoted word. */
static bool is_plain(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '/' || c == '.' || c == '+' || c == '%' || c == '@' || c == '=' ||
           c == '^' || (unsigned char)c >= 0x80;
}

static bool is_name_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_name_char(char c)
{
    return is_name_start(c) || (c >= '0' && c <= '9');
}

char *agti_shp_strdup(sh_parser *p, const char *s, size_t n)
{
    char *d = agti_shp_alloc_raw(p, n + 1);
    if (!d)
        return NULL;
    if (n)
        memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

static void put(agti_buf *v, const char *s, size_t n)
{
    if (v)
        agti_buf_put(v, s, n);
}

static void putch(agti_buf *v, char c)
{
    if (v)
        agti_buf_putc(v, c);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static void put_utf8(agti_buf *v, uint32_t cp)
{
    char b[4];
    size_t n;
    if (cp < 0x80) {
        b[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (char)(0xC0 | (cp >> 6));
        b[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (char)(0xE0 | (cp >> 12));
        b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        if (cp > 0x10FFFF)
            cp = 0xFFFD;
        b[0] = (char)(0xF0 | (cp >> 18));
        b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        b[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    put(v, b, n);
}

/* $'...' (p->pos at the opening quote): bash's ANSI-C escapes. */
static bool lex_ansi(sh_parser *p, agti_buf *v)
{
    size_t open = p->pos - 1;
    p->pos++;
    while (p->pos < p->end) {
        char c = p->s[p->pos];
        if (c == '\'') {
            p->pos++;
            return true;
        }
        if (c != '\\' || p->pos + 1 >= p->end) {
            putch(v, c);
            p->pos++;
            continue;
        }
        char e = p->s[p->pos + 1];
        p->pos += 2;
        switch (e) {
        case 'a':
            putch(v, '\a');
            break;
        case 'b':
            putch(v, '\b');
            break;
        case 'e':
        case 'E':
            putch(v, '\033');
            break;
        case 'f':
            putch(v, '\f');
            break;
        case 'n':
            putch(v, '\n');
            break;
        case 'r':
            putch(v, '\r');
            break;
        case 't':
            putch(v, '\t');
            break;
        case 'v':
            putch(v, '\v');
            break;
        case '\\':
        case '\'':
        case '"':
        case '?':
            putch(v, e);
            break;
        case 'c':
            if (p->pos < p->end) {
                char k = p->s[p->pos++];
                if (k == '\\' && p->pos < p->end && p->s[p->pos] == '\\')
                    p->pos++;
                putch(v, k == '?' ? (char)0x7F : (char)(k & 0x1F));
            } else {
                put(v, "\\c", 2);
            }
            break;
        case 'x':
        case 'u':
        case 'U': {
            int maxd = e == 'x' ? 2 : e == 'u' ? 4 : 8, nd = 0;
            uint32_t cp = 0;
            while (nd < maxd && p->pos < p->end && hexval(p->s[p->pos]) >= 0) {
                cp = cp * 16u + (uint32_t)hexval(p->s[p->pos]);
                p->pos++;
                nd++;
            }
            if (nd == 0) {
                putch(v, '\\');
                putch(v, e);
            } else if (e == 'x') {
                putch(v, (char)cp);
            } else {
                put_utf8(v, cp);
            }
            break;
        }
        default:
            if (e >= '0' && e <= '7') {
                unsigned cp = (unsigned)(e - '0');
                int nd = 1;
                while (nd < 3 && p->pos < p->end && p->s[p->pos] >= '0' && p->s[p->pos] <= '7') {
                    cp = cp * 8u + (unsigned)(p->s[p->pos] - '0');
                    p->pos++;
                    nd++;
                }
                putch(v, (char)(cp & 0xFFu));
            } else {
                putch(v, '\\');
                putch(v, e);
            }
        }
    }
    agti_shp_fail(p, AGTI_SH_ESYNTAX, open, "unterminated $'...' quote starting at byte %zu",
                  p->base + open);
    return false;
}

/* '...' (p->pos at the opening quote). */
static bool lex_squote(sh_parser *p, agti_buf *v)
{
    size_t open = p->pos++;
    const char *q = memchr(p->s + p->pos, '\'', p->end - p->pos);
    if (!q) {
        agti_shp_fail(p, AGTI_SH_ESYNTAX, open, "unterminated single quote starting at byte %zu",
                      p->base + open);
        return false;
    }
    size_t n = (size_t)(q - (p->s + p->pos));
    put(v, p->s + p->pos, n);
    p->pos += n + 1;
    return true;
}

/* $( or <( or >( (p->pos just past the parenthesis): the commands inside. */
static bool lex_cmdsubst(sh_parser *p, size_t open, const char *what)
{
    if (!agti_shp_enter(p, open))
        return false;
    unsigned save_ctx = p->ctx;
    p->ctx |= AGTI_SHC_IN_SUBST;
    p->in_cmdsubst++;
    agti_sh_node *n = agti_shp_list(p);
    p->in_cmdsubst--;
    p->ctx = save_ctx;
    agti_shp_leave(p);
    if (!n)
        return false;
    if (p->pos >= p->end) {
        agti_shp_fail(p, AGTI_SH_ESYNTAX, open, "unterminated %s...) starting at byte %zu", what,
                      p->base + open);
        return false;
    }
    if (p->s[p->pos] != ')') {
        agti_shp_fail(p, AGTI_SH_ESYNTAX, p->pos,
                      "unexpected `%c` at byte %zu inside the %s...) starting at byte %zu",
                      p->s[p->pos], p->base + p->pos, what, p->base + open);
        return false;
    }
    p->pos++;
    return true;
}

bool agti_shp_arith_ahead(sh_parser *p)
{
    size_t i = p->pos;
    size_t end = p->end - p->pos > p->lookahead_left ? p->pos + p->lookahead_left : p->end;
    bool arith = true; /* also when the look-ahead runs out */
    long depth = 0;
    while (i < end) {
        char c = p->s[i];
        if (c == '\\') {
            i += 2;
            continue;
        }
        if (c == '\'' || c == '"') {
            i++;
            while (i < end && p->s[i] != c) {
                if (c == '"' && p->s[i] == '\\')
                    i++;
                i++;
            }
            i++;
            continue;
        }
        if (c == '(') {
            depth++;
        } else if (c == ')') {
            if (depth == 0) {
                arith = i + 1 < p->end && p->s[i + 1] == ')';
                break;
            }
            depth--;
        }
        i++;
    }
    if (i > end)
        i = end;
    p->lookahead_left -= i - p->pos;
    return arith;
}

/* Reads to the closing `))` (or `]` of $[...]); parentheses nest. */
static bool lex_arith_to(sh_parser *p, size_t open, char close, unsigned *fl)
{
    long depth = 0;
    if (!agti_shp_enter(p, open))
        return false;
    while (p->pos < p->end) {
        char c = p->s[p->pos];
        if (c == '\\') {
            p->pos += p->pos + 1 < p->end ? 2 : 1;
            continue;
        }
        if (c == '\'') {
            if (!lex_squote(p, NULL))
                return false;
            continue;
        }
        if (c == '"') {
            p->pos++;
            if (!lex_dquote(p, NULL, fl))
                return false;
            continue;
        }
        if (c == '$') {
            if (!lex_dollar(p, NULL, fl, true))
                return false;
            continue;
        }
        if (c == '`') {
            if (!lex_backtick(p, NULL, fl, false))
                return false;
            continue;
        }
        if (close == ']') {
            if (c == '[')
                depth++;
            else if (c == ']' && depth-- == 0) {
                p->pos++;
                agti_shp_leave(p);
                return true;
            }
        } else if (c == '(') {
            depth++;
        } else if (c == ')') {
            if (depth == 0) {
                if (p->pos + 1 < p->end && p->s[p->pos + 1] == ')') {
                    p->pos += 2;
                    agti_shp_leave(p);
                    return true;
                }
                agti_shp_fail(p, AGTI_SH_ESYNTAX, p->pos,
                              "`)` at byte %zu closes the arithmetic started at byte %zu, "
                              "which needs `))`",
                              p->base + p->pos, p->base + open);
                return false;
            }
            depth--;
        }
        p->pos++;
    }
    agti_shp_fail(p, AGTI_SH_ESYNTAX, open, "unterminated arithmetic %s starting at byte %zu",
                  close == ']' ? "$[...]" : "((...))", p->base + open);
    return false;
}

bool agti_shp_arith(sh_parser *p, size_t open_pos, unsigned *flags)
{
    return lex_arith_to(p, open_pos, ')', flags);
}

/* Whether ${...} starting at i (just past the brace) evaluates a value as
 * code: ${!x}, ${a[i]} (but not [@] [*]), ${s:i} (but not :- := :? :+),
 * ${x@P}. */
static bool param_evaluates(const sh_parser *p, size_t i)
{
    if (i < p->end && p->s[i] == '!')
        return true;
    if (i < p->end && p->s[i] == '#')
        i++;
    while (i < p->end && is_name_char(p->s[i]))
        i++;
    if (i >= p->end)
        return false;
    char c = p->s[i];
    if (c == '[')
        return !(i + 2 < p->end && (p->s[i + 1] == '@' || p->s[i + 1] == '*') &&
                 p->s[i + 2] == ']');
    if (c == ':')
        return !(i + 1 < p->end && strchr("-=?+", p->s[i + 1]) != NULL);
    if (c == '@')
        return i + 1 < p->end && p->s[i + 1] == 'P';
    return false;
}

/* ${...} (p->pos just past the brace). */
static bool lex_param(sh_parser *p, size_t open, unsigned *fl)
{
    if (!agti_shp_enter(p, open))
        return false;
    if (param_evaluates(p, p->pos))
        *fl |= AGTI_SHW_EVAL;
    while (p->pos < p->end) {
        char c = p->s[p->pos];
        if (c == '}') {
            p->pos++;
            agti_shp_leave(p);
            return true;
        }
        if (c == '\\') {
            p->pos += p->pos + 1 < p->end ? 2 : 1;
            continue;
        }
        bool ok = true;
        if (c == '\'')
            ok = lex_squote(p, NULL);
        else if (c == '"') {
            p->pos++;
            ok = lex_dquote(p, NULL, fl);
        } else if (c == '$')
            ok = lex_dollar(p, NULL, fl, false);
        else if (c == '`')
            ok = lex_backtick(p, NULL, fl, false);
        else
            p->pos++;
        if (!ok)
            return false;
    }
    agti_shp_fail(p, AGTI_SH_ESYNTAX, open, "unterminated ${...} starting at byte %zu",
                  p->base + open);
    return false;
}

static bool is_special_param(char c)
{
    return c == '@' || c == '*' || c == '#' || c == '?' || c == '-' || c == '$' || c == '!' ||
           (c >= '0' && c <= '9');
}

/* At `$`. dq: inside double quotes (or a here-doc body), where $'..' and
 * $".." are not quotes. Expansions append their source text to v. */
static bool lex_dollar(sh_parser *p, agti_buf *v, unsigned *fl, bool dq)
{
    size_t start = p->pos;
    char n = p->pos + 1 < p->end ? p->s[p->pos + 1] : '\0';
    bool ok = true;
    if (n == '\'' && !dq) {
        p->pos++;
        *fl |= AGTI_SHW_QUOTED;
        return lex_ansi(p, v);
    }
    if (n == '"' && !dq) {
        p->pos += 2;
        *fl |= AGTI_SHW_QUOTED;
        return lex_dquote(p, v, fl);
    }
    if (n == '{') {
        p->pos += 2;
        ok = lex_param(p, start, fl);
    } else if (n == '(') {
        if (p->pos + 2 < p->end && p->s[p->pos + 2] == '(') {
            p->pos += 3;
            if (agti_shp_arith_ahead(p)) {
                *fl |= AGTI_SHW_EVAL;
                ok = lex_arith_to(p, start, ')', fl);
            } else {
                p->pos = start + 2;
                ok = lex_cmdsubst(p, start, "$(");
            }
        } else {
            p->pos += 2;
            ok = lex_cmdsubst(p, start, "$(");
        }
    } else if (n == '[') {
        p->pos += 2;
        *fl |= AGTI_SHW_EVAL;
        ok = lex_arith_to(p, start, ']', fl);
    } else if (is_name_start(n)) {
        p->pos += 2;
        while (p->pos < p->end && is_name_char(p->s[p->pos]))
            p->pos++;
    } else if (n != '\0' && is_special_param(n)) {
        p->pos += 2;
    } else {
        /* A lone `$` is a literal dollar sign. */
        putch(v, '$');
        p->pos++;
        return true;
    }
    if (!ok)
        return false;
    put(v, p->s + start, p->pos - start);
    *fl |= AGTI_SHW_DYNAMIC | (dq ? 0 : AGTI_SHW_UNQUOTED_EXP);
    return true;
}

/* "..." (p->pos just past the opening quote). */
static bool lex_dquote(sh_parser *p, agti_buf *v, unsigned *fl)
{
    size_t open = p->pos - 1;
    while (p->pos < p->end) {
        char c = p->s[p->pos];
        if (c == '"') {
            p->pos++;
            return true;
        }
        if (c == '\\' && p->pos + 1 < p->end) {
            char e = p->s[p->pos + 1];
            if (e == '\n') {
                p->pos += 2;
                continue;
            }
            if (e == '$' || e == '`' || e == '"' || e == '\\') {
                putch(v, e);
                p->pos += 2;
                continue;
            }
            putch(v, '\\');
            p->pos++;
            continue;
        }
        bool ok = true;
        if (c == '$')
            ok = lex_dollar(p, v, fl, true);
        else if (c == '`')
            ok = lex_backtick(p, v, fl, true);
        else {
            putch(v, c);
            p->pos++;
        }
        if (!ok)
            return false;
    }
    agti_shp_fail(p, AGTI_SH_ESYNTAX, open, "unterminated double quote starting at byte %zu",
                  p->base + open);
    return false;
}

/* `...` (p->pos at the opening backquote): the body loses the backslashes
 * before $ ` \ (and " inside double quotes), then is parsed as a text of
 * its own. Offsets inside it are approximate when backslashes were removed. */
static bool lex_backtick(sh_parser *p, agti_buf *v, unsigned *fl, bool dq)
{
    size_t open = p->pos++;
    agti_buf body = AGTI_BUF_INIT;
    bool closed = false;
    while (p->pos < p->end) {
        char c = p->s[p->pos];
        if (c == '`') {
            closed = true;
            p->pos++;
            break;
        }
        if (c == '\\' && p->pos + 1 < p->end) {
            char e = p->s[p->pos + 1];
            if (e == '$' || e == '`' || e == '\\' || (dq && e == '"')) {
                agti_buf_putc(&body, e);
                p->pos += 2;
                continue;
            }
        }
        agti_buf_putc(&body, c);
        p->pos++;
    }
    if (!closed) {
        agti_buf_free(&body);
        agti_shp_fail(p, AGTI_SH_ESYNTAX, open, "unterminated backquote starting at byte %zu",
                      p->base + open);
        return false;
    }
    if (body.oom) {
        agti_buf_free(&body);
        agti_shp_fail(p, AGTI_SH_ENOMEM, open, "out of memory");
        return false;
    }
    if (!agti_shp_enter(p, open)) {
        agti_buf_free(&body);
        return false;
    }
    const char *save_s = p->s;
    size_t save_end = p->end, save_pos = p->pos, save_base = p->base, save_floor = p->pend_floor;
    unsigned save_ctx = p->ctx;
    p->s = agti_buf_cstr(&body);
    p->end = body.len;
    p->pos = 0;
    p->base = save_base + open + 1;
    p->pend_floor = p->npend;
    p->ctx |= AGTI_SHC_IN_SUBST;
    int save_in = p->in_cmdsubst;
    p->in_cmdsubst = 0;
    agti_sh_node *n = agti_shp_list(p);
    p->in_cmdsubst = save_in;
    if (n && p->pos < p->end)
        agti_shp_fail(p, AGTI_SH_ESYNTAX, p->pos,
                      "unexpected `%c` at byte %zu inside the backquotes starting at byte %zu",
                      p->s[p->pos], p->base + p->pos, save_base + open);
    bool ok = !p->failed && agti_shp_read_heredocs(p);
    p->s = save_s;
    p->end = save_end;
    p->pos = save_pos;
    p->base = save_base;
    p->pend_floor = save_floor;
    p->ctx = save_ctx;
    agti_shp_leave(p);
    agti_buf_free(&body);
    if (!ok)
        return false;
    put(v, p->s + open, p->pos - open);
    *fl |= AGTI_SHW_DYNAMIC | (dq ? 0 : AGTI_SHW_UNQUOTED_EXP);
    return true;
}

/* A balanced (...) group inside a [[ ]] word: an extglob pattern list or a
 * regex group. Copied as written; quotes inside still quote. */
static bool lex_group(sh_parser *p, agti_buf *v, unsigned *fl)
{
    size_t open = p->pos;
    long depth = 0;
    while (p->pos < p->end) {
        char c = p->s[p->pos];
        size_t at = p->pos;
        bool ok = true;
        if (c == '\\' && p->pos + 1 < p->end) {
            put(v, p->s + p->pos + 1, 1);
            *fl |= AGTI_SHW_QUOTED;
            p->pos += 2;
            continue;
        }
        if (c == '\'') {
            *fl |= AGTI_SHW_QUOTED;
            ok = lex_squote(p, v);
        } else if (c == '"') {
            *fl |= AGTI_SHW_QUOTED;
            p->pos++;
            ok = lex_dquote(p, v, fl);
        } else if (c == '$') {
            ok = lex_dollar(p, v, fl, false);
        } else if (c == '`') {
            ok = lex_backtick(p, v, fl, false);
        } else {
            if (c == '(')
                depth++;
            else if (c == ')' && --depth == 0) {
                putch(v, c);
                p->pos++;
                return true;
            } else if (c == '\n') {
                break;
            }
            putch(v, c);
            p->pos++;
        }
        (void)at;
        if (!ok)
            return false;
    }
    agti_shp_fail(p, AGTI_SH_ESYNTAX, open, "unterminated ( in [[ ]] starting at byte %zu",
                  p->base + open);
    return false;
}

size_t agti_shp_assign_prefix(const sh_parser *p)
{
    size_t i = p->pos;
    if (i >= p->end || !is_name_start(p->s[i]))
        return 0;
    while (i < p->end && is_name_char(p->s[i]))
        i++;
    if (i < p->end && p->s[i] == '[') {
        /* a[subscript]= : the subscript may hold anything but a newline;
         * brackets nest. */
        long depth = 0;
        for (; i < p->end; i++) {
            char c = p->s[i];
            if (c == '\n')
                return 0;
            if (c == '\\') {
                i++;
                continue;
            }
            if (c == '[')
                depth++;
            else if (c == ']' && --depth == 0)
                break;
        }
        if (i >= p->end)
            return 0;
        i++;
    }
    if (i < p->end && p->s[i] == '=')
        return i + 1 - p->pos;
    if (i + 1 < p->end && p->s[i] == '+' && p->s[i + 1] == '=')
        return i + 2 - p->pos;
    return 0;
}

bool agti_shp_word(sh_parser *p, agti_sh_word *w, unsigned mode)
{
    size_t start = p->pos;
    agti_buf *v = &p->scratch;
    size_t vstart = v->len;
    unsigned fl = 0;
    bool open_bracket = false, brace_open = false, brace_sep = false;
    size_t assign = 0;
    if (!(mode & (SHW_MODE_COND | SHW_MODE_REGEX)))
        assign = p->ap_known && p->ap_pos == p->pos ? p->ap_len : agti_shp_assign_prefix(p);
    p->ap_known = false;
    long regex_depth = 0;
    (void)regex_depth;
    while (p->pos < p->end) {
        char c = p->s[p->pos];
        bool ok = true;
        if (c == '\\') {
            if (p->pos + 1 >= p->end) {
                agti_buf_putc(v, '\\');
                p->pos++;
                continue;
            }
            if (p->s[p->pos + 1] == '\n') {
                p->pos += 2;
                continue;
            }
            agti_buf_putc(v, p->s[p->pos + 1]);
            fl |= AGTI_SHW_QUOTED;
            p->pos += 2;
            continue;
        }
        if (c == '\'') {
            fl |= AGTI_SHW_QUOTED;
            ok = lex_squote(p, v);
        } else if (c == '"') {
            fl |= AGTI_SHW_QUOTED;
            p->pos++;
            ok = lex_dquote(p, v, &fl);
        } else if (c == '$') {
            ok = lex_dollar(p, v, &fl, false);
        } else if (c == '`') {
            ok = lex_backtick(p, v, &fl, false);
        } else if ((c == '<' || c == '>') && p->pos + 1 < p->end && p->s[p->pos + 1] == '(') {
            size_t open = p->pos;
            p->pos += 2;
            ok = lex_cmdsubst(p, open, c == '<' ? "<(" : ">(");
            if (ok) {
                agti_buf_put(v, p->s + open, p->pos - open);
                fl |= AGTI_SHW_DYNAMIC | AGTI_SHW_UNQUOTED_EXP;
            }
        } else if (c == '(' && (mode & (SHW_MODE_COND | SHW_MODE_REGEX)) &&
                   ((mode & SHW_MODE_REGEX) ||
                    (p->pos > start && strchr("@!+*?", p->s[p->pos - 1])))) {
            fl |= AGTI_SHW_GLOB;
            ok = lex_group(p, v, &fl);
        } else if (c == '|' && (mode & SHW_MODE_REGEX)) {
            agti_buf_putc(v, c);
            p->pos++;
        } else if (agti_shp_is_meta(c)) {
            break;
        } else if (!brace_open && is_plain(c)) {
            size_t run = p->pos + 1;
            while (run < p->end && is_plain(p->s[run]))
                run++;
            agti_buf_put(v, p->s + p->pos, run - p->pos);
            p->pos = run;
        } else {
            if (c == '*' || c == '?')
                fl |= AGTI_SHW_GLOB;
            else if (c == '[')
                open_bracket = true;
            else if (c == ']' && open_bracket)
                fl |= AGTI_SHW_GLOB;
            else if (c == '{')
                brace_open = true;
            else if (brace_open &&
                     (c == ',' || (c == '.' && p->pos + 1 < p->end && p->s[p->pos + 1] == '.')))
                brace_sep = true;
            else if (c == '}' && brace_sep)
                fl |= AGTI_SHW_BRACE;
            else if (c == '~' && (p->pos == start || (assign && p->pos == start + assign) ||
                                  (assign && p->pos > start + assign && p->s[p->pos - 1] == ':')))
                fl |= AGTI_SHW_TILDE;
            agti_buf_putc(v, c);
            p->pos++;
        }
        if (!ok) {
            agti_buf_truncate(v, vstart);
            return false;
        }
    }
    if (v->oom) {
        agti_shp_fail(p, AGTI_SH_ENOMEM, start, "out of memory");
        return false;
    }
    w->vlen = v->len - vstart;
    w->value = agti_shp_strdup(p, agti_buf_cstr(v) + vstart, w->vlen);
    agti_buf_truncate(v, vstart);
    w->offset = p->base + start;
    w->length = p->pos - start;
    w->flags = fl;
    return w->value != NULL;
}

bool agti_shp_heredoc_body(sh_parser *p, size_t start, size_t end)
{
    size_t save_end = p->end;
    unsigned fl = 0;
    p->pos = start;
    p->end = end;
    bool ok = true;
    while (ok && p->pos < p->end) {
        char c = p->s[p->pos];
        if (c == '\\')
            p->pos += p->pos + 1 < p->end ? 2 : 1;
        else if (c == '$')
            ok = lex_dollar(p, NULL, &fl, true);
        else if (c == '`')
            ok = lex_backtick(p, NULL, &fl, false);
        else
            p->pos++;
    }
    p->end = save_end;
    return ok;
}
