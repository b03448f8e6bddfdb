/*
 * The session's sandbox settings (include/agenttools/sandbox.h): the policy,
 * the writable roots, auto-allow; the sandbox prepared for each Bash
 * command; the approval hooks; the "sandbox" save section.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/core.h"
#include "events_internal.h"
#include "fs_settings.h"
#include "sandbox/sandbox.h"
#include "sandbox_settings.h"
#include "session_internal.h"

static const char *const mode_names[] = {"off", "read-only", "workspace-write"};

const char *agt_sandbox_mode_name(int mode)
{
    return mode >= AGT_SANDBOX_OFF && mode <= AGT_SANDBOX_WORKSPACE_WRITE ? mode_names[mode] : NULL;
}

int agt_sandbox_mode_parse(const char *name, int *mode)
{
    if (name == NULL || mode == NULL)
        return agti_error(AGT_EINVAL, "agt_sandbox_mode_parse: %s is NULL",
                          name == NULL ? "name" : "mode");
    for (int m = AGT_SANDBOX_OFF; m <= AGT_SANDBOX_WORKSPACE_WRITE; m++)
        if (strcmp(name, mode_names[m]) == 0) {
            *mode = m;
            return AGT_OK;
        }
    return agti_error(AGT_EINVAL,
                      "unknown sandbox mode '%s': use read-only, workspace-write or off", name);
}

int agt_sandbox_probe(char **out_json)
{
    if (out_json == NULL)
        return agti_error(AGT_EINVAL, "agt_sandbox_probe: out_json is NULL");
    *out_json = agti_sandbox_probe_json();
    return *out_json ? AGT_OK : agti_oom();
}

void agti_sb_settings_free(agti_sb_settings *st)
{
    if (st == NULL)
        return;
    for (size_t i = 0; i < st->nroots; i++)
        free(st->roots[i]);
    free(st->roots);
    for (size_t i = 0; i < st->nreadable; i++)
        free(st->readable[i]);
    free(st->readable);
    free(st);
}

static agti_sb_settings *settings(agt_session *s)
{
    if (s->sandbox == NULL)
        s->sandbox = calloc(1, sizeof *s->sandbox);
    return s->sandbox;
}

/* Landlock and seccomp: what a sandboxed mode needs at the least. */
static bool kernel_confines(void)
{
    const agti_sandbox_probe *p = agti_sandbox_probe_basic();
    return p->supported && p->landlock_abi > 0 && p->seccomp;
}

void agti_session_sandbox_policy(const agt_session *s, int *mode, int *network, int *enforce)
{
    const agti_sb_settings *st = s ? s->sandbox : NULL;
    if (st != NULL && st->set) {
        *mode = st->mode;
        *network = st->network;
        *enforce = st->enforce;
        return;
    }
    *mode = kernel_confines() ? AGT_SANDBOX_WORKSPACE_WRITE : AGT_SANDBOX_OFF;
    *network = AGT_SANDBOX_NETWORK_OFF;
    *enforce = AGT_SANDBOX_BEST_EFFORT;
}

/* The piece a required mode lacks on this kernel, or NULL. */
static const char *missing_piece(int mode)
{
    /* the namespaces only matter (and are only probed) for workspace-write */
    const agti_sandbox_probe *p =
        mode == AGT_SANDBOX_WORKSPACE_WRITE ? agti_sandbox_probe_get() : agti_sandbox_probe_basic();
    if (!p->supported)
        return "sandbox support (this system is not Linux)";
    if (p->landlock_abi == 0)
        return "Landlock";
    if (!p->seccomp)
        return "seccomp filters (or a build with libseccomp)";
    if (mode == AGT_SANDBOX_WORKSPACE_WRITE && !p->mount_ns)
        return "a mount namespace for the protected paths";
    return NULL;
}

