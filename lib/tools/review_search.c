/*
 * code_search (review set): literal or PCRE2 search over the files of the
 * reviewed tree, limited by git pathspecs, grouped by file as TOOLS.md
 * describes. The candidates are the reviewed tree's files (workspace mode:
 * tracked + untracked non-ignored files of the working tree; range/commit
 * mode: the blobs of the target tree), read through the change set (its
 * readers, lib/git/reader.c, read a blob from the working tree when the
 * index shows the file there holds the same bytes), and each is searched
 * with the search engine's buffer entry point.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"
#include "dispatch/dispatch_internal.h"
#include "fs/fs.h"
#include "git/git_internal.h"
#include "search/search.h"
#include "session/fs_settings.h"
#include "session/review_internal.h"
#include "review_guard.h"
#include "tools_internal.h"

#define SEARCH_MAX_PER_FILE 100
/* Output bytes after which no further file is added (the per-file cap alone
 * does not bound a search that matches in thousands of files). */
#define SEARCH_MAX_BYTES ((size_t)512 << 10)

static int fail(agt_call *call, int code, const char *msg, const char *detail)
{
    agti_buf b = AGTI_BUF_INIT;
    agti_buf_puts(&b, msg);
    if (detail != NULL)
        agti_buf_printf(&b, ": %s", detail);
    if (b.oom) {
        agti_buf_free(&b);
        return agti_oom();
    }
    int rc = agt_call_set_error(call, agti_buf_cstr(&b));
    agti_buf_free(&b);
    return rc == AGT_OK ? code : rc;
}

static void trim(const char **s, size_t *len)
{
    while (*len > 0 && (**s == ' ' || **s == '\t' || **s == '\r' || **s == '\n'))
        (*s)++, (*len)--;
    while (*len > 0 && ((*s)[*len - 1] == ' ' || (*s)[*len - 1] == '\t' || (*s)[*len - 1] == '\r' ||
                        (*s)[*len - 1] == '\n'))
        (*len)--;
}

/* Builds the searcher from the call's arguments; an error result on bad ones. */
static int make_searcher(agt_call *call, agti_searcher **out, agti_search_opts *opts)
{
    json_t *args = agti_call_args_json(call);
    const char *text = json_string_value(json_object_get(args, "search_text"));
    const char *t = text ? text : "";
    size_t tlen = strlen(t);
    trim(&t, &tlen);
    if (tlen == 0)
        return fail(call, AGT_EINVAL,
                    "Error: search_text is blank. Give the text (or, with use_perl_regexp, the "
                    "regular expression) to look for",
                    NULL);
    json_t *pats = json_object_get(args, "file_patterns");
    size_t np = json_array_size(pats);
    const char **specs = np ? calloc(np, sizeof *specs) : NULL;
    if (np && specs == NULL)
        return agti_oom();
    for (size_t i = 0; i < np; i++) {
        specs[i] = json_string_value(json_array_get(pats, i));
        if (specs[i] == NULL || specs[i][0] == '\0') {
            free(specs);
            return fail(call, AGT_EINVAL, "Error: file_patterns holds an empty pattern", NULL);
        }
    }
    agti_search_opts o;
    memset(&o, 0, sizeof o);
    o.pattern = text;
    o.literal = !json_is_true(json_object_get(args, "use_perl_regexp"));
    o.case_insensitive = !json_is_true(json_object_get(args, "case_sensitive"));
    o.mode = AGTI_SEARCH_CONTENT;
    o.max_matches_per_file = SEARCH_MAX_PER_FILE;
    o.pathspecs = specs;
    o.npathspecs = np;
    int rc = agti_searcher_new(out, &o);
    free(specs);
    /* the search threads only match: the main thread applies the pathspecs */
    o.pathspecs = NULL;
    o.npathspecs = 0;
    *opts = o;
    if (rc == AGT_ENOMEM)
        return rc;
    if (rc != AGT_OK)
        return fail(call, rc, "Error: cannot search", agt_error_message());
    return AGT_OK;
}

