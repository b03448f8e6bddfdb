/*
 * One policy for the file tools and the sandbox (issue 15), through the
 * public API: a file tool's path outside every folder of the session is an
 * approval matter. Manual mode asks (the exact pending entry: reason,
 * suggested rule, the folder and its access); approving once runs that call
 * only; approving for the session adds the folder: read-only for Read and
 * Glob (a later Write there asks again), writable for Write, where the
 * sandboxed Bash may then write too. Yolo mode runs it without adding a
 * root; deny rules and the sensitive-file policy apply in every mode; the
 * task log folder stays read-only; the synchronous approver gets the same
 * request; save/restore keeps the approved folders.
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agenttools/agenttools.h"
#include "harness.h"

static agt_registry *reg;
static char base[PATH_MAX / 2], ws[PATH_MAX / 2 + 8], rdir[PATH_MAX / 2 + 8],
    wdir[PATH_MAX / 2 + 8], ydir[PATH_MAX / 2 + 8], logs[PATH_MAX / 2 + 8];

static void put(const char *dir, const char *name, const char *text)
{
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    if (f != NULL) {
        fputs(text, f);
        fclose(f);
    }
}

static char *slurp(const char *dir, const char *name)
{
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "rb");
    if (f == NULL)
        return NULL;
    char *buf = calloc(1, 4096);
    size_t n = fread(buf, 1, 4095, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static agt_session *session(int mode)
{
    agt_session *s = NULL;
    if (agt_session_new(&s, reg, ws) != AGT_OK)
        return NULL;
    agt_session_set_task_log_dir(s, logs);
    agt_session_set_mode(s, mode);
    return s;
}

static int dispatch(agt_session *s, const char *id, const char *tool, const char *args,
                    agt_result **r)
{
    *r = NULL;
    return agt_session_dispatch(s, id, tool, args, r);
}

static char *pending(agt_session *s)
{
    char *p = NULL;
    agt_session_pending(s, &p);
    return p;
}

static json_t *sandbox_roots(agt_session *s)
{
    char *j = NULL;
    agt_session_sandbox_status(s, &j);
    json_t *v = json_loads(j ? j : "{}", 0, NULL);
    agt_free(j);
    json_t *roots = json_incref(json_object_get(v, "writable_roots"));
    json_decref(v);
    return roots;
}

static bool has_root(json_t *roots, const char *dir)
{
    size_t i;
    json_t *v;
    json_array_foreach(roots, i, v)
    {
        if (strcmp(json_string_value(v), dir) == 0)
            return true;
    }
    return false;
}

static const char *READ_OK = "1\tok\n\nRead 1 line (1-1) of 1; reached the end of the file.";

static void test_read_manual(void)
{
    agt_session *s = session(AGT_MODE_MANUAL);
    char args[4 * PATH_MAX], want[4 * PATH_MAX];
    snprintf(args, sizeof args, "{\"path\":\"%s/o.txt\"}", rdir);
    agt_result *r;
    T_EQ_INT(dispatch(s, "r1", "Read", args, &r), AGT_EPENDING, "read outside: asks in manual");
    T_CHECK(r == NULL, "read outside: no result while it waits");
    char *p = pending(s);
    snprintf(want, sizeof want,
             "[{\"call_id\":\"r1\",\"tool\":\"Read\",\"arguments\":{\"path\":\"%s/o.txt\"},"
             "\"reason\":\"Read would read %s/o.txt, which is outside the workspace %s and every "
             "folder added to the session; approving it for the session adds %s as a folder the "
             "file tools may read (not write)\",\"suggested_rule\":\"Read(%s/**)\","
             "\"outside\":{\"folder\":\"%s\",\"access\":\"read\"}}]",
             rdir, rdir, ws, rdir, rdir, rdir);
    T_EQ_STR(p, want, "read outside: the exact pending entry");
    agt_free(p);
    T_EQ_INT(agt_session_answer(s, "r1", AGT_DECISION_APPROVE, NULL, &r), AGT_OK, "approve once");
    T_EQ_STR(r ? agt_result_text(r) : NULL, READ_OK, "approved once: the file is read");
    agt_result_free(r);
    T_EQ_INT(dispatch(s, "r2", "Read", args, &r), AGT_EPENDING, "once: the next read asks again");
    T_EQ_INT(agt_session_answer(s, "r2", AGT_DECISION_APPROVE_SESSION, NULL, &r), AGT_OK,
             "approve for the session");
    T_EQ_STR(r ? agt_result_text(r) : NULL, READ_OK, "approved for the session: read");
    agt_result_free(r);
    p = pending(s);
    T_EQ_STR(p, "[]", "nothing waits any more");
    agt_free(p);
    T_EQ_INT(dispatch(s, "r3", "Read", args, &r), AGT_OK, "a later read there runs at once");
    T_EQ_STR(r ? agt_result_text(r) : NULL, READ_OK, "its text");
    agt_result_free(r);
    snprintf(args, sizeof args, "{\"pattern\":\"*.txt\",\"path\":\"%s\"}", rdir);
    snprintf(want, sizeof want, "%s/o.txt", rdir);
    T_EQ_INT(dispatch(s, "r4", "Glob", args, &r), AGT_OK, "Glob in the folder runs at once");
    T_EQ_STR(r ? agt_result_text(r) : NULL, want, "Glob lists it with its absolute path");
    agt_result_free(r);
    /* read-only: writing there is outside every writable root */
    snprintf(args, sizeof args, "{\"path\":\"%s/new.txt\",\"content\":\"x\\n\"}", rdir);
    T_EQ_INT(dispatch(s, "r5", "Write", args, &r), AGT_EPENDING,
             "a Write in a read-only folder asks");
    p = pending(s);
    snprintf(want, sizeof want, "\"outside\":{\"folder\":\"%s\",\"access\":\"write\"}", rdir);
    T_CHECK(p && strstr(p, want), "its pending entry asks for writing there");
    agt_free(p);
    agt_session_answer(s, "r5", AGT_DECISION_REJECT, "no", &r);
    agt_result_free(r);
    T_CHECK(slurp(rdir, "new.txt") == NULL, "rejected: nothing written");
    json_t *roots = sandbox_roots(s);
    T_CHECK(!has_root(roots, rdir), "a read-only folder is no writable root of the sandbox");
    json_decref(roots);

    /* save / restore keeps it */
    char *saved = NULL;
    T_EQ_INT(agt_session_save(s, &saved), AGT_OK, "save");
    agt_session *s2 = session(AGT_MODE_MANUAL);
    T_EQ_INT(agt_session_restore(s2, saved, strlen(saved)), AGT_OK, "restore");
    agt_free(saved);
    snprintf(args, sizeof args, "{\"path\":\"%s/o.txt\"}", rdir);
    T_EQ_INT(dispatch(s2, "r6", "Read", args, &r), AGT_OK, "restored: the folder is still read");
    T_EQ_STR(r ? agt_result_text(r) : NULL, READ_OK, "restored: its text");
    agt_result_free(r);
    agt_session_free(s2);
    agt_session_free(s);
}

