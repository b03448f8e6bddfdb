/*
 * Internal side of the git engine: the agt_changes handle and helpers shared
 * by its files (open.c resolves revisions and builds the libgit2 diff,
 * build.c turns it into an agt_diff, tree.c lists and reads the reviewed
 * tree). The review tools use agti_changes_files() to walk the file list
 * without a JSON round trip.
 */
#ifndef AGT_LIB_GIT_INTERNAL_H
#define AGT_LIB_GIT_INTERNAL_H

#include <sys/stat.h>
#include "git/git_dl.h" /* <git2.h>, its functions loaded on first use */
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include "agenttools/git.h"
#include "core/core.h"

/* Post-change contents larger than this are not attached for anchoring. */
#define AGTI_GIT_CONTENT_MAX ((size_t)8 << 20)
/* ... and once this much has been attached in total, no more. */
#define AGTI_GIT_CONTENT_TOTAL ((size_t)256 << 20)
/* agt_changes_read_file() refuses files larger than this. */
#define AGTI_GIT_READ_MAX ((size_t)64 << 20)

/* Where the post-change side of the change set lives. */
enum agti_changes_source {
    AGTI_SOURCE_WORKTREE = 0,
    AGTI_SOURCE_INDEX = 1,
    AGTI_SOURCE_COMMIT = 2
};

struct agt_changes {
    git_repository *repo;
    int mode;              /* AGT_CHANGES_* */
    int source;            /* AGTI_SOURCE_* */
    git_index *index;      /* workspace mode */
    git_tree *base_tree;   /* NULL: the empty tree */
    git_tree *target_tree; /* range/commit mode */
    git_oid base_oid, target_oid;
    bool has_base, has_target;
    char *workdir;  /* with a trailing '/', NULL for a bare repository */
    int workdir_fd; /* the working tree's root folder (O_PATH), -1 when none:
                       files are opened relative to it */
    /* workspace mode: the index file c->index was read from, as stat saw it
     * before and after the read (index_stamped false when they differ) */
    bool index_stamped;
    /* workspace mode with unstaged changes: the sorted paths the working
     * tree no longer has (deleted there, or no longer a file: what the
     * index-to-working-tree diff reported deleted), so that the file list
     * needs no second lstat of every entry */
    char **absent;
    size_t nabsent;
    struct agti_file_stamp {
        dev_t dev;
        ino_t ino;
        off_t size;
        struct timespec mtime, ctime;
    } index_stamp;
    agt_diff *diff;
    size_t content_bytes; /* attached so far */
    /* reviewed-tree file list, built on first use */
    char **files;
    git_oid *file_ids;     /* each file's blob id: commit source (tree walk), or
                              index source once readers are prepared */
    bool *file_id_missing; /* index source: no stage-0 entry (NULL: none missing) */
    size_t nfiles;
    bool files_built;
    /* readers for searches over the reviewed tree (reader.c), kept across
     * searches so libgit2's pack indexes and caches stay warm */
    struct agti_reader_slot *readers;
    unsigned nreaders;
    /* the review tools' other names of sensitive files (lib/tools
     * review_guard.c), for the patterns they were found under; freed by
     * guard_cache_free */
    void *guard_cache;
    void (*guard_cache_free)(void *);
    struct agti_disk_table *disk;  /* working-tree shortcut, NULL until built */
    struct agti_blob_cache *cache; /* blobs read so far, within AGTI_GIT_CACHE_MAX */
};

/* Records `code` with the formatted message followed by ": " and libgit2's
 * last error message (when there is one); returns code. */
int agti_git_error(int code, const char *fmt, ...) AGTI_PRINTF(2, 3);

/* Fills *st from stat(path); false when it fails. */
bool agti_file_stamp_of(const char *path, struct agti_file_stamp *st);
bool agti_file_stamp_equal(const struct agti_file_stamp *a, const struct agti_file_stamp *b);

/* Builds c->diff from a libgit2 diff (renames already found). */
int agti_changes_build(agt_changes *c, git_diff *gd);

/* Reads a working-tree file (a symlink reads as its target) into a
 * NUL-terminated malloc'd buffer. When the file is larger than max, returns
 * AGT_ELIMIT with *out_size set. */
int agti_changes_read_workdir(const agt_changes *c, const char *path, size_t max, char **out,
                              size_t *out_len, size_t *out_size);

/* Opens a working-tree file (path relative to the root) with flags:
 * relative to c->workdir_fd when it is open (no walk of the root's own
 * path; no symbolic link followed, the last component's included: ELOOP),
 * else by its full path, built in scratch. Returns the fd; -1 with errno
 * set when open fails; -2 when out of memory. */
int agti_changes_open_workdir(const agt_changes *c, const char *path, agti_buf *scratch, int flags);

/* agti_changes_read_workdir below a working tree given by its folder
 * (workdir, ending in '/') and, when open, its O_PATH descriptor wfd (-1:
 * files are opened by full path). With st_out, the stat data of the file
 * read (zeroed when none was opened, a symbolic link read as its target). */
