/*
 * Parallel tree search: the calling thread walks the tree (lib/fs walker,
 * which applies ignore rules and sorts names) and appends the selected
 * files to a queue; worker threads take them in order and search them.
 * Results land in the queue slot of their file, so the output follows the
 * walker's order whatever the thread timing. As the completed prefix of
 * the queue grows, its files go to the caller's sink in that order with the
 * call caps applied (one thread at a time, outside the queue's lock), so
 * results do not pile up until the end; a worker skips a file only once the
 * completed prefix has provably used a cap up.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "search/search_internal.h"

/* Files at least this big are mapped instead of read into the worker's
 * buffer (which thus stays below it); a mapped file's pages are dropped
 * window by window as the search goes (engine.c). Mapping costs page
 * faults, and each munmap or window dropped stops the other threads' CPUs
 * to flush their TLBs (smp_call_function_many_cond was 3.7% of a Grep
 * call over the bench corpus): files up to 1 MiB are cheaper read. */
#define MMAP_MIN (1024u << 10)
#define MAX_THREADS 8
/* Files a worker takes from the queue at once, at most. */
#define BATCH_MAX 16

/* Files selected by the walk and not yet given to the sink, at most: the walk
 * runs several times faster than the search, and without a bound it would
 * queue a slot for every file of the tree (130 bytes each with the path:
 * 130 MB at a million files) before the search catches up. */
#define QUEUE_MAX 4096
static size_t queue_max = QUEUE_MAX; /* test hook; atomic accesses */

static size_t last_queue_cap; /* test hook: the queue's room in the last tree search */

void agti_search_tree_set_queue_max(size_t n)
{
    __atomic_store_n(&queue_max, n ? n : QUEUE_MAX, __ATOMIC_RELAXED);
}

size_t agti_search_tree_last_queue_cap(void)
{
    return __atomic_load_n(&last_queue_cap, __ATOMIC_RELAXED);
}

enum slot_state { SLOT_QUEUED = 0, SLOT_DONE, SLOT_SKIPPED };

typedef struct slot {
    char *path;
    int64_t mtime_ns;
    bool multi_link; /* a regular file with more than one hard link */
    int state;
    bool matched;
    bool binary;
    bool searched;
    int err;
    char *errmsg;
    /* the results of a file with matches (NULL otherwise): a slot stays
     * small, as there is one for every file the walk selects */
    agti_search_file *file;
    struct sdir *dir; /* the file's folder, open (NULL: the worker opens it) */
} slot;

/* A folder of the walk, its descriptor duplicated from the walker's while
 * it lists it (one fcntl instead of each worker resolving the folder's
 * path below the root again); closed when its last queued file is done. */
typedef struct sdir {
    int fd;
    size_t refs; /* guarded by the tree's mu */
    size_t plen;
    char path[]; /* root-relative (the walker's descriptor numbers are reused) */
} sdir;

/* Duplicated folders open at once, at most: a quarter of the process's
 * descriptor limit, up to this (each holds a descriptor while its files
 * wait in the queue, and the walk runs well ahead of the search); past
 * that, workers open folders themselves. Kept small on purpose: a process
 * starts with room for 64 descriptors, and each time a threaded process
 * outgrows its table (at 64, 128, 256, 512) the kernel waits for an RCU
 * grace period (expand_files -> synchronize_rcu) while every thread that
 * opens a file waits for it. With 1024 the walk spent 26-30 ms of a
 * 13,400-file Grep in those waits and the workers starved (perf sched
 * timehist); 24, with the walk's own stack of folders, the workers' files
 * and what a host has open, stays within the first table. */
#define MAX_SDIRS 24

#define SLOT(t, i) ((t)->slots[(i) - (t)->base])

