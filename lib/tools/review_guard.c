/*
 * Which paths of a change set the review tools treat as sensitive. Names
 * are judged by the session's policy (lib/fs/sensitive.c); a name is not
 * the only way to reach a secret, so also:
 *  - a rename or copy in the change set with a sensitive side makes both
 *    sides sensitive: after `git mv .env notes.txt` the removed side of
 *    notes.txt's diff and its content are .env's; after `git mv draft.txt
 *    .env.local` draft.txt's diff shows what .env.local holds now;
 *  - a move or copy git does not pair (a plain mv of a tracked .env to an
 *    untracked notes.txt: a deletion and an addition; cp .env notes.txt:
 *    an addition): an added or deleted file holding half or more of a
 *    sensitive file of the change set or beside the reviewed files;
 *  - a file of the working tree with more than one link is sensitive when
 *    a sensitive file of the working tree is the same inode (lib/fs
 *    linkset.c walks the tree once, and only when such a file is judged).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"
#include "dispatch/dispatch_internal.h"
#include "git/git_internal.h"
#include "review_guard.h"
#include "session/fs_settings.h"

#define WHY_RENAME "renamed or copied from or to a sensitive file in the change set"
#define WHY_MOVED "holds most of a sensitive file (moved or copied)"
#define WHY_LINK "a hard link to a sensitive file"

/* Moves and copies git does not pair (a plain mv: the tracked .env
 * deleted, an untracked notes.txt added; cp: notes.txt added): an added or
 * deleted file that holds at least half of a sensitive file (of the change
 * set, either side, or of the tree: tree_sources), counted
 * in bytes of its distinct lines (trimmed, from PAIR_MIN_LINE bytes), is
 * sensitive; so appending to the moved file does not hide the move, and a
 * file sharing a boilerplate line or two is not caught. Files past
 * PAIR_MAX_BYTES, sensitive files past PAIR_MAX_SOURCES, or candidates past
 * PAIR_MAX_FILES count as sensitive (fail closed). */
#define PAIR_MIN_LINE 4
#define PAIR_MAX_BYTES AGTI_GIT_CONTENT_MAX /* as the contents attached for anchoring */
#define PAIR_MAX_FILES 100000
#define PAIR_MAX_SOURCES 4096

typedef struct lineset {
    uint64_t *h; /* 0: empty slot */
    size_t *w;   /* bytes of the line */
    size_t cap, n;
    size_t total; /* bytes of the distinct lines */
} lineset;

static uint64_t line_hash(const char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
    return h ? h : 1;
}

static bool set_has(const lineset *ls, uint64_t h)
{
    if (ls->cap == 0)
        return false;
    for (size_t i = h & (ls->cap - 1);; i = (i + 1) & (ls->cap - 1)) {
        if (ls->h[i] == h)
            return true;
        if (ls->h[i] == 0)
            return false;
    }
}

static void set_put(uint64_t *h, size_t *w, size_t cap, uint64_t key, size_t weight)
{
    size_t k = key & (cap - 1);
    while (h[k] != 0)
        k = (k + 1) & (cap - 1);
    h[k] = key;
    w[k] = weight;
}

static bool set_add(lineset *ls, uint64_t key, size_t weight)
{
    if (set_has(ls, key))
        return true;
    if (2 * (ls->n + 1) > ls->cap) {
        size_t ncap = ls->cap ? 2 * ls->cap : 64;
        uint64_t *nh = calloc(ncap, sizeof *nh);
        size_t *nw = calloc(ncap, sizeof *nw);
        if (nh == NULL || nw == NULL) {
            free(nh);
            free(nw);
            return false;
        }
        for (size_t i = 0; i < ls->cap; i++)
            if (ls->h[i] != 0)
                set_put(nh, nw, ncap, ls->h[i], ls->w[i]);
        free(ls->h);
        free(ls->w);
        ls->h = nh;
        ls->w = nw;
        ls->cap = ncap;
    }
    set_put(ls->h, ls->w, ls->cap, key, weight);
    ls->n++;
    ls->total += weight;
    return true;
}

