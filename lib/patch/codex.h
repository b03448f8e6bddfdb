/*
 * The patch format of Codex's apply_patch ("*** Begin Patch" ... "*** End
 * Patch" with Add File, Delete File, Update File (+ Move to) sections and
 * "@@" hunks), parsed and applied to an in-memory set of files. Knows
 * nothing of tools or of the file system: the caller loads each file
 * through a callback and writes the results itself (all or nothing).
 */
#ifndef AGT_LIB_PATCH_CODEX_H
#define AGT_LIB_PATCH_CODEX_H

#include <stdbool.h>
#include <stddef.h>

#include "core/core.h"

/* Largest patch text parsed (bytes) and most file sections in one patch. */
#define AGTI_PATCH_MAX_BYTES (16u * 1024u * 1024u)
#define AGTI_PATCH_MAX_FILES 500
/* Largest file a patch may leave (bytes). */
#define AGTI_PATCH_MAX_OUT (64u * 1024u * 1024u)

enum agti_patch_kind { AGTI_PATCH_ADD = 1, AGTI_PATCH_DELETE = 2, AGTI_PATCH_UPDATE = 3 };

/* A line of the patch: bytes in the patch's own copy (not NUL-terminated). */
typedef struct agti_pline {
    const char *s;
    size_t n;
} agti_pline;

/* One "@@" hunk of an Update File section. */
typedef struct agti_phunk {
    size_t line;         /* 1-based patch line where the hunk starts */
    agti_pline *anchors; /* the texts of its "@@ TEXT" lines, in order */
    size_t nanchors;
    agti_pline *old; /* the lines it expects (' ' and '-' lines) */
    size_t *old_at;  /* the patch line of each of them */
    size_t nold;
    agti_pline *nw; /* the lines it leaves (' ' and '+' lines) */
    size_t nnew;
    bool eof; /* "*** End of File": old must end the file */
} agti_phunk;

/* One file section. */
typedef struct agti_pop {
    int kind;      /* enum agti_patch_kind */
    size_t line;   /* 1-based patch line of its header */
    char *path;    /* as written (NUL-terminated) */
    char *move_to; /* Update File with "*** Move to:", else NULL */
    size_t move_line;
    char *content; /* Add File: the new file's text (every line ends in "\n") */
    size_t content_len;
    agti_phunk *hunks; /* Update File */
    size_t nhunks;
} agti_pop;

typedef struct agti_patch {
    char *text; /* the patch's own copy; agti_pline point into it */
    agti_pop *ops;
    size_t nops;
} agti_patch;

/* Parses text[0..len). Lines end in "\n" (a "\r" before it is dropped);
 * blank lines around the patch and white space around its markers are
 * tolerated, and so is a here-document wrapper (<<EOF ... EOF, as Codex
 * accepts it). *out on success (agti_patch_free). AGT_EPARSE with err
 * holding "line N: what is wrong, and what to write instead"; AGT_ELIMIT
 * (too large, too many sections), AGT_ENOMEM. */
int agti_patch_parse(const char *text, size_t len, agti_patch **out, agti_buf *err);
void agti_patch_free(agti_patch *p);

/* A file as the loader gives it. */
typedef struct agti_pload {
    char *key;   /* identity of the file (two spellings of one file give one key);
                    malloc'd, taken by the engine */
    bool exists; /* false: the file does not exist (data NULL) */
    char *data;  /* its content, malloc'd, taken by the engine */
    size_t len;
} agti_pload;

/* Loads the file that path (as written in the patch) names into *out, or
 * fails with err set (a folder, a binary file, refused, I/O): the engine
 * then stops with that status. Called once per distinct path. */
typedef int (*agti_patch_load_fn)(void *ctx, const char *path, agti_pload *out, agti_buf *err);

/* A file the patch touches, after applying it in memory. */
typedef struct agti_pfile {
    char *key;    /* from the loader */
    char *path;   /* the path as the patch first names it */
    bool existed; /* before */
    char *old;    /* its content before (existed), owned */
    size_t old_len;
    bool exists; /* after */
    char *data;  /* its content after (exists), owned */
    size_t len;
    char *moved_from; /* the patch path it was moved from ("*** Move to:" here), or NULL */
    agti_buf notes;   /* hunk notes (ladder levels), lines starting with "\n" */
    size_t hunks;     /* hunks applied to it */
} agti_pfile;

typedef struct agti_patch_result {
    agti_pfile *files; /* in the order the patch first touches them */
    size_t n;
} agti_patch_result;

/* Applies p to files loaded through load, in memory: the sections in
 * order, each on the state the ones before it left (a file added and then
 * updated in one patch works). Each hunk's lines are located after the
 * previous hunk's, exactly first, then up the matching ladder to max_level
 * (enum agti_match_level): its "@@" anchors are looked for first, one line
 * each, and the hunk's lines are the first place after them; a hunk
 * without anchors must match one place only. Replacement lines get the
 * file's line endings (and, at the indentation level, its indentation); a
 * file without a final line break keeps that. Add File of an existing
 * file, Move to an existing file, Delete or Update of a missing file are
 * errors. *res on success (agti_patch_result_clear), else err says which
 * section and hunk, the patch line, and for a hunk that did not match the
 * first line that did not and the file's closest line.
 * AGT_ENOTFOUND, AGT_EEXISTS, AGT_EAMBIGUOUS, AGT_ELIMIT, the loader's
 * status, AGT_ENOMEM. */
int agti_patch_apply(const agti_patch *p, int max_level, agti_patch_load_fn load, void *ctx,
                     agti_patch_result *res, agti_buf *err);
void agti_patch_result_clear(agti_patch_result *res);

#endif
