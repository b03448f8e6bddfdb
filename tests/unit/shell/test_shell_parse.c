/*
 * Shell parser: for each line, the simple commands it lists (rendered by
 * shell_render.h: words after quote removal, redirections, flags), worked
 * out by hand from XCU chapter 2 and the bash manual; syntax errors with
 * their offsets; the limits.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "shell/arena.h"
#include "shell_render.h"

typedef struct {
    const char *src, *want;
} case_t;

static void run_cases(const char *group, const case_t *cs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char *got = sr_render(cs[i].src);
        T_EQ_STR(got, cs[i].want, "%s %zu", group, i);
        free(got);
    }
}

#define RUN(group, arr) run_cases(group, arr, sizeof arr / sizeof arr[0])

/* Words: quoting, escapes, quote removal. */
static const case_t words[] = {
    {"echo hi", "echo hi"},
    {"rm  -rf   d", "rm -rf d"},
    {"\\r\\m -rf d", "rm -rf d"},
    {"'rm' -rf d", "rm -rf d"},
    {"\"rm\" -rf d", "rm -rf d"},
    {"r'm' -r\"f\" d", "rm -rf d"},
    {"echo \"a\"'b'c", "echo abc"},
    {"echo 'a b' \"c d\"", "echo [a b] [c d]"},
    {"echo \"a\\\"b\" \"\\$x\" \"\\q\"", "echo a\"b $x \\q"},
    {"echo 'a\\b'", "echo a\\b"},
    {"echo \\'x\\'", "echo 'x'"},
    {"echo '' \"\"", "echo [] []"},
    {"echo \\\nfoo", "echo foo"},
    {"ec\\\nho foo", "echo foo"},
    {"echo \"a\\\nb\"", "echo ab"},
    {"echo 'a\\\nb'", "echo [a\\\\\\nb]"},
    {"echo $'a\\nb' $'\\t' $'\\x41\\101\\u00e9' $'\\'q' $'\\cA'",
     "echo [a\\nb] [\\t] [AA\\xC3\\xA9] 'q [\\x01]"},
    {"echo $'\\e[1m' $'a\\zb'", "echo [\\x1B[1m] a\\zb"},
    {"echo $\"x y\"", "echo [x y]"},
    {"echo \"$'x'\"", "echo $'x'"},
    {"echo a#b #comment", "echo a#b"},
    {"echo a # c ; rm x", "echo a"},
    {"#only a comment", ""},
    {"echo $x \"$y\" ${z} $1 $@ $? $$ $# $", "echo $x $y ${z} $1 $@ $? $$ $# $"},
    {"echo \\$(rm x)", "ERROR 1 @7: unexpected `(` at byte 7"}, /* bash: syntax error */
};

static const case_t expansions[] = {
    {"echo $(ls)", "ls {S}\necho $(ls)"},
    {"echo \"$(ls -l | wc -l)\" x", "ls -l {S}\nwc -l {SP}\necho [$(ls -l | wc -l)] x"},
    {"echo `date`", "date {S}\necho `date`"},
    {"echo `echo \\`id\\``", "id {S}\necho `id` {S}\necho [`echo \\\\`id\\\\``]"},
    {"echo \"`echo \\\"a b\\\"`\"", "echo [a b] {S}\necho [`echo \\\\\"a b\\\\\"`]"},
    {"echo ${x:-$(rm -rf d)}", "rm -rf d {S}\necho [${x:-$(rm -rf d)}]"},
    {"echo \"${x:-'}'}\" $(id)", "id {S}\necho ${x:-'}'} $(id)"},
    {"echo ${x:-{a}}", "echo ${x:-{a}}"},
    {"echo ${#x} ${x//a/b} ${x#\"}\"}", "echo ${#x} ${x//a/b} ${x#\"}\"}"},
    {"echo $((1 + $(id -u)))", "id -u {S}\necho [$((1 + $(id -u)))]"},
    {"echo $((1+(2*3)))", "echo $((1+(2*3)))"},
    {"echo $( (ls) )", "ls {S}\necho [$( (ls) )]"},
    {"echo $((ls) | wc)", "ls {S}\nwc {SP}\necho [$((ls) | wc)]"},
    {"echo $[1+2]", "echo $[1+2]"},
    {"cat <(ls) >(wc -l)", "ls {S}\nwc -l {S}\ncat <(ls) [>(wc -l)]"},
    {"echo a<(ls)", "ls {S}\necho a<(ls)"},
    {"echo $(case x in a) echo A;; esac)", "echo A {S}\necho [$(case x in a) echo A;; esac)]"},
    {"echo $(echo ')' \")\")", "echo ) ) {S}\necho [$(echo ')' \")\")]"},
    {"echo $(echo a # )\n)", "echo a {S}\necho [$(echo a # )\\n)]"},
    {"x=$(rm -rf d)", "rm -rf d {S}\n[x=$(rm -rf d)] {A}"},
    {"echo $(echo $(echo $(id)))",
     "id {S}\necho $(id) {S}\necho [$(echo $(id))] {S}\necho [$(echo $(echo $(id)))]"},
};