typedef struct tree {
    agti_searcher *s;
    const char *root;
    int rootfd; /* the root folder, borrowed */
    size_t rootlen;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    /* The queue: slot i (of the n the walk selected) is slots[i - base];
     * slots before base went to the sink and their room was reused. */
    slot *slots;
    size_t base, n, cap, next;
    bool walk_blocked; /* the walk waits for the queue to shrink (see QUEUE_MAX) */
    bool walk_done;
    unsigned waiting; /* workers blocked on cv */
    unsigned nworkers;
    bool walk_capped; /* the walk stopped at a further candidate because a cap was used up */
    bool stop;        /* time budget or a cap: take no more files */
    size_t too_large; /* guarded by mu */
    bool oom;
    /* completed prefix [0, done) and what it used */
    size_t done;
    size_t pfx_files, pfx_lines, pfx_bytes;
    bool pfx_full;
    bool timed_out;
    int64_t deadline_ns;
    /* Emission (emit_ready): slots [0, emitted) went to the sink; one
     * thread at a time emits (emitting), and only it touches what follows. */
    agti_search_sink sink;
    void *payload;
    agti_search_result *res;
    size_t emitted;
    bool emitting;
    size_t out_bytes; /* output bytes the call caps count, of the files emitted */
    size_t nsunk;     /* files given to the sink */
    bool full;        /* a call cap is used up: later files are not emitted */
    size_t exact_at;  /* the slot whose file used max_files or max_matches up exactly */
    int exact_kind;   /* 0: none, 1: max_files, 2: max_matches */
    int emit_rc;      /* the first error of the sink or of an error entry */
    /* the folder of the walk's latest file (guarded by mu, as are all sdirs) */
    sdir *cur_dir;
    size_t nsdirs;   /* sdirs open */
    size_t max_dirs; /* at most */
    size_t cut_at;   /* with full: the slot where a cap was used up */
    /* Sensitive files the walk met (skip_sensitive), each as the number of
     * files queued before it: once a cap cuts the results, only those before
     * the cut count, as how far the walk got past it depends on timing. */
    size_t *sens;
    size_t nsens, capsens;
} tree;

/* Caller holds mu. Drops a slot's hold on its folder. */
static void dir_release(tree *t, slot *sl)
{
    sdir *d = sl->dir;
    sl->dir = NULL;
    if (d == NULL || --d->refs > 0)
        return;
    if (t->cur_dir == d)
        t->cur_dir = NULL;
    close(d->fd);
    free(d);
    t->nsdirs--;
}

static size_t file_bytes(const agti_search_file *f, const char *path)
{
    size_t b = strlen(path) + 16;
    for (size_t i = 0; i < f->nlines; i++)
        b += f->lines[i].len + strlen(path) + 16;
    return b;
}

/* Caller holds mu. Advances the completed prefix and its cap accounting. */
static void advance_prefix(tree *t)
{
    const agti_search_opts *o = &t->s->o;
    while (t->done < t->n && SLOT(t, t->done).state != SLOT_QUEUED) {
        slot *sl = &SLOT(t, t->done++);
        if (sl->state != SLOT_DONE || !sl->matched)
            continue;
        t->pfx_files++;
        t->pfx_lines += sl->file->nmatch_lines;
        t->pfx_bytes += file_bytes(sl->file, sl->path);
        if ((o->max_files && t->pfx_files >= o->max_files) ||
            (o->max_matches && t->pfx_lines >= o->max_matches) ||
            (o->max_output_bytes && t->pfx_bytes >= o->max_output_bytes))
            t->pfx_full = true;
    }
}

/* Reads (or maps) the file at path (relative to dirfd, or AT_FDCWD). With skip_binary, a file whose
 * first read shows a NUL byte in the first AGTI_SEARCH_BINARY_PROBE bytes is not read further:
 * *binary is set and the data is that first part. */
static int read_file(agti_sworker *w, int dirfd, const char *path, uint64_t max, bool skip_binary,
                     const char **data, size_t *len, bool *mapped, bool *too_large, bool *binary,
                     int64_t *mtime_ns, bool *multi_link, char **errmsg)
{
    *mapped = false;
    *too_large = false;
    *binary = false;
    w->nul_free = 0;
    /* In a tree, symlinks are skipped: O_NOFOLLOW keeps one swapped in
     * after the walk from being followed out of the tree. */
    int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | (dirfd != AT_FDCWD ? O_NOFOLLOW : 0);
    /* "": dirfd is the file itself, opened by the caller. */
    int fd = path[0] ? openat(dirfd, path, flags) : fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) {
        *errmsg = agti_aprintf("cannot open: %s", strerror(errno));
        return AGT_EIO;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        *errmsg = agti_aprintf("not a regular file");
        return AGT_EIO;
    }
    /* The walk reads no inodes (skip_stat): the time files_with_matches is
     * sorted by comes from this fstat, which the read needs anyway. */
    *mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    *multi_link = st.st_nlink > 1; /* for the caller's hard-link check */
    uint64_t size = (uint64_t)st.st_size;
    if (size > max) {
        close(fd);
        *too_large = true;
        return AGT_OK;
    }
    if (size >= MMAP_MIN) {
        void *p = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p != MAP_FAILED) {
            close(fd);
            madvise(p, (size_t)size, MADV_SEQUENTIAL);
            *data = p;
            *len = (size_t)size;
            *mapped = true;
            return AGT_OK;
        }
    }
    /* The size from fstat is a hint: the file may grow or shrink meanwhile. */
    size_t want = (size_t)size + 1, got = 0;
    for (;;) {
        if (want > w->cap) {
            char *nb = realloc(w->buf, want);
            if (nb == NULL) {
                close(fd);
                return agti_oom();
            }
            w->buf = nb;
            w->cap = want;
        }
        size_t room = w->cap - got;
        if (got == 0 && skip_binary && room > AGTI_SEARCH_BINARY_PROBE)
            room = AGTI_SEARCH_BINARY_PROBE;
        ssize_t r = read(fd, w->buf + got, room);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            *errmsg = agti_aprintf("read failed: %s", strerror(errno));
            close(fd);
            return AGT_EIO;
        }
        if (r == 0)
            break;
        if (got == 0 && skip_binary) {
            if (memchr(w->buf, '\0', (size_t)r) != NULL) {
                got = (size_t)r;
                *binary = true;
                break;
            }
            w->nul_free = (size_t)r; /* agti_search_data need not look again */
        }
        got += (size_t)r;
        /* A short read once fstat's size is in: the end of a regular file
         * (saves the read that would return 0, one syscall per file). */
        if ((size_t)r < room && got >= size)
            break;
        if (got == w->cap) {
            if (got > max) {
                close(fd);
                *too_large = true;
                return AGT_OK;
            }
            want = w->cap * 2;
        }
    }
    close(fd);
    *data = w->buf;
    *len = got;
    return AGT_OK;
}

