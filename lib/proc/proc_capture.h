/*
 * Output capture for the process engine: turns a raw byte stream into valid
 * UTF-8 (U+FFFD for invalid bytes, a sequence split across two reads kept
 * whole) and keeps its first and last characters up to a cap.
 */
#ifndef AGT_LIB_PROC_CAPTURE_H
#define AGT_LIB_PROC_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/core.h"

typedef struct agti_capture {
    size_t head_limit, tail_limit; /* characters */
    agti_buf head, tail, scratch, joint;
    size_t head_chars, tail_chars;
    unsigned char carry[4]; /* an incomplete sequence at the end of the last read */
    size_t ncarry;
    uint64_t bytes, lines; /* of the sanitized stream */
} agti_capture;

void agti_capture_init(agti_capture *c, size_t cap_chars);
void agti_capture_feed(agti_capture *c, const char *s, size_t n);
/* End of stream: a pending incomplete sequence becomes U+FFFD. */
void agti_capture_finish(agti_capture *c);
/* Bytes of text held (head + tail). */
size_t agti_capture_held(const agti_capture *c);
/* Whether the rendered text leaves bytes out (and so carries the marker). */
bool agti_capture_cut(const agti_capture *c);
/* head [+ marker + tail]; log_path (may be NULL) is named in the marker. */
int agti_capture_render(const agti_capture *c, const char *log_path, char **out, size_t *len);
void agti_capture_free(agti_capture *c);

#endif
