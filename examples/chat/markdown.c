/*
 * agt-chat: the model's markdown on a terminal, parsed by md4c (CommonMark
 * with GitHub's tables, strikethrough and task lists): headings, emphasis,
 * lists, block quotes, tables with aligned columns, links with their
 * address, code blocks with simple syntax colouring. Without colour (NO_COLOR,
 * --no-color) the same layout comes without escape sequences; agt-chat prints
 * the text unchanged when stdout is not a terminal.
 */
#include "chat.h"

#include <md4c.h>
#include <stdlib.h>
#include <string.h>
#include "cli_util.h"

typedef cli_buf sbuf;

static void put(sbuf *b, const char *s, size_t n)
{
    if (n == 0)
        return;
    cli_buf_put(b, s, n);
}

static void puts_(sbuf *b, const char *s)
{
    cli_buf_puts(b, s);
}

/* Columns a UTF-8 string takes: one per code point (wide characters are
 * rare in answers; escape sequences are never in the measured text). */
static size_t width(const char *s, size_t n)
{
    size_t w = 0;
    for (size_t i = 0; i < n; i++)
        w += ((unsigned char)s[i] & 0xC0) != 0x80;
    return w;
}

#define MAX_DEPTH 32
#define MAX_COLS 32

typedef struct level {
    MD_BLOCKTYPE type;
    unsigned next;  /* OL: the next item's number */
    int tight;      /* lists */
    int indent;     /* LI: the marker's width */
    int first_line; /* LI: its first line has not started yet */
    char marker[16];
} level;

typedef struct cell {
    sbuf styled, plain;
} cell;

typedef struct render {
    const char *src; /* the text md4c parses, and its length */
    size_t srclen;
    sbuf out;
    int color;
    level stack[MAX_DEPTH];
    int depth;
    int bol;        /* the output is at a line start */
    int want_blank; /* a block ended: a blank line before the next one */
    int any;        /* something was written */
    /* a code block, highlighted when it ends */
    int in_code;
    sbuf code;
    char lang[32];
    /* a table: its cells, laid out when it ends */
    int in_table, in_cell, in_head;
    cell *cells;
    size_t ncells, capcells;
    unsigned cols;
    MD_ALIGN align[MAX_COLS];
    size_t head_cells;
    /* links: the address, shown after the text when it differs */
    sbuf href, linktext;
    int link_depth;
} render;

static const char *esc(const render *r, const char *code)
{
    return r->color ? code : "";
}

/* The prefix of a continuation line: block quotes' bars, list indentation;
 * the first line of a list item gets its marker instead. */
static void line_prefix(render *r)
{
    for (int k = 1; k <= r->depth; k++) {
        level *l = &r->stack[k];
        if (l->type == MD_BLOCK_QUOTE) {
            puts_(&r->out, esc(r, "\033[2m"));
            puts_(&r->out, "│ ");
            puts_(&r->out, esc(r, "\033[0m"));
        } else if (l->type == MD_BLOCK_LI) {
            if (l->first_line) {
                puts_(&r->out, l->marker);
                l->first_line = 0;
            } else {
                for (int i = 0; i < l->indent; i++)
                    put(&r->out, " ", 1);
            }
        }
    }
}

/* Text into the current target (a table cell, or the output with prefixes). */
static void emit(render *r, const char *s, size_t n, int styled_only)
{
    if (r->link_depth > 0 && !styled_only)
        put(&r->linktext, s, n);
    if (r->in_cell && r->ncells > 0) {
        cell *c = &r->cells[r->ncells - 1];
        put(&c->styled, s, n);
        if (!styled_only)
            put(&c->plain, s, n);
        return;
    }
    if (styled_only) {
        put(&r->out, s, n);
        return;
    }
    for (size_t i = 0; i < n;) {
        if (r->bol) {
            line_prefix(r);
            r->bol = 0;
        }
        const char *nl = memchr(s + i, '\n', n - i);
        size_t k = nl != NULL ? (size_t)(nl - (s + i)) + 1 : n - i;
        put(&r->out, s + i, k);
        r->any = 1;
        if (nl != NULL)
            r->bol = 1;
        i += k;
    }
}

