/* The session's record of what the model has seen of each file (seen.h). */
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "fs_settings.h"
#include "seen.h"
#include "session_internal.h"

typedef struct seen_file {
    char *abs;
    agti_seen_sum sum;
    uint64_t seq; /* when it was recorded: the smallest is forgotten first */
} seen_file;

struct agti_seen {
    pthread_mutex_t lock; /* Read records on worker threads */
    seen_file *files;
    size_t n, cap;
    uint64_t seq;
    size_t total_lines; /* line hashes kept over all files */
};

void agti_seen_sum_free(agti_seen_sum *sum)
{
    if (sum == NULL)
        return;
    free(sum->lines);
    memset(sum, 0, sizeof *sum);
}

/* ---- summing ---------------------------------------------------------- */

int agti_seen_acc_init(agti_seen_acc *a)
{
    memset(a, 0, sizeof *a);
    a->part = (agti_buf)AGTI_BUF_INIT;
    a->keep_lines = true;
    XXH3_state_t *st = XXH3_createState();
    if (st == NULL || XXH3_64bits_reset(st) != XXH_OK) {
        XXH3_freeState(st);
        return agti_oom();
    }
    a->state = st;
    return AGT_OK;
}

static void add_line(agti_seen_acc *a, uint64_t h)
{
    if (!a->keep_lines)
        return;
    if (a->nlines == AGTI_SEEN_MAX_LINES) {
        a->keep_lines = false;
        free(a->lines);
        a->lines = NULL;
        a->nlines = a->cap = 0;
        return;
    }
    if (agti_grow(&a->lines, &a->cap, a->nlines, sizeof *a->lines, 256) != AGT_OK) {
        a->oom = true;
        return;
    }
    a->lines[a->nlines++] = h;
}

void agti_seen_acc_feed(agti_seen_acc *a, const char *p, size_t n)
{
    if (n == 0 || a->oom)
        return;
    if (XXH3_64bits_update(a->state, p, n) != XXH_OK)
        a->oom = true;
    a->size += n;
    while (n > 0 && a->keep_lines) {
        const char *nl = memchr(p, '\n', n);
        size_t take = nl ? (size_t)(nl - p) + 1 : n;
        if (nl == NULL) {
            agti_buf_put(&a->part, p, take);
        } else if (a->part.len > 0) {
            agti_buf_put(&a->part, p, take);
            add_line(a, XXH3_64bits(a->part.ptr, a->part.len));
            agti_buf_truncate(&a->part, 0);
        } else {
            add_line(a, XXH3_64bits(p, take));
        }
        a->oom = a->oom || a->part.oom;
        p += take;
        n -= take;
    }
}

void agti_seen_acc_free(agti_seen_acc *a)
{
    XXH3_freeState(a->state);
    agti_buf_free(&a->part);
    free(a->lines);
    memset(a, 0, sizeof *a);
}

int agti_seen_acc_end(agti_seen_acc *a, agti_seen_sum *out)
{
    memset(out, 0, sizeof *out);
    if (a->part.len > 0 && a->keep_lines)
        add_line(a, XXH3_64bits(a->part.ptr, a->part.len));
    if (a->oom) {
        agti_seen_acc_free(a);
        return agti_oom();
    }
    out->hash = XXH3_64bits_digest(a->state);
    out->size = a->size;
    if (a->keep_lines) {
        if (a->lines == NULL) /* an empty file: no lines, but known to have none */
            a->lines = malloc(sizeof *a->lines);
        out->lines = a->lines;
        out->nlines = a->nlines;
        a->lines = NULL;
    }
    agti_seen_acc_free(a);
    return AGT_OK;
}

int agti_seen_sum_text(const char *text, size_t len, agti_seen_sum *out)
{
    agti_seen_acc a;
    int rc = agti_seen_acc_init(&a);
    if (rc != AGT_OK)
        return rc;
    agti_seen_acc_feed(&a, text, len);
    return agti_seen_acc_end(&a, out);
}