int agti_workdir_read(int wfd, const char *workdir, const char *path, size_t max, char **out,
                      size_t *out_len, size_t *out_size, struct stat *st_out);

/* Whether the working-tree shortcut of file i (reader.c) holds for a file
 * whose stat data is st: the bytes read from it are the blob's, as
 * agti_changes_read_nth would have returned them. The readers must be
 * prepared (agti_changes_readers_prepare). */
bool agti_changes_disk_same(const agt_changes *c, size_t i, const struct stat *st);

/* The workspace scan (scan.c): the paths the index-to-working-tree diff
 * can report, for a diff limited to them. AGT_OK with the list (maybe
 * empty); AGT_EUNSUPPORTED when the scan cannot vouch for a list (the
 * whole tree is diffed then); AGT_ENOMEM. */
typedef struct agti_scan_list {
    char **v;
    size_t n, cap;
} agti_scan_list;

int agti_workspace_scan(const agt_changes *c, agti_scan_list *out);
void agti_scan_list_free(agti_scan_list *l);

/* Test hook: the scan is not used while this is set (the whole tree is
 * diffed), so that tests can compare the two. */
void agti_git_scan_disable(bool off);
/* Test hook: how many workspace change sets were diffed by a scan's list. */
size_t agti_git_scan_hits(void);

/* Test hook: how many workspace change sets found the index to hold
 * HEAD's tree by its cache tree (and so skipped diffing HEAD against it). */
size_t agti_git_index_head_hits(void);

/* The change set's working-tree folder (ending in '/'), NULL for none. */
const char *agti_changes_workdir(const agt_changes *c);

/* The tracked paths of a repository's index (submodules left out, a
 * conflict's stages once, in the index's order, which is strcmp's) and its
 * working tree, read with
 * a repository handle of its own: a search can start on them while the
 * change set of the same tree opens on another thread. */
typedef struct agti_git_index_list {
    char **paths;
    size_t n;
    char *workdir; /* ending in '/' */
    int wfd;       /* O_PATH descriptor of workdir, -1 when it could not be opened */
} agti_git_index_list;

int agti_git_index_list_read(const char *repo_path, agti_git_index_list *l);
void agti_git_index_list_free(agti_git_index_list *l);

/* The bytes of path in the base tree (before the change), as
 * agt_changes_read_file reads the reviewed tree: AGT_ENOTFOUND when the
 * base has no such blob (or no base tree), AGT_ELIMIT, AGT_EGIT, AGT_ENOMEM.
 * out is NUL-terminated, malloc'd. */
int agti_changes_read_base(agt_changes *c, const char *path, char **out, size_t *out_len);

/* git's similarity index (0..100) of src renamed to dst, as `git diff -M`
 * prints it; -1 when out of memory. */
int agti_git_similarity(const char *src, size_t src_len, const char *dst, size_t dst_len,
                        bool is_text);

/* The sorted list of files of the reviewed tree (borrowed, valid until the
 * handle is freed); built on the first call. */
int agti_changes_files(agt_changes *c, const char *const **out_paths, size_t *out_n);

/* ---- reading many files of the reviewed tree (reader.c) --------------- */

/* Bytes of blobs a change set keeps once read (inflated, or read through
 * the working-tree shortcut), so that the next search of the same review
 * reads none of them again. */
#define AGTI_GIT_CACHE_MAX ((size_t)256 << 20)

/* At most this many threads read through one change set at a time. */
#define AGTI_GIT_MAX_READERS 8

/* Bytes of one file as a reader got them; release with agti_read_release.
 * data may borrow the reader's own buffer (neither cached nor owned set):
 * valid until that reader's next read. */
typedef struct agti_read {
    const char *data;
    size_t len;
    bool from_disk; /* the working-tree shortcut was taken (this time) */
    bool cached;    /* data is borrowed from the change set's blob cache */
    void *raw;      /* owned by raw_owner (odb backend) */
    git_odb_backend *raw_owner;
    char *owned; /* malloc'd */
} agti_read;

/* Makes c ready for agti_changes_read_nth from readers 0..nreaders-1 (one
 * thread each): the file list, one object database per reader (opened on
 * first use and kept until c is freed) and, for the commit and index
 * sources, the table of files the working tree can stand in for. Call it
 * from the thread that owns c, before the readers start. */
int agti_changes_readers_prepare(agt_changes *c, unsigned nreaders);

/* The post-change bytes of file i of agti_changes_files() (commit or index
 * source), as reader `reader`. Returns AGT_OK; AGT_ELIMIT when the file has
 * more than max bytes; AGT_ENOTFOUND when it has no readable blob;
 * AGT_ENOMEM. Sets no last error (it runs on search threads by the
 * thousand). */
int agti_changes_read_nth(agt_changes *c, unsigned reader, size_t i, size_t max, agti_read *out);

void agti_read_release(agti_read *r);

/* Frees what agti_changes_readers_prepare made. */
void agti_changes_readers_free(agt_changes *c);

#endif
