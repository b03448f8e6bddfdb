/* Shared helpers of the workspace file tools. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dispatch/dispatch_internal.h"
#include "session/events_internal.h"
#include "fs/fs.h"
#include "session/fs_settings.h"
#include "session/policy.h"
#include "session/seen.h"
#include "session/session_internal.h"
#include "tools_internal.h"
#include "ws.h"

int agti_ws_finish(agt_call *call, agti_buf *b)
{
    /* A NUL past a file's binary probe (a Grep line) would end the text
     * there, dropping the rest of the result: shown as U+FFFD instead. */
    if (!b->oom && b->len > 0 && memchr(b->ptr, '\0', b->len) != NULL) {
        agti_buf clean = AGTI_BUF_INIT;
        for (size_t i = 0; i < b->len; i++) {
            if (b->ptr[i] == '\0')
                agti_buf_put(&clean, "\xEF\xBF\xBD", 3);
            else
                agti_buf_putc(&clean, b->ptr[i]);
        }
        agti_buf_free(b);
        *b = clean;
    }
    return agti_call_take_text(call, b);
}

void agti_ws_put_name(agti_buf *b, const char *name, size_t n)
{
    agti_fs_name_escape(b, name, n);
}

static char *escaped(const char *s)
{
    agti_buf b = AGTI_BUF_INIT;
    agti_fs_name_escape(&b, s, strlen(s));
    agti_buf_putc(&b, '\0');
    char *r = agti_buf_detach(&b);
    if (r == NULL)
        agti_oom();
    return r;
}

void agti_ws_path_free(agti_ws_path *p)
{
    if (p == NULL)
        return;
    free(p->abs);
    free(p->rel);
    p->abs = p->rel = NULL;
    agti_fsloc_clear(&p->loc);
    agti_fsroot_free(p->root);
    p->root = NULL;
}

int agti_ws_missing(agt_call *call, const agti_ws_path *p, const char *hint)
{
    const char *given = p->given ? p->given : p->rel;
    char *g = escaped(given);
    if (g == NULL)
        return AGT_ENOMEM;
    int rc;
    if (!p->loc.via_link) {
        rc = agti_tool_fail(call, AGT_ENOTFOUND, "%s does not exist.%s", p->rel, hint);
    } else if (p->loc.dangling && p->loc.link_target != NULL) {
        /* The link stays inside (else the path was refused): its text is
         * the workspace's own. */
        char *t = escaped(p->loc.link_target);
        rc = t == NULL ? AGT_ENOMEM
                       : agti_tool_fail(call, AGT_ENOTFOUND,
                                        "%s is a symbolic link to %s, which does not exist.%s", g,
                                        t, hint);
        free(t);
    } else {
        rc = agti_tool_fail(call, AGT_ENOTFOUND,
                            "%s does not exist (through a symbolic link it is %s).%s", g, p->rel,
                            hint);
    }
    free(g);
    return rc;
}

/* The lexical absolute form of a path argument (a file URI decoded), NULL
 * for "~..." and for a path the fs engine refuses (it says why later). */
static char *lexical(const agt_session *s, const char *path)
{
    if (path[0] == '~')
        return NULL;
    char *a = NULL;
    if (agti_path_absolute(s->root, NULL, path, &a) != AGT_OK)
        return NULL;
    char *n = agti_path_normalize(a);
    free(a);
    return n;
}

/* The bases of a call: root, allowed directories, and for reading the
 * session's task log folder (read-only). The plan file, when it lies
 * outside all of them, gets a root of its own: its folder, in which only
 * its name is looked up. */
