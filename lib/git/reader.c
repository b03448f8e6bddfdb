/*
 * Reading many files of the reviewed tree from several threads, as a
 * search does: each reader has its own object database handle, kept on the
 * change set across searches (libgit2 handles are not shared between
 * threads, and a fresh one starts with cold pack indexes), and blobs are
 * read straight from the backends (git_odb_read would re-hash each one:
 * libgit2's strict hash verification costs more than the search itself).
 * Blobs inflated from the object database are kept on the change set up to
 * AGTI_GIT_CACHE_MAX bytes (the first come; nothing is evicted), since a
 * review searches the same tree many times. A file read through the
 * working-tree shortcut below is not kept: reading it again costs what
 * copying it would, and keeping every file of a large tree made the first
 * search of a review hold 300 MB (bench/run, code_search row).
 *
 * The working-tree shortcut (commit and range mode, and workspace mode
 * when it reviews the index): a file whose target blob is also the index
 * entry's blob, and whose index entry is stat-clean against the file on
 * disk, holds the blob's bytes; reading it costs a read() instead of an
 * inflation. It is taken only when all of these hold, and the blob is read
 * otherwise:
 *   - the index entry is at stage 0, a regular file, with the target's id,
 *     not assume-unchanged, skip-worktree or intent-to-add;
 *   - it is not racily clean (git's rule: the entry's mtime is older than
 *     the index file's), so a stat match means the bytes are unchanged;
 *   - no filter applies to the path (git_filter_list_load gives none: no
 *     text/eol/crlf/ident attribute, no core.autocrlf; and no filter=
 *     driver or working-tree-encoding attribute, which git applies and
 *     libgit2 does not know), so the bytes git hashed are the bytes on disk
 *     (as git itself assumes of a stat-clean entry: a conversion removed
 *     after the file was added or checked out, e.g. a filter= line dropped
 *     from info/attributes, goes unseen by git status and here alike until
 *     the file is added or checked out again);
 *   - at read time, the opened file (no symlink) matches the entry's stat
 *     data (size, mtime, ctime, inode, device, mode, owner) as git compares
 *     them, and its size is the blob's size.
 */
#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <git2/sys/odb_backend.h>

#include "git/git_internal.h"

struct agti_reader_slot {
    git_repository *repo;
    git_odb *odb;
    agti_buf path; /* scratch: the working-tree path of a file */
    char *buf;     /* the bytes of the last file read from disk, reused */
    size_t cap;
};

/* Files up to this size are read into the reader's own buffer (a fresh
 * allocation per file cost a page fault per page: 8% of a search of the
 * bench corpus); larger ones get their own, freed on release, so that a
 * reader does not keep a big buffer for the rest of the review. */
#define READER_BUF_MAX ((size_t)1 << 20)

/* What the index said about one file when the table was built. */
typedef struct disk_entry {
    bool ok; /* all the build-time conditions hold */
    uint32_t ino, dev, uid, gid, size;
    int32_t mtime_s, ctime_s;
    uint32_t mtime_ns, ctime_ns;
} disk_entry;

typedef struct agti_file_stamp file_stamp;

struct agti_disk_table {
    bool usable; /* false: no index, or it changed while it was read */
    bool fixed;  /* built from c->index (workspace mode): never rebuilt */
    file_stamp stamp;
    disk_entry *e; /* per file of c->files */
};

/* Inflated blobs by file number. A slot is written by the one reader that
 * has the file in a search and read by later searches (the threads of one
 * search are joined before the next starts); only the byte count is
 * shared between readers. */
struct agti_blob_cache {
    void **data; /* as a backend returned it, freed through owner */
    size_t *len;
    git_odb_backend **owner;
    atomic_size_t used;
};

/* ---- object databases ------------------------------------------------- */

