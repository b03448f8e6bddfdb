/*
 * The parser against what bash really runs: each line of the table runs
 * under /bin/bash -c with PATH set to a directory of argv-recording stubs
 * (argv_stub.c) for the external commands it names, and the commands bash
 * ran are compared with the parser's list, both ways:
 *  - every command bash ran is in the list (same argv when the parser's
 *    words are all static, the same name when a word is dynamic);
 *  - for lines whose listed commands all run (no untaken branch), every
 *    listed command with a stub name was run.
 * Builtins (echo, printf, true, false, read, cd, ...) never reach the stubs,
 * so lines use them only around the stub commands. eval, command, exec and
 * `sh -c` strings are not run here: seeing through them is the analysis's
 * job, not the parser's.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "core/core.h"
#include "shell/shell.h"

static const char *const stub_names[] = {
    "ls",   "rm",    "cat",  "wc",    "grep",    "sort", "head",   "tail",  "mkdir", "touch",
    "git",  "make",  "curl", "sh",    "id",      "date", "whoami", "nproc", "tr",    "sed",
    "find", "xargs", "env",  "nohup", "timeout", "sudo", "uname",  "tee",   "jq",    "cp",
};

typedef struct {
    const char *line;
    int all_run; /* every listed stub command runs */
    int warns;   /* bash prints a warning (and runs the line) */
} bline;