static int bases(agt_call *call, const char *path, unsigned how, agti_fsroot **out,
                 const char **name, bool *plan)
{
    agt_session *s = agt_call_session(call);
    *out = NULL;
    *name = path;
    *plan = false;
    const char *pf = s->policy != NULL ? s->policy->plan_file : NULL;
    char *lex = pf != NULL ? lexical(s, path) : NULL;
    if (pf != NULL && lex != NULL && strcmp(lex, pf) == 0 && !agti_path_is_within(pf, s->root)) {
        size_t nextra = 0;
        const char *const *extra = agti_session_allowed_dirs(s, &nextra);
        bool in_allowed = false;
        for (size_t i = 0; i < nextra; i++)
            in_allowed = in_allowed || agti_path_is_within(pf, extra[i]);
        if (!in_allowed) {
            const char *sl = strrchr(pf, '/');
            char *dir = sl == pf ? agti_strdup("/") : agti_strndup(pf, (size_t)(sl - pf));
            int rc = dir ? agti_fsroot_new(out, dir, NULL) : AGT_ENOMEM;
            free(dir);
            free(lex);
            if (rc == AGT_OK) {
                *name = sl + 1;
                *plan = true;
            }
            return rc;
        }
    }
    free(lex);
    int rc = agti_fsroot_new(out, s->root, NULL);
    if (rc != AGT_OK)
        return rc;
    /* a folder outside every other one the gate admitted for this call
     * (approved once, or yolo/auto mode: lib/session/outside.c); first, so
     * it wins over a read-only folder of the same path */
    if (call->outside_admitted && call->outside_dir != NULL &&
        agti_fsroot_add(*out, call->outside_dir, call->outside_write ? 0 : AGTI_BASE_READONLY) ==
            AGT_ENOMEM)
        rc = AGT_ENOMEM;
    size_t nextra = 0;
    const char *const *extra = agti_session_allowed_dirs(s, &nextra);
    for (size_t i = 0; rc == AGT_OK && i < nextra; i++) {
        rc = agti_fsroot_add(*out, extra[i], 0);
        if (rc != AGT_ENOMEM)
            rc = AGT_OK; /* a directory removed since it was added admits nothing */
    }
    extra = agti_session_readable_dirs(s, &nextra);
    if (how & (AGTI_WS_WRITE | AGTI_WS_CHANGE))
        nextra = 0; /* read-only folders: only for reading */
    for (size_t i = 0; rc == AGT_OK && i < nextra; i++) {
        rc = agti_fsroot_add(*out, extra[i], AGTI_BASE_READONLY);
        if (rc != AGT_ENOMEM)
            rc = AGT_OK;
    }
    if (rc == AGT_OK && !(how & (AGTI_WS_WRITE | AGTI_WS_CHANGE)) && s->bg != NULL &&
        s->bg->log_dir != NULL &&
        agti_fsroot_add(*out, s->bg->log_dir, AGTI_BASE_READONLY) == AGT_ENOMEM)
        rc = AGT_ENOMEM;
    if (rc != AGT_OK) {
        agti_fsroot_free(*out);
        *out = NULL;
    }
    return rc;
}

static int locate(agti_fsroot *r, const char *path, unsigned lh, int oflags, agti_fsloc *loc)
{
    int rc = agti_fs_locate(r, path, lh, oflags, loc);
    return rc;
}