static void style(render *r, const char *code)
{
    if (r->color)
        emit(r, code, strlen(code), 1);
}

static void newline(render *r)
{
    if (!r->bol)
        emit(r, "\n", 1, 0);
}

/* Before a block: end the line, and a blank line after an earlier block. */
static void block_gap(render *r)
{
    newline(r);
    if (r->want_blank && r->any) {
        /* the blank line carries the quote bars, not list markers */
        for (int k = 1; k <= r->depth; k++)
            if (r->stack[k].type == MD_BLOCK_QUOTE) {
                puts_(&r->out, esc(r, "\033[2m"));
                puts_(&r->out, "│");
                puts_(&r->out, esc(r, "\033[0m"));
            }
        put(&r->out, "\n", 1);
    }
    r->want_blank = 0;
}

/* ---- syntax colouring of code blocks ----------------------------------- */

static const char *const keywords[] = {
    /* C, C++ */
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum",
    "extern", "float", "for", "goto", "if", "int", "long", "register", "return", "short", "signed",
    "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile",
    "while", "bool", "true", "false", "NULL", "class", "namespace", "template", "public", "private",
    "protected", "new", "delete", "nullptr", "include", "define",
    /* Python */
    "def", "import", "from", "as", "pass", "None", "True", "False", "elif", "in", "is", "not",
    "and", "or", "lambda", "with", "yield", "try", "except", "finally", "raise", "async", "await",
    "global", "self",
    /* shell */
    "then", "fi", "esac", "done", "function", "local", "export", "echo",
    /* JavaScript, Go, Rust */
    "var", "let", "fn", "func", "package", "type", "interface", "impl", "mut", "pub", "use", "mod",
    "match", "loop", "this", "null", "undefined", "typeof", "instanceof", "go", "defer", "chan",
    "map", "range", "select", "struct", NULL};

static int is_keyword(const char *s, size_t n)
{
    for (size_t i = 0; keywords[i] != NULL; i++)
        if (strlen(keywords[i]) == n && memcmp(keywords[i], s, n) == 0)
            return 1;
    return 0;
}

static int word_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '_';
}

/* Whether the language comments with '#' (shell, Python, ...) or '//'. */
static int hash_comments(const char *lang)
{
    static const char *const hash[] = {"sh",   "bash",     "shell", "zsh",  "python", "py",
                                       "ruby", "rb",       "perl",  "yaml", "yml",    "toml",
                                       "make", "makefile", "cmake", "conf", "ini",    NULL};
    for (size_t i = 0; hash[i] != NULL; i++)
        if (strcmp(lang, hash[i]) == 0)
            return 1;
    return 0;
}

/* One line of code, coloured: comments dim, strings green, numbers yellow,
 * keywords bold magenta. */
static void highlight_line(render *r, const char *s, size_t n)
{
    int hash = hash_comments(r->lang);
    size_t i = 0;
    while (i < n) {
        char ch = s[i];
        if ((hash && ch == '#') || (!hash && ch == '/' && i + 1 < n && s[i + 1] == '/')) {
            style(r, "\033[2m");
            emit(r, s + i, n - i, 0);
            style(r, "\033[0m");
            return;
        }
        if (ch == '"' || ch == '\'' || ch == '`') {
            size_t j = i + 1;
            while (j < n && s[j] != ch) {
                if (s[j] == '\\' && j + 1 < n)
                    j++;
                j++;
            }
            if (j < n)
                j++;
            style(r, "\033[32m");
            emit(r, s + i, j - i, 0);
            style(r, "\033[0m");
            i = j;
            continue;
        }
        if (word_char(ch)) {
            size_t j = i;
            while (j < n && word_char(s[j]))
                j++;
            int number = ch >= '0' && ch <= '9';
            int kw = !number && is_keyword(s + i, j - i);
            if (number || kw)
                style(r, number ? "\033[33m" : "\033[1;35m");
            emit(r, s + i, j - i, 0);
            if (number || kw)
                style(r, "\033[0m");
            i = j;
            continue;
        }
        emit(r, s + i, 1, 0);
        i++;
    }
}