static int open_slot(agt_changes *c, struct agti_reader_slot *s)
{
    if (s->odb != NULL)
        return AGT_OK;
    if (git_repository_open(&s->repo, git_repository_path(c->repo)) < 0 ||
        git_repository_odb(&s->odb, s->repo) < 0) {
        git_repository_free(s->repo);
        s->repo = NULL;
        return agti_git_error(AGT_EGIT, "cannot open the object database of '%s'",
                              git_repository_path(c->repo));
    }
    return AGT_OK;
}

/* Reads a blob through the backends (packs, loose objects, alternates).
 * Returns AGT_OK, AGT_ELIMIT (over max), AGT_ENOTFOUND. The blob is read
 * whole before its size is checked: a pack's header read of a delta costs
 * an inflation of its own, and a blob over the limit is rare. */
static int raw_blob(git_odb *odb, const git_oid *id, size_t max, agti_read *out)
{
    size_t nb = git_odb_num_backends(odb);
    for (size_t i = 0; i < nb; i++) {
        git_odb_backend *b = NULL;
        if (git_odb_get_backend(&b, odb, i) < 0 || b->read == NULL)
            continue;
        void *d = NULL;
        size_t len = 0;
        git_object_t type = GIT_OBJECT_INVALID;
        if (b->read(&d, &len, &type, b, id) < 0)
            continue;
        if (type != GIT_OBJECT_BLOB || len > max) {
            git_odb_backend_data_free(b, d);
            return type != GIT_OBJECT_BLOB ? AGT_ENOTFOUND : AGT_ELIMIT;
        }
        out->data = d;
        out->len = len;
        out->raw = d;
        out->raw_owner = b;
        return AGT_OK;
    }
    return AGT_ENOTFOUND;
}

/* ---- the working-tree table ------------------------------------------- */

bool agti_file_stamp_of(const char *path, file_stamp *st)
{
    struct stat s;
    if (stat(path, &s) != 0)
        return false;
    st->dev = s.st_dev;
    st->ino = s.st_ino;
    st->size = s.st_size;
    st->mtime = s.st_mtim;
    st->ctime = s.st_ctim;
    return true;
}

bool agti_file_stamp_equal(const file_stamp *a, const file_stamp *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
           a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec &&
           a->ctime.tv_sec == b->ctime.tv_sec && a->ctime.tv_nsec == b->ctime.tv_nsec;
}

/* git's racily clean entry: modified no earlier than the index was written,
 * so a later change within the same timestamp would go unseen. */
static bool racy(const git_index_entry *e, const file_stamp *index)
{
    if ((int64_t)e->mtime.seconds != (int64_t)index->mtime.tv_sec)
        return (int64_t)e->mtime.seconds > (int64_t)index->mtime.tv_sec;
    return (int64_t)e->mtime.nanoseconds >= (int64_t)index->mtime.tv_nsec;
}

static bool no_filters(git_repository *repo, const char *path)
{
    /* git runs two conversions libgit2 does not know, so it loads no filter
     * for them: a filter driver (filter=name, e.g. git-lfs) and
     * working-tree-encoding (the working tree in e.g. UTF-16 or IBM037, the
     * blob in UTF-8: the sizes may be equal, as for IBM037) */
    static const char *names[] = {"filter", "working-tree-encoding"};
    const char *values[2] = {NULL, NULL};
    if (git_attr_get_many(values, repo, GIT_ATTR_CHECK_FILE_THEN_INDEX, path, 2, names) < 0 ||
        git_attr_value(values[0]) != GIT_ATTR_VALUE_UNSPECIFIED ||
        git_attr_value(values[1]) != GIT_ATTR_VALUE_UNSPECIFIED)
        return false;
    git_filter_list *fl = NULL;
    if (git_filter_list_load(&fl, repo, NULL, path, GIT_FILTER_TO_ODB, GIT_FILTER_DEFAULT) < 0)
        return false;
    if (fl == NULL)
        return true;
    git_filter_list_free(fl);
    return false;
}