/* A worker's open directory: files of one directory come in a row, so
 * opening them relative to it saves the kernel a walk of the whole path
 * for every file. */
typedef struct dircache {
    agti_buf abs; /* dir, NUL-terminated */
    agti_buf dir;
    int fd;
} dircache;

static int dir_fd(tree *t, dircache *dc, const char *path, size_t dirlen)
{
    if (dc->fd >= 0 && dc->dir.len == dirlen && memcmp(dc->dir.ptr, path, dirlen) == 0)
        return dc->fd;
    if (dc->fd >= 0)
        close(dc->fd);
    agti_buf_truncate(&dc->dir, 0);
    agti_buf_put(&dc->dir, path, dirlen);
    agti_buf_truncate(&dc->abs, 0);
    agti_buf_put(&dc->abs, path, dirlen);
    if (dc->abs.oom || dc->dir.oom)
        return dc->fd = -1;
    /* Below the root's descriptor, no symlink followed: a folder swapped
     * for a link after the walk listed it leads nowhere. */
    dc->fd = agti_fs_open_beneath(t->rootfd, agti_buf_cstr(&dc->abs), O_PATH | O_DIRECTORY);
    return dc->fd;
}

static void search_slot(tree *t, agti_sworker *w, slot *sl, dircache *dc)
{
    const char *slash = strrchr(sl->path, '/');
    size_t dirlen = slash ? (size_t)(slash - sl->path) : 0;
    int dfd = sl->dir != NULL ? sl->dir->fd : dir_fd(t, dc, sl->path, dirlen);
    if (dfd < 0) {
        sl->err = AGT_EIO;
        sl->errmsg = agti_aprintf("cannot open its directory: %s", strerror(errno));
        return;
    }
    const char *data = NULL;
    size_t len = 0;
    bool mapped, too_large, binary;
    int rc = read_file(w, dfd, slash ? slash + 1 : sl->path, t->s->max_size, !t->s->o.binary_report,
                       &data, &len, &mapped, &too_large, &binary, &sl->mtime_ns, &sl->multi_link,
                       &sl->errmsg);
    if (rc != AGT_OK) {
        sl->err = rc;
        return;
    }
    if (too_large) {
        pthread_mutex_lock(&t->mu);
        t->too_large++;
        pthread_mutex_unlock(&t->mu);
        return;
    }
    sl->searched = true;
    if (binary) {
        sl->binary = true;
        return;
    }
    w->mapped = mapped;
    agti_search_file f;
    rc = agti_search_data(t->s, w, data, len, &f, &sl->matched, &sl->binary);
    w->mapped = false;
    if (mapped)
        munmap((void *)(uintptr_t)data, len);
    if (rc != AGT_OK) {
        sl->err = rc;
        sl->errmsg = agti_strdup(agt_error_message());
        return;
    }
    if (!sl->matched) {
        agti_search_file_clear(&f);
        return;
    }
    sl->file = malloc(sizeof *sl->file);
    if (sl->file == NULL) {
        agti_search_file_clear(&f);
        sl->matched = false;
        pthread_mutex_lock(&t->mu);
        t->oom = true;
        t->stop = true;
        pthread_cond_broadcast(&t->cv);
        pthread_mutex_unlock(&t->mu);
        return;
    }
    *sl->file = f;
}

static int push_error(agti_search_result *res, const slot *sl)
{
    agti_search_error *ne = realloc(res->errors, (res->nerrors + 1) * sizeof *ne);
    if (ne == NULL)
        return agti_oom();
    res->errors = ne;
    agti_search_error *e = &res->errors[res->nerrors++];
    e->path = agti_strdup(sl->path);
    e->code = sl->err;
    e->message = agti_aprintf("%s: %s", sl->path, sl->errmsg ? sl->errmsg : "search failed");
    if (e->path == NULL || e->message == NULL)
        return agti_oom();
    return AGT_OK;
}

