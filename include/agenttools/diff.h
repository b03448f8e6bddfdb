/*
 * libagenttools — unified diffs: parse a change set, export it as JSON, keep
 * the post-change content of its files, and anchor review comments (code
 * snippets) to exact lines.
 *
 * Parsing follows git's unified diff format (git-diff(1) "GENERATING PATCH
 * TEXT WITH -P": extended headers, quoted paths, binary markers) and GNU
 * diffutils' `diff -u` / `diff -ruN` output. Paths carry no a/ b/ prefix;
 * for plain diffs the first path component is removed, as `patch -p1` does;
 * a git file whose `diff --git` line names one path twice (`--no-prefix`)
 * keeps its paths whole.
 * Line numbers are 1-based everywhere; 0 means "no line" (unanchored, or the
 * start of an empty side, as in git's `@@ -0,0 +1,3 @@`).
 *
 * Anchoring a snippet tries, in order (docs/diff.md has the details):
 *   1. "hunk_new": the new side of the file's hunks (context + added lines),
 *      new-file line numbers, side "new";
 *   2. "hunk_old": the old side (context + deleted lines), old-file line
 *      numbers, side "old";
 *   3. "file": the whole post-change file given with agt_diff_set_content();
 *   4. "moved": the other files of the change set (stages 1-3 in each); a hit
 *      in exactly one other file at exactly one place moves the comment there;
 *   5. the host relocation callback (agt_diff_set_relocator), whose new
 *      snippet is tried again through stages 1-4;
 *   6. "unanchored": line 0, the comment is kept.
 * Lines are compared after removing one diff marker ('+', '-' or ' ' in
 * column 0 of a snippet line) and leading/trailing white space (so CR of CRLF
 * never matters). Blank lines are ignored on both sides: the snippet's
 * non-blank lines must equal consecutive non-blank lines of the file (or of
 * one hunk side). A snippet that matches at several places of the first stage
 * that matches is reported "ambiguous" with all its candidates, never pinned.
 */
#ifndef AGENTTOOLS_DIFF_H
#define AGENTTOOLS_DIFF_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * A parsed change set: files -> hunks -> lines (opaque).
 *
 * Threads: the calls that take a const agt_diff * (the getters,
 * agt_diff_content, agt_diff_to_json, agt_diff_file_text, agt_diff_anchor,
 * agt_diff_anchor_batch) may run at the same time on one handle from several
 * threads; the line index that the first anchoring builds is built once,
 * under a lock. The calls that change the handle (agt_diff_set_content,
 * agt_diff_set_relocator, agt_diff_free) must not overlap any other call on
 * it. A relocation callback may then be called from several threads at once.
 */
typedef struct agt_diff agt_diff;

/** Handle given to a relocation callback so it can answer with a new snippet. */
typedef struct agt_diff_relocation agt_diff_relocation;

/** File status, as in agt_diff_file_status(). Append-only. */
enum agt_diff_status {
    AGT_DIFF_MODIFIED = 0, /**< content and/or mode changed (a mode-only change too) */
    AGT_DIFF_ADDED = 1,    /**< the file does not exist before the change */
    AGT_DIFF_DELETED = 2,  /**< the file does not exist after the change */
    AGT_DIFF_RENAMED = 3,  /**< git `rename from`/`rename to` */
    AGT_DIFF_COPIED = 4    /**< git `copy from`/`copy to` */
};

/**
 * Host callback asked to relocate a snippet that stages 1-4 could not anchor
 * (usually by asking the model). It answers by calling
 * agt_diff_relocation_provide(r, ...) with a new snippet, or not at all to
 * give up. All strings are NUL-terminated UTF-8 (or the input's bytes) and
 * valid only during the call.
 *
 * @param path       the path the comment was addressed to ("" when none).
 * @param file_diff  the diff text of that file ("" when the path is not in the
 *                   change set).
 * @param snippet    the snippet that failed (the latest one tried).
 * @param suggestion the comment's suggested code ("" when none).
 * @param r          answer handle, valid only during the call.
 * @param payload    the pointer given to agt_diff_set_relocator().
 * @return 0 to go on, non-zero to cancel: the anchoring call then fails with
 *         AGT_ECANCELLED.
 */
typedef int (*agt_diff_relocate_fn)(const char *path, const char *file_diff, const char *snippet,
                                    const char *suggestion, agt_diff_relocation *r, void *payload);

/**
 * Parses a unified diff: `git diff`/`git show`/`git log -p`/`git
 * format-patch` output (mail and commit headers and the `-- ` signature are
 * skipped), or plain `diff -u`/`diff -ruN` output. The text is copied; line
 * content is kept byte-exact (CRLF, invalid UTF-8). A hunk cut short (end of
 * input, or a line that is not part of a hunk before its counts are used up)
 * is kept as far as it goes and the result is flagged "best_effort" in
 * agt_diff_to_json() with a warning naming the line.
 *
 * @param out  receives the new change set; free it with agt_diff_free().
 * @param text the diff bytes (need not be NUL-terminated); NULL only with len 0.
 * @param len  length of text in bytes.
 * @return AGT_OK (an empty or blank text gives zero files);
 *         AGT_EINVAL when out is NULL, or text is NULL with len > 0;
 *         AGT_EPARSE when the non-blank text holds no file header, a hunk
 *         header is malformed (also: a number over 2^31-1) or comes before
 *         any file header (the message names the 1-based line number);
 *         AGT_ELIMIT when the input is 4 GiB or more; AGT_ENOMEM.
 */
