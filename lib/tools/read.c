/* Read: a window of a text file as numbered lines. The file is streamed
 * (never loaded whole), so a multi-gigabyte log costs one buffer. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dispatch/dispatch_internal.h"
#include "fs/fs.h"
#include "session/fs_settings.h"
#include "session/seen.h"
#include "session/session_internal.h"
#include "nbformat.h"
#include "tools_internal.h"
#include "ws.h"

#define CHUNK 65536

typedef struct reader {
    int fd;
    char buf[CHUNK];
    size_t pos, len;
    bool eof;
    int err;
    /* Bytes of a line kept before it is known to be cut: max_chars
     * characters of at most 4 bytes, plus one more character. */
    size_t keep;
    size_t skip; /* characters dropped at the start of each line (char_offset) */
} reader;

static bool fill(reader *r)
{
    if (r->eof)
        return false;
    for (;;) {
        ssize_t n = read(r->fd, r->buf, sizeof r->buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            r->err = errno;
        if (n <= 0) {
            r->eof = true;
            return false;
        }
        r->pos = 0;
        r->len = (size_t)n;
        return true;
    }
}

/* Next line into line (at most r->keep bytes kept, without "\n"); *longer set
 * when bytes were dropped. false at the end of the file. */
static bool next_line(reader *r, agti_buf *line, bool *longer)
{
    agti_buf_truncate(line, 0);
    *longer = false;
    bool any = false;
    size_t skipped = 0;
    bool skipping = r->skip > 0;
    for (;;) {
        if (r->pos == r->len && !fill(r))
            return any;
        any = true;
        const char *p = r->buf + r->pos;
        size_t avail = r->len - r->pos;
        const char *nl = memchr(p, '\n', avail);
        size_t take = nl ? (size_t)(nl - p) : avail;
        /* char_offset: drop whole characters (a character starts at a byte
         * that is not a UTF-8 continuation byte). */
        size_t k = 0;
        while (skipping && k < take) {
            if (((unsigned char)p[k] & 0xc0) != 0x80) {
                if (skipped == r->skip) {
                    skipping = false;
                    break;
                }
                skipped++;
            }
            k++;
        }
        p += k;
        take -= k;
        r->pos += k;
        size_t room = line->len < r->keep ? r->keep - line->len : 0;
        if (take > room) {
            *longer = true;
            agti_buf_put(line, p, room);
        } else {
            agti_buf_put(line, p, take);
        }
        r->pos += take;
        if (nl) {
            r->pos++;
            return true;
        }
    }
}

/* Counts the lines of the file (a last line without "\n" counts), and
 * those ending in "\r\n" (*crlf) and in a bare "\n" (*lf); every byte
 * also goes to acc, the hash the session keeps of what Read saw (this is
 * the one pass over the whole file, whatever window is shown). */
static int count_lines(reader *r, size_t *out, size_t *crlf, size_t *lf, agti_seen_acc *acc)
{
    size_t n = 0;
    bool partial = false;
    char last = '\0'; /* the byte before the current chunk */
    *crlf = *lf = 0;
    while (r->pos < r->len || fill(r)) {
        const char *start = r->buf + r->pos, *p = start, *end = r->buf + r->len;
        agti_seen_acc_feed(acc, start, (size_t)(end - start));
        while (p < end) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            if (nl == NULL) {
                partial = true;
                break;
            }
            if ((nl > start ? nl[-1] : last) == '\r')
                (*crlf)++;
            else
                (*lf)++;
            n++;
            partial = false;
            p = nl + 1;
        }
        if (end > start)
            last = end[-1];
        r->pos = r->len;
    }
    *out = n + (partial ? 1 : 0);
    return r->err;
}

/* Byte length of the first max characters of valid UTF-8 s, or len. */
static size_t cut_point(const char *s, size_t len, size_t max, bool *cut)
{
    size_t i = 0, chars = 0;
    *cut = false;
    while (i < len) {
        if (chars == max) {
            *cut = true;
            return i;
        }
        unsigned char c = (unsigned char)s[i];
        size_t step = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
        i += step;
        chars++;
    }
    return len;
}