static void put_file(agti_buf *b, const agti_search_file *f, size_t *shown_files)
{
    size_t shown = 0;
    for (size_t i = 0; i < f->nlines; i++)
        shown += f->lines[i].is_match;
    agti_buf_printf(b, "%sFile: %s\nMatch lines: %zu", (*shown_files)++ ? "\n\n" : "", f->path,
                    shown);
    for (size_t i = 0; i < f->nlines; i++) {
        const agti_search_line *l = &f->lines[i];
        if (!l->is_match)
            continue;
        agti_buf_printf(b, "\n%llu|", (unsigned long long)l->line_no);
        agti_buf_put(b, l->text, l->len);
        if (l->cut)
            agti_buf_puts(b, " [... line cut]");
    }
}

typedef struct scan {
    agti_buf out;
    size_t files, truncated_files, sensitive, skipped_large, unreadable;
    bool capped; /* SEARCH_MAX_BYTES reached */
    size_t capped_at;
    const struct agti_sensitive *pol; /* the session's sensitive-file policy */
    agti_review_guard *guard;         /* renames, copies and hard links of sensitive files */
} scan;

/* One candidate file and, once searched, what it gave. */
typedef struct cand {
    const char *path;
    size_t file; /* index in the change set's file list */
    int state;   /* 0 not matched, 1 matched, 2 too large, 3 unreadable */
    bool key;    /* matched, and the bytes searched hold a private key */
    agti_search_file f;
    /* the early search: the stat data of the file as read, what the
     * working-tree shortcut compares (a struct stat is 144 bytes) */
    struct {
        uint64_t ino, dev, size;
        int64_t mtime_s, ctime_s;
        uint32_t mtime_ns, ctime_ns, uid, gid, mode;
    } st;
} cand;

static void stat_keep(cand *cd, const struct stat *st)
{
    cd->st.ino = st->st_ino;
    cd->st.dev = st->st_dev;
    cd->st.size = (uint64_t)st->st_size;
    cd->st.mtime_s = st->st_mtim.tv_sec;
    cd->st.mtime_ns = (uint32_t)st->st_mtim.tv_nsec;
    cd->st.ctime_s = st->st_ctim.tv_sec;
    cd->st.ctime_ns = (uint32_t)st->st_ctim.tv_nsec;
    cd->st.uid = st->st_uid;
    cd->st.gid = st->st_gid;
    cd->st.mode = st->st_mode;
}

static struct stat stat_of(const cand *cd)
{
    struct stat st;
    memset(&st, 0, sizeof st);
    st.st_ino = (ino_t)cd->st.ino;
    st.st_dev = (dev_t)cd->st.dev;
    st.st_size = (off_t)cd->st.size;
    st.st_mtim.tv_sec = (time_t)cd->st.mtime_s;
    st.st_mtim.tv_nsec = (long)cd->st.mtime_ns;
    st.st_ctim.tv_sec = (time_t)cd->st.ctime_s;
    st.st_ctim.tv_nsec = (long)cd->st.ctime_ns;
    st.st_uid = (uid_t)cd->st.uid;
    st.st_gid = (gid_t)cd->st.gid;
    st.st_mode = (mode_t)cd->st.mode;
    return st;
}

/* Files are searched by up to this many threads, each with its own
 * searcher and (for blobs) its own reader of the change set, since libgit2
 * handles are not shared between threads. */
#define SEARCH_MAX_THREADS AGTI_GIT_MAX_READERS

typedef struct pool {
    agt_changes *c; /* NULL: the early search (files read below workdir) */
    const char *workdir;
    int wfd;
    const agti_search_opts *o;
    cand *cands;
    size_t n;
    size_t next; /* guarded by mu */
    pthread_mutex_t mu;
    bool blobs;
    int err; /* first AGT_ENOMEM (or setup failure) */
} pool;

typedef struct worker_arg {
    pool *pl;
    unsigned reader;
} worker_arg;

static void set_err(pool *pl, int code)
{
    pthread_mutex_lock(&pl->mu);
    if (pl->err == AGT_OK)
        pl->err = code;
    pthread_mutex_unlock(&pl->mu);
}