int agt_session_set_sandbox(agt_session *s, int mode, int network, int enforce)
{
    if (s == NULL)
        return agti_error(AGT_EINVAL, "agt_session_set_sandbox: session is NULL");
    if (mode < AGT_SANDBOX_OFF || mode > AGT_SANDBOX_WORKSPACE_WRITE)
        return agti_error(AGT_EINVAL, "agt_session_set_sandbox: unknown mode %d", mode);
    if (network != AGT_SANDBOX_NETWORK_OFF && network != AGT_SANDBOX_NETWORK_ON)
        return agti_error(AGT_EINVAL, "agt_session_set_sandbox: network must be 0 or 1, not %d",
                          network);
    if (enforce != AGT_SANDBOX_BEST_EFFORT && enforce != AGT_SANDBOX_REQUIRE)
        return agti_error(AGT_EINVAL, "agt_session_set_sandbox: enforce must be 0 or 1, not %d",
                          enforce);
    if (mode != AGT_SANDBOX_OFF && !agti_sandbox_probe_basic()->supported)
        return agti_error(AGT_EUNSUPPORTED,
                          "agt_session_set_sandbox: this system has no sandbox support (Linux "
                          "only); use mode off");
    const char *miss =
        mode != AGT_SANDBOX_OFF && enforce == AGT_SANDBOX_REQUIRE ? missing_piece(mode) : NULL;
    if (miss != NULL)
        return agti_error(AGT_EUNSUPPORTED,
                          "agt_session_set_sandbox: %s is required but this kernel lacks %s",
                          mode_names[mode], miss);
    agti_sb_settings *st = settings(s);
    if (st == NULL)
        return agti_oom();
    st->set = true;
    st->mode = mode;
    st->network = network;
    st->enforce = enforce;
    return AGT_OK;
}

int agt_session_sandbox(const agt_session *s, int *mode, int *network, int *enforce)
{
    if (s == NULL)
        return agti_error(AGT_EINVAL, "agt_session_sandbox: session is NULL");
    int m, n, e;
    agti_session_sandbox_policy(s, &m, &n, &e);
    if (mode)
        *mode = m;
    if (network)
        *network = n;
    if (enforce)
        *enforce = e;
    return AGT_OK;
}

static int add_root(agti_sb_settings *st, char *real)
{
    for (size_t i = 0; i < st->nroots; i++)
        if (strcmp(st->roots[i], real) == 0) {
            free(real);
            return AGT_OK;
        }
    char **g = realloc(st->roots, (st->nroots + 1) * sizeof *g);
    if (g == NULL) {
        free(real);
        return agti_oom();
    }
    st->roots = g;
    st->roots[st->nroots++] = real;
    return AGT_OK;
}

int agt_session_add_writable_root(agt_session *s, const char *dir)
{
    char *real = NULL;
    int vrc = agti_session_real_dir("agt_session_add_writable_root", s, dir, &real);
    if (vrc != AGT_OK)
        return vrc;
    /* One policy: the file tools admit what the sandbox lets commands write. */
    int rc = agt_session_add_allowed_dir(s, real);
    if (rc != AGT_OK) {
        free(real);
        return rc;
    }
    agti_sb_settings *sst = settings(s);
    if (sst == NULL) {
        free(real);
        return agti_oom();
    }
    return add_root(sst, real);
}

int agt_session_set_sandbox_auto_allow(agt_session *s, int on)
{
    if (s == NULL)
        return agti_error(AGT_EINVAL, "agt_session_set_sandbox_auto_allow: session is NULL");
    agti_sb_settings *st = settings(s);
    if (st == NULL)
        return agti_oom();
    st->auto_allow = on != 0;
    return AGT_OK;
}

/* ---- the sandbox of one command ------------------------------------------- */

/* Every writable root: the workspace, the file tools' admitted folders, the
 * added roots (borrowed strings; the array is malloc'd). */
static const char **writable_roots(const agt_session *s, size_t *n)
{
    size_t nallowed = 0;
    const char *const *allowed = agti_session_allowed_dirs(s, &nallowed);
    size_t nadded = s->sandbox ? s->sandbox->nroots : 0;
    const char **v = malloc((1 + nallowed + nadded) * sizeof *v);
    if (v == NULL)
        return NULL;
    size_t k = 0;
    v[k++] = s->root;
    for (size_t i = 0; i < nallowed; i++)
        v[k++] = allowed[i];
    for (size_t i = 0; i < nadded; i++) {
        bool dup = false;
        for (size_t j = 0; j < k && !dup; j++)
            dup = strcmp(v[j], s->sandbox->roots[i]) == 0;
        if (!dup)
            v[k++] = s->sandbox->roots[i];
    }
    *n = k;
    return v;
}

/* The protected paths of one command (paths owned). */
typedef struct protect_list {
    agti_sandbox_protect *v;
    size_t n, cap;
} protect_list;

static void protect_list_free(protect_list *pl)
{
    for (size_t i = 0; i < pl->n; i++)
        free((char *)pl->v[i].path);
    free(pl->v);
}

/* Appends path (taken over, freed on failure). */
static int protect_add(protect_list *pl, char *path, bool is_dir)
{
    if (path == NULL)
        return AGT_ENOMEM;
    if (agti_grow(&pl->v, &pl->cap, pl->n, sizeof *pl->v, 8) != AGT_OK) {
        free(path);
        return AGT_ENOMEM;
    }
    pl->v[pl->n++] = (agti_sandbox_protect){path, is_dir};
    return AGT_OK;
}

