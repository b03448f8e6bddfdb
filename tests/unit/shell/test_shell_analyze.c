/*
 * Shell analysis: for each line, the commands as they would run, one per
 * line: argv after the wrappers (shell_render.h word style), then
 * " <wrappers>" when some were seen through, " @path" when the command word
 * held a '/', " ^N" for the exec that ran it (sh -c, eval, find -exec), and
 * the flags in braces: N dynamic name, E eval/sh -c string not static,
 * S source, I shell reading stdin, A dynamic args, U unknown wrapper
 * options, W writes a file, F script file, M more args at run time,
 * C container, X the string did not parse, V after a change of which
 * program or code runs (PATH=...), R evaluates a variable's value as code,
 * B a function passed through the environment. Worked out by hand from
 * the manuals of each wrapper and checked against what bash runs.
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "shell_render.h"

/* this test renders execs, not the parser's command list */
static char *(*const unused_render)(const char *)__attribute__((unused)) = sr_render;

static void render_exec(agti_buf *b, const agti_sh_exec *e)
{
    for (size_t i = 0; i < e->argc; i++) {
        if (i)
            agti_buf_putc(b, ' ');
        sr_word(b, e->argv[i], strlen(e->argv[i]));
    }
    if (e->wrappers)
        agti_buf_printf(b, " <%s>", e->wrappers);
    if (e->path)
        agti_buf_printf(b, " @%s", e->path);
    if (e->parent >= 0)
        agti_buf_printf(b, " ^%d", e->parent);
    static const struct {
        unsigned f;
        char c;
    } fl[] = {
        {AGTI_SHX_DYNAMIC_NAME, 'N'}, {AGTI_SHX_EVAL_DYNAMIC, 'E'}, {AGTI_SHX_SOURCE, 'S'},
        {AGTI_SHX_SHELL_STDIN, 'I'},  {AGTI_SHX_DYNAMIC_ARGS, 'A'}, {AGTI_SHX_WRAPPER_UNKNOWN, 'U'},
        {AGTI_SHX_WRITES, 'W'},       {AGTI_SHX_SHELL_FILE, 'F'},   {AGTI_SHX_MORE_ARGS, 'M'},
        {AGTI_SHX_CONTAINER, 'C'},    {AGTI_SHX_SYNTAX, 'X'},       {AGTI_SHX_ENV_CODE, 'V'},
        {AGTI_SHX_ARITH, 'R'},        {AGTI_SHX_ENV_FUNC, 'B'}};
    bool open = false;
    for (size_t i = 0; i < sizeof fl / sizeof fl[0]; i++)
        if (e->flags & fl[i].f) {
            agti_buf_puts(b, open ? "" : " {");
            agti_buf_putc(b, fl[i].c);
            open = true;
        }
    if (open)
        agti_buf_putc(b, '}');
}

static char *analyze(const char *src)
{
    agti_sh_script *s = NULL;
    agti_sh_error err;
    int rc = agti_sh_parse(src, strlen(src), &s, &err);
    if (rc != AGTI_SH_OK)
        return agti_aprintf("PARSE %d: %s", rc, err.message);
    agti_sh_analysis *a = NULL;
    rc = agti_sh_analyze(s, &a, &err);
    if (rc != AGTI_SH_OK) {
        agti_sh_free(s);
        return agti_aprintf("ERROR %d: %s", rc, err.message);
    }
    agti_buf b = AGTI_BUF_INIT;
    for (size_t i = 0; i < agti_sh_nexecs(a); i++) {
        if (i)
            agti_buf_putc(&b, '\n');
        render_exec(&b, agti_sh_exec_at(a, i));
    }
    agti_sh_analysis_free(a);
    agti_sh_free(s);
    return agti_buf_detach(&b);
}

typedef struct {
    const char *src, *want;
} case_t;

static void run_cases(const char *group, const case_t *cs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char *got = analyze(cs[i].src);
        agti_buf name = AGTI_BUF_INIT; /* a test name is one line */
        for (const char *p = cs[i].src; *p; p++)
            agti_buf_puts(&name, *p == '\n' ? "\\n" : (char[]){*p, '\0'});
        T_EQ_STR(got, cs[i].want, "%s %zu: %s", group, i, agti_buf_cstr(&name));
        agti_buf_free(&name);
        free(got);
    }
}