static void fill_entry(agt_changes *c, const git_index_entry *e, const file_stamp *stamp,
                       bool check_filters, size_t i, disk_entry *d)
{
    memset(d, 0, sizeof *d);
    if (e == NULL || (e->mode != GIT_FILEMODE_BLOB && e->mode != GIT_FILEMODE_BLOB_EXECUTABLE))
        return;
    if (!git_oid_equal(&e->id, &c->file_ids[i]))
        return;
    if ((e->flags & GIT_INDEX_ENTRY_VALID) != 0 ||
        (e->flags_extended & (GIT_INDEX_ENTRY_SKIP_WORKTREE | GIT_INDEX_ENTRY_INTENT_TO_ADD)) != 0)
        return;
    if (racy(e, stamp) || (check_filters && !no_filters(c->repo, c->files[i])))
        return;
    d->ok = true;
    d->ino = e->ino;
    d->dev = e->dev;
    d->uid = e->uid;
    d->gid = e->gid;
    d->size = e->file_size;
    d->mtime_s = e->mtime.seconds;
    d->mtime_ns = e->mtime.nanoseconds;
    d->ctime_s = e->ctime.seconds;
    d->ctime_ns = e->ctime.nanoseconds;
}

static bool exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

/* exists() for a path of the working tree, relative to its root fd when
 * that is open (buf holds the full path, the workdir's `skip` bytes first). */
static bool wt_exists(const agt_changes *c, const agti_buf *buf, size_t skip)
{
    struct stat st;
    if (c->workdir_fd >= 0)
        return fstatat(c->workdir_fd, agti_buf_cstr(buf) + skip, &st, AT_SYMLINK_NOFOLLOW) == 0;
    return exists(agti_buf_cstr(buf));
}

/* Whether a file named `name` is in one of the ':'-separated folders of
 * libgit2's search path for a config level. */
static bool in_search_path(int level, const char *name)
{
    git_buf sp = {NULL, 0, 0};
    if (git_libgit2_opts(GIT_OPT_GET_SEARCH_PATH, level, &sp) < 0)
        return true; /* cannot tell: assume it is there */
    bool found = false;
    for (const char *d = sp.ptr ? sp.ptr : ""; *d && !found;) {
        const char *end = strchr(d, ':');
        size_t len = end ? (size_t)(end - d) : strlen(d);
        char *f = len ? agti_aprintf("%.*s/%s", (int)len, d, name) : NULL;
        found = f != NULL && exists(f);
        free(f);
        d += len + (end != NULL);
    }
    git_buf_dispose(&sp);
    return found;
}

/* Whether any attribute could be set on any file, or core.autocrlf asks
 * for a conversion: when neither, no filter applies to any path (filters
 * are chosen by attributes: text/eol/crlf, ident, filter=; crlf also by
 * core.autocrlf), which spares a filter lookup per file (libgit2 stats every
 * attribute file up the path, ~80 us a file). Looked at: the index's and
 * the working tree's .gitattributes in every folder holding a file of the
 * tree, info/attributes, core.attributesFile or the XDG file, and the
 * system gitattributes; anything unclear counts as "maybe". */
