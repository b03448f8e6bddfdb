/*
 * agt-review: the review itself. One session per file on a frozen registry;
 * files are handed to N worker threads, each with its own model client and
 * its own change set handle (handles are one-thread objects).
 */
#include "cli_agent.h"
#include "cli_util.h"
#include "review.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* At most this many small files share one session. */
#define RV_GROUP_MAX 5

typedef struct rv_shared {
    rv_set *set;
    const rv_opts *o;
    agt_registry *reg;
    const char *root;
    pthread_mutex_t lock;
    size_t next;     /* next file index to take */
    size_t *members; /* file indexes, group after group */
    size_t *groups;  /* where each group (unit of work) starts in members */
    size_t *group_n; /* and how many files it has */
    size_t n_groups;
    size_t done;     /* files finished */
    size_t n_review; /* files to review */
    size_t comments; /* comments so far */
    size_t units_ok; /* units of work that ended without an error */
    int abort;       /* the model failed before any unit succeeded: stop */
    char abort_reason[512];
    char fatal[1024];           /* first fatal error */
    char *system, *plan_system; /* the prompts, with the repository's instructions */
} rv_shared;

typedef struct rv_worker {
    rv_shared *sh;
    agt_model *model;
    agt_changes *changes;
    rv_file *group[RV_GROUP_MAX]; /* the file, or the small files, under review */
    size_t n_group;
    int64_t deadline_ms;
    int64_t reloc_prompt, reloc_completion;
} rv_worker;

static const char system_prompt[] =
    "You are a careful code reviewer. You review one file of a change at a time, using the "
    "tools you are given to look at the diff and, when it helps, at the rest of the code.\n"
    "Rules:\n"
    "- Comment only on the lines this file's diff changes (added or removed lines and the "
    "code right around them). Do not comment on other files.\n"
    "- Report real problems: bugs, security issues, performance problems, unclear or fragile "
    "code, missing tests or documentation. Skip praise and restating what the code does.\n"
    "- For every comment, put in existing_code the exact lines you mean, copied from the diff "
    "(without the leading '+', '-' or space of the diff), so the comment can be placed on "
    "them. Keep it to the few lines that matter.\n"
    "- Give suggestion_code when you can propose replacement code, a category (bug, security, "
    "performance, maintainability, test, style, documentation, other) and a severity "
    "(critical, high, medium, low).\n"
    "- Send comments with code_comment. When you have nothing more to say (also when the "
    "change looks fine), call task_done.";

static const char plan_prompt[] =
    "You are a careful code reviewer preparing the review of one file of a large change. "
    "Read the diff and look around the code with the read-only tools. Then answer with a "
    "short plan: the parts of the change that deserve attention and what to check in each. "
    "Do not write review comments yet.";

static const char relocate_prompt[] =
    "A review comment quoted code that could not be found in the diff. Answer with the exact "
    "lines from the diff below that the comment is about, copied character for character "
    "(without the leading '+', '-' or space of the diff), and nothing else: no explanation, "
    "no code fences. If none of the lines fit, answer NONE.";

static char *user_message(const rv_file *f, const char *diff, const rv_opts *o, const char *plan)
{
    const char *verb = f->status == AGT_DIFF_ADDED     ? "added"
                       : f->status == AGT_DIFF_RENAMED ? "renamed"
                                                       : "modified";
    size_t len = strlen(diff) + (plan != NULL ? strlen(plan) : 0) + strlen(f->path) * 3 + 1024 +
                 (o->language != NULL ? strlen(o->language) : 0) +
                 (f->old_path != NULL ? strlen(f->old_path) : 0);
    char *s = malloc(len);
    if (s == NULL)
        return NULL;
    int n = snprintf(s, len, "Review the %s file %s", verb, f->path);
    if (f->status == AGT_DIFF_RENAMED && f->old_path != NULL)
        n += snprintf(s + n, len - (size_t)n, " (renamed from %s)", f->old_path);
    n += snprintf(s + n, len - (size_t)n, ". Its diff:\n\n%s\n", diff);
    if (plan != NULL && plan[0] != '\0')
        n += snprintf(s + n, len - (size_t)n, "\nYour plan for this review:\n%s\n", plan);
    if (o->language != NULL)
        n += snprintf(s + n, len - (size_t)n, "\nWrite the comments in %s.\n", o->language);
    snprintf(s + n, len - (size_t)n,
             "\nComment only on this file's diff, quote existing_code exactly as it appears in "
             "the diff, and call task_done when you are done.");
    return s;
}