#define RUN(group, arr) run_cases(group, arr, sizeof arr / sizeof arr[0])

/* Words and plain commands: quote removal, basenames, assignments. */
static const case_t basics[] = {
    {"rm -rf d", "rm -rf d"},
    {"rm  -rf   d", "rm -rf d"},
    {"'rm' -rf d", "rm -rf d"},
    {"\\rm -rf d", "rm -rf d"},
    {"/bin/rm -rf d", "rm -rf d @/bin/rm"},
    {"./scripts/x.sh a", "x.sh a @./scripts/x.sh"},
    {"FOO=1 rm -rf d", "rm -rf d"},
    {"{ rm -rf d; }", "rm -rf d"},
    {"( rm -rf d )", "rm -rf d"},
    {"if true; then rm -rf d; fi", "true\nrm -rf d"},
    {"while false; do rm -rf d; done", "false\nrm -rf d"},
    {"for f in a b; do rm -rf $f; done", "rm -rf $f {A}"},
    {"case x in x) rm -rf d;; esac", "rm -rf d"},
    {"X=1", ""},
    {"X=$(rm -rf d)", "rm -rf d"},
    {"echo $(rm -rf d)", "rm -rf d\necho [$(rm -rf d)] {A}"},
    {"cat <(rm -rf d)", "rm -rf d\ncat [<(rm -rf d)] {A}"},
    {"[[ -f x ]] && ls", "ls"},
    {"git status && git log -1 | head -5", "git status\ngit log -1\nhead -5"},
};

/* Dynamic command words and other undecidable forms. */
static const case_t dynamic[] = {
    {"X=rm; $X -rf d", "$X -rf d {N}"},
    {"$(echo rm) -rf d", "echo rm\n[$(echo rm)] -rf d {N}"},
    {"\"$X\" a", "$X a {N}"},
    {"{rm,-rf,d}", "{rm,-rf,d} {N}"},
    {"/bin/r? -rf d", "/bin/r? -rf d {N}"},
    {"source ./env.sh", "source ./env.sh {S}"},
    {". ./env.sh", ". ./env.sh {S}"},
    {"rm $FLAGS d", "rm $FLAGS d {A}"},
};

