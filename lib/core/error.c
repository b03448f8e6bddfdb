#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agenttools/agent.h"
#include "agenttools/model.h"
#include "agenttools/session.h"
#include "core.h"

#define AGTI_MSG_MAX 1024

static _Thread_local int last_code;
static _Thread_local char last_msg[AGTI_MSG_MAX];

int agti_verror(int code, const char *fmt, va_list ap)
{
    last_code = code;
    if (fmt == NULL) {
        snprintf(last_msg, sizeof last_msg, "%s", agt_status_string(code));
        return code;
    }
    /* through a copy: callers pass agt_error_message() (this buffer) as
     * an argument to wrap the message of a failure below them */
    char msg[AGTI_MSG_MAX];
    vsnprintf(msg, sizeof msg, fmt, ap);
    memcpy(last_msg, msg, strlen(msg) + 1);
    return code;
}

int agti_error(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    agti_verror(code, fmt, ap);
    va_end(ap);
    return code;
}

int agti_error_text(int code, const char *msg)
{
    last_code = code;
    size_t n = strlen(msg);
    if (n > sizeof last_msg - 1)
        n = sizeof last_msg - 1;
    memmove(last_msg, msg, n); /* msg may be agt_error_message() itself */
    last_msg[n] = '\0';
    return code;
}

int agti_oom(void)
{
    last_code = AGT_ENOMEM;
    memcpy(last_msg, "out of memory", sizeof "out of memory");
    return AGT_ENOMEM;
}

void agti_error_prefix(const char *fmt, ...)
{
    char prefix[256];
    char old[AGTI_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, last_msg, sizeof old);
    /* compose by hand: the message is cut at the buffer's end on purpose */
    size_t n = strlen(prefix);
    if (n > sizeof last_msg - 3)
        n = sizeof last_msg - 3;
    memcpy(last_msg, prefix, n);
    memcpy(last_msg + n, ": ", 2);
    n += 2;
    size_t m = strlen(old);
    if (m > sizeof last_msg - 1 - n)
        m = sizeof last_msg - 1 - n;
    memcpy(last_msg + n, old, m);
    last_msg[n + m] = '\0';
}

int agt_error_code(void)
{
    return last_code;
}

const char *agt_error_message(void)
{
    return last_msg;
}

/* ---- the last error of a handle --------------------------------------- */

/* The message of the last call that failed on a handle (session, agent,
 * model), whatever thread made it: a binding that runs the call on a worker
 * thread reads it on its own thread (the thread-local message is the
 * worker's). One entry per handle that ever failed, dropped when it is
 * freed; each message is its own block, so a pointer given out stays valid
 * until the next call on that handle (the table's growth does not move it). */
typedef struct kept_error {
    const void *handle;
    char msg[AGTI_MSG_MAX];
} kept_error;

static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;
static kept_error **kept;
static size_t nkept, capkept;

static size_t kept_find(const void *handle)
{
    size_t i = 0;
    while (i < nkept && kept[i]->handle != handle)
        i++;
    return i;
}

void agti_error_keep(const void *handle, int rc)
{
    if (handle == NULL)
        return;
    pthread_mutex_lock(&kept_lock);
    size_t i = kept_find(handle);
    if (rc >= 0) {
        if (i < nkept)
            kept[i]->msg[0] = '\0';
    } else {
        if (i == nkept && nkept == capkept) {
            size_t nc = capkept ? capkept * 2 : 8;
            kept_error **nv = realloc(kept, nc * sizeof *nv);
            if (nv != NULL) {
                kept = nv;
                capkept = nc;
            }
        }
        if (i == nkept && nkept < capkept && (kept[nkept] = malloc(sizeof **kept)) != NULL)
            kept[nkept++]->handle = handle;
        if (i < nkept)
            memcpy(kept[i]->msg, last_msg, sizeof last_msg);
    }
    pthread_mutex_unlock(&kept_lock);
}

void agti_error_forget(const void *handle)
{
    pthread_mutex_lock(&kept_lock);
    size_t i = kept_find(handle);
    if (i < nkept) {
        free(kept[i]);
        kept[i] = kept[--nkept];
    }
    pthread_mutex_unlock(&kept_lock);
}

static const char *kept_message(const void *handle)
{
    pthread_mutex_lock(&kept_lock);
    size_t i = kept_find(handle);
    const char *m = i < nkept ? kept[i]->msg : "";
    pthread_mutex_unlock(&kept_lock);
    return m;
}

const char *agt_session_error_message(const agt_session *s)
{
    return kept_message(s);
}

const char *agt_agent_error_message(const agt_agent *a)
{
    return kept_message(a);
}

const char *agt_model_error_message(const agt_model *m)
{
    return kept_message(m);
}

const char *agt_status_string(int code)
{
    switch (code) {
    case AGT_OK:
        return "success";
    case AGT_ERROR:
        return "error";
    case AGT_ENOMEM:
        return "out of memory";
    case AGT_EINVAL:
        return "invalid argument";
    case AGT_EINVALID:
        return "validation failed";
    case AGT_ENOTFOUND:
        return "not found";
    case AGT_EEXISTS:
        return "already exists";
    case AGT_EPENDING:
        return "waiting for approval";
    case AGT_EFROZEN:
        return "handle is frozen";
    case AGT_EPARSE:
        return "parse error";
    case AGT_EIO:
        return "input/output error";
    case AGT_EDENIED:
        return "denied";
    case AGT_ETIMEOUT:
        return "timed out";
    case AGT_ECANCELLED:
        return "cancelled";
    case AGT_EUNSUPPORTED:
        return "not supported";
    case AGT_ELIMIT:
        return "limit reached";
    case AGT_EGIT:
        return "git error";
    case AGT_ENET:
        return "network error";
    case AGT_EAMBIGUOUS:
        return "ambiguous";
    case AGT_ESTATE:
        return "wrong state";
    default:
        return "unknown status";
    }
}