static void set_free(lineset *ls)
{
    free(ls->h);
    free(ls->w);
    memset(ls, 0, sizeof *ls);
}

/* The distinct trimmed lines of text (PAIR_MIN_LINE bytes or more) into
 * set; false when out of memory. */
static bool set_lines(lineset *set, const char *text, size_t len)
{
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        const char *q = eol ? eol : end;
        const char *a = p, *b = q;
        while (a < b && (*a == ' ' || *a == '\t' || *a == '\r'))
            a++;
        while (b > a && (b[-1] == ' ' || b[-1] == '\t' || b[-1] == '\r'))
            b--;
        if ((size_t)(b - a) >= PAIR_MIN_LINE &&
            !set_add(set, line_hash(a, (size_t)(b - a)), (size_t)(b - a)))
            return false;
        p = eol ? eol + 1 : end;
    }
    return true;
}

/* Whether cand holds at least half of src's line bytes. */
static bool holds_half(const lineset *src, const lineset *cand)
{
    if (src->total == 0)
        return false;
    size_t got = 0;
    for (size_t i = 0; i < src->cap; i++)
        if (src->h[i] != 0 && set_has(cand, src->h[i]))
            got += src->w[i];
    return 2 * got >= src->total;
}

/* One side of file i: the base (old) or the reviewed (new) bytes. */
static int side_bytes(agt_changes *c, const char *path, bool base, char **out, size_t *len)
{
    int rc =
        base ? agti_changes_read_base(c, path, out, len) : agt_changes_read_file(c, path, out, len);
    if (rc == AGT_OK && *len > PAIR_MAX_BYTES) {
        free(*out);
        *out = NULL;
        return AGT_ELIMIT;
    }
    return rc;
}

static bool push(agti_review_guard *g, size_t *cap, const char *path, const char *why)
{
    if (g->nother == *cap) {
        size_t ncap = *cap ? 2 * *cap : 8;
        const char **nv = realloc(g->other, ncap * sizeof *nv);
        const char **nw = nv ? realloc(g->other_why, ncap * sizeof *nw) : NULL;
        if (nv != NULL)
            g->other = nv;
        if (nw == NULL)
            return false;
        g->other_why = nw;
        *cap = ncap;
    }
    g->other_why[g->nother] = why;
    g->other[g->nother++] = path;
    return true;
}

/* The sensitive files compared with: their line sets, or closed (fail
 * closed: every candidate counts). */
typedef struct sources {
    lineset *v;
    size_t n, cap;
    bool closed;
} sources;

/* Adds text (a sensitive file's bytes); AGT_ENOMEM. */
static int add_source(sources *sv, const char *text, size_t len)
{
    if (sv->n == PAIR_MAX_SOURCES) {
        sv->closed = true;
        return AGT_OK;
    }
    if (sv->n == sv->cap) {
        size_t ncap = sv->cap ? 2 * sv->cap : 8;
        lineset *nv = realloc(sv->v, ncap * sizeof *nv);
        if (nv == NULL)
            return agti_oom();
        sv->v = nv;
        sv->cap = ncap;
    }
    memset(&sv->v[sv->n], 0, sizeof sv->v[sv->n]);
    return set_lines(&sv->v[sv->n++], text, len) ? AGT_OK : agti_oom();
}

/* A read's outcome as a source: missing is nothing; too large or
 * unreadable closes (it cannot be compared). */
static int take_read(sources *sv, int r, char *text, size_t len)
{
    int rc = r == AGT_OK ? add_source(sv, text, len) : r == AGT_ENOMEM ? r : AGT_OK;
    if (r != AGT_OK && r != AGT_ENOTFOUND && r != AGT_ENOMEM)
        sv->closed = true;
    free(text);
    return rc;
}

/* Reads the regular file name of folder dfd (no link followed), within
 * PAIR_MAX_BYTES. */
