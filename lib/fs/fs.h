/*
 * Internal filesystem engine of libagenttools: path confinement, sensitive
 * files, git ignore rules, glob matching, directory walking and atomic writes.
 * Used by the file tool providers (lib/tools); never installed. Depends on
 * lib/core only. See docs/fs.md for the decisions behind each part.
 */
#ifndef AGT_LIB_FS_H
#define AGT_LIB_FS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "core/core.h"

/* ---- wildmatch (git's semantics, compiled to a bit-parallel NFA) ------ */

/* Compiled wildmatch pattern. Semantics of git's wildmatch() with
 * WM_PATHNAME: '*' and '?' and '[...]' never match '/'; "**" only means
 * "any number of directories" as a whole component (start or after '/',
 * followed by '/' or the end), elsewhere it is two plain stars. Matching is
 * O(len(text) * len(pattern) / 64): no backtracking. */
typedef struct agti_wm agti_wm;

#define AGTI_WM_CASEFOLD 1u

/* Compiles pattern[0..len). A malformed pattern (unterminated "[", bad
 * "[:class:]", trailing backslash) compiles to a pattern that matches nothing,
 * as in git. *bad (may be NULL) is set when that happened. AGT_ENOMEM only. */
int agti_wm_compile(agti_wm **out, const char *pattern, size_t len, unsigned flags, bool *bad);
bool agti_wm_match(const agti_wm *wm, const char *text, size_t len);
void agti_wm_free(agti_wm *wm);
/* One-shot helper (compile, match, free); false on allocation failure. */
bool agti_wildmatch(const char *pattern, const char *text, unsigned flags);
/* Index just past the "]" closing the bracket expression that starts at
 * p[i] == '[', with git's rules ("[]a]", "[!]]", "[[:alpha:]]"), or 0 when it
 * is unterminated or malformed. */
size_t agti_wm_bracket_end(const char *p, size_t len, size_t i);

/* ---- glob (Glob tool, glob filters) ---------------------------------- */

/* A compiled glob: '*', '?', '[...]' (ranges, '!'/'^', POSIX classes), '**'
 * (zero or more directories), '{a,b}' (nested, escapes), backslash escapes.
 * A pattern without '/' matches the basename at any depth (like `rg -g`);
 * a leading "/" or "./" anchors to the root and is dropped; a trailing "/"
 * matches directories only. Hidden files are not special. */
typedef struct agti_glob agti_glob;

#define AGTI_GLOB_CASEFOLD 1u
/* Limit on brace alternatives after expansion. */
#define AGTI_GLOB_MAX_ALTERNATIVES 1024
/* Limit on the pattern's length in bytes. */
#define AGTI_GLOB_MAX_LEN 4096

/* AGT_EINVAL (NULL/empty), AGT_EPARSE (unbalanced brace, unclosed "[",
 * trailing backslash: the message names the offset), AGT_ELIMIT (more than
 * AGTI_GLOB_MAX_ALTERNATIVES alternatives, longer than AGTI_GLOB_MAX_LEN),
 * AGT_ENOMEM. */
int agti_glob_compile(agti_glob **out, const char *pattern, unsigned flags);
/* relpath: '/'-separated, relative to the search root, no leading "./". */
bool agti_glob_match(const agti_glob *g, const char *relpath, size_t len, bool is_dir);
void agti_glob_free(agti_glob *g);

/* ---- ignore rules ---------------------------------------------------- */

typedef struct agti_ignore agti_ignore;

/* Flags for agti_ignore_new. */
#define AGTI_IGN_NO_GLOBAL 1u    /* skip core.excludesFile / $XDG_CONFIG_HOME/git/ignore */
#define AGTI_IGN_NO_EXCLUDE 2u   /* skip <root>/.git/info/exclude */
#define AGTI_IGN_NO_DOTIGNORE 4u /* read .gitignore only (not .ignore/.rgignore) */

/* An ignore context for the tree at root (an existing directory, opened
 * here once; a missing one reads no files). Reads the global excludes and
 * .git/info/exclude now; per-directory files on demand. Files in the tree
 * are opened below the root's descriptor without following any symbolic
 * link (a symlinked .gitignore is not read, as in git; see ignore.c).
 * home: directory for "~" and ~/.gitconfig (NULL: $HOME). */
int agti_ignore_new(agti_ignore **out, const char *root, const char *home, unsigned flags);
/* agti_ignore_new for the folder open as rootfd (borrowed; duplicated), root
 * its path (for absolute queries and messages): no name is looked up. */
