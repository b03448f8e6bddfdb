/*
 * The sandbox as a session setting, through the public API: defaults,
 * argument errors, status, auto-allow of sandboxed commands (deny and ask
 * rules still apply; network on or the escape argument asks), the escape
 * that always asks (also in yolo mode) and then runs outside, the refusal
 * note, writable roots added by the host, save/restore of the policy, and
 * a background task kept in the sandbox.
 */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agenttools/agenttools.h"
#include "harness.h"
#include "sandbox/sandbox.h"

static agt_registry *reg;
static char base[256], ws[512], outside[512], logs[512];

static agt_session *session(void)
{
    agt_session *s = NULL;
    if (agt_session_new(&s, reg, ws) != AGT_OK)
        return NULL;
    agt_session_set_task_log_dir(s, logs);
    return s;
}

/* A test name must stay on one line (TAP): newlines shown as '|'. */
static const char *flat(const char *s)
{
    static char buf[4][512];
    static int k;
    char *b = buf[k++ % 4];
    size_t i = 0;
    for (; s != NULL && s[i] != '\0' && i + 1 < sizeof buf[0]; i++)
        b[i] = s[i] == '\n' ? '|' : s[i];
    b[i] = '\0';
    return b;
}

static bool exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

static json_t *status(agt_session *s)
{
    char *j = NULL;
    if (agt_session_sandbox_status(s, &j) != AGT_OK)
        return NULL;
    json_t *v = json_loads(j, 0, NULL);
    agt_free(j);
    return v;
}

static int dispatch(agt_session *s, const char *id, const char *args, agt_result **r)
{
    *r = NULL;
    return agt_session_dispatch(s, id, "Bash", args, r);
}

static void test_api(bool can)
{
    agt_session *s = session();
    int m = -1, n = -1, e = -1;
    T_EQ_INT(agt_session_sandbox(s, &m, &n, &e), AGT_OK, "policy read");
    T_EQ_INT(m, can ? AGT_SANDBOX_WORKSPACE_WRITE : AGT_SANDBOX_OFF,
             "default: workspace-write where the kernel confines, else off");
    T_EQ_INT(n, AGT_SANDBOX_NETWORK_OFF, "default: network off");
    T_EQ_INT(e, AGT_SANDBOX_BEST_EFFORT, "default: best effort");
    T_EQ_INT(agt_session_set_sandbox(s, 3, 0, 0), AGT_EINVAL, "mode 3 refused");
    T_CHECK(strstr(agt_error_message(), "unknown mode 3") != NULL, "message names the mode");
    T_EQ_INT(agt_session_set_sandbox(s, 1, 2, 0), AGT_EINVAL, "network 2 refused");
    T_EQ_INT(agt_session_set_sandbox(s, 1, 0, 5), AGT_EINVAL, "enforce 5 refused");
    T_EQ_INT(agt_session_set_sandbox(NULL, 1, 0, 0), AGT_EINVAL, "NULL session refused");
    T_EQ_INT(agt_session_add_writable_root(s, "rel"), AGT_EINVAL, "relative root refused");
    char missing[600];
    snprintf(missing, sizeof missing, "%s/missing", base);
    T_EQ_INT(agt_session_add_writable_root(s, missing), AGT_ENOTFOUND, "missing root refused");
    int pm = -1;
    T_EQ_INT(agt_sandbox_mode_parse("read-only", &pm), AGT_OK, "parse read-only");
    T_EQ_INT(pm, AGT_SANDBOX_READ_ONLY, "read-only is 1");
    T_EQ_INT(agt_sandbox_mode_parse("Read-Only", &pm), AGT_EINVAL, "names are exact");
    T_EQ_STR(agt_sandbox_mode_name(AGT_SANDBOX_OFF), "off", "name of off");
    T_CHECK(agt_sandbox_mode_name(9) == NULL, "no name for 9");

    T_EQ_INT(agt_session_set_sandbox(s, AGT_SANDBOX_READ_ONLY, AGT_SANDBOX_NETWORK_ON,
                                     AGT_SANDBOX_BEST_EFFORT),
             AGT_OK, "set read-only, network on");
    json_t *st = status(s);
    T_EQ_STR(json_string_value(json_object_get(st, "mode")), "read-only", "status: mode");
    T_EQ_STR(json_string_value(json_object_get(st, "network")), "on", "status: network");
    T_EQ_INT(json_is_true(json_object_get(st, "sandboxed")), can, "status: sandboxed");
    T_EQ_INT(json_array_size(json_object_get(st, "writable_roots")), 0,
             "status: read-only has no writable roots");
    json_decref(st);

    /* save / restore */
    T_EQ_INT(agt_session_add_writable_root(s, outside), AGT_OK, "add a writable root");
    agt_session_set_sandbox_auto_allow(s, 1);
    char *saved = NULL;
    T_EQ_INT(agt_session_save(s, &saved), AGT_OK, "save");
    agt_session *s2 = session();
    T_EQ_INT(agt_session_restore(s2, saved, strlen(saved)), AGT_OK, "restore");
    m = n = e = -1;
    agt_session_sandbox(s2, &m, &n, &e);
    T_CHECK(m == AGT_SANDBOX_READ_ONLY && n == AGT_SANDBOX_NETWORK_ON &&
                e == AGT_SANDBOX_BEST_EFFORT,
            "restore: the policy is back");
    agt_session_set_sandbox(s2, AGT_SANDBOX_WORKSPACE_WRITE, 0, 0);
    st = status(s2);
    json_t *roots = json_object_get(st, "writable_roots");
    T_EQ_INT(json_array_size(roots), 2, "restore: workspace + the added root");
    T_EQ_STR(json_string_value(json_array_get(roots, 1)), outside, "restore: the added root");
    T_CHECK(json_is_true(json_object_get(st, "auto_allow")), "restore: auto-allow");
    json_decref(st);
    agt_free(saved);
    const char *bad = "{\"format\":1,\"sandbox\":{\"set\":true,\"mode\":\"sometimes\","
                      "\"network\":\"off\",\"enforce\":\"require\",\"auto_allow\":false,"
                      "\"writable_roots\":[]}}";
    T_EQ_INT(agt_session_restore(s2, bad, strlen(bad)), AGT_EINVALID, "restore: bad mode refused");
    T_CHECK(strstr(agt_error_message(), "sandbox.mode") != NULL, "restore: the message names it");
    agt_session_free(s2);
    agt_session_free(s);
}