static void test_write_manual(bool sandboxed)
{
    agt_session *s = session(AGT_MODE_MANUAL);
    char args[4 * PATH_MAX], want[4 * PATH_MAX];
    snprintf(args, sizeof args, "{\"path\":\"%s/sub/w.txt\",\"content\":\"w\\n\"}", wdir);
    agt_result *r;
    T_EQ_INT(dispatch(s, "w1", "Write", args, &r), AGT_EPENDING, "write outside: asks");
    char *p = pending(s);
    /* wdir/sub does not exist yet: the folder offered is its nearest
     * existing one */
    snprintf(want, sizeof want,
             "\"reason\":\"Write would change %s/sub/w.txt, which is outside the workspace %s "
             "and every folder added to the session; approving it for the session adds %s as a "
             "writable root for the file tools and the sandboxed commands\"",
             wdir, ws, wdir);
    T_CHECK(p && strstr(p, want), "write outside: the reason names the path and the root");
    snprintf(want, sizeof want, "\"outside\":{\"folder\":\"%s\",\"access\":\"write\"}", wdir);
    T_CHECK(p && strstr(p, want), "write outside: the folder, for writing");
    agt_free(p);
    T_EQ_INT(agt_session_answer(s, "w1", AGT_DECISION_APPROVE_SESSION, NULL, &r), AGT_OK,
             "approve for the session");
    T_CHECK(r && !agt_result_is_error(r), "the write ran (%s)", r ? agt_result_text(r) : "");
    agt_result_free(r);
    char *got = slurp(wdir, "sub/w.txt");
    T_EQ_STR(got, "w\n", "the file is there");
    free(got);
    json_t *roots = sandbox_roots(s);
    T_CHECK(has_root(roots, wdir), "the folder is a writable root of the sandbox too");
    json_decref(roots);
    if (!sandboxed) {
        t_skip("this kernel cannot enforce the sandbox: Bash in the new root not checked");
    } else {
        agt_session_set_sandbox(s, AGT_SANDBOX_WORKSPACE_WRITE, AGT_SANDBOX_NETWORK_OFF,
                                AGT_SANDBOX_REQUIRE);
        agt_session_set_mode(s, AGT_MODE_YOLO);
        snprintf(args, sizeof args,
                 "{\"command\":\"echo b > %s/b.txt && cat %s/b.txt; echo r > %s/r.txt; "
                 "echo rc=$?\"}",
                 wdir, wdir, rdir);
        T_EQ_INT(dispatch(s, "w2", "Bash", args, &r), AGT_OK, "Bash in the new root");
        T_CHECK(r && strncmp(agt_result_text(r), "b\n", 2) == 0 &&
                    strstr(agt_result_text(r), "rc=1"),
                "the sandboxed command writes in the new root, not in the read-only one (%s)",
                r ? agt_result_text(r) : "");
        agt_result_free(r);
        got = slurp(wdir, "b.txt");
        T_EQ_STR(got, "b\n", "the command's file is there");
        free(got);
        T_CHECK(slurp(rdir, "r.txt") == NULL, "nothing written in the read-only folder");
    }
    agt_session_free(s);
}

