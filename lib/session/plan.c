/* Plan mode, session side: the plan file, the mode to go back to, and the
 * limits the gate applies while planning: Write, Edit and MultiEdit change
 * only the plan file, TaskStop and CronDelete are refused. Every other tool,
 * Bash included, stays under the permission rules of the mode plan mode was
 * entered from (gate.c, agti_gate_approval_mode), as in the reference
 * agent: from manual a `git log` asks, from yolo it runs. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"
#include "fs/fs.h"
#include "patch/codex.h"
#include "policy.h"
#include "session_internal.h"

void agti_plan_mode_changed(agt_session *s, int old_mode, int new_mode)
{
    if (new_mode == AGT_MODE_PLAN && old_mode != AGT_MODE_PLAN)
        s->policy->mode_before_plan = old_mode;
}

/* The folder for plan files outside every workspace:
 * $XDG_STATE_HOME/agenttools/plans, else ~/.local/state/agenttools/plans;
 * NULL when neither is known. */
static char *plans_dir(void)
{
    const char *x = getenv("XDG_STATE_HOME");
    if (x != NULL && x[0] == '/')
        return agti_aprintf("%s/agenttools/plans", x);
    const char *h = getenv("HOME");
    if (h != NULL && h[0] == '/')
        return agti_aprintf("%s/.local/state/agenttools/plans", h);
    return NULL;
}

/* mkdir -p (mode 0700) of the folder of file, outside the workspace. */
static int mkdir_parents(const char *file)
{
    char *dir = agti_strdup(file);
    if (dir == NULL)
        return agti_oom();
    char *slash = strrchr(dir, '/');
    if (slash != NULL && slash != dir) {
        *slash = '\0';
        for (char *p = dir + 1;; p++) {
            if (*p == '/' || *p == '\0') {
                char c = *p;
                *p = '\0';
                if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
                    int e = errno;
                    int rc = agti_error(AGT_EIO, "cannot create folder '%s' for the plan file: %s",
                                        dir, strerror(e));
                    free(dir);
                    return rc;
                }
                *p = c;
                if (c == '\0')
                    break;
            }
        }
    }
    free(dir);
    return AGT_OK;
}

/* Replaces the folder part of the absolute path *file by its real path
 * (when the folder exists). */
static void real_folder(char **file)
{
    char *sl = strrchr(*file, '/');
    if (sl == NULL || sl == *file)
        return;
    *sl = '\0';
    char *real = realpath(*file, NULL);
    *sl = '/';
    if (real != NULL && strcmp(real, "/") != 0) {
        char *np = agti_aprintf("%s%s", real, sl);
        if (np != NULL) {
            free(*file);
            *file = np;
        }
    }
    free(real);
}

/* Looks at the plan file path abs (absolute, normalised) inside the root
 * the way the file tools do (below the root's descriptor, symlinks followed
 * only inside), creating its missing folders with mkdirs. *real gets the
 * path it leads to. A symlink as the file itself, a folder, or a way out of
 * the root through a symlink is refused. */
static int check_inside(agt_session *s, const char *abs, bool mkdirs, char **real)
{
    agti_fsroot *r = NULL;
    int rc = agti_fsroot_new(&r, s->root, NULL);
    if (rc != AGT_OK)
        return rc;
    agti_fsloc loc;
    rc = agti_fs_locate(r, abs, AGTI_LOC_NOFOLLOW | (mkdirs ? AGTI_LOC_MKDIRS : 0u), 0, &loc);
    if (rc == AGT_ENOTFOUND && !mkdirs)
        rc = AGT_OK; /* its folders are made when plan mode starts */
    else if (rc == AGT_OK && loc.exists && S_ISLNK(loc.st.st_mode))
        rc = agti_error(AGT_EDENIED,
                        "the plan file %s is a symbolic link; the plan file must be a regular "
                        "file (links are not followed for it)",
                        abs);
    else if (rc == AGT_OK && loc.exists && S_ISDIR(loc.st.st_mode))
        rc = agti_error(AGT_EINVAL, "the plan file %s is a folder", abs);
    else if (rc == AGT_OK && loc.exists && !S_ISREG(loc.st.st_mode))
        rc = agti_error(AGT_EINVAL, "the plan file %s is not a regular file", abs);
    if (rc == AGT_OK && real != NULL) {
        *real = agti_strdup(loc.abs ? loc.abs : abs);
        if (*real == NULL)
            rc = agti_oom();
    }
    agti_fsloc_clear(&loc);
    agti_fsroot_free(r);
    return rc;
}