/* Wrappers seen through to the command they run. */
static const case_t wrap[] = {
    {"timeout 5 rm -rf d", "rm -rf d <timeout>"},
    {"timeout -s KILL -k 2 5 rm -rf d", "rm -rf d <timeout>"},
    {"timeout --signal=KILL 5s rm -rf d", "rm -rf d <timeout>"},
    {"nohup rm -rf d", "rm -rf d <nohup>"},
    {"env rm -rf d", "rm -rf d <env>"},
    {"env -i A=1 B=2 rm -rf d", "rm -rf d <env>"},
    {"env -u HOME -- rm -rf d", "rm -rf d <env>"},
    {"env - PATH=/bin rm -rf d", "rm -rf d <env> {V}"}, /* PATH: look-up changed */
    {"env", "env"},
    {"env A=1", "env A=1"},
    {"command rm -rf d", "rm -rf d <command>"},
    {"command -v rm", "command -v rm"},
    {"builtin cd x", "cd x <builtin>"},
    {"exec rm -rf d", "rm -rf d <exec>"},
    {"exec -a name rm -rf d", "rm -rf d <exec>"},
    {"time rm -rf d", "rm -rf d"},
    {"nice -n 5 rm -rf d", "rm -rf d <nice>"},
    {"nice -5 rm -rf d", "rm -rf d <nice>"},
    {"nice rm -rf d", "rm -rf d <nice>"},
    {"ionice -c 3 rm -rf d", "rm -rf d <ionice>"},
    {"ionice -p 42", "ionice -p 42"},
    {"stdbuf -oL rm -rf d", "rm -rf d <stdbuf>"},
    {"setsid -f rm -rf d", "rm -rf d <setsid>"},
    {"chrt -f 10 rm -rf d", "rm -rf d <chrt>"},
    {"taskset -c 0 rm -rf d", "rm -rf d <taskset>"},
    {"taskset 0x1 rm -rf d", "rm -rf d <taskset>"},
    {"sudo rm -rf d", "rm -rf d <sudo>"},
    {"sudo -u x rm -rf d", "rm -rf d <sudo>"},
    {"sudo -E -H -u root VAR=1 rm -rf d", "rm -rf d <sudo>"},
    {"sudo -l", "sudo -l"},
    {"doas -u x rm -rf d", "rm -rf d <doas>"},
    {"sudo timeout 5 nice /bin/rm -rf d", "rm -rf d <sudo timeout nice> @/bin/rm"},
    {"xargs rm -rf", "rm -rf <xargs> {M}"},
    {"find . | xargs -0 -n 1 rm", "find .\nrm <xargs> {M}"},
    {"xargs -I{} rm {}", "rm {} <xargs> {AM}"},
    {"xargs", "xargs"},
    {"timeout --frobnicate 5 rm -rf d", "timeout --frobnicate 5 rm -rf d {U}"},
    {"sudo -Z rm -rf d", "sudo -Z rm -rf d {U}"},
    {"env $OPTS rm -rf d", "env $OPTS rm -rf d {AU}"},
    {"timeout 5 $CMD", "$CMD <timeout> {N}"},
    {"busybox rm -rf d", "rm -rf d <busybox>"},
    {"chroot /srv rm -rf d", "rm -rf d <chroot>"},
    {"watch -x rm -rf d", "rm -rf d <watch>"},
    {"noglob rm -rf d", "rm -rf d <noglob>"},
    {"/usr/bin/time -f %e rm -rf d", "rm -rf d <time>"},
    {"command time -p rm -rf d", "rm -rf d <command time>"},
};

/* find -exec and friends: find, then each command it runs (^0). */
static const case_t find[] = {
    {"find . -name x -exec rm -rf {} \\;", "find . -name x -exec rm -rf {} ;\nrm -rf {} ^0 {A}"},
    {"find . -exec rm {} +", "find . -exec rm {} +\nrm {} ^0 {AM}"},
    {"find . -execdir sh -c 'rm -rf d' \\;",
     "find . -execdir sh -c [rm -rf d] ;\nsh -c [rm -rf d] ^0 {C}\nrm -rf d ^1"},
    {"find . -ok rm {} ';' -o -okdir ls \\;",
     "find . -ok rm {} ; -o -okdir ls ;\nrm {} ^0 {A}\nls ^0"},
    {"find . -delete", "find . -delete"},
};

/* Strings run by a shell, eval, su -c, watch, env -S, trap. */
static const case_t strings[] = {
    {"bash -c 'rm -rf d'", "bash -c [rm -rf d] {C}\nrm -rf d ^0"},
    {"sh -c \"rm -rf d; ls\"", "sh -c [rm -rf d; ls] {C}\nrm -rf d ^0\nls ^0"},
    {"bash -lc 'rm -rf d'", "bash -lc [rm -rf d] {C}\nrm -rf d ^0"},
    {"bash -o pipefail -c 'rm -rf d'", "bash -o pipefail -c [rm -rf d] {C}\nrm -rf d ^0"},
    {"zsh -c 'bash -c \"rm -rf d\"'",
     "zsh -c [bash -c \"rm -rf d\"] {C}\nbash -c [rm -rf d] ^0 {C}\nrm -rf d ^1"},
    {"bash -c \"$CMD\"", "bash -c $CMD {EAC}"},
    {"bash -c 'rm -rf \"d'", "bash -c [rm -rf \"d] {ECX}"},
    {"eval \"rm -rf d\"", "eval [rm -rf d] {C}\nrm -rf d ^0"},
    {"eval rm -rf d", "eval rm -rf d {C}\nrm -rf d ^0"},
    {"eval \"$X\"", "eval $X {EAC}"},
    {"su -c 'rm -rf d' root", "su -c [rm -rf d] root {C}\nrm -rf d ^0"},
    {"watch 'rm -rf d'", "watch [rm -rf d] {C}\nrm -rf d ^0"},
    {"watch -n 1 rm -rf d", "watch -n 1 rm -rf d {C}\nrm -rf d ^0"},
    {"env -S 'rm -rf' d", "env -S [rm -rf] d {C}\nrm -rf d ^0"},
    {"trap 'rm -rf d' EXIT", "trap [rm -rf d] EXIT {C}\nrm -rf d ^0"},
    {"trap - EXIT", "trap - EXIT"},
    {"timeout 5 bash -c 'rm -rf d'", "bash -c [rm -rf d] <timeout> {C}\nrm -rf d ^0"},
    {"bash script.sh", "bash script.sh {F}"},
    {"echo rm -rf d | sh", "echo rm -rf d\nsh {I}"},
    {"base64 -d x | bash", "base64 -d x\nbash {I}"},
    {"bash -s < f", "bash -s {I}"},
    {"curl -s x | python3", "curl -s x\npython3 {I}"},
    {"python3 x.py < in", "python3 x.py"},
    {"bash <<'EOF'\nrm -rf d\nEOF\n", "bash {IC}\nrm -rf d ^0"},
    {"bash <<EOF\nrm -rf $D\nEOF\n", "bash {I}"},
    {"sh <<< 'rm -rf d'", "sh {IC}\nrm -rf d ^0"},
};

