/* The commands of a parsed script as they would run (shell.h, agti_sh_exec):
 * wrappers seen through to the command they run, `sh -c STRING`, `eval`,
 * `su -c`, `watch`, `env -S` and `trap` strings parsed again, functions
 * defined in the script expanded where they are called, and the reasons a
 * command cannot be decided statically. Knows nothing of tools or rules. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "shell/arena.h"
#include "shell/shell.h"

/* The execs' words, flags, stages and strings live in one arena, freed at
 * once with the analysis; a word of the analysed script itself is not
 * copied (the script outlives the analysis): only the words of strings
 * parsed again (sh -c, eval), whose scripts are freed as soon as they are
 * analysed, are copied in. */
#define AN_CHUNK_MIN (4u * 1024u)
#define AN_CHUNK_MAX (256u * 1024u)

struct agti_sh_analysis {
    agti_sh_exec *v;
    size_t n, cap;
    agti_sh_arena arena;
    bool env_code;  /* the script changes command look-up: every exec gets ENV_CODE */
    bool shell_env; /* it sets BASH_ENV or ENV (or a name only known when it runs): a
                     * shell it starts runs that file first */
};

/* A word flag that means the word's final text is not known statically. */
#define WORD_DYN (AGTI_SHW_DYNAMIC | AGTI_SHW_UNQUOTED_EXP | AGTI_SHW_GLOB | AGTI_SHW_BRACE)

/* inherited by the commands of a function call or of a string run by a
 * command that writes (the compound commands around a command need no
 * such flag: the parser copies their redirections onto every command
 * inside, flagged inherited, and marks every command of a pipeline's later
 * parts PIPED_IN, so cmd_writes and cmd_stdin see them) */
#define INH_WRITES 0x1u
#define INH_MORE 0x2u /* the string's commands get more arguments (parallel, xargs sh -c) */

typedef struct actx {
    struct agti_sh_analysis *a;
    const agti_sh_script *s;
    bool copy;                 /* s is freed before the analysis: copy its words into the arena */
    const agti_sh_cmd *origin; /* the written command at depth 0 (NULL: the command itself) */
    int depth;
    int parent;
    unsigned inherit;      /* INH_WRITES from a container or a function call's redirections */
    unsigned char *active; /* per function of s: being expanded (recursion guard) */
    unsigned char *called; /* per function of s: expanded at least once */
    int *ftab;             /* open-addressing table of function names -> index */
    size_t fcap;
    size_t *fcmds;  /* the commands of each function, grouped: function f's are */
    size_t *fstart; /* fcmds[fstart[f] .. fstart[f + 1]) */
    agti_sh_error *err;
} actx;

static int fail(actx *c, int status, const char *msg)
{
    if (c->err != NULL && c->err->status == AGTI_SH_OK) {
        c->err->status = status;
        c->err->offset = 0;
        snprintf(c->err->message, sizeof c->err->message, "%s", msg);
    }
    return status;
}

/* n bytes from the analysis' arena (not zeroed), NULL when out of memory. */
static void *an_alloc(struct agti_sh_analysis *a, size_t n)
{
    return agti_sh_arena_alloc(&a->arena, n);
}