/* A root's .git folder, whole. Protecting only what runs code (hooks,
 * config, the submodules' repositories) left the rest writable, and the
 * rest can redirect git to files the command writes: .git renamed away and
 * a new .git made with hooks of its own, or .git/commondir pointing at a
 * folder with its own config and hooks; the user's next git command ran
 * them outside the sandbox. A mount point cannot be renamed or removed
 * either. Commands that write the repository (add, commit, checkout) need
 * a call outside the sandbox, as in other agents' workspace-write modes. */
static int protect_git_dir(const char *git, protect_list *pl)
{
    return protect_add(pl, agti_strdup(git), true);
}

int agti_session_command_sandbox(agt_session *s, bool disable, struct agti_sandbox **out,
                                 char **tmp_env)
{
    *out = NULL;
    *tmp_env = NULL;
    int mode, network, enforce;
    agti_session_sandbox_policy(s, &mode, &network, &enforce);
    if (disable || mode == AGT_SANDBOX_OFF)
        return AGT_OK;
    const char *dir;
    int rc = agti_session_log_dir(s, &dir);
    if (rc != AGT_OK)
        return rc;
    char *tmp = agti_aprintf("%s/tmp", dir);
    if (tmp == NULL)
        return agti_oom();
    if (mkdir(tmp, 0700) != 0 && errno != EEXIST) {
        rc = agti_error(AGT_EIO, "sandbox: cannot create the private tmp folder '%s': %s", tmp,
                        strerror(errno));
        free(tmp);
        return rc;
    }
    size_t nroots = 0;
    const char **roots = writable_roots(s, &nroots);
    /* per root: .git/hooks, .git/config and the submodules' (or a .git
     * file), + the workspace's .agenttools */
    protect_list pl = {NULL, 0, 0};
    rc = roots ? AGT_OK : AGT_ENOMEM;
    for (size_t i = 0; rc == AGT_OK && i < nroots; i++) {
        const char *r = strcmp(roots[i], "/") == 0 ? "" : roots[i];
        char *git = agti_aprintf("%s/.git", r);
        struct stat st;
        if (git == NULL) {
            rc = AGT_ENOMEM;
        } else if (lstat(git, &st) == 0 && S_ISREG(st.st_mode)) {
            /* a worktree's pointer to its git folder */
            rc = protect_add(&pl, git, false);
        } else {
            rc = protect_git_dir(git, &pl);
            free(git);
        }
    }
    if (rc == AGT_OK)
        rc = protect_add(
            &pl, agti_aprintf("%s/.agenttools", strcmp(s->root, "/") == 0 ? "" : s->root), true);
    if (rc == AGT_OK) {
        agti_sandbox_policy pol = {.mode = mode,
                                   .network = network == AGT_SANDBOX_NETWORK_ON,
                                   .require = enforce == AGT_SANDBOX_REQUIRE,
                                   .writable = roots,
                                   .nwritable = nroots,
                                   .tmp_dir = tmp,
                                   .protect = pl.v,
                                   .nprotect = pl.n};
        rc = agti_sandbox_prepare(out, &pol);
    } else {
        rc = agti_oom();
    }
    protect_list_free(&pl);
    free(roots);
    if (rc == AGT_OK && (*tmp_env = agti_aprintf("TMPDIR=%s", tmp)) == NULL) {
        agti_sandbox_free(*out);
        *out = NULL;
        rc = agti_oom();
    }
    free(tmp);
    return rc;
}

/* ---- status ------------------------------------------------------------------ */

static json_t *string_array(const char *const *v, size_t n);