/* Functions defined in the script count where they are called. */
static const case_t funcs[] = {
    {"f() { rm -rf d; }; f", "rm -rf d"},
    {"function f { rm -rf d; }; f; f", "rm -rf d\nrm -rf d"},
    {"f() { rm -rf d; }", "rm -rf d"},
    {"f() { f; }; f", ""},
    {"ls() { rm -rf d; }; ls -la", "rm -rf d"},
    {"g() { rm -rf d; }; f() { g; }; f", "rm -rf d"},
    {"f() { cat <<EOF; }\n$(rm -rf d)\nEOF\nf", "cat\nrm -rf d"},
};

/* Redirections that write a file. */
static const case_t redirs[] = {
    {"printf x > f", "printf x {W}"},
    {"printf x >> f", "printf x {W}"},
    {"printf x >| f", "printf x {W}"},
    {"printf x &> f", "printf x {W}"},
    {"printf x &>> f", "printf x {W}"},
    {"printf x >&f", "printf x {W}"},
    {"printf x 2>&1", "printf x"},
    {"printf x >&2", "printf x"},
    {"printf x 3>&-", "printf x"},
    {"printf x > /dev/null 2>&1", "printf x"},
    {"printf x >/dev/stderr", "printf x"},
    {"printf x > $F", "printf x {W}"},
    {"cat <> f", "cat {W}"},
    {"{ printf x; } > f", "printf x {W}"},
    {"> f", " {W}"},
    {"bash -c 'ls' > f", "bash -c ls {WC}\nls ^0 {W}"},
    {"make 2>&1 | tail", "make\ntail"},
};

/* Limits refuse. */
static void test_limits(void)
{
    agti_buf b = AGTI_BUF_INIT;
    agti_buf_puts(&b, "f0() { ls; }\n");
    for (int i = 1; i <= 16; i++)
        agti_buf_printf(&b, "f%d() { f%d; f%d; }\n", i, i - 1, i - 1);
    agti_buf_puts(&b, "f16\n");
    char *got = analyze(agti_buf_cstr(&b));
    T_EQ_STR(got,
             "ERROR 4: the script runs more than 10000 simple commands (wrappers, functions "
             "and strings run by sh -c or eval counted)",
             "2^16 calls of ls through nested functions are refused");
    free(got);
    agti_buf_free(&b);
    /* 300 nested eval strings: each level quotes the next */
    agti_buf cur = AGTI_BUF_INIT;
    agti_buf_puts(&cur, "ls");
    for (int i = 0; i < 300 && !cur.oom; i++) {
        agti_buf next = AGTI_BUF_INIT;
        agti_buf_puts(&next, "eval ");
        for (const char *p = agti_buf_cstr(&cur); *p; p++) {
            if (strchr(" \\'\"$`;&|<>()", *p))
                agti_buf_putc(&next, '\\');
            agti_buf_putc(&next, *p);
        }
        agti_buf_free(&cur);
        cur = next;
        if (cur.len > 100000)
            break;
    }
    got = analyze(agti_buf_cstr(&cur));
    T_CHECK(got != NULL && (strncmp(got, "ERROR 3", 7) == 0 || strncmp(got, "PARSE", 5) == 0 ||
                            strstr(got, "ls ^") != NULL),
            "deeply nested eval: refused or listed, never a crash (%.40s)", got ? got : "");
    free(got);
    agti_buf_free(&cur);
}