int agti_ignore_new_at(agti_ignore **out, int rootfd, const char *root, const char *home,
                       unsigned flags);
void agti_ignore_free(agti_ignore *ig);
/* Adds the patterns of text (gitignore syntax) as if they were the last
 * ignore file of directory reldir ("" for the root). For tests and hosts. */
int agti_ignore_add_text(agti_ignore *ig, const char *reldir, const char *text, size_t len);

/* Walker interface: push the ignore files of directory reldir ("" = root,
 * no trailing slash) before visiting its entries; pop after. */
int agti_ignore_push(agti_ignore *ig, const char *reldir);
/* Which ignore files a directory listing showed, for agti_ignore_push_listed. */
#define AGTI_IGN_HAS_GITIGNORE 1u
#define AGTI_IGN_HAS_IGNORE 2u
#define AGTI_IGN_HAS_RGIGNORE 4u
#define AGTI_IGN_HAS_ALL 7u
/* agti_ignore_push for a walker that has read the directory: only the files
 * named in present (AGTI_IGN_HAS_*) are opened, which saves three failing
 * open() calls in every directory without ignore files. */
int agti_ignore_push_listed(agti_ignore *ig, const char *reldir, unsigned present);
/* agti_ignore_push_listed with the folder open as dirfd (borrowed; -1: look
 * it up below the root): its ignore files are opened in it (O_NOFOLLOW), so
 * the folder cannot be swapped under the read. */
int agti_ignore_push_at(agti_ignore *ig, const char *reldir, int dirfd, unsigned present);
void agti_ignore_pop(agti_ignore *ig);
/* Frames pushed (and not popped). */
size_t agti_ignore_depth(const agti_ignore *ig);

/* The rules of the bottom `depth` frames of a context, shared (lists are
 * never changed once read, and counted): for a walker that hands a folder
 * to another thread. Freeing the snapshot or popping the frames, in any
 * order and on any thread, frees what neither holds. */
typedef struct agti_ignore_snap agti_ignore_snap;
int agti_ignore_snapshot(const agti_ignore *ig, size_t depth, agti_ignore_snap **out);
void agti_ignore_snap_free(agti_ignore_snap *s);
/* A context for another thread: the same root (its descriptor duplicated),
 * flags, global excludes, info/exclude and cached lists, shared; no frames.
 * The original and the fork may then be used on different threads. */
int agti_ignore_fork(const agti_ignore *ig, agti_ignore **out);
/* Replaces the frames of ig with the snapshot's. */
int agti_ignore_restore(agti_ignore *ig, const agti_ignore_snap *s);
/* Decides relpath (an entry of the directory on top of the stack) against
 * the pushed files only: 1 excluded, 0 not (no rule, or a negated rule). */
int agti_ignore_check_entry(const agti_ignore *ig, const char *relpath, bool is_dir);

/* Full query: whether relpath (relative to the root, '/'-separated; "./",
 * "//" and ".." are normalised; an absolute path must lie inside the root)
 * or any of its parent directories is excluded, loading the needed files
 * along the path (cached). Independent of the push/pop stack. *out = true
 * when ignored; the root itself and paths above it are never ignored.
 * AGT_EINVAL (NULL, absolute path outside the root), AGT_ENOMEM. */
int agti_ignore_is_ignored(agti_ignore *ig, const char *relpath, bool is_dir, bool *out);

/* ---- sensitive files ------------------------------------------------- */

/* A sensitive-file policy: the built-in patterns (sensitive.c) plus what
 * the host added, minus what it removed. NULL wherever a policy is taken
 * means the built-in one. Not thread-safe to change while it is read. */
typedef struct agti_sensitive agti_sensitive;

/* True when the file at relpath (any '/'-separated path, absolute or
 * relative) must not be read, written, listed or searched under the
 * built-in policy; *reason (may be NULL) gets a static phrase such as
 * "environment file (.env)". Case-insensitive. */
bool agti_fs_is_sensitive(const char *relpath, const char **reason);
/* The same under policy pol (NULL: built-in). *reason points into pol or
 * static storage. */
bool agti_sensitive_match(const agti_sensitive *pol, const char *relpath, const char **reason);
/* Whether text[0..len) holds a private key (a "-----BEGIN ... PRIVATE
 * KEY-----" armour line, also inside a string or a diff line; a PuTTY key). */