/* The same checks for a plan file outside the root (by name: the host's
 * own or the state folder). */
static int check_outside(const char *abs)
{
    struct stat st;
    if (lstat(abs, &st) != 0)
        return AGT_OK;
    if (S_ISLNK(st.st_mode))
        return agti_error(AGT_EDENIED,
                          "the plan file %s is a symbolic link; the plan file must be a regular "
                          "file (links are not followed for it)",
                          abs);
    if (S_ISDIR(st.st_mode))
        return agti_error(AGT_EINVAL, "the plan file %s is a folder", abs);
    if (!S_ISREG(st.st_mode))
        return agti_error(AGT_EINVAL, "the plan file %s is not a regular file", abs);
    return AGT_OK;
}

int agti_plan_path_check(agt_session *s, const char *path, bool restored, char **out)
{
    *out = NULL;
    char *joined = path[0] == '/' ? agti_strdup(path) : agti_aprintf("%s/%s", s->root, path);
    char *abs = joined ? agti_path_normalize(joined) : NULL;
    free(joined);
    if (abs == NULL)
        return agti_oom();
    int rc;
    if (agti_path_is_within(abs, s->root)) {
        rc = check_inside(s, abs, false, out);
    } else {
        char *dir = restored ? plans_dir() : NULL;
        if (restored && (dir == NULL || !agti_path_is_within(abs, dir) || strcmp(abs, dir) == 0))
            rc = agti_error(AGT_EDENIED,
                            "the plan file %s lies outside the workspace %s and outside the "
                            "plan folder %s; a restored session may only name a plan file in one "
                            "of them",
                            abs, s->root, dir ? dir : "(no $XDG_STATE_HOME or $HOME)");
        else
            rc = check_outside(abs);
        free(dir);
        if (rc == AGT_OK) {
            real_folder(&abs);
            *out = abs;
            abs = NULL;
        }
    }
    free(abs);
    return rc;
}

static uint64_t random_id(void)
{
    uint64_t v = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, &v, sizeof v);
        close(fd);
        if (n == (ssize_t)sizeof v)
            return v;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ((uint64_t)ts.tv_sec * 1000000007u) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32) ^
           (uint64_t)(uintptr_t)&v;
}

int agti_plan_ensure_file(agt_session *s, const char **path)
{
    agti_policy *p = s->policy;
    if (p->plan_file == NULL) {
        /* Outside the workspace by default, so that it never shows in git
         * status or Glob; in the workspace only without a home. */
        char *dir = plans_dir();
        if (dir != NULL)
            p->plan_file = agti_aprintf("%s/%016llx.md", dir, (unsigned long long)random_id());
        else
            p->plan_file =
                agti_aprintf("%s%s.agenttools/plans/%016llx.md", s->root,
                             strcmp(s->root, "/") == 0 ? "" : "/", (unsigned long long)random_id());
        free(dir);
        if (p->plan_file == NULL)
            return agti_oom();
    }
    int rc = agti_path_is_within(p->plan_file, s->root) ? check_inside(s, p->plan_file, true, NULL)
                                                        : mkdir_parents(p->plan_file);
    if (rc == AGT_OK && !agti_path_is_within(p->plan_file, s->root)) {
        /* Stored by its real folder: the plan check compares the path a
         * Write resolves to (symlinks such as a linked $HOME followed). */
        real_folder(&p->plan_file);
    }
    *path = p->plan_file;
    return rc;
}

