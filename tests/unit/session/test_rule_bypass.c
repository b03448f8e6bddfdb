/*
 * Bash rules that a respelled command must not walk around: long-option
 * abbreviations and option clusters, git push force and delete spellings
 * (+refspec, :refspec, --force-with-lease, --force-if-includes, --mirror),
 * assignments that change which program runs (PATH=, LD_PRELOAD=, GIT_*=),
 * commands that get more arguments when they run (xargs, parallel, find -exec
 * +), arguments naming sensitive files, code run by arithmetic, and command
 * texts that are not UTF-8 in the approval request and the pending list.
 * Every expected decision is worked out from the manuals (GNU getopt_long,
 * git-push(1), bash(1)) and the sensitive-file list, not from the code.
 */
#include <jansson.h>

#include "common.h"

/* The decision on cmd under rules in mode: "ran", "pending", "deny:<rule>",
 * "closed" (refused: it cannot be checked), or what else came back. When
 * reason is not NULL it gets the pending request's reason ("" when none). */
static const char *decide_with(const char *rules, int mode, const char *cmd, char *reason,
                               size_t rcap)
{
    static char buf[512];
    static int n;
    static agt_registry *reg;
    if (reg == NULL)
        reg = make_chat_registry();
    agt_session *s = NULL;
    agt_session_new(&s, reg, ws_root);
    if (agt_session_load_rules(s, rules, strlen(rules)) != AGT_OK) {
        snprintf(buf, sizeof buf, "bad rules: %s", agt_error_message());
        agt_session_free(s);
        return buf;
    }
    agt_session_set_mode(s, mode);
    char id[32];
    snprintf(id, sizeof id, "b%d", ++n);
    json_t *j = json_pack("{s:s}", "command", cmd);
    char *args = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    agt_result *r = NULL;
    int rc = agt_session_dispatch(s, id, "Bash", args, &r);
    free(args);
    if (reason)
        reason[0] = '\0';
    if (rc == AGT_EPENDING) {
        char *pj = NULL;
        int prc = agt_session_pending(s, &pj);
        json_t *list = pj ? json_loads(pj, 0, NULL) : NULL;
        const char *why = json_string_value(json_object_get(json_array_get(list, 0), "reason"));
        if (reason)
            snprintf(reason, rcap, "%s", why ? why : "");
        json_decref(list);
        agt_free(pj);
        snprintf(buf, sizeof buf, prc == AGT_OK ? "pending" : "pending, list rc:%d", prc);
    } else if (rc != AGT_OK) {
        snprintf(buf, sizeof buf, "rc:%d", rc);
    } else if (!agt_result_is_error(r)) {
        snprintf(buf, sizeof buf, "ran");
    } else {
        const char *t = agt_result_text(r);
        const char *q = strstr(t, "the rule '");
        if (strncmp(t, "Bash call refused: the rule '", 29) == 0 && q) {
            q += 10;
            snprintf(buf, sizeof buf, "deny:%.*s", (int)strcspn(q, "'"), q);
        } else if (strncmp(t, "Bash call refused: this command cannot be checked", 49) == 0) {
            snprintf(buf, sizeof buf, "closed");
            if (reason)
                snprintf(reason, rcap, "%s", t);
        } else {
            snprintf(buf, sizeof buf, "refused:%.400s", t);
        }
    }
    agt_result_free(r);
    agt_session_free(s);
    return buf;
}

static const char *decide(const char *rules, int mode, const char *cmd)
{
    return decide_with(rules, mode, cmd, NULL, 0);
}

typedef struct {
    const char *cmd, *want;
} dcase;

static void run(const char *group, const char *rules, int mode, const dcase *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        T_EQ_STR(decide(rules, mode, c[i].cmd), c[i].want, "%s: %s", group, c[i].cmd);
}

#define RUN(group, rules, mode, arr) run(group, rules, mode, arr, sizeof arr / sizeof arr[0])

#define MANUAL AGT_MODE_MANUAL
#define YOLO AGT_MODE_YOLO

/* 1. GNU getopt_long takes any unambiguous prefix of a long option, and
 * short options cluster in any order. */
