/*
 * agt-review --post github: one pull-request review through the REST API
 * (POST /repos/{owner}/{repo}/pulls/{n}/reviews), comments on the lines of
 * the pull request's diff, the rest in the review's body, and one sticky
 * summary (an issue comment) updated in place.
 */
#include "cli_util.h"
#include "post.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void copy(char *dst, size_t len, const char *src)
{
    snprintf(dst, len, "%s", src != NULL ? src : "");
}

/* The pull request of the event payload (pull_request, pull_request_target,
 * pull_request_review... events carry "pull_request"). */
static void read_event(rv_post *p)
{
    const char *path = getenv("GITHUB_EVENT_PATH");
    if (path == NULL || path[0] == '\0')
        return;
    json_t *ev = json_load_file(path, 0, NULL);
    json_t *pr = json_object_get(ev, "pull_request");
    if (pr != NULL) {
        if (p->number == 0)
            p->number = (long)json_integer_value(json_object_get(pr, "number"));
        if (p->head[0] == '\0')
            copy(p->head, sizeof p->head,
                 json_string_value(json_object_get(json_object_get(pr, "head"), "sha")));
        if (p->base[0] == '\0')
            copy(p->base, sizeof p->base,
                 json_string_value(json_object_get(json_object_get(pr, "base"), "sha")));
    }
    json_decref(ev);
}

static int list(rv_post *p, const char *what, json_t **out, char *err, size_t errlen)
{
    char url[2048];
    snprintf(url, sizeof url, "%s/repos/%s/%s?per_page=100", p->api, p->repo, what);
    return rv_http_list(&p->http, url, out, err, errlen);
}

int rv_github_prepare(rv_post *p, rv_opts *o, char *err, size_t errlen)
{
    const char *api = o->api_url != NULL ? o->api_url : getenv("GITHUB_API_URL");
    copy(p->api, sizeof p->api, api != NULL && api[0] != '\0' ? api : "https://api.github.com");
    size_t al = strlen(p->api);
    while (al > 0 && p->api[al - 1] == '/')
        p->api[--al] = '\0';
    copy(p->repo, sizeof p->repo,
         o->post_repo != NULL ? o->post_repo : getenv("GITHUB_REPOSITORY"));
    if (p->repo[0] == '\0' || strchr(p->repo, '/') == NULL) {
        snprintf(err, errlen,
                 "--post github needs the repository as OWNER/REPO: pass --post-repo OWNER/REPO "
                 "or set GITHUB_REPOSITORY (GitHub Actions sets it)");
        return -1;
    }
    p->number = o->pr;
    copy(p->head, sizeof p->head, o->head_sha);
    copy(p->base, sizeof p->base, o->base_sha);
    read_event(p);
    if (p->number <= 0) {
        snprintf(err, errlen,
                 "--post github needs the pull request number: pass --pr N, or run on a "
                 "pull_request event (GITHUB_EVENT_PATH names its payload)");
        return -1;
    }
    const char *var = o->token_env != NULL ? o->token_env : "GITHUB_TOKEN";
    const char *token = getenv(var);
    if (token == NULL || token[0] == '\0') {
        snprintf(err, errlen,
                 "--post github needs a token in $%s (in a workflow: env: %s: ${{ "
                 "secrets.GITHUB_TOKEN }}, with permissions: pull-requests: write)",
                 var, var);
        return -1;
    }
    snprintf(p->token_header, sizeof p->token_header, "Authorization: Bearer %s", token);
    p->http.headers[0] = p->token_header;
    p->http.headers[1] = "Accept: application/vnd.github+json";
    p->http.headers[2] = "X-GitHub-Api-Version: 2022-11-28";
    p->http.n_headers = 3;
    if (p->head[0] == '\0' || p->base[0] == '\0') {
        /* the head SHA, not GITHUB_SHA: on pull_request events that is a
         * merge commit the review API does not know */
        char url[2048], what[64];
        json_t *pr = NULL;
        snprintf(what, sizeof what, "pulls/%ld", p->number);
        snprintf(url, sizeof url, "%s/repos/%s/%s", p->api, p->repo, what);
        if (rv_http_json(&p->http, "GET", url, NULL, &pr, err, errlen) != 0)
            return -1;
        if (p->head[0] == '\0')
            copy(p->head, sizeof p->head,
                 json_string_value(json_object_get(json_object_get(pr, "head"), "sha")));
        if (p->base[0] == '\0')
            copy(p->base, sizeof p->base,
                 json_string_value(json_object_get(json_object_get(pr, "base"), "sha")));
        json_decref(pr);
        if (p->head[0] == '\0' || p->base[0] == '\0') {
            snprintf(err, errlen, "GET %s: no head.sha or base.sha in the answer", url);
            return -1;
        }
    }
    /* what is there already: review comments, review bodies, the summary */
    char what[128];
    json_t *arr = NULL;
    size_t i;
    json_t *v;
    static const char *const marked[] = {"comments", "reviews"};
    for (size_t k = 0; k < 2; k++) {
        snprintf(what, sizeof what, "pulls/%ld/%s", p->number, marked[k]);
        if (list(p, what, &arr, err, errlen) != 0)
            return -1;
        json_array_foreach(arr, i, v)
            rv_collect_markers(p->seen, json_string_value(json_object_get(v, "body")));
        json_decref(arr);
    }
    snprintf(what, sizeof what, "issues/%ld/comments", p->number);
    if (list(p, what, &arr, err, errlen) != 0)
        return -1;
    json_array_foreach(arr, i, v)
    {
        const char *body = json_string_value(json_object_get(v, "body"));
        if (p->summary_id == 0 && rv_summary_head(body, p->last_head, sizeof p->last_head))
            p->summary_id = (long)json_integer_value(json_object_get(v, "id"));
    }
    json_decref(arr);
    return 0;
}