static bool attributes_anywhere(agt_changes *c, git_index *idx)
{
    size_t n = git_index_entrycount(idx);
    for (size_t i = 0; i < n; i++) {
        const char *p = git_index_get_byindex(idx, i)->path;
        const char *slash = strrchr(p, '/');
        if (strcmp(slash ? slash + 1 : p, ".gitattributes") == 0)
            return true;
    }
    agti_buf dir = AGTI_BUF_INIT;
    size_t wdlen = strlen(c->workdir);
    const char *last = NULL; /* the files are sorted: skip repeats of a folder */
    size_t last_len = 0;
    bool found = false;
    for (size_t i = 0; i <= c->nfiles && !found; i++) {
        /* every folder on the way to a file (i == nfiles: the root) */
        const char *p = i < c->nfiles ? c->files[i] : "";
        for (const char *q = strchr(p, '/'); q != NULL && !found; q = strchr(q + 1, '/')) {
            size_t len = (size_t)(q - p);
            if (last != NULL && len <= last_len && strncmp(p, last, len) == 0 &&
                (len == last_len || last[len] == '/'))
                continue;
            agti_buf_truncate(&dir, 0);
            agti_buf_printf(&dir, "%s%.*s/.gitattributes", c->workdir, (int)len, p);
            found = dir.oom || wt_exists(c, &dir, wdlen);
        }
        if (i < c->nfiles) {
            const char *q = strrchr(p, '/');
            last = p;
            last_len = q ? (size_t)(q - p) : 0;
        } else {
            agti_buf_truncate(&dir, 0);
            agti_buf_printf(&dir, "%s.gitattributes", c->workdir);
            found = found || dir.oom || wt_exists(c, &dir, wdlen);
        }
    }
    if (!found) {
        agti_buf_truncate(&dir, 0);
        agti_buf_printf(&dir, "%sinfo/attributes", git_repository_commondir(c->repo));
        found = dir.oom || exists(agti_buf_cstr(&dir));
    }
    agti_buf_free(&dir);
    if (found)
        return true;
    git_config *cfg = NULL;
    if (git_repository_config_snapshot(&cfg, c->repo) < 0)
        return true;
    git_buf v = {NULL, 0, 0}, crlf = {NULL, 0, 0};
    int off = 1;
    bool maybe = git_config_get_string_buf(&v, cfg, "core.attributesfile") != GIT_ENOTFOUND;
    if (!maybe && git_config_get_string_buf(&crlf, cfg, "core.autocrlf") != GIT_ENOTFOUND)
        maybe = crlf.ptr == NULL || git_config_parse_bool(&off, crlf.ptr) < 0 || off;
    git_buf_dispose(&crlf);
    git_buf_dispose(&v);
    git_config_free(cfg);
    return maybe || in_search_path(GIT_CONFIG_LEVEL_XDG, "attributes") ||
           in_search_path(GIT_CONFIG_LEVEL_SYSTEM, "gitattributes");
}

/* Builds the table. Workspace mode (the index source) builds it once from
 * the index the change set was opened with (c->index, whose ids the
 * change set has, stamped at open); the commit source (re)builds it from
 * the index file whenever that is not the one it was built from. A failure
 * leaves the shortcut off; it is never an error. */
static int build_disk(agt_changes *c, const git_index_entry *const *ents)
{
    struct agti_disk_table *t = c->disk;
    if (t == NULL) {
        t = calloc(1, sizeof *t);
        if (t == NULL)
            return agti_oom();
        c->disk = t;
    }
    git_index *idx = NULL;
    file_stamp before, after;
    if (c->index != NULL) {
        if (t->fixed)
            return AGT_OK;
        t->fixed = true;
        t->usable = false;
        if (!c->index_stamped)
            return AGT_OK;
        idx = c->index;
        before = c->index_stamp;
    } else {
        char *ipath = agti_aprintf("%sindex", git_repository_path(c->repo));
        if (ipath == NULL)
            return agti_oom();
        if (!agti_file_stamp_of(ipath, &before)) {
            free(ipath);
            t->usable = false;
            return AGT_OK;
        }
        if (t->usable && agti_file_stamp_equal(&before, &t->stamp)) {
            free(ipath);
            return AGT_OK;
        }
        t->usable = false;
        int grc = git_index_open(&idx, ipath);
        bool same =
            grc == 0 && agti_file_stamp_of(ipath, &after) && agti_file_stamp_equal(&before, &after);
        free(ipath);
        if (!same) {
            git_index_free(idx);
            return AGT_OK;
        }
    }
    if (t->e == NULL && c->nfiles > 0) {
        t->e = malloc(c->nfiles * sizeof *t->e);
        if (t->e == NULL) {
            if (idx != c->index)
                git_index_free(idx);
            return agti_oom();
        }
    }
    /* with no attribute anywhere, a filter could still be one a host
     * registered for every file: libgit2 is asked for one path */
    bool check_filters =
        attributes_anywhere(c, idx) || (c->nfiles > 0 && !no_filters(c->repo, c->files[0]));
    for (size_t i = 0; i < c->nfiles; i++)
        fill_entry(c,
                   ents != NULL && idx == c->index ? ents[i]
                                                   : git_index_get_bypath(idx, c->files[i], 0),
                   &before, check_filters, i, &t->e[i]);
    if (idx != c->index)
        git_index_free(idx);
    t->stamp = before;
    t->usable = true;
    return AGT_OK;
}