bool agti_sensitive_content(const char *text, size_t len, const char **reason);
/* Name and content together, for a reader that holds the bytes: sensitive
 * by name under pol, or by content (text may be NULL) unless one of the
 * host's '!' exceptions names the path. */
bool agti_sensitive_check(const agti_sensitive *pol, const char *relpath, const char *text,
                          size_t len, const char **reason);
/* Whether one of the host's '!' exceptions names relpath (and no pattern
 * makes it sensitive by name): then its content is not checked either. */
bool agti_sensitive_host_excepted(const agti_sensitive *pol, const char *relpath);
/* A policy holding the built-in patterns. AGT_ENOMEM. */
int agti_sensitive_new(agti_sensitive **out);
void agti_sensitive_free(agti_sensitive *pol);
/* A copy of src (for a sub-agent's session). AGT_ENOMEM. */
int agti_sensitive_clone(agti_sensitive **out, const agti_sensitive *src);
/* Adds a pattern ('!' first: an exception); an existing one (compared
 * case-insensitively) is a no-op. AGT_EINVAL (empty, leading or trailing
 * '/', malformed), AGT_ENOMEM. */
int agti_sensitive_add(agti_sensitive *pol, const char *pattern);
/* Removes a pattern, built-in or added, by its text. AGT_ENOTFOUND. */
int agti_sensitive_remove(agti_sensitive *pol, const char *pattern);
/* The patterns in order (pol NULL: built-in). */
size_t agti_sensitive_count(const agti_sensitive *pol);
const char *agti_sensitive_pattern(const agti_sensitive *pol, size_t i);
/* Tests: judge `pol` by trying every pattern in order (the reference the
 * index of sensitive.c must agree with) instead of by the index. */
void agti_sensitive_set_linear(agti_sensitive *pol, bool linear);

/* ---- hard links to sensitive files (linkset.c) ------------------------ */

/* Entries and folder levels one walk of agti_linkset reads at most; past
 * them it fails closed. */
#define AGTI_LINKSET_MAX 500000
#define AGTI_LINKSET_DEPTH 128

/* The inodes of the sensitive files (by name, under pol) below root that
 * have more than one link, found on first use. Thread-safe. */
typedef struct agti_linkset {
    const agti_sensitive *pol;
    const char *root; /* absolute folder, borrowed; NULL: every multi-linked file is a hit */
    pthread_mutex_t mu;
    bool built;  /* root was walked */
    bool closed; /* the walk failed closed (limit, unreadable folder, memory) */
    struct agti_inode *v;
    size_t n, cap;
} agti_linkset;

void agti_linkset_init(agti_linkset *ls, const agti_sensitive *pol, const char *root);
void agti_linkset_free(agti_linkset *ls);
/* Whether st is another name of a sensitive file below the root: a regular
 * file with st_nlink > 1 whose device and inode one of them has (or any
 * such file once the walk failed closed). False for a file with one link,
 * without a walk. ls NULL: false. */
bool agti_linkset_hit(agti_linkset *ls, const struct stat *st);
/* The same for the entry name of folder dirfd (not followed when a link);
 * false when it cannot be stat'ed. */
bool agti_linkset_hit_at(agti_linkset *ls, int dirfd, const char *name);

/* ---- path resolution and confinement --------------------------------- */

/* Resolves user_path against the workspace root: "~" and "~/x" use home
 * (NULL: $HOME); relative paths are relative to root; the result is
 * lexically normalised, then every existing symlink is resolved (dangling
 * ones too), so a path is judged by where it really leads. Inside test by
 * path components. A path outside root is accepted when it lies inside one
 * of allowed[0..nallowed).
 * *out_abs: absolute real path; *out_rel: root-relative display path ("."
 * for the root itself), or the absolute path for an allowed directory.
 * Both malloc'd (either out may be NULL).
 * AGT_EINVAL (empty path, "~user"), AGT_EDENIED (outside; the message says
 * how to get access), AGT_ENOTFOUND (root missing), AGT_ELIMIT (symlink
 * loop), AGT_ENOMEM. */
int agti_path_resolve(const char *root, const char *const *allowed, size_t nallowed,
                      const char *home, const char *user_path, char **out_abs, char **out_rel);
