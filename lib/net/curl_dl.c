/* libcurl loaded on first use (see curl_dl.h). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "net/curl_dl.h"

agti_curl_api agti_curl;

static pthread_mutex_t curl_lock = PTHREAD_MUTEX_INITIALIZER;
static void *curl_lib;     /* the dlopen handle, kept for the process */
static bool curl_inited;   /* curl_global_init done and not cleaned up */
static char curl_why[512]; /* why the last load failed */

static bool load_locked(void)
{
    if (curl_lib)
        return true;
    /* AGT_LIBCURL, when set, is the only file tried */
    const char *env = getenv("AGT_LIBCURL");
    const char *names[3] = {"libcurl.so.4", "libcurl-gnutls.so.4", NULL};
    if (env && *env) {
        names[0] = env;
        names[1] = NULL;
    }
    agti_buf tried = AGTI_BUF_INIT;
    void *h = NULL;
    for (size_t i = 0; names[i] && !h; i++) {
        h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            const char *e = dlerror();
            agti_buf_printf(&tried, "%s%s (%s)", tried.len ? ", " : "", names[i],
                            e ? e : "not found");
        }
    }
    if (!h) {
        snprintf(curl_why, sizeof curl_why, "libcurl is not installed: tried %s",
                 agti_buf_cstr(&tried));
        agti_buf_free(&tried);
        return false;
    }
    agti_buf_free(&tried);
    struct {
        const char *name;
        void **slot;
    } fns[] = {
        {"curl_easy_init", (void **)&agti_curl.easy_init},
        {"curl_easy_setopt", (void **)&agti_curl.easy_setopt},
        {"curl_easy_perform", (void **)&agti_curl.easy_perform},
        {"curl_easy_getinfo", (void **)&agti_curl.easy_getinfo},
        {"curl_easy_cleanup", (void **)&agti_curl.easy_cleanup},
        {"curl_easy_reset", (void **)&agti_curl.easy_reset},
        {"curl_easy_strerror", (void **)&agti_curl.easy_strerror},
        {"curl_slist_append", (void **)&agti_curl.slist_append},
        {"curl_slist_free_all", (void **)&agti_curl.slist_free_all},
        {"curl_getdate", (void **)&agti_curl.getdate},
        {"curl_global_init", (void **)&agti_curl.global_init},
        {"curl_global_cleanup", (void **)&agti_curl.global_cleanup},
        {"curl_url", (void **)&agti_curl.url},
        {"curl_url_set", (void **)&agti_curl.url_set},
        {"curl_url_get", (void **)&agti_curl.url_get},
        {"curl_url_cleanup", (void **)&agti_curl.url_cleanup},
        {"curl_free", (void **)&agti_curl.free},
    };
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        void *p = dlsym(h, fns[i].name);
        if (!p) {
            snprintf(curl_why, sizeof curl_why, "the loaded libcurl has no %s", fns[i].name);
            memset(&agti_curl, 0, sizeof agti_curl);
            dlclose(h);
            return false;
        }
        *fns[i].slot = p;
    }
    curl_lib = h;
    return true;
}

int agti_curl_ensure(void)
{
    agti_ensure_init(); /* agt_shutdown leaves it to the process's end */
    pthread_mutex_lock(&curl_lock);
    int rc = AGT_OK;
    if (!load_locked())
        rc = agti_error(AGT_EUNSUPPORTED, "%s", curl_why);
    else if (!curl_inited) {
        if (agti_curl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
            rc = agti_error(AGT_ERROR, "libcurl failed to initialise");
        else
            curl_inited = true;
    }
    pthread_mutex_unlock(&curl_lock);
    return rc;
}

void agti_curl_shutdown(void)
{
    pthread_mutex_lock(&curl_lock);
    if (curl_inited) {
        agti_curl.global_cleanup();
        curl_inited = false;
    }
    pthread_mutex_unlock(&curl_lock);
}