static void test_long_prefixes(void)
{
    static const char *rules =
        "{\"deny\":[\"Bash(rm -rf *)\",\"Bash(chmod -R *)\",\"Bash(git clean -f *)\","
        "\"Bash(git branch -D *)\",\"Bash(git commit --no-verify *)\",\"Bash(git commit "
        "--amend*)\","
        "\"Bash(git reset --hard *)\",\"Bash(git checkout -f *)\"]}";
    static const dcase c[] = {
        {"rm --recu --forc d", "deny:Bash(rm -rf *)"},
        {"rm --recursive --force d", "deny:Bash(rm -rf *)"},
        {"rm --rec --f d", "deny:Bash(rm -rf *)"},
        {"rm --r --fo d", "deny:Bash(rm -rf *)"},
        {"rm -R --forc d", "deny:Bash(rm -rf *)"},
        {"rm -fr d", "deny:Bash(rm -rf *)"},
        {"rm -r -f d", "deny:Bash(rm -rf *)"},
        {"rm -f -R d", "deny:Bash(rm -rf *)"},
        {"rm -vfr d", "deny:Bash(rm -rf *)"},
        {"rm --verb -r --force d", "deny:Bash(rm -rf *)"},
        {"rm -r --forc -- d", "deny:Bash(rm -rf *)"},
        {"chmod --rec 777 d", "deny:Bash(chmod -R *)"},
        {"chmod --recursive 777 d", "deny:Bash(chmod -R *)"},
        {"git clean --forc -d", "deny:Bash(git clean -f *)"},
        {"git clean --fo -x", "deny:Bash(git clean -f *)"},
        {"git branch --del --forc x", "deny:Bash(git branch -D *)"},
        {"git branch -d -f x", "deny:Bash(git branch -D *)"},
        {"git branch -D x", "deny:Bash(git branch -D *)"},
        {"git commit --no-ver -m x", "deny:Bash(git commit --no-verify *)"},
        {"git commit -nm x", "deny:Bash(git commit --no-verify *)"},
        {"git commit --am", "deny:Bash(git commit --amend*)"},
        {"git reset --har HEAD~1", "deny:Bash(git reset --hard *)"},
        {"git checkout --forc main", "deny:Bash(git checkout -f *)"},
        {"git branch -d x", "ran"},
        /* not recursive: nothing to deny (runs in yolo mode) */
        {"rm --forc d", "ran"},
        {"rm --dir d", "ran"},
        /* --d is --dir, not --recursive */
        {"rm --d --force d", "ran"},
    };
    RUN("long prefix", rules, YOLO, c);
    static const char *rules2 = "{\"deny\":[\"Bash(rm --recursive *)\",\"Bash(cp -r *)\"]}";
    static const dcase c2[] = {
        {"rm -r d", "deny:Bash(rm --recursive *)"},
        {"rm -R d", "deny:Bash(rm --recursive *)"},
        {"rm --recu d", "deny:Bash(rm --recursive *)"},
        {"rm -fr d", "deny:Bash(rm --recursive *)"},
        {"cp --recur a b", "deny:Bash(cp -r *)"},
        {"cp -aR a b", "deny:Bash(cp -r *)"},
        {"cp -a a b", "deny:Bash(cp -r *)"}, /* -a is -dR --preserve=all */
        {"cp --archive a b", "deny:Bash(cp -r *)"},
        {"cp --arch a b", "deny:Bash(cp -r *)"},
        {"cp a b", "ran"},
    };
    RUN("long prefix 2", rules2, YOLO, c2);
}

/* 2. git push: +refspec forces, :refspec and --delete delete; git takes
 * abbreviations of long options too. */
