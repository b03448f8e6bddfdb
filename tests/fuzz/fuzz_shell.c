/*
 * libFuzzer target for the shell parser: arbitrary bytes as a script (the
 * parser takes a length, so the input is used as is). Invariants: a failure
 * has a status in range, a message and an offset inside the input; a
 * success has every command, word, redirection, function and tree node
 * consistent (indices in range, values NUL-terminated at vlen, source spans
 * inside the input), and parsing again gives the same list.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shell/shell.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_word(const agti_sh_word *w, size_t size)
{
    if (!w->value || w->value[w->vlen] != '\0')
        abort();
    if (w->offset > size || w->length > size - w->offset)
        abort();
}

static void check_redir(const agti_sh_redir *r, size_t size)
{
    if (r->op < AGTI_SHR_IN || r->op > AGTI_SHR_DUP_IN)
        abort();
    check_word(&r->target, size);
    bool hd = r->op == AGTI_SHR_HEREDOC || r->op == AGTI_SHR_HEREDOC_TAB;
    if (hd != (r->heredoc != NULL))
        abort();
    if (r->heredoc && (r->heredoc[r->heredoc_len] != '\0' || r->heredoc_len > size))
        abort();
    if (hd && r->writes)
        abort();
}

static size_t check_node(const agti_sh_script *s, const agti_sh_node *n, size_t size, int depth)
{
    size_t count = 1;
    if (depth > 4 * AGTI_SH_MAX_DEPTH)
        abort();
    if (n->kind < AGTI_SHN_LIST || n->kind > AGTI_SHN_COPROC)
        abort();
    if (n->cmd >= 0 && (size_t)n->cmd >= agti_sh_ncmds(s))
        abort();
    if ((n->kind == AGTI_SHN_SIMPLE || n->kind == AGTI_SHN_COND || n->kind == AGTI_SHN_ARITH) &&
        n->cmd < 0)
        abort();
    if (n->kind == AGTI_SHN_FUNCTION &&
        (n->func < 0 || (size_t)n->func >= agti_sh_nfuncs(s) || n->nchildren != 1))
        abort();
    if ((n->kind == AGTI_SHN_AND || n->kind == AGTI_SHN_OR) && n->nchildren != 2)
        abort();
    if (n->kind == AGTI_SHN_LIST && n->nchildren && !n->sep)
        abort();
    for (size_t i = 0; i < n->nredirs; i++)
        check_redir(&n->redirs[i], size);
    for (size_t i = 0; i < n->nwords; i++)
        check_word(&n->words[i], size);
    for (size_t i = 0; i < n->nchildren; i++) {
        if (!n->children[i])
            abort();
        count += check_node(s, n->children[i], size, depth + 1);
    }
    return count;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    agti_sh_script *s = NULL;
    agti_sh_error e;
    int rc = agti_sh_parse(text, size, &s, &e);
    if (rc != AGTI_SH_OK) {
        if (s || rc < AGTI_SH_ESYNTAX || rc > AGTI_SH_ENOMEM || e.status != rc)
            abort();
        if (!memchr(e.message, '\0', sizeof e.message) || e.message[0] == '\0')
            abort();
        if (e.offset > size)
            abort();
        return 0;
    }
    size_t ncmds = agti_sh_ncmds(s);
    if (ncmds > AGTI_SH_MAX_COMMANDS)
        abort();
    for (size_t i = 0; i < ncmds; i++) {
        const agti_sh_cmd *c = agti_sh_cmd_at(s, i);
        if (c->offset > size || c->length > size - c->offset)
            abort();
        for (size_t j = 0; j < c->nassigns; j++)
            check_word(&c->assigns[j], size);
        for (size_t j = 0; j < c->argc; j++)
            check_word(&c->argv[j], size);
        for (size_t j = 0; j < c->nredirs; j++)
            check_redir(&c->redirs[j], size);
        if (((c->flags & AGTI_SHC_IN_FUNCTION) != 0) != (c->function >= 0))
            abort();
        if (c->function >= 0 && (size_t)c->function >= agti_sh_nfuncs(s))
            abort();
        if (((c->flags & AGTI_SHC_ASSIGN_ONLY) != 0) != (c->argc == 0))
            abort();
    }
    for (size_t i = 0; i < agti_sh_nfuncs(s); i++) {
        const agti_sh_func *f = agti_sh_func_at(s, i);
        if (!f->name || f->first_cmd > ncmds || f->ncmds > ncmds - f->first_cmd)
            abort();
    }
    const agti_sh_node *root = agti_sh_root(s);
    if (!root || root->kind != AGTI_SHN_LIST)
        abort();
    check_node(s, root, size, 0);
    agti_sh_script *again = NULL;
    if (agti_sh_parse(text, size, &again, NULL) != AGTI_SH_OK || agti_sh_ncmds(again) != ncmds)
        abort();
    agti_sh_free(again);
    agti_sh_free(s);
    return 0;
}