/* Variables that change which program or code runs: the whole script. */
static const case_t env_code[] = {
    {"PATH=.:$PATH ls", "ls {V}"},
    {"PATH+=:. ls", "ls {V}"},
    {"LD_PRELOAD=x.so ls", "ls {V}"},
    {"DYLD_INSERT_LIBRARIES=x ls", "ls {V}"},
    {"GIT_SSH_COMMAND=x git fetch", "git fetch {V}"},
    {"BASH_ENV=x bash x.sh", "bash x.sh {SFV}"} /* BASH_ENV: the shell sources x first */,
    {"HOME=/tmp/h git status", "git status {V}"},
    {"npm_config_script_shell=x npm test", "npm test {V}"},
    {"env PATH=. ls", "ls <env> {V}"},
    {"sudo LD_LIBRARY_PATH=. ls", "ls <sudo> {V}"},
    {"PATH=.; ls", "ls {V}"},
    {"ls; PATH=.", "ls {V}"},
    {"export PATH=.; ls", "export PATH=. {V}\nls {V}"},
    {"declare -x PATH; ls", "declare -x PATH {V}\nls {V}"},
    {"export $V; ls", "export $V {AV}\nls {V}"},
    {"declare -n r=PATH; ls", "declare -n r=PATH {V}\nls {V}"},
    {"read PATH < f; ls", "read PATH {V}\nls {V}"},
    {"printf -v PATH %s .; ls", "printf -v PATH %s . {V}\nls {V}"},
    {"hash -p ./x ls; ls", "hash -p ./x ls {V}\nls {V}"},
    {"alias ls=x; ls", "alias ls=x {V}\nls {V}"},
    {"shopt -s expand_aliases", "shopt -s expand_aliases {EV}"},
    {": ${LD_PRELOAD:=x.so}; ls", ": ${LD_PRELOAD:=x.so} {AV}\nls {V}"},
    {"eval PATH=.; ls", "eval PATH=. {CV}\nls {V}"},
    {"env -S 'PATH=. ls'", "env -S [PATH=. ls] {CV}\nls ^0 {V}"},
    {"a=PATH; declare \"$a=.\"; ls", "declare $a=. {AV}\nls {V}"},
    {": ${FOO:=1}; ls", ": ${FOO:=1} {A}\nls"},
    {"env 'BASH_FUNC_ls%%=() { rm -rf d; }' bash -c ls", "bash -c ls <env> {CVB}\nls ^0 {V}"},
    {"env 'a b=c' ls", "ls <env>"},
    {"sh -c 'PATH=. ls'; git status", "sh -c [PATH=. ls] {CV}\nls ^0 {V}\ngit status {V}"},
    /* not a look-up change */
    {"FOO=1 ls", "ls"},
    {"LANG=C LC_ALL=C sort f", "sort f"},
    {"export FOO=1; ls", "export FOO=1\nls"},
    {"printf '%s' PATH", "printf %s PATH"},
    {"env -u PATH ls", "ls <env>"},
};