static const case_t assigns[] = {
    {"FOO=1 rm -rf d", "FOO=1 rm -rf d"},
    {"a=1 b+=2 c[1]=3", "a=1 b+=2 c[1]=3 {A}"},
    {"arr=(x $(y) 'z w')", "y {S}\n[arr=(x $(y) z w)] {A}"},
    {"arr=(\n a\n b # c\n)", "[arr=(a b)] {A}"},
    {"echo a=1", "echo a=1"},
    {"A=1 B=\"x y\" env", "A=1 [B=x y] env"},
    {"'A'=1 ls", "A=1 ls"},
    {"a[$(id)]=1", "id {S}\na[$(id)]=1 {A}"},
    {"local a=(x \"y z\" $(id)) b=1", "id {S}\nlocal [a=(x y z $(id))] b=1"},
    {"declare -a x=(1 2); export y=(3); readonly z=(); typeset t=(a)",
     "declare -a [x=(1 2)]\nexport y=(3)\nreadonly z=()\ntypeset t=(a)"},
    {"echo x=(1)", "ERROR 1 @7: unexpected `(` at byte 7"},
};

static const case_t redirs[] = {
    {"echo x >out", "echo x >out {W}"},
    {"echo x > out 2>&1", "echo x >out 2>&1 {W}"},
    {"echo x >>a >|b <>c &>d &>>e", "echo x >>a >|b <>c &>d &>>e {IW}"},
    {"cat <in", "cat <in {I}"},
    {"cat 0<in 3<x", "cat 0<in 3<x {I}"},
    {"cat 3<x", "cat 3<x"},
    {"echo x >/dev/null 2>/dev/stderr", "echo x >/dev/null 2>/dev/stderr"},
    {"echo x >&2 2>&- 3>&1- >/dev/fd/3", "echo x >&2 2>&- 3>&1- >/dev/fd/3"},
    {"printf x >&file", "printf x >&file {W}"},
    {"printf x >&$f", "printf x >&$f {W}"},
    {"echo >$f", "echo >$f {W}"},
    {"exec {fd}>log", "exec {v}>log {W}"},
    {"exec 3<&0 <&3", "exec 3<&0 <&3 {I}"},
    {"cat <<<\"a $(id)\"", "id {S}\ncat <<<[a $(id)] {I}"},
    {">out", ">out {AW}"},
    {"2>/dev/null ls", "ls 2>/dev/null"},
    {"echo 2>(true)", "true {S}\necho 2>(true)"},
    {"echo a 2 >f", "echo a 2 >f {W}"},
    {"ls &>/dev/null", "ls &>/dev/null"},
    /* a process substitution as the target (reported by the rules helper) */
    {"echo x > >(rm -rf d)", "rm -rf d {S}\necho x >[>(rm -rf d)] {W}"},
    {"cat < <(ls)", "ls {S}\ncat <<(ls) {I}"},
    /* the target's commands are not inside the compound */
    {"while read l; do :; done < <(find .)",
     "read l <[<(find .)] {I}\n: <[<(find .)] {I}\nfind . {S}"},
    {"{ ls; } > $(id)", "ls >$(id) {W}\nid {S}"},
};

static const case_t heredocs[] = {
    {"cat <<EOF\nhello $(whoami)\nEOF\necho done",
     "cat <<EOF:[hello $(whoami)\\n] {I}\nwhoami {S}\necho done"},
    {"cat <<'EOF'\n$(rm -rf /)\nEOF", "cat <<EOF:[$(rm -rf /)\\n] {I}"},
    {"cat <<\"E\"F\n$(x)\nEF", "cat <<EF:[$(x)\\n] {I}"},
    {"cat <<\\EOF\n`x`\nEOF", "cat <<EOF:[`x`\\n] {I}"},
    {"cat <<-EOF\n\t\tx\n\tEOF\necho y", "cat <<-EOF:[x\\n] {I}\necho y"},
    {"cat <<EOF\n\tx\n\tEOF\nEOF", "cat <<EOF:[\\tx\\n\\tEOF\\n] {I}"},
    {"cat <<A <<B; echo mid\na\nA\nb\nB\necho after",
     "cat <<A:[a\\n] <<B:[b\\n] {I}\necho mid\necho after"},
    {"cat <<A | sh\nrm -rf /\nA", "cat <<A:[rm -rf /\\n] {I}\nsh {P}"},
    {"cat <<EOF\nno end", "cat <<EOF:[no end] {I}"},
    {"cat <<EOF", "cat <<EOF:[] {I}"},
    {"x=$(cat <<EOF\n$(id)\nEOF\n)",
     "cat <<EOF:[$(id)\\n] {SI}\nid {S}\n[x=$(cat <<EOF\\n$(id)\\nEOF\\n)] {A}"},
    {"while read l; do echo $l; done <<EOF\na\nEOF",
     "read l <<EOF:[a\\n] {I}\necho $l <<EOF:[a\\n] {I}"},
    {"cat <<EOF\n\\$(not) $(yes)\nEOF", "cat <<EOF:[\\\\$(not) $(yes)\\n] {I}\nyes {S}"},
    /* bash ends the body at `EOF)` inside $( ) */
    {"x=$(cat <<EOF\nhi\nEOF)\nls", "cat <<EOF:[hi\\n] {SI}\n[x=$(cat <<EOF\\nhi\\nEOF)] {A}\nls"},
    {"x=`cat <<EOF\nhi\nEOF`", "cat <<EOF:[hi\\n] {SI}\n[x=`cat <<EOF\\nhi\\nEOF`] {A}"},
    /* a body pending when a function's brace closes still belongs to it */
    {"f() { cat <<EOF; }\n$(id)\nEOF", "cat <<EOF:[$(id)\\n] {FI}\nid {SF}"},
};

