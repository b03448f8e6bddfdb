/*
 * Internal text-matching and patch engine of libagenttools: the matching
 * ladder that Edit (and patch hunks) fall back to when old text is not found
 * byte for byte. Knows nothing of tools or sessions; depends on lib/core only.
 */
#ifndef AGT_LIB_PATCH_H
#define AGT_LIB_PATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "core/core.h"

/* Levels of the ladder. Each level includes the normalisations of the ones
 * before it. */
enum agti_match_level {
    AGTI_MATCH_EXACT = 0,    /* byte for byte */
    AGTI_MATCH_EOL = 1,      /* "\r\n" and "\n" are the same, per line */
    AGTI_MATCH_TRAILING = 2, /* white space before a line end ignored */
    AGTI_MATCH_INDENT = 3,   /* leading white space ignored, with a consistent re-basing */
    AGTI_MATCH_UNICODE = 4   /* NBSP, zero-width characters, curly quotes, dashes folded */
};
#define AGTI_MATCH_MAX_PLACES 5

/* What agti_match_find found. */
typedef struct agti_match {
    int level;                           /* the level that decided (enum agti_match_level) */
    size_t count;                        /* places matching at that level (1: applied) */
    size_t start;                        /* when count == 1: the span of text it matched */
    size_t end;                          /* exclusive */
    size_t lines[AGTI_MATCH_MAX_PLACES]; /* 1-based first lines of the places */
    /* What made the match (for the message), set when count == 1. */
    char why[160];
} agti_match;

/* Looks for old[0..olen) in text[0..len): exactly first, then up the
 * ladder to max_level. A level is used only when it yields exactly one
 * place; a level with several places stops the ladder (count > 1, lines
 * set, nothing to apply). count 0: no level matched. The exact level
 * counts non-overlapping occurrences. AGT_OK or AGT_ENOMEM. */
int agti_match_find(const char *text, size_t len, const char *old, size_t olen, int max_level,
                    agti_match *m);

/* Flags of agti_match_find_at. */
#define AGTI_MATCH_LINES                                                                           \
    1u                       /* a place starts at a line start (old holds whole lines, each        \
                                ending in "\n"); overlapping places are counted apart */
#define AGTI_MATCH_AT_END 2u /* a place ends at the end of the text */

/* agti_match_find over text[from..len) (from: a line start with
 * AGTI_MATCH_LINES), places restricted by flags (AGTI_MATCH_*); line
 * numbers count from the start of text. With AGTI_MATCH_LINES the first
 * place and m->why are set whatever the count (the caller may take the
 * first of several). AGT_OK or AGT_ENOMEM. */
int agti_match_find_at(const char *text, size_t len, size_t from, const char *old, size_t olen,
                       int max_level, unsigned flags, agti_match *m);

/* The text that replaces m's span (count == 1, level > 0) for new[0..nlen)
 * given as the replacement of old: every line break gets the ending of the
 * matched line at the same position (the last one, or the file's most
 * common ending, past them); at AGTI_MATCH_INDENT and above every line is
 * re-indented from old's indentation to the file's (the indentation the
 * matched lines have, extrapolated in the file's style for new levels).
 * Malloc'd, NUL-terminated, *out_len its length; NULL on OOM. */
char *agti_match_adapt(const char *text, size_t len, const agti_match *m, const char *old,
                       size_t olen, const char *nw, size_t nlen, size_t *out_len);

#endif
