/* agt-review internals shared by its source files. */
#ifndef REVIEW_H
#define REVIEW_H

#include "cli_config.h"
#include "cli_sandbox.h"

#include <agenttools/agenttools.h>
#include <jansson.h>
#include <stdint.h>

/* One file of the change set and what happens to it. */
typedef struct rv_file {
    char *path;     /* new path (old path for a deleted file) */
    char *old_path; /* NULL when added */
    int status;     /* AGT_DIFF_* */
    int binary;
    long added, deleted;
    int hunks;
    json_t *hunk_list; /* [{"old_start","old_lines","new_start","new_lines"}] */
    char *skip;        /* why it is not reviewed, or NULL */
    /* Filled by the review. */
    json_t *comments;
    int64_t prompt_tokens, completion_tokens;
    int turns;
    int planned;
    const char *group;   /* the first file of its group when reviewed with others */
    const char *outcome; /* "done", "failed", "turn_limit", "timeout", "error" */
    char *error;
    int64_t elapsed_ms;
} rv_file;

typedef struct rv_opts {
    cli_sandbox sandbox; /* --sandbox, --network, --add-dir: each file's session */
    const char *repo;
    const char *from, *to, *commit;
    int mode; /* AGT_CHANGES_* */
    const char **excludes;
    size_t n_excludes;
    const char *format; /* text | json | sarif */
    int concurrency;
    int64_t timeout_s;
    const char *tools_file;
    const char *language;
    int preview;
    int max_turns;
    long plan_threshold; /* changed lines above which a plan phase runs */
    long group_lines;    /* small files share a session up to this many changed lines */
    cli_config cfg;
} rv_opts;

typedef struct rv_set {
    agt_changes *changes;
    json_t *info; /* agt_changes_info() */
    rv_file *files;
    size_t n_files;
} rv_set;

/* Opens the change set and decides, per file, whether it is reviewed. */
int rv_collect(rv_set *set, const rv_opts *o, char *err, size_t errlen);
void rv_set_free(rv_set *set);
/* Prints the preview in o->format (text or json). */
int rv_print_preview(const rv_set *set, const rv_opts *o);

/* Reviews every file that is not skipped; returns 0 or -1 (err filled). */
int rv_review(rv_set *set, const rv_opts *o, int64_t *elapsed_ms, char *err, size_t errlen);
/* Prints the results in o->format (text, json or sarif). */
int rv_print_results(const rv_set *set, const rv_opts *o, int64_t elapsed_ms);

#endif