static void test_commands(void)
{
    agt_session *s = session();
    agt_session_set_sandbox(s, AGT_SANDBOX_WORKSPACE_WRITE, AGT_SANDBOX_NETWORK_OFF,
                            AGT_SANDBOX_REQUIRE);
    agt_result *r;
    /* manual mode, no auto-allow: a command asks */
    T_EQ_INT(dispatch(s, "a1", "{\"command\":\"echo hi\"}", &r), AGT_EPENDING,
             "manual mode: Bash asks");
    agt_session_answer(s, "a1", AGT_DECISION_REJECT, "no", &r);
    agt_result_free(r);
    /* auto-allow: the sandboxed command runs without asking */
    agt_session_set_sandbox_auto_allow(s, 1);
    T_EQ_INT(dispatch(s, "a2", "{\"command\":\"echo hi > auto.txt; cat auto.txt\"}", &r), AGT_OK,
             "auto-allow: a sandboxed command runs without asking");
    T_CHECK(r && strncmp(agt_result_text(r), "hi\n", 3) == 0, "auto-allow: its output");
    agt_result_free(r);
    /* deny rules still apply */
    agt_session_add_rule(s, AGT_RULE_DENY, "Bash(rm *)");
    dispatch(s, "a3", "{\"command\":\"rm auto.txt\"}", &r);
    T_CHECK(r && agt_result_is_error(r) && strstr(agt_result_text(r), "Bash(rm *)"),
            "auto-allow: deny rules still apply (%s)", flat(r ? agt_result_text(r) : NULL));
    char autof[600];
    snprintf(autof, sizeof autof, "%s/auto.txt", ws);
    T_CHECK(exists(autof), "auto-allow: the denied command did not run");
    agt_result_free(r);
    /* ask rules still ask */
    agt_session_add_rule(s, AGT_RULE_ASK, "Bash(ls *)");
    T_EQ_INT(dispatch(s, "a4", "{\"command\":\"ls -a\"}", &r), AGT_EPENDING,
             "auto-allow: ask rules still ask");
    agt_session_answer(s, "a4", AGT_DECISION_REJECT, "no", &r);
    agt_result_free(r);
    /* network on: not auto-allowed */
    agt_session_set_sandbox(s, AGT_SANDBOX_WORKSPACE_WRITE, AGT_SANDBOX_NETWORK_ON,
                            AGT_SANDBOX_REQUIRE);
    T_EQ_INT(dispatch(s, "a5", "{\"command\":\"echo net\"}", &r), AGT_EPENDING,
             "auto-allow: not with the network on");
    agt_session_answer(s, "a5", AGT_DECISION_REJECT, "no", &r);
    agt_result_free(r);
    agt_session_set_sandbox(s, AGT_SANDBOX_WORKSPACE_WRITE, AGT_SANDBOX_NETWORK_OFF,
                            AGT_SANDBOX_REQUIRE);

    /* a refused write: the note says what and how to allow it */
    char cmd[4096], target[600];
    snprintf(target, sizeof target, "%s/refused.txt", outside);
    snprintf(cmd, sizeof cmd, "{\"command\":\"echo x > %s\"}", target);
    T_EQ_INT(dispatch(s, "a6", cmd, &r), AGT_OK, "refused write: a result");
    const char *t = r ? agt_result_text(r) : "";
    T_CHECK(agt_result_is_error(r), "refused write: an error result");
    T_CHECK(strstr(t, "The sandbox may have refused this command (workspace-write, network off)") &&
                strstr(t, target) && strstr(t, "dangerously_disable_sandbox"),
            "refused write: the note names the sandbox, the path and the way out");
    T_CHECK(!exists(target), "refused write: nothing appears");
    agt_result_free(r);

    /* the escape asks, even in yolo mode, and then runs outside */
    agt_session_set_mode(s, AGT_MODE_YOLO);
    snprintf(cmd, sizeof cmd, "{\"command\":\"echo x > %s\",\"dangerously_disable_sandbox\":true}",
             target);
    T_EQ_INT(dispatch(s, "a7", cmd, &r), AGT_EPENDING, "escape: asks even in yolo mode");
    char *pend = NULL;
    agt_session_pending(s, &pend);
    T_CHECK(pend && strstr(pend, "outside the workspace-write sandbox"),
            "escape: the question names the sandbox");
    agt_free(pend);
    T_EQ_INT(agt_session_answer(s, "a7", AGT_DECISION_APPROVE, NULL, &r), AGT_OK,
             "escape: approved");
    T_CHECK(r && !agt_result_is_error(r) && exists(target), "escape: ran outside the sandbox");
    agt_result_free(r);

    /* a host-added writable root */
    char added[600];
    snprintf(added, sizeof added, "%s/added", outside);
    mkdir(added, 0755);
    agt_session_add_writable_root(s, added);
    snprintf(cmd, sizeof cmd, "{\"command\":\"echo y > %s/ok.txt && cat %s/ok.txt\"}", added,
             added);
    T_EQ_INT(dispatch(s, "a8", cmd, &r), AGT_OK, "added root: runs");
    T_CHECK(r && strncmp(agt_result_text(r), "y\n", 2) == 0, "added root: writable");
    agt_result_free(r);

    /* background tasks run sandboxed too */
    snprintf(cmd, sizeof cmd,
             "{\"command\":\"echo z > %s/bg.txt\",\"run_in_background\":true,"
             "\"description\":\"bg write\"}",
             outside);
    T_EQ_INT(dispatch(s, "a9", cmd, &r), AGT_OK, "background: started");
    agt_result_free(r);
    for (int i = 0; i < 1000; i++) {
        char *ev = NULL;
        agt_session_tick(s, -1, &ev);
        bool done = ev && strstr(ev, "task_finished");
        agt_free(ev);
        if (done)
            break;
        usleep(10000);
    }
    snprintf(target, sizeof target, "%s/bg.txt", outside);
    T_CHECK(!exists(target), "background: the write outside was refused");
    agt_session_free(s);
}