static void search_one(pool *pl, agti_searcher *s, unsigned reader, cand *cd)
{
    char *owned = NULL;
    const char *data = NULL;
    size_t len = 0;
    agti_read rd;
    memset(&rd, 0, sizeof rd);
    if (pl->blobs) {
        int rc = agti_changes_read_nth(pl->c, reader, cd->file, AGTI_GIT_READ_MAX, &rd);
        if (rc != AGT_OK) {
            cd->state = rc == AGT_ELIMIT ? 2 : 3;
            if (rc == AGT_ENOMEM)
                set_err(pl, rc);
            return;
        }
        data = rd.data;
        len = rd.len;
    } else {
        size_t size = 0;
        struct stat st;
        int rc = pl->c != NULL ? agti_changes_read_workdir(pl->c, cd->path, AGTI_GIT_READ_MAX,
                                                           &owned, &len, &size)
                               : agti_workdir_read(pl->wfd, pl->workdir, cd->path,
                                                   AGTI_GIT_READ_MAX, &owned, &len, &size, &st);
        if (rc != AGT_OK) {
            cd->state = rc == AGT_ELIMIT ? 2 : 3;
            if (rc == AGT_ENOMEM)
                set_err(pl, rc);
            return;
        }
        if (pl->c == NULL)
            stat_keep(cd, &st);
        data = owned;
    }
    bool matched = false, binary = false;
    int rc = agti_searcher_search_buffer(s, cd->path, data, len, &cd->f, &matched, &binary);
    /* checked here, while the bytes are at hand (reading a file again for
     * it cost a third of a search that matched in many files) */
    cd->key = rc == AGT_OK && matched && agti_sensitive_content(data, len, NULL);
    free(owned);
    agti_read_release(&rd);
    if (rc == AGT_ENOMEM)
        set_err(pl, rc);
    cd->state = rc != AGT_OK ? 3 : matched ? 1 : 0;
}

static void *worker(void *arg)
{
    worker_arg *wa = arg;
    pool *pl = wa->pl;
    agti_searcher *s = NULL;
    if (agti_searcher_new(&s, pl->o) != AGT_OK) {
        set_err(pl, AGT_ERROR);
        return NULL;
    }
    for (;;) {
        pthread_mutex_lock(&pl->mu);
        size_t i = pl->err ? pl->n : pl->next++;
        pthread_mutex_unlock(&pl->mu);
        if (i >= pl->n)
            break;
        /* the early search leaves the files the call does not select */
        if (pl->c == NULL && pl->cands[i].state == 4)
            continue;
        search_one(pl, s, wa->reader, &pl->cands[i]);
    }
    agti_searcher_free(s);
    return NULL;
}

static unsigned thread_count(size_t n)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    size_t t = cpus < 1 ? 1 : (size_t)cpus;
    if (t > SEARCH_MAX_THREADS)
        t = SEARCH_MAX_THREADS;
    if (t > n / 16 + 1) /* a handful of files is not worth the threads */
        t = n / 16 + 1;
    return (unsigned)t;
}

