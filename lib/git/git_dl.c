/* libgit2 loaded on first use (see git_dl.h). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#define AGTI_GIT_NO_MACROS
#include "git/git_dl.h"

agti_git_api agti_git;

static pthread_mutex_t git_lock = PTHREAD_MUTEX_INITIALIZER;
static void *git_lib;     /* the dlopen handle, kept for the process */
static bool git_inited;   /* git_libgit2_init done and not shut down */
static char git_why[600]; /* why the last load failed */

static bool load_locked(void)
{
    if (git_lib)
        return true;
    const char *env = getenv("AGT_LIBGIT2");
    const char *name = env && *env ? env : AGTI_LIBGIT2_SONAME;
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(git_why, sizeof git_why, "libgit2 %d.%d is not installed: tried %s (%s)",
                 LIBGIT2_VER_MAJOR, LIBGIT2_VER_MINOR, name, e ? e : "not found");
        return false;
    }
    /* the table's types are those of the headers: only that version fits */
    int (*version)(int *, int *, int *) =
        (int (*)(int *, int *, int *))dlsym(h, "git_libgit2_version");
    int major = -1, minor = -1, rev = -1;
    if (!version || version(&major, &minor, &rev) != 0) {
        snprintf(git_why, sizeof git_why, "%s is not libgit2 (it has no git_libgit2_version)",
                 name);
        dlclose(h);
        return false;
    }
    if (major != LIBGIT2_VER_MAJOR || minor != LIBGIT2_VER_MINOR) {
        snprintf(git_why, sizeof git_why, "%s is libgit2 %d.%d, this library was built for %d.%d",
                 name, major, minor, LIBGIT2_VER_MAJOR, LIBGIT2_VER_MINOR);
        dlclose(h);
        return false;
    }
#define AGTI_GIT_LOAD(f)                                                                           \
    if (!(*(void **)&agti_git.f = dlsym(h, #f))) {                                                 \
        snprintf(git_why, sizeof git_why, "the loaded libgit2 (%s) has no %s", name, #f);          \
        memset(&agti_git, 0, sizeof agti_git);                                                     \
        dlclose(h);                                                                                \
        return false;                                                                              \
    }
    AGTI_GIT_FUNCTIONS(AGTI_GIT_LOAD)
#undef AGTI_GIT_LOAD
    git_lib = h;
    return true;
}

int agti_git_ensure(void)
{
    agti_ensure_init(); /* agt_shutdown leaves it to the process's end */
    pthread_mutex_lock(&git_lock);
    int rc = AGT_OK;
    if (!load_locked())
        rc = agti_error(AGT_EUNSUPPORTED, "%s", git_why);
    else if (!git_inited) {
        if (agti_git.git_libgit2_init() < 0)
            rc = agti_error(AGT_EGIT, "libgit2 failed to initialise");
        else
            git_inited = true;
    }
    pthread_mutex_unlock(&git_lock);
    return rc;
}

void agti_git_shutdown(void)
{
    pthread_mutex_lock(&git_lock);
    if (git_inited) {
        agti_git.git_libgit2_shutdown();
        git_inited = false;
    }
    pthread_mutex_unlock(&git_lock);
}
