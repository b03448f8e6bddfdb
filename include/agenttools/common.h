/*
 * libagenttools — common definitions: export macro, status codes, last error,
 * library lifetime and memory release.
 *
 * Conventions used by every header of this library:
 *  - Functions that can fail return int: AGT_OK (0) or a negative AGT_E* code.
 *    Success is decided from the return value, never from the last error.
 *  - After a failure, agt_error_code() and agt_error_message() describe it for
 *    the calling thread (thread-local storage).
 *  - What comes back through an **out parameter belongs to the caller and has a
 *    matching free; every char * handed out is released with agt_free().
 *  - A const char * return value is borrowed from its handle and stays valid
 *    until that handle is changed or freed.
 *  - Input strings are copied; the caller may free them right after the call.
 *  - JSON crosses the boundary as UTF-8 text.
 */
#ifndef AGENTTOOLS_COMMON_H
#define AGENTTOOLS_COMMON_H

#include <stddef.h>
#include <stdint.h>

/* The export macro marks every public function: exported from the library
 * (which builds with hidden visibility) and imported by its users. */
#if defined(_WIN32)
#if defined(AGT_BUILDING_LIBRARY)
/* building the DLL */
#define AGT_EXTERN __declspec(dllexport)
#else
/* using the DLL */
#define AGT_EXTERN __declspec(dllimport)
#endif
#elif defined(__GNUC__)
/* GCC and clang: default visibility for the exported names */
#define AGT_EXTERN __attribute__((visibility("default")))
#else
/* other compilers: plain external linkage */
#define AGT_EXTERN
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** Version of the headers; agt_version() gives the library's. */
#define AGT_VERSION_MAJOR 1
#define AGT_VERSION_MINOR 0
#define AGT_VERSION_PATCH 0

/**
 * Status codes. The list is append-only: values never change and are never
 * reused. AGT_OK is zero; every error is negative.
 */
enum agt_status {
    AGT_OK = 0,
    AGT_ERROR = -1,         /**< generic failure; the message says what */
    AGT_ENOMEM = -2,        /**< out of memory */
    AGT_EINVAL = -3,        /**< an argument of the call is wrong (NULL, range) */
    AGT_EINVALID = -4,      /**< a JSON instance failed validation */
    AGT_ENOTFOUND = -5,     /**< the named thing does not exist */
    AGT_EEXISTS = -6,       /**< the named thing exists already */
    AGT_EPENDING = -7,      /**< a tool call waits for the user's approval */
    AGT_EFROZEN = -8,       /**< the handle is frozen (read-only) */
    AGT_EPARSE = -9,        /**< text could not be parsed (JSON, diff, cron, ...) */
    AGT_EIO = -10,          /**< an operating-system I/O call failed */
    AGT_EDENIED = -11,      /**< refused by a rule, a mode or a hook */
    AGT_ETIMEOUT = -12,     /**< a time limit ran out */
    AGT_ECANCELLED = -13,   /**< cancelled by the host (a callback returned non-zero) */
    AGT_EUNSUPPORTED = -14, /**< a feature or format this build does not support */
    AGT_ELIMIT = -15,       /**< a configured limit was reached */
    AGT_EGIT = -16,         /**< a git repository operation failed */
    AGT_ENET = -17,         /**< a network transfer failed */
    AGT_EAMBIGUOUS = -18,   /**< more than one candidate matched */
    AGT_ESTATE = -19        /**< the call does not fit the handle's current state */
};

/**
 * Initialises the library. Reference-counted: every successful call must be
 * paired with agt_shutdown(). Optional: every other call initialises lazily,
 * and the dependencies (libgit2, libcurl, libxml2) are loaded and
 * initialised at their first use, not here (docs/embedding.md).
 *
 * @return AGT_OK (a dependency that fails to load or initialise is reported
 *         by the call that needed it).
 */
AGT_EXTERN int agt_init(void);

/**
 * Drops one reference taken by agt_init(); the last one releases the global
 * state of the dependencies, unless the library initialised one for its own
 * use (a change set, a transfer), which then stays until the process ends.
 * Extra calls are ignored.
 */
AGT_EXTERN void agt_shutdown(void);

/**
 * The library's version as "MAJOR.MINOR.PATCH" (for example "1.0.0").
 *
 * @return a static string; never NULL.
 */
AGT_EXTERN const char *agt_version(void);

/**
 * The status code of the last failed call on this thread, or AGT_OK when no
 * call has failed yet on this thread.
 */
AGT_EXTERN int agt_error_code(void);

/**
 * A human-readable message for the last failed call on this thread, naming the
 * offending input (path, JSON pointer, field, offset). Never NULL: "" when no
 * call has failed. Valid until the next failing call on this thread.
 */
AGT_EXTERN const char *agt_error_message(void);

/**
 * A short fixed description of a status code ("out of memory", ...).
 *
 * @param code an AGT_* status code.
 * @return a static string; "unknown status" for codes this version does not know.
 */
AGT_EXTERN const char *agt_status_string(int code);

/**
 * Releases memory the library handed out (every char * from an **out
 * parameter). NULL is ignored.
 */
AGT_EXTERN void agt_free(void *ptr);

#ifdef __cplusplus
}
#endif

#endif /* AGENTTOOLS_COMMON_H */