static json_t *inline_comment(const rv_item *it)
{
    char *body = rv_comment_body(it, 0, 0);
    if (body == NULL)
        return NULL;
    const char *side = it->old ? "LEFT" : "RIGHT";
    json_t *c = json_pack("{s:s, s:s, s:I, s:s}", "path", it->path, "body", body, "line",
                          (json_int_t)it->b, "side", side);
    free(body);
    if (c != NULL && it->a < it->b) {
        json_object_set_new(c, "start_line", json_integer(it->a));
        json_object_set_new(c, "start_side", json_string(side));
    }
    return c;
}

/* The review's body: the count, then every comment that cannot be placed on
 * a line of the diff, with its file and line. */
static char *review_body(const rv_post *p, const rv_item *items, size_t n, size_t n_inline,
                         size_t n_off)
{
    size_t total = 256;
    char **texts = calloc(n + 1, sizeof *texts);
    if (texts == NULL)
        return NULL;
    for (size_t k = 0; k < n; k++) {
        if (items[k].dup || items[k].h != NULL)
            continue;
        texts[k] = rv_offdiff_text(&items[k]);
        total += (texts[k] != NULL ? strlen(texts[k]) : 0) + 16;
    }
    char *s = malloc(total + 64);
    if (s != NULL) {
        size_t len = (size_t)snprintf(s, total, "agt-review: %zu new comment%s on `%.12s`.",
                                      n_inline + n_off, n_inline + n_off == 1 ? "" : "s", p->head);
        int first = 1;
        for (size_t k = 0; k < n; k++) {
            if (texts[k] == NULL)
                continue;
            len += (size_t)snprintf(s + len, total + 64 - len, "%s%s",
                                    first ? "\n\n### Not on a line of the diff\n\n" : "\n\n---\n\n",
                                    texts[k]);
            first = 0;
        }
    }
    for (size_t k = 0; k < n; k++)
        free(texts[k]);
    free(texts);
    return s;
}

int rv_github_publish(rv_post *p, const rv_set *set, const rv_opts *o, rv_item *items, size_t n,
                      char *err, size_t errlen)
{
    (void)o;
    size_t n_inline = 0, n_off = 0, dups = 0;
    for (size_t k = 0; k < n; k++) {
        if (items[k].dup)
            dups++;
        else if (items[k].h != NULL)
            n_inline++;
        else
            n_off++;
    }
    char url[2048];
    if (n_inline + n_off > 0) {
        json_t *comments = json_array();
        for (size_t k = 0; k < n; k++)
            if (!items[k].dup && items[k].h != NULL)
                json_array_append_new(comments, inline_comment(&items[k]));
        char *body = review_body(p, items, n, n_inline, n_off);
        json_t *req = json_pack("{s:s, s:s, s:s, s:o}", "commit_id", p->head, "event", "COMMENT",
                                "body", body != NULL ? body : "agt-review", "comments", comments);
        free(body);
        snprintf(url, sizeof url, "%s/repos/%s/pulls/%ld/reviews", p->api, p->repo, p->number);
        json_t *ans = NULL;
        int rc = rv_http_json(&p->http, "POST", url, req, &ans, err, errlen);
        json_decref(req);
        json_decref(ans);
        if (rc != 0) {
            fprintf(stderr, "agt-review: %s\n", err);
            return -1;
        }
        fprintf(stderr,
                "agt-review: posted a review on %s#%ld: %zu comment%s on the diff, %zu in its "
                "body (%zu already there)\n",
                p->repo, p->number, n_inline, n_inline == 1 ? "" : "s", n_off, dups);
    } else {
        fprintf(stderr, "agt-review: nothing new to post on %s#%ld (%zu comment%s already there)\n",
                p->repo, p->number, dups, dups == 1 ? "" : "s");
    }
    char *summary = rv_summary_body(set, p, items, n, n_inline, n_off, dups);
    if (summary == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    json_t *req = json_pack("{s:s}", "body", summary);
    free(summary);
    json_t *ans = NULL;
    int rc;
    if (p->summary_id != 0) {
        snprintf(url, sizeof url, "%s/repos/%s/issues/comments/%ld", p->api, p->repo,
                 p->summary_id);
        rc = rv_http_json(&p->http, "PATCH", url, req, &ans, err, errlen);
    } else {
        snprintf(url, sizeof url, "%s/repos/%s/issues/%ld/comments", p->api, p->repo, p->number);
        rc = rv_http_json(&p->http, "POST", url, req, &ans, err, errlen);
    }
    json_decref(req);
    json_decref(ans);
    return rc;
}