/* A call cap is used up at slot i: later files are not emitted. */
static void set_full(tree *t, size_t i)
{
    if (!t->full)
        t->cut_at = i;
    t->full = true;
}

/* Gives the file of one completed slot to the sink, applying the call caps
 * in path order; takes what the slot owns. */
static int emit_slot(tree *t, slot *sl, size_t i)
{
    const agti_search_opts *o = &t->s->o;
    agti_search_result *res = t->res;
    if (sl->state != SLOT_DONE)
        return AGT_OK;
    if (sl->searched)
        res->files_searched++;
    if (sl->binary && !sl->matched)
        res->binary_skipped++;
    if (sl->err != AGT_OK)
        return t->full ? AGT_OK : push_error(res, sl);
    if (!sl->matched || t->full)
        return AGT_OK;
    agti_search_file *f = sl->file;
    if (f->truncated && o->max_matches_per_file && f->nmatch_lines >= o->max_matches_per_file)
        res->truncated_matches = true;
    /* Cut this file's lines to what the call caps leave. */
    if (o->max_matches && res->total_match_lines + f->nmatch_lines > o->max_matches) {
        size_t room = o->max_matches - res->total_match_lines, seen = 0, keep = f->nlines;
        for (size_t k = 0; k < f->nlines; k++) {
            if (f->lines[k].is_match && ++seen > room) {
                keep = k;
                break;
            }
        }
        f->nlines = keep;
        f->nmatch_lines = room;
        f->truncated = true;
        res->truncated_matches = true;
        set_full(t, i);
    }
    size_t fb = file_bytes(f, sl->path);
    if (o->max_output_bytes && t->out_bytes + fb > o->max_output_bytes) {
        size_t k = 0, b = t->out_bytes + strlen(sl->path) + 16, kept_matches = 0;
        for (; k < f->nlines; k++) {
            size_t lb = f->lines[k].len + strlen(sl->path) + 16;
            if (b + lb > o->max_output_bytes)
                break;
            b += lb;
            kept_matches += f->lines[k].is_match;
        }
        res->truncated_output = true;
        set_full(t, i);
        if (o->mode == AGTI_SEARCH_CONTENT && kept_matches == 0)
            return AGT_OK;
        if (o->mode == AGTI_SEARCH_CONTENT) {
            f->nlines = k;
            f->nmatch_lines = kept_matches;
            f->truncated = true;
        } else if (b > o->max_output_bytes) {
            return AGT_OK;
        }
        fb = b - t->out_bytes;
    }
    t->out_bytes += fb;
    f->path = sl->path;
    sl->path = NULL;
    f->mtime_ns = sl->mtime_ns;
    f->multi_link = sl->multi_link;
    res->total_match_lines += f->nmatch_lines;
    t->nsunk++;
    int rc = t->sink(t->payload, f);
    memset(f, 0, sizeof *f);
    /* A cap used up exactly is reported as cutting when any candidate file
     * follows (searched or not): whether later files were searched depends
     * on thread timing, whether they exist does not; so that is decided
     * once the walk is over. */
    if (o->max_files && t->nsunk >= o->max_files && !t->full) {
        set_full(t, i);
        t->exact_at = i;
        t->exact_kind = 1;
    }
    if (o->max_matches && res->total_match_lines >= o->max_matches && !t->full) {
        set_full(t, i);
        t->exact_at = i;
        t->exact_kind = 2;
    }
    return rc;
}

static void slot_free(slot *sl)
{
    free(sl->path);
    free(sl->errmsg);
    agti_search_file_clear(sl->file);
    free(sl->file);
    sl->path = sl->errmsg = NULL;
    sl->file = NULL;
}

#define EMIT_BATCH 64

/* Caller holds mu. Emits the completed slots not emitted yet, unless
 * another thread is at it (it picks these up before it stops). The slots
 * are taken out under mu (the walk may move the array) and emitted
 * without it. */
