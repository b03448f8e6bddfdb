/*
 * libFuzzer target: parse arbitrary bytes as ignore files (root and "sub")
 * and query arbitrary paths, both through the full query and the walker's
 * push/pop interface. Input: root rules '\0' sub rules '\0' path '\n' path...
 * No file system access: the root does not exist, so only the given rules apply.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fs/fs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *d = (const char *)data;
    const char *z1 = memchr(d, '\0', size);
    size_t l1 = z1 ? (size_t)(z1 - d) : size;
    const char *rest = z1 ? z1 + 1 : d + size;
    size_t rsize = size - (size_t)(rest - d);
    const char *z2 = memchr(rest, '\0', rsize);
    size_t l2 = z2 ? (size_t)(z2 - rest) : rsize;
    const char *q = z2 ? z2 + 1 : rest + rsize;
    size_t qsize = size - (size_t)(q - d);

    agti_ignore *ig = NULL;
    if (agti_ignore_new(&ig, "/nonexistent-agt-fuzz-root", "/nonexistent-agt-fuzz-home",
                        AGTI_IGN_NO_GLOBAL | AGTI_IGN_NO_EXCLUDE) != AGT_OK)
        return 0;
    agti_ignore_add_text(ig, "", d, l1);
    agti_ignore_add_text(ig, "sub", rest, l2);
    char *paths = malloc(qsize + 1);
    if (paths == NULL) {
        agti_ignore_free(ig);
        return 0;
    }
    memcpy(paths, q, qsize);
    paths[qsize] = '\0';
    agti_ignore_push(ig, "");
    agti_ignore_push(ig, "sub");
    for (char *p = paths; p != NULL;) {
        char *next = strchr(p, '\n');
        if (next != NULL)
            *next++ = '\0';
        bool out;
        agti_ignore_is_ignored(ig, p, false, &out);
        agti_ignore_is_ignored(ig, p, true, &out);
        agti_ignore_check_entry(ig, p, false);
        agti_ignore_check_entry(ig, p, true);
        p = next;
    }
    agti_ignore_pop(ig);
    agti_ignore_pop(ig);
    free(paths);
    agti_ignore_free(ig);
    return 0;
}