static void flush_code(render *r)
{
    const char *s = r->code.p != NULL ? r->code.p : "";
    size_t n = r->code.len;
    if (n > 0 && s[n - 1] == '\n')
        n--;
    for (size_t i = 0; i <= n;) {
        const char *nl = memchr(s + i, '\n', n - i);
        size_t k = nl != NULL ? (size_t)(nl - (s + i)) : n - i;
        emit(r, "    ", 4, 0);
        if (r->color)
            highlight_line(r, s + i, k);
        else
            emit(r, s + i, k, 0);
        emit(r, "\n", 1, 0);
        i += k + 1;
        if (nl == NULL)
            break;
    }
    r->code.len = 0;
}

/* ---- tables ------------------------------------------------------------- */

static void flush_table(render *r)
{
    unsigned cols = r->cols > 0 ? r->cols : 1;
    size_t w[MAX_COLS] = {0};
    for (size_t i = 0; i < r->ncells; i++) {
        cell *c = &r->cells[i];
        size_t cw = width(c->plain.p != NULL ? c->plain.p : "", c->plain.len);
        if (cw > w[i % cols])
            w[i % cols] = cw;
    }
    for (size_t i = 0; i < r->ncells; i++) {
        cell *c = &r->cells[i];
        unsigned col = (unsigned)(i % cols);
        size_t pad = w[col] - width(c->plain.p != NULL ? c->plain.p : "", c->plain.len);
        size_t left = r->align[col] == MD_ALIGN_RIGHT    ? pad
                      : r->align[col] == MD_ALIGN_CENTER ? pad / 2
                                                         : 0;
        if (col > 0)
            emit(r, " │ ", strlen(" │ "), 0);
        for (size_t k = 0; k < left; k++)
            emit(r, " ", 1, 0);
        if (i < r->head_cells)
            style(r, "\033[1m");
        if (c->styled.p != NULL) {
            /* styled text carries its own escapes: written as it is */
            if (r->bol) {
                line_prefix(r);
                r->bol = 0;
            }
            put(&r->out, c->styled.p, c->styled.len);
            r->any = 1;
        }
        if (i < r->head_cells)
            style(r, "\033[0m");
        for (size_t k = left; k < pad; k++)
            emit(r, " ", 1, 0);
        if (col + 1 == cols) {
            emit(r, "\n", 1, 0);
            if (i + 1 == r->head_cells) {
                for (unsigned k = 0; k < cols; k++) {
                    if (k > 0)
                        emit(r, "─┼─", strlen("─┼─"), 0);
                    for (size_t j = 0; j < w[k]; j++)
                        emit(r, "─", strlen("─"), 0);
                }
                emit(r, "\n", 1, 0);
            }
        }
    }
    for (size_t i = 0; i < r->ncells; i++) {
        free(r->cells[i].styled.p);
        free(r->cells[i].plain.p);
    }
    r->ncells = 0;
}

/* ---- md4c callbacks ----------------------------------------------------- */