static void list_numbers(agti_buf *b, const size_t *v, size_t n, size_t total)
{
    for (size_t i = 0; i < n; i++)
        agti_buf_printf(b, "%s%zu", i ? ", " : "", v[i]);
    if (total > n)
        agti_buf_printf(b, " and %zu more", total - n);
}

typedef struct window {
    size_t max_lines, max_bytes, max_chars; /* session limits */
    size_t skip, show;                      /* char_offset, n_chars */
    size_t start, want;
    size_t read, bytes, total;
    size_t cut[20], ncut;
    int stop; /* 0 end of file, 1 n_lines, 2 1000 lines, 3 bytes */
    size_t bad_line;
    size_t nul_line; /* a NUL after the binary probe: the text would end there */
    size_t crlf, lf; /* line endings of the file */
    size_t shown_cr; /* lines of the window shown with a visible CR */
} window;

/* The mark a CR gets at the end of a line of a file that mixes endings:
 * U+240D SYMBOL FOR CARRIAGE RETURN. Edit takes it back as a CR. */
#define CR_MARK "\xe2\x90\x8d"

/* Emits the window's lines into b; the reader is at the file's start. */
static int emit(reader *r, window *w, agti_buf *b)
{
    agti_buf line = AGTI_BUF_INIT;
    size_t no = 0;
    bool longer;
    w->stop = 0;
    while (next_line(r, &line, &longer)) {
        no++;
        if (no < w->start)
            continue;
        if (w->read == w->want) {
            w->stop = w->want == w->max_lines ? 2 : 1;
            break;
        }
        size_t len = line.len;
        bool cr = false;
        if (!longer && len > 0 && line.ptr[len - 1] == '\r') {
            len--;
            cr = w->crlf > 0 && w->lf > 0;
        }
        /* A character may straddle the kept bytes: judge validity only on
         * whole characters. */
        size_t check = longer ? agti_utf8_floor(line.ptr, len) : len;
        if (check > 0 && memchr(line.ptr, '\0', check) != NULL) {
            w->nul_line = no;
            break;
        }
        if (check > 0 && !agti_utf8_valid(line.ptr, check)) {
            w->bad_line = no;
            break;
        }
        bool cut;
        size_t keep = cut_point(line.ptr, check, w->show, &cut);
        cut = cut || longer;
        if (w->bytes + keep + 1 > w->max_bytes) {
            w->stop = 3;
            break;
        }
        cr = cr && !cut;
        agti_buf_printf(b, "%zu\t", no);
        agti_buf_put(b, line.ptr, keep);
        if (cr) {
            agti_buf_puts(b, CR_MARK);
            w->shown_cr++;
        }
        agti_buf_putc(b, '\n');
        w->bytes += keep + 1;
        w->read++;
        if (cut) {
            if (w->ncut < sizeof w->cut / sizeof w->cut[0])
                w->cut[w->ncut] = no;
            w->ncut++;
        }
    }
    bool oom = line.oom;
    agti_buf_free(&line);
    if (oom)
        return agti_oom();
    return r->err ? AGT_EIO : AGT_OK;
}

static void note(agti_buf *b, const window *w)
{
    size_t last = w->start + w->read - 1;
    agti_buf_printf(b, "\nRead %zu line%s (%zu-%zu) of %zu; ", w->read, w->read == 1 ? "" : "s",
                    w->start, last, w->total);
    switch (w->stop) {
    case 0:
        agti_buf_puts(b, "reached the end of the file.");
        break;
    case 1:
        agti_buf_printf(b, "stopped at n_lines (%zu); continue with line_offset %zu.", w->want,
                        last + 1);
        break;
    case 2:
        agti_buf_printf(b,
                        "stopped at the limit of %zu lines per call; continue with "
                        "line_offset %zu.",
                        w->max_lines, last + 1);
        break;
    default:
        if (w->max_bytes % 1024 == 0)
            agti_buf_printf(b, "stopped at the limit of %zu KiB per call; ", w->max_bytes / 1024);
        else
            agti_buf_printf(b, "stopped at the limit of %zu bytes per call; ", w->max_bytes);
        agti_buf_printf(b, "continue with line_offset %zu.", last + 1);
        break;
    }
    if (w->skip > 0)
        agti_buf_printf(b,
                        "\nchar_offset %zu: the first %zu characters of each line are not shown.",
                        w->skip, w->skip);
    if (w->crlf > 0 && w->lf > 0)
        agti_buf_printf(b,
                        "\nThis file mixes line endings: %zu line%s end%s with CRLF, %zu with LF; "
                        "a CR is shown as " CR_MARK " at the end of its line (%zu in this window). "
                        "Edit takes " CR_MARK " as that CR, so the lines can be copied as shown.",
                        w->crlf, w->crlf == 1 ? "" : "s", w->crlf == 1 ? "s" : "", w->lf,
                        w->shown_cr);
    if (w->ncut > 0) {
        agti_buf_printf(b, "\nLines longer than %zu characters were cut: ", w->skip + w->show);
        list_numbers(b, w->cut, w->ncut < 20 ? w->ncut : 20, w->ncut);
        agti_buf_printf(b,
                        ". To read on in a cut line, call Read with line_offset at that line, "
                        "n_lines 1 and char_offset %zu.",
                        w->skip + w->show);
    }
}

