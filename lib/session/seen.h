/* What the model has seen of each file: the content hash of a file when
 * Read (or an edit tool) last saw it, so that Edit, MultiEdit, NotebookEdit
 * and Write refuse to change a file that changed on disk since (a
 * formatter, the user, a Bash command), instead of writing over what the
 * model has not seen. Hashes are XXH3-64 of the whole content and of each
 * line (with its "\n"); the line hashes name the changed line ranges. */
#ifndef AGT_LIB_SESSION_SEEN_H
#define AGT_LIB_SESSION_SEEN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agenttools/session.h"
#include "core/core.h"

struct agti_seen;

/* Files remembered per session (the oldest is forgotten past it). */
#define AGTI_SEEN_MAX_FILES 4096
/* Line hashes are kept for files of at most this many lines... */
#define AGTI_SEEN_MAX_LINES 262144
/* ...and for at most this many lines over all files of the session (the
 * oldest files lose theirs first; their whole-file hash stays). */
#define AGTI_SEEN_MAX_TOTAL_LINES (4u * 1024u * 1024u)

/* A summary of one version of a file. */
typedef struct agti_seen_sum {
    uint64_t hash;   /* XXH3-64 of the content */
    uint64_t size;   /* bytes */
    uint64_t *lines; /* XXH3-64 of each line with its "\n"; NULL: not kept */
    size_t nlines;
} agti_seen_sum;

void agti_seen_sum_free(agti_seen_sum *sum);

/* Summing a file that is streamed (Read): feed its bytes in order. */
typedef struct agti_seen_acc {
    void *state;   /* XXH3 state of the whole content */
    agti_buf part; /* a line split between two feeds */
    uint64_t *lines;
    size_t nlines, cap;
    uint64_t size;
    bool keep_lines; /* false once the file has more lines than the cap */
    bool oom;
} agti_seen_acc;

/* AGT_OK or AGT_ENOMEM. */
int agti_seen_acc_init(agti_seen_acc *a);
void agti_seen_acc_feed(agti_seen_acc *a, const char *p, size_t n);
/* Ends the sum into *out (which owns the line hashes then) and frees the
 * accumulator; AGT_ENOMEM when a feed ran out of memory. */
int agti_seen_acc_end(agti_seen_acc *a, agti_seen_sum *out);
/* Frees an accumulator that was not ended. */
void agti_seen_acc_free(agti_seen_acc *a);

/* The summary of text[0..len). AGT_OK, AGT_ENOMEM. */
int agti_seen_sum_text(const char *text, size_t len, agti_seen_sum *out);

/* Records that the model knows the file abs (absolute path) as it is in
 * *sum; the session takes the line hashes (sum is emptied). AGT_OK,
 * AGT_ENOMEM. */
int agti_seen_record(agt_session *s, const char *abs, agti_seen_sum *sum);
/* agti_seen_record of text[0..len). */
int agti_seen_record_text(agt_session *s, const char *abs, const char *text, size_t len);

/* Before tool changes the existing file abs (display name rel) whose
 * content now is text[0..len): AGT_OK when the change may go ahead; else
 * AGT_ESTATE (the file changed since it was seen, or with
 * AGT_EDIT_REQUIRE_READ it was never seen and overwrite is set) with the
 * tool result's text in msg, or AGT_ENOMEM. */
int agti_seen_check(agt_session *s, const char *abs, const char *rel, const char *tool,
                    const char *text, size_t len, bool overwrite, agti_buf *msg);
/* agti_seen_check of a file too large to load, by its hash and size
 * (named changed lines are then not given). */
int agti_seen_check_hash(agt_session *s, const char *abs, const char *rel, const char *tool,
                         uint64_t hash, uint64_t size, bool overwrite, agti_buf *msg);
/* Forgets abs (after a failed record: an old one would refuse the next
 * change). */
void agti_seen_forget(agt_session *s, const char *abs);
/* Whether the session remembers abs (so a check needs the content). */
bool agti_seen_known(const agt_session *s, const char *abs);

/* A new empty table (every session has one from agt_session_new, since
 * Read runs on worker threads and may not create it lazily); NULL when out
 * of memory. The table locks itself: Read records while other calls run. */
struct agti_seen *agti_seen_new(void);
/* Frees the session's table (session.c); NULL is a no-op. */
void agti_seen_free(struct agti_seen *t);

/* Session save sections (save.c): "seen" holds each file's path, size and
 * hash (no line hashes: a restored session names no line ranges). */
int agti_seen_section_save(const agt_session *s, json_t **value);
int agti_seen_section_load(agt_session *s, json_t *value, void **tmp);
void agti_seen_section_commit(agt_session *s, void *tmp);
void agti_seen_section_discard(void *tmp);

#endif
