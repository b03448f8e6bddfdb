#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc.h"
#include "proc_capture.h"

static bool is_lead(unsigned char c)
{
    return (c & 0xC0) != 0x80;
}

static size_t count_chars(const char *s, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += is_lead((unsigned char)s[i]);
    return k;
}

static uint64_t count_lines(const char *s, size_t n)
{
    uint64_t k = 0;
    const char *end = s + n;
    while (s < end && (s = memchr(s, '\n', (size_t)(end - s))) != NULL) {
        k++;
        s++;
    }
    return k;
}

/* Byte offset just past the first k characters of valid UTF-8 s[0..n). */
static size_t skip_chars(const char *s, size_t n, size_t k)
{
    size_t i = 0;
    while (i < n && k > 0) {
        i++;
        while (i < n && !is_lead((unsigned char)s[i]))
            i++;
        k--;
    }
    return i;
}

void agti_capture_init(agti_capture *c, size_t cap_chars)
{
    memset(c, 0, sizeof *c);
    c->head_limit = cap_chars / 2;
    c->tail_limit = cap_chars - c->head_limit;
}

/* s is valid UTF-8 made of whole characters. */
static void keep_text(agti_capture *c, const char *s, size_t n)
{
    c->bytes += n;
    c->lines += count_lines(s, n);
    if (c->head_chars < c->head_limit) {
        size_t take = skip_chars(s, n, c->head_limit - c->head_chars);
        agti_buf_put(&c->head, s, take);
        c->head_chars += count_chars(s, take);
        s += take;
        n -= take;
    }
    if (n == 0)
        return;
    size_t k = count_chars(s, n);
    if (k >= c->tail_limit) {
        /* This piece alone fills the tail: keep only its end. */
        size_t off = skip_chars(s, n, k - c->tail_limit);
        agti_buf_truncate(&c->tail, 0);
        agti_buf_put(&c->tail, s + off, n - off);
        c->tail_chars = c->tail_limit;
        return;
    }
    agti_buf_put(&c->tail, s, n);
    c->tail_chars += k;
    /* Trimming only at twice the limit keeps appends amortised O(1). */
    if (c->tail_chars > 2 * c->tail_limit) {
        size_t off = skip_chars(c->tail.ptr, c->tail.len, c->tail_chars - c->tail_limit);
        memmove(c->tail.ptr, c->tail.ptr + off, c->tail.len - off);
        agti_buf_truncate(&c->tail, c->tail.len - off);
        c->tail_chars = c->tail_limit;
    }
}

static void process(agti_capture *c, const char *s, size_t n, bool final)
{
    size_t keep = final ? n : agti_utf8_floor(s, n);
    agti_buf_truncate(&c->scratch, 0);
    agti_utf8_sanitize(&c->scratch, s, keep);
    if (c->scratch.len)
        keep_text(c, c->scratch.ptr, c->scratch.len);
    c->ncarry = n - keep;
    if (c->ncarry)
        memmove(c->carry, s + keep, c->ncarry);
}

void agti_capture_feed(agti_capture *c, const char *s, size_t n)
{
    if (n == 0)
        return;
    if (c->ncarry == 0) {
        process(c, s, n, false);
        return;
    }
    agti_buf_truncate(&c->joint, 0);
    agti_buf_put(&c->joint, c->carry, c->ncarry);
    agti_buf_put(&c->joint, s, n);
    if (c->joint.oom) {
        c->ncarry = 0;
        process(c, s, n, false);
        return;
    }
    process(c, c->joint.ptr, c->joint.len, false);
}

void agti_capture_finish(agti_capture *c)
{
    if (c->ncarry == 0)
        return;
    unsigned char tmp[4];
    size_t n = c->ncarry;
    memcpy(tmp, c->carry, n);
    process(c, (const char *)tmp, n, true);
}

size_t agti_capture_held(const agti_capture *c)
{
    return c->head.len + c->tail.len;
}

/* The part of the tail buffer that is shown (its last tail_limit
 * characters) and the number of bytes neither head nor tail show. */
static uint64_t shown_tail(const agti_capture *c, const char **tail, size_t *tail_len)
{
    size_t skip = 0;
    if (c->tail_chars > c->tail_limit)
        skip = skip_chars(c->tail.ptr, c->tail.len, c->tail_chars - c->tail_limit);
    *tail = c->tail.len ? c->tail.ptr + skip : "";
    *tail_len = c->tail.len - skip;
    return c->bytes - c->head.len - *tail_len;
}

bool agti_capture_cut(const agti_capture *c)
{
    const char *tail;
    size_t tail_len;
    return shown_tail(c, &tail, &tail_len) > 0;
}

int agti_capture_render(const agti_capture *c, const char *log_path, char **out, size_t *len)
{
    agti_buf b = AGTI_BUF_INIT;
    const char *tail;
    size_t tail_len;
    uint64_t cut = shown_tail(c, &tail, &tail_len);
    agti_buf_put(&b, c->head.ptr ? c->head.ptr : "", c->head.len);
    if (cut > 0) {
        uint64_t cut_lines = c->lines - count_lines(agti_buf_cstr(&c->head), c->head.len) -
                             count_lines(tail, tail_len);
        if (c->head.len > 0 && c->head.ptr[c->head.len - 1] != '\n')
            agti_buf_putc(&b, '\n');
        agti_buf_printf(&b, "[... %llu bytes (%llu lines) cut", (unsigned long long)cut,
                        (unsigned long long)cut_lines);
        if (log_path)
            agti_buf_printf(&b, "; full output in %s", log_path);
        agti_buf_puts(&b, " ...]\n");
    }
    agti_buf_put(&b, tail, tail_len);
    if (b.oom) {
        agti_buf_free(&b);
        return agti_oom();
    }
    if (len)
        *len = b.len;
    *out = agti_buf_detach(&b);
    return *out ? AGT_OK : agti_oom();
}

void agti_capture_free(agti_capture *c)
{
    agti_buf_free(&c->head);
    agti_buf_free(&c->tail);
    agti_buf_free(&c->scratch);
    agti_buf_free(&c->joint);
}

int agti_proc_read_log_tail(const char *path, size_t max_bytes, char **out, size_t *len)
{
    if (path == NULL || out == NULL)
        return agti_error(AGT_EINVAL, "process log: NULL argument");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return agti_error(errno == ENOENT ? AGT_ENOTFOUND : AGT_EIO, "process log '%s': %s", path,
                          strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return agti_error(AGT_EIO, "process log '%s': %s", path, strerror(e));
    }
    size_t size = (size_t)st.st_size;
    size_t want = size < max_bytes ? size : max_bytes;
    off_t from = (off_t)(size - want);
    char *raw = malloc(want + 1);
    if (raw == NULL) {
        close(fd);
        return agti_oom();
    }
    size_t got = 0;
    while (got < want) {
        ssize_t r = pread(fd, raw + got, want - got, from + (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(raw);
            close(fd);
            return agti_error(AGT_EIO, "process log '%s': %s", path, strerror(e));
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    /* Start on a character boundary when the cut fell inside one. */
    size_t start = 0;
    if (from > 0)
        while (start < got && start < 3 && !is_lead((unsigned char)raw[start]))
            start++;
    agti_buf b = AGTI_BUF_INIT;
    agti_utf8_sanitize(&b, raw + start, got - start);
    free(raw);
    if (b.oom) {
        agti_buf_free(&b);
        return agti_oom();
    }
    if (len)
        *len = b.len;
    *out = agti_buf_detach(&b);
    return *out ? AGT_OK : agti_oom();
}