static void test_git_push(void)
{
    static const char *deny = "{\"deny\":[\"Bash(git push --force *)\",\"Bash(git push -f *)\"]}";
    static const dcase c[] = {
        {"git push origin +main", "deny:Bash(git push --force *)"},
        /* attacker report: git's configuration through the environment, as
         * -c gives it, and a brace expansion making a +refspec */
        {"GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.mirror GIT_CONFIG_VALUE_0=true git "
         "push",
         "deny:Bash(git push --force *)"},
        {"env GIT_CONFIG_PARAMETERS=\"'remote.origin.push=+refs/heads/*'\" git push origin main",
         "deny:Bash(git push --force *)"},
        {"export GIT_CONFIG_COUNT=1; git push origin main", "deny:Bash(git push --force *)"},
        {"git push origin {+main,HEAD:refs/heads/other}", "deny:Bash(git push --force *)"},
        {"git push origin {:main,x}", "deny:Bash(git push --force *)"},
        {"git push origin +main:main", "deny:Bash(git push --force *)"},
        {"git push origin +HEAD:refs/heads/main", "deny:Bash(git push --force *)"},
        {"git push --force-with-lease origin main", "deny:Bash(git push --force *)"},
        {"git push --force-with-lease=main:abc origin main", "deny:Bash(git push --force *)"},
        {"git push --force-if-includes --force-with-lease origin main",
         "deny:Bash(git push --force *)"},
        {"git push --force-if-includes origin main", "deny:Bash(git push --force *)"},
        {"git push --forc origin main", "deny:Bash(git push --force *)"},
        {"git push --force-w origin main", "deny:Bash(git push --force *)"},
        {"git push origin :main", "deny:Bash(git push --force *)"},
        {"git push --delete origin main", "deny:Bash(git push --force *)"},
        {"git push -d origin main", "deny:Bash(git push --force *)"},
        {"git push --del origin main", "deny:Bash(git push --force *)"},
        {"git push --mirror origin", "deny:Bash(git push --force *)"},
        {"git push --prune origin", "deny:Bash(git push --force *)"},
        {"git -C . push origin +main", "deny:Bash(git push --force *)"},
        {"git -c remote.origin.push=+main:main push origin", "deny:Bash(git push --force *)"},
        {"git -c remote.origin.mirror=true push origin", "deny:Bash(git push --force *)"},
        {"git push origin -- +main", "deny:Bash(git push --force *)"},
        {"git push -uf origin main", "deny:Bash(git push --force *)"},
        {"git push origin main --force", "deny:Bash(git push --force *)"},
        {"git push -f origin main", "deny:Bash(git push --force *)"},
        {"git push origin main", "ran"},
        {"git push origin main:main", "ran"},
        {"git push -u origin main", "ran"},
    };
    RUN("git push deny", deny, YOLO, c);
    static const char *allow =
        "{\"allow\":[\"Bash(git push origin main)\",\"Bash(git push origin *)\"]}";
    static const dcase a[] = {
        {"git push origin main", "ran"},
        {"git push origin feature", "ran"},
        {"git push origin +main", "pending"},
        {"git push origin :main", "pending"},
        {"git push origin --force-with-lease main", "pending"},
        {"git push origin --force main", "pending"},
        {"git push origin -f main", "pending"},
        {"git push origin --delete main", "pending"},
        {"git push origin main --force-if-includes", "pending"},
        {"git push origin main --mirror", "pending"},
        {"git -c remote.origin.push=+main:main push origin main", "pending"},
    };
    RUN("git push allow", allow, MANUAL, a);
    /* a rule that names the force covers it */
    static const char *named = "{\"allow\":[\"Bash(git push --force origin *)\"]}";
    T_EQ_STR(decide(named, MANUAL, "git push --force origin main"), "ran",
             "an allow rule naming --force covers it");
    T_EQ_STR(decide("{\"allow\":[\"Bash(git push origin +*)\"]}", MANUAL, "git push origin +main"),
             "ran", "an allow rule naming a + refspec covers it");
    T_EQ_STR(decide("{\"allow\":[\"Bash(git *)\"]}", MANUAL, "git push origin +main"), "pending",
             "Bash(git *) does not stand for a force push");
    T_EQ_STR(decide("{\"allow\":[\"Bash(git *)\"]}", MANUAL, "git push origin main"), "ran",
             "Bash(git *) covers a plain push");
}

