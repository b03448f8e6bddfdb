/*
 * Directory walker: depth first, entries of a directory in bytewise name
 * order (serial walks), ignore files pushed and popped per directory. A
 * directory is opened relative to its parent's descriptor (openat,
 * O_NOFOLLOW) and read
 * with getdents64 into one name arena; the entry type comes from d_type,
 * and an entry is stat'ed (fstatat relative to the parent) only when the
 * file system gives no d_type, for a symlink's target, or when the caller
 * wants size and mtime (no skip_stat). A directory's descriptor stays open
 * while its entries are visited, so open descriptors grow with the depth
 * up to KEEP_FD_DEPTH; deeper directories are closed after reading and
 * opened again for each entry below the open folder at that depth, with
 * agti_fs_open_beneath (no symlink followed, never by full path). The root
 * itself comes as a descriptor (agti_walk_at). Symlinked directories are never
 * followed (like rg without -L); the dev/ino of every directory on the
 * current path (fstat of the opened directory) is still checked so that a
 * bind mount loop cannot recurse forever.
 *
 * Parallel walks (opts->threads > 1) start the same way, on the calling
 * thread. Once it has read parallel_after entries, helper threads start,
 * and a worker that has nothing to do says so; the next entry a busy worker
 * visits, it hands out half of the subdirectories not yet visited in the
 * shallowest folder it is listing (the biggest subtrees it has left). A
 * handout names the entry in its parent, which stays open until the last
 * holder lets go, and carries the ancestors' dev/ino and a snapshot of the
 * ignore rules in force there: the receiver visits it exactly as the giver
 * would have (the same ignore and sensitive decisions, still fd-relative),
 * each worker with its own ignore stack over shared, immutable rule lists.
 * Only folders of known type (d_type) above KEEP_FD_DEPTH are handed out.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fs.h"

/* Directories up to this depth keep their descriptor while their entries
 * are visited (the default RLIMIT_NOFILE is 1024). */
#define KEEP_FD_DEPTH 128
/* getdents64 buffer, bytes. */
#define DENTS_BUF (32u << 10)
/* Entries the calling thread reads before helpers start (parallel walks):
 * a walk smaller than this never starts a thread. */
#define PAR_AFTER_DEFAULT 1024
#define MAX_WORKERS 16

_Thread_local bool agti_walk_force_unknown_dtype;
_Thread_local unsigned agti_walk_force_threads;
_Thread_local size_t agti_walk_force_parallel_after;
_Thread_local bool agti_walk_hold_main;

typedef struct dev_ino {
    dev_t dev;
    ino_t ino;
} dev_ino;

typedef struct dent {
    const char *name; /* in the directory's name arena, set once it is complete */
    size_t off;       /* offset in the arena */
    size_t len;
    unsigned char dtype; /* DT_* from getdents64, DT_UNKNOWN when not given */
    bool handed_out;     /* given to another worker: not visited here */
} dent;

/* An open folder some of whose entries were handed out: the last holder
 * (its lister or a handout) closes it. */
typedef struct dirh {
    int fd;
    atomic_size_t refs;
} dirh;

/* A folder a worker of a parallel walk is listing: what a handout needs. */
typedef struct level {
    dent *names;
    size_t n;
    size_t next;      /* entries [next, n) are not visited yet */
    size_t dirs_left; /* of them, directories (d_type, not VCS) not handed out */
    int fd;           /* -1 below KEEP_FD_DEPTH */
    dirh *h;          /* once something was handed out */
    size_t depth, pathlen, nanc, igdepth;
} level;

/* A handed-out entry: visit name in parent (at path, depth) with these
 * ancestors and ignore rules. */
typedef struct walk_item {
    struct walk_item *next;
    dirh *parent;
    agti_ignore_snap *snap;
    dev_ino *anc;
    size_t nanc;
    char *path; /* the parent's w->path */
    size_t pathlen;
    char *name;
    size_t namelen;
    unsigned char dtype;
    size_t depth;
} walk_item;

typedef struct walk_pool walk_pool;

typedef struct walker {
    const agti_walk_opts *o;
    agti_walk_cb cb;
    void *payload;
    agti_walk_result *res;
    agti_ignore *ig;
    agti_buf path; /* root + "/" + relpath */
    size_t rootlen;
    size_t igrootlen; /* path.ptr[0..igrootlen) is the ignore context's root */
    dev_ino *anc;
    size_t nanc, capanc;
    struct timespec start;
    size_t since_clock;
    char *dents;       /* getdents64 buffer */
    int anchor_fd;     /* the open folder at depth KEEP_FD_DEPTH */
    size_t anchor_len; /* path.len at it */
    bool stop;
    int rc;
    bool force_unknown; /* agti_walk_force_unknown_dtype of the calling thread */
    /* Parallel walks: */
    walk_pool *pool; /* NULL: a serial walk */
    unsigned id;     /* 0: the calling thread */
    level *levels;
    size_t nlevels, caplevels;
    size_t seen;          /* entries read by the calling thread */
    char **wkeys;         /* the folder of each warning, for walk order */
    agti_walk_result own; /* this worker's counts and warnings */
    char *errmsg;         /* rc's message, taken on this worker's thread */
} walker;