AGT_EXTERN int agt_diff_parse(agt_diff **out, const char *text, size_t len);

/**
 * Frees a change set and everything borrowed from it. NULL is ignored.
 */
AGT_EXTERN void agt_diff_free(agt_diff *d);

/**
 * Sets (or replaces) the post-change content of a file, used by anchoring
 * stage 3 and returned by agt_diff_content(). The path may be a file of the
 * change set (new or old path) or any other file of the reviewed tree. The
 * text is copied byte-exact; lines end at LF (a CR before it is kept in the
 * text but ignored when comparing).
 *
 * @param d    the change set.
 * @param path repository-relative path, no a/ b/ prefix.
 * @param text the file's bytes (need not be NUL-terminated); NULL only with len 0.
 * @param len  length of text in bytes.
 * @return AGT_OK; AGT_EINVAL when d or path is NULL, path is empty, or text is
 *         NULL with len > 0; AGT_ELIMIT when the text exceeds 4 GiB; AGT_ENOMEM.
 */
AGT_EXTERN int agt_diff_set_content(agt_diff *d, const char *path, const char *text, size_t len);

/**
 * The post-change content set with agt_diff_set_content(), borrowed.
 *
 * @param d        the change set.
 * @param path     new or old path of a changed file, or a path given to
 *                 agt_diff_set_content().
 * @param out_text receives a pointer to the bytes (NUL-terminated; valid until
 *                 the content of that path is replaced or d is freed).
 * @param out_len  receives the length in bytes (may be NULL).
 * @return AGT_OK; AGT_EINVAL when d, path or out_text is NULL;
 *         AGT_ENOTFOUND when no content was set for that path.
 */
AGT_EXTERN int agt_diff_content(const agt_diff *d, const char *path, const char **out_text,
                                size_t *out_len);

/**
 * Exports the change set as JSON, in the format of corpus/diffs/README.md:
 * {"files":[{"old_path","new_path","status","binary","old_mode","new_mode",
 * "similarity","dissimilarity","hunks":[{"old_start","old_lines","new_start",
 * "new_lines","section"}],"added","deleted"}],"best_effort":bool,
 * "warnings":["line N: ..."]}. The missing side's path is null; modes are
 * six-digit octal strings or null; "status" is added|deleted|modified|
 * renamed|copied; "section" is the text after the hunk header's second "@@ "
 * ("" when none, trailing CR removed). Invalid UTF-8 in paths and sections
 * is replaced by U+FFFD.
 *
 * @param d        the change set.
 * @param out_json receives NUL-terminated JSON; free with agt_free().
 * @return AGT_OK; AGT_EINVAL when d or out_json is NULL; AGT_ENOMEM.
 */
AGT_EXTERN int agt_diff_to_json(const agt_diff *d, char **out_json);

/**
 * Number of files in the change set.
 *
 * @return the count; 0 when d is NULL.
 */
AGT_EXTERN size_t agt_diff_file_count(const agt_diff *d);

/**
 * The path of file i: its new path, or its old path when it was deleted.
 *
 * @param d the change set.
 * @param i 0-based file index, < agt_diff_file_count().
 * @return a borrowed NUL-terminated string, or NULL when d is NULL or i is
 *         out of range.
 */
AGT_EXTERN const char *agt_diff_file_path(const agt_diff *d, size_t i);

/**
 * The old path of file i (before the change).
 *
 * @return a borrowed string; NULL for an added file, when d is NULL or i is
 *         out of range.
 */
AGT_EXTERN const char *agt_diff_file_old_path(const agt_diff *d, size_t i);

/**
 * The new path of file i (after the change).
 *
 * @return a borrowed string; NULL for a deleted file, when d is NULL or i is
 *         out of range.
 */
AGT_EXTERN const char *agt_diff_file_new_path(const agt_diff *d, size_t i);

/**
 * The status of file i.
 *
 * @return an AGT_DIFF_* status (>= 0), or AGT_EINVAL when d is NULL or i is
 *         out of range.
 */
AGT_EXTERN int agt_diff_file_status(const agt_diff *d, size_t i);

/**
 * Whether file i is binary (`Binary files ... differ` or `GIT binary patch`).
 *
 * @return 1 binary, 0 text, AGT_EINVAL when d is NULL or i is out of range.
 */
AGT_EXTERN int agt_diff_file_is_binary(const agt_diff *d, size_t i);

