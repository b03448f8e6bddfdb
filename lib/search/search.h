/*
 * Internal search engine of libagenttools: the engine under the Grep and
 * code_search tools. PCRE2 (JIT, UTF, invalid UTF-8 tolerated) run over the
 * whole file buffer with ripgrep's line semantics, a memmem fast path for
 * literals, a required-byte prefilter, binary and size skipping, context
 * lines, caps and a time budget, file filters (ripgrep types, globs, git
 * pathspecs) and a parallel tree search on top of lib/fs's walker.
 * Never installed. Depends on lib/core and lib/fs. See docs/search.md.
 */
#ifndef AGT_LIB_SEARCH_H
#define AGT_LIB_SEARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/core.h"

/* ---- options --------------------------------------------------------- */

enum agti_search_mode {
    AGTI_SEARCH_CONTENT = 0, /* matched lines (+ context) */
    AGTI_SEARCH_FILES = 1,   /* only whether a file matches (stops at the first match) */
    AGTI_SEARCH_COUNT = 2    /* number of matched lines per file */
};

/* Defaults used when the corresponding field is 0. */
#define AGTI_SEARCH_DEFAULT_MAX_LINE 2000             /* characters kept of a line */
#define AGTI_SEARCH_DEFAULT_MAX_FILE_SIZE (64u << 20) /* bytes; larger files are skipped */
#define AGTI_SEARCH_DEFAULT_MATCH_LIMIT 10000000u     /* pcre2_set_match_limit */
#define AGTI_SEARCH_DEFAULT_DEPTH_LIMIT 100000u       /* pcre2_set_depth_limit */
#define AGTI_SEARCH_BINARY_PROBE 8192                 /* bytes checked for a NUL */

typedef struct agti_search_opts {
    const char *pattern; /* UTF-8; a PCRE2 pattern unless literal */
    size_t pattern_len;  /* 0: strlen(pattern) */
    bool literal;        /* the pattern is a fixed string (code_search default) */
    bool case_insensitive;
    bool multiline;  /* '.' matches '\n' and matches may span lines */
    int mode;        /* enum agti_search_mode */
    unsigned before; /* context lines before a match (-B) */
    unsigned after;  /* context lines after a match (-A) */

    /* Caps; 0 means no cap. Applied in path order, so results do not depend
     * on thread timing. */
    size_t max_matches_per_file; /* matched lines kept per file (code_search: 100) */
    size_t max_matches;          /* matched lines kept over the whole call */
    size_t max_files;            /* files with matches kept */
    size_t max_output_bytes;     /* bytes of line text and paths kept */
    int64_t time_budget_ms;      /* stop starting new work after this long */
    size_t max_line_chars;       /* 0: AGTI_SEARCH_DEFAULT_MAX_LINE */
    uint64_t max_file_size;      /* 0: AGTI_SEARCH_DEFAULT_MAX_FILE_SIZE */
    uint32_t match_limit;        /* 0: AGTI_SEARCH_DEFAULT_MATCH_LIMIT */
    uint32_t depth_limit;        /* 0: AGTI_SEARCH_DEFAULT_DEPTH_LIMIT */
    bool binary_report;          /* search binary files too, reporting only that they match */

    /* File selection (tree search). */
    bool include_ignored;     /* do not apply .gitignore/.ignore/.rgignore */
    bool skip_sensitive;      /* drop sensitive files (lib/fs), counting them */
    const char *home;         /* for global git excludes; NULL: $HOME */
    unsigned ignore_flags;    /* AGTI_IGN_* */
    const char *ignore_root;  /* agti_walk_opts.ignore_root: an ancestor of the
                                 searched folder whose ignore rules reach into it */
    const char *glob_base;    /* the searched folder relative to the workspace root
                                 (NULL: none): globs also match "glob_base/relpath",
                                 as rg run from the root matches a glob that
                                 starts with the folder's own path */
    const char *const *globs; /* rg -g style: "!x" excludes; includes OR'ed */
    size_t nglobs;
    const char *const *types; /* ripgrep type names (agti_search_type_globs) */
    size_t ntypes;
    const char *const *pathspecs; /* git pathspecs (code_search file_patterns) */
    size_t npathspecs;
    unsigned threads;       /* search workers; 0: number of online CPUs (max 8) */
    bool no_line_prefilter; /* run the regex over whole buffers, never only on the
                               lines holding a required literal (tests compare both) */
    /* The policy of skip_sensitive (fs.h); NULL: the built-in one. */
    const struct agti_sensitive *sensitive;
} agti_search_opts;