int agt_session_sandbox_status(agt_session *s, char **out_json)
{
    if (s == NULL || out_json == NULL)
        return agti_error(AGT_EINVAL, "agt_session_sandbox_status: %s is NULL",
                          s == NULL ? "session" : "out_json");
    *out_json = NULL;
    int mode, network, enforce;
    agti_session_sandbox_policy(s, &mode, &network, &enforce);
    const agti_sandbox_probe *p = agti_sandbox_probe_get();
    bool on = mode != AGT_SANDBOX_OFF && p->supported;
    int abi = on ? p->landlock_abi : 0;
    bool seccomp = on && p->seccomp;
    bool userns = on && p->user_ns;
    bool mountns =
        on && mode == AGT_SANDBOX_WORKSPACE_WRITE && p->mount_ns && (p->user_ns || p->root);
    bool pidns = p->pid_ns && (userns || p->root);
    const char *sup = pidns ? "pid-namespace" : p->subreaper ? "subreaper" : "process-group";
    json_t *roots = json_array();
    size_t nroots = 0;
    const char **v = mode == AGT_SANDBOX_WORKSPACE_WRITE ? writable_roots(s, &nroots) : NULL;
    for (size_t i = 0; roots && i < nroots; i++)
        json_array_append_new(roots, json_string(v[i]));
    free(v);
    size_t nread = 0;
    const char *const *readable = agti_session_readable_dirs(s, &nread);
    json_t *rroots = string_array(readable, nread);
    json_t *j = json_pack(
        "{s:s, s:s, s:s, s:b, s:b, s:i, s:b, s:b, s:b, s:s, s:o, s:o}", "mode", mode_names[mode],
        "network", network == AGT_SANDBOX_NETWORK_ON ? "on" : "off", "enforce",
        enforce == AGT_SANDBOX_REQUIRE ? "require" : "best-effort", "auto_allow",
        s->sandbox && s->sandbox->auto_allow, "sandboxed", on && abi > 0 && seccomp, "landlock_abi",
        abi, "seccomp", seccomp, "user_namespace", userns, "mount_namespace", mountns, "supervisor",
        sup, "writable_roots", roots ? roots : json_array(), "readable_roots",
        rroots ? rroots : json_array());
    if (j == NULL)
        return agti_oom();
    *out_json = agti_json_dump(j);
    json_decref(j);
    return *out_json ? AGT_OK : agti_oom();
}

/* ---- approval hooks ---------------------------------------------------------- */

static bool is_bash(agt_call *call)
{
    return strcmp(agt_call_tool(call), "Bash") == 0;
}

char *agti_sandbox_escape_reason(agt_session *s, agt_call *call)
{
    if (!is_bash(call) ||
        !json_is_true(json_object_get(agti_call_args_json(call), "dangerously_disable_sandbox")))
        return NULL;
    int mode, network, enforce;
    agti_session_sandbox_policy(s, &mode, &network, &enforce);
    if (mode == AGT_SANDBOX_OFF)
        return NULL;
    return agti_aprintf("the command asks to run outside the %s sandbox "
                        "(dangerously_disable_sandbox): it would run with the user's full rights, "
                        "writing anywhere%s",
                        mode_names[mode],
                        network == AGT_SANDBOX_NETWORK_OFF ? " and reaching the network" : "");
}

bool agti_sandbox_auto_allows(agt_session *s, agt_call *call)
{
    if (!is_bash(call) || s->sandbox == NULL || !s->sandbox->auto_allow)
        return false;
    if (json_is_true(json_object_get(agti_call_args_json(call), "dangerously_disable_sandbox")))
        return false;
    int mode, network, enforce;
    agti_session_sandbox_policy(s, &mode, &network, &enforce);
    if (mode == AGT_SANDBOX_OFF || network != AGT_SANDBOX_NETWORK_OFF)
        return false;
    return missing_piece(mode) == NULL; /* everything enforced, not just attempted */
}

/* ---- save section ------------------------------------------------------------ */

static json_t *string_array(const char *const *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        if (json_array_append_new(a, json_string(v[i])) != 0) {
            json_decref(a);
            a = NULL;
        }
    return a;
}

int agti_sandbox_section_save(const agt_session *s, json_t **value)
{
    *value = NULL;
    const agti_sb_settings *st = s->sandbox;
    size_t nread = 0;
    const char *const *readable = agti_session_readable_dirs(s, &nread);
    if (st == NULL && nread == 0)
        return AGT_OK;
    int mode, network, enforce;
    agti_session_sandbox_policy(s, &mode, &network, &enforce);
    json_t *roots = string_array(st ? (const char *const *)st->roots : NULL, st ? st->nroots : 0);
    /* folders approved for reading for the session (outside.c) */
    json_t *rroots = string_array(readable, nread);
    if (roots == NULL || rroots == NULL) {
        json_decref(roots);
        json_decref(rroots);
        return agti_oom();
    }
    json_t *j = json_pack("{s:b, s:s, s:s, s:s, s:b, s:o, s:o}", "set", st && st->set, "mode",
                          mode_names[mode], "network",
                          network == AGT_SANDBOX_NETWORK_ON ? "on" : "off", "enforce",
                          enforce == AGT_SANDBOX_REQUIRE ? "require" : "best-effort", "auto_allow",
                          st && st->auto_allow, "writable_roots", roots, "readable_roots", rroots);
    if (j == NULL)
        return agti_oom();
    *value = j;
    return AGT_OK;
}