/* Strips code fences and surrounding blank lines from a model's re-quote. */
static char *clean_quote(const char *text)
{
    const char *p = text;
    while (*p == '\n' || *p == '\r' || *p == ' ')
        p++;
    if (strncmp(p, "```", 3) == 0) {
        const char *nl = strchr(p, '\n');
        p = nl != NULL ? nl + 1 : p + strlen(p);
    }
    char *s = strdup(p);
    if (s == NULL)
        return NULL;
    char *fence = strstr(s, "```");
    if (fence != NULL)
        *fence = '\0';
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' '))
        s[--n] = '\0';
    return s;
}

/* Anchoring stage 5: ask the model to quote the code again. */
static int relocate(const char *path, const char *file_diff, const char *snippet,
                    const char *suggestion, agt_diff_relocation *r, void *payload)
{
    rv_worker *w = payload;
    (void)suggestion;
    if (w->deadline_ms > 0 && cli_now_ms() > w->deadline_ms)
        return 0;
    json_t *msgs = json_array();
    char *user = NULL;
    size_t len = strlen(file_diff) + strlen(snippet) + strlen(path) + 256;
    user = malloc(len);
    if (user == NULL) {
        json_decref(msgs);
        return 0;
    }
    snprintf(user, len, "File: %s\nThe quoted code that was not found:\n%s\n\nThe diff:\n%s", path,
             snippet, file_diff);
    json_array_append_new(msgs,
                          json_pack("{s:s, s:s}", "role", "system", "content", relocate_prompt));
    json_array_append_new(msgs, json_pack("{s:s, s:s}", "role", "user", "content", user));
    free(user);
    char *text = json_dumps(msgs, JSON_COMPACT);
    json_decref(msgs);
    agt_model_response *resp = NULL;
    int rc = agt_model_complete(&resp, w->model, text, strlen(text), NULL, 0);
    free(text);
    if (rc != AGT_OK)
        return 0;
    int64_t pt = -1, ct = -1;
    agt_model_response_usage(resp, &pt, &ct, NULL);
    w->reloc_prompt += pt > 0 ? pt : 0;
    w->reloc_completion += ct > 0 ? ct : 0;
    char *q = clean_quote(agt_model_response_text(resp));
    if (q != NULL && q[0] != '\0' && strcmp(q, "NONE") != 0)
        agt_diff_relocation_provide(r, q, strlen(q));
    free(q);
    agt_model_response_free(resp);
    return 0;
}

/* AGT_REVIEW_DEBUG=1 shows the tool calls that failed (their first bytes). */
static void on_tool(const char *id, const char *name, const char *args, int is_error,
                    const char *preview, void *payload)
{
    (void)id;
    (void)args;
    (void)payload;
    if (is_error && getenv("AGT_REVIEW_DEBUG") != NULL)
        fprintf(stderr, "  %s: error result: %s\n", name, preview);
}

static void progress(rv_shared *sh, const char *name, const char *what)
{
    pthread_mutex_lock(&sh->lock);
    fprintf(stderr, "[%zu/%zu] %s: %s (comments so far: %zu)\n", sh->done, sh->n_review, name, what,
            sh->comments);
    pthread_mutex_unlock(&sh->lock);
}