static const case_t lists[] = {
    {"a | b && c || d & e; f", "a {B}\nb {PB}\nc {B}\nd {B}\ne\nf"},
    {"a |& b", "a\nb {P}"},
    {"a &&\n b ||\n\n c", "a\nb\nc"},
    {"a |\n b", "a\nb {P}"},
    {"a\nb\n\nc;", "a\nb\nc"},
    {"a & b &", "a {B}\nb {B}"},
    {"! true", "true"},
    {"time ls | wc -l", "ls\nwc -l {P}"},
    {"time -p ls", "ls"},
    {"echo time if then", "echo time if then"},
    {"curl x | sh", "curl x\nsh {P}"},
    {"!", ""},
    {"time", ""},
    {"! ; ls", "ls"},
    {"coproc cat f; ls", "cat f {B}\nls"},
    {"coproc X { ls; id; }", "ls {B}\nid {B}"},
    {"coproc (id) >/dev/null", "id >/dev/null {B}"},
    {"echo coproc", "echo coproc"},
    {"a | time b", "a\ntime b {P}"},
};

static const case_t compounds[] = {
    {"{ rm -rf d; }", "rm -rf d"},
    {"{ a; b; } > f", "a >f {W}\nb >f {W}"},
    {"(cd sub && make) 2>&1 | tail", "cd sub 2>&1\nmake 2>&1\ntail {P}"},
    {"a | { b; c; }", "a\nb {P}\nc {P}"},
    {"if true; then rm -rf d; fi", "true\nrm -rf d"},
    {"if a; then b; elif c; then d; else e; fi", "a\nb\nc\nd\ne"},
    {"if a\nthen\n b\nfi", "a\nb"},
    {"while read l; do echo \"$l\"; done < f", "read l <f {I}\necho $l <f {I}"},
    {"until false; do :; done", "false\n:"},
    {"for f in $(ls) a b; do rm \"$f\"; done", "ls {S}\nrm $f"},
    {"for f; do echo $f; done", "echo $f"},
    {"for f do echo $f; done", "echo $f"},
    {"for f\nin a b\ndo echo $f\ndone", "echo $f"},
    {"for f in a; { echo $f; }", "echo $f"},
    {"for ((i=0; i<$(nproc); i++)); do echo $i; done",
     "nproc {S}\n(( [i=0; i<$(nproc); i++] )) {K}\necho $i"},
    {"select x in a b; do break; done", "break"},
    {"case $x in a|b) rm a;; (c) echo c;& *) ls;;& esac", "rm a\necho c\nls"},
    {"case $(id) in\n  *) echo;;\nesac", "id {S}\necho"},
    {"case x in esac", ""},
    {"case x in esac > f", ">f {AW}"},
    {"case x in a) ;; esac", ""},
    {"case x in a) echo a\nesac", "echo a"},
    {"[[ -f x && $(id) =~ ^(a|b)$ ]]", "id {S}\n[[ -f x && $(id) =~ ^(a|b)$ ]] {K}"},
    {"[[ $x == @(a|b) || ( -n $y ) ]]", "[[ $x == @(a|b) || ( -n $y ) ]] {K}"},
    {"[[ a < b ]]", "[[ a < b ]] {K}"},
    {"(( x = $(date +%s) ))", "date +%s {S}\n(( [x = $(date +%s)] )) {K}"},
    {"((x++)) && echo y", "(( x++ )) {K}\necho y"},
    {"( (ls) )", "ls"},
    {"((ls) | wc)", "ls\nwc {P}"},
    {"echo { }", "echo { }"},
    {"{ echo }; }", "echo }"},
};

static const case_t functions[] = {
    {"f() { rm -rf d; }; f", "rm -rf d {F}\nf"},
    {"function g { ls; }", "ls {F}"},
    {"function h() ( pwd )", "pwd {F}"},
    {"k() if true; then :; fi", "true {F}\n: {F}"},
    {"f()\n{\n ls\n}", "ls {F}"},
    {"f() { ls; } > log", "ls >log {FW}"},
    {"f() { g() { id; }; }", "id {F}"},
};