static int run_pool(pool *pl)
{
    pthread_t th[SEARCH_MAX_THREADS];
    worker_arg args[SEARCH_MAX_THREADS];
    unsigned nt = thread_count(pl->n), started = 0;
    if (pl->blobs) {
        int rc = agti_changes_readers_prepare(pl->c, nt);
        if (rc != AGT_OK)
            return rc;
    }
    if (pthread_mutex_init(&pl->mu, NULL) != 0)
        return agti_error(AGT_ERROR, "code_search: cannot create a mutex");
    for (unsigned i = 0; i < nt; i++)
        args[i] = (worker_arg){pl, i};
    for (unsigned i = 1; i < nt; i++) {
        if (pthread_create(&th[started], NULL, worker, &args[i]) != 0)
            break;
        started++;
    }
    worker(&args[0]); /* the calling thread works too */
    for (unsigned i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    pthread_mutex_destroy(&pl->mu);
    if (pl->err == AGT_ENOMEM)
        return agti_oom();
    if (pl->err != AGT_OK)
        return agti_error(pl->err, "code_search: a search thread could not start");
    return AGT_OK;
}

/* A private key in a file with matches (one not named like a key file),
 * unless a host exception names the file: found in the bytes searched. */
static bool key_lines(const scan *sc, const cand *cd)
{
    return cd->key && !agti_sensitive_host_excepted(sc->pol, cd->path);
}

/* What the call says of sensitive files must not depend on what they hold:
 * counting only those whose bytes matched told the caller whether a guess
 * of a secret matched (TOKEN=h: one hidden file, TOKEN=hx: none), and a
 * regex could recover it a character at a time. So every file sensitive
 * by its name (or a rename's) in the searched scope is counted, matched or
 * not, read or not; and a file hidden for what it is (a hard link to a
 * sensitive file, looked at only when it matched: a stat of every file
 * cost 7% of a search) or for its content (a private key in a file not
 * named like one) is left out without a count, as a file without a match. */
static void collect(scan *sc, cand *cands, size_t n, const bool *by_name)
{
    for (size_t i = 0; i < n; i++) {
        cand *cd = &cands[i];
        if (by_name[i])
            sc->sensitive++; /* left out, counted whatever it holds */
        else if (cd->state == 2)
            sc->skipped_large++;
        else if (cd->state == 3)
            sc->unreadable++;
        else if (cd->state == 1 &&
                 (agti_review_guard_path(sc->guard, cd->path, NULL) || key_lines(sc, cd)))
            ; /* left out, not counted: the count would tell it matched */
        else if (cd->state == 1 && !sc->capped) {
            if (sc->out.len >= SEARCH_MAX_BYTES) {
                sc->capped = true;
                sc->capped_at = sc->files;
            } else {
                sc->truncated_files += cd->f.truncated;
                put_file(&sc->out, &cd->f, &sc->files);
            }
        }
        agti_search_file_clear(&cd->f);
    }
}

/* ---- the early search ---------------------------------------------------
 *
 * The first review tool call of a session opens the change set, and in
 * workspace mode that is a diff of the whole working tree (an lstat of
 * every tracked file and a walk for untracked ones: 60 ms of a 13,400-file
 * tree, on one thread). What code_search reads does not depend on it: the
 * files of the working tree at the paths of the file list. So while the
 * calling thread opens the change set, other threads read the index with a
 * repository handle of their own and search the working-tree files at its
 * paths; once the file list is known, a file searched early keeps its
 * result and only the rest (untracked files) is searched then. A result is
 * used only for a path of the final list and only when both read the same
 * working tree, with the read function the late search uses: what the
 * call returns is what it returned without this, as of the moment each
 * file was read. */

typedef struct early {
    pool pl; /* cands: one per index path; state 4 = not selected */
    agti_git_index_list il;
    const agti_searcher *sel; /* the call's searcher: its path selection */
    const char *repo_path;
    pthread_t th[SEARCH_MAX_THREADS];
    worker_arg args[SEARCH_MAX_THREADS];
    unsigned started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool listed; /* il read (or failed: pl.n stays 0) */
} early;

/* The first early thread reads the index, then every one searches. */
static void *early_worker(void *arg)
{
    worker_arg *wa = arg;
    early *e = (early *)(void *)wa->pl; /* pl is e's first member */
    if (wa->reader == 0) {
        agti_git_index_list il;
        int rc = agti_git_index_list_read(e->repo_path, &il);
        cand *cands = rc == AGT_OK && il.n ? calloc(il.n, sizeof *cands) : NULL;
        if (rc == AGT_OK && cands != NULL) {
            for (size_t i = 0; i < il.n; i++) {
                cands[i].path = il.paths[i];
                cands[i].state =
                    agti_searcher_selects(e->sel, il.paths[i], strlen(il.paths[i])) ? 0 : 4;
            }
        }
        pthread_mutex_lock(&e->mu);
        if (rc == AGT_OK && cands != NULL) {
            e->il = il;
            e->pl.cands = cands;
            e->pl.workdir = il.workdir;
            e->pl.wfd = il.wfd;
            e->pl.n = il.n;
        } else if (rc == AGT_OK) {
            agti_git_index_list_free(&il);
        }
        e->listed = true;
        pthread_cond_broadcast(&e->cv);
        pthread_mutex_unlock(&e->mu);
    } else {
        pthread_mutex_lock(&e->mu);
        while (!e->listed)
            pthread_cond_wait(&e->cv, &e->mu);
        pthread_mutex_unlock(&e->mu);
    }
    return worker(arg);
}

/* Starts the early search when nothing is open yet and the session will
 * open its root's workspace: true when it runs (e is then to be ended). */
static bool early_start(early *e, agt_session *s, const agti_search_opts *o,
                        const agti_searcher *sel)
{
    memset(e, 0, sizeof *e);
    e->il.wfd = -1;
    e->pl.wfd = -1;
    if (s == NULL || agt_session_changes(s) != NULL || agt_session_root(s) == NULL)
        return false;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    /* one CPU is left to the thread opening the change set */
    unsigned nt = cpus > 2 ? (unsigned)cpus - 1 : 1;
    if (nt > SEARCH_MAX_THREADS - 1)
        nt = SEARCH_MAX_THREADS - 1;
    e->pl.o = o;
    e->sel = sel;
    e->repo_path = agt_session_root(s);
    /* libgit2 is not loaded here: the index list is read without it
     * (lib/git/index_file.c), so the search starts while the calling
     * thread loads libgit2 (10 ms: its TLS set-up reads the system's
     * certificates) and opens the change set */
    if (pthread_mutex_init(&e->pl.mu, NULL) != 0)
        return false;
    if (pthread_mutex_init(&e->mu, NULL) != 0) {
        pthread_mutex_destroy(&e->pl.mu);
        return false;
    }
    if (pthread_cond_init(&e->cv, NULL) != 0) {
        pthread_mutex_destroy(&e->mu);
        pthread_mutex_destroy(&e->pl.mu);
        return false;
    }
    for (unsigned i = 0; i < nt; i++) {
        e->args[i] = (worker_arg){&e->pl, i};
        if (pthread_create(&e->th[i], NULL, early_worker, &e->args[i]) != 0)
            break;
        e->started++;
    }
    if (e->started == 0) {
        pthread_cond_destroy(&e->cv);
        pthread_mutex_destroy(&e->mu);
        pthread_mutex_destroy(&e->pl.mu);
        return false;
    }
    return true;
}

/* Ends the early search: with join_in (the change set is open and its
 * working tree is the one searched), the calling thread helps with what is
 * left first; without, the rest is dropped. */
static void early_finish(early *e, bool join_in)
{
    pthread_mutex_lock(&e->mu);
    while (!e->listed)
        pthread_cond_wait(&e->cv, &e->mu);
    pthread_mutex_unlock(&e->mu);
    if (!join_in) {
        pthread_mutex_lock(&e->pl.mu);
        e->pl.next = e->pl.n; /* the threads take nothing more */
        pthread_mutex_unlock(&e->pl.mu);
    } else {
        worker_arg self = {&e->pl, SEARCH_MAX_THREADS};
        worker(&self);
    }
    for (unsigned i = 0; i < e->started; i++)
        pthread_join(e->th[i], NULL);
    pthread_cond_destroy(&e->cv);
    pthread_mutex_destroy(&e->mu);
    pthread_mutex_destroy(&e->pl.mu);
}

static void early_free(early *e)
{
    for (size_t i = 0; i < e->pl.n; i++)
        agti_search_file_clear(&e->pl.cands[i].f);
    free(e->pl.cands);
    agti_git_index_list_free(&e->il);
}

static size_t last_early; /* test hook: files of the last search taken from the early one */

size_t agti_code_search_last_early(void)
{
    return __atomic_load_n(&last_early, __ATOMIC_RELAXED);
}

static bool disk_same(const agt_changes *c, size_t i, const cand *cd)
{
    struct stat st = stat_of(cd);
    return agti_changes_disk_same(c, i, &st);
}

/* What the call searches, worked out from the change set alone: made
 * while the early search still runs, so that the calling thread joins it
 * with only the search left to do (made after it, this was a fifth of a
 * first call's time, on one thread). */
typedef struct plan {
    size_t *sel;   /* the selected files: indexes into the change set's list */
    bool *by_name; /* each one's: sensitive by its name or a rename's */
    size_t n;
} plan;

static void plan_free(plan *p)
{
    free(p->sel);
    free(p->by_name);
    memset(p, 0, sizeof *p);
}

static int plan_make(const agti_searcher *s, agt_changes *c, agti_review_guard *g, plan *p)
{
    memset(p, 0, sizeof *p);
    const char *const *paths = NULL;
    size_t n = 0;
    int rc = agti_changes_files(c, &paths, &n);
    if (rc != AGT_OK)
        return rc;
    /* blobs are read through prepared readers, and the early search's
     * results checked against their working-tree shortcut */
    if (n > 0 && c->source != AGTI_SOURCE_WORKTREE) {
        rc = agti_changes_readers_prepare(c, thread_count(n));
        if (rc != AGT_OK)
            return rc;
    }
    p->sel = n ? malloc(n * sizeof *p->sel) : NULL;
    p->by_name = n ? malloc(n * sizeof *p->by_name) : NULL;
    if (n && (p->sel == NULL || p->by_name == NULL)) {
        plan_free(p);
        return agti_oom();
    }
    for (size_t i = 0; i < n; i++) {
        if (!agti_searcher_selects(s, paths[i], strlen(paths[i])))
            continue;
        p->sel[p->n] = i;
        p->by_name[p->n++] = agti_review_guard_by_name(g, paths[i]);
    }
    return AGT_OK;
}

static int search_all(const agti_search_opts *o, agt_changes *c, scan *sc, early *e, const plan *pn)
{
    const char *const *paths = NULL;
    size_t nfiles = 0, n = pn->n;
    int rc = agti_changes_files(c, &paths, &nfiles); /* built by plan_make */
    if (rc != AGT_OK)
        return rc;
    cand *cands = n ? calloc(n, sizeof *cands) : NULL;
    if (n && cands == NULL)
        return agti_oom();
    pool pl;
    memset(&pl, 0, sizeof pl);
    pl.c = c;
    pl.o = o;
    pl.blobs = c->source != AGTI_SOURCE_WORKTREE;
    /* Early results count only for the same working tree. When the
     * change set reads the tree's files from it (it has unstaged changes),
     * a file read early is what it would read now. When it reviews the
     * index (a clean tree), a file read early counts only where the
     * working-tree shortcut holds for the stat data it was read with: its
     * bytes are then the index blob's, as the late read would give them. */
    bool use_early = e != NULL && e->pl.err == AGT_OK && e->pl.n > 0 &&
                     (c->source == AGTI_SOURCE_WORKTREE || c->source == AGTI_SOURCE_INDEX) &&
                     agti_changes_workdir(c) != NULL &&
                     strcmp(agti_changes_workdir(c), e->il.workdir) == 0;
    /* cands: the files to search now, first; the list's order is kept in
     * order[] (an index into cands, or into e's cands with the top bit) */
    size_t *order = n ? malloc(n * sizeof *order) : NULL;
    if (n && order == NULL) {
        free(cands);
        return agti_oom();
    }
    const size_t EARLY = (size_t)1 << (sizeof(size_t) * 8 - 1);
    size_t norder = 0;
    /* both lists are in strcmp's order: one walk pairs them */
    size_t j = 0;
    for (size_t k = 0; k < n; k++) {
        size_t i = pn->sel[k];
        const char *p = paths[i];
        int cmp = 1;
        while (use_early && j < e->pl.n && (cmp = strcmp(e->pl.cands[j].path, p)) < 0)
            j++;
        cand *hit = use_early && j < e->pl.n && cmp == 0 ? &e->pl.cands[j] : NULL;
        if (hit != NULL && pl.blobs &&
            !((hit->state == 0 || hit->state == 1) && disk_same(c, i, hit)))
            hit = NULL;
        if (hit != NULL && hit->state != 4) {
            order[norder++] = EARLY | (size_t)(hit - e->pl.cands);
            continue;
        }
        cand *cd = &cands[pl.n];
        cd->path = p;
        cd->file = i;
        order[norder++] = pl.n++;
    }
    pl.cands = cands;
    __atomic_store_n(&last_early, norder - pl.n, __ATOMIC_RELAXED);
    rc = pl.n ? run_pool(&pl) : AGT_OK;
    /* collect in the list's order */
    cand *all = norder ? malloc(norder * sizeof *all) : NULL;
    if (norder && all == NULL) {
        for (size_t i = 0; i < pl.n; i++)
            agti_search_file_clear(&cands[i].f);
        free(cands);
        free(order);
        return agti_oom();
    }
    for (size_t k = 0; k < norder; k++) {
        size_t at = order[k];
        cand *from = (at & EARLY) ? &e->pl.cands[at & ~EARLY] : &cands[at];
        all[k] = *from;
        memset(&from->f, 0, sizeof from->f); /* moved */
    }
    collect(sc, all, norder, pn->by_name);
    free(all);
    free(cands);
    free(order);
    return rc;
}

int agti_tool_code_search(agt_call *call, void *payload)
{
    (void)payload;
    agti_searcher *s = NULL;
    agti_search_opts opts;
    int rc = make_searcher(call, &s, &opts);
    if (rc != AGT_OK)
        return rc;
    early e;
    bool early_on = early_start(&e, agt_call_session(call), &opts, s);
    agt_changes *c = NULL;
    rc = agti_review_tool_changes(call, &c);
    scan sc;
    memset(&sc, 0, sizeof sc);
    sc.pol = agti_session_sensitive(agt_call_session(call));
    agti_review_guard g;
    bool guarded = false;
    plan pn;
    memset(&pn, 0, sizeof pn);
    if (rc == AGT_OK) {
        rc = agti_review_guard_init(&g, call, c) == AGT_OK ? AGT_OK : AGT_ENOMEM;
        guarded = rc == AGT_OK;
    }
    if (rc == AGT_OK)
        rc = plan_make(s, c, &g, &pn);
    if (early_on)
        early_finish(&e, rc == AGT_OK &&
                             (c->source == AGTI_SOURCE_WORKTREE || c->source == AGTI_SOURCE_INDEX));
    if (rc == AGT_OK) {
        sc.guard = &g;
        rc = search_all(&opts, c, &sc, early_on ? &e : NULL, &pn);
    } else if (c == NULL || rc == AGT_ENOMEM) {
        /* no change set (the error result is set) or out of memory */
        if (early_on)
            early_free(&e);
        if (guarded)
            agti_review_guard_free(&g);
        agti_searcher_free(s);
        return rc;
    }
    plan_free(&pn);
    if (early_on)
        early_free(&e);
    if (guarded)
        agti_review_guard_free(&g);
    agti_searcher_free(s);
    if (rc != AGT_OK) {
        agti_buf_free(&sc.out);
        return rc == AGT_ENOMEM
                   ? rc
                   : fail(call, rc, "Error: cannot search the reviewed tree", agt_error_message());
    }
    agti_buf b = AGTI_BUF_INIT;
    if (sc.truncated_files > 0)
        agti_buf_printf(&b,
                        "Note: The results have been truncated. Only showing first %d results. "
                        "(That is the cap of matching lines per file; %zu file%s reached it.)\n\n",
                        SEARCH_MAX_PER_FILE, sc.truncated_files,
                        sc.truncated_files == 1 ? "" : "s");
    if (sc.files == 0)
        agti_buf_puts(&b, "No matches found.");
    else
        agti_buf_put(&b, sc.out.ptr, sc.out.len);
    agti_buf_free(&sc.out);
    if (sc.capped)
        agti_buf_printf(&b,
                        "\n\nNote: output stopped after %zu files (%zu KiB); further files with "
                        "matches are not shown. Narrow file_patterns or the search text.",
                        sc.capped_at, SEARCH_MAX_BYTES >> 10);
    if (sc.sensitive > 0)
        agti_buf_printf(&b,
                        "\n\nNote: %zu sensitive file%s (credentials, keys, environment files) "
                        "%s not searched.",
                        sc.sensitive, sc.sensitive == 1 ? "" : "s",
                        sc.sensitive == 1 ? "is" : "are");
    if (sc.skipped_large + sc.unreadable > 0)
        agti_buf_printf(&b, "\n\nNote: %zu file%s could not be searched (too large or unreadable).",
                        sc.skipped_large + sc.unreadable,
                        sc.skipped_large + sc.unreadable == 1 ? "" : "s");
    if (b.oom) {
        agti_buf_free(&b);
        return agti_oom();
    }
    rc = agt_call_set_text(call, agti_buf_cstr(&b));
    agti_buf_free(&b);
    return rc;
}