/* Refuses media and binary files, judging by the first bytes. */
static int check_kind(agt_call *call, const agti_ws_path *p, reader *r)
{
    if (!fill(r))
        return r->err ? agti_tool_fail(call, AGT_EIO, "%s could not be read: %s.", p->rel,
                                       strerror(r->err))
                      : AGT_OK;
    const char *mime = NULL;
    const char *kind = agti_ws_media_kind((const unsigned char *)r->buf, r->len, &mime);
    if (kind != NULL)
        return agti_tool_fail(call, AGT_EUNSUPPORTED,
                              "%s is %s file (%s), not text. Use ReadMediaFile to look at it.",
                              p->rel, strcmp(kind, "image") == 0 ? "an image" : "a video", mime);
    size_t probe = r->len < 8192 ? r->len : 8192;
    if (memchr(r->buf, '\0', probe) != NULL)
        return agti_tool_fail(call, AGT_EUNSUPPORTED,
                              "%s is a binary file (it contains NUL bytes); Read shows text only. "
                              "Inspect it with a tool made for its format through Bash (for "
                              "example file, xxd or objdump).",
                              p->rel);
    /* a private key in a file not named like one (the name was judged) */
    const char *why = NULL;
    if (!agti_sensitive_host_excepted(agti_session_sensitive(agt_call_session(call)), p->abs) &&
        agti_sensitive_content(r->buf, r->len, &why))
        return agti_tool_fail(call, AGT_EDENIED,
                              "%s is a sensitive file (%s); the file tools never read or write it. "
                              "Ask the user if you need something from it.",
                              p->rel, why);
    return AGT_OK;
}

static int open_file(agt_call *call, const agti_ws_path *p, int *fd)
{
    *fd = p->loc.fd;
    if (*fd < 0)
        return agti_ws_open_failed(call, p);
    const struct stat st = p->loc.st;
    if (S_ISDIR(st.st_mode))
        return agti_tool_fail(call, AGT_EINVAL,
                              "%s is a directory, not a file. Use Glob to list its files.", p->rel);
    if (!S_ISREG(st.st_mode))
        return agti_tool_fail(call, AGT_EINVAL,
                              "%s is not a regular file (a device, socket or pipe); Read reads "
                              "files only.",
                              p->rel);
    return AGT_OK;
}

/* Shows a window of the file open in p. raw: when not NULL, p is a view
 * of the file (a notebook's cells) and raw the summary of the file itself,
 * which is what the session records as seen. */
