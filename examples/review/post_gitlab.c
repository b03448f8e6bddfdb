/*
 * agt-review --post gitlab: merge-request discussions through the REST API
 * (POST /projects/:id/merge_requests/:iid/discussions) with a text position
 * on the merge request's diff (base/start/head SHA, paths, new_line and/or
 * old_line by the line's kind), GitLab suggestion blocks, general
 * discussions for what cannot be placed, and one sticky summary note.
 */
#include "post.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void copy(char *dst, size_t len, const char *src)
{
    snprintf(dst, len, "%s", src != NULL ? src : "");
}

/* A project id as a path segment: numeric ids as they are, "group/project"
 * with '/' encoded. */
static void project_segment(const char *in, char *out, size_t len)
{
    size_t k = 0;
    for (const char *p = in; *p != '\0' && k + 4 < len; p++) {
        unsigned char ch = (unsigned char)*p;
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
            ch == '-' || ch == '_' || ch == '.' || ch == '~') {
            out[k++] = (char)ch;
        } else {
            snprintf(out + k, len - k, "%%%02X", ch);
            k += 3;
        }
    }
    out[k] = '\0';
}

static void mr_url(const rv_post *p, char *url, size_t len, const char *rest)
{
    char seg[512];
    project_segment(p->repo, seg, sizeof seg);
    snprintf(url, len, "%s/projects/%s/merge_requests/%ld%s", p->api, seg, p->number, rest);
}

int rv_gitlab_prepare(rv_post *p, rv_opts *o, char *err, size_t errlen)
{
    const char *api = o->api_url != NULL ? o->api_url : getenv("CI_API_V4_URL");
    copy(p->api, sizeof p->api, api != NULL && api[0] != '\0' ? api : "https://gitlab.com/api/v4");
    size_t al = strlen(p->api);
    while (al > 0 && p->api[al - 1] == '/')
        p->api[--al] = '\0';
    copy(p->repo, sizeof p->repo, o->post_repo != NULL ? o->post_repo : getenv("CI_PROJECT_ID"));
    if (p->repo[0] == '\0') {
        snprintf(err, errlen,
                 "--post gitlab needs the project: pass --post-repo ID (or group/project) or set "
                 "CI_PROJECT_ID (GitLab CI sets it)");
        return -1;
    }
    p->number = o->pr;
    const char *iid = getenv("CI_MERGE_REQUEST_IID");
    if (p->number <= 0 && iid != NULL)
        p->number = strtol(iid, NULL, 10);
    if (p->number <= 0) {
        snprintf(err, errlen,
                 "--post gitlab needs the merge request: pass --pr IID, or run in a merge request "
                 "pipeline (CI_MERGE_REQUEST_IID; rules: - if: $CI_PIPELINE_SOURCE == "
                 "\"merge_request_event\")");
        return -1;
    }
    const char *var = o->token_env != NULL ? o->token_env : "GITLAB_TOKEN";
    const char *token = getenv(var);
    if (token == NULL || token[0] == '\0') {
        snprintf(err, errlen,
                 "--post gitlab needs a token with the api scope in $%s (a project access token "
                 "stored as a masked CI/CD variable; CI_JOB_TOKEN cannot post discussions)",
                 var);
        return -1;
    }
    snprintf(p->token_header, sizeof p->token_header, "PRIVATE-TOKEN: %s", token);
    p->http.headers[0] = p->token_header;
    p->http.n_headers = 1;
    char url[2048];
    json_t *mr = NULL;
    mr_url(p, url, sizeof url, "");
    if (rv_http_json(&p->http, "GET", url, NULL, &mr, err, errlen) != 0)
        return -1;
    json_t *refs = json_object_get(mr, "diff_refs");
    copy(p->base, sizeof p->base,
         o->base_sha != NULL ? o->base_sha : json_string_value(json_object_get(refs, "base_sha")));
    copy(p->start, sizeof p->start, json_string_value(json_object_get(refs, "start_sha")));
    copy(p->head, sizeof p->head,
         o->head_sha != NULL ? o->head_sha : json_string_value(json_object_get(refs, "head_sha")));
    json_decref(mr);
    if (p->base[0] == '\0' || p->start[0] == '\0' || p->head[0] == '\0') {
        snprintf(err, errlen,
                 "GET %s: no diff_refs (base_sha, start_sha, head_sha) in the answer; the merge "
                 "request's diff may not be ready yet",
                 url);
        return -1;
    }
    json_t *arr = NULL;
    mr_url(p, url, sizeof url, "/discussions?per_page=100");
    if (rv_http_list(&p->http, url, &arr, err, errlen) != 0)
        return -1;
    size_t i, j;
    json_t *d, *note;
    json_array_foreach(arr, i, d)
    {
        json_array_foreach(json_object_get(d, "notes"), j, note)
        {
            const char *body = json_string_value(json_object_get(note, "body"));
            rv_collect_markers(p->seen, body);
            if (p->summary_id == 0 && rv_summary_head(body, p->last_head, sizeof p->last_head))
                p->summary_id = (long)json_integer_value(json_object_get(note, "id"));
        }
    }
    json_decref(arr);
    return 0;
}

