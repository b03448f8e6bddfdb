/*
 * agt-review: reviews a git change with a language model and the review tool
 * set, leaving comments anchored to the diff's lines. Without a model it
 * previews the change set. Built on the public headers only.
 */
#include "cli_util.h"
#include "post.h"
#include "review.h"

#include <curl/curl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: agt-review [options]\n"
        "\n"
        "what to review (default: the working tree against HEAD, or the staged changes\n"
        "when the working tree is clean):\n"
        "  --repo DIR          repository (default: current directory)\n"
        "  --from A [--to B]   the range A...B (merge base of A and B up to B; B: HEAD)\n"
        "  --commit SHA        one commit against its first parent\n"
        "  --exclude GLOB      leave matching paths out (repeatable; '*' crosses '/')\n"
        "\n"
        "how:\n"
        "  --preview           show the change set and what would be reviewed; no model\n"
        "  --format F          text (default), json, sarif (SARIF 2.1.0) or rdjson (reviewdog);\n"
        "                      sarif and rdjson need a model (not for --preview)\n"
        "  --concurrency N     files reviewed in parallel (default 1)\n"
        "  --timeout SECONDS   time limit per file (default 600)\n"
        "  --max-turns N       model turns per file and phase (default 30)\n"
        "  --plan-threshold N  run a plan phase for files with more changed lines (default "
        "200)\n"
        "  --group-lines N     files with at most N changed lines share a session, up to 5\n"
        "                      files and N lines in all (default 40; 0: every file alone)\n"
        "  --tools FILE        replace the review tool catalogue with a tools.json file\n"
        "  --language LANG     language of the comments (default: English)\n" CLI_SANDBOX_USAGE "\n"
        "  --fail-on LEVEL     exit 3 when a comment is at least LEVEL: critical, high,\n"
        "                      medium or low (a comment without a severity counts as medium)\n"
        "  --max-files N       refuse to review more than N files (after the skips)\n"
        "  --max-lines N       refuse to review more than N changed lines in all\n"
        "  --version           print the program name and the library version, exit\n"
        "  -h, --help          this help\n"
        "\n"
        "posting (see docs/cli.md):\n"
        "  --post github|gitlab  post the review on the pull/merge request (one review with\n"
        "                      inline comments and a sticky summary); without --from or\n"
        "                      --commit the pull request's change is reviewed\n"
        "  --post-repo R       OWNER/REPO (GitHub; default $GITHUB_REPOSITORY) or the project\n"
        "                      id or path (GitLab; default $CI_PROJECT_ID)\n"
        "  --pr N              pull request number / merge request iid (default: from the CI\n"
        "                      event: $GITHUB_EVENT_PATH, $CI_MERGE_REQUEST_IID)\n"
        "  --head-sha SHA, --base-sha SHA  override the pull request's head and base\n"
        "  --api-url URL       API root (default $GITHUB_API_URL or https://api.github.com;\n"
        "                      $CI_API_V4_URL or https://gitlab.com/api/v4)\n"
        "  --token-env VAR     the variable holding the token (default GITHUB_TOKEN or\n"
        "                      GITLAB_TOKEN; tokens are never taken on the command line)\n"
        "  --incremental       review only the commits since the head the last run recorded\n"
        "\n"
        "%s"
        "\n"
        "exit status: 0 when the review finished (with or without comments); 1 on a\n"
        "fatal error or when a file could not be reviewed (the reason is printed, and the\n"
        "other files' results still are), or a change set over --max-files/--max-lines;\n"
        "2 on bad usage; 3 when a comment reaches --fail-on.\n"
        "\n"
        "environment: AGT_REVIEW_DEBUG (any value) prints every tool call that returned an\n"
        "error result to stderr; AGT_REVIEW_HTTP_LOG=FILE logs the --post requests.\n",
        cli_config_usage);
}