static int run(agt_call *call, const agti_ws_path *p, json_int_t offset, size_t want,
               const window *limits, agti_seen_sum *raw)
{
    int fd;
    int rc = open_file(call, p, &fd);
    if (rc != AGT_OK)
        return rc;
    reader *r = calloc(1, sizeof *r);
    if (r == NULL)
        return agti_oom();
    r->fd = fd;
    window w = *limits;
    w.want = want;
    r->keep = w.show * 4 + 4;
    r->skip = w.skip;
    agti_buf b = AGTI_BUF_INIT;
    agti_seen_acc acc;
    agti_seen_sum sum = {0, 0, NULL, 0};
    if (agti_seen_acc_init(&acc) != AGT_OK) {
        free(r);
        return agti_oom();
    }
    rc = check_kind(call, p, r);
    if (rc == AGT_OK)
        rc = count_lines(r, &w.total, &w.crlf, &w.lf, &acc)
                 ? agti_tool_fail(call, AGT_EIO, "%s could not be read: %s.", p->rel,
                                  strerror(r->err))
                 : AGT_OK;
    if (rc == AGT_OK)
        rc = agti_seen_acc_end(&acc, &sum);
    else
        agti_seen_acc_free(&acc);
    if (rc != AGT_OK)
        goto out;
    if (w.total == 0) {
        agti_buf_printf(&b, "%s is empty (0 lines).", p->rel);
        rc = agti_ws_finish(call, &b);
        if (rc == AGT_OK)
            (void)agti_seen_record(agt_call_session(call), p->abs, raw ? raw : &sum);
        goto out;
    }
    if (offset < 0) {
        json_int_t s = (json_int_t)w.total + offset + 1;
        w.start = s < 1 ? 1 : (size_t)s;
    } else {
        w.start = (size_t)offset;
    }
    if (w.start > w.total) {
        rc = agti_tool_fail(call, AGT_EINVAL,
                            "line_offset %lld is past the end of %s, which has %zu line%s.",
                            (long long)offset, p->rel, w.total, w.total == 1 ? "" : "s");
        goto out;
    }
    if (lseek(fd, 0, SEEK_SET) != 0) {
        rc = agti_tool_fail(call, AGT_EIO, "%s could not be read: %s.", p->rel, strerror(errno));
        goto out;
    }
    r->pos = r->len = 0;
    r->eof = false;
    rc = emit(r, &w, &b);
    if (rc == AGT_EIO)
        rc = agti_tool_fail(call, AGT_EIO, "%s could not be read: %s.", p->rel, strerror(r->err));
    if (rc != AGT_OK)
        goto out;
    if (w.nul_line != 0) {
        rc = agti_tool_fail(call, AGT_EUNSUPPORTED,
                            "%s is a binary file (line %zu has a NUL byte); Read shows text only. "
                            "Inspect it with a tool made for its format through Bash (for example "
                            "file, xxd or objdump).",
                            p->rel, w.nul_line);
        goto out;
    }
    if (w.bad_line != 0) {
        rc = agti_tool_fail(call, AGT_EUNSUPPORTED,
                            "%s is not valid UTF-8 text (line %zu has bytes that are not UTF-8); "
                            "Read shows UTF-8 text only. Convert it through Bash (for example "
                            "iconv -f latin1 -t utf-8) or inspect it with xxd.",
                            p->rel, w.bad_line);
        goto out;
    }
    /* The file may have shrunk between the two passes. */
    if (w.read == 0) {
        rc = agti_tool_fail(call, AGT_EIO, "%s changed while it was read; read it again.", p->rel);
        goto out;
    }
    note(&b, &w);
    rc = agti_ws_finish(call, &b);
    /* Any window counts as a read: Edit checks the whole file's hash. */
    if (rc == AGT_OK)
        (void)agti_seen_record(agt_call_session(call), p->abs, raw ? raw : &sum);
out:
    agti_seen_sum_free(&sum);
    agti_buf_free(&b);
    free(r);
    return rc;
}

/* A Jupyter notebook (*.ipynb that reads as nbformat 4) is shown as its
 * cells (nbformat.c), through the same window as a text file: the view
 * is put in a memory file that run() reads. *done false: not a notebook
 * (or too large to parse), so the file is shown as text. */