static void emit_ready(tree *t)
{
    slot local[EMIT_BATCH];
    while (!t->emitting && t->emitted < t->done) {
        t->emitting = true;
        size_t first = t->emitted, k = t->done - first;
        k = k > EMIT_BATCH ? EMIT_BATCH : k;
        for (size_t j = 0; j < k; j++) {
            local[j] = SLOT(t, first + j);
            SLOT(t, first + j).path = NULL;
            SLOT(t, first + j).errmsg = NULL;
            SLOT(t, first + j).file = NULL;
        }
        t->emitted = first + k;
        if (t->walk_blocked)
            pthread_cond_broadcast(&t->cv);
        pthread_mutex_unlock(&t->mu);
        int rc = AGT_OK;
        for (size_t j = 0; j < k; j++) {
            if (rc == AGT_OK && t->emit_rc == AGT_OK)
                rc = emit_slot(t, &local[j], first + j);
            slot_free(&local[j]);
        }
        pthread_mutex_lock(&t->mu);
        t->emitting = false;
        if (rc != AGT_OK && t->emit_rc == AGT_OK) {
            t->emit_rc = rc;
            t->stop = true;
            pthread_cond_broadcast(&t->cv);
        }
    }
}

/* The sink of agti_search_tree_at: appends to res->files. */
static int append_file(void *payload, agti_search_file *f)
{
    agti_search_result *res = payload;
    agti_search_file *nf = realloc(res->files, (res->nfiles + 1) * sizeof *nf);
    if (nf == NULL) {
        agti_search_file_clear(f);
        return agti_oom();
    }
    res->files = nf;
    res->files[res->nfiles++] = *f;
    return AGT_OK;
}

typedef struct worker_arg {
    tree *t;
    int rc;
} worker_arg;

static void *worker_main(void *arg)
{
    worker_arg *wa = arg;
    tree *t = wa->t;
    agti_sworker w;
    dircache dc = {AGTI_BUF_INIT, AGTI_BUF_INIT, -1};
    wa->rc = agti_sworker_init(&w, t->s);
    if (wa->rc != AGT_OK) {
        pthread_mutex_lock(&t->mu);
        t->oom = true;
        t->stop = true;
        pthread_cond_broadcast(&t->cv);
        pthread_mutex_unlock(&t->mu);
        return NULL;
    }
    w.deadline_ns = t->deadline_ns;
    slot local[BATCH_MAX];
    size_t idx[BATCH_MAX];
    pthread_mutex_lock(&t->mu);
    for (;;) {
        while (t->next >= t->n && !t->walk_done && !t->stop) {
            t->waiting++;
            pthread_cond_wait(&t->cv, &t->mu);
            t->waiting--;
        }
        if (t->stop || t->next >= t->n)
            break;
        /* Take a batch: fewer lock round trips and wake-ups per file.
         * While the walk goes on, half of what is queued; after it, a share
         * small enough to keep the workers balanced at the end. */
        size_t avail = t->n - t->next;
        size_t k = t->walk_done ? avail / (2 * t->nworkers) : avail / 2;
        k = k < 1 ? 1 : k > BATCH_MAX ? BATCH_MAX : k;
        size_t m = 0;
        for (size_t j = 0; j < k; j++) {
            size_t i = t->next++;
            if (t->pfx_full && t->done <= i) {
                SLOT(t, i).state = SLOT_SKIPPED;
                dir_release(t, &SLOT(t, i));
                continue;
            }
            idx[m] = i;
            local[m++] = SLOT(t, i);
        }
        if (m < k) {
            advance_prefix(t);
            emit_ready(t);
        }
        if (m == 0)
            continue;
        pthread_mutex_unlock(&t->mu);
        for (size_t j = 0; j < m; j++) {
            if (w.timed_out || (w.deadline_ns && agti_search_now_ns() >= w.deadline_ns)) {
                w.timed_out = true;
                local[j].state = SLOT_SKIPPED;
                continue;
            }
            search_slot(t, &w, &local[j], &dc);
            local[j].state = SLOT_DONE;
        }
        pthread_mutex_lock(&t->mu);
        for (size_t j = 0; j < m; j++) {
            dir_release(t, &local[j]);
            SLOT(t, idx[j]) = local[j];
        }
        advance_prefix(t);
        emit_ready(t);
        if (w.timed_out) {
            t->timed_out = true;
            t->stop = true;
            pthread_cond_broadcast(&t->cv);
            break;
        }
    }
    pthread_mutex_unlock(&t->mu);
    if (dc.fd >= 0)
        close(dc.fd);
    agti_buf_free(&dc.abs);
    agti_buf_free(&dc.dir);
    agti_sworker_fini(&w);
    return NULL;
}

/* Caller holds mu, and gives it up: the walk stops for want of memory. */
static int walk_oom(tree *t)
{
    t->oom = true;
    t->stop = true;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
    return 1;
}

/* arr (of *cap elements of elem bytes) with room for twice as many (first
 * when empty), or NULL (arr untouched). */
static void *grow(void *arr, size_t *cap, size_t elem, size_t first)
{
    size_t ncap = *cap ? 2 * *cap : first;
    void *p = realloc(arr, ncap * elem);
    if (p != NULL)
        *cap = ncap;
    return p;
}

