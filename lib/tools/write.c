/* Write: create, overwrite or append to a file, atomically (lib/fs), keeping
 * an existing file's permission bits and CRLF line endings. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dispatch/dispatch_internal.h"
#include "fs/fs.h"
#include "session/fs_settings.h"
#include "session/seen.h"
#include "tools_internal.h"
#include "ws.h"

/* Bytes of an existing file read to decide its line ending. */
#define EOL_PROBE 65536

/* The line ending of the existing file fd (AGTI_EOL_NONE when it has no
 * line break in its first EOL_PROBE bytes). */
static int existing_eol(int fd)
{
    char *buf = malloc(EOL_PROBE);
    ssize_t n = buf ? pread(fd, buf, EOL_PROBE, 0) : -1;
    int eol = n > 0 ? agti_fs_detect_eol(buf, (size_t)n) : AGTI_EOL_NONE;
    free(buf);
    return eol;
}

/* Whether the existing file fd (size bytes) ends with a CR: a LF appended
 * right after it completes that CRLF instead of getting its own CR. */
static bool ends_with_cr(int fd, off_t size)
{
    if (size <= 0)
        return false;
    char c = 0;
    ssize_t n = pread(fd, &c, 1, size - 1);
    return n == 1 && c == '\r';
}

unsigned agti_tool_write_flags(agt_call *call)
{
    return agti_session_hardlinks_in_place(agt_call_session(call)) ? AGTI_WRITE_LINKS_IN_PLACE : 0u;
}

void agti_tool_link_note(agti_buf *b, const agti_ws_path *p, const agti_write_info *info)
{
    if (info->link_broken)
        agti_buf_printf(b,
                        " %s had %lu names (hard links): the link was broken, %s is a new file "
                        "now and the other names keep the old content.",
                        p->rel, info->nlink, p->rel);
    else if (info->in_place)
        agti_buf_printf(b,
                        " %s has %lu names (hard links): it was rewritten in place, so every "
                        "name shows the new content.",
                        p->rel, info->nlink);
}

int agti_tool_write_failed(agt_call *call, int rc, const char *rel, bool kept)
{
    char *msg = agti_strdup(agt_error_message());
    if (kept)
        rc = agti_tool_fail(call, rc, "Could not write %s: %s. The file was not changed.", rel,
                            msg ? msg : "error");
    else
        rc = agti_tool_fail(call, rc,
                            "Could not write %s: %s. Tell the user: the file needs to be "
                            "restored from that copy.",
                            rel, msg ? msg : "error");
    free(msg);
    return rc;
}

/* The whole content of the existing file fd (size bytes) when the session
 * must compare it with what it saw: *old (malloc'd) or NULL when the file
 * is larger than Edit's cap (then *hash is its XXH3-64, streamed). */
static int load_existing(agt_call *call, const agti_ws_path *p, int fd, off_t size, char **old,
                         size_t *len, uint64_t *hash)
{
    *old = NULL;
    *len = 0;
    bool small = (uint64_t)size <= AGTI_EDIT_MAX_BYTES;
    agti_seen_acc acc;
    char *buf = malloc(small ? (size_t)size + 1 : 1u << 20);
    if (buf == NULL || (!small && agti_seen_acc_init(&acc) != AGT_OK)) {
        free(buf);
        return agti_oom();
    }
    size_t n = 0;
    for (;;) {
        size_t room = small ? (size_t)size - n : 1u << 20;
        if (room == 0)
            break;
        ssize_t r = pread(fd, small ? buf + n : buf, room, (off_t)n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            if (!small)
                agti_seen_acc_free(&acc);
            return agti_tool_fail(call, AGT_EIO, "%s could not be read: %s.", p->rel, strerror(e));
        }
        if (r == 0)
            break;
        if (!small)
            agti_seen_acc_feed(&acc, buf, (size_t)r);
        n += (size_t)r;
    }
    *len = n;
    if (small) {
        buf[n] = '\0';
        *old = buf;
        return AGT_OK;
    }
    free(buf);
    agti_seen_sum sum;
    acc.keep_lines = false;
    int rc = agti_seen_acc_end(&acc, &sum);
    *hash = sum.hash;
    agti_seen_sum_free(&sum);
    return rc == AGT_OK ? AGT_OK : agti_oom();
}