/* Values of variables evaluated as code (shell.h AGTI_SHX_ARITH). */
static const case_t arith[] = {
    {"echo $((x))", "echo $((x)) {AR}"},
    {"echo $(( $x + 1 ))", "echo [$(( $x + 1 ))] {AR}"},
    {"echo $[x]", "echo $[x] {AR}"},
    {"echo ${a[i]}", "echo ${a[i]} {AR}"},
    {"echo ${s:i:2}", "echo ${s:i:2} {AR}"},
    {"echo ${!x}", "echo ${!x} {AR}"},
    {"echo ${x@P}", "echo ${x@P} {AR}"},
    {"(( x ))", "(( x )) {R}"},
    {"for ((i = 0; i < n; i++)); do :; done", "(( [i = 0; i < n; i++] )) {R}\n:"},
    {"[[ $a -lt 3 ]]", "[[ $a -lt 3 ]] {R}"},
    {"[[ -v 'a[i]' ]]", "[[ -v a[i] ]] {R}"},
    {"let x++", "let x++ {R}"},
    {"y=$((x))", "y=$((x)) {R}"},
    {"a[i]=1", "a[i]=1 {R}"},
    {"echo > $((x))", "echo {WR}"},
    {"declare -i n", "declare -i n {R}"},
    {"for i in $((x)); do :; done", ":\n$((x)) {R}"},
    {"case ${a[i]} in *) :;; esac", ":\n${a[i]} {R}"},
    {"cat <<E\n$((x))\nE", "cat {R}"},
    {"cat <<'E'\n$((x))\nE", "cat"},
    {"echo $(( $# + ${#a} ))", "echo [$(( $# + ${#a} ))] {A}"},
    {"local -ri n=1", "local -ri n=1 {R}"},
    {"read 'a[$(id)]'", "read a[$(id)] {R}"},
    {"printf -v 'a[i]' 1", "printf -v a[i] 1 {R}"},
    {"unset 'a[$(id)]'", "unset a[$(id)] {R}"},
    {"test -v 'a[i]'", "test -v a[i] {R}"},
    /* literal numbers, whole arrays, lengths, defaults: no variable evaluated */
    {"echo $((1 + 2)) $((16#ff)) $((0x1f))", "echo [$((1 + 2))] $((16#ff)) $((0x1f)) {A}"},
    {"echo ${a[0]} ${a[@]} ${#a[*]} ${s:1:2} ${x:-d} ${!a[@]} ${!pre*}",
     "echo ${a[0]} ${a[@]} ${#a[*]} ${s:1:2} ${x:-d} ${!a[@]} ${!pre*} {A}"},
    {"(( 1 + 2 ))", ""},
    {"[[ -f x && 3 -eq 3 ]]", ""},
    {"[[ $a == b ]]", ""},
    {"unset a b", "unset a b"},
    {"printf '[%s]' x", "printf [%s] x"},
};

/* GNU parallel: its command words run by a shell, with more arguments. */
static const case_t parallel[] = {
    {"parallel rm -rf ::: d", "parallel rm -rf ::: d {MC}\nrm -rf ^0 {M}"},
    {"parallel -j4 --keep-order 'gzip {}' ::: a b",
     "parallel -j4 --keep-order [gzip {}] ::: a b {MC}\ngzip {} ^0 {M}"},
    {"ls | parallel -j 2 wc -l", "ls\nparallel -j 2 wc -l {MC}\nwc -l ^1 {M}"},
    {"parallel ::: 'rm -rf d'", "parallel ::: [rm -rf d] {EMC}"},
    {"parallel --bogus x ::: a", "parallel --bogus x ::: a {UMC}"},
    {"xargs sh -c 'git status'", "sh -c [git status] <xargs> {MC}\ngit status ^0 {M}"},
    {"fd -e txt -x rm -rf", "fd -e txt -x rm -rf\nrm -rf ^0 {M}"},
    {"fd -X cat", "fd -X cat\ncat ^0 {M}"},
    {"fdfind x --exec wc -l {} ';' -H", "fdfind x --exec wc -l {} ; -H\nwc -l {} ^0 {AM}"},
    {"fd -e c", "fd -e c"},
};

int main(void)
{
    RUN("basics", basics);
    RUN("dynamic", dynamic);
    RUN("wrap", wrap);
    RUN("find", find);
    RUN("strings", strings);
    RUN("funcs", funcs);
    RUN("redirs", redirs);
    RUN("env", env_code);
    RUN("arith", arith);
    RUN("parallel", parallel);
    test_limits();
    return t_done();
}