static int walk_cb(const agti_walk_entry *e, void *payload)
{
    tree *t = payload;
    /* The walker's own test (skip_sensitive there), done here to know where
     * in the walk each one was. */
    if (e->type == AGTI_FS_FILE && t->s->o.skip_sensitive &&
        agti_sensitive_match(t->s->o.sensitive, e->relpath, NULL)) {
        pthread_mutex_lock(&t->mu);
        if (t->nsens == t->capsens) {
            size_t *ns = grow(t->sens, &t->capsens, sizeof *ns, 16);
            if (ns == NULL)
                return walk_oom(t);
            t->sens = ns;
        }
        t->sens[t->nsens++] = t->n;
        pthread_mutex_unlock(&t->mu);
        return 0;
    }
    /* Like ripgrep without -L: symlinks are not followed, not even to
     * files (no duplicate results, nothing read from outside the tree). */
    if (e->type != AGTI_FS_FILE || e->is_symlink)
        return 0;
    if (!agti_searcher_selects(t->s, e->relpath, e->relpath_len))
        return 0;
    pthread_mutex_lock(&t->mu);
    /* Back-pressure: wait while the queue is full (the workers always run,
     * and every queued file gets done or skipped and then emitted, so room
     * comes; a stop wakes this too). */
    size_t qmax = __atomic_load_n(&queue_max, __ATOMIC_RELAXED);
    while (t->n - t->emitted >= qmax && !t->stop && !(t->pfx_full && t->done >= t->n)) {
        t->walk_blocked = true;
        /* the workers may wait for a full batch that cannot come now */
        if (t->waiting > 0)
            pthread_cond_broadcast(&t->cv);
        pthread_cond_wait(&t->cv, &t->mu);
        t->walk_blocked = false;
    }
    if (t->stop || (t->pfx_full && t->done >= t->n)) {
        if (!t->stop)
            t->walk_capped = true;
        pthread_mutex_unlock(&t->mu);
        return 1;
    }
    if (e->size > t->s->max_size) {
        t->too_large++;
        pthread_mutex_unlock(&t->mu);
        return 0;
    }
    /* Reuse the room of the slots already emitted before growing. */
    if (t->cap > 0 && t->n - t->base == t->cap && t->emitted - t->base >= t->cap / 2) {
        size_t drop = t->emitted - t->base;
        memmove(t->slots, t->slots + drop, (t->n - t->emitted) * sizeof *t->slots);
        t->base = t->emitted;
    }
    if (t->n - t->base == t->cap) {
        slot *ns = grow(t->slots, &t->cap, sizeof *ns, 256);
        if (ns == NULL)
            return walk_oom(t);
        t->slots = ns;
    }
    slot *sl = &SLOT(t, t->n);
    memset(sl, 0, sizeof *sl);
    sl->path = agti_strndup(e->relpath, e->relpath_len);
    sl->mtime_ns = e->mtime_ns;
    if (sl->path == NULL)
        return walk_oom(t);
    /* The folder's descriptor, shared by its files in the queue. */
    const char *slash = memrchr(e->relpath, '/', e->relpath_len);
    size_t dl = slash ? (size_t)(slash - e->relpath) : 0;
    sdir *d = t->cur_dir;
    if (d != NULL && !(d->plen == dl && memcmp(d->path, e->relpath, dl) == 0))
        d = t->cur_dir = NULL;
    if (d == NULL && e->dirfd >= 0 && t->nsdirs < t->max_dirs &&
        (d = malloc(sizeof *d + dl)) != NULL) {
        d->fd = fcntl(e->dirfd, F_DUPFD_CLOEXEC, 0);
        if (d->fd < 0) {
            free(d);
            d = NULL;
        } else {
            d->refs = 0;
            d->plen = dl;
            memcpy(d->path, e->relpath, dl);
            t->cur_dir = d;
            t->nsdirs++;
        }
    }
    if (d != NULL) {
        d->refs++;
        sl->dir = d;
    }
    t->n++;
    /* When the walk is the bottleneck the workers wait for it; waking one
     * per file would cost a context switch per file, so wake one per batch
     * (the end of the walk wakes everybody). */
    if (t->waiting > 0 && t->n - t->next >= BATCH_MAX)
        pthread_cond_signal(&t->cv);
    pthread_mutex_unlock(&t->mu);
    return 0;
}

static unsigned thread_count(const agti_searcher *s)
{
    unsigned n = s->o.threads;
    if (n == 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        n = c > 0 ? (unsigned)c : 1;
    }
    return n > MAX_THREADS ? MAX_THREADS : n;
}