static int parse_long(const char *s, long lo, long hi, long *out)
{
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int need_value(int argc, char **argv, int i)
{
    if (i + 1 >= argc) {
        fprintf(stderr, "agt-review: %s needs a value (see --help)\n", argv[i]);
        return -1;
    }
    return 0;
}

static int parse_args(rv_opts *o, int argc, char **argv)
{
    char err[512];
    cli_sandbox_init(&o->sandbox);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int took = cli_config_take_arg(&o->cfg, argc, argv, &i, err, sizeof err);
        if (took == 0)
            took = cli_sandbox_arg(&o->sandbox, argc, argv, &i, err, sizeof err);
        if (took < 0) {
            fprintf(stderr, "agt-review: %s\n", err);
            return -1;
        }
        if (took > 0)
            continue;
        long v = 0;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            exit(0);
        } else if (strcmp(a, "--version") == 0) {
            printf("agt-review %s\n", agt_version());
            exit(0);
        } else if (strcmp(a, "--preview") == 0) {
            o->preview = 1;
        } else if (strcmp(a, "--incremental") == 0) {
            o->incremental = 1;
        } else if (strcmp(a, "--repo") == 0 || strcmp(a, "--from") == 0 || strcmp(a, "--to") == 0 ||
                   strcmp(a, "--commit") == 0 || strcmp(a, "--exclude") == 0 ||
                   strcmp(a, "--format") == 0 || strcmp(a, "--tools") == 0 ||
                   strcmp(a, "--language") == 0 || strcmp(a, "--fail-on") == 0 ||
                   strcmp(a, "--post") == 0 || strcmp(a, "--post-repo") == 0 ||
                   strcmp(a, "--head-sha") == 0 || strcmp(a, "--base-sha") == 0 ||
                   strcmp(a, "--api-url") == 0 || strcmp(a, "--token-env") == 0) {
            if (need_value(argc, argv, i) != 0)
                return -1;
            const char *val = argv[++i];
            if (strcmp(a, "--repo") == 0)
                o->repo = val;
            else if (strcmp(a, "--from") == 0)
                o->from = val;
            else if (strcmp(a, "--to") == 0)
                o->to = val;
            else if (strcmp(a, "--commit") == 0)
                o->commit = val;
            else if (strcmp(a, "--tools") == 0)
                o->tools_file = val;
            else if (strcmp(a, "--language") == 0)
                o->language = val;
            else if (strcmp(a, "--format") == 0)
                o->format = val;
            else if (strcmp(a, "--fail-on") == 0)
                o->fail_on = val;
            else if (strcmp(a, "--post") == 0)
                o->post = val;
            else if (strcmp(a, "--post-repo") == 0)
                o->post_repo = val;
            else if (strcmp(a, "--head-sha") == 0)
                o->head_sha = val;
            else if (strcmp(a, "--base-sha") == 0)
                o->base_sha = val;
            else if (strcmp(a, "--api-url") == 0)
                o->api_url = val;
            else if (strcmp(a, "--token-env") == 0)
                o->token_env = val;
            else
                o->excludes[o->n_excludes++] = val;
        } else if (strcmp(a, "--concurrency") == 0 || strcmp(a, "--timeout") == 0 ||
                   strcmp(a, "--max-turns") == 0 || strcmp(a, "--plan-threshold") == 0 ||
                   strcmp(a, "--group-lines") == 0 || strcmp(a, "--max-files") == 0 ||
                   strcmp(a, "--max-lines") == 0 || strcmp(a, "--pr") == 0) {
            if (need_value(argc, argv, i) != 0)
                return -1;
            const char *val = argv[++i];
            long hi = strcmp(a, "--concurrency") == 0 ? 64 : 100000000;
            long lo = strcmp(a, "--plan-threshold") == 0 || strcmp(a, "--group-lines") == 0 ? 0 : 1;
            if (parse_long(val, lo, hi, &v) != 0) {
                fprintf(stderr, "agt-review: %s wants a whole number from %ld to %ld, not \"%s\"\n",
                        a, lo, hi, val);
                return -1;
            }
            if (strcmp(a, "--concurrency") == 0)
                o->concurrency = (int)v;
            else if (strcmp(a, "--timeout") == 0)
                o->timeout_s = v;
            else if (strcmp(a, "--max-turns") == 0)
                o->max_turns = (int)v;
            else if (strcmp(a, "--group-lines") == 0)
                o->group_lines = v;
            else if (strcmp(a, "--max-files") == 0)
                o->max_files = v;
            else if (strcmp(a, "--max-lines") == 0)
                o->max_lines = v;
            else if (strcmp(a, "--pr") == 0)
                o->pr = v;
            else
                o->plan_threshold = v;
        } else {
            fprintf(stderr, "agt-review: unknown option \"%s\" (see --help)\n", a);
            return -1;
        }
    }
    if (strcmp(o->format, "text") != 0 && strcmp(o->format, "json") != 0 &&
        strcmp(o->format, "sarif") != 0 && strcmp(o->format, "rdjson") != 0) {
        fprintf(stderr, "agt-review: --format wants text, json, sarif or rdjson, not \"%s\"\n",
                o->format);
        return -1;
    }
    if (o->fail_on != NULL && strcmp(o->fail_on, "critical") != 0 &&
        strcmp(o->fail_on, "high") != 0 && strcmp(o->fail_on, "medium") != 0 &&
        strcmp(o->fail_on, "low") != 0) {
        fprintf(stderr, "agt-review: --fail-on wants critical, high, medium or low, not \"%s\"\n",
                o->fail_on);
        return -1;
    }
    if (o->post != NULL && strcmp(o->post, "github") != 0 && strcmp(o->post, "gitlab") != 0) {
        fprintf(stderr, "agt-review: --post wants github or gitlab, not \"%s\"\n", o->post);
        return -1;
    }
    if (o->post == NULL &&
        (o->incremental || o->post_repo != NULL || o->pr != 0 || o->head_sha != NULL ||
         o->base_sha != NULL || o->api_url != NULL || o->token_env != NULL)) {
        fprintf(stderr, "agt-review: --incremental, --post-repo, --pr, --head-sha, --base-sha, "
                        "--api-url and --token-env go with --post github|gitlab\n");
        return -1;
    }
    if (o->incremental && (o->from != NULL || o->commit != NULL)) {
        fprintf(stderr, "agt-review: --incremental picks the range itself; drop --from/--commit\n");
        return -1;
    }
    if (o->post != NULL && o->preview) {
        fprintf(stderr, "agt-review: --post needs a review; it cannot go with --preview\n");
        return -1;
    }
    if (o->commit != NULL && (o->from != NULL || o->to != NULL)) {
        fprintf(stderr, "agt-review: --commit cannot be combined with --from/--to\n");
        return -1;
    }
    if (o->to != NULL && o->from == NULL) {
        fprintf(stderr, "agt-review: --to needs --from (the range is FROM...TO)\n");
        return -1;
    }
    o->mode = o->commit != NULL ? AGT_CHANGES_COMMIT
              : o->from != NULL ? AGT_CHANGES_RANGE
                                : AGT_CHANGES_WORKSPACE;
    return 0;
}

