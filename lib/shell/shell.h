/*
 * Internal shell engine of libagenttools: a parser for the POSIX shell
 * command language (XCU chapter 2) plus the bash forms models write, and the
 * analysis that turns a script into the list of every simple command that
 * can run. Knows nothing of tools, rules or sessions: lib/session builds its
 * Bash approval decisions on top of it. Depends on lib/core only.
 *
 * Two layers:
 *  - parse.c and friends: text -> tree (agti_sh_node) and, walking the tree,
 *    the flat list of simple commands as written (agti_sh_cmd), including
 *    those inside command/process substitutions, here-strings, function
 *    bodies, conditions and loop bodies;
 *  - analyze.c: the same commands as they would run (agti_sh_exec): wrappers
 *    seen through (env, nohup, timeout, sudo, xargs, find -exec, ...),
 *    `sh -c STRING` and `eval STRING` with static strings parsed again,
 *    functions defined in the script expanded where they are called, the
 *    command word's basename, and the reasons a command cannot be decided
 *    statically (AGTI_SHX_* flags), so that a caller can fail closed.
 */
#ifndef AGT_LIB_SHELL_H
#define AGT_LIB_SHELL_H

#include <stdbool.h>
#include <stddef.h>

/* ---- limits: input over them is refused (never truncated) ---------- */
#define AGTI_SH_MAX_INPUT (1u << 20) /* bytes of script text */
#define AGTI_SH_MAX_DEPTH 256        /* nesting of constructs and re-parses */
#define AGTI_SH_MAX_COMMANDS 10000   /* simple commands, after analysis */

/* ---- status ---------------------------------------------------------- */
enum agti_sh_status {
    AGTI_SH_OK = 0,
    AGTI_SH_ESYNTAX = 1,  /* not valid shell: unterminated quote, `fi` without `if`, ... */
    AGTI_SH_ETOOLONG = 2, /* input over AGTI_SH_MAX_INPUT */
    AGTI_SH_ETOODEEP = 3, /* nesting over AGTI_SH_MAX_DEPTH */
    AGTI_SH_ETOOMANY = 4, /* over AGTI_SH_MAX_COMMANDS */
    AGTI_SH_ENOMEM = 5
};

/* Where and why parsing stopped; message is a static or owned-by-script
 * English sentence ("unterminated single quote", "`then` expected after
 * the `if` condition"). offset: byte offset in the input. */
typedef struct agti_sh_error {
    int status; /* enum agti_sh_status */
    size_t offset;
    char message[160];
} agti_sh_error;

/* ---- words ----------------------------------------------------------- */
/* A word after quote removal. value holds the static text with every quote
 * and escaping backslash removed (`\r\m` -> "rm", `'rm'` -> "rm",
 * `$'a\nb'` -> "a<LF>b", `"a"'b'c` -> "abc"); an expansion whose value is
 * not known statically stays in value as its source text ("$X", "$(cmd)")
 * and sets AGTI_SHW_DYNAMIC. */
#define AGTI_SHW_DYNAMIC 0x01u /* holds a parameter/command/arithmetic/process expansion */
#define AGTI_SHW_UNQUOTED_EXP                                                                      \
    0x02u                     /* ... of which one is unquoted: field splitting and                 \
                               * pathname expansion may make 0 or several words */
#define AGTI_SHW_GLOB 0x04u   /* unquoted *, ?, [ : pathname expansion may change it */
#define AGTI_SHW_BRACE 0x08u  /* unquoted brace expansion {a,b} / {1..3} */
#define AGTI_SHW_TILDE 0x10u  /* leading unquoted ~ (value keeps the ~) */
#define AGTI_SHW_QUOTED 0x20u /* some part was quoted or escaped */
/* holds an expansion that evaluates a variable's value as code, so a value
 * set earlier in the script (x='a[$(rm -rf d)]') can run commands:
 * arithmetic $((..)) $[..], a subscript ${a[i]}, a substring ${s:i},
 * indirection ${!x}, prompt expansion ${x@P}. (( )), [[ -eq ]], let,
 * printf -v, read, unset... do the same with plain words: see the command. */