/* A path argument of a tool made absolute, the one place where its forms
 * are told apart: a file URI (file:///p, file://localhost/p, file:/p; the
 * scheme and "localhost" in any case) names p, percent-decoded; "~" and
 * "~/x" use home (NULL: $HOME); an absolute path stays; a relative one is
 * joined to base. Not normalised. *out malloc'd.
 * AGT_EINVAL (a URI naming another host or no path, with a query or a
 * fragment, a bad or %00 escape; "~user"; home unknown: the message says
 * why), AGT_ENOMEM. */
int agti_path_absolute(const char *base, const char *home, const char *user_path, char **out);
/* Lexical normalisation of an absolute or relative path: drops "." and
 * empty components, applies ".." (never above "/" for absolute paths; kept
 * as leading ".." for relative ones). Malloc'd; "." for an empty result. */
char *agti_path_normalize(const char *path);
/* True when path equals dir or lies below it (component-wise). */
bool agti_path_is_within(const char *path, const char *dir);

/* The real path of the absolute path abs (lexically normalised, then every
 * existing symlink resolved by name, the rest kept literally). Only for
 * deciding which confinement base a path outside every base lands in: the
 * opening itself goes through agti_fs_locate. Malloc'd. AGT_EINVAL,
 * AGT_ELIMIT, AGT_ENOMEM. */
int agti_path_real(const char *abs, char **out);

/* ---- confined resolution (confine.c) ---------------------------------- */

/* A set of confinement bases: the workspace root first, then the
 * directories admitted outside it, each opened once (O_PATH | O_DIRECTORY)
 * at its real path. Every lookup below is relative to one of these
 * descriptors; nothing is opened by its full name. */
typedef struct agti_fsroot agti_fsroot;

#define AGTI_BASE_READONLY 1u /* agti_fsroot_add: reads only (the task log folder) */

/* root: absolute path of an existing directory (realpath'd here). home: for
 * "~" (NULL: $HOME); copied. AGT_EINVAL, AGT_ENOTFOUND, AGT_ENOMEM. */
int agti_fsroot_new(agti_fsroot **out, const char *root, const char *home);
/* Adds a base (an absolute path of an existing directory; its symlinks are
 * resolved now). flags: AGTI_BASE_*. AGT_EINVAL, AGT_ENOTFOUND, AGT_ENOMEM. */
int agti_fsroot_add(agti_fsroot *r, const char *dir, unsigned flags);
void agti_fsroot_free(agti_fsroot *r);
/* The root's real path and descriptor (borrowed). */
const char *agti_fsroot_path(const agti_fsroot *r);
int agti_fsroot_fd(const agti_fsroot *r);

/* Where a path leads. Every descriptor is owned (agti_fsloc_clear). */
typedef struct agti_fsloc {
    int fd;         /* AGTI_LOC_OPEN: the opened last component; -1 when missing
                       or not openable (open_errno) */
    int open_errno; /* why fd is -1 for a file that exists (EACCES, ...) */
    int dirfd;      /* the folder holding it (O_PATH); -1 when a folder is missing */
    char *name;     /* the last component in dirfd; "." for a base itself */
    char *abs;      /* absolute path it was reached at (for messages) */
    char *rel;      /* display path: root-relative ("." the root), absolute in
                       another base; for AGT_ENOTFOUND the path as far as resolved
                       and the rest as given */
    bool exists;
    bool via_link;     /* a symbolic link was followed */
    bool dangling;     /* the last component is a symlink to something missing */
    char *link_target; /* that link's text (it stays inside a base) */
    bool readonly;     /* reached in an AGTI_BASE_READONLY base */
    struct stat st;    /* when exists: of fd when opened, else of the last component */
    /* Folders AGTI_LOC_MKDIRS created, outermost first. */
    int *made_dirfd;
    char **made_name;
    size_t nmade;
} agti_fsloc;

#define AGTI_LOC_OPEN 1u     /* open the last component with oflags (O_NOFOLLOW added) */
#define AGTI_LOC_MKDIRS 2u   /* create the missing folders (0777 & ~umask) */
#define AGTI_LOC_NOFOLLOW 4u /* a symlink as the last component is not followed */