/* ---- results --------------------------------------------------------- */

typedef struct agti_search_line {
    uint64_t line_no; /* 1-based */
    uint64_t offset;  /* byte offset of the line's start in the file, 0-based */
    char *text;       /* without its line ending, invalid UTF-8 replaced by U+FFFD,
                         cut to max_line_chars characters; NUL-terminated */
    size_t len;       /* bytes of text */
    bool is_match;    /* false: a context line */
    bool group_start; /* first line of a group not adjacent to the previous one */
    bool cut;         /* the line was longer than max_line_chars (text ends before it does) */
    /* Characters of the line left out before text: a match line whose match
     * starts past the first three quarters of max_line_chars is shown as a
     * window of max_line_chars characters that starts a quarter of them
     * before the match. 0: text starts at the line's start. */
    size_t cut_from;
} agti_search_line;

typedef struct agti_search_file {
    char *path;                /* root-relative, '/'-separated */
    int64_t mtime_ns;          /* modification time (0 for buffers without one) */
    bool multi_link;           /* a file with more than one hard link (tree searches) */
    uint64_t size;             /* bytes */
    size_t nmatch_lines;       /* matched lines found (COUNT: the count; FILES: >= 1) */
    bool truncated;            /* max_matches_per_file (or a call cap) cut this file's lines */
    bool binary;               /* binary file that matches (binary_report) */
    uint64_t binary_from_line; /* > 0: a NUL byte past the probe, on this line
                                  (1-based); only the lines before it were
                                  searched, as ripgrep stops there */
    agti_search_line *lines;
    size_t nlines;
    char *arena; /* storage of the lines' text (freed by agti_search_file_clear) */
} agti_search_file;

typedef struct agti_search_error {
    char *path;
    int code;      /* AGT_EIO, AGT_ELIMIT (regex match/depth limit) */
    char *message; /* names the path and what failed */
} agti_search_error;

typedef struct agti_search_result {
    agti_search_file *files; /* files with matches, in path order */
    size_t nfiles;
    agti_search_error *errors; /* files that could not be searched, in path order */
    size_t nerrors;
    size_t files_searched;    /* files whose content was searched */
    size_t binary_skipped;    /* binary files not searched */
    size_t too_large_skipped; /* files over max_file_size */
    size_t sensitive_skipped; /* with skip_sensitive */
    size_t total_match_lines; /* matched lines kept over all files */
    bool truncated_matches;   /* max_matches or max_matches_per_file reached */
    bool truncated_files;     /* max_files reached */
    bool truncated_output;    /* max_output_bytes reached */
    bool timed_out;           /* the time budget ran out: later files not searched */
    char **warnings;          /* from the walker (unreadable directories) */
    size_t nwarnings;
} agti_search_result;

void agti_search_result_clear(agti_search_result *res);
void agti_search_file_clear(agti_search_file *f);

/* ---- searcher -------------------------------------------------------- */

typedef struct agti_searcher agti_searcher;

/* Compiles the pattern and the file filters. The options are copied.
 * AGT_EINVAL (NULL/empty pattern, pattern with a line break outside
 * multiline mode, unknown mode, unknown type name: the message lists the
 * known ones), AGT_EPARSE (regex syntax: the message gives the offset and
 * PCRE2's reason; bad glob), AGT_ENOMEM. */
int agti_searcher_new(agti_searcher **out, const agti_search_opts *opts);
void agti_searcher_free(agti_searcher *s);

/* True when relpath passes the type, glob and pathspec filters. */
bool agti_searcher_selects(const agti_searcher *s, const char *relpath, size_t len);

/* Searches one in-memory buffer (a file of a git tree, for example) named
 * path. *out is filled (zeroed first); *matched tells whether anything
 * matched. Binary buffers are skipped (*matched false, *binary true) unless
 * binary_report. The per-file cap applies; call caps do not. AGT_ELIMIT when
 * PCRE2's match or depth limit stopped the search (the message names path),
 * AGT_ENOMEM. */