/* Processes whose environment holds the entry mark (inherited by every
 * descendant, setsid or not). */
static int marked(const char *mark)
{
    DIR *d = opendir("/proc");
    int n = 0;
    struct dirent *e;
    size_t ml = strlen(mark);
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char path[300];
        static char buf[1 << 16];
        snprintf(path, sizeof path, "/proc/%s/environ", e->d_name);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            continue;
        size_t got = fread(buf, 1, sizeof buf, f);
        fclose(f);
        for (size_t i = 0; i + ml <= got; i++)
            if (memcmp(buf + i, mark, ml) == 0 && (i == 0 || buf[i - 1] == '\0')) {
                n++;
                break;
            }
    }
    if (d)
        closedir(d);
    return n;
}

/* Issue 14 through the public API: the normal end of a Bash call and a
 * TaskStop leave no setsid or daemonized descendant. */
/* The listing of a folder tree: one line per entry below dir, "path type
 * size mode" sorted by path (an empty folder counts), for comparing a
 * workspace byte by byte before and after a command. */
static void list_into(const char *dir, const char *rel, char ***v, size_t *n)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char path[2048], sub[2048];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        snprintf(sub, sizeof sub, "%s%s%s", rel, rel[0] ? "/" : "", e->d_name);
        struct stat st;
        if (lstat(path, &st) != 0)
            continue;
        char line[2200];
        snprintf(line, sizeof line, "%s %c %lld %o", sub,
                 S_ISDIR(st.st_mode)   ? 'd'
                 : S_ISLNK(st.st_mode) ? 'l'
                                       : 'f',
                 S_ISDIR(st.st_mode) ? 0LL : (long long)st.st_size, (unsigned)st.st_mode & 07777);
        *v = realloc(*v, (*n + 1) * sizeof **v);
        (*v)[(*n)++] = strdup(line);
        if (S_ISDIR(st.st_mode))
            list_into(path, sub, v, n);
    }
    closedir(d);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *listing(const char *dir)
{
    char **v = NULL;
    size_t n = 0;
    list_into(dir, "", &v, &n);
    qsort(v, n, sizeof *v, cmp_str);
    size_t len = 1;
    for (size_t i = 0; i < n; i++)
        len += strlen(v[i]) + 1;
    char *out = calloc(1, len);
    for (size_t i = 0; i < n; i++) {
        strcat(out, v[i]);
        strcat(out, "\n");
        free(v[i]);
    }
    free(v);
    return out;
}