/* 3. An assignment that changes which program or code runs. */
static void test_env_lookup(void)
{
    static const char *rules = "{\"allow\":[\"Bash(ls)\",\"Bash(ls *)\",\"Bash(git status)\","
                               "\"Bash(make *)\",\"Bash(export *)\",\"Bash(bash -c *)\"]}";
    static const dcase c[] = {
        {"PATH=.:$PATH ls", "pending"},
        {"PATH=. ls -la", "pending"},
        {"PATH+=:. ls", "pending"},
        {"LD_PRELOAD=./x.so ls", "pending"},
        {"LD_LIBRARY_PATH=. ls", "pending"},
        {"BASH_ENV=./x bash -c ls", "pending"},
        {"ENV=./x ls", "pending"},
        {"GIT_EXEC_PATH=. git status", "pending"},
        {"GIT_SSH_COMMAND=x git status", "pending"},
        {"GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0=x git status",
         "pending"},
        {"env PATH=. ls", "pending"},
        {"env -i PATH=. ls", "pending"},
        {"PATH=.; ls", "pending"},
        {"export PATH=.:$PATH; ls", "pending"},
        {"export PATH; ls", "pending"},
        {"declare -x PATH=.; ls", "pending"},
        {"hash -p ./evil ls; ls", "pending"},
        {"bash -c 'PATH=. ls'", "pending"},
        {"ls; PATH=. ls", "pending"},
        {"sudo PATH=. ls", "pending"},
        {"(PATH=.; ls)", "pending"},
        {"f() { PATH=.; }; f; ls", "pending"},
        {"eval PATH=.; ls", "pending"},
        {"env -S 'PATH=. ls'", "pending"},
        {"read -r PATH < f; ls", "pending"},
        {"a=PATH; export \"$a=.\"; ls", "pending"},
        {": ${LD_PRELOAD:=./x.so}; ls", "pending"},
        {"DYLD_INSERT_LIBRARIES=x ls", "pending"},
        {"alias ls='rm -rf d'; ls", "pending"},
        /* harmless assignments keep the rule */
        {"FOO=1 ls", "ran"},
        {"LANG=C ls -la", "ran"},
        {"FOO=1 make -j2", "ran"},
        {"ls", "ran"},
    };
    RUN("env lookup", rules, MANUAL, c);
    /* a deny rule still sees the command */
    T_EQ_STR(decide("{\"deny\":[\"Bash(rm -rf *)\"]}", YOLO, "PATH=. rm -rf d"),
             "deny:Bash(rm -rf *)", "deny through a PATH assignment");
}

/* 4. Commands that get more arguments when they run. */
static void test_more_args(void)
{
    static const char *rules =
        "{\"allow\":[\"Bash(git status)\",\"Bash(cat *)\",\"Bash(find *)\",\"Bash(echo *)\","
        "\"Bash(fd *)\"]}";
    static const dcase c[] = {
        {"xargs git status < list", "pending"},     {"xargs cat < list", "pending"},
        {"echo a | xargs git status", "pending"},   {"xargs -0 git status < list", "pending"},
        {"parallel git status ::: a b", "pending"}, {"find . -name x -exec cat {} +", "pending"},
        {"fd -e txt -X git status", "pending"},     {"git status", "ran"},
    };
    RUN("more args", rules, MANUAL, c);
    static const char *deny = "{\"deny\":[\"Bash(rm -rf *)\"]}";
    static const dcase d[] = {
        {"parallel rm -rf ::: d", "deny:Bash(rm -rf *)"},
        {"parallel 'rm -rf {}' ::: d", "deny:Bash(rm -rf *)"},
        {"parallel -j2 rm -rf ::: d", "deny:Bash(rm -rf *)"},
        {"ls | parallel rm -rf", "deny:Bash(rm -rf *)"},
        {"fd -t d x -x rm -rf", "deny:Bash(rm -rf *)"},
        {"fdfind x --exec-batch rm -rf", "deny:Bash(rm -rf *)"},
    };
    RUN("more args deny", deny, YOLO, d);
}