bool agti_plan_options_ok(json_t *options, agti_buf *msg)
{
    static const char *const reserved[] = {"Approve", "Reject", "Reject and Exit", "Revise"};
    size_t i;
    json_t *o;
    json_array_foreach(options, i, o)
    {
        const char *label = json_string_value(json_object_get(o, "label"));
        if (label == NULL)
            continue; /* the schema requires it */
        for (size_t k = 0; k < sizeof reserved / sizeof reserved[0]; k++)
            if (strcasecmp(label, reserved[k]) == 0) {
                agti_buf_printf(msg,
                                "Option %zu of ExitPlanMode uses the label '%s', which is "
                                "reserved for the approval dialog (Approve, Reject, Reject and "
                                "Exit, Revise). Rename it and call ExitPlanMode again.",
                                i + 1, label);
                return false;
            }
        for (size_t j = 0; j < i; j++) {
            const char *other =
                json_string_value(json_object_get(json_array_get(options, j), "label"));
            if (other != NULL && strcasecmp(label, other) == 0) {
                agti_buf_printf(msg,
                                "Options %zu and %zu of ExitPlanMode have the same label '%s'; "
                                "labels must be unique. Rename one and call ExitPlanMode again.",
                                j + 1, i + 1, label);
                return false;
            }
        }
    }
    return true;
}

/* Whether the plan file holds something besides white space. */
static bool plan_has_content(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
    if (f == NULL) {
        if (fd >= 0)
            close(fd);
        return false;
    }
    int c;
    bool any = false;
    while (!any && (c = fgetc(f)) != EOF)
        any = !(c == ' ' || c == '\t' || c == '\n' || c == '\r');
    fclose(f);
    return any;
}

static int refuse_fmt(agt_call *call, int status, agt_result **out, agti_buf *b)
{
    if (b->oom) {
        agti_buf_free(b);
        return agti_oom();
    }
    int rc = agti_refuse(call, status, agti_buf_cstr(b), out);
    agti_buf_free(b);
    return rc;
}

static int check_exit(agt_session *s, agt_call *call, agt_result **out)
{
    agti_buf b = AGTI_BUF_INIT;
    const char *plan = s->policy->plan_file;
    if (s->mode != AGT_MODE_PLAN) {
        agti_buf_puts(&b, "ExitPlanMode only works in plan mode, and the session is not in plan "
                          "mode. Go on with the task.");
        return refuse_fmt(call, AGT_ESTATE, out, &b);
    }
    if (plan == NULL || !plan_has_content(plan)) {
        agti_buf_printf(&b,
                        "The plan file %s is empty. Write your plan into it with Write, then "
                        "call ExitPlanMode again.",
                        plan ? plan : "(none yet)");
        return refuse_fmt(call, AGT_ESTATE, out, &b);
    }
    json_t *options = json_object_get(agti_call_args_json(call), "options");
    if (!agti_plan_options_ok(options, &b))
        return refuse_fmt(call, AGT_EINVALID, out, &b);
    agti_buf_free(&b);
    return AGT_OK;
}

bool agti_plan_file_tool(const char *tool)
{
    static const char *const tools[] = {"Write", "Edit", "MultiEdit", "NotebookEdit"};
    for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++)
        if (strcmp(tool, tools[i]) == 0)
            return true;
    return false;
}