#define AGTI_SHW_EVAL 0x40u

typedef struct agti_sh_word {
    char *value;   /* NUL-terminated; see above */
    size_t vlen;   /* bytes in value ($'\0'... can hold NUL: vlen is authoritative) */
    size_t offset; /* of the word's first byte in the text it was parsed from */
    size_t length; /* bytes of source */
    unsigned flags;
} agti_sh_word;

/* ---- redirections ------------------------------------------------------ */
enum agti_sh_redir_op {
    AGTI_SHR_IN = 0,          /* <      */
    AGTI_SHR_OUT = 1,         /* >      */
    AGTI_SHR_APPEND = 2,      /* >>     */
    AGTI_SHR_CLOBBER = 3,     /* >|     */
    AGTI_SHR_RDWR = 4,        /* <>     */
    AGTI_SHR_HEREDOC = 5,     /* <<     */
    AGTI_SHR_HEREDOC_TAB = 6, /* <<-    */
    AGTI_SHR_HERESTRING = 7,  /* <<<    */
    AGTI_SHR_OUT_ERR = 8,     /* &>     */
    AGTI_SHR_APPEND_ERR = 9,  /* &>>    */
    AGTI_SHR_DUP_OUT = 10,    /* >&word, n>&m, n>&- ; >&file when word is not a number or - */
    AGTI_SHR_DUP_IN = 11      /* <&word */
};

typedef struct agti_sh_redir {
    int op;              /* enum agti_sh_redir_op */
    int fd;              /* explicit fd number before the operator, -1 when none */
    bool fd_var;         /* {name}>file: the fd is allocated into a variable */
    agti_sh_word target; /* file name, fd number, "-", here-doc delimiter, here-string */
    char *heredoc;       /* body of << / <<- (leading tabs stripped for <<-), else NULL */
    size_t heredoc_len;
    bool heredoc_expands; /* delimiter unquoted: the body undergoes expansion */
    /* Opens a file for writing: >, >>, >|, <>, &>, &>>, and >&word / n>&word
     * where word is not a number and not "-". False for /dev/null,
     * /dev/stdout, /dev/stderr, /dev/fd/N and for fd duplications/closes. A
     * dynamic target that may write counts as writing. */
    bool writes;
    /* Copied from an enclosing compound command (`{ a; b; } > f` gives a and
     * b the `> f`), after the command's own redirections. */
    bool inherited;
} agti_sh_redir;

/* ---- simple commands as written ------------------------------------- */
#define AGTI_SHC_IN_SUBST 0x001u    /* inside $(...), `...`, <(...), >(...) */
#define AGTI_SHC_PIPED_IN 0x002u    /* its stdin is a pipe (not the first of a pipeline) */
#define AGTI_SHC_BACKGROUND 0x004u  /* in an and-or list ended by & */
#define AGTI_SHC_IN_FUNCTION 0x008u /* inside a function definition's body */
#define AGTI_SHC_KEYWORD                                                                           \
    0x010u                          /* a [[ ]] or (( )) test / arithmetic command:                 \
                                     * argv[0] is "[[" or "((" */
#define AGTI_SHC_ASSIGN_ONLY 0x020u /* no command word: assignments and/or redirections */
#define AGTI_SHC_STDIN_REDIR 0x040u /* stdin comes from <, <<, <<<, <& */

typedef struct agti_sh_cmd {
    agti_sh_word *assigns; /* NAME=value words before the command word */
    size_t nassigns;
    agti_sh_word *argv; /* command word and arguments (argc may be 0) */
    size_t argc;
    agti_sh_redir *redirs;
    size_t nredirs;
    unsigned flags; /* AGTI_SHC_* */
    size_t offset;  /* source span of the whole simple command */
    size_t length;
    int function; /* index into agti_sh_script's functions when IN_FUNCTION, else -1 */
} agti_sh_cmd;