/* Resolves user_path ("~", "~/x", absolute, or relative to the root;
 * normalised lexically first) below the bases of r and, with
 * AGTI_LOC_OPEN, opens it in the same walk. The folders are opened one
 * after the other relative to the previous one (openat2 with
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS when the
 * kernel has it; else openat(O_PATH | O_NOFOLLOW) per component); a
 * symbolic link met on the way is read from the opened link and followed
 * by the library: a relative target from the folder holding it, an
 * absolute one only when its text lies in a base. The last component is
 * opened with O_NOFOLLOW in its opened folder. An absolute path outside
 * every base is resolved by name once to see which base it lands in.
 * Returns AGT_OK when the folder holding the last component was reached
 * (out->exists tells about the last one), AGT_ENOTFOUND when a folder on
 * the way is missing (or is a file; out->rel and out->abs filled),
 * AGT_EDENIED (outside every base, or through a symlink leading outside:
 * the message never says where such a link points), AGT_EINVAL (empty
 * path, "~user", a file in the way of AGTI_LOC_MKDIRS), AGT_ELIMIT (more
 * than 40 links), AGT_EIO, AGT_ENOMEM. On failure, folders it created are
 * removed again and out holds no descriptor. */
int agti_fs_locate(agti_fsroot *r, const char *user_path, unsigned how, int oflags,
                   agti_fsloc *out);
void agti_fsloc_clear(agti_fsloc *loc);
/* Removes (when empty) the folders AGTI_LOC_MKDIRS created, innermost first:
 * for a write that failed. */
void agti_fsloc_undo_dirs(agti_fsloc *loc);

/* Opens rel below dirfd without following any symbolic link and never
 * above dirfd (".." refused with EXDEV): openat2 with RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS, else a walk with
 * O_NOFOLLOW. flags: open(2) flags for the last component (O_CLOEXEC and
 * O_NOFOLLOW added). "" opens dirfd itself ("."). -1 with errno. */
int agti_fs_open_beneath(int dirfd, const char *rel, int flags);
/* Whether openat2 is used (probed once). */
bool agti_fs_have_openat2(void);
/* Test hook: when true, this thread resolves without openat2. */
extern _Thread_local bool agti_fs_no_openat2;

/* ---- names shown to the model ---------------------------------------- */

/* Appends name (n bytes) to b with control characters, DEL, backslash and
 * bytes that are not valid UTF-8 escaped: \n \t \r for those, "\\" for a
 * backslash, \xNN (two lower-case hex digits) for every other such byte.
 * Valid UTF-8 (including '/') is copied as is. */
void agti_fs_name_escape(agti_buf *b, const char *name, size_t n);
/* Whether name needs agti_fs_name_escape (has a byte it would change). */
bool agti_fs_name_needs_escape(const char *name, size_t n);
/* Undoes agti_fs_name_escape: malloc'd, NUL-terminated, *out_len its length
 * (a decoded NUL byte makes the name invalid: NULL with AGT_EINVAL). A
 * backslash not followed by n, t, r, \\ or xNN is kept as is. NULL on OOM. */
char *agti_fs_name_unescape(const char *name, size_t *out_len);

/* ---- directory walker ------------------------------------------------ */

enum agti_fs_type {
    AGTI_FS_FILE = 1,    /* regular file (or a symlink to one, is_symlink set) */
    AGTI_FS_DIR = 2,     /* directory (only reported with include_dirs) */
    AGTI_FS_SYMLINK = 3, /* symlink to a directory, dangling, or to a special file */
    AGTI_FS_OTHER = 4    /* fifo, socket, device */
};

typedef struct agti_walk_entry {
    const char *relpath; /* root-relative, '/'-separated; valid during the callback */
    size_t relpath_len;
    int type;         /* enum agti_fs_type */
    bool is_symlink;  /* the entry itself is a symlink */
    uint64_t size;    /* bytes (of the target for a symlink to a file) */
    int64_t mtime_ns; /* modification time, ns since the epoch */
    /* For a stat the callback decides on (skip_stat walks): fstatat(dirfd,
     * name) names the entry without resolving relpath from the root again.
     * dirfd is the open parent directory (also in very deep trees); both
     * valid during the callback only. */
    int dirfd;
    const char *name;
    /* The worker reporting the entry: 0 in a serial walk, 0..threads-1 in a
     * parallel one (for per-worker state in the callback's payload). */
    unsigned worker;
} agti_walk_entry;

