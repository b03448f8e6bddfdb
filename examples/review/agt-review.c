/*
 * agt-review: reviews a git change with a language model and the review tool
 * set, leaving comments anchored to the diff's lines. Without a model it
 * previews the change set. Built on the public headers only.
 */
#include "cli_util.h"
#include "review.h"

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
        "  --format F          text (default), json, or sarif (SARIF 2.1.0; not for --preview)\n"
        "  --concurrency N     files reviewed in parallel (default 1)\n"
        "  --timeout SECONDS   time limit per file (default 600)\n"
        "  --max-turns N       model turns per file and phase (default 30)\n"
        "  --plan-threshold N  run a plan phase for files with more changed lines (default "
        "200)\n"
        "  --tools FILE        replace the review tool catalogue with a tools.json file\n"
        "  --language LANG     language of the comments (default: English)\n" CLI_SANDBOX_USAGE "\n"
        "%s"
        "\n"
        "exit status: 0 when the review finished (with or without comments); 1 on a\n"
        "fatal error or when a file could not be reviewed (the reason is printed, and the\n"
        "other files' results still are); 2 on bad usage.\n",
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
        } else if (strcmp(a, "--preview") == 0) {
            o->preview = 1;
        } else if (strcmp(a, "--repo") == 0 || strcmp(a, "--from") == 0 || strcmp(a, "--to") == 0 ||
                   strcmp(a, "--commit") == 0 || strcmp(a, "--exclude") == 0 ||
                   strcmp(a, "--format") == 0 || strcmp(a, "--tools") == 0 ||
                   strcmp(a, "--language") == 0) {
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
            else
                o->excludes[o->n_excludes++] = val;
        } else if (strcmp(a, "--concurrency") == 0 || strcmp(a, "--timeout") == 0 ||
                   strcmp(a, "--max-turns") == 0 || strcmp(a, "--plan-threshold") == 0 ||
                   strcmp(a, "--group-lines") == 0) {
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
            else
                o->plan_threshold = v;
        } else {
            fprintf(stderr, "agt-review: unknown option \"%s\" (see --help)\n", a);
            return -1;
        }
    }
    if (strcmp(o->format, "text") != 0 && strcmp(o->format, "json") != 0 &&
        strcmp(o->format, "sarif") != 0) {
        fprintf(stderr, "agt-review: --format wants text, json or sarif, not \"%s\"\n", o->format);
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

int main(int argc, char **argv)
{
    rv_opts o;
    rv_set set;
    char err[1024] = "";
    int status = 1;
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
    if (rv_collect(&set, &o, err, sizeof err) != 0) {
        fprintf(stderr, "agt-review: %s\n", err);
        rv_set_free(&set);
        goto out_cfg;
    }
    if (o.preview || !o.cfg.configured) {
        if (strcmp(o.format, "sarif") == 0) {
            fprintf(stderr, "agt-review: --format sarif needs a model; the preview prints text or "
                            "json\n");
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
        }
    }
    rv_set_free(&set);
out_cfg:
    cli_config_free(&o.cfg);
    free(o.excludes);
    return status;
}
