/* libcurl loaded on first use (see curl_dl.h). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#define AGTI_CURL_NO_MACROS
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
#define AGTI_CURL_LOAD(f)                                                                          \
    if (!(*(void **)&agti_curl.f = dlsym(h, #f))) {                                                \
        snprintf(curl_why, sizeof curl_why, "the loaded libcurl has no %s", #f);                   \
        memset(&agti_curl, 0, sizeof agti_curl);                                                   \
        dlclose(h);                                                                                \
        return false;                                                                              \
    }
    AGTI_CURL_FUNCTIONS(AGTI_CURL_LOAD)
#undef AGTI_CURL_LOAD
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
        if (agti_curl.curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
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
        agti_curl.curl_global_cleanup();
        curl_inited = false;
    }
    pthread_mutex_unlock(&curl_lock);
}