int agti_searcher_search_buffer(agti_searcher *s, const char *path, const char *data, size_t len,
                                agti_search_file *out, bool *matched, bool *binary);

/* Searches the tree at root (a directory; or a single regular file, then
 * reported under its base name) with the walker of lib/fs: ignore rules,
 * VCS folders skipped, hidden files searched. Workers search in parallel;
 * results come out in the walker's order (bytewise path order, depth
 * first). Files that cannot be read or hit a regex limit become errors and
 * the search goes on. res is zeroed first.
 * AGT_EINVAL, AGT_ENOTFOUND (root), AGT_ENOMEM. */
int agti_search_tree(agti_searcher *s, const char *root, agti_search_result *res);
/* agti_search_tree of the file or folder open as fd (borrowed; a folder may
 * be O_PATH, a file must be open for reading), root naming it: the walk
 * and every file opened stay below fd without following a symlink. */
int agti_search_tree_at(agti_searcher *s, int fd, const char *root, agti_search_result *res);

/* Receives the files with matches of a tree search, in path order with the
 * call caps applied, one call at a time (from any of the search's threads).
 * It owns *f's contents: it moves or clears them. A code other than AGT_OK
 * stops the search, which returns it. */
typedef int (*agti_search_sink)(void *payload, agti_search_file *f);
/* agti_search_tree_at, the files going to sink as the search goes instead
 * of into res->files (which stays empty; res has the rest): a caller that
 * renders them at once needs no memory for all of them. */
int agti_search_tree_sink(agti_searcher *s, int fd, const char *root, agti_search_sink sink,
                          void *payload, agti_search_result *res);
/* Test hooks: the most files the walk queues ahead of the sink (0: the
 * default, 4,096), and the room (in files) the last tree search's queue had. */
void agti_search_tree_set_queue_max(size_t n);
size_t agti_search_tree_last_queue_cap(void);

/* ---- helpers --------------------------------------------------------- */

/* The brace glob of ripgrep type name ("c" -> "{*.[chH],*.[chH].in,*.cats}"),
 * taken from `rg --type-list` (ripgrep 13); NULL for an unknown name. */
const char *agti_search_type_globs(const char *name);
/* Comma-separated list of the known type names (static). */
const char *agti_search_type_names(void);

/* Sorts res->files newest first by mtime (ties by path): the order of
 * Grep's files_with_matches. */
void agti_search_sort_by_mtime(agti_search_result *res);

/* Appends ripgrep's text output for res to b: "path:N:text" for matches,
 * "path-N-text" for context lines, "--" between groups that are not
 * adjacent (and between files when context was asked for); with
 * with_line_numbers false "path:text". Cut lines end with
 * " [... line cut]". FILES mode: one path per line; COUNT: "path:count". */
void agti_search_format(agti_buf *b, const agti_searcher *s, const agti_search_result *res,
                        bool with_line_numbers);
/* One line of that output after its path: separator (':' for a match,
 * '-' for context), line number, the cut markers, text, '\n'. */
void agti_search_format_line(agti_buf *b, const agti_search_line *l, bool with_line_numbers);

/* ---- git pathspecs --------------------------------------------------- */

typedef struct agti_pathspec agti_pathspec;

/* Compiles git pathspecs: magic ":(exclude)", ":(glob)", ":(literal)",
 * ":(icase)", ":(top)" (long form, comma-separated) and the short forms
 * ":!x", ":^x", ":/x". A spec without glob characters matches a path equal
 * to it or below it as a directory; with glob characters it is matched by
 * fnmatch without FNM_PATHNAME ('*' matches '/'), git's default. Specs are
 * relative to the root. AGT_EINVAL (empty spec, unknown magic), AGT_ENOMEM. */
int agti_pathspec_compile(agti_pathspec **out, const char *const *specs, size_t n);
/* True when relpath is selected: it matches some positive spec (or there
 * is none) and no exclude spec. */
bool agti_pathspec_match(const agti_pathspec *ps, const char *relpath);
void agti_pathspec_free(agti_pathspec *ps);

#endif
