/* Shared helpers of the workspace file tools (Read, Write, Edit, Glob, Grep,
 * ReadMediaFile): path resolution against the session's root with the
 * tool-facing error texts, whole-file loading with a cap, media detection. */
#ifndef AGT_LIB_TOOLS_WS_H
#define AGT_LIB_TOOLS_WS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agenttools/dispatch.h"
#include "core/core.h"

/* Limits of the file tools (TOOLS.md, "Chat set"). */
#define AGTI_READ_MAX_LINES 1000
#define AGTI_READ_MAX_BYTES (100u * 1024u)
#define AGTI_READ_MAX_LINE_CHARS 2000
#define AGTI_GLOB_MAX_RESULTS 100
#define AGTI_GREP_DEFAULT_HEAD 250
#define AGTI_MEDIA_MAX_BYTES (100u * 1024u * 1024u)
/* Largest file Edit loads into memory. */
#define AGTI_EDIT_MAX_BYTES (64u * 1024u * 1024u)

typedef struct agti_ws_path {
    char *abs;         /* real absolute path */
    char *rel;         /* display path: root-relative ("." for the root) or absolute */
    const char *given; /* the path as the model wrote it (borrowed from the call) */
} agti_ws_path;

/* Resolves the path argument of a call against the session's root (the
 * session's plan file is also admitted). With refuse_sensitive, sensitive
 * files are refused. On failure the call's error text is set and the status
 * code returned. */
int agti_ws_resolve(agt_call *call, const char *user_path, bool refuse_sensitive,
                    agti_ws_path *out);
void agti_ws_path_free(agti_ws_path *p);

/* Sets the call's error for a path that does not exist (AGT_ENOTFOUND),
 * followed by hint (may be ""). The text names the resolved display path
 * when the path the model gave leads there without a symbolic link; when a
 * link is involved it names the given path: "P is a symbolic link to T,
 * which does not exist." for a dangling link, otherwise "P does not exist
 * (through a symbolic link it is R)." */
int agti_ws_missing(agt_call *call, const agti_ws_path *p, const char *hint);

/* Sets the call's text from b (checking b->oom) and frees b. */
int agti_ws_finish(agt_call *call, agti_buf *b);

/* Reads the whole regular file abs (display name rel) into *data (malloc'd,
 * NUL-terminated) when it is at most max bytes. Errors are set on the call:
 * missing file, directory, special file, too large, I/O. */
int agti_ws_load(agt_call *call, const agti_ws_path *p, size_t max, char **data, size_t *len);

/* Fails the call after agti_fs_write_file failed with rc on rel: the
 * message from lib/fs, then "The file was not changed." when kept, else a
 * warning that it is damaged and where its original content is (defined in
 * write.c, shared with Edit). */
int agti_tool_write_failed(agt_call *call, int rc, const char *rel, bool kept);

/* Media detection by magic bytes: "image" or "video" with *mime set, or NULL. */
const char *agti_ws_media_kind(const unsigned char *head, size_t n, const char **mime);

/* The 1-based line number of byte offset off in text. */
size_t agti_ws_line_of(const char *text, size_t off);

#endif