static int enter_block(MD_BLOCKTYPE type, void *detail, void *ud)
{
    render *r = ud;
    switch (type) {
    case MD_BLOCK_DOC:
        return 0;
    case MD_BLOCK_P:
    case MD_BLOCK_HR:
    case MD_BLOCK_TABLE:
    case MD_BLOCK_QUOTE:
        block_gap(r);
        break;
    case MD_BLOCK_H: {
        block_gap(r);
        unsigned lv = ((MD_BLOCK_H_DETAIL *)detail)->level;
        style(r, lv <= 2 ? "\033[1;4m" : "\033[1m");
        if (!r->color) {
            for (unsigned k = 0; k < lv; k++)
                emit(r, "#", 1, 0);
            emit(r, " ", 1, 0);
        }
        break;
    }
    case MD_BLOCK_CODE: {
        block_gap(r);
        MD_BLOCK_CODE_DETAIL *d = detail;
        size_t n = d->lang.size < sizeof r->lang - 1 ? d->lang.size : sizeof r->lang - 1;
        for (size_t k = 0; k < n; k++) {
            char ch = d->lang.text[k];
            r->lang[k] = ch >= 'A' && ch <= 'Z' ? (char)(ch - 'A' + 'a') : ch;
        }
        r->lang[n] = '\0';
        r->in_code = 1;
        break;
    }
    case MD_BLOCK_UL:
    case MD_BLOCK_OL:
        if (r->depth > 0 && r->stack[r->depth].type == MD_BLOCK_LI)
            newline(r); /* a nested list starts on its own line */
        else
            block_gap(r);
        break;
    case MD_BLOCK_LI: {
        level *list = &r->stack[r->depth];
        newline(r);
        if (!list->tight && r->want_blank && r->any)
            block_gap(r);
        r->want_blank = 0;
        break;
    }
    case MD_BLOCK_THEAD:
        r->in_head = 1;
        break;
    case MD_BLOCK_TH:
    case MD_BLOCK_TD:
        if (r->ncells == r->capcells) {
            size_t cap = r->capcells * 2 + 16;
            cell *c = realloc(r->cells, cap * sizeof *c);
            if (c == NULL)
                return 1;
            r->cells = c;
            r->capcells = cap;
        }
        memset(&r->cells[r->ncells], 0, sizeof(cell));
        if (r->ncells < MAX_COLS)
            r->align[r->ncells] = ((MD_BLOCK_TD_DETAIL *)detail)->align;
        r->ncells++;
        if (r->in_head)
            r->head_cells = r->ncells;
        r->in_cell = 1;
        break;
    default:
        break;
    }
    if (r->depth + 1 < MAX_DEPTH) {
        level *l = &r->stack[++r->depth];
        memset(l, 0, sizeof *l);
        l->type = type;
        if (type == MD_BLOCK_UL)
            l->tight = ((MD_BLOCK_UL_DETAIL *)detail)->is_tight;
        if (type == MD_BLOCK_OL) {
            l->tight = ((MD_BLOCK_OL_DETAIL *)detail)->is_tight;
            l->next = ((MD_BLOCK_OL_DETAIL *)detail)->start;
        }
        if (type == MD_BLOCK_TABLE) {
            r->in_table = 1;
            r->cols = ((MD_BLOCK_TABLE_DETAIL *)detail)->col_count;
            if (r->cols > MAX_COLS)
                r->cols = MAX_COLS;
            r->ncells = r->head_cells = 0;
        }
        if (type == MD_BLOCK_LI) {
            level *list = &r->stack[r->depth - 1];
            MD_BLOCK_LI_DETAIL *d = detail;
            if (list->type == MD_BLOCK_OL)
                snprintf(l->marker, sizeof l->marker, "%u. ", list->next++);
            else
                snprintf(l->marker, sizeof l->marker, "%s", r->color ? "• " : "- ");
            if (d->is_task)
                snprintf(l->marker + strlen(l->marker), sizeof l->marker - strlen(l->marker),
                         "[%c] ", d->task_mark == ' ' ? ' ' : 'x');
            l->indent = (int)width(l->marker, strlen(l->marker));
            l->first_line = 1;
        }
    }
    return 0;
}

static int leave_block(MD_BLOCKTYPE type, void *detail, void *ud)
{
    render *r = ud;
    (void)detail;
    switch (type) {
    case MD_BLOCK_DOC:
        newline(r);
        return 0;
    case MD_BLOCK_H:
        style(r, "\033[0m");
        newline(r);
        r->want_blank = 1;
        break;
    case MD_BLOCK_P:
        newline(r);
        r->want_blank = 1;
        break;
    case MD_BLOCK_HR:
        emit(r, "────────────────────────────────────────\n",
             strlen("────────────────────────────────────────\n"), 0);
        r->want_blank = 1;
        break;
    case MD_BLOCK_CODE:
        r->in_code = 0;
        flush_code(r);
        r->want_blank = 1;
        break;
    case MD_BLOCK_TH:
    case MD_BLOCK_TD:
        r->in_cell = 0;
        break;
    case MD_BLOCK_THEAD:
        r->in_head = 0;
        break;
    case MD_BLOCK_TABLE:
        r->in_table = 0;
        flush_table(r);
        r->want_blank = 1;
        break;
    case MD_BLOCK_UL:
    case MD_BLOCK_OL:
    case MD_BLOCK_QUOTE:
        newline(r);
        r->want_blank = 1;
        break;
    case MD_BLOCK_LI:
        newline(r);
        break;
    default:
        break;
    }
    if (r->depth > 0)
        r->depth--;
    if (type == MD_BLOCK_LI && r->depth > 0 && !r->stack[r->depth].tight)
        r->want_blank = 1;
    else if (type == MD_BLOCK_LI)
        r->want_blank = 0;
    return 0;
}

