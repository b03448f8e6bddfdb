/* Glob: files whose path matches a glob, newest first. The walk reads only
 * directory entries (skip_stat); only matches are stat'ed, for the
 * modification time they are sorted by, during the walk and relative to the
 * match's open parent directory (fstatat on the walker's dirfd: no path is
 * resolved again from the root). A big tree is walked by one thread per CPU
 * (a small one by the calling thread alone, see agti_walk_opts.threads);
 * each worker keeps only its newest `max` matches (a heap on the result's
 * own order, newest first and then by path), so the result is the same
 * whatever thread saw which file. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dispatch/dispatch_internal.h"
#include "fs/fs.h"
#include "session/fs_settings.h"
#include "session/session_internal.h"
#include "tools_internal.h"
#include "ws.h"

/* A Glob call stops walking after this long and says so. */
#define GLOB_TIME_BUDGET_MS 20000
/* Walk threads at most (one per CPU up to this). */
#define GLOB_MAX_THREADS 8

typedef struct hit {
    char *path;
    int64_t mtime_ns;
} hit;

/* What one walk worker found: its newest `max` matches in a heap whose top
 * is the one that would be dropped first. */
typedef struct glob_part {
    agti_buf full; /* absolute path of the folder walked + "/", then a relpath */
    hit *heap;
    size_t nheap, cap;
    size_t matches;
    size_t sensitive;
    bool oom;
} glob_part;

typedef struct glob_ctx {
    const agti_glob *g;
    const char *dir; /* absolute path of the folder walked */
    size_t dirlen;
    size_t max;
    glob_part *parts; /* one per walk worker */
    /* The session's sensitive-file policy. */
    const struct agti_sensitive *pol;
    /* Hard links to the workspace's sensitive files (shared by the workers). */
    agti_linkset links;
} glob_ctx;

/* The result's order: newer first, then by path. */
static int hit_order(int64_t mtime_a, const char *path_a, int64_t mtime_b, const char *path_b)
{
    if (mtime_a != mtime_b)
        return mtime_a > mtime_b ? -1 : 1;
    return strcmp(path_a, path_b);
}

static int newest_first(const void *a, const void *b)
{
    const hit *x = a, *y = b;
    return hit_order(x->mtime_ns, x->path, y->mtime_ns, y->path);
}

/* Heap on "comes later in the result": the top is the last kept. */
static bool later(const hit *a, const hit *b)
{
    return newest_first(a, b) > 0;
}

static void sift_down(hit *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && later(&h[l], &h[m]))
            m = l;
        if (r < n && later(&h[r], &h[m]))
            m = r;
        if (m == i)
            return;
        hit t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

static void sift_up(hit *h, size_t i)
{
    while (i > 0) {
        size_t up = (i - 1) / 2;
        if (!later(&h[i], &h[up]))
            return;
        hit t = h[i];
        h[i] = h[up];
        h[up] = t;
        i = up;
    }
}

/* Keeps the match if it is among the part's newest `max`. */
static int keep(glob_part *pt, size_t max, const char *rel, size_t len, int64_t mtime)
{
    if (max == 0)
        return 0;
    bool full = pt->nheap == max;
    if (full && hit_order(mtime, rel, pt->heap[0].mtime_ns, pt->heap[0].path) >= 0)
        return 0;
    char *copy = agti_strndup(rel, len);
    if (copy == NULL)
        return -1;
    if (full) {
        free(pt->heap[0].path);
        pt->heap[0] = (hit){copy, mtime};
        sift_down(pt->heap, pt->nheap, 0);
        return 0;
    }
    if (pt->nheap == pt->cap) {
        size_t nc = pt->cap ? pt->cap * 2 : 64;
        if (nc > max)
            nc = max;
        hit *nh = realloc(pt->heap, nc * sizeof *nh);
        if (nh == NULL) {
            free(copy);
            return -1;
        }
        pt->heap = nh;
        pt->cap = nc;
    }
    pt->heap[pt->nheap] = (hit){copy, mtime};
    sift_up(pt->heap, pt->nheap++);
    return 0;
}

