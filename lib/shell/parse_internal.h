/*
 * Internal state of the shell parser, shared by its files (parse.c: grammar,
 * word.c: words, quoting and expansions, heredoc reading). Not part of the
 * contract in shell.h.
 */
#ifndef AGT_LIB_SHELL_PARSE_INTERNAL_H
#define AGT_LIB_SHELL_PARSE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "core/core.h"
#include "shell/arena.h"
#include "shell/shell.h"

struct agti_sh_script {
    agti_sh_arena arena;
    agti_sh_node *root;
    agti_sh_cmd *cmds;
    size_t ncmds, capcmds;
    agti_sh_func *funcs;
    size_t nfuncs, capfuncs;
};

/* A here-document whose body is read after the next newline token. */
typedef struct sh_pending {
    agti_sh_redir *r;
    unsigned ctx; /* AGTI_SHC_* of the command it belongs to */
    int func;
} sh_pending;

/* Redirections of a compound command, applied at the end of the parse to
 * every simple command of its range (after here-doc bodies are read). */
typedef struct sh_inherit {
    size_t first, end; /* command range */
    agti_sh_redir *redirs;
    size_t nredirs;
} sh_inherit;

typedef struct sh_parser {
    const char *s; /* current text (the script, or an unescaped `...` body) */
    size_t end;    /* reading stops here (the text's length, or a here-doc body's end) */
    size_t pos;
    size_t base; /* added to positions to make offsets in the script */
    int depth;
    int in_cmdsubst; /* open $( ... ) levels in this text */
    bool failed;
    int status; /* of the first failure */
    agti_sh_error *err;
    agti_sh_script *sc;
    size_t budget;         /* arena bytes allowed */
    size_t lookahead_left; /* bytes the `((` look-ahead may still scan */
    unsigned ctx;          /* AGTI_SHC_* given to every command made now */
    int func;              /* innermost function being parsed, or -1 */
    sh_pending *pend;
    size_t npend, cappend, pend_floor;
    sh_inherit *inh;
    size_t ninh, capinh;
    /* Word values are built here, as a stack: a word inside a substitution
     * inside a word appends after the outer one's bytes and truncates back. */
    agti_buf scratch;
    /* The words and redirections of the simple commands being read, as a
     * stack (a substitution inside a word reads its commands above the
     * outer command's and pops them): a finished command copies its own
     * into the arena at their exact size. */
    agti_sh_word *wstack;
    size_t nwstack, capwstack;
    agti_sh_redir *rstack;
    size_t nrstack, caprstack;
    /* agti_shp_assign_prefix's answer for the word at ap_pos (parse_simple
     * asks before reading the word, the word reader again) */
    size_t ap_pos, ap_len;
    bool ap_known;
    /* The last reserved-word look-up (the grammar asks several times at
     * the same place). */
    const char *kw_s;
    size_t kw_pos, kw_end, kw_len;
    int kw;
} sh_parser;

/* ---- parse.c ---- */
void *agti_shp_alloc(sh_parser *p, size_t n);
/* Not zeroed (for bytes about to be overwritten). */
void *agti_shp_alloc_raw(sh_parser *p, size_t n);
bool agti_shp_grow(sh_parser *p, void **arr, size_t *cap, size_t n, size_t elem);
void agti_shp_fail(sh_parser *p, int status, size_t pos, const char *fmt, ...) AGTI_PRINTF(4, 5);
bool agti_shp_enter(sh_parser *p, size_t pos);
void agti_shp_leave(sh_parser *p);
/* Parses a command list up to `)`, a terminating reserved word, `;;` or the
 * end of the text; NULL on error. */
agti_sh_node *agti_shp_list(sh_parser *p);
/* Reads the bodies of the pending here-documents (at a newline token). */
bool agti_shp_read_heredocs(sh_parser *p);
void agti_shp_skip_blanks(sh_parser *p);

/* ---- word.c ---- */
#define SHW_MODE_COND 0x1u  /* inside [[ ]]: extglob patterns are words */
#define SHW_MODE_REGEX 0x2u /* the operand of =~: ( ) | and blanks in ( ) are word chars */

/* Metacharacters end an unquoted word: blank, newline, | & ; ( ) < > */
static inline bool agti_shp_is_meta(char c)
{
    switch (c) {
    case ' ':
    case '\t':
    case '\n':
    case '|':
    case '&':
    case ';':
    case '(':
    case ')':
    case '<':
    case '>':
        return true;
    default:
        return false;
    }
}
/* Reads one word at p->pos (which must not be a metacharacter). */
bool agti_shp_word(sh_parser *p, agti_sh_word *w, unsigned mode);
/* Length of an assignment prefix `NAME=`, `NAME+=`, `NAME[...]=` at p->pos,
 * 0 when the word there is not an assignment. */
size_t agti_shp_assign_prefix(const sh_parser *p);
/* After `((` (p->pos just past them): whether the construct closes with
 * `))` (arithmetic) rather than `) )` (nested subshells). The look-ahead
 * has a budget of a few times the input (nested `$((` would make it
 * quadratic); past it, `((` is taken as arithmetic, which at worst turns a
 * rare `$( (cmd) )` spelling into a syntax error. */
bool agti_shp_arith_ahead(sh_parser *p);
/* Reads an arithmetic expression up to and past `))`; *flags gets DYNAMIC
 * when it holds expansions. */
bool agti_shp_arith(sh_parser *p, size_t open_pos, unsigned *flags);
/* Scans an expanding here-document body [start, end) for substitutions. */
bool agti_shp_heredoc_body(sh_parser *p, size_t start, size_t end);
/* Copies the NUL-terminated bytes into the arena. */
char *agti_shp_strdup(sh_parser *p, const char *s, size_t n);

#endif