static int bad(const char *field, const char *want)
{
    return agti_error(AGT_EINVALID, "session file: \"sandbox.%s\" must be %s", field, want);
}

int agti_sandbox_section_load(agt_session *s, json_t *value, void **tmp)
{
    (void)s;
    *tmp = NULL;
    if (value == NULL)
        return AGT_OK; /* the default policy */
    if (!json_is_object(value))
        return bad("", "an object");
    agti_sb_settings *st = calloc(1, sizeof *st);
    if (st == NULL)
        return agti_oom();
    int rc = AGT_OK;
    json_t *set = json_object_get(value, "set");
    const char *mode = json_string_value(json_object_get(value, "mode"));
    const char *net = json_string_value(json_object_get(value, "network"));
    const char *enf = json_string_value(json_object_get(value, "enforce"));
    json_t *aa = json_object_get(value, "auto_allow");
    json_t *roots = json_object_get(value, "writable_roots");
    if (!json_is_boolean(set))
        rc = bad("set", "true or false");
    else if (mode == NULL || agt_sandbox_mode_parse(mode, &st->mode) != AGT_OK)
        rc = bad("mode", "\"off\", \"read-only\" or \"workspace-write\"");
    else if (net == NULL || (strcmp(net, "on") != 0 && strcmp(net, "off") != 0))
        rc = bad("network", "\"on\" or \"off\"");
    else if (enf == NULL || (strcmp(enf, "require") != 0 && strcmp(enf, "best-effort") != 0))
        rc = bad("enforce", "\"require\" or \"best-effort\"");
    else if (!json_is_boolean(aa))
        rc = bad("auto_allow", "true or false");
    else if (!json_is_array(roots))
        rc = bad("writable_roots", "an array of absolute paths");
    if (rc == AGT_OK) {
        st->set = json_is_true(set);
        st->network = strcmp(net, "on") == 0 ? AGT_SANDBOX_NETWORK_ON : AGT_SANDBOX_NETWORK_OFF;
        st->enforce = strcmp(enf, "require") == 0 ? AGT_SANDBOX_REQUIRE : AGT_SANDBOX_BEST_EFFORT;
        st->auto_allow = json_is_true(aa);
        size_t i;
        json_t *v;
        json_array_foreach(roots, i, v)
        {
            const char *p = json_string_value(v);
            if (p == NULL || p[0] != '/') {
                rc = bad("writable_roots", "an array of absolute paths");
                break;
            }
            /* Checked again as when it was added; a folder that is gone (or
             * is no folder now) is dropped: fewer roots is the safe side. */
            char *real = realpath(p, NULL);
            struct stat sb;
            if (real == NULL || stat(real, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
                free(real);
                continue;
            }
            if ((rc = add_root(st, real)) != AGT_OK)
                break;
        }
    }
    json_t *rroots = json_object_get(value, "readable_roots"); /* optional (newer files) */
    if (rc == AGT_OK && rroots != NULL && !json_is_array(rroots))
        rc = bad("readable_roots", "an array of absolute paths");
    if (rc == AGT_OK && rroots != NULL) {
        size_t i;
        json_t *v;
        json_array_foreach(rroots, i, v)
        {
            const char *p = json_string_value(v);
            if (p == NULL || p[0] != '/') {
                rc = bad("readable_roots", "an array of absolute paths");
                break;
            }
            char *real = realpath(p, NULL);
            struct stat sb;
            if (real == NULL || stat(real, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
                free(real);
                continue; /* gone: fewer folders is the safe side */
            }
            char **g = realloc(st->readable, (st->nreadable + 1) * sizeof *g);
            if (g == NULL) {
                free(real);
                rc = agti_oom();
                break;
            }
            st->readable = g;
            st->readable[st->nreadable++] = real;
        }
    }
    if (rc != AGT_OK) {
        agti_sb_settings_free(st);
        return rc;
    }
    *tmp = st;
    return AGT_OK;
}

void agti_sandbox_section_commit(agt_session *s, void *tmp)
{
    agti_sb_settings_free(s->sandbox);
    s->sandbox = tmp;
    /* the file tools admit the restored roots as well */
    for (size_t i = 0; s->sandbox && i < s->sandbox->nroots; i++)
        agt_session_add_allowed_dir(s, s->sandbox->roots[i]);
    for (size_t i = 0; s->sandbox && i < s->sandbox->nreadable; i++)
        agti_session_add_readable_dir(s, s->sandbox->readable[i]);
}

void agti_sandbox_section_discard(void *tmp)
{
    agti_sb_settings_free(tmp);
}