/* 5. Arguments naming a sensitive file (docs/sensitive-files.md). */
static void test_sensitive_args(void)
{
    static const char *rules =
        "{\"allow\":[\"Bash(cat *)\",\"Bash(head *)\",\"Bash(git show *)\",\"Bash(grep *)\","
        "\"Bash(cat README.md)\",\"Bash(cp *)\",\"Bash(wc *)\",\"Bash(cat "
        ".env.local)\",\"Bash(sudo *)\",\"Bash(echo *)\",\"Bash(base64 *)\",\"Bash(cd *)\","
        "\"Bash(pushd *)\"]}";
    static const dcase c[] = {
        {"cat .env", "pending"},
        /* attacker report: a name cleaned as the file tools clean paths,
         * and a name relative to a folder the script changes to */
        {"cat .aws/./credentials", "pending"},
        {"cat .aws//credentials", "pending"},
        {"cat ~/.aws//credentials", "pending"},
        {"cat \"$HOME/.aws/./credentials\"", "pending"},
        {"cd ~/.aws && cat credentials", "pending"},
        {"cd .aws && cat credentials", "pending"},
        {"(cd .aws && cat credentials)", "pending"},
        {"cd -P .aws && cat credentials", "pending"},
        {"cd ~/.kube && cat config", "pending"},
        {"pushd .aws && cat credentials", "pending"},
        {"cd \"$D\" && cat x", "pending"},
        /* bash reads a file with $(<f): the redirection is the reader */
        {"echo \"$(<.env)\"", "pending"},
        {"cat <(< .env)", "pending"},
        {"cat <<< \"$(< .env)\"", "pending"},
        {"echo \"$(<README.md)\"", "ran"},
        {"cat /etc/shadow", "pending"},
        {"cat /proc/self/environ", "pending"},
        {"cat /proc/1/task/1/environ", "pending"},
        {"cd src && cat main.c", "ran"},
        {"cat ./README.md", "ran"},
        {"cat ./.env", "pending"},
        {"cat sub/.env.production", "pending"},
        {"cat .ENV", "pending"},
        {"cat \"$HOME/.ssh/id_rsa\"", "pending"},
        {"cat ~/.aws/credentials", "pending"},
        {"cat server.pem", "pending"},
        {"head -n 5 .env", "pending"},
        {"grep -r KEY .env", "pending"},
        {"grep --file=.env x", "pending"},
        {"git show HEAD:.env", "pending"},
        {"cp .env /tmp/x", "pending"},
        {"cat .env~", "pending"},
        {"cat < .env", "pending"},
        {"wc -c < .env", "pending"},
        {"F=.env; cat $F", "pending"},
        {"cat $(cat list)", "pending"},
        {"cat .e*", "pending"},
        {"cat .en?", "pending"},
        {"cat {.env,x}", "pending"},
        {"cat ../.env", "pending"},
        {"cat /abs/dir/.env", "pending"},
        {"cat '.e'\"nv\"", "pending"},
        {"cat .\\env", "pending"},
        {"cat ${HOME}/.netrc", "pending"},
        {"cat $PWD/.env", "pending"},
        {"cat ~root/.ssh/id_ed25519", "pending"},
        {"cat -- x .env", "pending"},
        {"sudo cat .env", "pending"},
        {"echo $(cat .env)", "pending"},
        {"base64 < .env", "pending"},
        {"cat $HOME/notes.txt", "ran"},
        /* not sensitive */
        {"cat README.md", "ran"},
        {"cat .env.example", "ran"},
        {"cat id_rsa.pub", "ran"},
        {"grep -r TODO src", "ran"},
        /* an exact rule names the file: the user allowed it */
        {"cat .env.local", "ran"},
    };
    RUN("sensitive", rules, MANUAL, c);
    char why[1024];
    T_EQ_STR(decide_with(rules, MANUAL, "cat .env", why, sizeof why), "pending", "cat .env asks");
    T_EQ_STR(why,
             "`cat .env` names a sensitive file (.env: environment file (.env)), which an "
             "allow rule with a wildcard does not cover",
             "the reason names the file");
}