/* ---- preparing and reading -------------------------------------------- */

/* The index source's blob ids, looked up here once: git_index lookups may
 * sort the index, so they are not for the reader threads. The entries
 * found go to *ents (the table is built from them next). */
static int index_ids(agt_changes *c, const git_index_entry ***ents)
{
    git_oid *ids = calloc(c->nfiles, sizeof *ids);
    bool *missing = calloc(c->nfiles, sizeof *missing);
    *ents = calloc(c->nfiles, sizeof **ents);
    if (ids == NULL || missing == NULL || *ents == NULL) {
        free(ids);
        free(missing);
        free(*ents);
        *ents = NULL;
        return agti_oom();
    }
    /* the index's entries and the file list are both in strcmp's order
     * (path, then stage): one walk pairs them; a path the walk does not
     * land on (an index sorted otherwise, with core.ignorecase) is looked
     * up. 13,400 look-ups were 2.5 ms. */
    size_t ne = git_index_entrycount(c->index), j = 0;
    for (size_t i = 0; i < c->nfiles; i++) {
        const git_index_entry *e = NULL, *f;
        int cmp = 1;
        while (j < ne && (f = git_index_get_byindex(c->index, j)) != NULL &&
               (cmp = strcmp(f->path, c->files[i])) < 0)
            j++;
        for (size_t k = j; cmp == 0 && k < ne && e == NULL; k++) {
            f = git_index_get_byindex(c->index, k);
            if (f == NULL || strcmp(f->path, c->files[i]) != 0)
                break;
            if (GIT_INDEX_ENTRY_STAGE(f) == 0)
                e = f;
        }
        if (e == NULL && cmp != 0)
            e = git_index_get_bypath(c->index, c->files[i], 0);
        (*ents)[i] = e;
        if (e != NULL)
            ids[i] = e->id;
        else
            missing[i] = true;
    }
    c->file_ids = ids;
    c->file_id_missing = missing;
    return AGT_OK;
}

static int make_cache(agt_changes *c)
{
    struct agti_blob_cache *k = calloc(1, sizeof *k);
    if (k == NULL)
        return agti_oom();
    k->data = calloc(c->nfiles, sizeof *k->data);
    k->len = calloc(c->nfiles, sizeof *k->len);
    k->owner = calloc(c->nfiles, sizeof *k->owner);
    atomic_init(&k->used, 0);
    if (k->data == NULL || k->len == NULL || k->owner == NULL) {
        /* no half-made cache: its users index all three arrays */
        free(k->data);
        free(k->len);
        free(k->owner);
        free(k);
        return agti_oom();
    }
    c->cache = k;
    return AGT_OK;
}

/* Keeps a blob just read in the cache when the budget allows; the cache
 * then owns it and out borrows it. */