static int on_entry(const agti_walk_entry *e, void *payload)
{
    glob_ctx *c = payload;
    glob_part *pt = &c->parts[e->worker];
    /* Symbolic links are not followed, as with rg --files. */
    if (e->type != AGTI_FS_FILE || e->is_symlink)
        return 0;
    if (!agti_glob_match(c->g, e->relpath, e->relpath_len, false))
        return 0;
    /* Judge the whole path: "credentials" is sensitive only under .aws/. */
    if (pt->full.len == 0) {
        agti_buf_puts(&pt->full, c->dir);
        agti_buf_putc(&pt->full, '/');
    }
    agti_buf_truncate(&pt->full, c->dirlen + 1);
    agti_buf_put(&pt->full, e->relpath, e->relpath_len);
    if (pt->full.oom) {
        pt->oom = true;
        return 1;
    }
    if (agti_sensitive_match(c->pol, agti_buf_cstr(&pt->full), NULL)) {
        pt->sensitive++;
        return 0;
    }
    struct stat st;
    /* vanished meanwhile: sorts last */
    bool there = fstatat(e->dirfd, e->name, &st, AT_SYMLINK_NOFOLLOW) == 0;
    if (there && agti_linkset_hit(&c->links, &st)) { /* ln .env notes.txt */
        pt->sensitive++;
        return 0;
    }
    pt->matches++;
    int64_t mtime = there ? (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec : 0;
    if (keep(pt, c->max, e->relpath, e->relpath_len, mtime) != 0) {
        pt->oom = true;
        return 1;
    }
    return 0;
}

/* The newest `max` of all parts, in the result's order. */
typedef struct glob_hits {
    hit *v;
    size_t n;     /* kept, sorted */
    size_t total; /* matching files */
    size_t sensitive;
} glob_hits;

static int gather(const glob_ctx *c, size_t nparts, glob_hits *out)
{
    memset(out, 0, sizeof *out);
    size_t kept = 0;
    for (size_t i = 0; i < nparts; i++) {
        kept += c->parts[i].nheap;
        out->total += c->parts[i].matches;
        out->sensitive += c->parts[i].sensitive;
    }
    out->v = malloc((kept ? kept : 1) * sizeof *out->v);
    if (out->v == NULL)
        return agti_oom();
    for (size_t i = 0; i < nparts; i++) {
        glob_part *pt = &c->parts[i];
        if (pt->nheap > 0)
            memcpy(out->v + out->n, pt->heap, pt->nheap * sizeof *pt->heap);
        out->n += pt->nheap;
        pt->nheap = 0; /* moved */
    }
    if (out->n > 1)
        qsort(out->v, out->n, sizeof *out->v, newest_first);
    while (out->n > c->max)
        free(out->v[--out->n].path);
    return AGT_OK;
}

static void render(agti_buf *b, const glob_hits *c, const agti_ws_path *dir, const char *pattern,
                   const agti_walk_result *wr)
{
    bool prefix = strcmp(dir->rel, ".") != 0;
    size_t shown = c->n;
    for (size_t i = 0; i < shown; i++) {
        if (prefix) {
            agti_buf_puts(b, dir->rel);
            agti_buf_putc(b, '/');
        }
        agti_ws_put_name(b, c->v[i].path, strlen(c->v[i].path));
        agti_buf_putc(b, '\n');
    }
    if (c->total == 0)
        agti_buf_printf(b, "No files match '%s' in %s.\n", pattern,
                        prefix ? dir->rel : "the workspace root");
    /* such patterns can never match: they are matched against relative paths */
    if (c->total == 0 && (pattern[0] == '/' || pattern[0] == '~' ||
                          strncmp(pattern, "../", 3) == 0 || strstr(pattern, "/../") != NULL))
        agti_buf_puts(b, "The pattern is matched against paths relative to the folder searched: "
                         "an absolute pattern must lie inside that folder, and ~ and '..' do "
                         "not work; give the folder as path and a relative pattern.\n");
    if (c->total > shown)
        agti_buf_printf(b,
                        "\nShowing the %zu most recently modified of %zu matching files; narrow "
                        "the pattern or the folder to see the others.\n",
                        shown, c->total);
    if (c->sensitive > 0)
        agti_buf_printf(b,
                        "%s%zu sensitive file%s matching the pattern %s left out (.env files, "
                        "private keys, credentials).\n",
                        c->total > shown || c->total == 0 ? "" : "\n", c->sensitive,
                        c->sensitive == 1 ? "" : "s", c->sensitive == 1 ? "was" : "were");
    if (wr->timed_out)
        agti_buf_printf(b, "The search stopped after %d s; the list may be incomplete.\n",
                        GLOB_TIME_BUDGET_MS / 1000);
    for (size_t i = 0; i < wr->nwarnings && i < 5; i++)
        agti_buf_printf(b, "Warning: %s\n", wr->warnings[i]);
    agti_buf_truncate(b, b->len > 0 && b->ptr[b->len - 1] == '\n' ? b->len - 1 : b->len);
}

int agti_tool_glob(agt_call *call, void *payload)
{
    (void)payload;
    json_t *args = agti_call_args_json(call);
    const char *pattern = json_string_value(json_object_get(args, "pattern"));
    const char *path = json_string_value(json_object_get(args, "path"));
    bool include_ignored = json_is_true(json_object_get(args, "include_ignored"));
    if (pattern == NULL || pattern[0] == '\0')
        return agti_tool_fail(call, AGT_EINVAL, "Glob needs a non-empty \"pattern\".");
    agti_glob *g = NULL;
    int rc = agti_glob_compile(&g, pattern, 0);
    if (rc == AGT_ENOMEM)
        return rc;
    if (rc != AGT_OK)
        return agti_tool_fail(call, rc,
                              "Invalid glob pattern '%s': %s. Escape a literal character "
                              "with a backslash.",
                              pattern, agt_error_message());
    agti_ws_path dir;
    rc = agti_ws_resolve(call, path ? path : ".", AGTI_WS_OPEN | AGTI_WS_MISSING, O_PATH, false,
                         &dir);
    if (rc != AGT_OK) {
        agti_glob_free(g);
        return rc;
    }
    size_t dl = strlen(dir.abs);
    if (pattern[0] == '/' && strncmp(pattern, dir.abs, dl) == 0 && pattern[dl] == '/' &&
        pattern[dl + 1] != '\0') {
        /* An absolute pattern inside the folder searched (models put the
         * repository's absolute path in front): match its part after the
         * folder, anchored there ("./" keeps a pattern without '/' from
         * matching at any depth, as the absolute one would not). */
        const char *rest = pattern + dl + 1;
        char *rel = agti_aprintf("%s%s", strchr(rest, '/') != NULL ? "" : "./", rest);
        agti_glob *g2 = NULL;
        rc = rel != NULL ? agti_glob_compile(&g2, rel, 0) : agti_oom();
        free(rel);
        if (rc == AGT_ENOMEM) {
            agti_glob_free(g);
            agti_ws_path_free(&dir);
            return rc;
        }
        if (rc == AGT_OK) {
            agti_glob_free(g);
            g = g2;
        }
    }
    struct stat st;
    glob_ctx c;
    memset(&c, 0, sizeof c);
    c.g = g;
    c.dir = dir.abs;
    c.dirlen = strlen(dir.abs);
    c.pol = agti_session_sensitive(agt_call_session(call));
    agt_session *sess = agt_call_session(call);
    agti_linkset_init(&c.links, c.pol, sess ? sess->root : NULL);
    int64_t max = agti_session_file_limit(agt_call_session(call), AGT_FILE_LIMIT_GLOB_RESULTS,
                                          AGTI_GLOB_MAX_RESULTS);
    c.max = max > 0 ? (size_t)max : 0;
    agti_walk_opts o;
    memset(&o, 0, sizeof o);
    o.threads = agti_walk_threads(GLOB_MAX_THREADS);
    c.parts = calloc(o.threads, sizeof *c.parts);
    agti_walk_result wr;
    memset(&wr, 0, sizeof wr);
    glob_hits hits;
    memset(&hits, 0, sizeof hits);
    if (c.parts == NULL) {
        rc = agti_oom();
        goto out;
    }
    if (!dir.loc.exists || dir.loc.fd < 0) {
        rc = dir.loc.exists ? agti_ws_open_failed(call, &dir) : agti_ws_missing(call, &dir, "");
        goto out;
    }
    st = dir.loc.st;
    if (!S_ISDIR(st.st_mode)) {
        rc = agti_tool_fail(call, AGT_EINVAL,
                            "%s is a file, not a folder; give Glob a folder as path (Read reads "
                            "a file).",
                            dir.rel);
        goto out;
    }
    o.include_ignored = include_ignored;
    /* The workspace root's ignore rules reach into a folder given as path. */
    o.ignore_root = sess != NULL ? sess->root : NULL;
    o.skip_stat = true;
    o.time_budget_ms = GLOB_TIME_BUDGET_MS;
    rc = agti_walk_at(dir.loc.fd, dir.abs, &o, on_entry, &c, &wr);
    for (size_t i = 0; i < o.threads; i++)
        if (c.parts[i].oom) {
            rc = agti_oom();
            goto out;
        }
    if (rc != AGT_OK) {
        char *msg = agti_strdup(agt_error_message());
        rc = agti_tool_fail(call, rc, "Glob could not list %s: %s.", dir.rel, msg ? msg : "error");
        free(msg);
        goto out;
    }
    rc = gather(&c, o.threads, &hits);
    if (rc != AGT_OK)
        goto out;
    agti_buf b = AGTI_BUF_INIT;
    render(&b, &hits, &dir, pattern, &wr);
    rc = agti_ws_finish(call, &b);
out:
    for (size_t i = 0; i < hits.n; i++)
        free(hits.v[i].path);
    free(hits.v);
    for (size_t i = 0; c.parts != NULL && i < o.threads; i++) {
        for (size_t j = 0; j < c.parts[i].nheap; j++)
            free(c.parts[i].heap[j].path);
        free(c.parts[i].heap);
        agti_buf_free(&c.parts[i].full);
    }
    free(c.parts);
    agti_walk_result_clear(&wr);
    agti_linkset_free(&c.links);
    agti_ws_path_free(&dir);
    agti_glob_free(g);
    return rc;
}