/* 6. Arithmetic evaluates a variable's value as code. */
static void test_arith(void)
{
    static const char *rules = "{\"allow\":[\"Bash(echo *)\",\"Bash(true)\",\"Bash(let *)\"],"
                               "\"deny\":[\"Bash(rm -rf *)\"]}";
    static const dcase c[] = {
        {"x='a[$(rm -rf d)]'; echo $((x))", "closed"},
        {"echo $((x + 1))", "closed"},
        {"echo $[x]", "closed"},
        {"echo ${a[x]}", "closed"},
        {"echo ${s:x}", "closed"},
        {"echo ${!x}", "closed"},
        {"echo ${x@P}", "closed"},
        {"(( x )) && true", "closed"},
        {"[[ x -eq 0 ]] && true", "closed"},
        {"let x", "closed"},
        {"declare -i z; z=x", "closed"},
        {"read 'a[$(rm -rf d)]' <<< 1", "closed"},
        {"printf -v 'a[x]' 1", "closed"},
        {"unset 'a[$(rm -rf d)]'", "closed"},
        {"echo \"$((x))\"", "closed"},
        {"echo ${x:$((y))}", "closed"},
        {"for i in $((x)); do true; done", "closed"},
        {"true <<E\n$((x))\nE", "closed"},
        {"if (( x > 1 )); then true; fi", "closed"},
        {"echo $(( $# + 1 ))", "ran"},
        /* literal numbers only: no variable is evaluated */
        {"echo $((1 + 2))", "ran"},
        {"echo ${a[0]} ${s:1:2}", "ran"},
        {"(( 1 + 2 )) && true", "ran"},
        {"[[ -f x ]] && true", "ran"},
        {"echo ${a[@]} ${#a[*]}", "ran"},
        /* what the reason suggests instead of counting in a variable */
        {"for i in $(seq 1 3); do echo $i; done", "ran"},
    };
    RUN("arith", rules, YOLO, c);
    char why[1024];
    T_EQ_STR(decide_with(rules, MANUAL, "echo $((x))", why, sizeof why), "pending",
             "arith asks in manual mode");
    T_EQ_STR(why,
             "this command cannot be checked before it runs: `echo $((x))`: it evaluates the "
             "value of a variable as code (arithmetic, an array subscript, a substring offset, "
             "indirection or prompt expansion), which runs any command substitution the value "
             "holds (literal numbers are fine: count with `for i in $(seq 1 10)` or `seq`, not "
             "with i=$((i+1)))",
             "the reason describes arithmetic code and a way to write it");
}

/* 6b. A shell told to run a startup file first (--rcfile, --init-file) runs
 * that file's commands as `source FILE` does, whatever the -c string is:
 * `bash --rcfile <(echo 'rm -rf d') -i -c true` ran rm past the deny rule
 * and, in manual mode, under Bash(true) (attacker report). */
static void test_startup_files(void)
{
    static const char *rules = "{\"allow\":[\"Bash(echo *)\",\"Bash(true)\",\"Bash(nice *)\"],"
                               "\"deny\":[\"Bash(rm -rf *)\"]}";
    static const dcase c[] = {
        {"bash --rcfile <(echo 'rm -rf d') -i -c true", "closed"},
        {"bash --init-file evil.sh -i -c true", "closed"},
        {"bash -i --rcfile evil.sh -c true", "closed"},
        {"nice bash --rcfile evil.sh -i -c true", "closed"},
        {"bash -c 'bash --init-file evil.sh -i -c true'", "closed"},
        {"echo \"$(bash --rcfile evil.sh -i -c true)\"", "closed"},
        /* BASH_ENV and ENV name a file a shell runs first */
        {"BASH_ENV=x.sh bash -c true", "closed"},
        {"ENV=x.sh sh -i -c true", "closed"},
        {"export BASH_ENV=x.sh; bash -c true", "closed"},
        {"env BASH_ENV=x.sh bash -c true", "closed"},
        {"X=1 bash -c true", "ran"},
        {"bash --norc -c true", "ran"},
        {"bash --noprofile --norc -c 'echo hi'", "ran"},
    };
    RUN("startup files", rules, YOLO, c);
    char why[1024];
    T_EQ_STR(decide_with(rules, MANUAL, "bash --rcfile evil.sh -i -c true", why, sizeof why),
             "pending", "startup files: asks in manual mode under Bash(true)");
    T_EQ_STR(
        decide_with(rules, MANUAL, "nice bash --init-file evil.sh -i -c true", why, sizeof why),
        "pending", "startup files: asks in manual mode under Bash(nice *)");
}

/* 6c. Strings run as shell code by builtins and programs, and `time --`
 * (attacker report: each ran rm past the deny rule in yolo mode). */