static int g_decision;
static char *g_request;

static int approver(agt_approval *req, void *payload)
{
    (void)payload;
    free(g_request);
    g_request = strdup(agt_approval_json(req));
    return g_decision;
}

static void test_modes(void)
{
    char args[4 * PATH_MAX], want[4 * PATH_MAX];
    agt_result *r;
    /* yolo: runs, adds nothing */
    agt_session *s = session(AGT_MODE_YOLO);
    snprintf(args, sizeof args, "{\"path\":\"%s/y.txt\"}", ydir);
    T_EQ_INT(dispatch(s, "y1", "Read", args, &r), AGT_OK, "yolo: a read outside runs");
    T_EQ_STR(r ? agt_result_text(r) : NULL, READ_OK, "yolo: its text");
    agt_result_free(r);
    agt_session_set_mode(s, AGT_MODE_MANUAL);
    T_EQ_INT(dispatch(s, "y2", "Read", args, &r), AGT_EPENDING,
             "yolo added no folder: manual mode asks again");
    agt_session_answer(s, "y2", AGT_DECISION_REJECT, NULL, &r);
    agt_result_free(r);
    agt_session_set_mode(s, AGT_MODE_AUTO);
    snprintf(args, sizeof args, "{\"path\":\"%s/made.txt\",\"content\":\"m\\n\"}", ydir);
    T_EQ_INT(dispatch(s, "y3", "Write", args, &r), AGT_OK, "auto: a write outside runs");
    T_CHECK(r && !agt_result_is_error(r), "auto: written");
    agt_result_free(r);
    char *got = slurp(ydir, "made.txt");
    T_EQ_STR(got, "m\n", "auto: the file is there");
    free(got);
    json_t *roots = sandbox_roots(s);
    T_CHECK(!has_root(roots, ydir), "auto added no writable root");
    json_decref(roots);
    /* deny rules apply in every mode */
    agt_session_set_mode(s, AGT_MODE_YOLO);
    char rule[PATH_MAX + 32];
    snprintf(rule, sizeof rule, "Read(%s/**)", ydir);
    agt_session_add_rule(s, AGT_RULE_DENY, rule);
    snprintf(args, sizeof args, "{\"path\":\"%s/y.txt\"}", ydir);
    dispatch(s, "y4", "Read", args, &r);
    snprintf(want, sizeof want,
             "Read call refused: the rule '%s' in the deny list forbids it. Do not retry it; "
             "take another approach or ask the user to change the rules.",
             rule);
    T_EQ_STR(r ? agt_result_text(r) : NULL, want, "yolo: a deny rule still refuses");
    agt_result_free(r);
    agt_session_free(s);

    /* sensitive files: refused without a question */
    s = session(AGT_MODE_MANUAL);
    snprintf(args, sizeof args, "{\"path\":\"%s/.env\"}", ydir);
    T_EQ_INT(dispatch(s, "z1", "Read", args, &r), AGT_OK, "sensitive outside: no question");
    snprintf(want, sizeof want, "%s/.env is a sensitive file (", ydir);
    T_CHECK(r && agt_result_is_error(r) && strncmp(agt_result_text(r), want, strlen(want)) == 0,
            "sensitive outside: refused as sensitive (%s)", r ? agt_result_text(r) : "");
    agt_result_free(r);
    /* the task log folder stays read-only, also in yolo */
    agt_session_set_mode(s, AGT_MODE_YOLO);
    put(logs, "x.log", "log\n");
    snprintf(args, sizeof args, "{\"path\":\"%s/x.log\",\"content\":\"pwn\\n\"}", logs);
    dispatch(s, "z2", "Write", args, &r);
    snprintf(want, sizeof want, "Cannot use path '%s/x.log': ", logs);
    T_CHECK(r && agt_result_is_error(r) && strncmp(agt_result_text(r), want, strlen(want)) == 0,
            "yolo: a write to the task log is refused, not admitted (%s)",
            r ? agt_result_text(r) : "");
    agt_result_free(r);
    got = slurp(logs, "x.log");
    T_EQ_STR(got, "log\n", "the task log is unchanged");
    free(got);
    agt_session_free(s);

    /* the synchronous approver gets the same request; approving for the
     * session adds the folder */
    s = session(AGT_MODE_MANUAL);
    agt_session_set_approver(s, approver, NULL);
    g_decision = AGT_DECISION_APPROVE_SESSION;
    snprintf(args, sizeof args, "{\"path\":\"%s/y.txt\"}", ydir);
    T_EQ_INT(dispatch(s, "s1", "Read", args, &r), AGT_OK, "approver: the call runs");
    T_EQ_STR(r ? agt_result_text(r) : NULL, READ_OK, "approver: its text");
    agt_result_free(r);
    snprintf(want, sizeof want, "\"outside\":{\"folder\":\"%s\",\"access\":\"read\"}", ydir);
    T_CHECK(g_request && strstr(g_request, want), "approver: the request names the folder");
    free(g_request);
    g_request = NULL;
    T_EQ_INT(dispatch(s, "s2", "Read", args, &r), AGT_OK, "approver: the next read");
    T_CHECK(g_request == NULL, "approver: not asked again");
    agt_result_free(r);
    agt_session_free(s);
}

