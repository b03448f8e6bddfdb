/*
 * libFuzzer target for the diff engine: parse arbitrary bytes; on success
 * export JSON (which must be valid JSON), render every file, set content
 * from the input, and anchor a few snippets taken from the input itself
 * (single and batch), with a relocation callback that answers with another
 * slice of the input.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agenttools/diff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct fz {
    const char *text;
    size_t len;
    int calls;
} fz;

static int relocate(const char *path, const char *file_diff, const char *snippet,
                    const char *suggestion, agt_diff_relocation *r, void *payload)
{
    fz *f = payload;
    (void)path;
    (void)snippet;
    (void)suggestion;
    (void)file_diff;
    size_t off = f->len ? ((size_t)f->calls * 7919u) % f->len : 0;
    size_t n = f->len - off < 64 ? f->len - off : 64;
    f->calls++;
    agt_diff_relocation_provide(r, f->text + off, n);
    return 0;
}

static void check_json(const char *s)
{
    json_error_t e;
    json_t *j = json_loads(s, JSON_ALLOW_NUL, &e);
    if (!j)
        abort(); /* the library produced invalid JSON */
    json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    agt_diff *d = NULL;
    if (agt_diff_parse(&d, text, size) != AGT_OK)
        return 0;
    char *json = NULL;
    if (agt_diff_to_json(d, &json) == AGT_OK) {
        check_json(json);
        agt_free(json);
    }
    size_t n = agt_diff_file_count(d);
    for (size_t i = 0; i < n && i < 8; i++) {
        const char *p = agt_diff_file_path(d, i);
        char *t = NULL;
        if (p && agt_diff_file_text(d, p, &t) == AGT_OK)
            agt_free(t);
        if (p && i == 0)
            agt_diff_set_content(d, p, text, size / 2);
    }
    fz st = {text, size, 0};
    agt_diff_set_relocator(d, relocate, 2, &st);
    /* snippets: NUL-terminated slices of the input at a few offsets */
    char *buf = malloc(size + 1);
    if (!buf) {
        agt_diff_free(d);
        return 0;
    }
    for (int k = 0; k < 4; k++) {
        size_t off = size ? ((size_t)k * size) / 4 : 0;
        size_t len = size - off < 200 ? size - off : 200;
        memcpy(buf, text + off, len);
        buf[len] = '\0';
        const char *path = n ? agt_diff_file_path(d, (size_t)k % n) : NULL;
        char *out = NULL;
        if (agt_diff_anchor(d, k == 3 ? NULL : path, buf, &out) == AGT_OK) {
            check_json(out);
            agt_free(out);
        }
        json_t *arr = json_pack("[{s:s?,s:s}]", "path", path, "existing_code", buf);
        char *req = arr ? json_dumps(arr, 0) : NULL;
        if (req && agt_diff_anchor_batch(d, req, strlen(req), &out) == AGT_OK) {
            check_json(out);
            agt_free(out);
        }
        free(req);
        json_decref(arr);
    }
    free(buf);
    agt_diff_free(d);
    return 0;
}