static const bline lines[] = {
    {"ls -l", 1},
    {"rm  -rf   d", 1},
    {"\\r\\m -rf d", 1},
    {"'rm' -rf d", 1},
    {"\"rm\" -r\"f\" d", 1},
    {"FOO=1 rm -rf d", 1},
    {"A=1 B=\"x y\" env", 1},
    {"{ rm -rf d; }", 1},
    {"if true; then rm -rf d; fi", 1},
    {"f() { rm -rf d; }; f", 1},
    {"ls | grep x | wc -l", 1},
    {"ls && cat /dev/null; false || id", 1},
    {"ls & cat /dev/null", 1},
    {"(cd /; ls)", 1},
    {"echo $(ls)", 1},
    {"echo \"$(id -u)\" x", 1},
    {"echo `date +%s`", 1},
    {"echo `echo \\`whoami\\``", 1},
    {"x=$(rm -rf d)", 1},
    {"echo ${x:-$(rm -rf d)}", 1},
    {"echo $(( $(nproc) 1 + 1))", 1},
    {"cat <(ls) >(wc -l)", 1},
    {"cat <<EOF\nhello $(whoami)\nEOF", 1},
    {"cat <<'EOF'\n$(rm -rf d)\nEOF", 1},
    {"cat <<A <<B\na\nA\n$(id)\nB", 1},
    {"cat <<-EOF\n\t$(date)\n\tEOF", 1},
    {"while read l; do rm \"$l\"; done <<EOF\na\nb\nEOF", 1},
    {"for f in a b; do rm \"$f\"; done", 1},
    {"for ((i=0;i<2;i++)); do ls $i; done", 1},
    {"case x in x) rm a;; *) rm b;; esac", 0},
    {"case $(id) in *) ls;; esac", 1},
    {"[[ -n $(whoami) ]] || ls", 1},
    {"(( $(nproc) 1 > 0 )) && ls", 1},
    {"ls >out 2>&1", 1},
    {"ls >/dev/null 2>&1 &", 1},
    {"exec 3>f; ls >&3", 1},
    {"cat <<<\"$(id)\"", 1},
    {"ls; ls -a", 1},
    {"ls\nls -a\n\nls -l", 1},
    {"a=1; rm $a", 1},
    {"{ time ls; } 2>/dev/null", 1},
    {"! ls", 1},
    {"ls | sh", 1},
    {"curl -s x | sh -s", 1},
    {"git status && git log -1", 1},
    {"git log -1 | head -5", 1},
    {"make 2>&1 | tail", 1},
    {"git  status", 1},
    {"git commit -m \"fix: a b\"", 1},
    {"git commit -m 'it'\\''s'", 1},
    {"grep -e 'a|b' -e \"c\\\"d\" /dev/null", 1},
    {"find . -name '*.c' -exec rm {} \\;", 1},
    {"xargs -0 rm < /dev/null", 1},
    {"timeout 5 rm -rf d", 1},
    {"nohup rm -rf d", 1},
    {"env rm -rf d", 1},
    {"sudo -u root rm d", 1},
    {"echo $'\\x41' | tr A B", 1},
    {"tr $'a\\tb' x", 1},
    {"ls \"a b\" 'c d' e\\ f", 1},
    {"ls a\\\"b 'x\"y'", 1},
    {"ls -- -rf", 1},
    {"mkdir -p a/b && touch a/b/c", 1},
    {"{ ls; cat /dev/null; } > out", 1},
    {"f() { ls \"$@\"; }; f a b", 1},
    {"function g { id; }; g", 1},
    {"function h() ( whoami ); h", 1},
    {"if false; then rm a; elif true; then rm b; else rm c; fi", 0},
    {"until true; do rm x; done", 0},
    {"while false; do rm x; done; ls", 0},
    {"ls $(echo a) \"$(echo b c)\"", 1},
    {"x=$(cat <<EOF\n$(id)\nEOF\n)", 1},
    {"echo \"${x:-$(date)}\"", 1},
    {"echo ${x:=$(uname)} $x", 1},
    {"ls {a,b}", 1},
    {"ls *.nothing", 1},
    {"cat < /dev/null | wc -c", 1},
    {"ls |& cat", 1},
    {"ls 2>/dev/null || id", 0},
    {"arr=(a $(id) c); ls \"${arr[@]}\"", 1},
    {"a[$(nproc)0]=1", 1},
    {"ls # rm -rf d", 1},
    {"ls; # comment\nid", 1},
    {"echo a\\\nb; l\\\ns", 1},
    {"cat <<EOF | sh\nrm -rf d\nEOF", 1},
    {"sh -c 'rm -rf d'", 1},
    {"ls >|f; ls >>f; ls <>f", 1},
    {"[[ $(id) == @(a|b) ]] || ls", 1},
    {"[[ x =~ ^(a|b)$ ]] || ls", 1},
    {"echo \"$(ls \"$(id)\")\"", 1},
    {"ls; (ls; (ls -a))", 1},
    {"{ ls & } ; wait", 1},
    {"ls && { id; whoami; } | cat", 1},
    {"x=1 y=$(id) ls", 1},
    {">f ls", 1},
    {"ls > \"a b\"", 1},
    {"f() { cat <<EOF\n$(id)\nEOF\n}; f", 1},
    {"echo \"a $(ls -a) `id -u` ${x:-$(uname -a)}\"", 1},
    {"ls $(cat <(date) | wc) `tee </dev/null`", 1},
    {"case $(date) in\n  *) ls -a ;;\nesac", 1},
    {"for f in $(ls) x; do :; done", 1},
    {"ls -l | { grep a; sort; } | tail -1", 1},
    {"tee >(wc -l) </dev/null >/dev/null", 1},
    {"[[ -z \"$(jq . </dev/null)\" ]] && git status", 1},
    {"ls\\\n -a", 1},
    {"sed -e 's/a/b/' -e \"s/\\$/x/\" </dev/null", 1},
    {"ls $'a\\'b' $\"c d\"", 1},
    {"coproc cat /dev/null; wait", 1},
    {"coproc X { ls; id; }; wait", 1},
    {"f() { local a=(x \"y z\" $(id)); ls \"${a[@]}\"; }; f", 1},
    {"declare -a x=(1 $(whoami)); export y=(3)", 1},
    {"x=$(cat <<EOF\nhi $(id)\nEOF)\nls", 1, 1}, /* "delimited by end-of-file" */
    {"echo x > >(rm -rf d)", 1},
    {"while read l; do rm \"$l\"; done < <(find .)", 0},
    {"cat < <(ls -a) | wc", 1},
    {"! ; ls", 1},
    {"f() { cat <<EOF; }\n$(id)\nEOF\nf", 1},
    {"exec {fd}>log; ls >&$fd", 1},
    {"echo $[1 + 2] | tr 3 x", 1},
    {"case a in a) ls;& b) id;;& *) whoami;; esac", 1},
    {"cat<<<x; cat <<< \"y z\"", 1},
    {"echo $(case x in x) id;; esac)", 1},
    {"ls 2>&1 >/dev/null | wc", 1},
    {"a=(x); a+=($(id) y); ls \"${a[@]}\"", 1},
    {"x=abc; echo \"${x/b/$(whoami)}\"", 1},
    {"echo \"$(cat <<'E'\n$(rm -rf d)\nE\n)\"", 1},
    {"if ! ls; then id; fi", 0},
    {"ls \\#x '#' \"#\"", 1},
    {"ls\t-a\t-l", 1},
    {"for i in 1; do for j in 2; do ls $i$j; done; done", 1},
    {"{ id; } 2>/dev/null && (whoami) >/dev/null", 1},
    {"cat <<EOF1; cat <<EOF2\n$(id)\nEOF1\n$(whoami)\nEOF2", 1},
    {"ls $(: $(id)) `: \\`whoami\\``", 1},
    {"[[ -n \"$(date)\" && $(id) != x ]] && ls", 0}, /* -n "" is false: the rest is skipped */
};