static agt_session *session_in(const char *root)
{
    agt_session *s = NULL;
    if (agt_session_new(&s, reg, root) != AGT_OK)
        return NULL;
    agt_session_set_task_log_dir(s, logs);
    agt_session_set_mode(s, AGT_MODE_YOLO);
    agt_session_set_sandbox(s, AGT_SANDBOX_WORKSPACE_WRITE, AGT_SANDBOX_NETWORK_OFF,
                            AGT_SANDBOX_REQUIRE);
    return s;
}

/* The text of a Bash call's result (malloc'd). */
static char *bash(agt_session *s, const char *id, const char *command)
{
    json_t *a = json_pack("{s:s}", "command", command);
    char *args = json_dumps(a, 0);
    json_decref(a);
    agt_result *r = NULL;
    agt_session_dispatch(s, id, "Bash", args, &r);
    free(args);
    char *t = strdup(r ? agt_result_text(r) : "(no result)");
    agt_result_free(r);
    return t;
}

/* Placeholders of protected paths leave no trace in the user's tree, and a
 * workspace without .git cannot get one from a command (so no hooks). */
static void test_placeholders(void)
{
    char p1[600], cmd[4096];
    snprintf(p1, sizeof p1, "%s/p1", base);
    snprintf(cmd, sizeof cmd, "mkdir -p %s/src && echo a > %s/a.txt && echo b > %s/src/b.txt", p1,
             p1, p1);
    T_EQ_INT(system(cmd), 0, "placeholders: setup of a workspace without .git");
    char *before = listing(p1);
    T_EQ_STR(before, "a.txt f 2 644\nsrc d 0 755\nsrc/b.txt f 2 644\n",
             "placeholders: the listing before (as made)");
    agt_session *s = session_in(p1);
    char *out = bash(s, "p1",
                     "ls -A; mkdir -p .git/hooks; echo rc1=$?; "
                     "echo 'echo pwned' > .git/hooks/pre-commit; echo rc2=$?; "
                     "git init -q . >/dev/null 2>&1; echo rc3=$?; "
                     "mkdir .agenttools/x; echo rc4=$?; rmdir .git; echo rc5=$?");
    T_CHECK(strncmp(out, ".agenttools\n.git\na.txt\nsrc\n", 27) == 0,
            "placeholders: the command sees the two read-only placeholders (%s)", flat(out));
    T_CHECK(strstr(out, "rc1=1\n") && strstr(out, "rc2=1\n") && !strstr(out, "rc3=0\n") &&
                strstr(out, "rc4=1\n") && strstr(out, "rc5=1\n"),
            "placeholders: no .git/hooks, no git init, no .agenttools entry, no rmdir (%s)",
            flat(out));
    free(out);
    char *after = listing(p1);
    T_EQ_STR(after, before, "placeholders: the workspace listing is byte-identical after");
    free(after);
    out = bash(s, "p2", "echo c > c.txt; cat c.txt");
    T_CHECK(strncmp(out, "c\n", 2) == 0, "placeholders: ordinary writes still work");
    free(out);
    snprintf(cmd, sizeof cmd, "%s/c.txt", p1);
    unlink(cmd);

    /* a background task holds the placeholders while it runs: a foreground
     * command that ends meanwhile does not take them away from it */
    char flag[600];
    snprintf(flag, sizeof flag, "%s/go", base);
    snprintf(cmd, sizeof cmd,
             "{\"command\":\"echo started; while [ ! -e %s ]; do sleep 0.01; done; "
             "mkdir -p .git/hooks; echo 'echo pwned' > .git/hooks/x; echo rc=$?\","
             "\"run_in_background\":true,\"description\":\"holds\"}",
             flag);
    agt_result *r = NULL;
    T_EQ_INT(agt_session_dispatch(s, "b1", "Bash", cmd, &r), AGT_OK,
             "placeholders: background task started");
    json_t *j = r ? json_loads(agt_result_json(r), 0, NULL) : NULL;
    char tid[128];
    snprintf(tid, sizeof tid, "{\"task_id\":\"%s\",\"block\":true,\"timeout\":600}",
             json_string_value(json_object_get(j, "task_id")));
    json_decref(j);
    agt_result_free(r);
    out = bash(s, "b2", "ls -A");
    T_CHECK(strncmp(out, ".agenttools\n.git\na.txt\nsrc\n", 27) == 0,
            "placeholders: a second command meanwhile sees them too (%s)", flat(out));
    free(out);
    char git[700];
    snprintf(git, sizeof git, "%s/.git", p1);
    T_CHECK(exists(git), "placeholders: .git stays while the task runs");
    FILE *f = fopen(flag, "w");
    if (f != NULL)
        fclose(f);
    r = NULL;
    agt_session_dispatch(s, "b3", "TaskOutput", tid, &r);
    T_CHECK(r && strstr(agt_result_text(r), "started\n") && strstr(agt_result_text(r), "rc=1"),
            "placeholders: the task could not make .git/hooks after the other command ended (%s)",
            flat(r ? agt_result_text(r) : NULL));
    agt_result_free(r);
    for (int i = 0; i < 6000 && exists(git); i++) {
        char *ev = NULL;
        agt_session_tick(s, 0, &ev);
        agt_free(ev);
        usleep(10000);
    }
    after = listing(p1);
    T_EQ_STR(after, before, "placeholders: identical again after the task ended");
    free(after);
    free(before);
    agt_session_free(s);
    unlink(flag);

    /* a repository without .git/hooks, and the user's own empty folders */
    char p2[600];
    snprintf(p2, sizeof p2, "%s/p2", base);
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s && cd %s && git init -q --template= . && mkdir .agenttools && "
             "echo x > x.txt",
             p2, p2);
    T_EQ_INT(system(cmd), 0, "placeholders: setup of a repository without hooks");
    before = listing(p2);
    s = session_in(p2);
    out = bash(s, "q1",
               "echo 'echo pwned' > .git/hooks/post-checkout; echo rc=$?; "
               "git status --porcelain; echo st=$?");
    T_CHECK(strstr(out, "rc=1\n") && strstr(out, "?? x.txt\nst=0\n"),
            "placeholders: .git/hooks read-only, git works (%s)", flat(out));
    free(out);
    after = listing(p2);
    T_EQ_STR(after, before, "placeholders: the repository's listing is byte-identical after");
    snprintf(cmd, sizeof cmd, "%s/.agenttools", p2);
    T_CHECK(exists(cmd), "placeholders: the user's own empty .agenttools is kept");
    free(after);

    /* no submodules: .git/modules cannot be made (a module repository's
     * hooks would run at the user's next `git submodule update`) */
    out = bash(s, "q2",
               "mkdir -p .git/modules/evil/hooks; echo rc1=$?; "
               "echo 'echo pwned' > .git/modules/evil/hooks/post-checkout; echo rc2=$?; "
               "ls -A .git/modules; echo rc3=$?");
    /* the whole .git is read-only: the mkdir is refused, nothing is there */
    T_CHECK(strstr(out, "Read-only file system\nrc1=1\n") && strstr(out, "rc2=1\n") &&
                strstr(out, "rc3=2\n"),
            "modules: a repository without submodules gets no .git/modules from a command (%s)",
            flat(out));
    free(out);
    after = listing(p2);
    T_EQ_STR(after, before, "modules: the listing is byte-identical after");
    free(after);
    free(before);

    /* a submodule's repository (name with a slash, as git keeps them):
     * read-only like the rest of .git, HEAD included */
    snprintf(cmd, sizeof cmd,
             "cd %s && git init -q --bare --template= .git/modules/libs/foo && "
             "mkdir .git/modules/libs/foo/hooks && git init -q --bare --template= "
             ".git/modules/libs/foo/modules/inner",
             p2);
    T_EQ_INT(system(cmd), 0, "modules: setup of two module repositories, one nested");
    before = listing(p2);
    out = bash(s, "q3",
               "echo x > .git/modules/libs/foo/hooks/post-checkout; echo rc1=$?; "
               "echo '[core]' >> .git/modules/libs/foo/config; echo rc2=$?; "
               "echo x > .git/modules/libs/foo/modules/inner/hooks/pre-commit; echo rc3=$?; "
               "echo '[core]' >> .git/modules/libs/foo/modules/inner/config; echo rc4=$?; "
               "git --git-dir=.git/modules/libs/foo symbolic-ref HEAD refs/heads/other; "
               "echo rc5=$?; git --git-dir=.git/modules/libs/foo symbolic-ref HEAD");
    T_CHECK(strstr(out, "rc1=1\n") && strstr(out, "rc2=1\n") && strstr(out, "rc3=1\n") &&
                strstr(out, "rc4=1\n") && strstr(out, "rc5=1\nrefs/heads/master\n"),
            "modules: hooks, config and HEAD of both read-only (%s)", flat(out));
    free(out);
    /* git redirected to files the command writes: .git renamed away and a
     * new one made with hooks of its own, .git/commondir naming a folder
     * with its own config and hooks, .git removed (both ran a planted hook
     * at the user's next commit when only hooks and config were
     * protected); a commit is refused too (it writes the repository) */
    out = bash(s, "q4",
               "mv .git .gitx; echo rc1=$?; mkdir -p evil/hooks; echo ../evil > .git/commondir; "
               "echo rc2=$?; rm -rf .git 2>/dev/null; echo rc3=$?; git add x.txt; echo rc4=$?; "
               "rm -rf evil; ls -d .git .gitx 2>&1");
    T_CHECK(strstr(out, "rc1=1\n") && strstr(out, "rc2=1\n") && strstr(out, "rc3=1\n") &&
                strstr(out, "rc4=128\n") && strstr(out, "\n.git\n") &&
                strstr(out, "cannot access '.gitx'"),
            "git redirects: .git cannot be renamed, removed, redirected or written (%s)",
            flat(out));
    free(out);
    snprintf(cmd, sizeof cmd,
             "cd %s && git --git-dir=.git/modules/libs/foo symbolic-ref HEAD >/dev/null", p2);
    T_EQ_INT(system(cmd), 0, "modules: HEAD still readable outside");
    after = listing(p2);
    T_EQ_STR(after, before, "modules: no placeholder left in the module repositories");
    free(after);
    free(before);
    agt_session_free(s);
}

