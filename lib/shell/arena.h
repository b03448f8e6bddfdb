/*
 * The memory of a parsed script and of its analysis: an arena of chunks,
 * freed all at once. Freed chunks go back to a small process-wide pool
 * (at most AGTI_SH_POOL_MAX bytes, shared by all threads under a mutex)
 * from which the next parse or analysis takes them: a host checks one
 * command after another, and without the pool each check of a large
 * script would take its memory fresh from the system (page faults) and
 * the allocator would give it back at the end (about two thirds of the
 * time of a 100 KB script went there). Internal to lib/shell.
 */
#ifndef AGT_LIB_SHELL_ARENA_H
#define AGT_LIB_SHELL_ARENA_H

#include <stddef.h>

/* Bytes of free chunks the pool keeps for the next parse (the rest is
 * freed): enough for a script of a few hundred KB. */
#define AGTI_SH_POOL_MAX (8u << 20)

typedef struct agti_sh_chunk {
    struct agti_sh_chunk *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
} agti_sh_chunk;

typedef struct agti_sh_arena {
    agti_sh_chunk *chunks; /* the current one first */
    size_t bytes;          /* capacity of all chunks */
    size_t next_cap;       /* capacity of the next new chunk (doubles) */
    size_t min_cap, max_cap;
} agti_sh_arena;

/* An empty arena whose chunks start at min_cap bytes and double up to
 * max_cap (a larger request gets a chunk of its own size). */
void agti_sh_arena_init(agti_sh_arena *a, size_t min_cap, size_t max_cap);
/* The bytes a new chunk for n more bytes would add to a->bytes (for a
 * caller's budget check before agti_sh_arena_alloc). */
size_t agti_sh_arena_need(const agti_sh_arena *a, size_t n);
/* n bytes aligned to 16, not zeroed; NULL when out of memory. */
void *agti_sh_arena_alloc(agti_sh_arena *a, size_t n);
/* Gives every chunk back (to the pool while it has room) and empties a. */
void agti_sh_arena_free(agti_sh_arena *a);

#endif