static int read_at(int dfd, const char *name, char **out, size_t *len)
{
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return AGT_ENOTFOUND;
    struct stat st;
    int rc = AGT_OK;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        rc = AGT_ENOTFOUND;
    else if ((size_t)st.st_size > PAIR_MAX_BYTES)
        rc = AGT_ELIMIT;
    char *buf = rc == AGT_OK ? malloc((size_t)st.st_size + 1) : NULL;
    if (rc == AGT_OK && buf == NULL)
        rc = agti_oom();
    size_t got = rc == AGT_OK ? agti_read_full(fd, buf, (size_t)st.st_size) : 0;
    close(fd);
    if (rc != AGT_OK) {
        free(buf);
        return rc;
    }
    buf[got] = '\0';
    *out = buf;
    *len = got;
    return AGT_OK;
}

/* Copies from files the change set does not touch (cp .env notes.txt):
 * the sensitive files of the reviewed tree and, with a working tree, the
 * sensitive files (ignored ones too) in the folders that hold its files. */
static int tree_sources(agti_review_guard *g, sources *sv)
{
    agt_changes *c = g->c;
    const char *const *files = NULL;
    size_t n = 0;
    int rc = agti_changes_files(c, &files, &n);
    if (rc != AGT_OK)
        return rc == AGT_ENOMEM ? rc : (sv->closed = true, AGT_OK);
    bool disk = c->mode == AGT_CHANGES_WORKSPACE && c->workdir_fd >= 0;
    if (!disk) {
        for (size_t i = 0; i < n && rc == AGT_OK && !sv->closed; i++) {
            if (!agti_sensitive_match(g->pol, files[i], NULL))
                continue;
            char *text = NULL;
            size_t len = 0;
            int r = side_bytes(c, files[i], false, &text, &len);
            rc = take_read(sv, r, text, len);
        }
        return rc;
    }
    agti_buf dir = AGTI_BUF_INIT, rel = AGTI_BUF_INIT;
    lineset seen = {NULL, NULL, 0, 0, 0}; /* folders read, by a hash of their path */
    /* the root first (an ignored .env there, whatever the tree lists), then
     * the folder of each file, each once */
    for (size_t i = 0; i <= n && rc == AGT_OK && !sv->closed; i++) {
        const char *p = i == 0 ? "" : files[i - 1];
        const char *slash = strrchr(p, '/');
        size_t dl = slash ? (size_t)(slash - p) : 0;
        uint64_t h = line_hash(p, dl);
        if (set_has(&seen, h))
            continue;
        if (!set_add(&seen, h, 1)) {
            rc = agti_oom();
            break;
        }
        agti_buf_truncate(&dir, 0);
        agti_buf_put(&dir, p, dl);
        if (dir.oom) {
            rc = agti_oom();
            break;
        }
        int dfd = agti_fs_open_beneath(c->workdir_fd, agti_buf_cstr(&dir),
                                       O_RDONLY | O_DIRECTORY | O_NOCTTY);
        DIR *dp = dfd >= 0 ? fdopendir(dfd) : NULL;
        if (dp == NULL) {
            if (dfd >= 0)
                close(dfd);
            continue; /* gone, or reached through a link: not read from */
        }
        struct dirent *de;
        while (rc == AGT_OK && !sv->closed && (de = readdir(dp)) != NULL) {
            if (de->d_type != DT_REG && de->d_type != DT_UNKNOWN)
                continue;
            agti_buf_truncate(&rel, 0);
            if (dl > 0)
                agti_buf_printf(&rel, "%s/", agti_buf_cstr(&dir));
            agti_buf_puts(&rel, de->d_name);
            if (rel.oom) {
                rc = agti_oom();
                break;
            }
            if (!agti_sensitive_match(g->pol, agti_buf_cstr(&rel), NULL))
                continue;
            char *text = NULL;
            size_t len = 0;
            int r = read_at(dirfd(dp), de->d_name, &text, &len);
            rc = take_read(sv, r, text, len);
        }
        closedir(dp);
    }
    set_free(&seen);
    agti_buf_free(&dir);
    agti_buf_free(&rel);
    return rc;
}

/* The sensitive files the change set adds, deletes or changes (each side
 * on its own) and those it leaves as they are (tree_sources), then each
 * added or deleted file that is not sensitive by name and holds half of
 * one of them (WHY_MOVED). */