/* The change set against --max-files and --max-lines, before any model call. */
static int check_limits(const rv_set *set, const rv_opts *o, char *err, size_t errlen)
{
    size_t files = 0;
    long lines = 0;
    for (size_t i = 0; i < set->n_files; i++) {
        if (set->files[i].skip != NULL)
            continue;
        files++;
        lines += set->files[i].added + set->files[i].deleted;
    }
    if (o->max_files > 0 && files > (size_t)o->max_files) {
        snprintf(err, errlen,
                 "the change set has %zu files to review, over --max-files %ld; review a smaller "
                 "range (--from/--to, --commit), leave files out with --exclude, or raise "
                 "--max-files",
                 files, o->max_files);
        return -1;
    }
    if (o->max_lines > 0 && lines > o->max_lines) {
        snprintf(err, errlen,
                 "the change set has %ld changed lines to review (in %zu files), over --max-lines "
                 "%ld; review a smaller range (--from/--to, --commit), leave files out with "
                 "--exclude, or raise --max-lines",
                 lines, files, o->max_lines);
        return -1;
    }
    return 0;
}

/* Drops the comments below the configured minimum severity. */
static void filter_severity(rv_set *set, const rv_opts *o)
{
    if (o->min_severity == NULL)
        return;
    int min = rv_severity_rank(o->min_severity);
    for (size_t i = 0; i < set->n_files; i++) {
        json_t *arr = set->files[i].comments;
        for (size_t k = json_array_size(arr); k > 0; k--) {
            json_t *c = json_array_get(arr, k - 1);
            if (rv_severity_rank(json_string_value(json_object_get(c, "severity"))) < min)
                json_array_remove(arr, k - 1);
        }
    }
}

/* The comments at or above --fail-on. */
static size_t count_failing(const rv_set *set, const rv_opts *o)
{
    if (o->fail_on == NULL)
        return 0;
    int min = rv_severity_rank(o->fail_on);
    size_t n = 0;
    for (size_t i = 0; i < set->n_files; i++) {
        json_t *arr = set->files[i].comments;
        for (size_t k = 0; set->files[i].skip == NULL && k < json_array_size(arr); k++) {
            json_t *c = json_array_get(arr, k);
            n += rv_severity_rank(json_string_value(json_object_get(c, "severity"))) >= min;
        }
    }
    return n;
}