static void test_escapees(void)
{
    agt_session *s = session();
    agt_session_set_mode(s, AGT_MODE_YOLO);
    char mark[64], cmd[1024];
    snprintf(mark, sizeof mark, "AGT_SBS_MARK=%d", (int)getpid());
    snprintf(cmd, sizeof cmd,
             "{\"command\":\"export %s; setsid -f sleep 1000; "
             "( setsid sh -c 'sleep 1000 & exit 0' & ); sleep 0.2; echo started\"}",
             mark);
    agt_result *r;
    T_EQ_INT(dispatch(s, "e1", cmd, &r), AGT_OK, "escapees: the Bash call returns");
    T_CHECK(r && strncmp(agt_result_text(r), "started\n", 8) == 0, "escapees: its output");
    agt_result_free(r);
    T_EQ_INT(marked(mark), 0, "escapees: none left after the normal end of the call");
    /* the escapees report that they run (files in the workspace); the
     * task says so once both exist */
    snprintf(cmd, sizeof cmd,
             "{\"command\":\"export %s; rm -f d1 d2; setsid -f sh -c 'touch d1; exec sleep 1000'; "
             "( setsid sh -c '( touch d2; exec sleep 1000 ) & exit 0' & ); "
             "while [ ! -e d1 ] || [ ! -e d2 ]; do sleep 0.01; done; echo started; sleep 1000\","
             "\"run_in_background\":true,\"description\":\"escapees\"}",
             mark);
    T_EQ_INT(dispatch(s, "e2", cmd, &r), AGT_OK, "escapees: background task started");
    json_t *j = r ? json_loads(agt_result_json(r), 0, NULL) : NULL;
    char stop[128];
    snprintf(stop, sizeof stop, "{\"task_id\":\"%s\"}",
             json_string_value(json_object_get(j, "task_id")));
    json_decref(j);
    agt_result_free(r);
    bool started = false;
    for (int i = 0; i < 60000 && !started; i++) {
        r = NULL;
        agt_session_dispatch(s, "e4", "TaskOutput", stop, &r);
        started = r && strstr(agt_result_text(r), "started") != NULL;
        agt_result_free(r);
        if (!started)
            usleep(1000);
    }
    /* a process in the middle of exec (sh -> sleep) shows no environment
     * for a moment: look again until the three are seen (bounded) */
    int running = marked(mark);
    for (int i = 0; i < 1000 && started && running < 3; i++) {
        usleep(10000);
        running = marked(mark);
    }
    T_CHECK(running >= 3, "escapees: the task and its escapees run (%d seen)", running);
    r = NULL;
    T_EQ_INT(agt_session_dispatch(s, "e3", "TaskStop", stop, &r), AGT_OK, "escapees: TaskStop");
    agt_result_free(r);
    for (int i = 0; i < 1000 && marked(mark) > 0; i++) {
        char *ev = NULL;
        agt_session_tick(s, -1, &ev);
        agt_free(ev);
        usleep(10000);
    }
    T_EQ_INT(marked(mark), 0, "escapees: none left after TaskStop");
    agt_session_free(s);
}