struct walk_pool {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    walk_item *head, *tail;
    size_t nitems;
    size_t running; /* workers taking part, the calling thread's included */
    size_t idle;    /* of them, waiting for a handout */
    bool done;
    atomic_bool want; /* a worker waits and nothing is queued */
    atomic_bool stop;
    bool started; /* helpers started */
    size_t max_workers, par_after;
    bool no_openat2; /* the calling thread's agti_fs_no_openat2 */
    bool hold_main;  /* agti_walk_hold_main */
    walker w[MAX_WORKERS];
    pthread_t th[MAX_WORKERS];
    size_t nth;
};

static bool is_vcs(const char *name)
{
    /* .git .hg .svn .bzr _darcs .jj */
    switch (name[0]) {
    case '.':
        return strcmp(name, ".git") == 0 || strcmp(name, ".hg") == 0 || strcmp(name, ".svn") == 0 ||
               strcmp(name, ".bzr") == 0 || strcmp(name, ".jj") == 0;
    case '_':
        return strcmp(name, "_darcs") == 0;
    default:
        return false;
    }
}

static void warn(walker *w, const char *fmt, const char *rel, int err)
{
    size_t n = w->res->nwarnings;
    char **nv = realloc(w->res->warnings, (n + 1) * sizeof *nv);
    if (nv == NULL)
        return;
    w->res->warnings = nv;
    char *key = NULL;
    if (w->pool != NULL) {
        char **nk = realloc(w->wkeys, (n + 1) * sizeof *nk);
        if (nk == NULL)
            return;
        w->wkeys = nk;
        if ((key = agti_strdup(rel)) == NULL)
            return;
    }
    char *m = agti_aprintf(fmt, rel[0] ? rel : ".", strerror(err));
    if (m == NULL) {
        free(key);
        return;
    }
    w->res->warnings[n] = m;
    if (w->pool != NULL)
        w->wkeys[n] = key;
    w->res->nwarnings = n + 1;
}

static void pool_stop(walk_pool *p)
{
    atomic_store(&p->stop, true);
    pthread_mutex_lock(&p->mu);
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

/* Stops the walk with rc (the first error wins); the message set on this
 * thread goes with it. */
static void halt(walker *w, int rc)
{
    if (w->rc == AGT_OK) {
        w->rc = rc;
        if (w->pool != NULL)
            w->errmsg = agti_strdup(agt_error_message());
    }
    w->stop = true;
    if (w->pool != NULL)
        pool_stop(w->pool);
}

static bool stopped(walker *w)
{
    if (!w->stop && w->pool != NULL && atomic_load_explicit(&w->pool->stop, memory_order_relaxed))
        w->stop = true;
    return w->stop;
}

static bool out_of_time(walker *w)
{
    if (w->o->time_budget_ms <= 0)
        return false;
    if (++w->since_clock < 64)
        return false;
    w->since_clock = 0;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    int64_t ms = (int64_t)(now.tv_sec - w->start.tv_sec) * 1000 +
                 (int64_t)(now.tv_nsec - w->start.tv_nsec) / 1000000;
    if (ms < w->o->time_budget_ms)
        return false;
    w->res->timed_out = true;
    w->stop = true;
    if (w->pool != NULL)
        pool_stop(w->pool);
    return true;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(((const dent *)a)->name, ((const dent *)b)->name);
}

static const char *cur_rel(const walker *w)
{
    return w->path.ptr + (w->path.len > w->rootlen ? w->rootlen + 1 : w->path.len);
}

/* Reads the names of the open directory fd (at w->path) into *arena, sorted
 * in a serial walk; NULL with *n = 0 when it cannot be read (a warning is
 * recorded). */
static dent *read_names(walker *w, int fd, agti_buf *arena, size_t *n, unsigned *ign_present)
{
    *n = 0;
    *ign_present = 0;
    size_t cap = 0;
    dent *names = NULL;
    for (;;) {
        ssize_t got = getdents64(fd, w->dents, DENTS_BUF);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            warn(w, "error while reading directory '%s': %s", cur_rel(w), errno);
            break;
        }
        if (got == 0)
            break;
        for (ssize_t off = 0; off < got;) {
            struct dirent64 *de = (struct dirent64 *)(void *)(w->dents + off);
            off += de->d_reclen;
            const char *nm = de->d_name;
            if (nm[0] == '.') {
                if (nm[1] == '\0' || (nm[1] == '.' && nm[2] == '\0'))
                    continue;
                if (strcmp(nm, ".gitignore") == 0)
                    *ign_present |= AGTI_IGN_HAS_GITIGNORE;
                else if (strcmp(nm, ".ignore") == 0)
                    *ign_present |= AGTI_IGN_HAS_IGNORE;
                else if (strcmp(nm, ".rgignore") == 0)
                    *ign_present |= AGTI_IGN_HAS_RGIGNORE;
            }
            if (*n == cap) {
                size_t nc = cap ? cap * 2 : 32;
                dent *nn = realloc(names, nc * sizeof *nn);
                if (nn == NULL) {
                    free(names);
                    halt(w, agti_oom());
                    *n = 0;
                    return NULL;
                }
                names = nn;
                cap = nc;
            }
            size_t len = strlen(nm);
            names[*n].off = arena->len;
            names[*n].len = len;
            names[*n].dtype = w->force_unknown ? DT_UNKNOWN : de->d_type;
            names[*n].handed_out = false;
            agti_buf_put(arena, nm, len + 1);
            (*n)++;
        }
    }
    if (arena->oom) {
        free(names);
        halt(w, agti_oom());
        *n = 0;
        return NULL;
    }
    for (size_t i = 0; i < *n; i++)
        names[i].name = arena->ptr + names[i].off;
    /* A parallel walk reports in no fixed order: nothing to sort for. */
    if (*n > 1 && w->pool == NULL)
        qsort(names, *n, sizeof *names, cmp_names);
    return names;
}

