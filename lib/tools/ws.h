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
#include "fs/fs.h"

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
    char *abs;         /* absolute path it was reached at (raw bytes) */
    char *rel;         /* display path, escaped (agti_fs_name_escape): root-relative
                          ("." for the root) or absolute */
    const char *given; /* the path as the model wrote it (borrowed from the call) */
    agti_fsroot *root; /* the confinement bases the path was resolved in */
    agti_fsloc loc;    /* where it leads: descriptors of the file and its folder */
} agti_ws_path;

/* How agti_ws_resolve looks the path up. */
#define AGTI_WS_OPEN 1u /* open it (oflags; O_NOFOLLOW is added) */
#define AGTI_WS_WRITE                                                                              \
    2u                     /* for writing: create missing folders, refuse read-only                \
                              locations (the task log folder) */
#define AGTI_WS_MISSING 4u /* a missing file is not an error: loc.exists false */
#define AGTI_WS_CHANGE                                                                             \
    8u /* the call changes the file (Write, Edit): read-only                                       \
          locations refused; in plan mode only the plan file */

/* Resolves and (AGTI_WS_OPEN) opens the path argument of a call below the
 * session's bases in one walk (lib/fs agti_fs_locate): the workspace root,
 * the host's allowed directories, the session's plan file (that one name
 * only, never through a symlink), and for reading the task log folder. An
 * escaped name (\n, \t, \xNN, \\, as the tools print names) is decoded
 * first; when the decoded name does not exist but the literal one does,
 * the literal one is used. With refuse_sensitive, sensitive files are
 * refused. On failure the call's error text is set (a missing file: the
 * text of agti_ws_missing, unless AGTI_WS_MISSING) and the status code
 * returned; out is then empty. */
int agti_ws_resolve(agt_call *call, const char *user_path, unsigned how, int oflags,
                    bool refuse_sensitive, agti_ws_path *out);
void agti_ws_path_free(agti_ws_path *p);

/* Appends a path or file name to b in the escaped form the tools show. */
void agti_ws_put_name(agti_buf *b, const char *name, size_t n);

/* Sets the call's error for a path that does not exist (AGT_ENOTFOUND),
 * followed by hint (may be ""). The text names the resolved display path
 * when the path the model gave leads there without a symbolic link; when a
 * link is involved it names the given path: "P is a symbolic link to T,
 * which does not exist." for a dangling link, otherwise "P does not exist
 * (through a symbolic link it is R)." */
int agti_ws_missing(agt_call *call, const agti_ws_path *p, const char *hint);

/* Sets the call's text from b (checking b->oom) and frees b. */
int agti_ws_finish(agt_call *call, agti_buf *b);

/* Reads the whole regular file opened in p->loc (display name p->rel) into
 * *data (malloc'd, NUL-terminated) when it is at most max bytes. Errors are
 * set on the call: directory, special file, too large, I/O. */
int agti_ws_load(agt_call *call, const agti_ws_path *p, size_t max, char **data, size_t *len);

/* Before tool changes the existing file p whose content is text[0..len):
 * AGT_OK, or the call's error set when the file changed on disk since
 * the session last saw it (or, with AGT_EDIT_REQUIRE_READ and overwrite,
 * was never read): AGT_ESTATE; AGT_ENOMEM. */
int agti_ws_check_seen(agt_call *call, const agti_ws_path *p, const char *tool, const char *text,
                       size_t len, bool overwrite);
/* Records that the model knows p as text[0..len) (after Read showed it or
 * an edit tool wrote it). */
void agti_ws_record_seen(agt_call *call, const agti_ws_path *p, const char *text, size_t len);

/* The error of a file that exists but could not be opened (p->loc.fd < 0). */
int agti_ws_open_failed(agt_call *call, const agti_ws_path *p);

/* Fails the call after agti_fs_write_file failed with rc on rel: the
 * message from lib/fs, then "The file was not changed." when kept, else a
 * warning that it is damaged and where its original content is (defined in
 * write.c, shared with Edit). */
int agti_tool_write_failed(agt_call *call, int rc, const char *rel, bool kept);

/* The agti_fs_write_at flags the session asks for (hard links in place). */
unsigned agti_tool_write_flags(agt_call *call);
/* Appends to b what a write did to a file with several names. */
void agti_tool_link_note(agti_buf *b, const agti_ws_path *p, const agti_write_info *info);

/* Media detection by magic bytes: "image" or "video" with *mime set, or NULL. */
const char *agti_ws_media_kind(const unsigned char *head, size_t n, const char **mime);

/* The 1-based line number of byte offset off in text. */
size_t agti_ws_line_of(const char *text, size_t off);

#endif
