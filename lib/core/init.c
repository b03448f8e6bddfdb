#include <git2.h>
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>

#include "core.h"
#include "net/curl_dl.h"

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static int init_count;

/* Takes one reference; the caller holds init_lock. */
static int init_locked(void)
{
    if (init_count == 0) {
        /* libcurl is loaded and initialised by the first transfer
         * (agti_curl_ensure), not here */
        if (git_libgit2_init() < 0)
            return agti_error(AGT_ERROR, "libgit2 failed to initialise");
    }
    init_count++;
    return AGT_OK;
}

int agt_init(void)
{
    pthread_mutex_lock(&init_lock);
    int rc = init_locked();
    pthread_mutex_unlock(&init_lock);
    return rc;
}

void agt_shutdown(void)
{
    pthread_mutex_lock(&init_lock);
    if (init_count > 0 && --init_count == 0) {
        agti_curl_shutdown();
        git_libgit2_shutdown();
    }
    pthread_mutex_unlock(&init_lock);
}

/* Lazy initialisation for calls that need libgit2 or libcurl: takes one
 * reference for the life of the process the first time it is needed. */
int agti_ensure_init(void)
{
    static int done;
    int rc = AGT_OK;
    pthread_mutex_lock(&init_lock);
    if (!done) {
        rc = init_locked();
        if (rc == AGT_OK)
            done = 1;
    }
    pthread_mutex_unlock(&init_lock);
    return rc;
}

const char *agt_version(void)
{
    return AGT_VERSION_STRING;
}

void agt_free(void *ptr)
{
    free(ptr);
}
