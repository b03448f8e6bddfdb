/*
 * libFuzzer target: the notebook writer (lib/tools/nbformat.c) on arbitrary
 * JSON. Whatever jansson reads from the input, written in the input's own
 * style (agti_nb_style_of: indent, ensure_ascii, final newline), must read
 * back equal (escapes, surrogate pairs, Python float reprs), and writing
 * that again must give the same bytes (a notebook NotebookEdit wrote is a
 * fixed point). The input as a source string must split (str.splitlines)
 * into pieces that join back to it.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "tools/nbformat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_split(const char *s, size_t n)
{
    json_t *lines = agti_nb_split_lines(s, n);
    if (lines == NULL)
        return; /* OOM */
    agti_buf b = AGTI_BUF_INIT;
    if (!agti_nb_text(&b, lines) || b.len != n || (n > 0 && memcmp(b.ptr, s, n) != 0)) {
        fprintf(stderr, "split lines do not join back to the input\n");
        abort();
    }
    agti_buf_free(&b);
    json_decref(lines);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    check_split(text, size);
    json_error_t err;
    json_t *v =
        json_loadb(text, size, JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES, &err);
    if (v == NULL)
        return 0;
    agti_nb_style st;
    agti_nb_style_of(text, size, &st);
    agti_buf once = AGTI_BUF_INIT, twice = AGTI_BUF_INIT;
    agti_nb_dump(&once, v, &st);
    json_t *back = json_loadb(once.ptr, once.len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
    if (back == NULL || !json_equal(v, back)) {
        fprintf(stderr, "written notebook JSON does not read back equal: %s\n%.*s\n",
                back ? "values differ" : err.text, (int)once.len, once.ptr);
        abort();
    }
    agti_nb_style st2;
    agti_nb_style_of(once.ptr, once.len, &st2);
    if (st2.indent == st.indent && st2.ascii == st.ascii) {
        agti_nb_dump(&twice, back, &st2);
        if (twice.len != once.len || memcmp(twice.ptr, once.ptr, once.len) != 0) {
            fprintf(stderr, "writing the written JSON again changed it\n");
            abort();
        }
    }
    agti_buf_free(&once);
    agti_buf_free(&twice);
    json_decref(back);
    json_decref(v);
    return 0;
}