/* A function defined in the script (`f() { ...; }`, `function f { ...; }`):
 * its body's commands are the list entries flagged IN_FUNCTION with this
 * index; first_cmd..first_cmd+ncmds holds them all except the commands of a
 * here-doc body that follows the line after the closing brace
 * (`f() { cat <<E; }` NL `$(id)` NL `E`), which come later in the list (with
 * the right `function` index). */
typedef struct agti_sh_func {
    char *name;
    size_t first_cmd, ncmds; /* range in the command list */
} agti_sh_func;

/* ---- the tree ---------------------------------------------------------- */
enum agti_sh_node_kind {
    AGTI_SHN_LIST = 0,     /* children run in order; sep[i] is ';' '&' or '\n' after child i,
                            * 0 when nothing followed it */
    AGTI_SHN_AND = 1,      /* a && b */
    AGTI_SHN_OR = 2,       /* a || b */
    AGTI_SHN_PIPELINE = 3, /* a | b |& c; bang for !, timed for `time`; only made for
                            * two commands or more, or a ! or time prefix */
    AGTI_SHN_SIMPLE = 4,   /* cmd: index in the command list */
    AGTI_SHN_SUBSHELL = 5, /* ( list ) */
    AGTI_SHN_GROUP = 6,    /* { list; } */
    AGTI_SHN_IF = 7,       /* children: cond, then, [elif cond, then]..., [else] */
    AGTI_SHN_WHILE = 8,
    AGTI_SHN_UNTIL = 9,
    AGTI_SHN_FOR = 10,      /* word: variable; words: the list (has_in: an `in` was
                             * written); arith: `for ((a;b;c))` with words[0] the
                             * expressions as written and cmd a KEYWORD command for them;
                             * children[0]: body */
    AGTI_SHN_CASE = 11,     /* word: subject; children: one LIST per item, with
                             * words: its patterns and case_term: how it ended */
    AGTI_SHN_SELECT = 12,   /* as FOR */
    AGTI_SHN_FUNCTION = 13, /* func: index; word: name; children[0]: body */
    AGTI_SHN_COND = 14,     /* [[ ]] : cmd index; argv "[[" operands/operators... "]]" */
    AGTI_SHN_ARITH = 15,    /* (( )) : cmd index; argv "((" expression-as-written "))" */
    AGTI_SHN_COPROC = 16    /* coproc [NAME] command: word: NAME ("COPROC" when none);
                             * children[0]: the command; its commands are BACKGROUND */
};

/* How a case item ended. */
enum agti_sh_case_term {
    AGTI_SH_CASE_BREAK = 0,       /* ;; (or the last item before esac) */
    AGTI_SH_CASE_FALLTHROUGH = 1, /* ;& : runs the next item's list too */
    AGTI_SH_CASE_TEST_NEXT = 2    /* ;;& : tests the next patterns too */
};

typedef struct agti_sh_node {
    int kind; /* enum agti_sh_node_kind */
    struct agti_sh_node **children;
    size_t nchildren;
    char *sep;             /* LIST: separators, one per child */
    bool bang;             /* PIPELINE: leading ! */
    int cmd;               /* SIMPLE/COND/ARITH: index in the command list, else -1 */
    int func;              /* FUNCTION: index in the function list, else -1 */
    agti_sh_redir *redirs; /* redirections on a compound command (`{ ...; } > f`);
                            * also copied onto every command inside (inherited) */
    size_t nredirs;
    size_t offset, length;
    agti_sh_word word;   /* FOR/SELECT: variable; CASE: subject; FUNCTION: name */
    agti_sh_word *words; /* FOR/SELECT: the list; case item LIST: its patterns */
    size_t nwords;
    bool arith;    /* FOR: `for (( ; ; ))` */
    bool has_in;   /* FOR/SELECT: `in` was written (else the list is "$@") */
    bool timed;    /* PIPELINE: `time` prefix */
    int case_term; /* case item LIST: enum agti_sh_case_term */
} agti_sh_node;

