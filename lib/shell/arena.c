/* The arena of lib/shell (arena.h): bump allocation in chunks, and the
 * pool of freed chunks that the next parse or analysis reuses. */
#include <pthread.h>
#include <stdlib.h>

#include "shell/arena.h"

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static agti_sh_chunk *pool; /* free chunks, any sizes */
static size_t pool_bytes;   /* their capacities added up */

/* Under AddressSanitizer (tests, fuzzing) chunks are never reused, so that
 * a read of a freed tree is still caught. */
#if defined(__SANITIZE_ADDRESS__)
#define POOL_MAX 0u
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define POOL_MAX 0u
#endif
#endif
#ifndef POOL_MAX
#define POOL_MAX AGTI_SH_POOL_MAX
#endif

/* A pooled chunk of exactly want bytes, or NULL: chunks come in the sizes
 * of the doubling sequence, so the same sizes recur, and an arena's
 * capacity stays what it would be without the pool (the parser's budget
 * counts it). */
static agti_sh_chunk *pool_take(size_t want)
{
    agti_sh_chunk *c = NULL;
    pthread_mutex_lock(&pool_lock);
    for (agti_sh_chunk **pp = &pool; *pp != NULL; pp = &(*pp)->next) {
        if ((*pp)->cap == want) {
            c = *pp;
            *pp = c->next;
            pool_bytes -= c->cap;
            break;
        }
    }
    pthread_mutex_unlock(&pool_lock);
    return c;
}

void agti_sh_arena_init(agti_sh_arena *a, size_t min_cap, size_t max_cap)
{
    a->chunks = NULL;
    a->bytes = 0;
    a->next_cap = min_cap;
    a->min_cap = min_cap;
    a->max_cap = max_cap;
}

static size_t round16(size_t n)
{
    n = (n + 15u) & ~(size_t)15u;
    return n ? n : 16;
}

size_t agti_sh_arena_need(const agti_sh_arena *a, size_t n)
{
    n = round16(n);
    const agti_sh_chunk *c = a->chunks;
    if (c != NULL && c->cap - c->used >= n)
        return 0;
    return n > a->next_cap ? n : a->next_cap;
}

void *agti_sh_arena_alloc(agti_sh_arena *a, size_t n)
{
    n = round16(n);
    agti_sh_chunk *c = a->chunks;
    if (c == NULL || c->cap - c->used < n) {
        size_t cap = n > a->next_cap ? n : a->next_cap;
        c = pool_take(cap);
        if (c == NULL && (c = malloc(sizeof *c + cap)) != NULL)
            c->cap = cap;
        if (c == NULL)
            return NULL;
        c->used = 0;
        c->next = a->chunks;
        a->chunks = c;
        a->bytes += c->cap;
        if (a->next_cap < a->max_cap)
            a->next_cap = a->next_cap * 2 < a->max_cap ? a->next_cap * 2 : a->max_cap;
    }
    void *r = c->data + c->used;
    c->used += n;
    return r;
}

void agti_sh_arena_free(agti_sh_arena *a)
{
    agti_sh_chunk *c = a->chunks, *spill = NULL;
    pthread_mutex_lock(&pool_lock);
    while (c != NULL) {
        agti_sh_chunk *next = c->next;
        if (pool_bytes + c->cap <= POOL_MAX) {
            c->next = pool;
            pool = c;
            pool_bytes += c->cap;
        } else {
            c->next = spill;
            spill = c;
        }
        c = next;
    }
    pthread_mutex_unlock(&pool_lock);
    while (spill != NULL) {
        agti_sh_chunk *next = spill->next;
        free(spill);
        spill = next;
    }
    agti_sh_arena_init(a, a->min_cap, a->max_cap);
}