static int enter_span(MD_SPANTYPE type, void *detail, void *ud)
{
    render *r = ud;
    switch (type) {
    case MD_SPAN_EM:
        style(r, "\033[3m");
        break;
    case MD_SPAN_STRONG:
        style(r, "\033[1m");
        break;
    case MD_SPAN_CODE:
        style(r, "\033[36m");
        if (!r->color)
            emit(r, "`", 1, 0);
        break;
    case MD_SPAN_DEL:
        style(r, "\033[9m");
        if (!r->color)
            emit(r, "~~", 2, 0);
        break;
    case MD_SPAN_A: {
        MD_SPAN_A_DETAIL *d = detail;
        r->href.len = 0;
        put(&r->href, d->href.text, d->href.size);
        r->linktext.len = 0;
        r->link_depth++;
        style(r, "\033[4;34m");
        break;
    }
    default:
        break;
    }
    return 0;
}

static int leave_span(MD_SPANTYPE type, void *detail, void *ud)
{
    render *r = ud;
    (void)detail;
    switch (type) {
    case MD_SPAN_CODE:
        if (!r->color)
            emit(r, "`", 1, 0);
        style(r, "\033[0m");
        break;
    case MD_SPAN_DEL:
        if (!r->color)
            emit(r, "~~", 2, 0);
        style(r, "\033[0m");
        break;
    case MD_SPAN_EM:
    case MD_SPAN_STRONG:
        style(r, "\033[0m");
        break;
    case MD_SPAN_A: {
        style(r, "\033[0m");
        r->link_depth--;
        /* the address after the text, unless the text is the address */
        if (r->link_depth == 0 && r->href.len > 0 &&
            !(r->href.len == r->linktext.len &&
              memcmp(r->href.p, r->linktext.p, r->href.len) == 0)) {
            emit(r, " (", 2, 0);
            emit(r, r->href.p, r->href.len, 0);
            emit(r, ")", 1, 0);
        }
        break;
    }
    default:
        break;
    }
    return 0;
}

static int text(MD_TEXTTYPE type, const MD_CHAR *s, MD_SIZE n, void *ud)
{
    render *r = ud;
    /* md4c (Debian's 0.4.8) was seen by fuzz_markdown handing a span that
     * started in its input and reached past the end: only the input's own
     * bytes go out (spans elsewhere are md4c's own strings, such as a code
     * block's line breaks) */
    if (s >= r->src && s <= r->src + r->srclen && (size_t)n > r->srclen - (size_t)(s - r->src))
        n = (MD_SIZE)(r->srclen - (size_t)(s - r->src));
    if (r->in_code) {
        put(&r->code, s, n);
        return 0;
    }
    switch (type) {
    case MD_TEXT_BR:
    case MD_TEXT_SOFTBR:
        if (r->in_cell)
            emit(r, " ", 1, 0);
        else
            emit(r, "\n", 1, 0);
        break;
    case MD_TEXT_NULLCHAR:
        emit(r, "\xef\xbf\xbd", 3, 0);
        break;
    case MD_TEXT_ENTITY: {
        static const struct {
            const char *name, *utf8;
        } ents[] = {{"&amp;", "&"},   {"&lt;", "<"},    {"&gt;", ">"},
                    {"&quot;", "\""}, {"&apos;", "'"},  {"&nbsp;", " "},
                    {"&copy;", "©"},  {"&mdash;", "—"}, {"&ndash;", "–"}};
        for (size_t k = 0; k < sizeof ents / sizeof ents[0]; k++)
            if (strlen(ents[k].name) == n && memcmp(ents[k].name, s, n) == 0) {
                emit(r, ents[k].utf8, strlen(ents[k].utf8), 0);
                return 0;
            }
        emit(r, s, n, 0);
        break;
    }
    default:
        emit(r, s, n, 0);
        break;
    }
    return 0;
}