/* Plan phase: read-only tools, a free-text plan as the answer. */
static char *run_plan(rv_worker *w, agt_session *s, const char *diff, int *rc_out, char *err,
                      size_t errlen)
{
    rv_shared *sh = w->sh;
    cli_agent a;
    char *plan = NULL;
    *rc_out = CLI_RUN_ERROR;
    agt_session_set_phase(s, AGT_PHASE_PLAN);
    if (cli_agent_init(&a, w->model, s, sh->o->max_turns, err, errlen) != 0) {
        cli_agent_fini(&a);
        return NULL;
    }
    a.deadline_ms = w->deadline_ms;
    a.on_tool = on_tool;
    cli_agent_set_system(&a, sh->plan_system);
    char *user = user_message(w->group[0], diff, sh->o, NULL);
    cli_agent_add_user(&a, user != NULL ? user : diff);
    free(user);
    int rc = cli_agent_run(&a, err, errlen);
    *rc_out = rc;
    w->group[0]->prompt_tokens += a.prompt_tokens;
    w->group[0]->completion_tokens += a.completion_tokens;
    w->group[0]->turns += cli_agent_turns(&a);
    if (rc == CLI_RUN_DONE && cli_agent_text(&a)[0] != '\0')
        plan = strdup(cli_agent_text(&a));
    cli_agent_fini(&a);
    w->group[0]->planned = 1;
    return plan;
}

/* The diff text of every file of the group, one after the other. */
static char *group_diff(rv_worker *w)
{
    char *all = NULL;
    size_t len = 0;
    for (size_t k = 0; k < w->n_group; k++) {
        char *d = NULL;
        if (agt_diff_file_text(agt_changes_diff(w->changes), w->group[k]->path, &d) != AGT_OK) {
            free(all);
            return NULL;
        }
        size_t dl = strlen(d);
        char *p = realloc(all, len + dl + 2);
        if (p == NULL) {
            agt_free(d);
            free(all);
            return NULL;
        }
        all = p;
        memcpy(all + len, d, dl);
        len += dl;
        if (len > 0 && all[len - 1] != '\n')
            all[len++] = '\n';
        all[len] = '\0';
        agt_free(d);
    }
    return all;
}

static char *group_message(rv_worker *w, const char *diff, const rv_opts *o)
{
    size_t len = strlen(diff) + 1024 + (o->language != NULL ? strlen(o->language) : 0);
    for (size_t k = 0; k < w->n_group; k++)
        len += strlen(w->group[k]->path) + 2;
    char *s = malloc(len);
    if (s == NULL)
        return NULL;
    int n = snprintf(s, len, "Review these %zu small files of a change:", w->n_group);
    for (size_t k = 0; k < w->n_group; k++)
        n += snprintf(s + n, len - (size_t)n, "%s %s", k > 0 ? "," : "", w->group[k]->path);
    n += snprintf(s + n, len - (size_t)n, ". Their diffs:\n\n%s\n", diff);
    if (o->language != NULL)
        n += snprintf(s + n, len - (size_t)n, "\nWrite the comments in %s.\n", o->language);
    snprintf(s + n, len - (size_t)n,
             "\nComment only on these files' diffs, give the path of the file with every "
             "comment, quote existing_code exactly as it appears in the diff, and call task_done "
             "when you are done.");
    return s;
}

/* Hands each stored comment to the file of the group it names. */
static void distribute(rv_worker *w, json_t *arr)
{
    size_t i;
    json_t *c;
    json_array_foreach(arr, i, c)
    {
        const char *path = json_string_value(json_object_get(c, "path"));
        rv_file *to = w->group[0];
        for (size_t k = 0; path != NULL && k < w->n_group; k++)
            if (strcmp(path, w->group[k]->path) == 0 ||
                (w->group[k]->old_path != NULL && strcmp(path, w->group[k]->old_path) == 0))
                to = w->group[k];
        json_array_append(to->comments, c);
    }
}

static const char *outcome_of(agt_session *s, int rc)
{
    if (agt_session_review_done(s))
        return strcmp(agt_session_review_state(s), "FAILED") == 0 ? "failed" : "done";
    switch (rc) {
    case CLI_RUN_DONE:
        return "done";
    case CLI_RUN_TIMEOUT:
        return "timeout";
    case CLI_RUN_TURNS:
        return "turn_limit";
    default:
        return "error";
    }
}

static void group_name(rv_worker *w, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%s", w->group[0]->path);
    if (w->n_group > 1 && n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, " (+%zu small file%s)", w->n_group - 1,
                 w->n_group == 2 ? "" : "s");
}