/* ---- the table -------------------------------------------------------- */

static seen_file *find(const struct agti_seen *t, const char *abs)
{
    for (size_t i = 0; t != NULL && i < t->n; i++)
        if (strcmp(t->files[i].abs, abs) == 0)
            return &t->files[i];
    return NULL;
}

bool agti_seen_known(const agt_session *s, const char *abs)
{
    if (s == NULL || s->seen == NULL)
        return false;
    pthread_mutex_lock(&s->seen->lock);
    bool known = find(s->seen, abs) != NULL;
    pthread_mutex_unlock(&s->seen->lock);
    return known;
}

static void drop_lines(struct agti_seen *t, seen_file *f)
{
    t->total_lines -= f->sum.lines ? f->sum.nlines : 0;
    free(f->sum.lines);
    f->sum.lines = NULL;
}

/* Keeps the line hashes of all files within AGTI_SEEN_MAX_TOTAL_LINES,
 * taking them from the oldest files (never from keep). */
static void trim_lines(struct agti_seen *t, const seen_file *keep)
{
    while (t->total_lines > AGTI_SEEN_MAX_TOTAL_LINES) {
        seen_file *old = NULL;
        for (size_t i = 0; i < t->n; i++)
            if (&t->files[i] != keep && t->files[i].sum.lines != NULL &&
                (old == NULL || t->files[i].seq < old->seq))
                old = &t->files[i];
        if (old == NULL)
            return;
        drop_lines(t, old);
    }
}

static void remove_at(struct agti_seen *t, size_t i)
{
    drop_lines(t, &t->files[i]);
    free(t->files[i].abs);
    t->files[i] = t->files[--t->n];
}

struct agti_seen *agti_seen_new(void)
{
    struct agti_seen *t = calloc(1, sizeof *t);
    if (t != NULL && pthread_mutex_init(&t->lock, NULL) != 0) {
        free(t);
        t = NULL;
    }
    return t;
}

static int record_in(struct agti_seen *t, const char *abs, agti_seen_sum *sum)
{
    seen_file *f = find(t, abs);
    if (f == NULL) {
        if (t->n == AGTI_SEEN_MAX_FILES) {
            size_t old = 0;
            for (size_t i = 1; i < t->n; i++)
                if (t->files[i].seq < t->files[old].seq)
                    old = i;
            remove_at(t, old);
        }
        if (agti_grow(&t->files, &t->cap, t->n, sizeof *t->files, 16) != AGT_OK) {
            agti_seen_sum_free(sum);
            return AGT_ENOMEM;
        }
        char *copy = agti_strdup(abs);
        if (copy == NULL) {
            agti_seen_sum_free(sum);
            return agti_oom();
        }
        f = &t->files[t->n++];
        memset(f, 0, sizeof *f);
        f->abs = copy;
    } else {
        drop_lines(t, f);
    }
    f->sum = *sum;
    memset(sum, 0, sizeof *sum);
    f->seq = ++t->seq;
    t->total_lines += f->sum.lines ? f->sum.nlines : 0;
    trim_lines(t, f);
    return AGT_OK;
}

int agti_seen_record(agt_session *s, const char *abs, agti_seen_sum *sum)
{
    struct agti_seen *t = s->seen;
    if (t == NULL) {
        agti_seen_sum_free(sum);
        return agti_oom();
    }
    pthread_mutex_lock(&t->lock);
    int rc = record_in(t, abs, sum);
    pthread_mutex_unlock(&t->lock);
    return rc;
}

void agti_seen_forget(agt_session *s, const char *abs)
{
    if (s->seen == NULL)
        return;
    pthread_mutex_lock(&s->seen->lock);
    seen_file *f = find(s->seen, abs);
    if (f != NULL)
        remove_at(s->seen, (size_t)(f - s->seen->files));
    pthread_mutex_unlock(&s->seen->lock);
}