static int read_notebook(agt_call *call, const agti_ws_path *p, json_int_t offset, size_t want,
                         const window *limits, bool *done)
{
    *done = false;
    size_t n = strlen(p->rel);
    if (n < 6 || strcasecmp(p->rel + n - 6, ".ipynb") != 0 || p->loc.fd < 0 ||
        !S_ISREG(p->loc.st.st_mode) || (uint64_t)p->loc.st.st_size > AGTI_EDIT_MAX_BYTES)
        return AGT_OK;
    char *text = NULL;
    size_t len = 0;
    int rc = agti_ws_load(call, p, AGTI_EDIT_MAX_BYTES, &text, &len);
    if (rc != AGT_OK) {
        *done = true;
        return rc;
    }
    agti_buf view = AGTI_BUF_INIT;
    if (!agti_nb_render(&view, p->rel, text, len)) {
        free(text);
        agti_buf_free(&view);
        return AGT_OK;
    }
    *done = true;
    agti_seen_sum raw;
    rc = agti_seen_sum_text(text, len, &raw);
    free(text);
    int mfd = rc == AGT_OK && !view.oom ? memfd_create("agt-notebook", MFD_CLOEXEC) : -1;
    if (mfd < 0) {
        if (rc == AGT_OK)
            agti_seen_sum_free(&raw);
        agti_buf_free(&view);
        return view.oom || rc != AGT_OK
                   ? agti_oom()
                   : agti_tool_fail(call, AGT_EIO, "%s could not be shown: %s.", p->rel,
                                    strerror(errno));
    }
    size_t off = 0;
    while (off < view.len) {
        ssize_t w = write(mfd, view.ptr + off, view.len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    agti_ws_path v = *p;
    v.loc.fd = mfd;
    if (off != view.len || lseek(mfd, 0, SEEK_SET) != 0 || fstat(mfd, &v.loc.st) != 0)
        rc = agti_tool_fail(call, AGT_EIO, "%s could not be shown: %s.", p->rel, strerror(errno));
    else
        rc = run(call, &v, offset, want, limits, &raw);
    agti_seen_sum_free(&raw);
    agti_buf_free(&view);
    close(mfd);
    return rc;
}

int agti_tool_read(agt_call *call, void *payload)
{
    (void)payload;
    json_t *args = agti_call_args_json(call);
    const char *path = json_string_value(json_object_get(args, "path"));
    json_t *jo = json_object_get(args, "line_offset");
    json_t *jn = json_object_get(args, "n_lines");
    json_int_t offset = jo ? json_integer_value(jo) : 1;
    agt_session *s = agt_call_session(call);
    window limits;
    memset(&limits, 0, sizeof limits);
    limits.max_lines =
        (size_t)agti_session_file_limit(s, AGT_FILE_LIMIT_READ_LINES, AGTI_READ_MAX_LINES);
    limits.max_bytes =
        (size_t)agti_session_file_limit(s, AGT_FILE_LIMIT_READ_BYTES, AGTI_READ_MAX_BYTES);
    limits.max_chars =
        (size_t)agti_session_file_limit(s, AGT_FILE_LIMIT_LINE_CHARS, AGTI_READ_MAX_LINE_CHARS);
    json_int_t n = jn ? json_integer_value(jn) : (json_int_t)limits.max_lines;
    json_t *jc = json_object_get(args, "char_offset");
    json_t *jw = json_object_get(args, "n_chars");
    json_int_t co = jc ? json_integer_value(jc) : 0;
    json_int_t nc = jw ? json_integer_value(jw) : (json_int_t)limits.max_chars;
    if (co < 0)
        return agti_tool_fail(call, AGT_EINVAL, "char_offset must be 0 or more, not %lld.",
                              (long long)co);
    if (nc < 1 || (size_t)nc > limits.max_chars)
        return agti_tool_fail(call, AGT_EINVAL, "n_chars must be between 1 and %zu, not %lld.",
                              limits.max_chars, (long long)nc);
    limits.skip = (size_t)co;
    limits.show = (size_t)nc;
    if (path == NULL)
        return agti_tool_fail(call, AGT_EINVAL, "Read needs a \"path\".");
    if (offset == 0)
        return agti_tool_fail(call, AGT_EINVAL,
                              "line_offset 0 is not valid: lines are numbered from 1 (use a "
                              "negative value to count from the end, -1 is the last line).");
    if (n < 1 || (size_t)n > limits.max_lines)
        return agti_tool_fail(call, AGT_EINVAL, "n_lines must be between 1 and %zu, not %lld.",
                              limits.max_lines, (long long)n);
    agti_ws_path p;
    int rc = agti_ws_resolve(call, path, AGTI_WS_OPEN, O_RDONLY | O_NONBLOCK, true, &p);
    if (rc != AGT_OK)
        return rc;
    bool done = false;
    rc = read_notebook(call, &p, offset, (size_t)n, &limits, &done);
    if (!done)
        rc = run(call, &p, offset, (size_t)n, &limits, NULL);
    agti_ws_path_free(&p);
    return rc;
}