typedef struct agti_sh_script agti_sh_script; /* opaque; owns everything above */

/* Parses text[0..len) (need not be NUL-terminated; a NUL byte is a syntax
 * error). On success *out owns the tree and the lists and AGTI_SH_OK is
 * returned; else *out is NULL, err (may be NULL) says where and why, and the
 * status is returned. Never reads past len, never recurses past
 * AGTI_SH_MAX_DEPTH, memory bounded by a small multiple of len. */
int agti_sh_parse(const char *text, size_t len, agti_sh_script **out, agti_sh_error *err);
/* The same, for a text found inside another one (a `sh -c` or `eval`
 * string) at nesting depth `depth` (0 = written): the script's constructs
 * count from there, so nested re-parses share AGTI_SH_MAX_DEPTH and the C
 * stack stays bounded (about 1 KB per level at most: ~300 KB at the limit).
 * depth >= AGTI_SH_MAX_DEPTH gives AGTI_SH_ETOODEEP. */
int agti_sh_parse_at_depth(const char *text, size_t len, int depth, agti_sh_script **out,
                           agti_sh_error *err);
void agti_sh_free(agti_sh_script *s);

const agti_sh_node *agti_sh_root(const agti_sh_script *s);
/* The command list is in parse order: a substitution's commands come before
 * the command whose word holds them (`echo $(ls)`: ls, echo), a here-doc
 * body's after the command with the `<<`. */
size_t agti_sh_ncmds(const agti_sh_script *s);
const agti_sh_cmd *agti_sh_cmd_at(const agti_sh_script *s, size_t i);
size_t agti_sh_nfuncs(const agti_sh_script *s);
const agti_sh_func *agti_sh_func_at(const agti_sh_script *s, size_t i);

/* ---- analysis: the commands as they would run ------------------------ */
/* Reasons a command cannot be decided statically; a caller must not let an
 * allow rule cover it, nor assume a deny rule does not apply. */
#define AGTI_SHX_DYNAMIC_NAME 0x001u /* command word (after wrappers) not a literal */
#define AGTI_SHX_EVAL_DYNAMIC 0x002u /* eval / sh -c with a non-static string */
#define AGTI_SHX_SOURCE 0x004u       /* source / . : runs a file's commands */
#define AGTI_SHX_SHELL_STDIN                                                                       \
    0x008u                              /* a shell reading its script from stdin                   \
                                         * (`| sh`, `sh < f`, `bash <<EOF`, `sh -s`) */
#define AGTI_SHX_DYNAMIC_ARGS 0x010u    /* some argument is dynamic (informational) */
#define AGTI_SHX_WRAPPER_UNKNOWN 0x020u /* a wrapper's options could not be read */
#define AGTI_SHX_WRITES 0x040u          /* has a redirection that writes a file */
#define AGTI_SHX_SHELL_FILE 0x080u      /* a shell/interpreter running a script file */
#define AGTI_SHX_MORE_ARGS                                                                         \
    0x100u /* more arguments are added when it runs (xargs,                                        \
            * find -exec ... {} +): argv is a prefix */
#define AGTI_SHX_CONTAINER                                                                         \
    0x200u                     /* runs the commands of a string (sh -c, eval,                      \
                                * su -c, watch, env -S, trap, a static here-doc                    \
                                * fed to a shell): they follow as execs whose                      \
                                * parent is this one */
#define AGTI_SHX_SYNTAX 0x400u /* with EVAL_DYNAMIC: the string did not parse */
/* The script changes which program a command name runs, or what code a
 * program loads, for this command: an assignment to PATH, BASH_ENV, ENV,
 * LD_*, DYLD_*, GIT_*, HOME, a pager or editor variable, an interpreter's
 * option or module path (PYTHONPATH, NODE_OPTIONS, PERL5OPT, ...), as a
 * prefix (`PATH=. ls`), through env or sudo, alone (`PATH=.; ls`), by
 * export, declare, read, printf -v..., or hash -p, alias, enable,
 * shopt expand_aliases, export -f. Anywhere in a script it marks every
 * command of the script (the order in which they run is not followed). */