static int search_single(agti_searcher *s, int fd, const char *root, const struct stat *st,
                         agti_search_sink sink, void *payload, agti_search_result *res)
{
    const char *base = strrchr(root, '/');
    base = base && base[1] ? base + 1 : root;
    if (!agti_searcher_selects(s, base, strlen(base)))
        return AGT_OK;
    if ((uint64_t)st->st_size > s->max_size) {
        res->too_large_skipped = 1;
        return AGT_OK;
    }
    agti_sworker w;
    int rc = agti_sworker_init(&w, s);
    if (rc != AGT_OK)
        return rc;
    if (s->o.time_budget_ms > 0)
        w.deadline_ns = agti_search_now_ns() + s->o.time_budget_ms * 1000000;
    const char *data = NULL;
    size_t len = 0;
    bool mapped, too_large, matched = false, binary = false, early_binary = false;
    char *msg = NULL;
    int64_t mtime_ns = 0;
    bool multi_link = false;
    agti_search_file f;
    memset(&f, 0, sizeof f);
    rc = read_file(&w, fd, "", s->max_size, !s->o.binary_report, &data, &len, &mapped, &too_large,
                   &early_binary, &mtime_ns, &multi_link, &msg);
    if (rc == AGT_EIO) {
        agti_error(rc, "%s: %s", root, msg ? msg : "read failed");
        free(msg);
        agti_sworker_fini(&w);
        return AGT_EIO;
    }
    if (rc == AGT_OK && too_large)
        res->too_large_skipped = 1;
    else if (rc == AGT_OK) {
        res->files_searched = 1;
        w.mapped = mapped;
        rc = agti_search_data(s, &w, data, len, &f, &matched, &binary);
        w.mapped = false;
        if (mapped)
            munmap((void *)(uintptr_t)data, len);
    }
    res->timed_out = w.timed_out;
    agti_sworker_fini(&w);
    if (rc == AGT_ELIMIT) {
        res->errors = calloc(1, sizeof *res->errors);
        if (res->errors == NULL)
            return agti_oom();
        res->nerrors = 1;
        res->errors[0].path = agti_strdup(base);
        res->errors[0].code = rc;
        res->errors[0].message = agti_aprintf("%s: %s", base, agt_error_message());
        return AGT_OK;
    }
    if (rc != AGT_OK)
        return rc;
    if (binary && !matched)
        res->binary_skipped = 1;
    if (matched) {
        f.path = agti_strdup(base);
        f.mtime_ns = mtime_ns;
        f.multi_link = multi_link;
        if (f.path == NULL) {
            agti_search_file_clear(&f);
            return agti_oom();
        }
        if (s->o.max_matches_per_file && f.truncated)
            res->truncated_matches = true;
        /* the output cap holds for a single file too (it kept every line);
         * the first line stays, as the tool cuts long lines when it shows them */
        size_t cap = s->o.max_output_bytes, plen = strlen(f.path);
        if (cap && s->o.mode == AGTI_SEARCH_CONTENT && file_bytes(&f, f.path) > cap) {
            size_t k = 0, b = plen + 16, kept_matches = 0;
            for (; k < f.nlines && (k == 0 || b + f.lines[k].len + plen + 16 <= cap); k++) {
                b += f.lines[k].len + plen + 16;
                kept_matches += f.lines[k].is_match;
            }
            f.nlines = k;
            f.nmatch_lines = kept_matches;
            f.truncated = true;
            res->truncated_output = true;
        }
        res->total_match_lines = f.nmatch_lines;
        return sink(payload, &f);
    }
    return AGT_OK;
}