/* Reviews one file, or a group of small files, in a session of its own. */
static void review_group(rv_worker *w)
{
    rv_shared *sh = w->sh;
    rv_file *f = w->group[0];
    agt_session *s = NULL;
    char *diff = NULL, *plan = NULL, err[512] = "", name[512];
    int64_t t0 = cli_now_ms();
    int rc = CLI_RUN_ERROR;
    group_name(w, name, sizeof name);
    w->deadline_ms = t0 + sh->o->timeout_s * 1000;
    w->reloc_prompt = w->reloc_completion = 0;
    for (size_t k = 0; k < w->n_group; k++) {
        w->group[k]->comments = json_array();
        if (k > 0)
            w->group[k]->group = f->path;
    }
    if (agt_session_new(&s, sh->reg, sh->root) != AGT_OK ||
        agt_session_set_changes(s, w->changes) != AGT_OK ||
        (w->n_group == 1 && agt_session_set_review_file(s, f->path) != AGT_OK) ||
        agt_session_set_relocator(s, relocate, 2, w) != AGT_OK || (diff = group_diff(w)) == NULL) {
        snprintf(err, sizeof err, "%s", agt_error_message());
        goto out;
    }
    if (cli_sandbox_apply(&sh->o->sandbox, s, err, sizeof err) != AGT_OK)
        goto out;
    if (w->n_group == 1 && sh->o->plan_threshold > 0 &&
        f->added + f->deleted > sh->o->plan_threshold) {
        progress(sh, name, "planning");
        plan = run_plan(w, s, diff, &rc, err, sizeof err);
        /* a failed or timed-out plan phase leaves nothing to review with */
        if (rc == CLI_RUN_ERROR || rc == CLI_RUN_TIMEOUT)
            goto out;
    }
    progress(sh, name, "reviewing");
    agt_session_set_phase(s, AGT_PHASE_MAIN);
    cli_agent a;
    if (cli_agent_init(&a, w->model, s, sh->o->max_turns, err, sizeof err) == 0) {
        a.deadline_ms = w->deadline_ms;
        a.on_tool = on_tool;
        a.set_thinking = 1;
        cli_agent_set_system(&a, sh->system);
        char *user =
            w->n_group == 1 ? user_message(f, diff, sh->o, plan) : group_message(w, diff, sh->o);
        cli_agent_add_user(&a, user != NULL ? user : diff);
        free(user);
        rc = cli_agent_run(&a, err, sizeof err);
        f->prompt_tokens += a.prompt_tokens;
        f->completion_tokens += a.completion_tokens;
        f->turns += cli_agent_turns(&a);
    }
    f->prompt_tokens += w->reloc_prompt;
    f->completion_tokens += w->reloc_completion;
    cli_agent_fini(&a);
    char *cj = NULL;
    if (agt_session_comments(s, &cj) == AGT_OK) {
        json_t *arr = json_loads(cj, 0, NULL);
        distribute(w, arr);
        json_decref(arr);
        agt_free(cj);
    }
out:;
    const char *outcome = s != NULL ? outcome_of(s, rc) : "error";
    size_t n_comments = 0;
    int64_t elapsed = cli_now_ms() - t0;
    for (size_t k = 0; k < w->n_group; k++) {
        rv_file *g = w->group[k];
        g->outcome = outcome;
        if (strcmp(outcome, "error") == 0)
            g->error = strdup(err);
        g->elapsed_ms = elapsed;
        n_comments += json_array_size(g->comments);
    }
    agt_session_set_changes(s, NULL);
    agt_session_free(s);
    free(diff);
    free(plan);
    pthread_mutex_lock(&sh->lock);
    sh->done += w->n_group;
    sh->comments += n_comments;
    if (strcmp(outcome, "error") != 0) {
        sh->units_ok++;
    } else if (sh->units_ok == 0 && !sh->abort) {
        /* the endpoint is probably unusable (unreachable, bad key): do not
           spend the timeout and retries on every other file too */
        sh->abort = 1;
        snprintf(sh->abort_reason, sizeof sh->abort_reason, "%s", err);
    }
    pthread_mutex_unlock(&sh->lock);
    char what[768];
    snprintf(what, sizeof what, "%s, %zu comment%s, %.1f s%s%s", outcome, n_comments,
             n_comments == 1 ? "" : "s", (double)elapsed / 1000.0,
             strcmp(outcome, "error") == 0 ? ": " : "", strcmp(outcome, "error") == 0 ? err : "");
    progress(sh, name, what);
}

