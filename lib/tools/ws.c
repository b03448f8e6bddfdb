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
#include "fs/fs.h"
#include "session/fs_settings.h"
#include "session/policy.h"
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
    int rc = b->oom ? agti_oom() : agt_call_set_text(call, agti_buf_cstr(b));
    agti_buf_free(b);
    return rc;
}

void agti_ws_path_free(agti_ws_path *p)
{
    if (p == NULL)
        return;
    free(p->abs);
    free(p->rel);
    p->abs = p->rel = NULL;
}

int agti_ws_missing(agt_call *call, const agti_ws_path *p, const char *hint)
{
    agt_session *s = agt_call_session(call);
    const char *given = p->given;
    char *lex = NULL, *norm = NULL;
    if (given != NULL && given[0] != '\0' && given[0] != '~' && s != NULL && s->root != NULL) {
        lex = given[0] == '/' ? agti_strdup(given) : agti_aprintf("%s/%s", s->root, given);
        norm = lex != NULL ? agti_path_normalize(lex) : NULL;
        free(lex);
    }
    int rc;
    const char *lrel = norm;
    if (norm != NULL && agti_path_is_within(norm, s->root)) {
        size_t rl = strlen(s->root);
        lrel = norm[rl] == '\0' ? "." : norm + rl + (strcmp(s->root, "/") != 0);
    }
    if (lrel == NULL || strcmp(lrel, p->rel) == 0) {
        rc = agti_tool_fail(call, AGT_ENOTFOUND, "%s does not exist.%s", p->rel, hint);
    } else {
        /* The given path and the resolved one differ in more than spelling:
         * a symbolic link led to the missing file, so name both. */
        struct stat st;
        char target[PATH_MAX];
        ssize_t n = -1;
        if (lstat(norm, &st) == 0 && S_ISLNK(st.st_mode))
            n = readlink(norm, target, sizeof target - 1);
        if (n >= 0) {
            target[n] = '\0';
            rc = agti_tool_fail(call, AGT_ENOTFOUND,
                                "%s is a symbolic link to %s, which does not exist.%s", given,
                                target, hint);
        } else {
            rc = agti_tool_fail(call, AGT_ENOTFOUND,
                                "%s does not exist (through a symbolic link it is %s).%s", given,
                                p->rel, hint);
        }
    }
    free(norm);
    return rc;
}

int agti_ws_resolve(agt_call *call, const char *user_path, bool refuse_sensitive, agti_ws_path *out)
{
    agt_session *s = agt_call_session(call);
    out->abs = out->rel = NULL;
    out->given = user_path;
    size_t nextra = 0;
    const char *const *extra = agti_session_allowed_dirs(s, &nextra);
    const char **allowed = malloc((nextra + 1) * sizeof *allowed);
    if (allowed == NULL)
        return agti_oom();
    size_t nallowed = 0;
    for (size_t i = 0; i < nextra; i++)
        allowed[nallowed++] = extra[i];
    if (s->policy != NULL && s->policy->plan_file != NULL)
        allowed[nallowed++] = s->policy->plan_file;
    int rc = agti_path_resolve(s->root, allowed, nallowed, NULL, user_path, &out->abs, &out->rel);
    free(allowed);
    if (rc == AGT_ENOMEM)
        return rc;
    if (rc != AGT_OK) {
        const char *msg = agt_error_message();
        char *copy = agti_strdup(msg);
        if (copy == NULL)
            return agti_oom();
        rc = agti_tool_fail(call, rc, "Cannot use path '%s': %s.", user_path, copy);
        free(copy);
        return rc;
    }
    /* Write would create the first folders before the system refuses */
    if (strlen(out->abs) >= PATH_MAX) {
        rc = agti_tool_fail(call, AGT_EINVAL,
                            "Cannot use path '%s': it is %zu bytes long as an absolute path; the "
                            "system limit is %d.",
                            user_path, strlen(out->abs), PATH_MAX - 1);
        agti_ws_path_free(out);
        return rc;
    }
    const char *reason = NULL;
    if (refuse_sensitive && agti_sensitive_match(agti_session_sensitive(s), out->abs, &reason)) {
        rc = agti_tool_fail(call, AGT_EDENIED,
                            "%s is a sensitive file (%s); the file tools never read or write it. "
                            "Ask the user if you need something from it.",
                            out->rel, reason ? reason : "secrets");
        agti_ws_path_free(out);
        return rc;
    }
    return AGT_OK;
}

static int stat_fail(agt_call *call, const agti_ws_path *p, int err)
{
    if (err == ENOENT || err == ENOTDIR)
        return agti_ws_missing(call, p, " Check the path (Glob finds files by name).");
    if (err == EACCES)
        return agti_tool_fail(call, AGT_EDENIED, "%s cannot be opened: permission denied.", p->rel);
    return agti_tool_fail(call, AGT_EIO, "%s cannot be opened: %s.", p->rel, strerror(err));
}

int agti_ws_load(agt_call *call, const agti_ws_path *p, size_t max, char **data, size_t *len)
{
    *data = NULL;
    *len = 0;
    int fd = open(p->abs, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return stat_fail(call, p, errno);
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return stat_fail(call, p, e);
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        return agti_tool_fail(call, AGT_EINVAL,
                              "%s is a directory, not a file. Use Glob to list its files.", p->rel);
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return agti_tool_fail(call, AGT_EINVAL,
                              "%s is not a regular file (a device, socket or pipe).", p->rel);
    }
    if ((uint64_t)st.st_size > max) {
        close(fd);
        return agti_tool_fail(call, AGT_ELIMIT, "%s is too large: %lld bytes (the limit is %zu).",
                              p->rel, (long long)st.st_size, max);
    }
    size_t cap = (size_t)st.st_size, n = 0;
    char *buf = malloc(cap + 1);
    if (buf == NULL) {
        close(fd);
        return agti_oom();
    }
    /* The file may grow while it is read: stop at the size seen by fstat. */
    while (n < cap) {
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            close(fd);
            return agti_tool_fail(call, AGT_EIO, "%s could not be read: %s.", p->rel, strerror(e));
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(fd);
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