static void test_functions_list(void)
{
    agti_sh_script *s = NULL;
    const char *src = "a; f() { b; g() { c; }; d; }; e";
    T_EQ_INT(agti_sh_parse(src, strlen(src), &s, NULL), AGTI_SH_OK, "nested functions parse");
    if (!s)
        return;
    T_EQ_INT(agti_sh_nfuncs(s), 2, "two functions");
    const agti_sh_func *f = agti_sh_func_at(s, 0), *g = agti_sh_func_at(s, 1);
    T_EQ_STR(f->name, "f", "first function f");
    T_EQ_INT(f->first_cmd, 1, "f starts at b");
    T_EQ_INT(f->ncmds, 3, "f holds b c d");
    T_EQ_STR(g->name, "g", "second function g");
    T_EQ_INT(g->first_cmd, 2, "g starts at c");
    T_EQ_INT(g->ncmds, 1, "g holds c");
    T_EQ_INT(agti_sh_cmd_at(s, 0)->function, -1, "a outside");
    T_EQ_INT(agti_sh_cmd_at(s, 1)->function, 0, "b in f");
    T_EQ_INT(agti_sh_cmd_at(s, 2)->function, 1, "c in g");
    T_EQ_INT(agti_sh_cmd_at(s, 3)->function, 0, "d in f");
    T_EQ_INT(agti_sh_cmd_at(s, 4)->function, -1, "e outside");
    agti_sh_free(s);
}

static const case_t errors[] = {
    {"echo \"unterminated", "ERROR 1 @5: unterminated double quote starting at byte 5"},
    {"echo 'x", "ERROR 1 @5: unterminated single quote starting at byte 5"},
    {"echo $(ls", "ERROR 1 @5: unterminated $(...) starting at byte 5"},
    {"echo `ls", "ERROR 1 @5: unterminated backquote starting at byte 5"},
    {"echo ${a", "ERROR 1 @5: unterminated ${...} starting at byte 5"},
    {"echo $'a", "ERROR 1 @5: unterminated $'...' quote starting at byte 5"},
    {"fi", "ERROR 1 @0: unexpected `fi` at byte 0"},
    {"echo a )", "ERROR 1 @7: unexpected `)` at byte 7"},
    {"if true; fi", "ERROR 1 @9: `then` expected after the condition of `if` (started at byte 0), "
                    "found `fi` at byte 9"},
    {"{ echo }",
     "ERROR 1 @8: `}` expected to close `{` (started at byte 0), found end of input at byte 8"},
    {"a &&", "ERROR 1 @4: unexpected end of input at byte 4 after `&&`"},
    {"a | ", "ERROR 1 @4: unexpected end of input at byte 4 after `|`"},
    {"cat <", "ERROR 1 @5: the redirection at byte 4 needs a target word, found end of input"},
    {"; a", "ERROR 1 @0: unexpected `;` at byte 0"},
    {"a ;; b", "ERROR 1 @2: unexpected `;;` at byte 2"},
    {"echo @(a)", "ERROR 1 @6: unexpected `(` at byte 6"},
    {"f() echo", "ERROR 1 @4: the body of function `f` must be a compound command ({ ...; }, ( ... "
                 "), if, ...): found `e` at byte 4"},
    {"echo $((1)", "ERROR 1 @5: unterminated $(...) starting at byte 5"},
    {"true | ! false", "ERROR 1 @7: unexpected `!` at byte 7"}, /* as bash */
};

static void test_error_nul(void)
{
    agti_sh_script *s = NULL;
    agti_sh_error e;
    T_EQ_INT(agti_sh_parse("ls\0rm", 5, &s, &e), AGTI_SH_ESYNTAX, "NUL byte refused");
    T_EQ_INT(e.offset, 2, "NUL offset");
    T_CHECK(s == NULL, "no script on error");
    /* len is authoritative: the text need not be NUL-terminated */
    T_EQ_INT(agti_sh_parse("ls -l; rm", 5, &s, &e), AGTI_SH_OK, "prefix parse");
    if (s) {
        T_EQ_INT(agti_sh_ncmds(s), 1, "only ls -l inside len");
        agti_sh_free(s);
    }
}

static char *repeat(const char *head, const char *unit, size_t n, const char *tail)
{
    agti_buf b = AGTI_BUF_INIT;
    agti_buf_puts(&b, head);
    for (size_t i = 0; i < n; i++)
        agti_buf_puts(&b, unit);
    agti_buf_puts(&b, tail);
    return agti_buf_detach(&b);
}

static int parse_status(const char *src, size_t *ncmds, agti_sh_error *e)
{
    agti_sh_script *s = NULL;
    int rc = agti_sh_parse(src, strlen(src), &s, e);
    if (ncmds)
        *ncmds = s ? agti_sh_ncmds(s) : 0;
    agti_sh_free(s);
    return rc;
}

/* 100,000 levels of each nesting construct: refused at level 256 with
 * ETOODEEP, without recursing further (the C stack stays bounded). */