static void *worker_main(void *arg)
{
    rv_worker *w = arg;
    rv_shared *sh = w->sh;
    char err[512];
    const rv_opts *o = sh->o;
    const char *from = o->mode == AGT_CHANGES_RANGE    ? o->from
                       : o->mode == AGT_CHANGES_COMMIT ? o->commit
                                                       : NULL;
    const char *to = o->mode == AGT_CHANGES_RANGE ? o->to : NULL;
    if (cli_model_open(&o->cfg, &w->model, err, sizeof err) != 0 ||
        agt_changes_open(&w->changes, o->repo, o->mode, from, to) != AGT_OK) {
        pthread_mutex_lock(&sh->lock);
        if (sh->fatal[0] == '\0')
            snprintf(sh->fatal, sizeof sh->fatal, "%s",
                     w->model == NULL ? err : agt_error_message());
        pthread_mutex_unlock(&sh->lock);
        goto out;
    }
    for (;;) {
        pthread_mutex_lock(&sh->lock);
        size_t g = sh->next < sh->n_groups && !sh->abort ? sh->next++ : sh->n_groups;
        pthread_mutex_unlock(&sh->lock);
        if (g >= sh->n_groups)
            break;
        w->n_group = sh->group_n[g];
        for (size_t k = 0; k < w->n_group; k++)
            w->group[k] = &sh->set->files[sh->members[sh->groups[g] + k]];
        review_group(w);
    }
out:
    agt_model_free(w->model);
    agt_changes_free(w->changes);
    return NULL;
}

static int load_registry(rv_shared *sh, char *err, size_t errlen)
{
    int rc = agt_registry_new(&sh->reg);
    if (rc == AGT_OK)
        rc = agt_registry_load_builtin(sh->reg, "review");
    if (rc == AGT_OK && sh->o->tools_file != NULL) {
        size_t len = 0;
        char *text = cli_read_file(sh->o->tools_file, &len);
        if (text == NULL) {
            snprintf(err, errlen, "--tools %s: cannot read the file", sh->o->tools_file);
            return -1;
        }
        rc = agt_registry_load_json(sh->reg, text, len);
        free(text);
        if (rc != AGT_OK) {
            snprintf(err, errlen, "--tools %s: %s", sh->o->tools_file, agt_error_message());
            return -1;
        }
    }
    if (rc == AGT_OK)
        rc = agt_registry_freeze(sh->reg);
    if (rc != AGT_OK) {
        snprintf(err, errlen, "tool catalogue: %s", agt_error_message());
        return -1;
    }
    return 0;
}

/*
 * Units of work: a file with more than --group-lines changed lines alone;
 * smaller ones in groups of up to RV_GROUP_MAX files and --group-lines lines
 * in total, in change set order.
 */
static int make_groups(rv_shared *sh)
{
    const rv_set *set = sh->set;
    long limit = sh->o->group_lines;
    long total = 0;
    sh->members = calloc(set->n_files + 1, sizeof *sh->members);
    sh->groups = calloc(set->n_files + 1, sizeof *sh->groups);
    sh->group_n = calloc(set->n_files + 1, sizeof *sh->group_n);
    if (sh->members == NULL || sh->groups == NULL || sh->group_n == NULL)
        return -1;
    for (size_t i = 0; i < set->n_files; i++) {
        const rv_file *f = &set->files[i];
        if (f->skip != NULL)
            continue;
        long changed = f->added + f->deleted;
        int small = limit > 0 && changed <= limit;
        size_t g = sh->n_groups;
        int join = small && g > 0 && total > 0 && total + changed <= limit &&
                   sh->group_n[g - 1] < RV_GROUP_MAX;
        if (!join) {
            sh->groups[g] = sh->n_review;
            sh->group_n[g] = 0;
            sh->n_groups++;
            total = 0;
        }
        sh->members[sh->n_review++] = i;
        sh->group_n[sh->n_groups - 1]++;
        /* a large file closes its group */
        total = small ? total + changed : 0;
    }
    return 0;
}