int agti_search_tree(agti_searcher *s, const char *root, agti_search_result *res)
{
    if (s == NULL || root == NULL || res == NULL)
        return agti_error(AGT_EINVAL, "search: NULL argument");
    memset(res, 0, sizeof *res);
    int fd = open(root, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return agti_error(AGT_ENOTFOUND, "search root '%s': %s", root, strerror(errno));
    int rc = agti_search_tree_at(s, fd, root, res);
    close(fd);
    return rc;
}

int agti_search_tree_at(agti_searcher *s, int fd, const char *root, agti_search_result *res)
{
    return agti_search_tree_sink(s, fd, root, append_file, res, res);
}

int agti_search_tree_sink(agti_searcher *s, int fd, const char *root, agti_search_sink sink,
                          void *payload, agti_search_result *res)
{
    if (s == NULL || root == NULL || res == NULL || fd < 0 || sink == NULL)
        return agti_error(AGT_EINVAL, "search: NULL argument");
    memset(res, 0, sizeof *res);
    struct stat st;
    if (fstat(fd, &st) != 0)
        return agti_error(AGT_ENOTFOUND, "search root '%s': %s", root, strerror(errno));
    if (S_ISREG(st.st_mode)) {
        int rc = search_single(s, fd, root, &st, sink, payload, res);
        if (rc != AGT_OK)
            agti_search_result_clear(res);
        return rc;
    }
    if (!S_ISDIR(st.st_mode))
        return agti_error(AGT_EINVAL, "search root '%s' is neither a file nor a directory", root);

    tree t;
    memset(&t, 0, sizeof t);
    t.s = s;
    t.root = root;
    t.rootfd = fd;
    t.sink = sink;
    t.payload = payload;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
        t.max_dirs = rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur / 4 > MAX_SDIRS
                         ? MAX_SDIRS
                         : (size_t)(rl.rlim_cur / 4);
    t.res = res;
    t.rootlen = strlen(root);
    while (t.rootlen > 1 && root[t.rootlen - 1] == '/')
        t.rootlen--;
    if (s->o.time_budget_ms > 0)
        t.deadline_ns = agti_search_now_ns() + s->o.time_budget_ms * 1000000;
    pthread_mutex_init(&t.mu, NULL);
    pthread_cond_init(&t.cv, NULL);

    unsigned nth = thread_count(s);
    t.nworkers = nth;
    pthread_t th[MAX_THREADS];
    worker_arg wa[MAX_THREADS];
    unsigned started = 0;
    for (unsigned i = 0; i < nth; i++) {
        wa[i].t = &t;
        wa[i].rc = AGT_OK;
        if (pthread_create(&th[i], NULL, worker_main, &wa[i]) != 0)
            break;
        started++;
    }
    int rc = AGT_OK;
    if (started == 0)
        rc = agti_error(AGT_ERROR, "search: cannot start a worker thread");

    agti_walk_opts wo;
    memset(&wo, 0, sizeof wo);
    wo.include_ignored = s->o.include_ignored;
    wo.skip_sensitive = false; /* walk_cb counts them */
    wo.sensitive = s->o.sensitive;
    wo.ignore_flags = s->o.ignore_flags;
    wo.ignore_root = s->o.ignore_root;
    wo.home = s->o.home;
    /* Types from d_type; size and mtime come from the fstat before each read. */
    wo.skip_stat = true;
    wo.time_budget_ms = s->o.time_budget_ms;
    agti_walk_result wr;
    memset(&wr, 0, sizeof wr);
    if (rc == AGT_OK) {
        rc = agti_walk_at(fd, root, &wo, walk_cb, &t, &wr);
        if (rc == AGT_ECANCELLED)
            rc = AGT_OK;
    }
    pthread_mutex_lock(&t.mu);
    t.walk_done = true;
    if (rc != AGT_OK)
        t.stop = true;
    pthread_cond_broadcast(&t.cv);
    pthread_mutex_unlock(&t.mu);
    for (unsigned i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    /* what the workers left: every slot is done or skipped now */
    pthread_mutex_lock(&t.mu);
    advance_prefix(&t);
    emit_ready(&t);
    pthread_mutex_unlock(&t.mu);

    if (rc == AGT_OK && t.oom)
        rc = agti_oom();
    if (rc == AGT_OK)
        rc = t.emit_rc;
    if (rc == AGT_OK && t.exact_kind != 0) {
        bool more = t.exact_at + 1 < t.n || t.walk_capped;
        if (t.exact_kind == 1)
            res->truncated_files = more;
        else
            res->truncated_matches = more;
    }
    if (rc == AGT_OK) {
        for (size_t i = 0; i < t.nsens; i++)
            res->sensitive_skipped += !t.full || t.sens[i] <= t.cut_at;
        res->too_large_skipped = t.too_large;
        res->timed_out = t.timed_out || wr.timed_out;
        res->warnings = wr.warnings;
        res->nwarnings = wr.nwarnings;
        wr.warnings = NULL;
        wr.nwarnings = 0;
    }
    agti_walk_result_clear(&wr);
    for (size_t i = t.base; i < t.n; i++) {
        dir_release(&t, &SLOT(&t, i)); /* files queued when the search stopped */
        slot_free(&SLOT(&t, i));
    }
    free(t.slots);
    __atomic_store_n(&last_queue_cap, t.cap, __ATOMIC_RELAXED);
    free(t.sens);
    pthread_mutex_destroy(&t.mu);
    pthread_cond_destroy(&t.cv);
    if (rc != AGT_OK)
        agti_search_result_clear(res);
    return rc;
}

void agti_search_result_clear(agti_search_result *res)
{
    if (res == NULL)
        return;
    for (size_t i = 0; i < res->nfiles; i++)
        agti_search_file_clear(&res->files[i]);
    free(res->files);
    for (size_t i = 0; i < res->nerrors; i++) {
        free(res->errors[i].path);
        free(res->errors[i].message);
    }
    free(res->errors);
    for (size_t i = 0; i < res->nwarnings; i++)
        free(res->warnings[i]);
    free(res->warnings);
    memset(res, 0, sizeof *res);
}