typedef struct agti_walk_opts {
    bool include_ignored;   /* do not apply ignore rules */
    bool include_dirs;      /* also report directories (before their contents) */
    bool skip_sensitive;    /* drop sensitive files, counting them */
    unsigned ignore_flags;  /* AGTI_IGN_* for the ignore context */
    const char *home;       /* for the global excludes; NULL: $HOME */
    size_t max_entries;     /* stop after this many reported entries (0: no limit) */
    int64_t time_budget_ms; /* stop after this long (0: no limit) */
    size_t max_depth;       /* 0: no limit; 1: only the root's entries */
    bool skip_stat;         /* type from d_type only: size and mtime_ns stay 0
                               for files, directories and symlinks not leading to a
                               file (a symlink's target is stat'ed for its type; an
                               entry without d_type is lstat'ed and keeps both) */
    /* An ancestor of root whose ignore rules reach into root (the workspace
     * root when a tool walks a folder in it): the ignore files of the folders
     * from ignore_root down to root apply, with paths relative to
     * ignore_root, and its .git/info/exclude is read. NULL, or not an
     * ancestor of root: root itself. */
    const char *ignore_root;
    /* The policy of skip_sensitive; NULL: the built-in one. */
    const agti_sensitive *sensitive;
    /* Up to this many threads (0, 1: the calling thread only). With more,
     * the walk starts on the calling thread alone and starts the others
     * once it has read parallel_after entries (0: 1024), so a small walk
     * never starts one; then the callback runs on several threads at once
     * (entry->worker says which), in no fixed order. The same entries are
     * reported with the same decisions, the counts are summed and the
     * warnings come in walk order. With max_entries the walk stays serial. */
    unsigned threads;
    size_t parallel_after;
} agti_walk_opts;

typedef struct agti_walk_result {
    size_t entries;           /* entries reported */
    size_t sensitive_skipped; /* with skip_sensitive */
    bool truncated;           /* max_entries reached */
    bool timed_out;           /* time budget ran out */
    char **warnings;          /* unreadable directories etc., malloc'd */
    size_t nwarnings;
} agti_walk_result;

/* Callback: non-zero stops the walk (agti_walk returns AGT_ECANCELLED). */
typedef int (*agti_walk_cb)(const agti_walk_entry *e, void *payload);

/* Walks root recursively in name order (bytewise), depth first. Skips VCS
 * folders (.git .hg .svn .bzr _darcs .jj), includes hidden files, honours
 * .gitignore/.ignore/.rgignore/info/exclude/global excludes unless
 * include_ignored, never follows symlinked directories (symlinks to files
 * are reported as files). Unreadable directories become warnings. Stopping
 * at a limit is not an error (see truncated / timed_out). res may be NULL.
 * AGT_EINVAL, AGT_ENOTFOUND (root), AGT_ECANCELLED, AGT_ENOMEM. */
int agti_walk(const char *root, const agti_walk_opts *opts, agti_walk_cb cb, void *payload,
              agti_walk_result *res);
/* agti_walk of the folder open as rootfd (O_PATH is fine; borrowed), with
 * root its path (for relpath's base, the ignore files and messages): no
 * name above the entries is looked up again. */
int agti_walk_at(int rootfd, const char *root, const agti_walk_opts *opts, agti_walk_cb cb,
                 void *payload, agti_walk_result *res);
void agti_walk_result_clear(agti_walk_result *res);
/* CPUs this process may run on (its affinity mask), at least 1. */
unsigned agti_walk_cpus(void);
/* Threads for a parallel walk: one per CPU, at most `most`. */
unsigned agti_walk_threads(unsigned most);
/* Test hooks for the walks started on this thread: agti_walk_threads()
 * answers agti_walk_force_threads when it is non-zero; helpers start after
 * agti_walk_force_parallel_after entries when it is non-zero; with
 * agti_walk_hold_main the calling thread waits for the started helpers to
 * ask for work before it goes on, and leaves every handout to them (so that
 * a test on a small tree sees handouts happen). */
extern _Thread_local unsigned agti_walk_force_threads;
extern _Thread_local size_t agti_walk_force_parallel_after;
extern _Thread_local bool agti_walk_hold_main;
/* Test hook: when true, the walks on this thread ignore d_type as if the
 * file system gave DT_UNKNOWN for every entry (some network and FUSE file
 * systems do), so every entry is lstat'ed. */
extern _Thread_local bool agti_walk_force_unknown_dtype;

/* ---- atomic writes and line endings ---------------------------------- */

#define AGTI_WRITE_MKDIRS 1u /* create missing parent directories (0777 & ~umask) */
#define AGTI_WRITE_APPEND 2u /* new content = old content + data (still atomic) */

