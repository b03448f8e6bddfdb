/*
 * libFuzzer target: arbitrary bytes as a git index file (lib/git/index_file.c,
 * which reads the .git/index of a repository under review: bytes an author
 * of that repository controls). On success: as many entries as the header
 * says, each path non-empty, NUL-free and within the arena, stages 0 to 3,
 * the cache tree root's count not negative; in versions 2 and 3 every path
 * is found in the input as written. Seeds: index files git wrote in
 * versions 2, 3 and 4 (tests/fuzz/corpus/fuzz_git_index/).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "git/index_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    agti_index_file f;
    if (agti_index_file_parse(data, size, &f) != AGT_OK)
        return 0;
    if (size < 12 ||
        f.n != ((size_t)data[8] << 24 | (size_t)data[9] << 16 | (size_t)data[10] << 8 | data[11]))
        abort();
    for (size_t i = 0; i < f.n; i++) {
        const agti_index_entry *e = &f.e[i];
        size_t len = strlen(e->path);
        if (len == 0 || e->stage > 3)
            abort();
        if (f.version < 4 && memmem(data, size, e->path, len) == NULL)
            abort();
    }
    if (f.tree_root_valid && f.tree_root_entries < 0)
        abort();
    agti_index_file_free(&f);
    return 0;
}