#define AGTI_SHX_ENV_CODE 0x800u
/* It evaluates the value of a variable as code, which runs any command
 * substitution that value holds (x='a[$(rm -rf d)]'; echo $((x))):
 * arithmetic $((x)) $[x] (( x )) let, [[ x -eq 1 ]], a subscript ${a[i]},
 * a substring offset ${s:i}, indirection ${!x}, prompt expansion ${x@P},
 * declare -i (later assignments are arithmetic), a subscripted name given
 * to read, printf -v, unset, declare... (only literal numbers: not
 * flagged). A command that is only assignments (x=$((y))) or a [[ ]] /
 * (( )) command gets an exec of its own for this flag. */
#define AGTI_SHX_ARITH 0x1000u
/* A wrapper (env) gives the command a shell function through the
 * environment ('BASH_FUNC_ls%%=() { rm -rf d; }' bash -c ls): a bash it
 * starts runs the body, which is not checked. */
#define AGTI_SHX_ENV_FUNC 0x2000u
/* Its options or arguments make the program run code, or write or read a
 * file, that an argument chooses (make -f/--eval/-C/VAR=value, ssh -o
 * ProxyCommand or a remote command, sed's e/w/r commands, awk's system(),
 * tar --to-command, rg --pre, git -c, ...: agti_sh_code_options lists
 * them). A caller lets an allow rule with a wildcard cover such a command
 * only when the rule spells the same options. */
#define AGTI_SHX_CODE_OPT 0x4000u
/* Every flag is a bit of its own (two branches once gave ENV_FUNC and
 * CODE_OPT the same bit, each then read as the other): the sum of distinct
 * bits is their union. */
_Static_assert(AGTI_SHX_DYNAMIC_NAME + AGTI_SHX_EVAL_DYNAMIC + AGTI_SHX_SOURCE +
                       AGTI_SHX_SHELL_STDIN + AGTI_SHX_DYNAMIC_ARGS + AGTI_SHX_WRAPPER_UNKNOWN +
                       AGTI_SHX_WRITES + AGTI_SHX_SHELL_FILE + AGTI_SHX_MORE_ARGS +
                       AGTI_SHX_CONTAINER + AGTI_SHX_SYNTAX + AGTI_SHX_ENV_CODE + AGTI_SHX_ARITH +
                       AGTI_SHX_ENV_FUNC + AGTI_SHX_CODE_OPT ==
                   (AGTI_SHX_DYNAMIC_NAME | AGTI_SHX_EVAL_DYNAMIC | AGTI_SHX_SOURCE |
                    AGTI_SHX_SHELL_STDIN | AGTI_SHX_DYNAMIC_ARGS | AGTI_SHX_WRAPPER_UNKNOWN |
                    AGTI_SHX_WRITES | AGTI_SHX_SHELL_FILE | AGTI_SHX_MORE_ARGS |
                    AGTI_SHX_CONTAINER | AGTI_SHX_SYNTAX | AGTI_SHX_ENV_CODE | AGTI_SHX_ARITH |
                    AGTI_SHX_ENV_FUNC | AGTI_SHX_CODE_OPT),
               "AGTI_SHX_* flags must be distinct bits");

/* The flags that make a command undecidable: a caller fails closed on them. */
#define AGTI_SHX_FAIL_CLOSED                                                                       \
    (AGTI_SHX_DYNAMIC_NAME | AGTI_SHX_EVAL_DYNAMIC | AGTI_SHX_SOURCE | AGTI_SHX_SHELL_STDIN |      \
     AGTI_SHX_WRAPPER_UNKNOWN | AGTI_SHX_ARITH | AGTI_SHX_ENV_FUNC)