int main(int argc, char **argv)
{
    rv_opts o;
    rv_set set;
    rv_post post;
    int posting = 0;
    char err[2048] = "";
    int status = 1;
    memset(&post, 0, sizeof post);
    memset(&o, 0, sizeof o);
    o.repo = ".";
    o.format = "text";
    o.concurrency = 1;
    o.timeout_s = 600;
    o.max_turns = 30;
    o.plan_threshold = 200;
    o.group_lines = 40;
    o.excludes = calloc((size_t)argc + 1, sizeof *o.excludes);
    if (o.excludes == NULL)
        return 1;
    if (parse_args(&o, argc, argv) != 0) {
        free(o.excludes);
        return 2;
    }
    if (rv_load_repo_config(&o, err, sizeof err) != 0) {
        fprintf(stderr, "agt-review: %s\n", err);
        goto out_cfg;
    }
    if (cli_config_resolve(&o.cfg, err, sizeof err) != 0) {
        fprintf(stderr, "agt-review: %s\n", err);
        goto out_cfg;
    }
    if (o.cfg.opt_show) {
        char desc[1024];
        cli_config_describe(&o.cfg, desc, sizeof desc);
        printf("%s\n", desc);
        status = 0;
        goto out_cfg;
    }
    if (o.post != NULL) {
        if (!o.cfg.configured) {
            fprintf(stderr, "agt-review: --post needs a model: pass --model NAME (see --help)\n");
            goto out_cfg;
        }
        curl_global_init(CURL_GLOBAL_DEFAULT);
        posting = 1;
        if (rv_post_prepare(&post, &o, err, sizeof err) != 0) {
            fprintf(stderr, "agt-review: %s\n", err);
            goto out_cfg;
        }
        if (post.nothing_new) {
            fprintf(stderr,
                    "agt-review: --incremental: nothing new since %.12s, the last reviewed head\n",
                    post.last_head);
            status = 0;
            goto out_cfg;
        }
    }
    if (rv_collect(&set, &o, err, sizeof err) != 0) {
        fprintf(stderr, "agt-review: %s\n", err);
        rv_set_free(&set);
        goto out_cfg;
    }
    if (!o.preview && check_limits(&set, &o, err, sizeof err) != 0) {
        fprintf(stderr, "agt-review: %s\n", err);
        rv_set_free(&set);
        goto out_cfg;
    }
    if (o.preview || !o.cfg.configured) {
        if (strcmp(o.format, "sarif") == 0 || strcmp(o.format, "rdjson") == 0) {
            fprintf(stderr,
                    "agt-review: --format %s needs a model; the preview prints text or json\n",
                    o.format);
            o.format = "text";
        }
        rv_print_preview(&set, &o);
        if (!o.cfg.configured && !o.preview)
            fprintf(stderr,
                    "\nagt-review: no model configured, so this is the preview only. To review, "
                    "pass --model NAME (with --base-url URL for a non-OpenAI endpoint) and export "
                    "AGT_API_KEY, or define a provider in the config file; see --help.\n");
        status = 0;
    } else {
        int64_t elapsed = 0;
        if (rv_review(&set, &o, &elapsed, err, sizeof err) != 0) {
            fprintf(stderr, "agt-review: %s\n", err);
        } else {
            filter_severity(&set, &o);
            rv_print_results(&set, &o, elapsed);
            status = 0;
            size_t failed = 0, reviewed = 0;
            const char *first = NULL;
            for (size_t i = 0; i < set.n_files; i++) {
                const rv_file *f = &set.files[i];
                if (f->skip != NULL)
                    continue;
                reviewed++;
                if (f->outcome == NULL || strcmp(f->outcome, "error") == 0) {
                    failed++;
                    if (first == NULL)
                        first = f->error != NULL ? f->error : "not reviewed";
                }
            }
            if (failed > 0) {
                fprintf(stderr, "agt-review: %zu of %zu files could not be reviewed: %s\n", failed,
                        reviewed, first);
                status = 1;
            }
            if (posting && rv_post_publish(&post, &set, &o, err, sizeof err) != 0) {
                fprintf(stderr, "agt-review: posting the review failed: %s\n", err);
                status = 1;
            }
            size_t failing = count_failing(&set, &o);
            if (failing > 0 && status == 0) {
                fprintf(stderr, "agt-review: %zu comment%s at or above --fail-on %s\n", failing,
                        failing == 1 ? "" : "s", o.fail_on);
                status = 3;
            }
        }
    }
    rv_set_free(&set);
out_cfg:
    if (posting) {
        rv_post_free(&post);
        curl_global_cleanup();
    }
    cli_config_free(&o.cfg);
    free(o.excludes);
    free(o.from_owned);
    free(o.to_owned);
    free(o.instructions);
    json_decref(o.repo_config);
    return status;
}