/* Replaces path with data via a temporary file in the same directory
 * (mkstemp, O_CLOEXEC), full write, fsync, the original's mode bits (new
 * files: 0666 & ~umask), rename, fsync of the directory. A symlink at path
 * is written through (its target is replaced, the link stays). On any
 * failure the original is untouched and the temporary file removed.
 * An existing file with more than one name (st_nlink > 1, hard links) is
 * rewritten in place instead, so every name sees the new content: an undo
 * copy of its content is written and flushed next to it first (so a
 * directory where no file can be created refuses the write, like the
 * rename path does), the new length is reserved with fallocate (a full disk
 * fails before the original is touched), then the file is rewritten from
 * offset 0, truncated and flushed; when that fails the original content is
 * written back, and the undo copy is removed in every case but one: when
 * putting the original back failed too, it stays and the message names it.
 * An undo copy left by a killed rewrite is settled by the next write of
 * the file (removed when the file is old or new, else that write refused);
 * stale temporaries of ours in the folder are removed first (atomic.c).
 * AGT_EINVAL (NULL path, path is a directory or not a regular file),
 * AGT_ENOTFOUND (parent missing without AGTI_WRITE_MKDIRS), AGT_EDENIED
 * (the file's mode forbids this process to write it), AGT_EIO (with the
 * failing call and errno text; a read-only file system), AGT_ENOMEM. */
int agti_fs_write_atomic(const char *path, const void *data, size_t len, unsigned flags);

/* agti_fs_write_atomic, and *kept (may be NULL) tells after a failure
 * whether the file still holds its original content: false only when an
 * in-place rewrite and the restore after it both failed. */
int agti_fs_write_file(const char *path, const void *data, size_t len, unsigned flags, bool *kept);

#define AGTI_WRITE_LINKS_IN_PLACE                                                                  \
    4u /* a file with several names is rewritten in                                                \
          place (every name sees the new content)                                                  \
          instead of replaced (the link broken) */

#define AGTI_WRITE_NO_DIRSYNC                                                                      \
    8u /* agti_fs_write_at: the folder is not fsync'ed after the new content                       \
          gets its name; the caller does it (once for several files) */

/* What agti_fs_write_at did. */
typedef struct agti_write_info {
    bool kept;        /* after a failure: the file still holds its old content */
    bool link_broken; /* the file had nlink names; this one is a new file now */
    bool in_place;    /* rewritten in place (AGTI_WRITE_LINKS_IN_PLACE) */
    unsigned long nlink;
    bool existed;
    uint64_t old_size;
} agti_write_info;

/* Replaces the file name in the open folder dirfd (O_PATH is fine) with
 * data, without looking up any other name: the new content goes to an
 * O_TMPFILE file made in dirfd (a named temporary ".NAME.agt-XXXXXX" there
 * when the file system has no O_TMPFILE), is written, gets the mode bits of
 * the file it replaces (new files 0666 & ~umask) and its owner when root,
 * is fsync'ed, linked into dirfd (straight at name for a new file, which a
 * kill cannot leave half-done; else at a temporary name renamed over name
 * at once), and dirfd is fsync'ed. name must not be a symlink (the caller
 * resolved it; one swapped in is refused). A file with several names is
 * replaced the same way by default (info->link_broken), or with
 * AGTI_WRITE_LINKS_IN_PLACE rewritten in place after a flushed backup copy
 * (see agti_fs_write_atomic). display names the file in messages.
 * Errors as agti_fs_write_atomic. */
int agti_fs_write_at(int dirfd, const char *name, const char *display, const void *data, size_t len,
                     unsigned flags, agti_write_info *info);

/* Test hook: when > 0, the n-th step of the next atomic writes on this
 * thread fails with EIO (1 create temp, 2 write, 3 chmod, 4 fsync, 5
 * rename; for a file with several names 1, 2 and 4 are the undo copy's,
 * 6 stops the in-place rewrite after half of the bytes, 7 does that and
 * fails the restore too); reset to 0 after firing. */
extern _Thread_local int agti_fs_atomic_fail_step;
/* Test hook: when the n-th step above is reached (same numbers; 6 after
 * half of an in-place rewrite, 8 after the whole rewrite reached the disk
 * and before its undo copy is removed), the process kills itself with
 * SIGKILL. */
extern _Thread_local int agti_fs_atomic_kill_step;
/* Test hook: when true, this thread's writes use named temporaries as on a
 * file system without O_TMPFILE. */
extern _Thread_local bool agti_fs_no_tmpfile;

/* The name forms of the temporaries of atomic.c (".NAME.agt-RRRRCC") and
 * of txn.c's second names of old files (".NAME.agt-old-RRRRCC"). */