typedef struct agti_sh_exec {
    char **argv; /* the command as it runs: wrappers removed, argv[0] the
                  * command word's basename when it was a path; points
                  * into written (argv == written + stages[nstages - 1]) */
    size_t argc;
    const char *path;       /* the command word as written when it held a '/', else NULL */
    const agti_sh_cmd *cmd; /* where it came from (the outermost written command) */
    char *wrappers; /* the wrappers seen through, space-separated ("sudo timeout"), or NULL */
    unsigned flags; /* AGTI_SHX_* */
    int depth;      /* re-parse depth: 0 written, 1 inside sh -c / eval, ... */
    /* The whole simple command as written (its words after quote removal),
     * each stage's command word reduced to its basename: "sudo -u x rm -rf d"
     * with stages {0, 3}. A rule that forbids a wrapper (`sudo`) is checked
     * against every stage. */
    char **written;
    size_t writtenc;
    const unsigned *wflags; /* AGTI_SHW_* of each written word */
    size_t *stages;         /* where each command starts in written; stages[0] == 0 */
    size_t nstages;
    int parent; /* index of the exec whose string (sh -c, eval) or
                 * -exec ran this one, -1 when none */
} agti_sh_exec;

/* opaque; owns the execs and, in one arena freed with it, their arrays and
 * strings. The words of the analysed script are not copied: an exec's
 * strings point into the script (or into the analysis for strings parsed
 * again) and are read-only; the script must outlive the analysis. */
typedef struct agti_sh_analysis agti_sh_analysis;

/* Analyses a parsed script (parses sh -c / eval strings again, under the same
 * limits). AGTI_SH_OK with the list, or an error status (a re-parse that
 * failed is not an error: that command gets AGTI_SHX_EVAL_DYNAMIC). */
int agti_sh_analyze(const agti_sh_script *s, agti_sh_analysis **out, agti_sh_error *err);
size_t agti_sh_nexecs(const agti_sh_analysis *a);
const agti_sh_exec *agti_sh_exec_at(const agti_sh_analysis *a, size_t i);
void agti_sh_analysis_free(agti_sh_analysis *a);

/* ---- options that run code (codeopts.c) -------------------------------- */
/* One option or argument form with which a program runs code or writes or
 * reads a file an argument chooses. why is a static English text (the same
 * address for the same option: `make -f` and `make --file=x` both give
 * "-f/--file/--makefile: ..."); detail tells apart options of one kind: the
 * ssh -o keyword or git -c name in lower case, the make variable's name;
 * else "". An option given twice is listed twice (a word only known when it
 * runs: once). */
typedef struct agti_sh_codeopt {
    const char *why;
    char detail[48];
} agti_sh_codeopt;

/* The code options of the command argv[0..argc) (argv[0] the basename, flags
 * the AGTI_SHW_* of each word), read as GNU getopt reads them (clusters,
 * attached values, --opt=v and --opt v, abbreviations, options after
 * operands, "--"), up to max of them into out (out may be NULL): returns how
 * many there are, 0 for a program not listed or a command with none. A word
 * only known when it runs where an option could be counts as one, and so
 * does an awk or sed program that cannot be read (fail closed). With
 * pattern, argv are a rule's pattern words: a word with a wildcard is its
 * text before the first wildcard, flagged AGTI_SHW_GLOB, and spells only
 * what that text spells (a remote ssh command is never spelled). *oom (may
 * be NULL) is set when memory ran out: the count is then at least 1. */
/* Whether "|name|" (its first n bytes) is one of the names of list
 * ("|a|b|"); false for n == 0. */
bool agti_sh_opt_listed(const char *list, const char *name, size_t n);

size_t agti_sh_code_options(char *const *argv, const unsigned *flags, size_t argc, bool pattern,
                            agti_sh_codeopt *out, size_t max, bool *oom);

#endif