static void report(walker *w, const agti_walk_entry *e)
{
    if (w->o->max_entries > 0 && w->res->entries >= w->o->max_entries) {
        w->res->truncated = true;
        w->stop = true;
        return;
    }
    w->res->entries++;
    if (w->cb != NULL && w->cb(e, w->payload) != 0)
        halt(w, agti_error(AGT_ECANCELLED, "walk cancelled by the callback at '%s'", e->relpath));
}

static void walk_dir(walker *w, int fd, size_t depth);

static int stat_at(const walker *w, int pfd, const char *name, struct stat *st, int flags)
{
    (void)w;
    return fstatat(pfd, name, st, flags);
}

/* In a folder deeper than KEEP_FD_DEPTH: the path below the anchor. */
static int open_deep(walker *w, int flags)
{
    const char *rel = w->path.ptr + w->anchor_len;
    if (*rel == '/')
        rel++;
    return agti_fs_open_beneath(w->anchor_fd, rel, flags);
}

/* Sets *mode to the entry's S_IFMT type and fills st when it was stat'ed.
 * Returns 1 when st holds an lstat of the entry, 0 when only *mode is
 * known (from d_type), -1 when the entry vanished. */
static int entry_type(walker *w, int pfd, const dent *d, struct stat *st, mode_t *mode)
{
    mode_t m = 0;
    switch (d->dtype) {
    case DT_REG:
        m = S_IFREG;
        break;
    case DT_DIR:
        m = S_IFDIR;
        break;
    case DT_LNK:
        m = S_IFLNK;
        break;
    case DT_FIFO:
        m = S_IFIFO;
        break;
    case DT_SOCK:
        m = S_IFSOCK;
        break;
    case DT_CHR:
        m = S_IFCHR;
        break;
    case DT_BLK:
        m = S_IFBLK;
        break;
    default:
        break;
    }
    if (m != 0 && (w->o->skip_stat || S_ISDIR(m) || S_ISLNK(m))) {
        *mode = m;
        return 0;
    }
    if (stat_at(w, pfd, d->name, st, AT_SYMLINK_NOFOLLOW) != 0)
        return -1;
    *mode = st->st_mode & S_IFMT;
    return 1;
}

/* Opens the directory entry d (at w->path) and descends into it unless it
 * is an ancestor (a bind mount loop). */
static void descend(walker *w, int pfd, const dent *d, size_t depth)
{
    const char *rel = cur_rel(w);
    int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY;
    int fd = pfd >= 0 ? openat(pfd, d->name, flags) : open_deep(w, O_RDONLY | O_DIRECTORY);
    if (fd < 0) {
        /* Vanished or replaced by a symlink since it was read: nothing there. */
        if (errno != ENOENT && errno != ELOOP && errno != ENOTDIR)
            warn(w, "cannot read directory '%s': %s", rel, errno);
        return;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        warn(w, "cannot read directory '%s': %s", rel, errno);
        close(fd);
        return;
    }
    for (size_t i = 0; i < w->nanc; i++)
        if (w->anc[i].dev == st.st_dev && w->anc[i].ino == st.st_ino) {
            warn(w, "directory loop at '%s' (%s); not descending", rel, ELOOP);
            close(fd);
            return;
        }
    if (agti_grow(&w->anc, &w->capanc, w->nanc, sizeof *w->anc, 32) != AGT_OK) {
        halt(w, AGT_ENOMEM);
        close(fd);
        return;
    }
    w->anc[w->nanc++] = (dev_ino){st.st_dev, st.st_ino};
    walk_dir(w, fd, depth + 1);
    w->nanc--;
}