int agti_ws_resolve(agt_call *call, const char *user_path, unsigned how, int oflags,
                    bool refuse_sensitive, agti_ws_path *out)
{
    memset(out, 0, sizeof *out);
    out->loc.fd = out->loc.dirfd = -1;
    out->given = user_path;
    char *decoded = NULL;
    if (strchr(user_path, '\\') != NULL) {
        decoded = agti_fs_name_unescape(user_path, NULL);
        if (decoded == NULL)
            return agt_error_code() == AGT_ENOMEM
                       ? AGT_ENOMEM
                       : agti_tool_fail(call, AGT_EINVAL,
                                        "Cannot use path '%s': \\x00 (a NUL byte) cannot be part "
                                        "of a file name.",
                                        user_path);
    }
    const char *path = decoded ? decoded : user_path;
    const char *name = path;
    bool plan = false;
    int rc = bases(call, path, how, &out->root, &name, &plan);
    if (rc != AGT_OK)
        goto fail_msg;
    unsigned lh = (how & AGTI_WS_OPEN) ? AGTI_LOC_OPEN : 0;
    if (plan)
        lh |= AGTI_LOC_NOFOLLOW;
    rc = locate(out->root, name, lh, oflags, &out->loc);
    if (decoded != NULL && !plan && (rc == AGT_ENOTFOUND || (rc == AGT_OK && !out->loc.exists))) {
        /* A literal backslash in a name the model typed as it is. */
        agti_fsloc lit;
        if (locate(out->root, user_path, lh, oflags, &lit) == AGT_OK && lit.exists) {
            agti_fsloc_clear(&out->loc);
            out->loc = lit;
            rc = AGT_OK;
            path = name = user_path;
        } else {
            agti_fsloc_clear(&lit);
        }
    }
    if (rc == AGT_OK && plan && out->loc.exists && S_ISLNK(out->loc.st.st_mode)) {
        rc = agti_tool_fail(call, AGT_EDENIED,
                            "Cannot use path '%s': the plan file is a symbolic link; the file "
                            "tools do not follow it.",
                            user_path);
        goto fail;
    }
    const char *reason = NULL;
    if ((rc == AGT_OK || rc == AGT_ENOTFOUND) && out->loc.abs != NULL && refuse_sensitive &&
        agti_sensitive_match(agti_session_sensitive(agt_call_session(call)), out->loc.abs,
                             &reason)) {
        char *r = escaped(out->loc.rel ? out->loc.rel : out->loc.abs);
        rc = r == NULL ? AGT_ENOMEM
                       : agti_tool_fail(call, AGT_EDENIED,
                                        "%s is a sensitive file (%s); the file tools never read or "
                                        "write it. Ask the user if you need something from it.",
                                        r, reason ? reason : "secrets");
        free(r);
        goto fail;
    }
    if (rc == AGT_OK && refuse_sensitive && out->loc.exists && S_ISREG(out->loc.st.st_mode) &&
        out->loc.st.st_nlink > 1) {
        /* another name of a sensitive file (ln .env notes.txt): the
         * workspace's sensitive files with several links, by inode */
        agt_session *s = agt_call_session(call);
        agti_linkset ls;
        agti_linkset_init(&ls, agti_session_sensitive(s), s ? s->root : NULL);
        bool hit = agti_linkset_hit(&ls, &out->loc.st);
        agti_linkset_free(&ls);
        if (hit) {
            char *r = escaped(out->loc.rel ? out->loc.rel : out->loc.abs);
            rc = r == NULL ? AGT_ENOMEM
                           : agti_tool_fail(call, AGT_EDENIED,
                                            "%s is a sensitive file (a hard link to a sensitive "
                                            "file); the file tools never read or write it. Ask "
                                            "the user if you need something from it.",
                                            r);
            free(r);
            goto fail;
        }
    }
    if ((rc == AGT_OK || rc == AGT_ENOTFOUND) && (how & (AGTI_WS_WRITE | AGTI_WS_CHANGE)) &&
        out->loc.readonly) {
        rc = agti_tool_fail(call, AGT_EDENIED,
                            "Cannot use path '%s': it is in a folder the file tools only read.",
                            user_path);
        goto fail;
    }
    if (rc == AGT_ENOTFOUND && (how & AGTI_WS_WRITE)) {
        agti_fsloc_clear(&out->loc);
        rc = locate(out->root, name, lh | AGTI_LOC_MKDIRS, oflags, &out->loc);
    }
    if (rc == AGT_ENOTFOUND ||
        (rc == AGT_OK && !out->loc.exists && !(how & AGTI_WS_WRITE) && !(how & AGTI_WS_MISSING))) {
        out->abs = agti_strdup(out->loc.abs ? out->loc.abs : path);
        out->rel = escaped(out->loc.rel ? out->loc.rel : path);
        if (out->abs == NULL || out->rel == NULL) {
            rc = AGT_ENOMEM;
            goto fail;
        }
        if (rc == AGT_ENOTFOUND || !(how & AGTI_WS_MISSING)) {
            rc = agti_ws_missing(call, out, " Check the path (Glob finds files by name).");
            goto fail;
        }
    }
    if (rc != AGT_OK)
        goto fail_msg;
    out->abs = agti_strdup(out->loc.abs);
    out->rel = escaped(plan ? out->loc.abs : out->loc.rel);
    if (out->abs == NULL || out->rel == NULL) {
        rc = AGT_ENOMEM;
        goto fail;
    }
    agt_session *sess = agt_call_session(call);
    if ((how & AGTI_WS_CHANGE) && sess->mode == AGT_MODE_PLAN &&
        (sess->policy->plan_file == NULL || strcmp(out->abs, sess->policy->plan_file) != 0)) {
        /* The plan gate judged the path by name before the call; what it
         * leads to now is checked again, so a swap cannot change another
         * file in plan mode. */
        rc = agti_tool_fail(call, AGT_EDENIED,
                            "In plan mode only the plan file may be changed, and '%s' does not "
                            "lead to it (any more).",
                            user_path);
        goto fail;
    }
    if (strlen(out->abs) >= PATH_MAX) {
        rc = agti_tool_fail(call, AGT_EINVAL,
                            "Cannot use path '%s': it is %zu bytes long as an absolute path; the "
                            "system limit is %d.",
                            user_path, strlen(out->abs), PATH_MAX - 1);
        goto fail;
    }
    free(decoded);
    return AGT_OK;
fail_msg:
    if (rc != AGT_ENOMEM) {
        char *copy = agti_strdup(agt_error_message());
        if (copy == NULL) {
            rc = agti_oom();
            goto fail;
        }
        size_t cl = strlen(copy);
        while (cl > 0 && copy[cl - 1] == '.')
            copy[--cl] = '\0';
        rc = agti_tool_fail(call, rc, "Cannot use path '%s': %s.", user_path, copy);
        free(copy);
    }
fail:
    agti_fsloc_undo_dirs(&out->loc);
    agti_ws_path_free(out);
    free(decoded);
    return rc;
}

