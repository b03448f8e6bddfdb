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

typedef struct agti_curl_api {
    CURL *(*easy_init)(void);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_perform)(CURL *);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    void (*easy_cleanup)(CURL *);
    void (*easy_reset)(CURL *);
    const char *(*easy_strerror)(CURLcode);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
    time_t (*getdate)(const char *, const time_t *);
    CURLcode (*global_init)(long);
    void (*global_cleanup)(void);
    CURLU *(*url)(void);
    CURLUcode (*url_set)(CURLU *, CURLUPart, const char *, unsigned int);
    CURLUcode (*url_get)(CURLU *, CURLUPart, char **, unsigned int);
    void (*url_cleanup)(CURLU *);
    void (*free)(void *);
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

#undef curl_easy_setopt
#undef curl_easy_getinfo
#define curl_easy_init agti_curl.easy_init
#define curl_easy_setopt agti_curl.easy_setopt
#define curl_easy_perform agti_curl.easy_perform
#define curl_easy_getinfo agti_curl.easy_getinfo
#define curl_easy_cleanup agti_curl.easy_cleanup
#define curl_easy_reset agti_curl.easy_reset
#define curl_easy_strerror agti_curl.easy_strerror
#define curl_slist_append agti_curl.slist_append
#define curl_slist_free_all agti_curl.slist_free_all
#define curl_getdate agti_curl.getdate
#define curl_url agti_curl.url
#define curl_url_set agti_curl.url_set
#define curl_url_get agti_curl.url_get
#define curl_url_cleanup agti_curl.url_cleanup
#define curl_free agti_curl.free

#endif