static int moves(agti_review_guard *g, size_t *cap)
{
    const agt_diff *d = agt_changes_diff(g->c);
    size_t n = agt_diff_file_count(d);
    sources sv = {NULL, 0, 0, false};
    int rc = AGT_OK;
    bool candidates = false;
    for (size_t i = 0; i < n && rc == AGT_OK && !sv.closed; i++) {
        int st = agt_diff_file_status(d, i);
        const char *op = agt_diff_file_old_path(d, i), *np = agt_diff_file_new_path(d, i);
        if (st == AGT_DIFF_ADDED || st == AGT_DIFF_DELETED)
            candidates = true;
        if (st == AGT_DIFF_RENAMED || st == AGT_DIFF_COPIED)
            continue; /* both names are sensitive already */
        for (int side = 0; side < 2 && !sv.closed && rc == AGT_OK; side++) {
            const char *p = side == 0 ? op : np;
            if (p == NULL || !agti_sensitive_match(g->pol, p, NULL))
                continue;
            char *text = NULL;
            size_t len = 0;
            int r = side_bytes(g->c, p, side == 0, &text, &len);
            rc = take_read(&sv, r, text, len);
        }
    }
    if (rc == AGT_OK && candidates && !sv.closed)
        rc = tree_sources(g, &sv);
    size_t files = 0;
    for (size_t i = 0; (sv.n > 0 || sv.closed) && rc == AGT_OK && i < n; i++) {
        int st = agt_diff_file_status(d, i);
        if (st != AGT_DIFF_ADDED && st != AGT_DIFF_DELETED)
            continue;
        bool base = st == AGT_DIFF_DELETED;
        const char *p = base ? agt_diff_file_old_path(d, i) : agt_diff_file_new_path(d, i);
        if (p == NULL || agti_sensitive_match(g->pol, p, NULL))
            continue;
        bool hit = sv.closed || ++files > PAIR_MAX_FILES;
        if (!hit) {
            char *text = NULL;
            size_t len = 0;
            int r = side_bytes(g->c, p, base, &text, &len);
            lineset cand = {NULL, NULL, 0, 0, 0};
            if (r == AGT_ENOMEM || (r == AGT_OK && !set_lines(&cand, text, len)))
                rc = agti_oom();
            hit = r != AGT_OK && r != AGT_ENOMEM; /* cannot be compared: fail closed */
            for (size_t k = 0; r == AGT_OK && rc == AGT_OK && !hit && k < sv.n; k++)
                hit = holds_half(&sv.v[k], &cand);
            set_free(&cand);
            free(text);
        }
        if (hit && rc == AGT_OK && !push(g, cap, p, WHY_MOVED))
            rc = agti_oom();
    }
    for (size_t k = 0; k < sv.n; k++)
        set_free(&sv.v[k]);
    free(sv.v);
    return rc;
}

int agti_review_guard_init(agti_review_guard *g, agt_call *call, agt_changes *c)
{
    return agti_review_guard_init_pol(g, agti_session_sensitive(agt_call_session(call)), c);
}

/* What a guard finds depends only on the change set (fixed once opened)
 * and the patterns: it is kept on the change set, for the patterns it was
 * found under, so that a review's calls (and a host judging every file)
 * read the candidates of moves() once. */
typedef struct guard_cache {
    uint64_t key; /* patterns_key() */
    const char **other, **why;
    size_t n;
} guard_cache;

static void cache_free(void *p)
{
    guard_cache *gc = p;
    if (gc == NULL)
        return;
    free(gc->other);
    free(gc->why);
    free(gc);
}

static uint64_t patterns_key(const agti_sensitive *pol)
{
    uint64_t h = 1469598103934665603ull;
    size_t n = agti_sensitive_count(pol);
    for (size_t i = 0; i < n; i++) {
        const char *p = agti_sensitive_pattern(pol, i);
        h = (line_hash(p, strlen(p) + 1) ^ h) * 1099511628211ull; /* the NUL separates */
    }
    return h;
}