/* The probe of another process that asks for it first thing (the eager
 * order): forked before this process probes anything; its JSON arrives on
 * the returned descriptor. */
static int eager_probe_child(pid_t *pid)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    *pid = fork();
    if (*pid == 0) {
        close(fds[0]);
        char *j = NULL;
        agt_sandbox_probe(&j);
        size_t n = j ? strlen(j) : 0;
        _exit(j != NULL && write(fds[1], j, n) == (ssize_t)n ? 0 : 1);
    }
    close(fds[1]);
    return fds[0];
}

/* agt-tools and every host set up a session before running anything: that
 * must not fork the namespace probe (five children), and the probe a
 * command then runs must say exactly what the eager probe says. */
static void test_lazy_probe(int eager_fd, pid_t eager_pid)
{
    T_CHECK(!agti_sandbox_probe_ran(), "lazy probe: not run at start");
    agt_session *s = session();
    int mode = -1, network = -1, enforce = -1;
    agt_session_sandbox(s, &mode, &network, &enforce);
    long abi = syscall(444 /* landlock_create_ruleset */, NULL, 0, 1U);
    bool seccomp = access("/proc/sys/kernel/seccomp/actions_avail", R_OK) == 0;
    T_EQ_INT(mode, abi > 0 && seccomp ? AGT_SANDBOX_WORKSPACE_WRITE : AGT_SANDBOX_OFF,
             "lazy probe: the default mode still follows Landlock and seccomp");
    agt_session_set_sandbox(s, mode, AGT_SANDBOX_NETWORK_OFF, AGT_SANDBOX_BEST_EFFORT);
    agt_session_set_mode(s, AGT_MODE_YOLO);
    T_CHECK(!agti_sandbox_probe_ran(),
            "lazy probe: a session with the default sandbox set up has not probed namespaces");
    const agti_sandbox_probe *b = agti_sandbox_probe_basic();
    T_EQ_INT(b->landlock_abi, abi > 0 ? (int)abi : 0, "lazy probe: basic Landlock ABI = kernel");
    T_EQ_INT(b->seccomp, seccomp, "lazy probe: basic seccomp = /proc/sys/kernel/seccomp");
    T_EQ_INT(b->root, geteuid() == 0, "lazy probe: basic root = geteuid");
    agt_result *r = NULL;
    agt_session_dispatch(s, "lazy", "Bash", "{\"command\":\"echo ran\"}", &r);
    T_CHECK(r != NULL && strncmp(agt_result_text(r), "ran\n", 4) == 0,
            "lazy probe: the first command runs (%s)", flat(r ? agt_result_text(r) : NULL));
    agt_result_free(r);
    T_CHECK(agti_sandbox_probe_ran(), "lazy probe: the first command ran the whole probe");
    const agti_sandbox_probe *f = agti_sandbox_probe_get();
    T_CHECK(f->supported == b->supported && f->landlock_abi == b->landlock_abi &&
                f->seccomp == b->seccomp && f->root == b->root,
            "lazy probe: the whole probe agrees with the basic part");
    char *lazy = NULL;
    agt_sandbox_probe(&lazy);
    char eager[1024] = "";
    size_t got = 0;
    ssize_t n;
    while (eager_fd >= 0 && got + 1 < sizeof eager &&
           (n = read(eager_fd, eager + got, sizeof eager - 1 - got)) > 0)
        got += (size_t)n;
    eager[got] = '\0';
    if (eager_fd >= 0)
        close(eager_fd);
    int st = 0;
    if (eager_pid > 0)
        waitpid(eager_pid, &st, 0);
    T_CHECK(got > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
            "lazy probe: the eager process probed");
    T_EQ_STR(lazy, eager, "lazy probe: its result is the eager probe's, byte for byte");
    agt_free(lazy);
    agt_session_free(s);
}