static void cache_keep(agt_changes *c, size_t i, agti_read *out)
{
    struct agti_blob_cache *k = c->cache;
    if (k == NULL || k->data == NULL)
        return;
    size_t before = atomic_fetch_add(&k->used, out->len);
    if (before > AGTI_GIT_CACHE_MAX || out->len > AGTI_GIT_CACHE_MAX - before) {
        atomic_fetch_sub(&k->used, out->len);
        return;
    }
    if (out->raw != NULL) {
        k->data[i] = out->raw;
        k->owner[i] = out->raw_owner;
    } else { /* the working tree's copy: the blob's bytes, as the shortcut holds */
        k->data[i] = out->owned;
        k->owner[i] = NULL;
    }
    k->len[i] = out->len;
    out->raw = NULL;
    out->raw_owner = NULL;
    out->owned = NULL;
    out->cached = true;
}

int agti_changes_readers_prepare(agt_changes *c, unsigned nreaders)
{
    if (nreaders == 0 || nreaders > AGTI_GIT_MAX_READERS)
        return agti_error(AGT_EINVAL, "reader count %u is not within 1..%d", nreaders,
                          AGTI_GIT_MAX_READERS);
    const char *const *paths;
    size_t n;
    int rc = agti_changes_files(c, &paths, &n);
    if (rc != AGT_OK)
        return rc;
    if (c->source == AGTI_SOURCE_WORKTREE)
        return AGT_OK; /* working-tree files are read from disk anyway */
    if (c->readers == NULL) {
        c->readers = calloc(AGTI_GIT_MAX_READERS, sizeof *c->readers);
        if (c->readers == NULL)
            return agti_oom();
        c->nreaders = AGTI_GIT_MAX_READERS;
    }
    for (unsigned i = 0; i < nreaders; i++) {
        rc = open_slot(c, &c->readers[i]);
        if (rc != AGT_OK)
            return rc;
    }
    const git_index_entry **ents = NULL;
    if (c->source == AGTI_SOURCE_INDEX && c->file_ids == NULL && n > 0) {
        rc = index_ids(c, &ents);
        if (rc != AGT_OK)
            return rc;
    }
    if (c->cache == NULL && n > 0)
        rc = make_cache(c);
    /* the index source: ids and table both from the index read at open */
    if (rc == AGT_OK && c->workdir != NULL && c->file_ids != NULL)
        rc = build_disk(c, ents);
    free(ents);
    return rc;
}

static bool entry_matches(const disk_entry *d, const struct stat *st)
{
    return S_ISREG(st->st_mode) && d->size == (uint32_t)st->st_size &&
           d->mtime_s == (int32_t)st->st_mtim.tv_sec &&
           d->mtime_ns == (uint32_t)st->st_mtim.tv_nsec &&
           d->ctime_s == (int32_t)st->st_ctim.tv_sec &&
           d->ctime_ns == (uint32_t)st->st_ctim.tv_nsec && d->ino == (uint32_t)st->st_ino &&
           d->dev == (uint32_t)st->st_dev && d->uid == (uint32_t)st->st_uid &&
           d->gid == (uint32_t)st->st_gid;
}

bool agti_changes_disk_same(const agt_changes *c, size_t i, const struct stat *st)
{
    const struct agti_disk_table *t = c->disk;
    return t != NULL && t->usable && t->e != NULL && i < c->nfiles && t->e[i].ok &&
           c->file_ids != NULL && (c->file_id_missing == NULL || !c->file_id_missing[i]) &&
           entry_matches(&t->e[i], st);
}

/* The shortcut: AGT_OK with the file's bytes, AGT_ELIMIT, or AGT_ENOTFOUND
 * when it does not apply (the caller reads the blob). */