#define AGTI_FS_TEMP_INFIX ".agt-"
#define AGTI_FS_OLD_INFIX ".agt-old-"
/* A random name ".NAME" infix "RRRRCC" for name (cut to fit NAME_MAX):
 * four random letters or digits, two check characters over the rest. */
void agti_fs_temp_name(char *out, size_t outsz, const char *name, const char *infix);
/* Removes from the folder dirfd the stale temporaries and second names of
 * ours (what every agti_fs_write_at does first): of the exact name form,
 * this user's, not locked by a living writer, and holding nothing else
 * has: a temporary with one name unchanged for 10 minutes; a second name
 * whose inode has another name (any age: its writer locks the inode before
 * making it), or, unchanged for 10 minutes, whose file holds the same
 * bytes. */
void agti_fs_sweep_stale(int dirfd);
/* Test hook: seconds added to the sweep's clock (it acts that much later). */
extern _Thread_local time_t agti_fs_sweep_clock_shift;

/* ---- all-or-nothing writes of several files (txn.c) ------------------ */

/* A set of file changes made all together or not at all. */
typedef struct agti_fs_txn agti_fs_txn;

int agti_fs_txn_new(agti_fs_txn **out);
/* Stages: name in the open folder dirfd (borrowed, open until the commit
 * returns; O_PATH is fine)
 * becomes data[0..len) (borrowed until agti_fs_txn_commit returns), as
 * agti_fs_write_at writes it (flags: AGTI_WRITE_LINKS_IN_PLACE). The name
 * must not be a symlink (the caller resolved it). AGT_EINVAL, AGT_EIO,
 * AGT_ENOMEM. */
int agti_fs_txn_put(agti_fs_txn *t, int dirfd, const char *name, const char *display,
                    const void *data, size_t len, unsigned flags);
/* Stages the removal of name in dirfd. */
int agti_fs_txn_remove(agti_fs_txn *t, int dirfd, const char *name, const char *display);
/* Makes the staged changes in order. First every existing file that
 * changes gets a second name in its folder (".NAME.agt-old-RRRRCC", the
 * same inode, locked until it is dropped; a file rewritten in place
 * instead has its content read into memory); then each change is made (agti_fs_write_at, unlinkat);
 * then the second names are removed. When a step fails, the changes made are undone newest first
 * (the old inode renamed back over the name: same bytes, inode and mode; a created file removed)
 * and the error of the failing step is returned; *restored (may be NULL) is false when undoing
 * failed too, and the message then names those files and where their old
 * content is (that second name is kept). First the folders are swept
 * (agti_fs_sweep_stale). A kill leaves each file old or new, and second
 * names: a later sweep removes those that keep nothing else has, never the
 * only copy of the old content of a file that was changed.
 * AGT_OK, or the failing step's status (AGT_EIO, AGT_EDENIED,
 * AGT_ENOTFOUND, AGT_EINVAL, AGT_ENOMEM). */
int agti_fs_txn_commit(agti_fs_txn *t, bool *restored);
void agti_fs_txn_free(agti_fs_txn *t);
/* Test hook: when > 0, the n-th step of the next commit on this thread
 * fails with EIO (steps: each second name or in-memory copy, then each
 * write or removal, in order); reset to 0 after firing. */
extern _Thread_local int agti_fs_txn_fail_step;
/* Test hook: when > 0, the process kills itself with SIGKILL when the
 * commit reaches that step (same numbers). */
extern _Thread_local int agti_fs_txn_kill_step;
/* Test hook: when true, undoing a change of a failed commit fails. */
extern _Thread_local bool agti_fs_txn_fail_undo;

enum agti_eol { AGTI_EOL_NONE = 0, AGTI_EOL_LF = 1, AGTI_EOL_CRLF = 2 };
/* The line ending of text: the majority of its line endings; on a tie the
 * first one; AGTI_EOL_NONE without any newline. */
int agti_fs_detect_eol(const char *text, size_t len);
/* Copies text with every bare "\n" turned into "\r\n" (existing "\r\n"
 * kept). Malloc'd, NUL-terminated; *out_len its length. NULL on OOM. */
char *agti_fs_lf_to_crlf(const char *text, size_t len, size_t *out_len);
/* Copies text with every "\r\n" turned into "\n". */
char *agti_fs_crlf_to_lf(const char *text, size_t len, size_t *out_len);

#endif