/**
 * Finds a file of the change set by path: first by new path, then by old path
 * (so a renamed file is found by either), ignoring one leading "./", "a/" or
 * "b/" when the path as given is not found.
 *
 * @param d         the change set.
 * @param path      the path to look for.
 * @param out_index receives the 0-based file index (may be NULL to just test).
 * @return AGT_OK when found; AGT_ENOTFOUND when the path is not in the change
 *         set; AGT_EINVAL when d or path is NULL.
 */
AGT_EXTERN int agt_diff_file_index(const agt_diff *d, const char *path, size_t *out_index);

/**
 * The diff text of one file, from its first header line (`diff --git`,
 * `diff -ruN`, or `---`) to its last hunk line, byte-exact as in the parsed
 * input; for files built by the library (not parsed) a git-style rendering.
 *
 * @param d        the change set.
 * @param path     new or old path of the file (see agt_diff_file_index()).
 * @param out_text receives NUL-terminated text; free with agt_free().
 * @return AGT_OK; AGT_EINVAL when d, path or out_text is NULL; AGT_ENOTFOUND
 *         when the path is not in the change set; AGT_ENOMEM.
 */
AGT_EXTERN int agt_diff_file_text(const agt_diff *d, const char *path, char **out_text);

/**
 * Anchors one snippet (a review comment's existing_code) to lines, through
 * the stages listed at the top of this header. The result is JSON:
 * {"path","requested_path","start_line","end_line","side":"new|old",
 *  "method":"hunk_new|hunk_old|file|moved|unanchored","ambiguous":bool,
 *  "candidates":[[start,end],...],"relocated":bool,"attempts":n, ...}.
 * "path" is the canonical path of the file it landed in (the new path of a
 * renamed file addressed by its old path; the other file for "moved"; the
 * requested path otherwise, null when none was given); "requested_path" is
 * the path as given (or null). When ambiguous, start_line and end_line are 0,
 * "method" names the stage that found several places and "candidates" lists
 * them (at most 100) in file order; otherwise "candidates" is
 * [[start_line,end_line]], or [] when unanchored. "side" is "old" only for
 * "hunk_old" (and "moved" into another file's old side). "attempts" counts
 * relocation callback calls; when "relocated" is true, "snippet" holds the
 * snippet that matched. When stage 4 found the snippet in several other
 * files, "other_paths" names (up to 5 of) them. An unanchored result has a
 * "reason".
 *
 * @param d        the change set.
 * @param path     the file the comment is addressed to (new or old path); may
 *                 be NULL or "" to search every file (stage 4 only).
 * @param snippet  the code snippet, lines separated by LF or CRLF.
 * @param out_json receives NUL-terminated JSON; free with agt_free().
 * @return AGT_OK (also for unanchored and ambiguous results: read the JSON);
 *         AGT_EINVAL when d, snippet or out_json is NULL; AGT_ECANCELLED when
 *         the relocation callback returned non-zero; AGT_ENOMEM.
 */
AGT_EXTERN int agt_diff_anchor(const agt_diff *d, const char *path, const char *snippet,
                               char **out_json);

/**
 * Anchors many comments at once.
 *
 * @param d         the change set.
 * @param json      a JSON array of objects {"path"?, "existing_code",
 *                  "suggestion_code"?}; an object without "path" is searched
 *                  in every file.
 * @param len       length of json in bytes.
 * @param out_json  receives a JSON array with one agt_diff_anchor() result per
 *                  input object, in order; free with agt_free().
 * @return AGT_OK; AGT_EINVAL when d, json or out_json is NULL;
 *         AGT_EPARSE when json is not valid JSON; AGT_EINVALID when it is not
 *         an array of objects with a string "existing_code" (the message names
 *         the index); AGT_ECANCELLED when the relocation callback cancelled;
 *         AGT_ENOMEM.
 */
AGT_EXTERN int agt_diff_anchor_batch(const agt_diff *d, const char *json, size_t len,
                                     char **out_json);

/**
 * Sets the host relocation callback (anchoring stage 5). Each comment that
 * stages 1-4 leave unanchored (but not an ambiguous one, nor an all-blank
 * snippet) calls fn up to max_attempts times; each provided snippet is tried
 * through stages 1-4.
 *
 * @param d            the change set.
 * @param fn           the callback, or NULL to remove it.
 * @param max_attempts calls per comment, 1..10.
 * @param payload      passed back to fn unchanged.
 * @return AGT_OK; AGT_EINVAL when d is NULL or max_attempts is out of range.
 */
AGT_EXTERN int agt_diff_set_relocator(agt_diff *d, agt_diff_relocate_fn fn, int max_attempts,
                                      void *payload);

/**
 * Answers a relocation callback with a new snippet to try. Call it at most
 * once per callback invocation (a second call replaces the first).
 *
 * @param r    the handle the callback received.
 * @param text the new snippet (copied); need not be NUL-terminated.
 * @param len  length of text in bytes.
 * @return AGT_OK; AGT_EINVAL when r or text is NULL; AGT_ENOMEM.
 */
AGT_EXTERN int agt_diff_relocation_provide(agt_diff_relocation *r, const char *text, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* AGENTTOOLS_DIFF_H */