/* The host adds a read-only folder itself. */
static void test_readable_api(void)
{
    agt_session *s = session(AGT_MODE_MANUAL);
    T_EQ_INT(agt_session_add_readable_root(s, "rel"), AGT_EINVAL, "readable root: relative");
    T_EQ_INT(agt_session_add_readable_root(NULL, ydir), AGT_EINVAL, "readable root: NULL session");
    char missing[PATH_MAX];
    snprintf(missing, sizeof missing, "%s/missing", base);
    T_EQ_INT(agt_session_add_readable_root(s, missing), AGT_ENOTFOUND, "readable root: missing");
    T_EQ_INT(agt_session_add_readable_root(s, ydir), AGT_OK, "readable root added");
    T_EQ_INT(agt_session_add_readable_root(s, ydir), AGT_OK, "readable root added twice");
    char *j = NULL;
    agt_session_sandbox_status(s, &j);
    char want[4 * PATH_MAX];
    snprintf(want, sizeof want, "\"readable_roots\":[\"%s\"]", ydir);
    T_CHECK(j && strstr(j, want), "status lists it once (%s)", j ? j : "");
    agt_free(j);
    char args[4 * PATH_MAX];
    agt_result *r;
    snprintf(args, sizeof args, "{\"path\":\"%s/y.txt\"}", ydir);
    T_EQ_INT(dispatch(s, "h1", "Read", args, &r), AGT_OK, "readable root: Read runs");
    T_EQ_STR(r ? agt_result_text(r) : NULL, READ_OK, "readable root: its text");
    agt_result_free(r);
    snprintf(args, sizeof args,
             "{\"path\":\"%s/y.txt\",\"old_string\":\"ok\",\"new_string\":\"no\"}", ydir);
    T_EQ_INT(dispatch(s, "h2", "Edit", args, &r), AGT_EPENDING, "readable root: Edit asks");
    agt_session_answer(s, "h2", AGT_DECISION_REJECT, NULL, &r);
    agt_result_free(r);
    char *got = slurp(ydir, "y.txt");
    T_EQ_STR(got, "ok\n", "readable root: unchanged");
    free(got);
    agt_session_free(s);
}

