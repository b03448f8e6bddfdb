/*
 * agt-review --post: publishing a review on a GitHub pull request or a
 * GitLab merge request. post_common.c has what both share (the pull
 * request's diff hunks, hidden markers, comment bodies, the summary),
 * post_github.c and post_gitlab.c the APIs, http.c the HTTP client.
 */
#ifndef REVIEW_POST_H
#define REVIEW_POST_H

#include "review.h"

#include <stdio.h>

/* ---- HTTP (http.c) ---- */

typedef struct rv_http_ctx {
    const char *headers[4]; /* extra "Name: value" headers (the token) */
    size_t n_headers;
    FILE *log; /* AGT_REVIEW_HTTP_LOG: every request's method, URL and body */
} rv_http_ctx;

typedef struct rv_resp {
    long status;
    char *body;
    size_t len;
    char *next; /* the Link header's rel="next" URL, or NULL */
} rv_resp;

/* One request; -1 with err on a transport failure (any HTTP status is 0). */
int rv_http(const rv_http_ctx *h, const char *method, const char *url, const char *body,
            rv_resp *out, char *err, size_t errlen);
void rv_resp_free(rv_resp *r);
/* A JSON request that must answer 2xx with JSON (or nothing): *out owned. */
int rv_http_json(const rv_http_ctx *h, const char *method, const char *url, json_t *body,
                 json_t **out, char *err, size_t errlen);
/* GETs a JSON-array list endpoint, page after page (Link rel="next"). */
int rv_http_list(const rv_http_ctx *h, const char *url, json_t **out, char *err, size_t errlen);
/* The rel="next" URL of a Link header value, or NULL (malloc'd). */
char *rv_link_next(const char *value, size_t len);

/* ---- the pull request's diff (post_common.c) ---- */

typedef struct rv_pline {
    char t;    /* '+', '-' or ' ' */
    long o, n; /* old and new line numbers (0 on the side the line is not on) */
} rv_pline;

typedef struct rv_phunk {
    long os, ol, ns, nl;
    rv_pline *lines;
    size_t n;
} rv_phunk;

typedef struct rv_pfile {
    char *path, *old_path;
    rv_phunk *h;
    size_t n;
} rv_pfile;

typedef struct rv_prdiff {
    rv_pfile *f;
    size_t n;
} rv_prdiff;

/* One comment as it is posted. */
typedef struct rv_item {
    json_t *c; /* the comment (borrowed) */
    const char *path, *old_path;
    int old;           /* on the old side */
    long a, b;         /* its lines; 0 when unanchored or ambiguous */
    const rv_phunk *h; /* the PR hunk holding a..b on that side; NULL: not inline */
    int suggest;       /* suggestion_code can be a suggestion block */
    char key[96];      /* "anchor=<16 hex> rule=<category>" */
    int dup;           /* a comment with this key is on the pull request already */
} rv_item;

typedef struct rv_post {
    const char *kind; /* "github" | "gitlab" */
    char api[512];
    char repo[256]; /* OWNER/REPO, or the GitLab project id or path */
    long number;    /* pull request number, merge request iid */
    char head[64];  /* head commit SHA */
    char base[64];  /* base commit SHA (GitHub: base branch; GitLab: diff_refs.base_sha) */
    char start[64]; /* GitLab diff_refs.start_sha */
    char token_header[1024];
    rv_http_ctx http;
    json_t *seen;           /* object: marker key -> true, of the comments already posted */
    long summary_id;        /* the sticky summary comment, 0 when none yet */
    char last_head[64];     /* the head its marker records */
    char reviewed_from[64]; /* --incremental: the head the review started from */
    int nothing_new;        /* --incremental with no commit since the last review */
} rv_post;

/* Reads the pull request's diff (base...head) from the repository. */
int rv_prdiff_open(rv_prdiff *d, const char *repo, const char *base, const char *head, char *err,
                   size_t errlen);
void rv_prdiff_free(rv_prdiff *d);
const rv_pfile *rv_prdiff_file(const rv_prdiff *d, const char *path);
/* The line of the hunk on the given side, or NULL. */
const rv_pline *rv_phunk_line(const rv_phunk *h, int old, long line);

/* The items of the review's comments (min severity applied), in file order. */
int rv_items(const rv_set *set, const rv_opts *o, const rv_prdiff *d, rv_item **out, size_t *n);

/* The hidden marker of a comment, and parsing markers out of a body. */
void rv_marker(const rv_item *it, char *buf, size_t len);
void rv_collect_markers(json_t *seen, const char *body);
/* The summary marker's head in a body, or 0 when the body has none. */
int rv_summary_head(const char *body, char *head, size_t len);

/* Markdown of an inline comment: severity, content, suggestion (a
 * ```suggestion block when allowed; gitlab_above lines above for GitLab's
 * suggestion:-N+0) and the marker. malloc'd. */
char *rv_comment_body(const rv_item *it, int gitlab, long gitlab_above);
/* Markdown of a comment that is not placed on a line: path:line first. */
char *rv_offdiff_text(const rv_item *it);
/* The sticky summary (marker first). malloc'd. */
char *rv_summary_body(const rv_set *set, const rv_post *p, const rv_item *items, size_t n,
                      size_t posted_inline, size_t posted_body, size_t dups);

/* Severity rank: critical 4, high 3, medium 2 (also when missing), low 1. */
int rv_severity_rank(const char *sev);

/* Resolves the target from flags and the CI environment, reads what is on
 * the pull request already (markers, summary), and sets o->from/o->to when
 * no change was named. 0, or -1 with err. */
int rv_post_prepare(rv_post *p, rv_opts *o, char *err, size_t errlen);
/* Posts the review and updates the summary. 0, or -1 with err. */
int rv_post_publish(rv_post *p, const rv_set *set, const rv_opts *o, char *err, size_t errlen);
void rv_post_free(rv_post *p);

int rv_github_prepare(rv_post *p, rv_opts *o, char *err, size_t errlen);
int rv_github_publish(rv_post *p, const rv_set *set, const rv_opts *o, rv_item *items, size_t n,
                      char *err, size_t errlen);
int rv_gitlab_prepare(rv_post *p, rv_opts *o, char *err, size_t errlen);
int rv_gitlab_publish(rv_post *p, const rv_set *set, const rv_opts *o, rv_item *items, size_t n,
                      char *err, size_t errlen);

#endif