static json_t *position(const rv_post *p, const rv_item *it)
{
    const rv_pline *l = rv_phunk_line(it->h, it->old, it->b);
    if (l == NULL)
        return NULL;
    json_t *pos = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "position_type", "text", "base_sha",
                            p->base, "start_sha", p->start, "head_sha", p->head, "new_path",
                            it->path, "old_path", it->old_path != NULL ? it->old_path : it->path);
    /* added lines have only a new line, removed lines only an old one,
     * unchanged lines both */
    if (l->t != '-')
        json_object_set_new(pos, "new_line", json_integer(l->n));
    if (l->t != '+')
        json_object_set_new(pos, "old_line", json_integer(l->o));
    return pos;
}

int rv_gitlab_publish(rv_post *p, const rv_set *set, const rv_opts *o, rv_item *items, size_t n,
                      char *err, size_t errlen)
{
    (void)o;
    size_t n_inline = 0, n_off = 0, dups = 0;
    char url[2048];
    mr_url(p, url, sizeof url, "/discussions");
    for (size_t k = 0; k < n; k++) {
        rv_item *it = &items[k];
        if (it->dup) {
            dups++;
            continue;
        }
        json_t *pos = it->h != NULL ? position(p, it) : NULL;
        /* a range sits on its last line; the suggestion reaches up to its first */
        char *body = pos != NULL ? rv_comment_body(it, 1, it->b - it->a) : rv_offdiff_text(it);
        if (body == NULL) {
            json_decref(pos);
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        json_t *req = json_pack("{s:s}", "body", body);
        free(body);
        if (pos != NULL)
            json_object_set_new(req, "position", pos);
        json_t *ans = NULL;
        int rc = rv_http_json(&p->http, "POST", url, req, &ans, err, errlen);
        json_decref(req);
        json_decref(ans);
        if (rc != 0)
            return -1;
        if (pos != NULL)
            n_inline++;
        else
            n_off++;
    }
    fprintf(stderr,
            "agt-review: posted %zu discussion%s on %s!%ld: %zu on the diff, %zu general (%zu "
            "already there)\n",
            n_inline + n_off, n_inline + n_off == 1 ? "" : "s", p->repo, p->number, n_inline, n_off,
            dups);
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
        char rest[64];
        snprintf(rest, sizeof rest, "/notes/%ld", p->summary_id);
        mr_url(p, url, sizeof url, rest);
        rc = rv_http_json(&p->http, "PUT", url, req, &ans, err, errlen);
    } else {
        mr_url(p, url, sizeof url, "/notes");
        rc = rv_http_json(&p->http, "POST", url, req, &ans, err, errlen);
    }
    json_decref(req);
    json_decref(ans);
    return rc;
}
