/*
 * Internal core of libagenttools: last-error handling, growable buffers,
 * UTF-8 helpers and jansson glue. Never installed; never included by public
 * headers. Internal functions use the agti_ prefix and hidden visibility.
 */
#ifndef AGT_LIB_CORE_H
#define AGT_LIB_CORE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agenttools/common.h"

#if defined(__GNUC__)
#define AGTI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define AGTI_PRINTF(a, b)
#endif

/* ---- errors ---------------------------------------------------------- */

/* Records code + formatted message as this thread's last error; returns code
 * so callers can write `return agti_error(AGT_EINVAL, "...")`. */
int agti_error(int code, const char *fmt, ...) AGTI_PRINTF(2, 3);
int agti_verror(int code, const char *fmt, va_list ap);
/* Records AGT_ENOMEM with a fixed message (never allocates). */
int agti_oom(void);
/* agti_error with a finished message (no formatting pass), cut at the
 * buffer's end. Returns CODE. */
int agti_error_text(int code, const char *msg);
/* Keeps this thread's last message as handle's (rc < 0) or clears it (rc
 * >= 0), for agt_session/agent/model_error_message; agti_error_forget when
 * the handle is freed. */
void agti_error_keep(const void *handle, int rc);
void agti_error_forget(const void *handle);
/* Takes the library's own process-wide reference (libgit2 and libcurl are
 * loaded and initialised by agti_git_ensure and agti_curl_ensure, which take
 * it too). */
int agti_ensure_init(void);
/* Prefixes the current last-error message with "prefix: ". */
void agti_error_prefix(const char *fmt, ...) AGTI_PRINTF(1, 2);

/* ---- arrays and files ------------------------------------------------ */

/* Makes room in a realloc'd array for element N (one past the N in use):
 * ARRP is the address of the array's pointer (of any object type), *CAP its
 * room in elements, ELEM an element's size. Nothing happens while N < *CAP;
 * otherwise the room doubles (or becomes FIRST when there was none) and the
 * pointer and *CAP are updated. Returns AGT_OK, or AGT_ENOMEM (recorded,
 * the array and *CAP as they were) when the allocation fails or the new
 * size does not fit in a size_t. */
int agti_grow(void *arrp, size_t *cap, size_t n, size_t elem, size_t first);

/* Reads LEN bytes from FD into BUF, going on after EINTR and short reads;
 * stops early at the end of the file or at an error. Returns the bytes read:
 * fewer than LEN when the file ended (errno then 0) or a read failed (errno
 * from that read). */
size_t agti_read_full(int fd, void *buf, size_t len);

/* ---- buffers --------------------------------------------------------- */

/* A growable, always NUL-terminated byte buffer. After an allocation failure
 * `oom` is set and further appends are ignored; check it once at the end. */
typedef struct agti_buf {
    char *ptr;
    size_t len;
    size_t cap;
    bool oom;
} agti_buf;

#define AGTI_BUF_INIT                                                                              \
    {                                                                                              \
        NULL, 0, 0, false                                                                          \
    }

bool agti_buf_reserve(agti_buf *b, size_t extra);
void agti_buf_put(agti_buf *b, const void *data, size_t len);
void agti_buf_puts(agti_buf *b, const char *s);
void agti_buf_putc(agti_buf *b, char c);
void agti_buf_printf(agti_buf *b, const char *fmt, ...) AGTI_PRINTF(2, 3);
void agti_buf_vprintf(agti_buf *b, const char *fmt, va_list ap);
void agti_buf_truncate(agti_buf *b, size_t len);
/* Hands the contents to the caller (malloc'd, NUL-terminated, "" when empty)
 * and resets the buffer; NULL after an allocation failure. */
char *agti_buf_detach(agti_buf *b);
void agti_buf_free(agti_buf *b);
/* Returns the contents (never NULL; "" when empty). */
const char *agti_buf_cstr(const agti_buf *b);

/* ---- strings --------------------------------------------------------- */

char *agti_strdup(const char *s);
char *agti_strndup(const char *s, size_t n);
char *agti_aprintf(const char *fmt, ...) AGTI_PRINTF(1, 2);

/* ---- UTF-8 ----------------------------------------------------------- */

/* Decodes one code point at s[0..len); returns its byte length (1..4) and
 * stores it in *cp, or returns 0 for an invalid/truncated sequence. */
size_t agti_utf8_decode(const unsigned char *s, size_t len, uint32_t *cp);
/* True when the bytes are valid UTF-8 (RFC 3629: no surrogates, no overlongs). */
bool agti_utf8_valid(const char *s, size_t len);
/* Number of code points in valid UTF-8 text. */
size_t agti_utf8_count(const char *s, size_t len);
/* Appends s to b, replacing every invalid sequence and every NUL byte with
 * U+FFFD. */
void agti_utf8_sanitize(agti_buf *b, const char *s, size_t len);
/* The largest n <= len such that s[0..n) does not end inside a sequence. */
size_t agti_utf8_floor(const char *s, size_t len);

/* ---- JSON (jansson) -------------------------------------------------- */

struct json_t;
/* Parses len bytes of JSON (any value at top level, no duplicate-key
 * rejection, NUL bytes in strings allowed). On failure records AGT_EPARSE with
 * "what: line L, column C: reason" and returns NULL. */
struct json_t *agti_json_parse(const char *text, size_t len, const char *what);
/* Serialises compactly (UTF-8, keys in insertion order); NULL on OOM. */
char *agti_json_dump(const struct json_t *v);
/* A JSON string of s whose bytes need not be UTF-8 (a host's call id, a
 * command's decoded words): every invalid sequence becomes U+FFFD, the
 * same way each time. NULL s gives JSON null; NULL only when out of memory. */
struct json_t *agti_json_text(const char *s);
/* Appends a JSON pointer token (RFC 6901: ~ -> ~0, / -> ~1) to b. */
void agti_json_pointer_append(agti_buf *b, const char *token);

#endif