int agti_tool_write(agt_call *call, void *payload)
{
    (void)payload;
    json_t *args = agti_call_args_json(call);
    const char *path = json_string_value(json_object_get(args, "path"));
    json_t *jc = json_object_get(args, "content");
    const char *mode = json_string_value(json_object_get(args, "mode"));
    if (path == NULL || !json_is_string(jc))
        return agti_tool_fail(call, AGT_EINVAL, "Write needs \"path\" and \"content\".");
    bool append = mode != NULL && strcmp(mode, "append") == 0;
    if (mode != NULL && !append && strcmp(mode, "overwrite") != 0)
        return agti_tool_fail(call, AGT_EINVAL, "mode must be overwrite or append, not '%s'.",
                              mode);
    const char *content = json_string_value(jc);
    size_t len = json_string_length(jc);

    agti_ws_path p;
    int rc = agti_ws_resolve(call, path, AGTI_WS_WRITE | AGTI_WS_CHANGE, 0, true, &p);
    if (rc != AGT_OK)
        return rc;
    struct stat st = p.loc.st;
    bool exists = p.loc.exists;
    int rfd = -1;
    char *conv = NULL, *old = NULL;
    size_t old_len = 0;
    if (exists && S_ISDIR(st.st_mode)) {
        rc = agti_tool_fail(call, AGT_EINVAL,
                            "%s is a directory; give the path of a file inside it.", p.rel);
        goto out;
    }
    if (exists && !S_ISREG(st.st_mode)) {
        rc = agti_tool_fail(call, AGT_EINVAL,
                            "%s is not a regular file (a device, socket or pipe); Write writes "
                            "regular files only.",
                            p.rel);
        goto out;
    }
    if (exists)
        rfd = openat(p.loc.dirfd, p.loc.name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
    /* The staleness check compares the file as it is with what the session
     * saw of it, so it reads the file only when the session saw it (or must
     * refuse it unread). */
    agt_session *s = agt_call_session(call);
    bool check = exists && (agti_seen_known(s, p.abs) ||
                            (!append && (agti_session_edit_options(s) & AGT_EDIT_REQUIRE_READ)));
    if (check && rfd < 0) {
        rc = agti_tool_fail(call, AGT_EIO,
                            "%s could not be opened to compare it with what was "
                            "read: %s.",
                            p.rel, strerror(errno));
        goto out;
    }
    if (check) {
        uint64_t hash = 0;
        rc = load_existing(call, &p, rfd, st.st_size, &old, &old_len, &hash);
        if (rc == AGT_OK && old != NULL)
            rc = agti_ws_check_seen(call, &p, "Write", old, old_len, !append);
        else if (rc == AGT_OK) {
            agti_buf msg = AGTI_BUF_INIT;
            rc = agti_seen_check_hash(s, p.abs, p.rel, "Write", hash, old_len, !append, &msg);
            if (rc == AGT_ESTATE)
                rc = agti_tool_fail(call, AGT_ESTATE, "%s", agti_buf_cstr(&msg));
            else if (rc != AGT_OK)
                rc = agti_oom();
            agti_buf_free(&msg);
        }
        if (rc != AGT_OK)
            goto out;
    }
    /* Keep the file's style: LF content written into a CRLF file becomes
     * CRLF (a file mixing both would otherwise drift with every edit). */
    size_t conv_len = len;
    bool converted = false;
    if (rfd >= 0 && existing_eol(rfd) == AGTI_EOL_CRLF && memchr(content, '\n', len) != NULL) {
        size_t skip = append && content[0] == '\n' && ends_with_cr(rfd, st.st_size) ? 1u : 0u;
        conv = agti_fs_lf_to_crlf(content + skip, len - skip, &conv_len);
        if (conv != NULL && skip) {
            char *whole = malloc(conv_len + 2);
            if (whole != NULL) {
                whole[0] = '\n';
                memcpy(whole + 1, conv, conv_len + 1);
                conv_len++;
            }
            free(conv);
            conv = whole;
        }
        if (conv == NULL) {
            rc = agti_oom();
            goto out;
        }
        converted = conv_len != len;
    }
    agti_write_info info;
    rc = agti_fs_write_at(p.loc.dirfd, p.loc.name, p.abs, conv ? conv : content, conv_len,
                          (append ? AGTI_WRITE_APPEND : 0u) | agti_tool_write_flags(call), &info);
    if (rc != AGT_OK)
        agti_fsloc_undo_dirs(&p.loc);
    if (rc == AGT_ENOMEM)
        goto out;
    if (rc != AGT_OK) {
        rc = agti_tool_write_failed(call, rc, p.rel, info.kept);
        goto out;
    }
    const char *written = conv ? conv : content;
    if (!append) {
        agti_ws_record_seen(call, &p, written, conv_len);
    } else if (old != NULL) {
        /* the model knew the file (the check passed) and wrote its end */
        char *whole = malloc(old_len + conv_len + 1);
        if (whole != NULL) {
            memcpy(whole, old, old_len);
            memcpy(whole + old_len, written, conv_len);
            agti_ws_record_seen(call, &p, whole, old_len + conv_len);
        } else {
            agti_seen_forget(s, p.abs);
        }
        free(whole);
    } else {
        agti_seen_forget(s, p.abs);
    }
    agti_buf b = AGTI_BUF_INIT;
    const char *verb =
        append ? (exists ? "Appended" : "Created") : (exists ? "Overwrote" : "Created");
    agti_buf_printf(&b, "%s %s: %zu byte%s written", verb, p.rel, conv_len,
                    conv_len == 1 ? "" : "s");
    if (append && exists)
        agti_buf_printf(&b, " at the end (the file now has %lld bytes)",
                        (long long)st.st_size + (long long)conv_len);
    agti_buf_puts(&b, ".");
    if (converted)
        agti_buf_puts(&b, " Line breaks were written as CRLF to match the file.");
    agti_tool_link_note(&b, &p, &info);
    rc = agti_ws_finish(call, &b);
out:
    free(conv);
    free(old);
    if (rfd >= 0)
        close(rfd);
    agti_ws_path_free(&p);
    return rc;
}