int agti_ws_open_failed(agt_call *call, const agti_ws_path *p)
{
    int e = p->loc.open_errno;
    if (e == ENOENT || e == ENOTDIR)
        return agti_ws_missing(call, p, " Check the path (Glob finds files by name).");
    if (e == EACCES || e == EPERM)
        return agti_tool_fail(call, AGT_EDENIED, "%s cannot be opened: permission denied.", p->rel);
    if (e == ELOOP)
        return agti_tool_fail(call, AGT_EIO,
                              "%s changed into a symbolic link while it was opened; try again.",
                              p->rel);
    return agti_tool_fail(call, AGT_EIO, "%s cannot be opened: %s.", p->rel, strerror(e));
}

int agti_ws_check_seen(agt_call *call, const agti_ws_path *p, const char *tool, const char *text,
                       size_t len, bool overwrite)
{
    agti_buf msg = AGTI_BUF_INIT;
    int rc =
        agti_seen_check(agt_call_session(call), p->abs, p->rel, tool, text, len, overwrite, &msg);
    if (rc == AGT_ESTATE)
        rc = agti_tool_fail(call, AGT_ESTATE, "%s", agti_buf_cstr(&msg));
    else if (rc != AGT_OK)
        rc = agti_oom();
    agti_buf_free(&msg);
    return rc;
}

void agti_ws_record_seen(agt_call *call, const agti_ws_path *p, const char *text, size_t len)
{
    /* On failure the record is dropped: the file then counts as not read. */
    (void)agti_seen_record_text(agt_call_session(call), p->abs, text, len);
}