int agti_seen_record_text(agt_session *s, const char *abs, const char *text, size_t len)
{
    agti_seen_sum sum;
    int rc = agti_seen_sum_text(text, len, &sum);
    if (rc == AGT_OK)
        rc = agti_seen_record(s, abs, &sum);
    if (rc != AGT_OK)
        agti_seen_forget(s, abs); /* an old record would refuse the next change */
    return rc;
}

void agti_seen_free(struct agti_seen *t)
{
    if (t == NULL)
        return;
    for (size_t i = 0; i < t->n; i++) {
        free(t->files[i].abs);
        free(t->files[i].sum.lines);
    }
    free(t->files);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

/* ---- changed line ranges ---------------------------------------------- */

/* Edit distances beyond this are not worked out line by line: the changed
 * part is then given as one range. */
#define MAX_D 256
/* Ranges named in a message. */
#define MAX_RANGES 5

typedef struct ranges {
    agti_buf *b;
    size_t n;
} ranges;

/* Names lines b0..b1 (0-based, b1 exclusive) of the current file as
 * changed; b0 == b1: lines were removed after line b0. */
static void put_range(ranges *r, size_t b0, size_t b1)
{
    if (r->n < MAX_RANGES) {
        if (r->n > 0)
            agti_buf_puts(r->b, ", ");
        if (b1 == b0 + 1)
            agti_buf_printf(r->b, "line %zu", b0 + 1);
        else if (b1 > b0)
            agti_buf_printf(r->b, "lines %zu-%zu", b0 + 1, b1);
        else if (b0 == 0)
            agti_buf_puts(r->b, "lines removed at the start");
        else
            agti_buf_printf(r->b, "lines removed after line %zu", b0);
    }
    r->n++;
}

/* Myers' greedy diff of a[0..n) and b[0..m) marking deleted a lines and
 * inserted b lines; false when the distance exceeds MAX_D (or OOM). */
static bool myers(const uint64_t *a, size_t n, const uint64_t *b, size_t m, bool *del, bool *ins)
{
    long N = (long)n, M = (long)m;
    long max = N + M < MAX_D ? N + M : MAX_D;
    size_t w = (size_t)(2 * max + 2);
    long *trace = malloc((size_t)(max + 1) * w * sizeof *trace);
    long *v = calloc(w, sizeof *v);
    if (trace == NULL || v == NULL) {
        free(trace);
        free(v);
        return false;
    }
    long off = max, found = -1;
    for (long d = 0; d <= max && found < 0; d++) {
        for (long k = -d; k <= d; k += 2) {
            long x;
            if (k == -d || (k != d && v[off + k - 1] < v[off + k + 1]))
                x = v[off + k + 1];
            else
                x = v[off + k - 1] + 1;
            long y = x - k;
            while (x < N && y < M && a[x] == b[y])
                x++, y++;
            v[off + k] = x;
            if (x >= N && y >= M) {
                found = d;
                break;
            }
        }
        memcpy(trace + (size_t)d * w, v, w * sizeof *v);
    }
    if (found >= 0) {
        long x = N, y = M;
        for (long d = found; d > 0; d--) {
            const long *vp = trace + (size_t)(d - 1) * w;
            long k = x - y;
            long pk = (k == -d || (k != d && vp[off + k - 1] < vp[off + k + 1])) ? k + 1 : k - 1;
            long px = vp[off + pk], py = px - pk;
            while (x > px && y > py)
                x--, y--;
            if (pk == k + 1)
                ins[py] = true;
            else
                del[px] = true;
            x = px, y = py;
        }
    }
    free(trace);
    free(v);
    return found >= 0;
}

/* Appends the changed ranges of now against then (both with line hashes)
 * to b; the number of ranges found. */
static size_t changed_ranges(agti_buf *b, const agti_seen_sum *then, const agti_seen_sum *now)
{
    const uint64_t *a = then->lines, *c = now->lines;
    size_t n = then->nlines, m = now->nlines, pre = 0, suf = 0;
    while (pre < n && pre < m && a[pre] == c[pre])
        pre++;
    while (suf < n - pre && suf < m - pre && a[n - 1 - suf] == c[m - 1 - suf])
        suf++;
    size_t na = n - pre - suf, nb = m - pre - suf;
    ranges r = {b, 0};
    if (na == 0 && nb == 0)
        return 0;
    bool *del = calloc(na + 1, 1), *ins = calloc(nb + 1, 1);
    if (del == NULL || ins == NULL || !myers(a + pre, na, c + pre, nb, del, ins)) {
        put_range(&r, pre, pre + nb);
    } else {
        size_t i = 0, j = 0;
        while (i < na || j < nb) {
            if ((i < na && del[i]) || (j < nb && ins[j])) {
                size_t j0 = j;
                while ((i < na && del[i]) || (j < nb && ins[j])) {
                    while (i < na && del[i])
                        i++;
                    while (j < nb && ins[j])
                        j++;
                }
                put_range(&r, pre + j0, pre + j);
            } else {
                i++, j++;
            }
        }
    }
    free(del);
    free(ins);
    if (r.n > MAX_RANGES)
        agti_buf_printf(b, " and %zu more", r.n - MAX_RANGES);
    return r.n;
}

/* ---- the check -------------------------------------------------------- */

/* The check of both entry points: text may be NULL (no line ranges). */
static int check(agt_session *s, const char *abs, const char *rel, const char *tool,
                 const char *text, size_t len, uint64_t hash, bool overwrite, agti_buf *msg)
{
    unsigned opts = agti_session_edit_options(s);
    const seen_file *f = find(s->seen, abs);
    if (f == NULL) {
        if (!overwrite || (opts & AGT_EDIT_REQUIRE_READ) == 0)
            return AGT_OK;
        agti_buf_printf(msg,
                        "%s has not been read in this session, and this session lets %s change "
                        "only files that were read first. Nothing was changed. Read it (a part "
                        "of it is enough), then call %s again.",
                        rel, tool, tool);
        return msg->oom ? AGT_ENOMEM : AGT_ESTATE;
    }
    if ((opts & AGT_EDIT_NO_STALE_CHECK) != 0)
        return AGT_OK;
    if (f->sum.size == len && (text ? XXH3_64bits(text, len) : hash) == f->sum.hash)
        return AGT_OK;
    agti_buf_printf(msg, "%s has changed on disk since it was last read", rel);
    agti_seen_sum now = {0, 0, NULL, 0};
    size_t nr = 0;
    if (f->sum.lines != NULL && text != NULL) {
        int rc = agti_seen_sum_text(text, len, &now);
        if (rc != AGT_OK)
            return rc;
        if (now.lines != NULL) {
            size_t mark = msg->len;
            agti_buf_puts(msg, " (changed now: ");
            nr = changed_ranges(msg, &f->sum, &now);
            if (nr == 0)
                agti_buf_truncate(msg, mark);
            else
                agti_buf_puts(msg, ")");
        }
        agti_seen_sum_free(&now);
    }
    if (nr == 0 && len == f->sum.size)
        agti_buf_puts(msg, " (its size is the same, its content is not)");
    else if (nr == 0)
        agti_buf_printf(msg, " (%zu byte%s now, %" PRIu64 " when it was read)", len,
                        len == 1 ? "" : "s", f->sum.size);
    agti_buf_printf(msg,
                    ", by another program or a command. %s did not change it. Read it again, "
                    "then redo the change on what the file holds now.",
                    tool);
    return msg->oom ? AGT_ENOMEM : AGT_ESTATE;
}

int agti_seen_check(agt_session *s, const char *abs, const char *rel, const char *tool,
                    const char *text, size_t len, bool overwrite, agti_buf *msg)
{
    pthread_mutex_lock(&s->seen->lock);
    int rc = check(s, abs, rel, tool, text, len, 0, overwrite, msg);
    pthread_mutex_unlock(&s->seen->lock);
    return rc;
}

int agti_seen_check_hash(agt_session *s, const char *abs, const char *rel, const char *tool,
                         uint64_t hash, uint64_t size, bool overwrite, agti_buf *msg)
{
    pthread_mutex_lock(&s->seen->lock);
    int rc = check(s, abs, rel, tool, NULL, (size_t)size, hash, overwrite, msg);
    pthread_mutex_unlock(&s->seen->lock);
    return rc;
}

/* ---- save and restore ------------------------------------------------- */

static int save_locked(const struct agti_seen *t, json_t **value);

int agti_seen_section_save(const agt_session *s, json_t **value)
{
    *value = NULL;
    if (s->seen == NULL)
        return AGT_OK;
    pthread_mutex_lock(&s->seen->lock);
    int rc = save_locked(s->seen, value);
    pthread_mutex_unlock(&s->seen->lock);
    return rc;
}

static int save_locked(const struct agti_seen *t, json_t **value)
{
    if (t->n == 0)
        return AGT_OK;
    json_t *arr = json_array();
    /* oldest first, so a restore keeps the order of forgetting */
    size_t *order = malloc(t->n * sizeof *order);
    if (arr == NULL || order == NULL) {
        json_decref(arr);
        free(order);
        return agti_oom();
    }
    for (size_t i = 0; i < t->n; i++)
        order[i] = i;
    for (size_t i = 1; i < t->n; i++)
        for (size_t j = i; j > 0 && t->files[order[j - 1]].seq > t->files[order[j]].seq; j--) {
            size_t x = order[j];
            order[j] = order[j - 1];
            order[j - 1] = x;
        }
    for (size_t i = 0; i < t->n; i++) {
        const seen_file *f = &t->files[order[i]];
        char hex[17];
        snprintf(hex, sizeof hex, "%016" PRIx64, f->sum.hash);
        if (json_array_append_new(arr, json_pack("{s:s, s:I, s:s}", "path", f->abs, "size",
                                                 (json_int_t)f->sum.size, "hash", hex)) != 0) {
            json_decref(arr);
            free(order);
            return agti_oom();
        }
    }
    free(order);
    *value = arr;
    return AGT_OK;
}

static bool parse_hash(const char *h, uint64_t *out)
{
    if (h == NULL || strlen(h) != 16 || strspn(h, "0123456789abcdef") != 16)
        return false;
    *out = strtoull(h, NULL, 16);
    return true;
}

int agti_seen_section_load(agt_session *s, json_t *value, void **tmp)
{
    (void)s;
    struct agti_seen *t = agti_seen_new();
    if (t == NULL)
        return agti_oom();
    if (value != NULL && !json_is_array(value)) {
        agti_seen_free(t);
        return agti_error(AGT_EINVALID, "session file: \"seen\" must be an array");
    }
    size_t i;
    json_t *e;
    json_array_foreach(value, i, e)
    {
        const char *path = json_string_value(json_object_get(e, "path"));
        json_t *size = json_object_get(e, "size");
        uint64_t hash;
        if (path == NULL || path[0] != '/' || !json_is_integer(size) ||
            json_integer_value(size) < 0 ||
            !parse_hash(json_string_value(json_object_get(e, "hash")), &hash)) {
            agti_seen_free(t);
            return agti_error(AGT_EINVALID,
                              "session file: seen[%zu] needs \"path\" (absolute), \"size\" (0 or "
                              "more) and \"hash\" (16 lower-case hex digits)",
                              i);
        }
        agti_seen_sum sum = {hash, (uint64_t)json_integer_value(size), NULL, 0};
        if (record_in(t, path, &sum) != AGT_OK) {
            agti_seen_free(t);
            return agti_oom();
        }
    }
    *tmp = t;
    return AGT_OK;
}

void agti_seen_section_commit(agt_session *s, void *tmp)
{
    agti_seen_free(s->seen);
    s->seen = tmp;
}

void agti_seen_section_discard(void *tmp)
{
    agti_seen_free(tmp);
}
