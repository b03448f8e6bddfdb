/*
 * Renders a parsed script's command list as one line per simple command,
 * for the shell tests: assignments, argv words and redirections separated by
 * single spaces; a word holding a blank, a bracket or a byte outside
 * printable ASCII (or nothing) is shown as [..] with \n, \t, \xHH escapes; redirections
 * as [fd]op target (here-doc bodies after a `:`); then the flags in braces:
 * S in substitution, P piped in, B background, F in function, K keyword,
 * A assignment only, I stdin redirected, W when a redirection writes.
 */
#ifndef AGT_TEST_SHELL_RENDER_H
#define AGT_TEST_SHELL_RENDER_H

#include <stdio.h>
#include <string.h>

#include "core/core.h"
#include "shell/shell.h"

static void sr_word(agti_buf *b, const char *v, size_t n)
{
    int plain = n > 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)v[i];
        if (c <= ' ' || c >= 0x7f)
            plain = 0;
    }
    if (plain) {
        agti_buf_put(b, v, n);
        return;
    }
    agti_buf_putc(b, '[');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)v[i];
        if (c == '\n')
            agti_buf_puts(b, "\\n");
        else if (c == '\t')
            agti_buf_puts(b, "\\t");
        else if (c == '\\')
            agti_buf_puts(b, "\\\\");
        else if (c < ' ' || c >= 0x7f)
            agti_buf_printf(b, "\\x%02X", c);
        else
            agti_buf_putc(b, (char)c);
    }
    agti_buf_putc(b, ']');
}

static const char *const sr_ops[] = {"<",   ">",   ">>", ">|",  "<>", "<<",
                                     "<<-", "<<<", "&>", "&>>", ">&", "<&"};

static void sr_cmd(agti_buf *b, const agti_sh_cmd *c)
{
    int first = 1, writes = 0;
    for (size_t i = 0; i < c->nassigns; i++, first = 0) {
        if (!first)
            agti_buf_putc(b, ' ');
        sr_word(b, c->assigns[i].value, c->assigns[i].vlen);
    }
    for (size_t i = 0; i < c->argc; i++, first = 0) {
        if (!first)
            agti_buf_putc(b, ' ');
        sr_word(b, c->argv[i].value, c->argv[i].vlen);
    }
    for (size_t i = 0; i < c->nredirs; i++, first = 0) {
        const agti_sh_redir *r = &c->redirs[i];
        if (!first)
            agti_buf_putc(b, ' ');
        if (r->fd_var)
            agti_buf_puts(b, "{v}");
        else if (r->fd >= 0)
            agti_buf_printf(b, "%d", r->fd);
        agti_buf_puts(b, sr_ops[r->op]);
        sr_word(b, r->target.value, r->target.vlen);
        if (r->heredoc) {
            agti_buf_putc(b, ':');
            sr_word(b, r->heredoc, r->heredoc_len);
        }
        if (r->writes)
            writes = 1;
    }
    static const struct {
        unsigned f;
        char c;
    } fl[] = {{AGTI_SHC_IN_SUBST, 'S'},    {AGTI_SHC_PIPED_IN, 'P'}, {AGTI_SHC_BACKGROUND, 'B'},
              {AGTI_SHC_IN_FUNCTION, 'F'}, {AGTI_SHC_KEYWORD, 'K'},  {AGTI_SHC_ASSIGN_ONLY, 'A'},
              {AGTI_SHC_STDIN_REDIR, 'I'}};
    char f[16];
    size_t nf = 0;
    for (size_t i = 0; i < sizeof fl / sizeof fl[0]; i++)
        if (c->flags & fl[i].f)
            f[nf++] = fl[i].c;
    if (writes)
        f[nf++] = 'W';
    if (nf) {
        f[nf] = '\0';
        agti_buf_printf(b, " {%s}", f);
    }
}

/* The whole list, one command a line (no trailing newline); on a parse
 * error "ERROR <status> @<offset>: <message>". Caller frees. */
static char *sr_render(const char *src)
{
    agti_sh_script *s = NULL;
    agti_sh_error e;
    agti_buf b = AGTI_BUF_INIT;
    int rc = agti_sh_parse(src, strlen(src), &s, &e);
    if (rc != AGTI_SH_OK) {
        agti_buf_printf(&b, "ERROR %d @%zu: %s", rc, e.offset, e.message);
        return agti_buf_detach(&b);
    }
    for (size_t i = 0; i < agti_sh_ncmds(s); i++) {
        if (i)
            agti_buf_putc(&b, '\n');
        sr_cmd(&b, agti_sh_cmd_at(s, i));
    }
    agti_sh_free(s);
    return agti_buf_detach(&b);
}

#endif