static void test_deep(void)
{
    static const char *const units[] = {
        "$(",     "{ ",     "\"$(",  "${x:-",         "if ",    "<(",       "f() { ",
        "$(( $(", "while ", "a | (", "case x in x) ", "[[ $( ", "\"${x:-\""};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        size_t n = strstr(units[i], "case") ? 60000 : 100000;
        char *src = repeat("", units[i], n, "");
        agti_sh_error e;
        int rc = parse_status(src, NULL, &e);
        T_EQ_INT(rc, AGTI_SH_ETOODEEP, "deep %s refused as too deep", units[i]);
        T_CHECK(strstr(e.message, "deeper than 256") != NULL, "deep %s: message names the limit",
                units[i]);
        free(src);
    }
    /* a re-parse at depth 250 has 6 levels left */
    agti_sh_script *s = NULL;
    T_EQ_INT(agti_sh_parse_at_depth("a $(b $(c))", 11, 250, &s, NULL), AGTI_SH_OK,
             "depth 250 + 2 levels parses");
    agti_sh_free(s);
    s = NULL;
    char *seven = repeat("", "$(", 7, "");
    T_EQ_INT(agti_sh_parse_at_depth(seven, 12, 250, &s, NULL), AGTI_SH_ESYNTAX,
             "depth 250 + 6 levels: unterminated, not too deep");
    T_EQ_INT(agti_sh_parse_at_depth(seven, 14, 250, &s, NULL), AGTI_SH_ETOODEEP,
             "depth 250 + 7 levels refused");
    free(seven);
    T_EQ_INT(agti_sh_parse_at_depth("ls", 2, AGTI_SH_MAX_DEPTH, &s, NULL), AGTI_SH_ETOODEEP,
             "re-parse at the limit refused");
    T_CHECK(s == NULL, "no script when refused");
    /* 255 levels are fine */
    char *src = repeat("", "$(", 255, "ls");
    char *tail = repeat(src, ")", 255, "");
    size_t n = 0;
    T_EQ_INT(parse_status(tail, &n, NULL), AGTI_SH_OK, "255 nested $( parse");
    T_EQ_INT(n, 256, "255 nested $(: 256 commands");
    free(src);
    free(tail);
}

static void test_limits(void)
{
    agti_sh_error e;
    /* over 1 MiB: refused before anything is parsed */
    char *big = repeat("", "a", AGTI_SH_MAX_INPUT + 1, "");
    T_EQ_INT(parse_status(big, NULL, &e), AGTI_SH_ETOOLONG, "1 MiB + 1 refused");
    T_CHECK(strstr(e.message, "over the limit") != NULL, "too long: message");
    big[AGTI_SH_MAX_INPUT] = '\0';
    size_t n = 0;
    T_EQ_INT(parse_status(big, &n, NULL), AGTI_SH_OK, "exactly 1 MiB accepted");
    T_EQ_INT(n, 1, "1 MiB word: one command");
    free(big);
    /* 10,000 commands fine, 10,001 refused */
    char *many = repeat("", "a;", AGTI_SH_MAX_COMMANDS, "");
    T_EQ_INT(parse_status(many, &n, NULL), AGTI_SH_OK, "10000 commands accepted");
    T_EQ_INT(n, AGTI_SH_MAX_COMMANDS, "10000 commands listed");
    free(many);
    many = repeat("", "a;", AGTI_SH_MAX_COMMANDS, "b");
    T_EQ_INT(parse_status(many, NULL, &e), AGTI_SH_ETOOMANY, "10001 commands refused");
    T_EQ_INT(e.offset, 2 * AGTI_SH_MAX_COMMANDS, "too many: offset of the 10001st");
    free(many);
    /* a word copied at every level of 200 nested substitutions: the arena
     * budget refuses it instead of growing to 200 times the input */
    char *dup = repeat("", "$(echo ", 200, "");
    char *mid = repeat(dup, "a ", 300000, "");
    char *all = repeat(mid, ")", 200, "");
    T_EQ_INT(parse_status(all, NULL, &e), AGTI_SH_ENOMEM, "quadratic copy refused");
    T_CHECK(strstr(e.message, "times its length") != NULL, "budget message");
    free(dup);
    free(mid);
    free(all);
}

/* 1 MB inputs that are hard in other ways all finish (no time asserted). */
static void test_pathological(void)
{
    static const struct {
        const char *head, *unit, *tail;
        size_t n;
        int rc;
    } cs[] = {
        {"", "$((", "", 300000, AGTI_SH_ETOODEEP},
        {"", "((", "", 500000, AGTI_SH_ESYNTAX},
        {"echo ", "a ", "", 500000, AGTI_SH_OK},
        {"cat <<EOF\n", "line $x $(\n", "", 90000, AGTI_SH_ETOODEEP},
        {"cat <<EOF\n", "line $x $(id)\n", "EOF\n", 70000, AGTI_SH_ETOOMANY},
        {"cat", " <<E", "\n", 200000, AGTI_SH_OK},
        {"echo \"", "\\\"", "\"", 300000, AGTI_SH_OK},
        {"x=(", "a ", ")", 400000, AGTI_SH_OK},
        {"[[ ", "( ", "", 400000, AGTI_SH_ESYNTAX},
        {"echo ", "``", "", 4000, AGTI_SH_OK},
        {"", "'", "", 1000000, AGTI_SH_OK},
        {"echo $(( ", "(1)+", "1 ))", 200000, AGTI_SH_OK},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        char *src = repeat(cs[i].head, cs[i].unit, cs[i].n, cs[i].tail);
        T_EQ_INT(parse_status(src, NULL, NULL), cs[i].rc, "pathological %zu (%zu repeats)", i,
                 cs[i].n);
        free(src);
    }
}