static void test_code_strings(void)
{
    static const char *rules = "{\"allow\":[\"Bash(echo *)\",\"Bash(true)\"],"
                               "\"deny\":[\"Bash(rm -rf *)\"]}";
    static const dcase c[] = {
        {"time -- rm -rf d", "deny:Bash(rm -rf *)"},
        {"time -p -- rm -rf d", "deny:Bash(rm -rf *)"},
        {"script -qc 'rm -rf d' /dev/null", "deny:Bash(rm -rf *)"},
        {"script --command 'rm -rf d' /dev/null", "deny:Bash(rm -rf *)"},
        {"mapfile -C 'rm -rf d #' -c 1 <<< x", "closed"},
        {"readarray -tC 'rm -rf d #' -c 1 <<< x", "closed"},
        {"history -s 'rm -rf d'; fc -s rm", "closed"},
        {"shopt -s expand_aliases; alias ls='rm -rf d'\nls", "closed"},
        {"git -c alias.x='!rm -rf d' x", "closed"},
        {"git -calias.x='!rm -rf d' x", "closed"},
        {"time -- echo hi", "ran"},
        {"mapfile -t lines <<< x; echo ${#lines[@]}", "ran"},
        {"shopt -s nullglob; echo hi", "ran"},
        {"script -q -c 'echo hi' /dev/null", "ran"},
    };
    RUN("code strings", rules, YOLO, c);
}

/* 7. Bytes that are not UTF-8 in the command or the call id. */
static void test_not_utf8(void)
{
    char why[1024];
    T_EQ_STR(decide_with("{}", MANUAL, "echo $'\\xff'", why, sizeof why), "pending",
             "echo $'\\xff' asks");
    T_EQ_STR(decide_with("{\"allow\":[\"Bash(ls)\"]}", MANUAL, "X $'\\xff'", why, sizeof why),
             "pending", "X $'\\xff' asks and the pending list is built");
    T_EQ_STR(
        decide_with("{\"allow\":[\"Bash(ls)\"]}", MANUAL, "ls; X $'a\\xffb' y", why, sizeof why),
        "pending", "a compound with a non-UTF-8 word asks");
    T_EQ_STR(why, "the command part 'X a$'\\xff'b y' is not covered by an allow rule",
             "the word is written as bash would read it back");
    T_EQ_STR(decide_with("{\"allow\":[\"Bash(ls)\"]}", MANUAL, "ls; $'\\xff' -c", why, sizeof why),
             "pending", "a non-UTF-8 command name");
    T_EQ_STR(why, "the command part '$'\\xff' -c' is not covered by an allow rule",
             "command name escaped");
    T_EQ_STR(decide_with("{\"deny\":[\"Bash(rm -rf d)\"]}", MANUAL, "rm -rf $'\\xfe'$X", why,
                         sizeof why),
             "pending", "a deny rule's maybe-match with non-UTF-8 text");
    T_EQ_STR(why,
             "this command cannot be checked before it runs: `rm -rf $'\\xfe'$X` could match the "
             "deny rule 'Bash(rm -rf d)' once its words are known, which happens only when it runs",
             "the maybe-match reason escapes the byte");

    /* a call id that is not UTF-8 */
    agt_registry *reg = make_chat_registry();
    agt_session *s = NULL;
    agt_session_new(&s, reg, ws_root);
    agt_result *r = NULL;
    T_EQ_INT(agt_session_dispatch(s, "id\xff", "Bash", "{\"command\":\"ls\"}", &r), AGT_EPENDING,
             "a non-UTF-8 call id waits");
    char *pj = NULL;
    T_EQ_INT(agt_session_pending(s, &pj), AGT_OK, "pending list with a non-UTF-8 call id");
    T_CHECK(pj != NULL && strstr(pj, "\"call_id\":\"id\xef\xbf\xbd\"") != NULL,
            "the bad byte is replaced by U+FFFD: %s", pj ? pj : "(null)");
    agt_free(pj);
    T_EQ_INT(agt_session_answer(s, "id\xff", AGT_DECISION_REJECT, NULL, &r), AGT_OK,
             "answered by its own id");
    agt_result_free(r);
    agt_session_free(s);
    agt_registry_free(reg);
}

int main(void)
{
    (void)outcome;
    (void)disp;
    make_workspace();
    test_long_prefixes();
    test_git_push();
    test_env_lookup();
    test_more_args();
    test_sensitive_args();
    test_arith();
    test_startup_files();
    test_code_strings();
    test_not_utf8();
    remove_tree(ws_root);
    return t_done();
}
