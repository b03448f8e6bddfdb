/*
 * libcurl, loaded when the first transfer needs it (dlopen) instead of
 * linked: linking it brought 24 more shared libraries (TLS, HTTP/2, LDAP,
 * Kerberos, ...) and their constructors into every program that links this
 * library, network or not (docs/embedding.md, "Start-up and the
 * libraries loaded on first use"). Files that make transfers include this
 * header instead of <curl/curl.h> and call agti_curl_ensure() once before
 * the first curl_* call of an operation; the curl_* names below then go
 * through the loaded table.
 */
#ifndef AGTI_NET_CURL_DL_H
#define AGTI_NET_CURL_DL_H

#include <curl/curl.h>
#include <time.h>

/* Every libcurl function the library calls. */
#define AGTI_CURL_FUNCTIONS(X)                                                                     \
    X(curl_easy_init)                                                                              \
    X(curl_easy_setopt)                                                                            \
    X(curl_easy_perform)                                                                           \
    X(curl_easy_getinfo)                                                                           \
    X(curl_easy_cleanup)                                                                           \
    X(curl_easy_reset)                                                                             \
    X(curl_easy_strerror)                                                                          \
    X(curl_slist_append)                                                                           \
    X(curl_slist_free_all)                                                                         \
    X(curl_getdate)                                                                                \
    X(curl_global_init)                                                                            \
    X(curl_global_cleanup)                                                                         \
    X(curl_url)                                                                                    \
    X(curl_url_set)                                                                                \
    X(curl_url_get)                                                                                \
    X(curl_url_cleanup)                                                                            \
    X(curl_free)

/* The slots have the exact types of the functions in <curl/curl.h> (a
 * function-like macro of curl's type checks is not expanded here: its name
 * is not followed by "("), so the compiler checks every call. */
typedef struct agti_curl_api {
#define AGTI_CURL_SLOT(f) __typeof__(f) *f;
    AGTI_CURL_FUNCTIONS(AGTI_CURL_SLOT)
#undef AGTI_CURL_SLOT
} agti_curl_api;

/* The table; valid (every pointer set) once agti_curl_ensure returned
 * AGT_OK in this process. */
extern agti_curl_api agti_curl;

/* Loads libcurl (libcurl.so.4, or the GnuTLS build libcurl-gnutls.so.4;
 * the environment variable AGT_LIBCURL, when set, names the one file to
 * load instead) and runs curl_global_init, once per
 * process, thread-safe. AGT_EUNSUPPORTED with a message naming what was
 * tried when the library or one of its functions is missing; AGT_ERROR
 * when curl_global_init fails. */
int agti_curl_ensure(void);
/* curl_global_cleanup when libcurl was loaded (agt_shutdown). */
void agti_curl_shutdown(void);

#ifndef AGTI_CURL_NO_MACROS /* curl_dl.c fills the table by these names */
#undef curl_easy_setopt
#undef curl_easy_getinfo
#define curl_easy_init (agti_curl.curl_easy_init)
#define curl_easy_setopt (agti_curl.curl_easy_setopt)
#define curl_easy_perform (agti_curl.curl_easy_perform)
#define curl_easy_getinfo (agti_curl.curl_easy_getinfo)
#define curl_easy_cleanup (agti_curl.curl_easy_cleanup)
#define curl_easy_reset (agti_curl.curl_easy_reset)
#define curl_easy_strerror (agti_curl.curl_easy_strerror)
#define curl_slist_append (agti_curl.curl_slist_append)
#define curl_slist_free_all (agti_curl.curl_slist_free_all)
#define curl_getdate (agti_curl.curl_getdate)
#define curl_global_init (agti_curl.curl_global_init)
#define curl_global_cleanup (agti_curl.curl_global_cleanup)
#define curl_url (agti_curl.curl_url)
#define curl_url_set (agti_curl.curl_url_set)
#define curl_url_get (agti_curl.curl_url_get)
#define curl_url_cleanup (agti_curl.curl_url_cleanup)
#define curl_free (agti_curl.curl_free)
#endif

#endif