int agti_plan_check(agt_session *s, agt_call *call, agt_result **out)
{
    const char *tool = agt_call_tool(call);
    if (strcmp(tool, "ExitPlanMode") == 0)
        return check_exit(s, call, out);
    if (s->mode != AGT_MODE_PLAN)
        return AGT_OK;
    agti_buf b = AGTI_BUF_INIT;
    if (agti_plan_file_tool(tool)) {
        const char *path = json_string_value(json_object_get(agti_call_args_json(call), "path"));
        char *rel = NULL, *abs = NULL;
        if (path != NULL && agti_policy_path(s->root, path, &rel, &abs) != AGT_OK)
            return AGT_ENOMEM;
        const char *plan = s->policy->plan_file;
        bool ok = abs != NULL && plan != NULL && strcmp(abs, plan) == 0;
        free(rel);
        free(abs);
        if (ok)
            return AGT_OK;
        agti_buf_printf(&b,
                        "In plan mode %s may only change the plan file %s, not '%s'. Put your "
                        "plan there, then call ExitPlanMode to ask the user to approve it.",
                        tool, plan ? plan : "(call EnterPlanMode first)", path ? path : "");
        return refuse_fmt(call, AGT_EDENIED, out, &b);
    }
    if (strcmp(tool, "apply_patch") == 0) {
        /* every path of the patch must be the plan file (an unreadable
         * patch is refused by the tool without writing anything) */
        json_t *jin = json_object_get(agti_call_args_json(call), "input");
        agti_patch *p = NULL;
        agti_buf err = AGTI_BUF_INIT;
        int rc = json_is_string(jin)
                     ? agti_patch_parse(json_string_value(jin), json_string_length(jin), &p, &err)
                     : AGT_EINVAL;
        agti_buf_free(&err);
        if (rc == AGT_ENOMEM)
            return rc;
        const char *planf = s->policy->plan_file;
        const char *bad = NULL;
        for (size_t i = 0; p != NULL && i < p->nops && bad == NULL; i++) {
            for (int k = 0; k < 2 && bad == NULL; k++) {
                const char *path = k == 0 ? p->ops[i].path : p->ops[i].move_to;
                if (path == NULL)
                    continue;
                char *rel = NULL, *abs = NULL;
                if (agti_policy_path(s->root, path, &rel, &abs) != AGT_OK) {
                    agti_patch_free(p);
                    return AGT_ENOMEM;
                }
                if (abs == NULL || planf == NULL || strcmp(abs, planf) != 0 ||
                    p->ops[i].kind == AGTI_PATCH_DELETE || p->ops[i].move_to != NULL)
                    bad = path;
                free(rel);
                free(abs);
            }
        }
        if (bad != NULL)
            agti_buf_printf(&b,
                            "In plan mode apply_patch may only add or update the plan file %s, not "
                            "change '%s'. Put your plan there, then call ExitPlanMode to ask the "
                            "user to approve it.",
                            planf ? planf : "(call EnterPlanMode first)", bad);
        agti_patch_free(p);
        if (bad != NULL)
            return refuse_fmt(call, AGT_EDENIED, out, &b);
        agti_buf_free(&b);
        return AGT_OK;
    }
    /* The reference blocks these two only: CronCreate stays under the
     * permission rules (a reminder scheduled while planning changes no
     * file). */
    if (strcmp(tool, "TaskStop") == 0 || strcmp(tool, "CronDelete") == 0) {
        agti_buf_printf(&b,
                        "%s is not available in plan mode. Finish the plan and call "
                        "ExitPlanMode; once the user approves it, call %s again.",
                        tool, tool);
        return refuse_fmt(call, AGT_EDENIED, out, &b);
    }
    return AGT_OK;
}

int agt_session_set_plan_file(agt_session *s, const char *path)
{
    if (s == NULL || path == NULL || path[0] == '\0')
        return agti_error(AGT_EINVAL, "agt_session_set_plan_file: session or path is NULL/empty");
    char *abs = NULL;
    int rc = agti_plan_path_check(s, path, false, &abs);
    if (rc != AGT_OK)
        return rc;
    free(s->policy->plan_file);
    s->policy->plan_file = abs;
    return AGT_OK;
}

const char *agt_session_plan_file(const agt_session *s)
{
    return s ? s->policy->plan_file : NULL;
}
