/* Temporary workspaces for the file tool tests: build a tree, run tool
 * calls through agt_session_dispatch, read files back. */
#ifndef AGT_TEST_WSFIX_H
#define AGT_TEST_WSFIX_H

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agenttools/agenttools.h"
#include "harness.h"

static char ws[512];

/* A test name must stay on one line (TAP). */
__attribute__((unused)) static const char *flat(const char *s)
{
    static char buf[4][200];
    static int k;
    char *b = buf[k++ % 4];
    size_t i = 0;
    for (; s != NULL && s[i] != '\0' && i + 1 < sizeof buf[0]; i++)
        b[i] = (s[i] == '\n' || s[i] == '\r') ? '|' : s[i];
    b[i] = '\0';
    return b;
}

static void mkdirs_for(const char *full)
{
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s", full);
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(tmp, 0755);
            *p = '/';
        }
}

static void put_file_n(const char *rel, const char *data, size_t len)
{
    char full[1024];
    snprintf(full, sizeof full, "%s/%s", ws, rel);
    mkdirs_for(full);
    FILE *f = fopen(full, "wb");
    if (f == NULL) {
        printf("Bail out! cannot create %s\n", full);
        exit(1);
    }
    fwrite(data, 1, len, f);
    fclose(f);
}

static void put_file(const char *rel, const char *data)
{
    put_file_n(rel, data, strlen(data));
}

/* Contents of a workspace file (static buffer), NULL when missing. */
__attribute__((unused)) static const char *get_file(const char *rel, size_t *len)
{
    static char buf[1 << 20];
    char full[1024];
    snprintf(full, sizeof full, "%s/%s", ws, rel);
    FILE *f = fopen(full, "rb");
    if (f == NULL)
        return NULL;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

__attribute__((unused)) static void set_mtime(const char *rel, long sec)
{
    char full[1024];
    snprintf(full, sizeof full, "%s/%s", ws, rel);
    struct timespec ts[2] = {{sec, 0}, {sec, 0}};
    utimensat(AT_FDCWD, full, ts, AT_SYMLINK_NOFOLLOW);
}

/* Rewrites rel behind the tools' back, keeping its modification and
 * access times (and, when data has the same length, its size). */
__attribute__((unused)) static void sneak(const char *rel, const char *data)
{
    char full[1024];
    snprintf(full, sizeof full, "%s/%s", ws, rel);
    struct stat st;
    T_CHECK(stat(full, &st) == 0, "sneak: stat %s", rel);
    put_file(rel, data);
    struct timespec ts[2] = {st.st_atim, st.st_mtim};
    T_CHECK(utimensat(AT_FDCWD, full, ts, 0) == 0, "sneak: times of %s put back", rel);
    struct stat st2;
    stat(full, &st2);
    T_CHECK(st2.st_mtim.tv_sec == st.st_mtim.tv_sec && st2.st_mtim.tv_nsec == st.st_mtim.tv_nsec,
            "sneak: %s has its old mtime", rel);
}

static agt_registry *reg;

static agt_session *new_session(void)
{
    agt_session *s = NULL;
    if (agt_session_new(&s, reg, ws) != AGT_OK) {
        printf("Bail out! session: %s\n", agt_error_message());
        exit(1);
    }
    agt_session_set_mode(s, AGT_MODE_YOLO);
    return s;
}

static agt_result *call(agt_session *s, const char *tool, const char *args)
{
    agt_result *r = NULL;
    int rc = agt_session_dispatch(s, "c", tool, args, &r);
    if (rc != AGT_OK || r == NULL) {
        printf("Bail out! dispatch %s %s: %d %s\n", tool, args, rc, agt_error_message());
        exit(1);
    }
    return r;
}

/* Runs a shell command in the workspace; its exit status (-1: not run). */
__attribute__((unused, format(printf, 1, 2))) static int ws_sh(const char *fmt, ...)
{
    char cmd[4096];
    int n = snprintf(cmd, sizeof cmd, "cd '%s' && ", ws);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd + n, sizeof cmd - (size_t)n, fmt, ap);
    va_end(ap);
    int st = system(cmd);
    return st == -1 ? -1 : WEXITSTATUS(st);
}

