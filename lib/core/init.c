#include <pthread.h>
#include <stdlib.h>

#include "core.h"
#include "git/git_dl.h"
#include "net/curl_dl.h"

/* References: the host's agt_init calls, plus one the library takes for
 * the life of the process the first time it loads a dependency. libgit2
 * and libcurl are loaded and initialised at their first use
 * (agti_git_ensure, agti_curl_ensure), not here. */
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static int init_count;
static bool held;

int agt_init(void)
{
    pthread_mutex_lock(&init_lock);
    init_count++;
    pthread_mutex_unlock(&init_lock);
    return AGT_OK;
}

void agt_shutdown(void)
{
    pthread_mutex_lock(&init_lock);
    if (init_count > 0 && --init_count == 0) {
        agti_curl_shutdown();
        agti_git_shutdown();
    }
    pthread_mutex_unlock(&init_lock);
}

/* Takes the library's own reference, once: a dependency initialised for an
 * object the host holds is not shut down under it by agt_shutdown. */
int agti_ensure_init(void)
{
    pthread_mutex_lock(&init_lock);
    if (!held) {
        init_count++;
        held = true;
    }
    pthread_mutex_unlock(&init_lock);
    return AGT_OK;
}

const char *agt_version(void)
{
    return AGT_VERSION_STRING;
}

void agt_free(void *ptr)
{
    free(ptr);
}
