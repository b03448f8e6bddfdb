/*
 * A reader of git's index file (Documentation/gitformat-index.txt:
 * versions 2, 3 and 4), without libgit2: the entries' paths, modes, stages
 * and flags, and the cache tree's root. libgit2 reads the index too (the
 * change set diffs with it); this reader serves what libgit2 does not
 * expose or takes long to give: the tracked paths for a search that starts
 * before libgit2 is loaded, and the cache tree that tells, as it tells git,
 * that the index holds HEAD's tree exactly.
 */
#ifndef AGTI_GIT_INDEX_FILE_H
#define AGTI_GIT_INDEX_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct agti_index_entry {
    const char *path; /* NUL-terminated, in the reader's arena */
    uint32_t mode;    /* 0100644, 0100755, 0120000, 0160000 */
    unsigned stage;   /* 0, or 1-3 in a conflict */
    bool assume_valid, skip_worktree, intent_to_add;
} agti_index_entry;

/* What an index the reader refuses with AGT_EUNSUPPORTED is. */
typedef enum agti_index_kind {
    AGTI_INDEX_OTHER = 0, /* another version, an entry flag or extension it does not know */
    AGTI_INDEX_SPLIT,     /* split index (extension link) */
    AGTI_INDEX_SPARSE     /* sparse index (folder entries, extension sdir) */
} agti_index_kind;

typedef struct agti_index_file {
    agti_index_entry *e;
    size_t n;
    unsigned version;
    /* the cache tree's root (extension TREE): valid when it covers every
     * entry of the index with the tree id below */
    bool tree_root_valid;
    int64_t tree_root_entries;
    unsigned char tree_root_id[20];
    char *arena; /* the paths */
    /* set with AGT_EUNSUPPORTED, when the rest of the struct is empty */
    agti_index_kind refused;
} agti_index_file;

/* Reads the index file at path (at most max_bytes long). Returns AGT_OK;
 * AGT_ENOTFOUND when there is no such file; AGT_EUNSUPPORTED for an index
 * this reader does not know (another version, a split or sparse index, an
 * entry flag or a required extension it does not know); AGT_EPARSE for
 * bytes that do not parse; AGT_EIO, AGT_ELIMIT past max_bytes, AGT_ENOMEM;
 * the reason set. The ids are taken as SHA-1's 20 bytes. The
 * trailing checksum is not verified: callers use what they read as a hint
 * checked against libgit2's reading, or only together with the stat data
 * that shows the file unchanged since libgit2 read it. */
int agti_index_file_read(const char *path, size_t max_bytes, agti_index_file *out);

/* Parses an index held in memory (what agti_index_file_read reads). */
int agti_index_file_parse(const unsigned char *data, size_t len, agti_index_file *out);

void agti_index_file_free(agti_index_file *f);

#endif