static char tmp_root[64];

static int rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(p);
}

typedef struct rec {
    char **argv;
    int argc;
} rec;

static void free_recs(rec *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (int j = 0; j < r[i].argc; j++)
            free(r[i].argv[j]);
        free(r[i].argv);
    }
    free(r);
}

/* Parses the stub log; NULL with *n = 0 when empty. */
static rec *read_log(const char *path, size_t *n)
{
    *n = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    agti_buf b = AGTI_BUF_INIT;
    char chunk[4096];
    size_t k;
    while ((k = fread(chunk, 1, sizeof chunk, f)) > 0)
        agti_buf_put(&b, chunk, k);
    fclose(f);
    rec *r = NULL;
    size_t cap = 0, i = 0;
    while (i < b.len) {
        int argc = atoi(b.ptr + i);
        i += strlen(b.ptr + i) + 1;
        if (*n == cap) {
            cap = cap ? cap * 2 : 8;
            r = realloc(r, cap * sizeof *r);
        }
        r[*n].argc = argc;
        r[*n].argv = calloc((size_t)argc + 1, sizeof(char *));
        for (int j = 0; j < argc && i < b.len; j++) {
            r[*n].argv[j] = agti_strdup(b.ptr + i);
            i += strlen(b.ptr + i) + 1;
        }
        (*n)++;
    }
    agti_buf_free(&b);
    return r;
}

static int is_stub(const char *name)
{
    for (size_t i = 0; i < sizeof stub_names / sizeof stub_names[0]; i++)
        if (strcmp(stub_names[i], name) == 0)
            return 1;
    return 0;
}

#define SHW_NOT_STATIC (AGTI_SHW_DYNAMIC | AGTI_SHW_GLOB | AGTI_SHW_BRACE | AGTI_SHW_TILDE)

static int cmd_static(const agti_sh_cmd *c)
{
    for (size_t i = 0; i < c->argc; i++)
        if (c->argv[i].flags & SHW_NOT_STATIC)
            return 0;
    return 1;
}

/* A listed command that may stand for the record. */
static int cmd_matches(const agti_sh_cmd *c, const rec *r)
{
    if (c->argc == 0 || r->argc == 0 || (c->argv[0].flags & SHW_NOT_STATIC) ||
        strcmp(c->argv[0].value, r->argv[0]) != 0)
        return 0;
    if (!cmd_static(c))
        return 1;
    if ((size_t)r->argc != c->argc)
        return 0;
    for (size_t i = 1; i < c->argc; i++)
        if (strlen(r->argv[i]) != c->argv[i].vlen || strcmp(r->argv[i], c->argv[i].value) != 0)
            return 0;
    return 1;
}

static void diag_rec(const char *what, const rec *r)
{
    agti_buf b = AGTI_BUF_INIT;
    for (int j = 0; j < r->argc; j++)
        agti_buf_printf(&b, "%s[%s]", j ? " " : "", r->argv[j]);
    t_diag("  %s: %s", what, agti_buf_cstr(&b));
    agti_buf_free(&b);
}

static void diag_cmd(const char *what, const agti_sh_cmd *c)
{
    agti_buf b = AGTI_BUF_INIT;
    for (size_t j = 0; j < c->argc; j++)
        agti_buf_printf(&b, "%s[%s]", j ? " " : "", c->argv[j].value);
    t_diag("  %s: %s", what, agti_buf_cstr(&b));
    agti_buf_free(&b);
}

/* Runs the line under bash; returns its exit status, or -1. stderr goes to
 * errpath. */
static int run_bash(const char *line, const char *bindir, const char *work, const char *logpath,
                    const char *errpath)
{
    char *script = agti_aprintf("%s\nwait\n", line);
    char *env_path = agti_aprintf("PATH=%s", bindir);
    char *env_log = agti_aprintf("SHSTUB_LOG=%s", logpath);
    pid_t pid = fork();
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY);
        int err = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int out = open("/dev/null", O_WRONLY);
        if (in < 0 || err < 0 || out < 0 || chdir(work) != 0)
            _exit(126);
        dup2(in, 0);
        dup2(out, 1);
        dup2(err, 2);
        char *envp[] = {env_path, env_log, NULL};
        execle("/bin/bash", "bash", "-c", script, (char *)NULL, envp);
        _exit(127);
    }
    int status = -1;
    if (pid > 0) {
        for (int i = 0; i < 1000; i++) { /* at most ~20 s */
            pid_t w = waitpid(pid, &status, WNOHANG);
            if (w == pid)
                break;
            struct timespec ts = {0, 20 * 1000 * 1000};
            nanosleep(&ts, NULL);
            if (i == 999) {
                kill(pid, SIGKILL);
                waitpid(pid, &status, 0);
                status = -1;
            }
        }
    }
    free(script);
    free(env_path);
    free(env_log);
    return status;
}

