/* Glob: files whose path matches a glob, newest first. The walk reads only
 * directory entries (skip_stat); only matches are stat'ed, for the
 * modification time they are sorted by, during the walk and relative to the
 * match's open parent directory (fstatat on the walker's dirfd: no path is
 * resolved again from the root, no second thread to feed). */
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

typedef struct hit {
    char *path;
    int64_t mtime_ns;
} hit;

typedef struct glob_ctx {
    const agti_glob *g;
    agti_buf full; /* absolute path of the folder walked + "/", then a relpath */
    size_t dirlen; /* bytes of full up to and with that "/" */
    hit *hits;
    size_t n, cap;
    size_t sensitive;
    bool oom;
    /* The session's sensitive-file policy. */
    const struct agti_sensitive *pol;
} glob_ctx;

static int on_entry(const agti_walk_entry *e, void *payload)
{
    glob_ctx *c = payload;
    /* Symbolic links are not followed, as with rg --files. */
    if (e->type != AGTI_FS_FILE || e->is_symlink)
        return 0;
    if (!agti_glob_match(c->g, e->relpath, e->relpath_len, false))
        return 0;
    /* Judge the whole path: "credentials" is sensitive only under .aws/. */
    agti_buf_truncate(&c->full, c->dirlen);
    agti_buf_put(&c->full, e->relpath, e->relpath_len);
    if (c->full.oom) {
        c->oom = true;
        return 1;
    }
    if (agti_sensitive_match(c->pol, agti_buf_cstr(&c->full), NULL)) {
        c->sensitive++;
        return 0;
    }
    if (c->n == c->cap) {
        size_t ncap = c->cap ? c->cap * 2 : 64;
        hit *nh = realloc(c->hits, ncap * sizeof *nh);
        if (nh == NULL) {
            c->oom = true;
            return 1;
        }
        c->hits = nh;
        c->cap = ncap;
    }
    char *copy = agti_strndup(e->relpath, e->relpath_len);
    if (copy == NULL) {
        c->oom = true;
        return 1;
    }
    struct stat st;
    /* vanished meanwhile: sorts last */
    int64_t mtime = fstatat(e->dirfd, e->name, &st, AT_SYMLINK_NOFOLLOW) == 0
                        ? (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec
                        : 0;
    c->hits[c->n].path = copy;
    c->hits[c->n].mtime_ns = mtime;
    c->n++;
    return 0;
}

static int newest_first(const void *a, const void *b)
{
    const hit *x = a, *y = b;
    if (x->mtime_ns != y->mtime_ns)
        return x->mtime_ns > y->mtime_ns ? -1 : 1;
    return strcmp(x->path, y->path);
}

static void render(agti_buf *b, const glob_ctx *c, const agti_ws_path *dir, const char *pattern,
                   const agti_walk_result *wr, size_t max)
{
    bool prefix = strcmp(dir->rel, ".") != 0;
    size_t shown = c->n < max ? c->n : max;
    for (size_t i = 0; i < shown; i++) {
        if (prefix) {
            agti_buf_puts(b, dir->rel);
            agti_buf_putc(b, '/');
        }
        agti_ws_put_name(b, c->hits[i].path, strlen(c->hits[i].path));
        agti_buf_putc(b, '\n');
    }
    if (c->n == 0)
        agti_buf_printf(b, "No files match '%s' in %s.\n", pattern,
                        prefix ? dir->rel : "the workspace root");
    /* such patterns can never match: they are matched against relative paths */
    if (c->n == 0 && (pattern[0] == '/' || pattern[0] == '~' || strncmp(pattern, "../", 3) == 0 ||
                      strstr(pattern, "/../") != NULL))
        agti_buf_puts(b, "The pattern is matched against paths relative to the folder searched: "
                         "an absolute pattern must lie inside that folder, and ~ and '..' do "
                         "not work; give the folder as path and a relative pattern.\n");
    if (c->n > shown)
        agti_buf_printf(b,
                        "\nShowing the %zu most recently modified of %zu matching files; narrow "
                        "the pattern or the folder to see the others.\n",
                        shown, c->n);
    if (c->sensitive > 0)
        agti_buf_printf(b,
                        "%s%zu sensitive file%s matching the pattern %s left out (.env files, "
                        "private keys, credentials).\n",
                        c->n > shown || c->n == 0 ? "" : "\n", c->sensitive,
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
    agti_buf_puts(&c.full, dir.abs);
    agti_buf_putc(&c.full, '/');
    c.dirlen = c.full.len;
    c.pol = agti_session_sensitive(agt_call_session(call));
    agti_walk_result wr;
    memset(&wr, 0, sizeof wr);
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
    agti_walk_opts o;
    memset(&o, 0, sizeof o);
    o.include_ignored = include_ignored;
    /* The workspace root's ignore rules reach into a folder given as path. */
    agt_session *sess = agt_call_session(call);
    o.ignore_root = sess != NULL ? sess->root : NULL;
    o.skip_stat = true;
    o.time_budget_ms = GLOB_TIME_BUDGET_MS;
    rc = agti_walk_at(dir.loc.fd, dir.abs, &o, on_entry, &c, &wr);
    if (c.oom) {
        rc = agti_oom();
        goto out;
    }
    if (rc != AGT_OK) {
        char *msg = agti_strdup(agt_error_message());
        rc = agti_tool_fail(call, rc, "Glob could not list %s: %s.", dir.rel, msg ? msg : "error");
        free(msg);
        goto out;
    }
    if (c.n > 1)
        qsort(c.hits, c.n, sizeof *c.hits, newest_first);
    agti_buf b = AGTI_BUF_INIT;
    render(&b, &c, &dir, pattern, &wr,
           (size_t)agti_session_file_limit(agt_call_session(call), AGT_FILE_LIMIT_GLOB_RESULTS,
                                           AGTI_GLOB_MAX_RESULTS));
    rc = agti_ws_finish(call, &b);
out:
    for (size_t i = 0; i < c.n; i++)
        free(c.hits[i].path);
    free(c.hits);
    agti_buf_free(&c.full);
    agti_walk_result_clear(&wr);
    agti_ws_path_free(&dir);
    agti_glob_free(g);
    return rc;
}