static char *an_strdup(struct agti_sh_analysis *a, const char *s, size_t n)
{
    char *d = an_alloc(a, n + 1);
    if (d != NULL) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

/* ---- redirections ---------------------------------------------------- */

static bool all_digits(const char *s)
{
    if (*s == '\0')
        return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

/* A file name that writes nothing when a command's output goes there. */
static bool harmless_target(const char *t)
{
    if (strcmp(t, "/dev/null") == 0 || strcmp(t, "/dev/stdout") == 0 ||
        strcmp(t, "/dev/stderr") == 0)
        return true;
    return strncmp(t, "/dev/fd/", 8) == 0 && all_digits(t + 8);
}

static bool redir_writes(const agti_sh_redir *r)
{
    const agti_sh_word *t = &r->target;
    bool dyn = (t->flags & WORD_DYN) != 0 || (t->flags & AGTI_SHW_TILDE) != 0;
    switch (r->op) {
    case AGTI_SHR_OUT:
    case AGTI_SHR_APPEND:
    case AGTI_SHR_CLOBBER:
    case AGTI_SHR_RDWR:
    case AGTI_SHR_OUT_ERR:
    case AGTI_SHR_APPEND_ERR:
        return dyn || t->value == NULL || !harmless_target(t->value);
    case AGTI_SHR_DUP_OUT: {
        if (dyn || t->value == NULL)
            return true;
        const char *v = t->value;
        if (strcmp(v, "-") == 0 || all_digits(v))
            return false;
        size_t n = strlen(v);
        if (n > 1 && v[n - 1] == '-') { /* n>&m- moves a descriptor */
            char tmp[32];
            if (n - 1 < sizeof tmp) {
                memcpy(tmp, v, n - 1);
                tmp[n - 1] = '\0';
                if (all_digits(tmp))
                    return false;
            }
        }
        return !harmless_target(v); /* >&file is &>file */
    }
    default:
        return false;
    }
}

static bool redir_stdin(const agti_sh_redir *r)
{
    return (r->op == AGTI_SHR_IN || r->op == AGTI_SHR_HEREDOC || r->op == AGTI_SHR_HEREDOC_TAB ||
            r->op == AGTI_SHR_HERESTRING || r->op == AGTI_SHR_DUP_IN || r->op == AGTI_SHR_RDWR) &&
           (r->fd == -1 || r->fd == 0);
}

/* ---- emitting --------------------------------------------------------- */

/* Words being analysed: a command's words (in the script or the arena)
 * and their flags (the analysis' own copy, in the arena). */
typedef struct words {
    char **w;
    unsigned *f;
    size_t n;
} words;

static int words_alloc(actx *c, words *ws, size_t n)
{
    ws->w = an_alloc(c->a, (n ? n : 1) * sizeof *ws->w);
    ws->f = an_alloc(c->a, (n ? n : 1) * sizeof *ws->f);
    ws->n = n;
    return ws->w != NULL && ws->f != NULL ? AGTI_SH_OK : AGTI_SH_ENOMEM;
}

static int words_from(actx *c, words *ws, const agti_sh_word *src, size_t n)
{
    if (words_alloc(c, ws, n) != AGTI_SH_OK)
        return AGTI_SH_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const char *v = src[i].value ? src[i].value : "";
        if (!c->copy)
            ws->w[i] = (char *)(uintptr_t)v; /* read only: see agti_sh_exec */
        else if ((ws->w[i] = an_strdup(c->a, v, strlen(v))) == NULL)
            return AGTI_SH_ENOMEM;
        ws->f[i] = src[i].flags;
    }
    return AGTI_SH_OK;
}

/* w[from..to) as a new word list (the same strings, flags copied). */
static int words_slice(actx *c, words *out, const words *in, size_t from, size_t to)
{
    if (words_alloc(c, out, to - from) != AGTI_SH_OK)
        return AGTI_SH_ENOMEM;
    if (to > from) {
        memcpy(out->w, in->w + from, (to - from) * sizeof *out->w);
        memcpy(out->f, in->f + from, (to - from) * sizeof *out->f);
    }
    return AGTI_SH_OK;
}

static int push_exec(actx *c, words *ws, size_t *stages, size_t nstages, const char *path,
                     char *wrappers, unsigned flags, const agti_sh_cmd *cmd, size_t *idx)
{
    struct agti_sh_analysis *a = c->a;
    if (a->n >= AGTI_SH_MAX_COMMANDS) {
        return fail(c, AGTI_SH_ETOOMANY,
                    "the script runs more than 10000 simple commands (wrappers, functions and "
                    "strings run by sh -c or eval counted)");
    }
    if (agti_grow(&a->v, &a->cap, a->n, sizeof *a->v, 16) != AGT_OK)
        return fail(c, AGTI_SH_ENOMEM, "out of memory");
    agti_sh_exec *e = &a->v[a->n];
    memset(e, 0, sizeof *e);
    e->written = ws->w;
    e->writtenc = ws->n;
    e->wflags = ws->f;
    e->stages = stages;
    e->nstages = nstages;
    size_t last = nstages ? stages[nstages - 1] : 0;
    e->argv = ws->w + last;
    e->argc = ws->n - last;
    e->path = path;
    e->wrappers = wrappers;
    e->flags = flags;
    e->depth = c->depth;
    e->parent = c->parent;
    e->cmd = c->origin ? c->origin : cmd;
    memset(ws, 0, sizeof *ws);
    *idx = a->n++;
    return AGTI_SH_OK;
}

/* ---- variables that change what runs, code run by arithmetic ---------- */

static bool is_name_start_c(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_name_c(char c)
{
    return is_name_start_c(c) || (c >= '0' && c <= '9');
}

/* Whether setting the variable name[0..n) changes which program a command
 * name runs or what code a program loads or runs (AGTI_SHX_ENV_CODE). */
static bool env_code_name(const char *name, size_t n)
{
    static const char *const exact[] = {
        "PATH", "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND", "EXECIGNORE",
        "BASH_LOADABLES_PATH", "GCONV_PATH", "HOME", "XDG_CONFIG_HOME", "EDITOR", "VISUAL", "PAGER",
        "MANPAGER", "LESSOPEN", "LESSCLOSE", "SSH_ASKPASS", "SUDO_ASKPASS", "PYTHONPATH",
        "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE", "NODE_OPTIONS", "NODE_PATH", "PERL5OPT",
        "PERL5LIB", "PERLLIB", "RUBYOPT", "RUBYLIB", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS",
        "JDK_JAVA_OPTIONS", "CLASSPATH", "GOFLAGS", "MAKEFLAGS", "CC", "CXX", "CPP", "LD", "SHELL",
        /* options and start-up files of
         * programs whose options run code
         * (codeopts.c) */
        "LESS", "LESSKEY", "LESSKEYIN", "LESSKEY_CONTENT", "LESSEDIT", "MANOPT", "MAKEFILES",
        "TAR_OPTIONS", "RSYNC_RSH", "RIPGREP_CONFIG_PATH", "WGETRC", "CURL_HOME", "VIMINIT",
        "EXINIT", "MYVIMRC", "AWKPATH", "AWKLIBPATH", NULL};
    static const char *const prefix[] = {"LD_",         "DYLD_",       "GIT_",
                                         "BASH_FUNC_",  "RUSTC",       "CARGO_",
                                         "NPM_CONFIG_", "npm_config_", NULL};
    for (size_t i = 0; exact[i]; i++)
        if (strlen(exact[i]) == n && memcmp(exact[i], name, n) == 0)
            return true;
    for (size_t i = 0; prefix[i]; i++) {
        size_t m = strlen(prefix[i]);
        if (n >= m && memcmp(prefix[i], name, m) == 0)
            return true;
    }
    return false;
}

/* BASH_ENV and ENV name a file that a shell runs before its commands
 * (bash -c, sh -i): setting one makes a later shell a `source FILE`. */
static bool startup_env_name(const char *name, size_t n)
{
    return (n == 8 && strncmp(name, "BASH_ENV", 8) == 0) ||
           (n == 3 && strncmp(name, "ENV", 3) == 0);
}

/* The name a word assigns or names (NAME, NAME=v, NAME+=v, NAME[i]=v):
 * its length, 0 when the word does not start with a name. */
static size_t word_name(const char *w)
{
    if (!is_name_start_c(w[0]))
        return 0;
    size_t n = 1;
    while (is_name_c(w[n]))
        n++;
    return n;
}

/* Whether an arithmetic expression or a subscript t[0..n) reads a
 * variable: a name or an expansion (a number such as 16#ff or 0x1f is not
 * a name). */
static bool arith_reads(const char *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char ch = t[i];
        if (ch >= '0' && ch <= '9') {
            while (i + 1 < n && (is_name_c(t[i + 1]) || t[i + 1] == '#'))
                i++;
            continue;
        }
        if (ch == '$' && i + 1 < n && strchr("#?$!", t[i + 1]) != NULL) {
            i++; /* $# $? $$ $!: numbers */
            continue;
        }
        if (ch == '$' && i + 2 < n && t[i + 1] == '{' && t[i + 2] == '#') {
            size_t k = i + 3;
            while (k < n && is_name_c(t[k]))
                k++;
            if (k > i + 3 && k < n && t[k] == '}') { /* ${#name}: a length */
                i = k;
                continue;
            }
        }
        if (is_name_start_c(ch) || ch == '$' || ch == '`')
            return true;
    }
    return false;
}

static bool word_reads_code(const char *v);

/* Whether a word's value assigns a variable of env_code_name through an
 * expansion: ${LD_PRELOAD:=x}, ${PATH=.}. */
static bool word_assigns_env(const char *v)
{
    for (const char *p = v; (p = strstr(p, "${")) != NULL; p += 2) {
        size_t n = word_name(p + 2);
        const char *q = p + 2 + n;
        if (n > 0 && (q[0] == '=' || (q[0] == ':' && q[1] == '=')) && env_code_name(p + 2, n))
            return true;
    }
    return false;
}

/* Whether an expanding here-doc body evaluates a variable's value. */
static bool heredoc_reads_code(const agti_sh_redir *r)
{
    if (r->heredoc == NULL || !r->heredoc_expands)
        return false;
    char *body = agti_strndup(r->heredoc, r->heredoc_len);
    bool hit = body == NULL || word_reads_code(body); /* out of memory: fail closed */
    free(body);
    return hit;
}

/* The index of the bracket closing the one opened before v[i], or the end. */
static size_t close_of(const char *v, size_t i)
{
    int depth = 1;
    for (; v[i]; i++) {
        if (v[i] == '(' || v[i] == '[' || v[i] == '{')
            depth++;
        else if ((v[i] == ')' || v[i] == ']' || v[i] == '}') && --depth == 0)
            return i;
    }
    return i;
}

/* ${...} at v[i] (the '$'): whether it evaluates a variable's value. */
static bool param_reads_code(const char *v, size_t i)
{
    size_t j = i + 2;
    if (v[j] == '!') { /* ${!x}: indirection; ${!a[@]} ${!pre*}: names only */
        size_t k = j + 1 + word_name(v + j + 1);
        return !((v[k] == '*' || v[k] == '@') && v[k + 1] == '}') &&
               !(v[k] == '[' && (v[k + 1] == '@' || v[k + 1] == '*') && v[k + 2] == ']');
    }
    if (v[j] == '#' && v[j + 1] != '}')
        j++;
    j += word_name(v + j);
    if (v[j] == '[') {
        size_t k = close_of(v, j + 1);
        bool all = k == j + 2 && (v[j + 1] == '@' || v[j + 1] == '*');
        if (!all && arith_reads(v + j + 1, k - j - 1))
            return true;
        j = v[k] ? k + 1 : k;
    }
    if (v[j] == ':' && v[j + 1] != '\0' && strchr("-=?+", v[j + 1]) == NULL) {
        size_t k = close_of(v, j + 1);
        return arith_reads(v + j + 1, k - j - 1);
    }
    return v[j] == '@' && v[j + 1] == 'P';
}

/* Whether a word flagged AGTI_SHW_EVAL evaluates a variable's value as code
 * (its value keeps each expansion's source text). */
static bool word_reads_code(const char *v)
{
    for (size_t i = 0; v[i]; i++) {
        if (v[i] != '$')
            continue;
        if (v[i + 1] == '(' && v[i + 2] == '(') {
            size_t k = close_of(v, i + 3);
            if (arith_reads(v + i + 3, k - i - 3))
                return true;
        } else if (v[i + 1] == '[') {
            size_t k = close_of(v, i + 2);
            if (arith_reads(v + i + 2, k - i - 2))
                return true;
        } else if (v[i + 1] == '{' && param_reads_code(v, i)) {
            return true;
        }
    }
    return false;
}

/* A name with a subscript that reads a variable (a[i], a[$(cmd)]). */
static bool subscript_reads(const char *w)
{
    size_t n = word_name(w);
    if (n == 0 || w[n] != '[')
        return false;
    size_t k = close_of(w, n + 1);
    return arith_reads(w + n + 1, k - n - 1);
}

/* What the words of a command as it runs (ws[at..]) do to the environment
 * and whether they evaluate code: sets a->env_code, returns AGTI_SHX_ARITH
 * or 0. */
static unsigned scan_words(actx *c, const words *ws, size_t at)
{
    unsigned fl = 0;
    /* words before the command: wrappers and their NAME=value (env, sudo) */
    for (size_t i = 0; i < at; i++) {
        if (strncmp(ws->w[i], "BASH_FUNC_", 10) == 0 && strchr(ws->w[i], '=') != NULL) {
            fl |= AGTI_SHX_ENV_FUNC; /* a function bash imports: its body is not checked */
            c->a->env_code = true;
        }
        size_t n = word_name(ws->w[i]);
        if (n > 0 && (ws->w[i][n] == '=' || (ws->w[i][n] == '+' && ws->w[i][n + 1] == '=')) &&
            env_code_name(ws->w[i], n)) {
            c->a->env_code = true;
            c->a->shell_env |= startup_env_name(ws->w[i], n);
        }
    }
    for (size_t i = 0; i < ws->n; i++) {
        if ((ws->f[i] & AGTI_SHW_EVAL) && word_reads_code(ws->w[i]))
            fl |= AGTI_SHX_ARITH;
        if ((ws->f[i] & AGTI_SHW_DYNAMIC) && word_assigns_env(ws->w[i])) {
            c->a->env_code = true;
            c->a->shell_env = true;
        }
    }
    if (at >= ws->n)
        return fl;
    const char *cmd = ws->w[at];
    static const char *const setters[] = {"export", "declare", "typeset",   "local",   "readonly",
                                          "read",   "mapfile", "readarray", "getopts", "unset",
                                          "wait",   "printf",  NULL};
    bool setter = false;
    for (size_t k = 0; setters[k] && !setter; k++)
        setter = strcmp(cmd, setters[k]) == 0;
    bool decl = setter && (strcmp(cmd, "declare") == 0 || strcmp(cmd, "typeset") == 0 ||
                           strcmp(cmd, "local") == 0 || strcmp(cmd, "export") == 0 ||
                           strcmp(cmd, "readonly") == 0);
    bool printf_v = false;
    for (size_t i = at + 1; i < ws->n; i++) {
        const char *a = ws->w[i];
        bool dyn = (ws->f[i] & WORD_DYN) != 0;
        if (strcmp(cmd, "let") == 0 && (dyn || arith_reads(a, strlen(a))))
            fl |= AGTI_SHX_ARITH;
        if ((strcmp(cmd, "test") == 0 || strcmp(cmd, "[") == 0) && strcmp(a, "-v") == 0 &&
            i + 1 < ws->n && subscript_reads(ws->w[i + 1]))
            fl |= AGTI_SHX_ARITH;
        if (strcmp(cmd, "hash") == 0 && a[0] == '-' && strchr(a, 'p') != NULL)
            c->a->env_code = true;
        if (strcmp(cmd, "alias") == 0 || strcmp(cmd, "enable") == 0 ||
            (strcmp(cmd, "shopt") == 0 && strcmp(a, "expand_aliases") == 0))
            c->a->env_code = true;
        if (!setter)
            continue;
        if ((a[0] == '-' || a[0] == '+') && !dyn) {
            if (decl && strchr(a, 'i') != NULL)
                fl |= AGTI_SHX_ARITH; /* later assignments are arithmetic */
            if (decl && (strchr(a, 'n') != NULL || strchr(a, 'f') != NULL))
                c->a->env_code = true; /* a nameref, an exported function */
            if (strcmp(cmd, "printf") == 0 && strcmp(a, "-v") == 0)
                printf_v = true;
            continue;
        }
        if (strcmp(cmd, "printf") == 0 && !printf_v)
            break; /* printf FORMAT: no names */
        size_t n = word_name(a);
        if (dyn || (n > 0 && env_code_name(a, n)))
            c->a->env_code = true;
        if (dyn || (n > 0 && startup_env_name(a, n)))
            c->a->shell_env = true;
        if (!dyn && subscript_reads(a))
            fl |= AGTI_SHX_ARITH;
        if (strcmp(cmd, "printf") == 0)
            break; /* printf -v NAME FORMAT ... */
    }
    return fl;
}

/* The same for the words of a [[ ]] / (( )) command. */
static bool keyword_reads_code(const agti_sh_cmd *cmd)
{
    if (cmd->argc < 2 || cmd->argv[0].value == NULL)
        return false;
    const agti_sh_word *w = cmd->argv;
    if (strcmp(w[0].value, "((") == 0)
        return arith_reads(w[1].value, strlen(w[1].value));
    static const char *const ops[] = {"-eq", "-ne", "-lt", "-le", "-gt", "-ge", NULL};
    for (size_t i = 1; i + 1 < cmd->argc; i++) {
        const char *v = w[i].value ? w[i].value : "";
        if ((w[i].flags & AGTI_SHW_EVAL) && word_reads_code(v))
            return true;
        if (strcmp(v, "-v") == 0 && w[i + 1].value && subscript_reads(w[i + 1].value))
            return true;
        bool op = false;
        for (size_t k = 0; ops[k] && !op; k++)
            op = strcmp(v, ops[k]) == 0;
        if (op && ((w[i - 1].value && arith_reads(w[i - 1].value, strlen(w[i - 1].value))) ||
                   (w[i + 1].value && arith_reads(w[i + 1].value, strlen(w[i + 1].value)))))
            return true;
    }
    return false;
}

/* What the NAME=value words before a command do (ENV_CODE, ARITH). */
static unsigned scan_assigns(actx *c, const agti_sh_cmd *cmd)
{
    unsigned fl = 0;
    for (size_t i = 0; i < cmd->nassigns; i++) {
        const char *a = cmd->assigns[i].value ? cmd->assigns[i].value : "";
        size_t n = word_name(a);
        if (n > 0 && env_code_name(a, n))
            c->a->env_code = true;
        if (n > 0 && startup_env_name(a, n))
            c->a->shell_env = true;
        if (subscript_reads(a) || ((cmd->assigns[i].flags & AGTI_SHW_EVAL) && word_reads_code(a)))
            fl |= AGTI_SHX_ARITH;
        if (word_assigns_env(a)) {
            c->a->env_code = true;
            c->a->shell_env = true;
        }
    }
    for (size_t i = 0; i < cmd->nredirs; i++) {
        const agti_sh_redir *r = &cmd->redirs[i];
        if (((r->target.flags & AGTI_SHW_EVAL) && r->target.value &&
             word_reads_code(r->target.value)) ||
            heredoc_reads_code(r))
            fl |= AGTI_SHX_ARITH;
        if (r->target.value && word_assigns_env(r->target.value))
            c->a->env_code = true;
    }
    return fl;
}

/* ---- wrappers ----------------------------------------------------------- */

enum { W_RUNS, W_SELF, W_UNKNOWN };

#define WK_ASSIGNS 0x01u /* NAME=value words before the command */
#define WK_NUMOPT 0x02u  /* -N is an option (nice -5) */
#define WK_ENV 0x04u     /* env: "-" is -i, -S STRING splits a command line */
#define WK_XARGS 0x08u   /* arguments come from stdin; -I/-i/--replace name a placeholder */
#define WK_WATCH 0x10u   /* the command line is joined and run by sh -c, unless -x */

typedef struct wspec {
    const char *name;
    const char *s0;    /* short options without an argument */
    const char *s1;    /* short options taking an argument */
    const char *sopt;  /* short options with an optional attached argument */
    const char *stop;  /* short options after which it runs no command */
    const char *l0;    /* long options without an argument ("|a|b|"); --a=v is accepted */
    const char *l1;    /* long options taking an argument */
    const char *lstop; /* long options after which it runs no command */
    int operands;      /* operands before the command */
    unsigned kind;
} wspec;

static const wspec wrappers[] = {
    {"builtin", "", "", "", "", "||", "||", "||", 0, 0},
    {"busybox", "", "", "", "", "||", "||", "||", 0, 0},
    {"chroot", "", "", "", "", "|skip-chdir|", "|userspec|groups|", "|help|version|", 1, 0},
    {"chrt", "abdfiorRv", "TPD", "", "pm",
     "|all-tasks|batch|deadline|fifo|idle|other|rr|reset-on-fork|verbose|",
     "|sched-runtime|sched-period|sched-deadline|", "|pid|max|help|version|", 1, 0},
    {"command", "p", "", "", "vV", "||", "||", "||", 0, 0},
    {"doas", "ns", "u", "", "LC", "||", "||", "||", 0, 0},
    {"env", "i0v", "uCS", "", "",
     "|ignore-environment|null|debug|default-signal|ignore-signal|block-signal|list-signal-"
     "handling|",
     "|unset|chdir|split-string|", "|help|version|", 0, WK_ASSIGNS | WK_ENV},
    {"exec", "cl", "a", "", "", "||", "||", "||", 0, 0},
    {"ionice", "t", "cn", "", "pPu", "|ignore|", "|class|classdata|", "|pid|pgid|uid|help|version|",
     0, 0},
    {"nice", "", "n", "", "", "||", "|adjustment|", "|help|version|", 0, WK_NUMOPT},
    {"noglob", "", "", "", "", "||", "||", "||", 0, 0}, /* zsh precommand modifier */
    {"nohup", "", "", "", "", "||", "||", "|help|version|", 0, 0},
    {"setsid", "cfw", "", "", "", "|ctty|fork|wait|", "||", "|help|version|", 0, 0},
    {"stdbuf", "", "ioe", "", "", "||", "|input|output|error|", "|help|version|", 0, 0},
    {"sudo", "AbEHknPSsi", "CDghpRrtTUu", "", "elvKV",
     "|askpass|background|preserve-env|set-home|login|non-interactive|preserve-groups|stdin|shell|"
     "reset-timestamp|bell|",
     "|close-from|chdir|group|host|prompt|chroot|role|type|command-timeout|other-user|user|",
     "|edit|list|validate|remove-timestamp|version|help|", 0, WK_ASSIGNS},
    {"taskset", "ac", "", "", "p", "|all-tasks|cpu-list|", "||", "|pid|help|version|", 1, 0},
    {"time", "pqva", "fo", "", "", "|append|verbose|portability|quiet|", "|format|output|",
     "|help|version|", 0, 0},
    {"timeout", "v", "sk", "", "", "|preserve-status|foreground|verbose|", "|signal|kill-after|",
     "|help|version|", 1, 0},
    {"watch", "bcCdegptwrx", "nq", "", "",
     "|beep|color|no-color|differences|errexit|chgexit|precise|no-title|no-wrap|exec|no-rerun|",
     "|interval|equexit|", "|help|version|", 0, WK_WATCH},
    {"xargs", "0rtpxo", "adEILnPs", "iel", "",
     "|null|no-run-if-empty|verbose|interactive|exit|open-tty|replace|eof|",
     "|arg-file|delimiter|max-args|max-lines|max-procs|max-chars|process-slot-var|",
     "|show-limits|help|version|", 0, WK_XARGS},
};

/* strcmp's order; most probes differ in the first byte, decided here
 * without the call (a 100 KB script asks for every command word). */
static int cmp_str(const char *a, const char *b)
{
    if (a[0] != b[0])
        return (unsigned char)a[0] < (unsigned char)b[0] ? -1 : 1;
    return a[0] == '\0' ? 0 : strcmp(a + 1, b + 1);
}

static int cmp_wspec(const void *key, const void *elem)
{
    return cmp_str(key, ((const wspec *)elem)->name);
}

/* The table is in name order: a binary search. */
static const wspec *find_wrapper(const char *name)
{
    return bsearch(name, wrappers, sizeof wrappers / sizeof wrappers[0], sizeof wrappers[0],
                   cmp_wspec);
}

/* Whether "|name|" occurs in list for the first n bytes of name. */
static bool in_list(const char *list, const char *name, size_t n)
{
    return agti_sh_opt_listed(list, name, n);
}

static bool is_assignment(const char *w)
{
    if (!((*w >= 'a' && *w <= 'z') || (*w >= 'A' && *w <= 'Z') || *w == '_'))
        return false;
    for (w++; *w && *w != '='; w++)
        if (!((*w >= 'a' && *w <= 'z') || (*w >= 'A' && *w <= 'Z') || (*w >= '0' && *w <= '9') ||
              *w == '_'))
            return false;
    return *w == '=';
}

typedef struct wres {
    size_t next;       /* the command's first word */
    const char *split; /* env -S: the string */
    bool split_dyn;
    bool xexec;       /* watch -x */
    const char *repl; /* xargs -I: the placeholder */
} wres;

static int wrap_parse(const wspec *sp, const words *ws, size_t pos, wres *r)
{
    size_t j = pos + 1, n = ws->n;
    memset(r, 0, sizeof *r);
    while (j < n) {
        const char *a = ws->w[j];
        if (ws->f[j] & WORD_DYN)
            return W_UNKNOWN; /* an option or the command: cannot tell */
        if (a[0] != '-')
            break;
        if (a[1] == '\0') {
            if (sp->kind & WK_ENV) {
                j++;
                continue;
            }
            break;
        }
        if (strcmp(a, "--") == 0) {
            j++;
            break;
        }
        if (a[1] == '-') {
            const char *nm = a + 2;
            size_t nl = strcspn(nm, "=");
            bool eq = nm[nl] == '=';
            if (in_list(sp->lstop, nm, nl))
                return W_SELF;
            if (in_list(sp->l1, nm, nl)) {
                const char *val = eq ? nm + nl + 1 : (j + 1 < n ? ws->w[j + 1] : NULL);
                if ((sp->kind & WK_ENV) && nl == 12 && memcmp(nm, "split-string", 12) == 0) {
                    r->split = val;
                    r->split_dyn = !eq && j + 1 < n && (ws->f[j + 1] & WORD_DYN);
                    j += eq ? 1 : 2;
                    break; /* the string holds the command */
                }
                j += eq ? 1 : 2;
                continue;
            }
            if (in_list(sp->l0, nm, nl)) {
                if ((sp->kind & WK_WATCH) && nl == 4 && memcmp(nm, "exec", 4) == 0)
                    r->xexec = true;
                if ((sp->kind & WK_XARGS) && nl == 7 && memcmp(nm, "replace", 7) == 0)
                    r->repl = eq ? nm + nl + 1 : "{}";
                j++;
                continue;
            }
            return W_UNKNOWN;
        }
        if ((sp->kind & WK_NUMOPT) && a[1] >= '0' && a[1] <= '9') {
            j++;
            continue;
        }
        size_t step = 1;
        for (size_t k = 1; a[k]; k++) {
            char ch = a[k];
            if (strchr(sp->stop, ch) != NULL)
                return W_SELF;
            if (strchr(sp->s1, ch) != NULL) {
                const char *val = a[k + 1] ? a + k + 1 : (j + 1 < n ? ws->w[j + 1] : NULL);
                if (a[k + 1] == '\0')
                    step = 2;
                if ((sp->kind & WK_ENV) && ch == 'S') {
                    r->split = val;
                    r->split_dyn = a[k + 1] == '\0' && j + 1 < n && (ws->f[j + 1] & WORD_DYN);
                    r->next = j + step;
                    goto split_done;
                }
                if ((sp->kind & WK_XARGS) && ch == 'I')
                    r->repl = val;
                break;
            }
            if (strchr(sp->sopt, ch) != NULL) {
                if ((sp->kind & WK_XARGS) && ch == 'i')
                    r->repl = a[k + 1] ? a + k + 1 : "{}";
                break;
            }
            if (strchr(sp->s0, ch) != NULL) {
                if ((sp->kind & WK_WATCH) && ch == 'x')
                    r->xexec = true;
                continue;
            }
            return W_UNKNOWN;
        }
        j += step;
    }
    if (r->split != NULL) {
        r->next = j;
    split_done:
        return W_RUNS;
    }
    /* env takes every word with a '=' for NAME=VALUE (GNU env: also
     * "BASH_FUNC_f%%=() { ...; }", a function bash imports) */
    if (sp->kind & WK_ASSIGNS)
        while (j < n &&
               ((sp->kind & WK_ENV) ? strchr(ws->w[j], '=') != NULL : is_assignment(ws->w[j])))
            j++;
    for (int k = 0; k < sp->operands && j < n; k++, j++)
        if (ws->f[j] & (WORD_DYN & ~AGTI_SHW_DYNAMIC))
            return W_UNKNOWN; /* may split into several words */
    if (j >= n)
        return W_SELF;
    r->next = j;
    return W_RUNS;
}

/* ---- commands that run strings --------------------------------------- */

static bool name_is(const char *w, const char *const *names)
{
    for (; *names; names++)
        if (strcmp(w, *names) == 0)
            return true;
    return false;
}

static const char *const shells[] = {"sh",   "bash", "dash", "zsh",   "ksh",  "mksh", "ash",
                                     "lksh", "yash", "posh", "rbash", "fish", NULL};

static bool is_interpreter(const char *w)
{
    static const char *const names[] = {"perl", "ruby", "node",  "nodejs",
                                        "php",  "lua",  "tclsh", NULL};
    if (strncmp(w, "python", 6) == 0) {
        const char *v = w + 6;
        while ((*v >= '0' && *v <= '9') || *v == '.')
            v++;
        return *v == '\0';
    }
    return name_is(w, names);
}

static int analyze_script(actx *parent_ctx, const agti_sh_script *s, int parent, unsigned inherit);

/* Parses text again and analyses it as run by exec idx. A string that does
 * not parse makes idx undecidable; over the depth limit refuses. */
static int reparse(actx *c, size_t idx, const char *text, size_t len)
{
    if (c->depth + 1 > AGTI_SH_MAX_DEPTH)
        return fail(c, AGTI_SH_ETOODEEP,
                    "strings run by sh -c / eval nest more than 256 levels deep");
    agti_sh_script *sub = NULL;
    agti_sh_error perr;
    memset(&perr, 0, sizeof perr);
    int rc = agti_sh_parse(text, len, &sub, &perr);
    if (rc == AGTI_SH_ENOMEM)
        return fail(c, AGTI_SH_ENOMEM, "out of memory");
    if (rc != AGTI_SH_OK) {
        c->a->v[idx].flags |= AGTI_SHX_EVAL_DYNAMIC | (rc == AGTI_SH_ESYNTAX ? AGTI_SHX_SYNTAX : 0);
        return AGTI_SH_OK;
    }
    unsigned inherit = ((c->a->v[idx].flags & AGTI_SHX_WRITES) ? INH_WRITES : 0) |
                       ((c->a->v[idx].flags & AGTI_SHX_MORE_ARGS) ? INH_MORE : 0);
    const agti_sh_cmd *saved = c->origin;
    c->origin = c->a->v[idx].cmd;
    rc = analyze_script(c, sub, (int)idx, inherit);
    c->origin = saved;
    agti_sh_free(sub);
    return rc;
}

/* Joins ws[from..to) with sep (quoting each word for the shell when quote). */
static char *join_words(const words *ws, size_t from, size_t to, bool quote)
{
    agti_buf b = AGTI_BUF_INIT;
    for (size_t i = from; i < to; i++) {
        if (i > from)
            agti_buf_putc(&b, ' ');
        if (!quote) {
            agti_buf_puts(&b, ws->w[i]);
            continue;
        }
        agti_buf_putc(&b, '\'');
        for (const char *p = ws->w[i]; *p; p++) {
            if (*p == '\'')
                agti_buf_puts(&b, "'\\''");
            else
                agti_buf_putc(&b, *p);
        }
        agti_buf_putc(&b, '\'');
    }
    return agti_buf_detach(&b);
}

static bool any_dynamic(const words *ws, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        if (ws->f[i] & WORD_DYN)
            return true;
    return false;
}

/* What a command that runs a string will run: *text (malloc'd) or *dyn. */
typedef struct runner {
    bool is_runner;
    bool dyn;
    char *text;
    unsigned flags;        /* extra AGTI_SHX_* for the exec */
    bool shell_stdin_body; /* a shell reading stdin: a static here-doc is its script */
} runner;

/* sh/bash/... options; *cpos gets the index of the -c string (0: none),
 * *operand the first operand (0: none). */
static int shell_opts(const words *ws, size_t at, size_t *cpos, size_t *operand, bool *sflag,
                      bool *rcfile)
{
    static const char *const long0[] = {
        "--norc",      "--noprofile", "--login",      "--posix",        "--verbose",
        "--noediting", "--debugger",  "--restricted", "--dump-strings", "--dump-po-strings",
        "--wordexp",   "--protected", "--no-config",  "--private",      NULL};
    static const char *const long1[] = {"--rcfile", "--init-file", "--init-command", "--command",
                                        NULL};
    bool cflag = false;
    *cpos = *operand = 0;
    *sflag = false;
    *rcfile = false;
    size_t j = at + 1;
    while (j < ws->n) {
        const char *a = ws->w[j];
        if (ws->f[j] & WORD_DYN) {
            if (cflag)
                break; /* the string (or an option: either way not static) */
            return W_UNKNOWN;
        }
        if (strcmp(a, "--") == 0 || strcmp(a, "-") == 0) {
            j++;
            break;
        }
        if ((a[0] != '-' && a[0] != '+') || a[1] == '\0')
            break;
        if (a[0] == '-' && a[1] == '-') {
            if (name_is(a, long0) || strcmp(a, "--help") == 0 || strcmp(a, "--version") == 0) {
                j++;
                continue;
            }
            if (name_is(a, long1)) {
                if (strcmp(a, "--command") == 0) {
                    cflag = true; /* fish --command STRING */
                    j++;
                    continue;
                }
                /* --rcfile FILE, --init-file FILE: the shell runs the
                 * file's commands first, as `source FILE` (bash -i with
                 * either ran it even before `-c true`); --init-command
                 * STRING (fish) runs the string */
                *rcfile = true;
                j += 2;
                continue;
            }
            return W_UNKNOWN;
        }
        size_t step = 1;
        for (size_t k = 1; a[k]; k++) {
            char ch = a[k];
            if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')))
                return W_UNKNOWN;
            if (ch == 'c')
                cflag = true;
            else if (ch == 's')
                *sflag = true;
            else if (ch == 'o' || ch == 'O')
                step = 2;
        }
        j += step;
    }
    if (cflag) {
        *cpos = j < ws->n ? j : ws->n;
        return W_RUNS;
    }
    if (j < ws->n)
        *operand = j;
    return W_RUNS;
}

/* The static body a command reads on stdin from a here-doc/here-string. */
static const char *static_stdin(const agti_sh_cmd *cmd, size_t *len)
{
    if (cmd == NULL)
        return NULL;
    for (size_t i = cmd->nredirs; i-- > 0;) {
        const agti_sh_redir *r = &cmd->redirs[i];
        if (!redir_stdin(r))
            continue;
        if ((r->op == AGTI_SHR_HEREDOC || r->op == AGTI_SHR_HEREDOC_TAB) && r->heredoc != NULL &&
            !r->heredoc_expands) {
            *len = r->heredoc_len;
            return r->heredoc;
        }
        if (r->op == AGTI_SHR_HERESTRING && !(r->target.flags & WORD_DYN) && r->target.value) {
            *len = r->target.vlen;
            return r->target.value;
        }
        return NULL; /* the last stdin redirection wins */
    }
    return NULL;
}

/* GNU parallel: its options, then the command words up to ":::", "::::",
 * ":::+" or "::::+", joined and run by a shell with the input's arguments
 * appended (or put in for {}). Without command words the arguments are
 * the commands. */
static int parallel_runner(const words *ws, size_t at, runner *r)
{
    static const char *const with_arg[] = {"-a",
                                           "--arg-file",
                                           "-d",
                                           "--delimiter",
                                           "-E",
                                           "--eof",
                                           "-I",
                                           "-j",
                                           "--jobs",
                                           "-P",
                                           "--max-procs",
                                           "-n",
                                           "--max-args",
                                           "-N",
                                           "-L",
                                           "--max-lines",
                                           "-S",
                                           "--sshlogin",
                                           "-C",
                                           "--colsep",
                                           "--results",
                                           "--joblog",
                                           "--tmpdir",
                                           "--workdir",
                                           "--wd",
                                           "--timeout",
                                           "--delay",
                                           "--retries",
                                           "--halt",
                                           "--env",
                                           "--tagstring",
                                           "--load",
                                           "--memfree",
                                           "--nice",
                                           "-s",
                                           "--max-chars",
                                           "--block",
                                           "--recstart",
                                           "--recend",
                                           "--header",
                                           "--sshloginfile",
                                           "--slf",
                                           NULL};
    static const char *const no_arg[] = {"-k",
                                         "--keep-order",
                                         "-q",
                                         "--quote",
                                         "-u",
                                         "--ungroup",
                                         "--group",
                                         "--line-buffer",
                                         "--lb",
                                         "-v",
                                         "--verbose",
                                         "--dry-run",
                                         "-0",
                                         "--null",
                                         "-r",
                                         "--no-run-if-empty",
                                         "-X",
                                         "-m",
                                         "--xargs",
                                         "--tag",
                                         "--progress",
                                         "--bar",
                                         "--eta",
                                         "--pipe",
                                         "--pipepart",
                                         "-t",
                                         "--files",
                                         "--will-cite",
                                         "--no-notice",
                                         "--shuf",
                                         "--halt-on-error",
                                         "--keep",
                                         "--silent",
                                         "--plain",
                                         NULL};
    size_t n = ws->n, j = at + 1;
    r->is_runner = true;
    r->flags |= AGTI_SHX_CONTAINER | AGTI_SHX_MORE_ARGS;
    while (j < n && ws->w[j][0] == '-' && strcmp(ws->w[j], "--") != 0) {
        const char *a = ws->w[j];
        if (ws->f[j] & WORD_DYN) {
            r->flags |= AGTI_SHX_WRAPPER_UNKNOWN;
            return AGTI_SH_OK;
        }
        size_t nl = strcspn(a, "=");
        bool hit = false;
        for (size_t k = 0; with_arg[k] && !hit; k++)
            if (strlen(with_arg[k]) == nl && strncmp(a, with_arg[k], nl) == 0) {
                j += a[nl] == '=' ? 1 : 2;
                hit = true;
            }
        for (size_t k = 0; no_arg[k] && !hit; k++)
            if (strcmp(a, no_arg[k]) == 0) {
                j++;
                hit = true;
            }
        if (!hit && a[1] != '-' && a[2] != '\0' && strchr("jPnNLdEIsCS", a[1]) != NULL) {
            j++; /* -j4 */
            hit = true;
        }
        if (!hit) {
            r->flags |= AGTI_SHX_WRAPPER_UNKNOWN;
            return AGTI_SH_OK;
        }
    }
    if (j < n && strcmp(ws->w[j], "--") == 0)
        j++;
    size_t end = j;
    while (end < n && strncmp(ws->w[end], ":::", 3) != 0)
        end++;
    if (end == j || any_dynamic(ws, j, end)) {
        r->dyn = true; /* the commands come from the arguments, or are not static */
        return AGTI_SH_OK;
    }
    r->text = join_words(ws, j, end, false);
    return r->text ? AGTI_SH_OK : AGTI_SH_ENOMEM;
}

static int cmp_name(const void *key, const void *elem)
{
    return cmp_str(key, *(const char *const *)elem);
}

/* Every name find_runner looks at (but python*), in strcmp order. */
static const char *const runner_names[] = {
    ".",    "ash",   "bash",   "dash",    "eval",      "fc",   "fish",    "git",
    "ksh",  "lksh",  "lua",    "mapfile", "mksh",      "node", "nodejs",  "parallel",
    "perl", "php",   "posh",   "rbash",   "readarray", "ruby", "runuser", "script",
    "sh",   "shopt", "source", "su",      "tclsh",     "trap", "yash",    "zsh"};

/* Builtins and programs that run a string of shell code that the command
 * gives in a way not read here: fail closed (EVAL_DYNAMIC). mapfile and
 * readarray -C CALLBACK run it for every chunk; fc reruns (and edits)
 * history entries, which `history -s` writes; `shopt -s expand_aliases`
 * makes alias values code (alias ls='rm -rf d', then ls); git -c
 * alias.NAME=!CMD runs CMD through a shell. (Attacker report: each ran rm
 * past a deny rule in yolo mode.) */
static bool runs_code_string(const words *ws, size_t at, const char *name)
{
    size_t n = ws->n;
    if (strcmp(name, "fc") == 0)
        return true;
    if (strcmp(name, "mapfile") == 0 || strcmp(name, "readarray") == 0) {
        for (size_t j = at + 1; j < n; j++) {
            const char *a = ws->w[j];
            if ((ws->f[j] & WORD_DYN) || (a[0] == '-' && strchr(a, 'C') != NULL))
                return true;
        }
        return false;
    }
    if (strcmp(name, "shopt") == 0) {
        bool set = false, aliases = false;
        for (size_t j = at + 1; j < n; j++) {
            const char *a = ws->w[j];
            if (ws->f[j] & WORD_DYN)
                return true;
            if (a[0] == '-' && strchr(a, 's') != NULL)
                set = true;
            if (strcmp(a, "expand_aliases") == 0)
                aliases = true;
        }
        return set && aliases;
    }
    if (strcmp(name, "git") == 0) {
        for (size_t j = at + 1; j + 1 < n; j++) {
            const char *a = ws->w[j];
            if (a[0] != '-')
                break; /* the subcommand: global options come before it */
            const char *kv = NULL;
            if (strcmp(a, "-c") == 0)
                kv = ws->w[++j];
            else if (strncmp(a, "-c", 2) == 0)
                kv = a + 2;
            if (kv != NULL && strncasecmp(kv, "alias.", 6) == 0) {
                const char *eq = strchr(kv, '=');
                if (eq == NULL || eq[1] == '!' || (ws->f[j] & WORD_DYN))
                    return true;
            }
        }
    }
    return false;
}

static int find_runner(const words *ws, size_t at, bool stdin_fed, runner *r)
{
    memset(r, 0, sizeof *r);
    const char *name = ws->w[at];
    size_t n = ws->n;
    if (strncmp(name, "python", 6) != 0 &&
        bsearch(name, runner_names, sizeof runner_names / sizeof runner_names[0],
                sizeof runner_names[0], cmp_name) == NULL)
        return AGTI_SH_OK; /* the common case: an ordinary command */
    if (name_is(name, shells)) {
        size_t cpos, operand;
        bool sflag, rcfile;
        if (shell_opts(ws, at, &cpos, &operand, &sflag, &rcfile) == W_UNKNOWN) {
            r->flags |= AGTI_SHX_WRAPPER_UNKNOWN;
            return AGTI_SH_OK;
        }
        if (rcfile)
            r->flags |= AGTI_SHX_SOURCE;
        if (cpos != 0) {
            r->is_runner = true;
            r->flags |= AGTI_SHX_CONTAINER;
            if (cpos >= n) {
                r->text = agti_strdup(""); /* bash -c with no string: an error, runs nothing */
            } else if (ws->f[cpos] & WORD_DYN) {
                r->dyn = true;
            } else {
                r->text = agti_strdup(ws->w[cpos]);
            }
            if (!r->dyn && r->text == NULL)
                return AGTI_SH_ENOMEM;
            if (any_dynamic(ws, cpos + 1 < n ? cpos + 1 : n, n))
                r->flags |= AGTI_SHX_DYNAMIC_ARGS;
        } else if (operand != 0 && !sflag) {
            r->flags |= AGTI_SHX_SHELL_FILE;
        } else {
            r->flags |= AGTI_SHX_SHELL_STDIN;
            r->shell_stdin_body = true;
        }
        return AGTI_SH_OK;
    }
    if (strcmp(name, "parallel") == 0)
        return parallel_runner(ws, at, r);
    if (strcmp(name, "eval") == 0) {
        r->is_runner = true;
        r->flags |= AGTI_SHX_CONTAINER;
        size_t from = at + 1;
        if (from < n && strcmp(ws->w[from], "--") == 0)
            from++;
        if (any_dynamic(ws, from, n))
            r->dyn = true;
        else if ((r->text = join_words(ws, from, n, false)) == NULL)
            return AGTI_SH_ENOMEM;
        return AGTI_SH_OK;
    }
    if (strcmp(name, "trap") == 0) {
        size_t j = at + 1;
        while (j < n && ws->w[j][0] == '-' && strcmp(ws->w[j], "-") != 0) {
            if (strcmp(ws->w[j], "--") == 0) {
                j++;
                break;
            }
            if (strchr(ws->w[j], 'l') || strchr(ws->w[j], 'p'))
                return AGTI_SH_OK; /* lists or prints */
            j++;
        }
        if (j + 1 < n && strcmp(ws->w[j], "-") != 0) {
            r->is_runner = true;
            r->flags |= AGTI_SHX_CONTAINER;
            if (ws->f[j] & WORD_DYN)
                r->dyn = true;
            else if ((r->text = agti_strdup(ws->w[j])) == NULL)
                return AGTI_SH_ENOMEM;
        }
        return AGTI_SH_OK;
    }
    if (runs_code_string(ws, at, name)) {
        r->flags |= AGTI_SHX_EVAL_DYNAMIC;
        return AGTI_SH_OK;
    }
    if (strcmp(name, "git") == 0)
        return AGTI_SH_OK;
    if (strcmp(name, "su") == 0 || strcmp(name, "runuser") == 0 || strcmp(name, "script") == 0) {
        for (size_t j = at + 1; j < n; j++) {
            const char *a = ws->w[j];
            const char *val = NULL;
            bool dyn = false;
            if (strcmp(a, "-c") == 0 || strcmp(a, "--command") == 0 ||
                strcmp(a, "--session-command") == 0) {
                if (j + 1 < n) {
                    val = ws->w[j + 1];
                    dyn = (ws->f[j + 1] & WORD_DYN) != 0;
                }
            } else if (strncmp(a, "--command=", 10) == 0) {
                val = a + 10;
                dyn = (ws->f[j] & WORD_DYN) != 0;
            } else if (a[0] == '-' && a[1] != '-' && strchr(a, 'c') != NULL) {
                const char *cc = strchr(a, 'c');
                val = cc[1] ? cc + 1 : (j + 1 < n ? ws->w[j + 1] : NULL);
                dyn = (ws->f[j] & WORD_DYN) || (!cc[1] && j + 1 < n && (ws->f[j + 1] & WORD_DYN));
            } else if (ws->f[j] & WORD_DYN) {
                r->flags |= AGTI_SHX_WRAPPER_UNKNOWN;
            }
            if (val != NULL || dyn) {
                r->is_runner = true;
                r->flags |= AGTI_SHX_CONTAINER;
                if (dyn)
                    r->dyn = true;
                else if ((r->text = agti_strdup(val)) == NULL)
                    return AGTI_SH_ENOMEM;
                return AGTI_SH_OK;
            }
        }
        if (stdin_fed)
            r->flags |= AGTI_SHX_SHELL_STDIN;
        return AGTI_SH_OK;
    }
    if (strcmp(name, "source") == 0 || strcmp(name, ".") == 0) {
        r->flags |= AGTI_SHX_SOURCE;
        return AGTI_SH_OK;
    }
    if (is_interpreter(name) && stdin_fed) {
        bool script = false;
        for (size_t j = at + 1; j < n && !script; j++) {
            const char *a = ws->w[j];
            if (strcmp(a, "-") == 0)
                break;
            if (a[0] != '-' || strcmp(a, "-c") == 0 || strcmp(a, "-e") == 0 ||
                strcmp(a, "-E") == 0 || strcmp(a, "-m") == 0 || strcmp(a, "-r") == 0 ||
                strncmp(a, "--eval", 6) == 0)
                script = true;
        }
        if (!script)
            r->flags |= AGTI_SHX_SHELL_STDIN;
    }
    return AGTI_SH_OK;
}

/* ---- one command: wrappers, then what it runs --------------------------- */

static char *basename_of(char *w, const char **path)
{
    *path = NULL;
    char *slash = strrchr(w, '/');
    if (slash == NULL || slash[1] == '\0')
        return w;
    *path = w;
    return slash + 1;
}

static int emit_words(actx *c, words *ws, unsigned flags, bool stdin_fed, const agti_sh_cmd *cmd);

/* find ... -exec/-execdir/-ok/-okdir CMD ;|+ : each command, run by exec
 * idx; fd (fdfind) ... -x/--exec/-X/--exec-batch CMD [;]: the same, and fd
 * adds the path as the last argument when CMD has no placeholder ({}, {/},
 * {//}, {.}, {/.}), so its commands get more arguments. */
static int find_execs(actx *c, size_t idx, const agti_sh_cmd *cmd, bool stdin_fed)
{
    size_t n = c->a->v[idx].argc;
    bool fd = strcmp(c->a->v[idx].argv[0], "find") != 0;
    for (size_t i = 1; i < n; i++) {
        const agti_sh_exec *e = &c->a->v[idx];
        const char *a = e->argv[i];
        if (fd ? strcmp(a, "-x") != 0 && strcmp(a, "--exec") != 0 && strcmp(a, "-X") != 0 &&
                     strcmp(a, "--exec-batch") != 0
               : strcmp(a, "-exec") != 0 && strcmp(a, "-execdir") != 0 && strcmp(a, "-ok") != 0 &&
                     strcmp(a, "-okdir") != 0)
            continue;
        size_t off = (size_t)(e->argv - e->written);
        size_t k = i + 1;
        while (k < n && strcmp(e->argv[k], ";") != 0 && (fd || strcmp(e->argv[k], "+") != 0))
            k++;
        unsigned more = fd || (k < n && strcmp(e->argv[k], "+") == 0) ? AGTI_SHX_MORE_ARGS : 0;
        if (k > i + 1) {
            words src = {e->written, (unsigned *)e->wflags, e->writtenc};
            words sub;
            if (words_slice(c, &sub, &src, off + i + 1, off + k) != AGTI_SH_OK)
                return fail(c, AGTI_SH_ENOMEM, "out of memory");
            for (size_t w = 0; w < sub.n; w++)
                if (strstr(sub.w[w], "{}") != NULL)
                    sub.f[w] |= AGTI_SHW_DYNAMIC; /* the file name found */
            int saved = c->parent;
            c->parent = (int)idx;
            unsigned inh = (c->a->v[idx].flags & AGTI_SHX_WRITES) | more;
            int rc = emit_words(c, &sub, inh, stdin_fed, NULL);
            c->parent = saved;
            if (rc != AGTI_SH_OK)
                return rc;
            (void)cmd;
        }
        i = k;
    }
    return AGTI_SH_OK;
}

/* Sees ws (taken) through its wrappers and emits the exec, then what it
 * runs. flags: AGTI_SHX_* it starts with; cmd: the command whose
 * redirections feed it (NULL for a command run by find -exec). */
static int emit_words(actx *c, words *ws, unsigned flags, bool stdin_fed, const agti_sh_cmd *cmd)
{
    size_t *stages = an_alloc(c->a, (ws->n + 1) * sizeof *stages);
    agti_buf wrapped = AGTI_BUF_INIT;
    const char *path = NULL;
    if (stages == NULL)
        return fail(c, AGTI_SH_ENOMEM, "out of memory");
    size_t nst = 0, pos = 0;
    wres wr;
    const wspec *last = NULL;
    const char *split = NULL;
    bool split_dyn = false, watch_join = false;
    size_t split_at = 0;
    while (pos < ws->n) {
        stages[nst++] = pos;
        path = NULL;
        if (ws->f[pos] & WORD_DYN) {
            flags |= AGTI_SHX_DYNAMIC_NAME;
            break;
        }
        ws->w[pos] = basename_of(ws->w[pos], &path);
        const wspec *sp = find_wrapper(ws->w[pos]);
        if (sp == NULL)
            break;
        int k = wrap_parse(sp, ws, pos, &wr);
        if (k == W_UNKNOWN) {
            flags |= AGTI_SHX_WRAPPER_UNKNOWN;
            break;
        }
        if (k == W_SELF)
            break;
        last = sp;
        if ((sp->kind & WK_ENV) && wr.split != NULL) {
            split = wr.split;
            split_dyn = wr.split_dyn;
            split_at = wr.next;
            break;
        }
        if ((sp->kind & WK_WATCH) && !wr.xexec) {
            watch_join = true;
            split_at = wr.next;
            break;
        }
        if (wrapped.len)
            agti_buf_putc(&wrapped, ' ');
        agti_buf_puts(&wrapped, sp->name);
        if (sp->kind & WK_XARGS) {
            flags |= AGTI_SHX_MORE_ARGS;
            stdin_fed = false; /* xargs gives its commands /dev/null */
            for (size_t w = wr.next; wr.repl && *wr.repl && w < ws->n; w++)
                if (strstr(ws->w[w], wr.repl) != NULL)
                    ws->f[w] |= AGTI_SHW_DYNAMIC;
        }
        pos = wr.next;
    }
    (void)last;
    if (nst == 0)
        stages[nst++] = 0;
    if (wrapped.oom)
        return fail(c, AGTI_SH_ENOMEM, "out of memory");
    runner r;
    memset(&r, 0, sizeof r);
    size_t at = stages[nst - 1];
    int rc = AGTI_SH_OK;
    if (split != NULL || split_dyn) {
        r.is_runner = true;
        r.flags |= AGTI_SHX_CONTAINER;
        if (split_dyn || any_dynamic(ws, split_at, ws->n)) {
            r.dyn = true;
        } else {
            char *rest = join_words(ws, split_at, ws->n, true);
            r.text = rest ? agti_aprintf("%s %s", split, rest) : NULL;
            free(rest);
            if (r.text == NULL)
                rc = AGTI_SH_ENOMEM;
        }
    } else if (watch_join) {
        r.is_runner = true;
        r.flags |= AGTI_SHX_CONTAINER;
        if (any_dynamic(ws, split_at, ws->n))
            r.dyn = true;
        else if ((r.text = join_words(ws, split_at, ws->n, false)) == NULL)
            rc = AGTI_SH_ENOMEM;
    } else if (!(flags & AGTI_SHX_DYNAMIC_NAME) && at < ws->n) {
        rc = find_runner(ws, at, stdin_fed, &r);
    }
    if (rc != AGTI_SH_OK) {
        agti_buf_free(&wrapped);
        free(r.text);
        return fail(c, AGTI_SH_ENOMEM, "out of memory");
    }
    flags |= r.flags | scan_words(c, ws, at);
    if (!(flags & AGTI_SHX_DYNAMIC_NAME) && at < ws->n &&
        agti_sh_code_options(ws->w + at, ws->f + at, ws->n - at, false, NULL, 0, NULL) > 0)
        flags |= AGTI_SHX_CODE_OPT;
    if (r.dyn)
        flags |= AGTI_SHX_EVAL_DYNAMIC;
    if (any_dynamic(ws, at + 1 < ws->n ? at + 1 : ws->n, ws->n))
        flags |= AGTI_SHX_DYNAMIC_ARGS;
    bool is_find = at < ws->n &&
                   (strcmp(ws->w[at], "find") == 0 || strcmp(ws->w[at], "fd") == 0 ||
                    strcmp(ws->w[at], "fdfind") == 0) &&
                   !(flags & AGTI_SHX_DYNAMIC_NAME);
    char *wrappers_s = wrapped.len ? an_strdup(c->a, agti_buf_cstr(&wrapped), wrapped.len) : NULL;
    bool wrap_oom = wrapped.len && wrappers_s == NULL;
    agti_buf_free(&wrapped);
    size_t idx;
    rc = wrap_oom ? fail(c, AGTI_SH_ENOMEM, "out of memory")
                  : push_exec(c, ws, stages, nst, path, wrappers_s, flags, cmd, &idx);
    if (rc != AGTI_SH_OK) {
        free(r.text);
        return rc;
    }
    if (r.text != NULL) {
        rc = reparse(c, idx, r.text, strlen(r.text));
        free(r.text);
        if (rc != AGTI_SH_OK)
            return rc;
    }
    if (r.shell_stdin_body) {
        size_t blen = 0;
        const char *body = static_stdin(cmd, &blen);
        if (body != NULL) {
            c->a->v[idx].flags |= AGTI_SHX_CONTAINER;
            rc = reparse(c, idx, body, blen);
            if (rc != AGTI_SH_OK)
                return rc;
        }
    }
    if (is_find)
        rc = find_execs(c, idx, cmd, stdin_fed);
    return rc;
}

static bool cmd_writes(const agti_sh_cmd *cmd)
{
    for (size_t i = 0; i < cmd->nredirs; i++)
        if (redir_writes(&cmd->redirs[i]))
            return true;
    return false;
}

static bool cmd_stdin(const agti_sh_cmd *cmd)
{
    if (cmd->flags & (AGTI_SHC_PIPED_IN | AGTI_SHC_STDIN_REDIR))
        return true;
    for (size_t i = 0; i < cmd->nredirs; i++)
        if (redir_stdin(&cmd->redirs[i]))
            return true;
    return false;
}

static size_t name_hash(const char *s)
{
    size_t h = 5381;
    for (; *s; s++)
        h = h * 33 + (unsigned char)*s;
    return h;
}

/* The table of the script's functions: a name's last definition wins. */
static int build_ftab(actx *c)
{
    size_t nf = agti_sh_nfuncs(c->s);
    if (nf == 0)
        return AGTI_SH_OK;
    size_t cap = 16;
    while (cap < nf * 2)
        cap *= 2;
    c->ftab = malloc(cap * sizeof *c->ftab);
    if (c->ftab == NULL)
        return fail(c, AGTI_SH_ENOMEM, "out of memory");
    for (size_t i = 0; i < cap; i++)
        c->ftab[i] = -1;
    c->fcap = cap;
    for (size_t i = 0; i < nf; i++) {
        const agti_sh_func *f = agti_sh_func_at(c->s, i);
        if (f->name == NULL)
            continue;
        size_t j = name_hash(f->name) & (cap - 1);
        while (c->ftab[j] >= 0 &&
               strcmp(agti_sh_func_at(c->s, (size_t)c->ftab[j])->name, f->name) != 0)
            j = (j + 1) & (cap - 1);
        c->ftab[j] = (int)i; /* later definitions replace earlier ones */
    }
    return AGTI_SH_OK;
}

/* The commands of each function: every command flagged IN_FUNCTION with its
 * index, also those listed after its range (a here-doc read after the
 * closing brace). */
static int build_fcmds(actx *c)
{
    size_t nf = agti_sh_nfuncs(c->s), n = agti_sh_ncmds(c->s);
    if (nf == 0)
        return AGTI_SH_OK;
    c->fstart = calloc(nf + 1, sizeof *c->fstart);
    c->fcmds = malloc((n ? n : 1) * sizeof *c->fcmds);
    size_t *fill = calloc(nf, sizeof *fill);
    if (c->fstart == NULL || c->fcmds == NULL || fill == NULL) {
        free(fill);
        return fail(c, AGTI_SH_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        const agti_sh_cmd *cmd = agti_sh_cmd_at(c->s, i);
        if ((cmd->flags & AGTI_SHC_IN_FUNCTION) && cmd->function >= 0 && (size_t)cmd->function < nf)
            c->fstart[cmd->function + 1]++;
    }
    for (size_t f = 0; f < nf; f++)
        c->fstart[f + 1] += c->fstart[f];
    for (size_t i = 0; i < n; i++) {
        const agti_sh_cmd *cmd = agti_sh_cmd_at(c->s, i);
        if ((cmd->flags & AGTI_SHC_IN_FUNCTION) && cmd->function >= 0 &&
            (size_t)cmd->function < nf) {
            size_t f = (size_t)cmd->function;
            c->fcmds[c->fstart[f] + fill[f]++] = i;
        }
    }
    free(fill);
    return AGTI_SH_OK;
}

static int find_function(const actx *c, const char *name)
{
    if (c->ftab == NULL)
        return -1;
    size_t j = name_hash(name) & (c->fcap - 1);
    while (c->ftab[j] >= 0) {
        if (strcmp(agti_sh_func_at(c->s, (size_t)c->ftab[j])->name, name) == 0)
            return c->ftab[j];
        j = (j + 1) & (c->fcap - 1);
    }
    return -1;
}

static int process_cmd(actx *c, size_t i);

static int expand_function(actx *c, int fi, const agti_sh_cmd *call, unsigned inherit)
{
    const agti_sh_func *f = agti_sh_func_at(c->s, (size_t)fi);
    if (c->active[fi])
        return AGTI_SH_OK; /* recursion: its commands are listed already */
    c->active[fi] = 1;
    c->called[fi] = 1;
    const agti_sh_cmd *saved_origin = c->origin;
    unsigned saved_inherit = c->inherit;
    if (c->origin == NULL && call != NULL)
        c->origin = call;
    c->inherit |= inherit;
    int rc = AGTI_SH_OK;
    (void)f;
    for (size_t k = c->fstart[fi]; rc == AGTI_SH_OK && k < c->fstart[fi + 1]; k++)
        rc = process_cmd(c, c->fcmds[k]);
    c->origin = saved_origin;
    c->inherit = saved_inherit;
    c->active[fi] = 0;
    return rc;
}

static int process_cmd(actx *c, size_t i)
{
    const agti_sh_cmd *cmd = agti_sh_cmd_at(c->s, i);
    if (cmd->flags & AGTI_SHC_KEYWORD) {
        /* [[ ]] / (( )) run nothing but their substitutions, unless they
         * evaluate a variable's value as code: then an exec of its own */
        if (!keyword_reads_code(cmd))
            return AGTI_SH_OK;
        words ws;
        size_t *st = an_alloc(c->a, sizeof *st);
        if (words_from(c, &ws, cmd->argv, cmd->argc) != AGTI_SH_OK || st == NULL)
            return fail(c, AGTI_SH_ENOMEM, "out of memory");
        st[0] = 0;
        size_t idx;
        return push_exec(c, &ws, st, 1, NULL, NULL, AGTI_SHX_ARITH, cmd, &idx);
    }
    bool writes = cmd_writes(cmd) || (c->inherit & INH_WRITES);
    bool fed = cmd_stdin(cmd);
    unsigned flags = (writes ? AGTI_SHX_WRITES : 0) | scan_assigns(c, cmd) |
                     ((c->inherit & INH_MORE) ? AGTI_SHX_MORE_ARGS : 0);
    if (cmd->argc == 0) {
        /* a command of redirections only that opens a file to read
         * ($(<f), bash's way to read a file) gets an exec too: what it
         * reads is its output there */
        bool reads = false;
        for (size_t r = 0; r < cmd->nredirs && !reads; r++)
            reads = cmd->redirs[r].op == AGTI_SHR_IN || cmd->redirs[r].op == AGTI_SHR_RDWR;
        if (!writes && !reads && !(flags & AGTI_SHX_ARITH))
            return AGTI_SH_OK;
        /* the assignments stand for the command (x=$((y)) evaluates y) */
        bool shown = (flags & AGTI_SHX_ARITH) != 0;
        words ws = {NULL, NULL, 0};
        size_t *st = an_alloc(c->a, sizeof *st);
        if ((shown ? words_from(c, &ws, cmd->assigns, cmd->nassigns) : words_alloc(c, &ws, 0)) !=
                AGTI_SH_OK ||
            st == NULL)
            return fail(c, AGTI_SH_ENOMEM, "out of memory");
        st[0] = 0;
        size_t idx;
        return push_exec(c, &ws, st, 1, NULL, NULL, flags, cmd, &idx);
    }
    const agti_sh_word *w0 = &cmd->argv[0];
    if (!(w0->flags & WORD_DYN) && w0->value != NULL) {
        int fi = find_function(c, w0->value);
        if (fi >= 0)
            return expand_function(c, fi, cmd, writes ? INH_WRITES : 0);
    }
    words ws;
    if (words_from(c, &ws, cmd->argv, cmd->argc) != AGTI_SH_OK)
        return fail(c, AGTI_SH_ENOMEM, "out of memory");
    return emit_words(c, &ws, flags, fed, cmd);
}

/* The words of for/select lists and case subjects and patterns are no
 * command's: one that evaluates a variable's value as code (for i in
 * $((x))) gets an exec of its own. */
static int tree_words(actx *c, const agti_sh_node *nd)
{
    if (nd == NULL)
        return AGTI_SH_OK;
    const agti_sh_word *one = (nd->kind == AGTI_SHN_CASE) ? &nd->word : NULL;
    bool list = (nd->kind == AGTI_SHN_FOR && !nd->arith) || nd->kind == AGTI_SHN_SELECT ||
                nd->kind == AGTI_SHN_LIST;
    size_t nw = (list ? nd->nwords : 0) + (one ? 1 : 0);
    for (size_t i = 0; i < nw; i++) {
        const agti_sh_word *w = one && i == 0 ? one : &nd->words[i - (one ? 1 : 0)];
        if (!(w->flags & AGTI_SHW_EVAL) || w->value == NULL || !word_reads_code(w->value))
            continue;
        words ws;
        size_t *st = an_alloc(c->a, sizeof *st);
        if (words_from(c, &ws, w, 1) != AGTI_SH_OK || st == NULL)
            return fail(c, AGTI_SH_ENOMEM, "out of memory");
        st[0] = 0;
        size_t idx;
        int rc = push_exec(c, &ws, st, 1, NULL, NULL, AGTI_SHX_ARITH, NULL, &idx);
        if (rc != AGTI_SH_OK)
            return rc;
    }
    for (size_t i = 0; i < nd->nchildren; i++) {
        int rc = tree_words(c, nd->children[i]);
        if (rc != AGTI_SH_OK)
            return rc;
    }
    return AGTI_SH_OK;
}

static int analyze_script(actx *pc, const agti_sh_script *s, int parent, unsigned inherit)
{
    actx c;
    memset(&c, 0, sizeof c);
    c.a = pc->a;
    c.s = s;
    c.copy = pc->s != NULL; /* a string parsed again, freed after this */
    c.origin = pc->origin;
    c.depth = pc->s == NULL ? 0 : pc->depth + 1;
    c.parent = parent;
    c.inherit = inherit;
    c.err = pc->err;
    size_t n = agti_sh_ncmds(s), nf = agti_sh_nfuncs(s);
    c.active = calloc(nf ? nf : 1, 1);
    c.called = calloc(nf ? nf : 1, 1);
    int rc = AGTI_SH_OK;
    if (c.active == NULL || c.called == NULL)
        rc = fail(&c, AGTI_SH_ENOMEM, "out of memory");
    if (rc == AGTI_SH_OK)
        rc = build_ftab(&c);
    if (rc == AGTI_SH_OK)
        rc = build_fcmds(&c);
    for (size_t i = 0; rc == AGTI_SH_OK && i < n; i++) {
        const agti_sh_cmd *cmd = agti_sh_cmd_at(s, i);
        if (!(cmd->flags & AGTI_SHC_IN_FUNCTION))
            rc = process_cmd(&c, i);
    }
    if (rc == AGTI_SH_OK)
        rc = tree_words(&c, agti_sh_root(s));
    /* a function never called by name may still run (trap, a dynamic name):
     * its commands count where it is defined */
    for (size_t f = 0; rc == AGTI_SH_OK && f < nf; f++)
        if (!c.called[f])
            rc = expand_function(&c, (int)f, NULL, 0);
    free(c.active);
    free(c.called);
    free(c.ftab);
    free(c.fcmds);
    free(c.fstart);
    return rc;
}

/* ---- public ------------------------------------------------------------ */

int agti_sh_analyze(const agti_sh_script *s, agti_sh_analysis **out, agti_sh_error *err)
{
    *out = NULL;
    if (err != NULL)
        memset(err, 0, sizeof *err);
    struct agti_sh_analysis *a = calloc(1, sizeof *a);
    if (a == NULL)
        return AGTI_SH_ENOMEM;
    agti_sh_arena_init(&a->arena, AN_CHUNK_MIN, AN_CHUNK_MAX);
    /* about one exec per written command: one array, grown only when
     * functions, wrappers and strings add more */
    a->cap = agti_sh_ncmds(s) + 16;
    if ((a->v = malloc(a->cap * sizeof *a->v)) == NULL) {
        free(a);
        return AGTI_SH_ENOMEM;
    }
    actx top;
    memset(&top, 0, sizeof top);
    top.a = a;
    top.err = err;
    top.parent = -1;
    int rc = analyze_script(&top, s, -1, 0);
    if (rc != AGTI_SH_OK) {
        agti_sh_analysis_free(a);
        return rc;
    }
    if (a->env_code) /* the order the commands run in is not followed: all of them */
        for (size_t i = 0; i < a->n; i++)
            a->v[i].flags |= AGTI_SHX_ENV_CODE;
    /* BASH_ENV=x.sh bash -c true runs x.sh (attacker report: rm past a deny
     * rule in yolo mode): every shell of such a script sources a file */
    if (a->shell_env)
        for (size_t i = 0; i < a->n; i++)
            if (a->v[i].argc > 0 && name_is(a->v[i].argv[0], shells))
                a->v[i].flags |= AGTI_SHX_SOURCE;
    *out = a;
    return AGTI_SH_OK;
}

size_t agti_sh_nexecs(const agti_sh_analysis *a)
{
    return a ? a->n : 0;
}

const agti_sh_exec *agti_sh_exec_at(const agti_sh_analysis *a, size_t i)
{
    return a && i < a->n ? &a->v[i] : NULL;
}

void agti_sh_analysis_free(agti_sh_analysis *a)
{
    if (a == NULL)
        return;
    agti_sh_arena_free(&a->arena);
    free(a->v);
    free(a);
}