static size_t file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (size_t)st.st_size : 0;
}

static void check_line(size_t li, const char *bindir, const char *work)
{
    const bline *bl = &lines[li];
    agti_sh_script *s = NULL;
    agti_sh_error e;
    if (!T_CHECK(agti_sh_parse(bl->line, strlen(bl->line), &s, &e) == AGTI_SH_OK,
                 "bash line %zu parses", li)) {
        t_diag("  %s", e.message);
        return;
    }
    char logpath[128], errpath[128];
    snprintf(logpath, sizeof logpath, "%s/log", tmp_root);
    snprintf(errpath, sizeof errpath, "%s/err", tmp_root);
    remove(logpath);
    int st = run_bash(bl->line, bindir, work, logpath, errpath);
    if (!T_CHECK(st >= 0 && (bl->warns || file_size(errpath) == 0),
                 "bash line %zu runs without a message", li)) {
        FILE *ef = fopen(errpath, "r");
        char eb[512];
        while (ef && fgets(eb, sizeof eb, ef))
            t_diag("  bash: %s", eb);
        if (ef)
            fclose(ef);
    }
    size_t nrec = 0;
    rec *r = NULL;
    int missing = 0, unran = 0;
    /* Commands of process substitutions may still be finishing: read again
     * for a while before calling a listed command unrun. */
    for (int attempt = 0; attempt < 100; attempt++) {
        free_recs(r, nrec);
        r = read_log(logpath, &nrec);
        unran = 0;
        for (size_t i = 0; i < agti_sh_ncmds(s) && bl->all_run; i++) {
            const agti_sh_cmd *c = agti_sh_cmd_at(s, i);
            if (c->argc == 0 || (c->flags & AGTI_SHC_KEYWORD) || !is_stub(c->argv[0].value))
                continue;
            int found = 0;
            for (size_t k = 0; k < nrec && !found; k++)
                found = cmd_matches(c, &r[k]);
            if (!found)
                unran++;
        }
        if (unran == 0)
            break;
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    for (size_t k = 0; k < nrec; k++) {
        int found = 0;
        for (size_t i = 0; i < agti_sh_ncmds(s) && !found; i++)
            found = cmd_matches(agti_sh_cmd_at(s, i), &r[k]);
        if (!found) {
            missing++;
            diag_rec("bash ran, not listed", &r[k]);
        }
    }
    T_CHECK(missing == 0, "bash line %zu: every command bash ran is listed", li);
    if (bl->all_run) {
        if (!T_CHECK(unran == 0, "bash line %zu: every listed command ran", li)) {
            for (size_t i = 0; i < agti_sh_ncmds(s); i++)
                diag_cmd("listed", agti_sh_cmd_at(s, i));
        }
    }
    free_recs(r, nrec);
    agti_sh_free(s);
}

int main(int argc, char **argv)
{
    if (argc < 2 || access("/bin/bash", X_OK) != 0) {
        t_skip(argc < 2 ? "no stub program given" : "no /bin/bash");
        return t_done();
    }
    T_CHECK(sizeof lines / sizeof lines[0] >= 100, "the table has at least 100 lines");
    snprintf(tmp_root, sizeof tmp_root, "/tmp/agt-shell-bash-XXXXXX");
    if (!T_CHECK(mkdtemp(tmp_root) != NULL, "temp dir"))
        return t_done();
    char bindir[128], work[128];
    snprintf(bindir, sizeof bindir, "%s/bin", tmp_root);
    snprintf(work, sizeof work, "%s/work", tmp_root);
    mkdir(bindir, 0700);
    mkdir(work, 0700);
    char *stub = realpath(argv[1], NULL);
    int ok = stub != NULL;
    for (size_t i = 0; ok && i < sizeof stub_names / sizeof stub_names[0]; i++) {
        char path[192];
        snprintf(path, sizeof path, "%s/%s", bindir, stub_names[i]);
        ok = symlink(stub, path) == 0;
    }
    free(stub);
    if (T_CHECK(ok, "stub directory")) {
        for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
            check_line(i, bindir, work);
    }
    nftw(tmp_root, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
    return t_done();
}