char *chat_md_render(const char *md, size_t len, int color)
{
    render r;
    memset(&r, 0, sizeof r);
    r.color = color;
    r.bol = 1;
    MD_PARSER p;
    memset(&p, 0, sizeof p);
    p.flags = MD_DIALECT_GITHUB | MD_FLAG_NOHTML;
    p.enter_block = enter_block;
    p.leave_block = leave_block;
    p.enter_span = enter_span;
    p.leave_span = leave_span;
    p.text = text;
    /* a copy with zero bytes after it: a read past the end by md4c lands in
     * them, not past the caller's buffer */
    enum { PAD = 64 };
    char *src = malloc(len + PAD);
    if (src == NULL)
        return NULL;
    memcpy(src, md, len);
    memset(src + len, 0, PAD);
    r.src = src;
    r.srclen = len;
    int rc = md_parse(src, (MD_SIZE)len, &p, &r);
    free(src);
    for (size_t i = 0; i < r.ncells; i++) {
        free(r.cells[i].styled.p);
        free(r.cells[i].plain.p);
    }
    free(r.cells);
    free(r.code.p);
    free(r.href.p);
    free(r.linktext.p);
    if (rc != 0) {
        free(r.out.p);
        return NULL;
    }
    if (r.out.p == NULL)
        return calloc(1, 1);
    return r.out.p;
}

/* ---- streaming ---------------------------------------------------------- */

/* Where the text can be cut: after the last blank line that is not inside a
 * fenced code block (0 when none). */
static size_t cut_point(const char *s, size_t n)
{
    size_t cut = 0;
    int fenced = 0;
    char fence = 0;
    for (size_t i = 0; i < n;) {
        const char *nl = memchr(s + i, '\n', n - i);
        if (nl == NULL)
            break; /* a line not finished yet */
        size_t k = (size_t)(nl - (s + i));
        const char *line = s + i;
        size_t lead = 0;
        while (lead < k && lead < 3 && line[lead] == ' ')
            lead++;
        if (k - lead >= 3 && (line[lead] == '`' || line[lead] == '~') &&
            line[lead + 1] == line[lead] && line[lead + 2] == line[lead]) {
            if (!fenced) {
                fenced = 1;
                fence = line[lead];
            } else if (line[lead] == fence) {
                fenced = 0;
            }
        }
        int blank = 1;
        for (size_t j = 0; j < k; j++)
            blank &= line[j] == ' ' || line[j] == '\t' || line[j] == '\r';
        i += k + 1;
        if (blank && !fenced)
            cut = i;
    }
    return cut;
}

void chat_md_stream_feed(chat_md_stream *m, const char *text, size_t len, FILE *f)
{
    char *p = realloc(m->buf, m->len + len + 1);
    if (p == NULL)
        return;
    m->buf = p;
    memcpy(m->buf + m->len, text, len);
    m->len += len;
    m->buf[m->len] = '\0';
    size_t cut = cut_point(m->buf, m->len);
    if (cut == 0)
        return;
    char *out = chat_md_render(m->buf, cut, m->color);
    if (out != NULL) {
        if (m->blocks++ > 0)
            fputc('\n', f);
        /* the rendered piece ends with one newline; the blank line between
           pieces is written before the next */
        fputs(out, f);
        fflush(f);
    }
    free(out);
    memmove(m->buf, m->buf + cut, m->len - cut + 1);
    m->len -= cut;
}

int chat_md_stream_flush(chat_md_stream *m, FILE *f)
{
    int wrote = 0;
    size_t lead = 0;
    while (lead < m->len && (m->buf[lead] == '\n' || m->buf[lead] == ' '))
        lead++;
    if (m->len > lead) {
        char *out = chat_md_render(m->buf, m->len, m->color);
        if (out != NULL && out[0] != '\0') {
            if (m->blocks++ > 0)
                fputc('\n', f);
            fputs(out, f);
            fflush(f);
            wrote = 1;
        }
        free(out);
    }
    m->len = 0;
    if (m->buf != NULL)
        m->buf[0] = '\0';
    m->blocks = 0;
    return wrote;
}

void chat_md_stream_free(chat_md_stream *m)
{
    free(m->buf);
    m->buf = NULL;
    m->len = 0;
}