/* The flags of one word: the command's argv[1] (or assigns[0] when the
 * command has no argv[1]). */
static void check_flags(const char *src, unsigned want)
{
    agti_sh_script *s = NULL;
    if (!T_CHECK(agti_sh_parse(src, strlen(src), &s, NULL) == AGTI_SH_OK, "flags: %s parses", src))
        return;
    const agti_sh_cmd *c = agti_sh_cmd_at(s, agti_sh_ncmds(s) - 1);
    const agti_sh_word *w = c->argc > 1 ? &c->argv[1] : c->argc == 1 ? &c->argv[0] : &c->assigns[0];
    T_EQ_INT(w->flags, want, "flags of the word in %s", src);
    agti_sh_free(s);
}

static void test_flags(void)
{
    const unsigned D = AGTI_SHW_DYNAMIC, U = AGTI_SHW_UNQUOTED_EXP, G = AGTI_SHW_GLOB,
                   B = AGTI_SHW_BRACE, T = AGTI_SHW_TILDE, Q = AGTI_SHW_QUOTED, E = AGTI_SHW_EVAL;
    check_flags("echo plain", 0);
    check_flags("echo $x", D | U);
    check_flags("echo \"$x\"", D | Q);
    check_flags("echo \"a\"$x", D | U | Q);
    check_flags("echo $(ls)", D | U);
    check_flags("echo \"`ls`\"", D | Q);
    check_flags("echo <(ls)", D | U);
    check_flags("echo *.c", G);
    check_flags("echo '*.c'", Q);
    check_flags("echo \\*", Q);
    check_flags("echo [ab]", G);
    check_flags("echo [", 0);
    check_flags("echo a]", 0);
    check_flags("echo {a,b}", B);
    check_flags("echo {1..3}", B);
    check_flags("echo {}", 0);
    check_flags("echo '{a,b}'", Q);
    check_flags("{rm,-rf,d}", B);
    check_flags("echo ~/x", T);
    check_flags("echo a~", 0);
    check_flags("echo \\~", Q);
    check_flags("x=~/a", T);
    check_flags("PATH=/a:~/b", T);
    check_flags("echo $'a'", Q);
    check_flags("echo $((x))", D | U | E);
    check_flags("echo $[1]", D | U | E);
    check_flags("echo ${a[i]}", D | U | E);
    check_flags("echo \"${a[@]}\"", D | Q);
    check_flags("echo ${a[*]}", D | U);
    check_flags("echo ${s:1}", D | U | E);
    check_flags("echo ${s: -1}", D | U | E);
    check_flags("echo ${s:-1}", D | U);
    check_flags("echo ${!x}", D | U | E);
    check_flags("echo ${x@P}", D | U | E);
    check_flags("echo ${x@Q}", D | U);
    check_flags("echo ${#x}", D | U);
    check_flags("echo ${#a[i]}", D | U | E);
}

/* The tree as text: L[child sep child sep] with sep one of ; & n (newline)
 * or nothing, AND(a,b) OR(a,b), P(a|b) with ! and T(ime) prefixes, S<cmd>,
 * SUB(..) GRP(..) IF(..) WHILE(..) UNTIL(..) FOR:var(..) SEL:var(..)
 * CASE(..) FN:name(..) COND<cmd> ARITH<cmd> CO:name(..), and >N for N
 * redirections on a compound. */
static void render_node(agti_buf *b, const agti_sh_node *n)
{
    static const char *const names[] = {"L",   "AND", "OR",    "P",     "S",   "SUB",
                                        "GRP", "IF",  "WHILE", "UNTIL", "FOR", "CASE",
                                        "SEL", "FN",  "COND",  "ARITH", "CO"};
    if (n->kind == AGTI_SHN_SIMPLE || n->kind == AGTI_SHN_COND || n->kind == AGTI_SHN_ARITH) {
        agti_buf_printf(b, "%s%d", names[n->kind], n->cmd);
    } else {
        if (n->kind == AGTI_SHN_PIPELINE)
            agti_buf_printf(b, "%s%s", n->bang ? "!" : "", n->timed ? "T" : "");
        agti_buf_puts(b, names[n->kind]);
        if (n->kind == AGTI_SHN_FOR || n->kind == AGTI_SHN_SELECT || n->kind == AGTI_SHN_FUNCTION ||
            n->kind == AGTI_SHN_COPROC)
            agti_buf_printf(b, ":%s", n->word.value);
        agti_buf_putc(b, n->kind == AGTI_SHN_LIST ? '[' : '(');
        for (size_t i = 0; i < n->nchildren; i++) {
            if (i && n->kind != AGTI_SHN_LIST)
                agti_buf_putc(b, n->kind == AGTI_SHN_PIPELINE ? '|' : ',');
            render_node(b, n->children[i]);
            if (n->kind == AGTI_SHN_LIST && n->sep[i])
                agti_buf_putc(b, n->sep[i] == '\n' ? 'n' : n->sep[i]);
        }
        agti_buf_putc(b, n->kind == AGTI_SHN_LIST ? ']' : ')');
    }
    if (n->nredirs)
        agti_buf_printf(b, ">%zu", n->nredirs);
}