/* The result text of a call (a static copy) and its status. */
__attribute__((unused)) static const char *ws_run(agt_session *s, const char *tool,
                                                  const char *args, int *status)
{
    static char buf[1 << 16];
    agt_result *r = call(s, tool, args);
    snprintf(buf, sizeof buf, "%s", agt_result_text(r));
    if (status)
        *status = agt_result_status(r);
    agt_result_free(r);
    return buf;
}

/* Runs a call and checks its exact text and error flag. */
__attribute__((unused)) static void expect(agt_session *s, const char *tool, const char *args,
                                           const char *want, int want_error, const char *name)
{
    agt_result *r = call(s, tool, args);
    T_EQ_STR(agt_result_text(r), want, "%s: %s text", tool, name);
    T_EQ_INT(agt_result_is_error(r), want_error, "%s: %s is_error", tool, name);
    agt_result_free(r);
}

/* Runs a call and checks the error flag, the status and that the text
 * starts with prefix. */
__attribute__((unused)) static void expect_prefix(agt_session *s, const char *tool,
                                                  const char *args, const char *prefix,
                                                  int want_status, const char *name)
{
    agt_result *r = call(s, tool, args);
    const char *t = agt_result_text(r);
    if (!T_CHECK(strncmp(t, prefix, strlen(prefix)) == 0, "%s: %s text", tool, name))
        t_diag("  got [%s]\n#   want prefix [%s]", t, prefix);
    T_EQ_INT(agt_result_is_error(r), want_status != AGT_OK, "%s: %s is_error", tool, name);
    T_EQ_INT(agt_result_status(r), want_status, "%s: %s status", tool, name);
    agt_result_free(r);
}

/* A path outside every folder of the session is an approval matter: in
 * manual mode the call waits for approval (nothing runs), its pending
 * entry names the folder approving it for the session adds and whether
 * for writing; rejected here, and the session goes back to yolo mode. */
__attribute__((unused)) static void expect_outside(agt_session *s, const char *tool,
                                                   const char *args, const char *folder,
                                                   const char *access, const char *name)
{
    agt_session_set_mode(s, AGT_MODE_MANUAL);
    agt_result *r = NULL;
    int rc = agt_session_dispatch(s, "outside-1", tool, args, &r);
    T_EQ_INT(rc, AGT_EPENDING, "%s: %s asks in manual mode", tool, name);
    char *pend = NULL;
    agt_session_pending(s, &pend);
    char want[1400];
    snprintf(want, sizeof want, "\"outside\":{\"folder\":\"%s\",\"access\":\"%s\"}", folder,
             access);
    if (!T_CHECK(pend && strstr(pend, want), "%s: %s names the folder", tool, name))
        t_diag("  pending %s\n#   want %s", pend ? pend : "(none)", want);
    agt_free(pend);
    agt_result_free(r);
    r = NULL;
    if (rc == AGT_EPENDING) {
        agt_session_answer(s, "outside-1", AGT_DECISION_REJECT, "no", &r);
        T_CHECK(r && agt_result_is_error(r), "%s: %s rejected", tool, name);
        agt_result_free(r);
    }
    agt_session_set_mode(s, AGT_MODE_YOLO);
}

static void make_ws(const char *tag)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(ws, sizeof ws, "%s/agt-%s-XXXXXX", tmp && tmp[0] ? tmp : "/tmp", tag);
    if (mkdtemp(ws) == NULL) {
        printf("Bail out! mkdtemp\n");
        exit(1);
    }
    char *real = realpath(ws, NULL);
    snprintf(ws, sizeof ws, "%s", real);
    free(real);
    if (agt_registry_new(&reg) != AGT_OK || agt_registry_load_builtin(reg, "chat") != AGT_OK) {
        printf("Bail out! registry: %s\n", agt_error_message());
        exit(1);
    }
}

static void rm_ws(void)
{
    char cmd[700];
    if (getenv("AGT_KEEP_WS") != NULL) {
        t_diag("kept %s", ws);
        agt_registry_free(reg);
        return;
    }
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", ws);
    if (system(cmd) != 0)
        t_diag("could not remove %s", ws);
    agt_registry_free(reg);
}

#endif