static int read_disk(agt_changes *c, struct agti_reader_slot *s, size_t i, size_t max,
                     agti_read *out)
{
    struct agti_disk_table *t = c->disk;
    if (t == NULL || !t->usable || !t->e[i].ok)
        return AGT_ENOTFOUND;
    int fd = agti_changes_open_workdir(c, c->files[i], &s->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd == -2)
        return AGT_ENOMEM;
    if (fd < 0)
        return AGT_ENOTFOUND;
    /* the stat data as git compares it: a match means the file holds the
     * bytes git hashed for the entry, so its size is the blob's */
    struct stat st;
    if (fstat(fd, &st) != 0 || !entry_matches(&t->e[i], &st)) {
        close(fd);
        return AGT_ENOTFOUND;
    }
    uint64_t size = (uint64_t)st.st_size;
    if (size > max) {
        close(fd);
        return AGT_ELIMIT;
    }
    bool own = (size_t)size + 1 > READER_BUF_MAX;
    char *buf = own ? malloc((size_t)size + 1) : s->buf;
    if (!own && s->cap < (size_t)size + 1) {
        size_t cap = s->cap ? s->cap : 64 << 10;
        while (cap < (size_t)size + 1)
            cap *= 2;
        buf = realloc(s->buf, cap);
        if (buf != NULL) {
            s->buf = buf;
            s->cap = cap;
        }
    }
    if (buf == NULL) {
        close(fd);
        return AGT_ENOMEM;
    }
    size_t got = 0;
    while (got <= size) { /* one byte more than expected shows a grown file */
        size_t want = (size_t)size + 1 - got;
        ssize_t r = read(fd, buf + got, want);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
        if (got == size && (size_t)r < want)
            break; /* a short read at the expected size: the end */
    }
    close(fd);
    if (got != size) {
        if (own)
            free(buf);
        return AGT_ENOTFOUND;
    }
    buf[size] = '\0';
    out->data = buf;
    out->len = (size_t)size;
    out->owned = own ? buf : NULL;
    out->from_disk = true;
    return AGT_OK;
}

int agti_changes_read_nth(agt_changes *c, unsigned reader, size_t i, size_t max, agti_read *out)
{
    memset(out, 0, sizeof *out);
    if (reader >= c->nreaders || c->readers[reader].odb == NULL || i >= c->nfiles)
        return AGT_ENOTFOUND;
    struct agti_reader_slot *s = &c->readers[reader];
    if (c->file_ids == NULL || (c->file_id_missing != NULL && c->file_id_missing[i]))
        return AGT_ENOTFOUND;
    struct agti_blob_cache *k = c->cache;
    if (k != NULL && k->data != NULL && k->data[i] != NULL) {
        if (k->len[i] > max)
            return AGT_ELIMIT;
        out->data = k->data[i];
        out->len = k->len[i];
        out->cached = true;
        return AGT_OK;
    }
    int rc = read_disk(c, s, i, max, out);
    if (rc == AGT_OK)
        return rc; /* a read() again is as cheap as a copy: not kept */
    if (rc == AGT_ENOTFOUND)
        rc = raw_blob(s->odb, &c->file_ids[i], max, out);
    if (rc == AGT_OK)
        cache_keep(c, i, out); /* inflated: worth keeping */
    return rc;
}

void agti_read_release(agti_read *r)
{
    if (r->raw != NULL)
        git_odb_backend_data_free(r->raw_owner, r->raw);
    free(r->owned);
    memset(r, 0, sizeof *r);
}

void agti_changes_readers_free(agt_changes *c)
{
    struct agti_blob_cache *k = c->cache;
    if (k != NULL) { /* before the readers: their backends free the blobs */
        for (size_t i = 0; k->data != NULL && i < c->nfiles; i++)
            if (k->owner[i] != NULL)
                git_odb_backend_data_free(k->owner[i], k->data[i]);
            else
                free(k->data[i]);
        free(k->data);
        free(k->len);
        free(k->owner);
        free(k);
        c->cache = NULL;
    }
    if (c->readers != NULL) {
        for (unsigned i = 0; i < c->nreaders; i++) {
            git_odb_free(c->readers[i].odb);
            git_repository_free(c->readers[i].repo);
            agti_buf_free(&c->readers[i].path);
            free(c->readers[i].buf);
        }
        free(c->readers);
        c->readers = NULL;
    }
    if (c->disk != NULL) {
        free(c->disk->e);
        free(c->disk);
        c->disk = NULL;
    }
}