static void visit(walker *w, int pfd, const dent *d, size_t depth)
{
    size_t saved = w->path.len;
    int owned = -1;
    if (pfd < 0) {
        /* Deep: this folder again, from the anchor. */
        pfd = owned = open_deep(w, O_PATH | O_DIRECTORY);
        if (pfd < 0)
            return;
    }
    agti_buf_putc(&w->path, '/');
    agti_buf_put(&w->path, d->name, d->len);
    if (w->path.oom) {
        halt(w, agti_oom());
        if (owned >= 0)
            close(owned);
        return;
    }
    const char *rel = w->path.ptr + w->rootlen + 1;
    struct stat st;
    mode_t mode;
    int how = entry_type(w, pfd, d, &st, &mode);
    if (how < 0) {
        /* Vanished between reading the directory and now: nothing to report. */
        agti_buf_truncate(&w->path, saved);
        if (owned >= 0)
            close(owned);
        return;
    }
    bool is_dir = S_ISDIR(mode);
    if (w->ig != NULL && agti_ignore_check_entry(w->ig, w->path.ptr + w->igrootlen + 1, is_dir)) {
        agti_buf_truncate(&w->path, saved);
        if (owned >= 0)
            close(owned);
        return;
    }
    agti_walk_entry e = {
        rel, w->path.len - w->rootlen - 1, AGTI_FS_OTHER, false, 0, 0, pfd, d->name, w->id};
    if (S_ISLNK(mode)) {
        struct stat tst;
        e.is_symlink = true;
        e.type = AGTI_FS_SYMLINK;
        if (stat_at(w, pfd, d->name, &tst, 0) == 0 && S_ISREG(tst.st_mode)) {
            e.type = AGTI_FS_FILE;
            st = tst;
            how = 1;
        } else if (how == 0 && !w->o->skip_stat &&
                   stat_at(w, pfd, d->name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
            how = 1;
        }
    } else if (S_ISREG(mode)) {
        e.type = AGTI_FS_FILE;
    } else if (is_dir) {
        e.type = AGTI_FS_DIR;
    }
    if (how == 0 && is_dir && !w->o->skip_stat && w->o->include_dirs &&
        stat_at(w, pfd, d->name, &st, AT_SYMLINK_NOFOLLOW) == 0)
        how = 1;
    if (how == 1) {
        e.size = (uint64_t)st.st_size;
        e.mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    }
    if (e.type == AGTI_FS_FILE && w->o->skip_sensitive &&
        agti_sensitive_match(w->o->sensitive, rel, NULL)) {
        w->res->sensitive_skipped++;
    } else if (!is_dir || w->o->include_dirs) {
        report(w, &e);
    }
    if (owned >= 0) {
        close(owned);
        pfd = -1;
    }
    if (is_dir && !stopped(w) && (w->o->max_depth == 0 || depth < w->o->max_depth))
        descend(w, pfd, d, depth);
    agti_buf_truncate(&w->path, saved);
}

static void start_helpers(walker *w0);

/* Test hook (agti_walk_hold_main): until every helper waits for work. */
static void await_helpers(walk_pool *p)
{
    pthread_mutex_lock(&p->mu);
    while (p->idle + 1 < p->running && !atomic_load(&p->stop)) {
        pthread_mutex_unlock(&p->mu);
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
        pthread_mutex_lock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
}

static void dirh_release(dirh *h)
{
    if (h != NULL && atomic_fetch_sub_explicit(&h->refs, 1, memory_order_acq_rel) == 1) {
        close(h->fd);
        free(h);
    }
}

/* Records the folder being listed (parallel walks); SIZE_MAX on OOM. */
static size_t level_push(walker *w, dent *names, size_t n, int fd, size_t depth)
{
    if (agti_grow(&w->levels, &w->caplevels, w->nlevels, sizeof *w->levels, 16) != AGT_OK) {
        halt(w, AGT_ENOMEM);
        return SIZE_MAX;
    }
    level *lv = &w->levels[w->nlevels];
    memset(lv, 0, sizeof *lv);
    lv->names = names;
    lv->n = n;
    lv->fd = depth < KEEP_FD_DEPTH ? fd : -1;
    lv->depth = depth;
    lv->pathlen = w->path.len;
    lv->nanc = w->nanc;
    lv->igdepth = agti_ignore_depth(w->ig);
    for (size_t i = 0; i < n; i++)
        if (names[i].dtype == DT_DIR && !is_vcs(names[i].name))
            lv->dirs_left++;
    return w->nlevels++;
}

static void item_free(walk_item *it)
{
    if (it == NULL)
        return;
    dirh_release(it->parent);
    agti_ignore_snap_free(it->snap);
    free(it);
}

/* One handout: entry d of level lv, in one block with its copies. */
static walk_item *item_new(walker *w, const level *lv, const dent *d)
{
    size_t ancb = lv->nanc * sizeof(dev_ino);
    walk_item *it = malloc(sizeof *it + ancb + lv->pathlen + 1 + d->len + 1);
    if (it == NULL)
        return NULL;
    memset(it, 0, sizeof *it);
    if (w->ig != NULL && agti_ignore_snapshot(w->ig, lv->igdepth, &it->snap) != AGT_OK) {
        free(it);
        return NULL;
    }
    char *p = (char *)(it + 1);
    it->anc = (dev_ino *)(void *)p;
    memcpy(it->anc, w->anc, ancb);
    it->nanc = lv->nanc;
    it->path = p + ancb;
    memcpy(it->path, w->path.ptr, lv->pathlen);
    it->path[lv->pathlen] = '\0';
    it->pathlen = lv->pathlen;
    it->name = it->path + lv->pathlen + 1;
    memcpy(it->name, d->name, d->len + 1);
    it->namelen = d->len;
    it->dtype = d->dtype;
    it->depth = lv->depth;
    it->parent = lv->h;
    atomic_fetch_add_explicit(&lv->h->refs, 1, memory_order_relaxed);
    return it;
}

/* A worker waits: hand it half of the directories not yet visited in the
 * shallowest folder being listed that has any. */
static void hand_out(walker *w)
{
    walk_pool *p = w->pool;
    size_t k = 0;
    while (k < w->nlevels && (w->levels[k].dirs_left == 0 || w->levels[k].fd < 0))
        k++;
    if (k == w->nlevels)
        return; /* nothing to give: another worker may have some */
    level *lv = &w->levels[k];
    if (lv->h == NULL) {
        if ((lv->h = malloc(sizeof *lv->h)) == NULL)
            return;
        lv->h->fd = lv->fd;
        atomic_init(&lv->h->refs, 1);
    }
    size_t give = (lv->dirs_left + 1) / 2, given = 0;
    walk_item *first = NULL, *last = NULL;
    /* from the end: the giver goes on with the first ones */
    for (size_t j = lv->n; j-- > lv->next && given < give;) {
        dent *d = &lv->names[j];
        if (d->dtype != DT_DIR || d->handed_out || is_vcs(d->name))
            continue;
        walk_item *it = item_new(w, lv, d);
        if (it == NULL)
            break; /* not an error: the giver visits the rest itself */
        d->handed_out = true;
        it->next = first;
        first = it;
        if (last == NULL)
            last = it;
        given++;
    }
    lv->dirs_left -= given;
    if (first == NULL)
        return;
    pthread_mutex_lock(&p->mu);
    if (p->tail != NULL)
        p->tail->next = first;
    else
        p->head = first;
    p->tail = last;
    p->nitems += given;
    atomic_store_explicit(&p->want, p->idle > p->nitems, memory_order_relaxed);
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

/* Visits the entries of the directory open as fd (at w->path); closes fd. */
static void walk_dir(walker *w, int fd, size_t depth)
{
    size_t n;
    agti_buf arena = AGTI_BUF_INIT;
    unsigned ign_present;
    dent *names = read_names(w, fd, &arena, &n, &ign_present);
    /* The folder's ignore files are read in the folder just read (its
     * descriptor), never looked up by name again. */
    bool pushed = false;
    if (w->ig != NULL && names != NULL && !stopped(w)) {
        const char *rel = w->path.len > w->igrootlen ? w->path.ptr + w->igrootlen + 1 : "";
        int rc = agti_ignore_push_at(w->ig, rel, fd, ign_present);
        if (rc != AGT_OK)
            halt(w, rc);
        else
            pushed = true;
    }
    if (depth == KEEP_FD_DEPTH) {
        w->anchor_fd = fd;
        w->anchor_len = w->path.len;
    }
    if (depth > KEEP_FD_DEPTH) {
        close(fd);
        fd = -1;
    }
    walk_pool *p = w->pool;
    size_t li = SIZE_MAX;
    if (p != NULL && n > 0 && !stopped(w)) {
        li = level_push(w, names, n, fd, depth);
        if (w->id == 0 && !p->started && (w->seen += n) >= p->par_after) {
            start_helpers(w);
            if (p->hold_main)
                await_helpers(p);
        }
    }
    for (size_t i = 0; i < n && !stopped(w); i++) {
        if (li != SIZE_MAX) {
            level *lv = &w->levels[li];
            lv->next = i + 1;
            if (names[i].handed_out)
                continue;
            if (names[i].dtype == DT_DIR && !is_vcs(names[i].name))
                lv->dirs_left--;
            if (atomic_load_explicit(&p->want, memory_order_relaxed))
                hand_out(w);
        }
        if (!out_of_time(w) && !is_vcs(names[i].name))
            visit(w, fd, &names[i], depth);
    }
    if (li != SIZE_MAX) {
        dirh *h = w->levels[li].h;
        w->nlevels = li;
        if (h != NULL) {
            dirh_release(h);
            fd = -1;
        }
    }
    free(names);
    agti_buf_free(&arena);
    if (fd >= 0)
        close(fd);
    if (pushed)
        agti_ignore_pop(w->ig);
}

/* ---- parallel walks ------------------------------------------------------ */

/* The next handout, or NULL when the walk is over (every worker waits and
 * nothing is queued) or stopped. */
static walk_item *pool_take(walk_pool *p, unsigned id)
{
    pthread_mutex_lock(&p->mu);
    walk_item *it = NULL;
    for (;;) {
        if (atomic_load(&p->stop) || p->done)
            break;
        /* agti_walk_hold_main: the handouts go to the helpers only */
        if (p->head != NULL && !(p->hold_main && id == 0 && p->nth > 0)) {
            it = p->head;
            p->head = it->next;
            if (p->head == NULL)
                p->tail = NULL;
            p->nitems--;
            break;
        }
        if (p->head == NULL && p->idle + 1 == p->running) {
            p->done = true;
            pthread_cond_broadcast(&p->cv);
            break;
        }
        p->idle++;
        atomic_store_explicit(&p->want, true, memory_order_relaxed);
        pthread_cond_wait(&p->cv, &p->mu);
        p->idle--;
    }
    atomic_store_explicit(&p->want, p->idle > p->nitems, memory_order_relaxed);
    pthread_mutex_unlock(&p->mu);
    return it;
}

/* Visits a handed-out entry as its giver would have. */
static void run_item(walker *w, walk_item *it)
{
    agti_buf_truncate(&w->path, 0);
    agti_buf_put(&w->path, it->path, it->pathlen);
    if (w->path.oom) {
        halt(w, agti_oom());
        return;
    }
    if (w->ig != NULL) {
        int rc = agti_ignore_restore(w->ig, it->snap);
        if (rc != AGT_OK) {
            halt(w, rc);
            return;
        }
    }
    if (it->nanc > w->capanc) {
        dev_ino *na = realloc(w->anc, it->nanc * sizeof *na);
        if (na == NULL) {
            halt(w, agti_oom());
            return;
        }
        w->anc = na;
        w->capanc = it->nanc;
    }
    memcpy(w->anc, it->anc, it->nanc * sizeof *w->anc);
    w->nanc = it->nanc;
    dent d = {it->name, 0, it->namelen, it->dtype, false};
    if (!out_of_time(w))
        visit(w, it->parent->fd, &d, it->depth);
}

static void run_items(walker *w)
{
    walk_item *it;
    while ((it = pool_take(w->pool, w->id)) != NULL) {
        if (!stopped(w))
            run_item(w, it);
        item_free(it);
    }
}

static void *helper_main(void *arg)
{
    walker *w = arg;
    agti_fs_no_openat2 = w->pool->no_openat2;
    run_items(w);
    return NULL;
}

static void worker_clear(walker *w)
{
    agti_ignore_free(w->ig);
    agti_buf_free(&w->path);
    free(w->anc);
    free(w->dents);
    free(w->levels);
    for (size_t i = 0; i < w->own.nwarnings && w->wkeys != NULL; i++)
        free(w->wkeys[i]);
    free(w->wkeys);
    agti_walk_result_clear(&w->own);
    free(w->errmsg);
}

/* The calling thread's walk has proved big: start the helpers. A helper
 * that cannot be set up is simply not started. */
static void start_helpers(walker *w0)
{
    walk_pool *p = w0->pool;
    p->started = true;
    for (size_t i = 1; i < p->max_workers; i++) {
        walker *w = &p->w[i];
        memset(w, 0, sizeof *w);
        w->o = w0->o;
        w->cb = w0->cb;
        w->payload = w0->payload;
        w->res = &w->own;
        w->rootlen = w0->rootlen;
        w->igrootlen = w0->igrootlen;
        w->start = w0->start;
        w->anchor_fd = -1;
        w->force_unknown = w0->force_unknown;
        w->pool = p;
        w->id = (unsigned)i;
        w->anc = malloc(32 * sizeof *w->anc);
        w->capanc = 32;
        w->dents = malloc(DENTS_BUF);
        bool ok = w->anc != NULL && w->dents != NULL;
        if (ok && w0->ig != NULL)
            ok = agti_ignore_fork(w0->ig, &w->ig) == AGT_OK;
        pthread_mutex_lock(&p->mu);
        p->running++;
        pthread_mutex_unlock(&p->mu);
        if (!ok || pthread_create(&p->th[p->nth], NULL, helper_main, w) != 0) {
            pthread_mutex_lock(&p->mu);
            p->running--;
            pthread_mutex_unlock(&p->mu);
            worker_clear(w);
            break;
        }
        p->nth++;
    }
}

/* Component-wise bytewise order of root-relative paths: the walk's order. */
static int walk_order(const char *a, const char *b)
{
    for (;; a++, b++) {
        int x = *a == '\0' ? 0 : *a == '/' ? 1 : (unsigned char)*a + 1;
        int y = *b == '\0' ? 0 : *b == '/' ? 1 : (unsigned char)*b + 1;
        if (x != y)
            return x - y;
        if (x == 0)
            return 0;
    }
}

typedef struct wref {
    const char *key;
    char *msg;
    size_t worker, idx;
} wref;

static int cmp_wref(const void *a, const void *b)
{
    const wref *x = a, *y = b;
    int c = walk_order(x->key, y->key);
    if (c != 0)
        return c;
    if (x->worker != y->worker)
        return x->worker < y->worker ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Sums the workers' results into res, the warnings in walk order (as a
 * serial walk gives them); returns the first worker's error, raised again
 * on this thread. */
static int pool_finish(walk_pool *p, size_t nworkers, agti_walk_result *res)
{
    size_t nw = 0;
    for (size_t i = 0; i < nworkers; i++) {
        const agti_walk_result *r = &p->w[i].own;
        res->entries += r->entries;
        res->sensitive_skipped += r->sensitive_skipped;
        res->truncated = res->truncated || r->truncated;
        res->timed_out = res->timed_out || r->timed_out;
        nw += r->nwarnings;
    }
    wref *all = nw > 0 ? malloc(nw * sizeof *all) : NULL;
    res->warnings = nw > 0 ? malloc(nw * sizeof *res->warnings) : NULL;
    if (nw > 0 && (all == NULL || res->warnings == NULL)) {
        free(all);
        free(res->warnings);
        all = NULL;
        res->warnings = NULL;
        nw = 0; /* the workers' copies are freed with them */
    }
    size_t k = 0;
    for (size_t i = 0; i < nworkers && nw > 0; i++) {
        walker *w = &p->w[i];
        for (size_t j = 0; j < w->own.nwarnings; j++)
            all[k++] = (wref){w->wkeys[j], w->own.warnings[j], i, j};
    }
    if (nw > 1)
        qsort(all, nw, sizeof *all, cmp_wref);
    for (size_t i = 0; i < nw; i++)
        res->warnings[i] = all[i].msg;
    res->nwarnings = nw;
    for (size_t i = 0; i < nw; i++)
        free((char *)all[i].key);
    for (size_t i = 0; i < nworkers && nw > 0; i++)
        p->w[i].own.nwarnings = 0; /* moved: the messages now belong to res */
    free(all);
    for (size_t i = 0; i < nworkers; i++)
        if (p->w[i].rc != AGT_OK) {
            const char *m = p->w[i].errmsg;
            return agti_error(p->w[i].rc, "%s", m != NULL ? m : agt_status_string(p->w[i].rc));
        }
    return AGT_OK;
}

unsigned agti_walk_threads(unsigned most)
{
    if (agti_walk_force_threads > 0)
        return agti_walk_force_threads;
    unsigned n = agti_walk_cpus();
    return n < most ? n : most;
}

unsigned agti_walk_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return 1;
    int n = CPU_COUNT(&set);
    return n < 1 ? 1 : (unsigned)n;
}

/* The ignore context: rooted at the walk root, or at opts->ignore_root when
 * that is an ancestor of it, with the ignore files of the folders from there
 * down to the walk root's parent pushed (the walk pushes the root's own). */
static int open_ignore(walker *w, int rootfd)
{
    const char *ir = w->o->ignore_root;
    size_t irlen = ir != NULL ? strlen(ir) : 0;
    while (irlen > 1 && ir[irlen - 1] == '/')
        irlen--;
    if (ir == NULL || irlen <= 1 || irlen >= w->rootlen || memcmp(w->path.ptr, ir, irlen) != 0 ||
        w->path.ptr[irlen] != '/')
        return agti_ignore_new_at(&w->ig, rootfd, w->path.ptr, w->o->home, w->o->ignore_flags);
    /* The ignore root is the host's folder (the workspace root), opened by
     * its name as every call opens it; the folders from there down to the
     * walk root are looked up below it without following a link. */
    char *top = agti_strndup(ir, irlen);
    if (top == NULL)
        return agti_oom();
    int rc = agti_ignore_new(&w->ig, top, w->o->home, w->o->ignore_flags);
    free(top);
    if (rc != AGT_OK)
        return rc;
    w->igrootlen = irlen;
    rc = agti_ignore_push(w->ig, "");
    /* Each folder between: the part of the path after the ignore root up to
     * (not including) each '/' past it. */
    char *rel = agti_strndup(w->path.ptr + irlen + 1, w->rootlen - irlen - 1);
    if (rel == NULL)
        rc = agti_oom();
    for (char *p = rel; rc == AGT_OK && (p = strchr(p, '/')) != NULL; p++) {
        *p = '\0';
        rc = agti_ignore_push(w->ig, rel);
        *p = '/';
    }
    free(rel);
    return rc;
}

int agti_walk(const char *root, const agti_walk_opts *opts, agti_walk_cb cb, void *payload,
              agti_walk_result *res)
{
    if (res != NULL)
        memset(res, 0, sizeof *res);
    if (root == NULL || root[0] == '\0')
        return agti_error(AGT_EINVAL, "walk: the root directory must be given");
    int fd = open(root, O_PATH | O_CLOEXEC);
    if (fd < 0)
        return agti_error(AGT_ENOTFOUND, "walk: cannot open %s: %s", root, strerror(errno));
    int rc = agti_walk_at(fd, root, opts, cb, payload, res);
    close(fd);
    return rc;
}

int agti_walk_at(int rootfd, const char *root, const agti_walk_opts *opts, agti_walk_cb cb,
                 void *payload, agti_walk_result *res)
{
    agti_walk_opts defaults;
    agti_walk_result local;
    memset(&defaults, 0, sizeof defaults);
    if (res == NULL)
        res = &local;
    memset(res, 0, sizeof *res);
    if (root == NULL || root[0] == '\0' || rootfd < 0)
        return agti_error(AGT_EINVAL, "walk: the root directory must be given");
    struct stat st;
    if (fstat(rootfd, &st) != 0)
        return agti_error(AGT_ENOTFOUND, "walk: cannot open %s: %s", root, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return agti_error(AGT_EINVAL, "walk: %s is not a directory", root);
    const agti_walk_opts *o = opts ? opts : &defaults;
    /* A cap on the entries reported means the first ones in walk order:
     * only a serial walk knows which those are. */
    walk_pool *pool = NULL;
    if (o->threads > 1 && o->max_entries == 0) {
        pool = calloc(1, sizeof *pool);
        if (pool == NULL)
            return agti_oom();
        pthread_mutex_init(&pool->mu, NULL);
        pthread_cond_init(&pool->cv, NULL);
        pool->running = 1;
        pool->max_workers = o->threads < MAX_WORKERS ? o->threads : MAX_WORKERS;
        pool->par_after = agti_walk_force_parallel_after > 0 ? agti_walk_force_parallel_after
                          : o->parallel_after > 0            ? o->parallel_after
                                                             : PAR_AFTER_DEFAULT;
        pool->no_openat2 = agti_fs_no_openat2;
        pool->hold_main = agti_walk_hold_main;
    }
    walker local_w;
    walker *wp = pool != NULL ? &pool->w[0] : &local_w;
    walker *w = wp;
    memset(w, 0, sizeof *w);
    w->anchor_fd = -1;
    w->o = o;
    w->cb = cb;
    w->payload = payload;
    w->pool = pool;
    w->res = pool != NULL ? &w->own : res;
    w->force_unknown = agti_walk_force_unknown_dtype;
    clock_gettime(CLOCK_MONOTONIC, &w->start);
    agti_buf_puts(&w->path, root);
    while (w->path.len > 1 && w->path.ptr[w->path.len - 1] == '/')
        agti_buf_truncate(&w->path, w->path.len - 1);
    w->rootlen = w->path.len;
    w->igrootlen = w->path.len;
    int rc = AGT_OK;
    if (w->path.oom)
        rc = agti_oom();
    if (rc == AGT_OK && !w->o->include_ignored)
        rc = open_ignore(w, rootfd);
    if (rc == AGT_OK) {
        w->anc = malloc(32 * sizeof *w->anc);
        w->dents = malloc(DENTS_BUF);
        if (w->anc == NULL || w->dents == NULL) {
            rc = agti_oom();
        } else {
            w->capanc = 32;
            w->anc[w->nanc++] = (dev_ino){st.st_dev, st.st_ino};
            int fd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY);
            if (fd < 0) {
                warn(w, "cannot read directory '%s': %s", "", errno);
            } else {
                walk_dir(w, fd, 1);
            }
            rc = w->rc;
        }
    }
    if (pool != NULL) {
        if (pool->started) {
            run_items(w);
            for (size_t i = 0; i < pool->nth; i++)
                pthread_join(pool->th[i], NULL);
        }
        size_t nworkers = 1 + pool->nth;
        while (pool->head != NULL) { /* left when the walk stopped */
            walk_item *it = pool->head;
            pool->head = it->next;
            item_free(it);
        }
        int prc = pool_finish(pool, nworkers, res);
        if (rc == AGT_OK)
            rc = prc;
        for (size_t i = 0; i < nworkers; i++)
            worker_clear(&pool->w[i]);
        pthread_cond_destroy(&pool->cv);
        pthread_mutex_destroy(&pool->mu);
        free(pool);
    } else {
        agti_ignore_free(w->ig);
        agti_buf_free(&w->path);
        free(w->anc);
        free(w->dents);
    }
    if (res == &local)
        agti_walk_result_clear(&local);
    return rc;
}

void agti_walk_result_clear(agti_walk_result *res)
{
    if (res == NULL)
        return;
    for (size_t i = 0; i < res->nwarnings; i++)
        free(res->warnings[i]);
    free(res->warnings);
    memset(res, 0, sizeof *res);
}
