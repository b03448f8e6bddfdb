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
    long plan_threshold;       /* changed lines above which a plan phase runs */
    long group_lines;          /* small files share a session up to this many changed lines */
    const char *fail_on;       /* --fail-on: critical|high|medium|low, or NULL */
    const char *min_severity;  /* comments below it are dropped (config "min_severity") */
    long max_files, max_lines; /* guards; 0 = none */
    /* --post */
    const char *post; /* "github" | "gitlab" | NULL */
    const char *post_repo, *head_sha, *base_sha, *api_url, *token_env;
    long pr;
    int incremental;
    char *from_owned, *to_owned; /* set by --post when no change was named */
    char *instructions;          /* extra review instructions (config, REVIEW.md) */
    /* .agenttools/review.json (config.c) */
    json_t *repo_config;         /* the parsed file (its strings are borrowed above), or NULL */
    int repo_config_used;        /* the file exists and was read */
    size_t n_config_excludes;    /* the last n_config_excludes of excludes come from it */
    char instructions_from[512]; /* "REVIEW.md", "the review section of AGENTS.md", ... */
    cli_config cfg;
} rv_opts;

typedef struct rv_set {
    agt_changes *changes;
    json_t *info; /* agt_changes_info() */
    rv_file *files;
    size_t n_files;
} rv_set;

/* Reads .agenttools/review.json and the review instructions of the
 * repository o->repo into o; 0, or -1 with err naming the file and problem. */
int rv_load_repo_config(rv_opts *o, char *err, size_t errlen);
/* The review section of an AGENTS.md text (malloc'd), or NULL (config.c). */
char *rv_agents_review_section(const char *md);

/* Opens the change set and decides, per file, whether it is reviewed. */
int rv_collect(rv_set *set, const rv_opts *o, char *err, size_t errlen);
void rv_set_free(rv_set *set);
/* Prints the preview in o->format (text or json). */
int rv_print_preview(const rv_set *set, const rv_opts *o);

/* Reviews every file that is not skipped; returns 0 or -1 (err filled). */
int rv_review(rv_set *set, const rv_opts *o, int64_t *elapsed_ms, char *err, size_t errlen);
/* Prints the results in o->format (text, json, sarif or rdjson). */
int rv_print_results(const rv_set *set, const rv_opts *o, int64_t elapsed_ms);

/* The new-file line where removed lines of the old file were (by hunk). */
json_int_t rv_new_line_for_old(const rv_set *set, const char *path, json_int_t old_line);
/* A comment's stable key, "anchor=<16 hex> rule=<category>": a hash of its
 * path, side and quoted code (not its line numbers), and its category. */
void rv_comment_key(json_t *c, const char *path, char *buf, size_t len);
/* The review as reviewdog's rdjson (DiagnosticResult). */
json_t *rv_rdjson(const rv_set *set);

#endif