int agti_ws_load(agt_call *call, const agti_ws_path *p, size_t max, char **data, size_t *len)
{
    *data = NULL;
    *len = 0;
    int fd = p->loc.fd;
    if (fd < 0)
        return agti_ws_open_failed(call, p);
    const struct stat st = p->loc.st;
    if (S_ISDIR(st.st_mode)) {
        return agti_tool_fail(call, AGT_EINVAL,
                              "%s is a directory, not a file. Use Glob to list its files.", p->rel);
    }
    if (!S_ISREG(st.st_mode)) {
        return agti_tool_fail(call, AGT_EINVAL,
                              "%s is not a regular file (a device, socket or pipe).", p->rel);
    }
    if ((uint64_t)st.st_size > max) {
        return agti_tool_fail(call, AGT_ELIMIT, "%s is too large: %lld bytes (the limit is %zu).",
                              p->rel, (long long)st.st_size, max);
    }
    size_t cap = (size_t)st.st_size, n = 0;
    char *buf = malloc(cap + 1);
    if (buf == NULL)
        return agti_oom();
    /* The file may grow while it is read: stop at the size seen by fstat. */
    while (n < cap) {
        ssize_t r = pread(fd, buf + n, cap - n, (off_t)n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            return agti_tool_fail(call, AGT_EIO, "%s could not be read: %s.", p->rel, strerror(e));
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return AGT_OK;
}

static bool has(const unsigned char *h, size_t n, size_t at, const char *lit)
{
    size_t l = strlen(lit);
    return n >= at + l && memcmp(h + at, lit, l) == 0;
}

const char *agti_ws_media_kind(const unsigned char *h, size_t n, const char **mime)
{
    static const struct {
        size_t at;
        const char *magic;
        const char *kind, *mime;
    } table[] = {
        {0, "\x89PNG\r\n\x1a\n", "image", "image/png"},
        {0, "\xff\xd8\xff", "image", "image/jpeg"},
        {0, "GIF87a", "image", "image/gif"},
        {0, "GIF89a", "image", "image/gif"},
        {0, "II*", "image", "image/tiff"},
        {0, "MM", "image", NULL}, /* checked below: "MM\0*" */
        {0, "BM", "image", "image/bmp"},
    };
    *mime = NULL;
    if (has(h, n, 0, "RIFF") && n >= 12) {
        if (has(h, n, 8, "WEBP"))
            return *mime = "image/webp", "image";
        if (has(h, n, 8, "AVI "))
            return *mime = "video/x-msvideo", "video";
        return NULL;
    }
    if (n >= 12 && has(h, n, 4, "ftyp")) {
        if (has(h, n, 8, "avif") || has(h, n, 8, "avis"))
            return *mime = "image/avif", "image";
        if (has(h, n, 8, "heic") || has(h, n, 8, "heix") || has(h, n, 8, "mif1"))
            return *mime = "image/heic", "image";
        if (has(h, n, 8, "qt  "))
            return *mime = "video/quicktime", "video";
        if (has(h, n, 8, "3gp"))
            return *mime = "video/3gpp", "video";
        if (has(h, n, 8, "M4A ") || has(h, n, 8, "M4B "))
            return NULL; /* audio */
        return *mime = "video/mp4", "video";
    }
    if (has(h, n, 0, "\x1a\x45\xdf\xa3")) {
        /* EBML: the DocType element (0x42 0x82) says webm or matroska. */
        size_t lim = n < 64 ? n : 64;
        for (size_t i = 4; i + 6 < lim; i++)
            if (h[i] == 0x42 && h[i + 1] == 0x82 && has(h, lim, i + 3, "webm"))
                return *mime = "video/webm", "video";
        return *mime = "video/x-matroska", "video";
    }
    if (n >= 4 && h[0] == 0 && h[1] == 0 && h[2] == 1 && (h[3] == 0xba || h[3] == 0xb3))
        return *mime = "video/mpeg", "video";
    if (n >= 4 && h[0] == 0 && h[1] == 0 && h[2] == 1 && h[3] == 0 && n >= 6 && h[4] != 0)
        return *mime = "image/x-icon", "image";
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (!has(h, n, table[i].at, table[i].magic))
            continue;
        if (table[i].mime == NULL) {
            if (n >= 4 && h[2] == 0 && h[3] == '*')
                return *mime = "image/tiff", "image";
            continue;
        }
        if (strcmp(table[i].magic, "II*") == 0 && (n < 4 || h[3] != 0))
            continue;
        if (strcmp(table[i].magic, "BM") == 0 &&
            (n < 14 || h[6] != 0 || h[7] != 0 || h[8] != 0 || h[9] != 0))
            continue;
        *mime = table[i].mime;
        return table[i].kind;
    }
    return NULL;
}

size_t agti_ws_line_of(const char *text, size_t off)
{
    size_t line = 1;
    const char *p = text, *end = text + off;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (nl == NULL)
            break;
        line++;
        p = nl + 1;
    }
    return line;
}