static const case_t trees[] = {
    {"a", "L[S0]"},
    {"a; b & c\nd", "L[S0;S1&S2nS3]"},
    {"a && b || c", "L[OR(AND(S0,S1),S2)]"},
    {"! a | b |& c", "L[!P(S0|S1|S2)]"},
    {"time a", "L[TP(S0)]"},
    {"(a) && { b; }", "L[AND(SUB(L[S0]),GRP(L[S1;]))]"},
    {"if a; then b; elif c; then d; else e; fi", "L[IF(L[S0;],L[S1;],L[S2;],L[S3;],L[S4;])]"},
    {"while a; do b; done >f", "L[WHILE(L[S0;],L[S1;])>1]"},
    {"until a; do b; done", "L[UNTIL(L[S0;],L[S1;])]"},
    {"for x in 1 2; do a; done", "L[FOR:x(L[S0;])]"},
    {"select y; do a; done", "L[SEL:y(L[S0;])]"},
    {"case k in a) x;; b) ;; esac", "L[CASE(L[S0],L[])]"}, /* ;; is not a separator */
    {"f() { a; }", "L[FN:f(GRP(L[S0;]))]"},
    {"[[ a ]] && ((b))", "L[AND(COND0,ARITH1)]"},
    {"coproc n { a; }", "L[CO:n(GRP(L[S0;]))]"},
    {"echo $(a; b)", "L[S2]"},
};

static void test_trees(void)
{
    for (size_t i = 0; i < sizeof trees / sizeof trees[0]; i++) {
        agti_sh_script *s = NULL;
        agti_buf b = AGTI_BUF_INIT;
        if (agti_sh_parse(trees[i].src, strlen(trees[i].src), &s, NULL) == AGTI_SH_OK)
            render_node(&b, agti_sh_root(s));
        T_EQ_STR(agti_buf_cstr(&b), trees[i].want, "tree %zu", i);
        agti_buf_free(&b);
        agti_sh_free(s);
    }
    /* the for list, case words and patterns are on the nodes */
    agti_sh_script *s = NULL;
    const char *src = "for x in a 'b c'; do :; done; case $k in p|q) ;; esac";
    if (T_CHECK(agti_sh_parse(src, strlen(src), &s, NULL) == AGTI_SH_OK, "for/case parse")) {
        const agti_sh_node *f = agti_sh_root(s)->children[0], *c = agti_sh_root(s)->children[1];
        T_EQ_INT(f->nwords, 2, "for: two words");
        T_EQ_STR(f->words[1].value, "b c", "for: second word");
        T_CHECK(f->has_in, "for: has in");
        T_EQ_STR(c->word.value, "$k", "case subject");
        T_EQ_INT(c->children[0]->nwords, 2, "case item: two patterns");
        T_EQ_STR(c->children[0]->words[1].value, "q", "case item: pattern q");
        T_EQ_INT(c->children[0]->case_term, AGTI_SH_CASE_BREAK, "case item: ;;");
        agti_sh_free(s);
    }
}

/* Source spans: words, commands, a here-doc body's command, a backquote's. */
static void test_offsets(void)
{
    agti_sh_script *s = NULL;
    const char *src = "A=1  ls 'a b' >f; echo $(id -u)\ncat <<E\n$(whoami)\nE\n";
    if (!T_CHECK(agti_sh_parse(src, strlen(src), &s, NULL) == AGTI_SH_OK, "offsets parse"))
        return;
    T_EQ_INT(agti_sh_ncmds(s), 5, "offsets: five commands");
    const agti_sh_cmd *ls = agti_sh_cmd_at(s, 0);
    T_EQ_INT(ls->offset, 0, "ls command starts at A=1");
    T_EQ_INT(ls->length, 16, "ls command ends after >f");
    T_EQ_INT(ls->assigns[0].offset, 0, "A=1 at 0");
    T_EQ_INT(ls->assigns[0].length, 3, "A=1 length");
    T_EQ_INT(ls->argv[1].offset, 8, "'a b' at 8");
    T_EQ_INT(ls->argv[1].length, 5, "'a b' is 5 bytes of source");
    T_EQ_INT(ls->redirs[0].target.offset, 15, "f at 15");
    const agti_sh_cmd *id = agti_sh_cmd_at(s, 1);
    T_EQ_STR(id->argv[0].value, "id", "second command is id");
    T_EQ_INT(id->offset, 25, "id inside $( at 25");
    T_EQ_INT(id->length, 5, "id -u length");
    const agti_sh_cmd *who = agti_sh_cmd_at(s, 4);
    T_EQ_STR(who->argv[0].value, "whoami", "here-doc command");
    T_EQ_INT(who->offset, 42, "whoami in the body at 42");
    agti_sh_free(s);
    src = "echo `ls -l`";
    if (T_CHECK(agti_sh_parse(src, strlen(src), &s, NULL) == AGTI_SH_OK, "backquote parse")) {
        T_EQ_INT(agti_sh_cmd_at(s, 0)->argv[1].offset, 9, "-l inside backquotes at 9");
        agti_sh_free(s);
    }
}