int main(void)
{
    const char *t = getenv("TMPDIR");
    snprintf(base, sizeof base, "%s/agt-outside-XXXXXX", t && t[0] == '/' ? t : "/tmp");
    char real[PATH_MAX];
    if (mkdtemp(base) == NULL || realpath(base, real) == NULL || strlen(real) >= sizeof base)
        return 1;
    memcpy(base, real, strlen(real) + 1);
    snprintf(ws, sizeof ws, "%s/ws", base);
    snprintf(rdir, sizeof rdir, "%s/rd", base);
    snprintf(wdir, sizeof wdir, "%s/wd", base);
    snprintf(ydir, sizeof ydir, "%s/yd", base);
    snprintf(logs, sizeof logs, "%s/logs", base);
    mkdir(ws, 0755);
    mkdir(rdir, 0755);
    mkdir(wdir, 0755);
    mkdir(ydir, 0755);
    mkdir(logs, 0700);
    put(rdir, "o.txt", "ok\n");
    put(ydir, "y.txt", "ok\n");
    put(ydir, ".env", "SECRET=1\n");
    if (agt_registry_new(&reg) != AGT_OK || agt_registry_load_builtin(reg, "chat") != AGT_OK)
        return 1;
    char *probe = NULL;
    agt_sandbox_probe(&probe);
    t_diag("sandbox probe: %s", probe);
    json_t *p = json_loads(probe, 0, NULL);
    agt_free(probe);
    bool can = json_integer_value(json_object_get(p, "landlock_abi")) > 0 &&
               json_is_true(json_object_get(p, "seccomp")) &&
               json_is_true(json_object_get(p, "mount_namespace"));
    json_decref(p);
    test_read_manual();
    test_write_manual(can);
    test_modes();
    test_readable_api();
    agt_registry_free(reg);
    char cmd[PATH_MAX];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    if (system(cmd) != 0)
        t_diag("cleanup failed");
    return t_done();
}
