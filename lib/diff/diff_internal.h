/*
 * Internal model of a change set. Everything textual lives in one store
 * (`text`): a parsed diff copies its input there once and lines are offsets
 * into it; files built programmatically (agti_diff_add_*) append their line
 * text to the same store. No allocation per line.
 */
#ifndef AGT_LIB_DIFF_INTERNAL_H
#define AGT_LIB_DIFF_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agenttools/diff.h"
#include "core/core.h"

#define AGTI_DIFF_NONE UINT32_MAX
#define AGTI_LINE_NOEOL 0x1u /* followed by "\ No newline at end of file" */

typedef struct agti_diff_line {
    uint32_t off;    /* content start in d->text (after the origin character);
                      * the store is kept under 4 GiB */
    uint32_t len;    /* content length, without the LF (a CR is kept) */
    uint32_t old_no; /* 1-based old-file line; 0 for an added line */
    uint32_t new_no; /* 1-based new-file line; 0 for a deleted line */
    char origin;     /* ' ', '+' or '-' */
    uint8_t flags;   /* AGTI_LINE_* */
} agti_diff_line;

typedef struct agti_diff_hunk {
    uint32_t old_start, old_lines, new_start, new_lines;
    size_t section_off; /* in d->text */
    uint32_t section_len;
    uint32_t first_line, nlines; /* range in d->lines */
    uint32_t old_next, new_next; /* numbers of the next old/new line */
} agti_diff_hunk;

/* Trimmed-line hash index: key -> first position, positions chained in
 * ascending order through next[]. Blank lines are not indexed. */
typedef struct agti_line_index {
    uint64_t *keys;   /* 0 = empty slot */
    uint32_t *heads;  /* first position of the key */
    uint32_t *counts; /* positions with the key */
    uint32_t *next;   /* per position: next position with the same key */
    size_t mask;
} agti_line_index;

typedef struct agti_diff_content {
    char *path;
    char *text; /* NUL-terminated copy */
    size_t len;
    size_t *line_off; /* start of each line */
    uint32_t nlines;
    agti_line_index idx;
} agti_diff_content;

typedef struct agti_diff_file {
    char *old_path; /* NULL when the file does not exist before */
    char *new_path; /* NULL when it does not exist after */
    int status;     /* AGT_DIFF_* */
    bool binary;
    bool git;          /* had a `diff --git` header */
    bool seen_minus;   /* had a `---` line */
    uint32_t old_mode; /* 0 = none */
    uint32_t new_mode;
    int similarity;    /* -1 = none */
    int dissimilarity; /* -1 = none */
    uint32_t first_hunk, nhunks;
    uint32_t added, deleted;
    size_t raw_start, raw_end; /* file's text in d->text; raw_end == 0: render */
    bool raw;
    /* anchoring index over this file's hunk lines (positions are local to
     * the file: d->lines[first_line + pos]) */
    uint32_t first_line, nlines;
    agti_line_index idx;
    bool idx_built;
    uint32_t content_ix1; /* 1 + index in d->contents; 0 = no content set */
} agti_diff_file;

struct agt_diff {
    agti_buf text;
    agti_diff_line *lines;
    size_t nlines, cap_lines;
    agti_diff_hunk *hunks;
    size_t nhunks, cap_hunks;
    agti_diff_file *files;
    size_t nfiles, cap_files;
    agti_diff_content *contents;
    size_t ncontents, cap_contents;
    char **warnings;
    size_t nwarnings;
    bool best_effort;
    agt_diff_relocate_fn relocate;
    int relocate_max;
    void *relocate_payload;
    /* Every file's line index is built. The first agt_diff_anchor builds
     * them (under index_lock); anchoring is a reading call that may run on
     * several threads at once, so the flag is read with acquire and set
     * with release after the build, and the builder (single-threaded, like
     * every call that changes the handle) clears it. */
    atomic_bool indexed;
    pthread_mutex_t index_lock;
};

/* ---- builder (used by the parser and by other engines, e.g. git) ------ */

int agti_diff_new(agt_diff **out);
/* Appends a file; paths are copied (NULL = missing side). Modes are numeric
 * (0100644), 0 = none; similarity -1 = none. */
int agti_diff_add_file(agt_diff *d, const char *old_path, const char *new_path, int status,
                       bool binary, uint32_t old_mode, uint32_t new_mode, int similarity);
/* Appends a hunk to the last file. */
int agti_diff_add_hunk(agt_diff *d, uint32_t old_start, uint32_t old_lines, uint32_t new_start,
                       uint32_t new_lines, const char *section, size_t section_len);
/* Appends a line (' ', '+', '-') to the last hunk; text without its LF.
 * Line numbers are derived from the hunk header and the lines before. */
int agti_diff_add_line(agt_diff *d, char origin, const char *text, size_t len, bool noeol);
/* Same, for text already in d->text at off (the parser's path). */
int agti_diff_push_line(agt_diff *d, char origin, size_t off, size_t len);

/* ---- shared internals ------------------------------------------------- */

agti_diff_file *agti_diff_find_file(const agt_diff *d, const char *path);
agti_diff_content *agti_diff_find_content(const agt_diff *d, const char *path);
/* Renders or copies the diff text of one file into b. */
void agti_diff_file_render(const agt_diff *d, const agti_diff_file *f, agti_buf *b);
void agti_diff_json_string(agti_buf *b, const char *s, size_t len);
int agti_diff_add_warning(agt_diff *d, const char *fmt, ...) AGTI_PRINTF(2, 3);

/* Line hashing: hash of the line with leading/trailing white space removed;
 * 0 for a blank line. */
uint64_t agti_line_hash(const char *s, size_t len);
/* Trims leading/trailing white space (space, tab, CR, LF, VT, FF). */
void agti_line_trim(const char **s, size_t *len);
int agti_line_index_build(agti_line_index *ix, const uint64_t *hashes, size_t n);
void agti_line_index_free(agti_line_index *ix);
/* First position with that hash, or AGTI_DIFF_NONE; *count (may be NULL)
 * gets the number of positions with it. */
uint32_t agti_line_index_first(const agti_line_index *ix, uint64_t h, uint32_t *count);

void agti_diff_content_free(agti_diff_content *c);
/* Builds the per-file anchoring indexes (idempotent). */
/* Builds the files' line indexes once; safe to call from several threads
 * at once on one handle (the anchoring entry points cast away const). */
int agti_diff_build_index(agt_diff *d);

#endif