/* The first command of a script is copied off the parser's word and
 * redirection stacks while one of them was never pushed to (still NULL):
 * `ls` has no redirection, `>f` no word, `X=1` no command word. Under the
 * sanitizer build this caught `NULL + 0` (fuzz_shell, fuzz_rule: "applying
 * zero offset to null pointer" in finish_simple). */
static void test_first_command(void)
{
    agti_sh_script *s = NULL;
    if (T_CHECK(agti_sh_parse("ls", 2, &s, NULL) == AGTI_SH_OK, "first command: ls parses")) {
        const agti_sh_cmd *c = agti_sh_cmd_at(s, 0);
        T_EQ_INT(agti_sh_ncmds(s), 1, "ls: one command");
        T_EQ_INT(c->argc, 1, "ls: one word");
        T_EQ_STR(c->argv[0].value, "ls", "ls: the word");
        T_CHECK(c->nredirs == 0 && c->redirs == NULL, "ls: no redirection");
        T_CHECK(c->nassigns == 0 && c->assigns == NULL, "ls: no assignment");
        agti_sh_free(s);
    }
    if (T_CHECK(agti_sh_parse(">f", 2, &s, NULL) == AGTI_SH_OK, "first command: >f parses")) {
        const agti_sh_cmd *c = agti_sh_cmd_at(s, 0);
        T_CHECK(c->argc == 0 && c->argv == NULL, ">f: no word");
        T_EQ_INT(c->nredirs, 1, ">f: one redirection");
        T_EQ_INT(c->redirs[0].op, AGTI_SHR_OUT, ">f: >");
        T_EQ_STR(c->redirs[0].target.value, "f", ">f: into f");
        T_CHECK((c->flags & AGTI_SHC_ASSIGN_ONLY) != 0, ">f: no command word");
        agti_sh_free(s);
    }
    if (T_CHECK(agti_sh_parse("X=1", 3, &s, NULL) == AGTI_SH_OK, "first command: X=1 parses")) {
        const agti_sh_cmd *c = agti_sh_cmd_at(s, 0);
        T_EQ_INT(c->nassigns, 1, "X=1: one assignment");
        T_EQ_STR(c->assigns[0].value, "X=1", "X=1: the assignment");
        T_CHECK(c->argc == 0 && c->nredirs == 0 && c->redirs == NULL, "X=1: nothing else");
        agti_sh_free(s);
    }
}

/* The arena under the parse tree and the analysis: 16-byte aligned bump
 * allocation, chunks doubling from min_cap to max_cap, a larger request in
 * a chunk of its own, and the same capacities on a second round, when
 * the chunks of the first come back from the pool (the parser's memory
 * budget counts them). */
static void test_arena(void)
{
    for (int round = 1; round <= 2; round++) {
        agti_sh_arena a;
        agti_sh_arena_init(&a, 16, 64);
        T_EQ_INT(agti_sh_arena_need(&a, 1), 16, "arena %d: a first byte needs a 16-byte chunk",
                 round);
        unsigned char *x = agti_sh_arena_alloc(&a, 1);
        unsigned char *y = agti_sh_arena_alloc(&a, 1);
        T_CHECK(x && y && ((uintptr_t)x & 15u) == 0 && ((uintptr_t)y & 15u) == 0,
                "arena %d: allocations aligned to 16", round);
        T_EQ_INT(a.bytes, 16 + 32, "arena %d: the second chunk doubles", round);
        T_EQ_INT(agti_sh_arena_need(&a, 16), 0, "arena %d: 16 more bytes fit", round);
        unsigned char *z = agti_sh_arena_alloc(&a, 17);
        T_EQ_INT(a.bytes, 16 + 32 + 64, "arena %d: 32 bytes did not fit: a 64-byte chunk", round);
        T_EQ_INT(agti_sh_arena_need(&a, 200), 208, "arena %d: past max_cap a chunk of its own",
                 round);
        unsigned char *big = agti_sh_arena_alloc(&a, 200);
        T_EQ_INT(a.bytes, 16 + 32 + 64 + 208, "arena %d: 208-byte chunk", round);
        if (x && y && z && big) {
            memset(z, 'z', 17);
            memset(big, 'b', 200);
            *x = 'x';
            *y = 'y';
            T_CHECK(*x == 'x' && *y == 'y' && z[16] == 'z' && big[199] == 'b',
                    "arena %d: the blocks do not overlap", round);
        }
        agti_sh_arena_free(&a);
        T_CHECK(a.chunks == NULL && a.bytes == 0 && a.next_cap == 16,
                "arena %d: freed and empty again", round);
    }
}

int main(void)
{
    RUN("words", words);
    RUN("expansions", expansions);
    RUN("assigns", assigns);
    RUN("redirs", redirs);
    RUN("heredocs", heredocs);
    RUN("lists", lists);
    RUN("compounds", compounds);
    RUN("functions", functions);
    test_functions_list();
    RUN("errors", errors);
    test_error_nul();
    test_deep();
    test_limits();
    test_pathological();
    test_flags();
    test_trees();
    test_offsets();
    test_first_command();
    test_arena();
    return t_done();
}