int main(void)
{
    const char *t = getenv("TMPDIR");
    snprintf(base, sizeof base, "%s/agt-sbs-XXXXXX", t && t[0] == '/' ? t : "/tmp");
    char real[PATH_MAX];
    if (mkdtemp(base) == NULL || realpath(base, real) == NULL || strlen(real) >= sizeof base)
        return 1;
    memcpy(base, real, strlen(real) + 1);
    snprintf(ws, sizeof ws, "%s/ws", base);
    snprintf(outside, sizeof outside, "%s/out", base);
    snprintf(logs, sizeof logs, "%s/logs", base);
    mkdir(ws, 0755);
    mkdir(outside, 0755);
    if (chdir(base) != 0)
        return 1;
    pid_t eager_pid = -1;
    int eager_fd = eager_probe_child(&eager_pid);
    if (agt_registry_new(&reg) != AGT_OK || agt_registry_load_builtin(reg, "chat") != AGT_OK)
        return 1;
    test_lazy_probe(eager_fd, eager_pid);
    char *probe = NULL;
    agt_sandbox_probe(&probe);
    t_diag("sandbox probe: %s", probe);
    json_t *p = json_loads(probe, 0, NULL);
    agt_free(probe);
    bool can = json_integer_value(json_object_get(p, "landlock_abi")) > 0 &&
               json_is_true(json_object_get(p, "seccomp"));
    bool mounts = json_is_true(json_object_get(p, "mount_namespace"));
    json_decref(p);
    test_api(can);
    test_escapees();
    if (can && mounts) {
        test_commands();
        test_placeholders();
    } else
        t_skip("this kernel cannot enforce the sandbox");
    agt_registry_free(reg);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", base);
    if (system(cmd) != 0)
        t_diag("cleanup failed");
    return t_done();
}