/* A system prompt followed by the repository's review instructions. */
static char *with_instructions(const char *prompt, const rv_opts *o)
{
    static const char head[] =
        "\n\nThe repository gives these review instructions (from %s). Follow them where they "
        "do not contradict the rules above:\n\n";
    if (o->instructions == NULL || o->instructions[0] == '\0')
        return strdup(prompt);
    const char *from = o->instructions_from;
    size_t len = strlen(prompt) + sizeof head + strlen(from) + strlen(o->instructions) + 1;
    char *s = malloc(len);
    if (s == NULL)
        return NULL;
    int n = snprintf(s, len, "%s", prompt);
    n += snprintf(s + n, len - (size_t)n, head, from);
    snprintf(s + n, len - (size_t)n, "%s", o->instructions);
    return s;
}

int rv_review(rv_set *set, const rv_opts *o, int64_t *elapsed_ms, char *err, size_t errlen)
{
    rv_shared sh;
    int64_t t0 = cli_now_ms();
    int rc = -1;
    memset(&sh, 0, sizeof sh);
    sh.set = set;
    sh.o = o;
    pthread_mutex_init(&sh.lock, NULL);
    const char *workdir = json_string_value(json_object_get(set->info, "workdir"));
    if (workdir == NULL) {
        snprintf(err, errlen, "the repository has no working tree (bare repository)");
        goto out;
    }
    sh.root = workdir;
    sh.system = with_instructions(system_prompt, o);
    sh.plan_system = with_instructions(plan_prompt, o);
    if (sh.system == NULL || sh.plan_system == NULL) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    if (load_registry(&sh, err, errlen) != 0)
        goto out;
    /* Check the model settings once, even when no file needs a review. */
    agt_model *probe = NULL;
    if (cli_model_open(&o->cfg, &probe, err, errlen) != 0)
        goto out;
    agt_model_free(probe);
    if (make_groups(&sh) != 0) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    char desc[512];
    cli_config_describe(&o->cfg, desc, sizeof desc);
    fprintf(stderr, "agt-review: %zu of %zu files to review with %s\n", sh.n_review, set->n_files,
            desc);
    size_t nw = (size_t)o->concurrency;
    if (nw > sh.n_groups)
        nw = sh.n_groups > 0 ? sh.n_groups : 1;
    rv_worker *ws = calloc(nw, sizeof *ws);
    pthread_t *th = calloc(nw, sizeof *th);
    if (ws == NULL || th == NULL) {
        free(ws);
        free(th);
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    for (size_t k = 0; k < nw; k++) {
        ws[k].sh = &sh;
        if (nw == 1) {
            worker_main(&ws[k]);
        } else if (pthread_create(&th[k], NULL, worker_main, &ws[k]) != 0) {
            worker_main(&ws[k]);
            th[k] = 0;
        }
    }
    for (size_t k = 0; nw > 1 && k < nw; k++)
        if (th[k] != 0)
            pthread_join(th[k], NULL);
    free(ws);
    free(th);
    if (sh.fatal[0] != '\0' && sh.done < sh.n_review) {
        snprintf(err, errlen, "%s", sh.fatal);
        goto out;
    }
    if (sh.abort && sh.units_ok == 0) {
        snprintf(err, errlen, "the model failed, so the review stopped: %s", sh.abort_reason);
        goto out;
    }
    rc = 0;
out:
    *elapsed_ms = cli_now_ms() - t0;
    agt_registry_free(sh.reg);
    free(sh.members);
    free(sh.groups);
    free(sh.group_n);
    free(sh.system);
    free(sh.plan_system);
    pthread_mutex_destroy(&sh.lock);
    return rc;
}