int agti_review_guard_init_pol(agti_review_guard *g, const agti_sensitive *pol, agt_changes *c)
{
    memset(g, 0, sizeof *g);
    g->pol = pol;
    g->c = c;
    uint64_t key = patterns_key(pol);
    guard_cache *gc = c->guard_cache;
    if (gc == NULL || gc->key != key) {
        const agt_diff *d = agt_changes_diff(c);
        size_t n = agt_diff_file_count(d), cap = 0;
        int rc = AGT_OK;
        for (size_t i = 0; i < n && rc == AGT_OK; i++) {
            int st = agt_diff_file_status(d, i);
            if (st != AGT_DIFF_RENAMED && st != AGT_DIFF_COPIED)
                continue;
            const char *op = agt_diff_file_old_path(d, i), *np = agt_diff_file_new_path(d, i);
            if (op == NULL || np == NULL ||
                (!agti_sensitive_match(pol, op, NULL) && !agti_sensitive_match(pol, np, NULL)))
                continue;
            if (!push(g, &cap, op, WHY_RENAME) || !push(g, &cap, np, WHY_RENAME))
                rc = agti_oom();
        }
        if (rc == AGT_OK)
            rc = moves(g, &cap);
        guard_cache *ngc = rc == AGT_OK ? calloc(1, sizeof *ngc) : NULL;
        if (rc == AGT_OK && ngc == NULL)
            rc = agti_oom();
        if (rc != AGT_OK) {
            free(g->other);
            free(g->other_why);
            memset(g, 0, sizeof *g);
            return rc;
        }
        *ngc = (guard_cache){key, g->other, g->other_why, g->nother};
        if (c->guard_cache_free != NULL)
            c->guard_cache_free(c->guard_cache);
        c->guard_cache = gc = ngc;
        c->guard_cache_free = cache_free;
    }
    /* borrowed from the cache */
    g->other = gc->other;
    g->other_why = gc->why;
    g->nother = gc->n;
    if (c->workdir != NULL && c->workdir_fd >= 0) {
        agti_linkset_init(&g->links, g->pol, c->workdir);
        g->have_links = true;
    }
    return AGT_OK;
}

void agti_review_guard_free(agti_review_guard *g)
{
    if (g->have_links)
        agti_linkset_free(&g->links);
    memset(g, 0, sizeof *g);
}

/* The repository-relative form of path, as tree.c's lookup reads it. */
static const char *relative(const agti_review_guard *g, const char *path)
{
    const char *wd = g->c->workdir;
    if (path[0] == '/' && wd != NULL && strncmp(path, wd, strlen(wd)) == 0)
        path += strlen(wd);
    while (path[0] == '.' && path[1] == '/')
        path += 2;
    return path;
}

bool agti_review_guard_path(agti_review_guard *g, const char *path, const char **why)
{
    if (agti_sensitive_match(g->pol, path, why))
        return true;
    const char *rel = relative(g, path);
    /* a hard link first: a link to .env also holds all of it, and the
     * link is the better reason */
    if (g->have_links && rel[0] != '\0' && rel[0] != '/' &&
        agti_linkset_hit_at(&g->links, g->c->workdir_fd, rel)) {
        if (why)
            *why = WHY_LINK;
        return true;
    }
    for (size_t i = 0; i < g->nother; i++)
        if (strcmp(rel, g->other[i]) == 0) {
            if (why)
                *why = g->other_why[i];
            return true;
        }
    return false;
}

bool agti_review_guard_by_name(agti_review_guard *g, const char *path)
{
    if (agti_sensitive_match(g->pol, path, NULL))
        return true;
    const char *rel = relative(g, path);
    for (size_t i = 0; i < g->nother; i++)
        if (strcmp(rel, g->other[i]) == 0)
            return true;
    return false;
}

bool agti_review_guard_diff(agti_review_guard *g, const char *path, const char **why)
{
    if (agti_review_guard_path(g, path, why))
        return true;
    const agt_diff *d = agt_changes_diff(g->c);
    size_t i = 0;
    if (agt_diff_file_index(d, path, &i) != AGT_OK)
        return false;
    const char *op = agt_diff_file_old_path(d, i), *np = agt_diff_file_new_path(d, i);
    return (op != NULL && agti_review_guard_path(g, op, why)) ||
           (np != NULL && agti_review_guard_path(g, np, why));
}
