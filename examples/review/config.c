/*
 * agt-review: the repository's own settings. `.agenttools/review.json` at the
 * top of the working tree (checked against review-config.schema.json with the
 * library's validator), and review instructions for the model from the
 * config's "instructions", then "instructions_file", else REVIEW.md, else the
 * review section of AGENTS.md (see docs/cli.md).
 */
#include "cli_schema.h"
#include "cli_util.h"
#include "review.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

extern const char rv_config_schema_json[];
extern const size_t rv_config_schema_json_len;

/* Instructions longer than this are refused: they would crowd out the diff. */
#define RV_MAX_INSTRUCTIONS (64 * 1024)

static int exists(const char *path, int want_dir)
{
    struct stat st;
    return stat(path, &st) == 0 && (want_dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode));
}

/* The top of the working tree: the nearest folder up from dir with a .git. */
static int find_top(const char *dir, char *out, size_t len)
{
    char buf[PATH_MAX];
    if (realpath(dir, buf) == NULL)
        return -1;
    for (;;) {
        char probe[PATH_MAX + 8];
        snprintf(probe, sizeof probe, "%s/.git", buf);
        struct stat st;
        if (stat(probe, &st) == 0) { /* a folder, or a file for worktrees */
            snprintf(out, len, "%s", buf);
            return 0;
        }
        char *slash = strrchr(buf, '/');
        if (slash == NULL || slash == buf)
            return -1;
        *slash = '\0';
    }
}

/* Whether a Markdown line is an ATX heading; its level (1-6) or 0. */
static int heading_level(const char *line, size_t n, const char **text, size_t *text_len)
{
    size_t i = 0;
    while (i < n && i < 3 && line[i] == ' ')
        i++;
    size_t h = 0;
    while (i + h < n && line[i + h] == '#')
        h++;
    if (h == 0 || h > 6 || (i + h < n && line[i + h] != ' ' && line[i + h] != '\t'))
        return 0;
    *text = line + i + h;
    *text_len = n - i - h;
    return (int)h;
}

static int contains_review(const char *s, size_t n)
{
    for (size_t i = 0; i + 6 <= n; i++)
        if (strncasecmp(s + i, "review", 6) == 0)
            return 1;
    return 0;
}

/*
 * The review section of AGENTS.md: from the first ATX heading whose text
 * contains "review" (any case) up to the next heading of the same or a
 * higher level, heading included; headings inside ``` fences do not count.
 * NULL when there is none.
 */
char *rv_agents_review_section(const char *md)
{
    const char *start = NULL, *end = NULL;
    int level = 0, fence = 0;
    for (const char *p = md; *p != '\0';) {
        const char *nl = strchr(p, '\n');
        size_t n = nl != NULL ? (size_t)(nl - p) : strlen(p);
        const char *t = NULL;
        size_t tl = 0;
        const char *q = p;
        while (q < p + n && *q == ' ')
            q++;
        if (strncmp(q, "```", 3) == 0 || strncmp(q, "~~~", 3) == 0) {
            fence = !fence;
        } else if (!fence) {
            int h = heading_level(p, n, &t, &tl);
            if (h > 0 && start == NULL && contains_review(t, tl)) {
                start = p;
                level = h;
            } else if (h > 0 && start != NULL && h <= level) {
                end = p;
                break;
            }
        }
        p += n + (nl != NULL);
    }
    if (start == NULL)
        return NULL;
    if (end == NULL)
        end = start + strlen(start);
    while (end > start && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
        end--;
    char *s = malloc((size_t)(end - start) + 1);
    if (s != NULL) {
        memcpy(s, start, (size_t)(end - start));
        s[end - start] = '\0';
    }
    return s;
}

static int read_text(const char *path, const char *shown, char **out, char *err, size_t errlen)
{
    size_t len = 0;
    *out = cli_read_file(path, &len);
    if (*out == NULL) {
        snprintf(err, errlen, "%s: cannot read it: %s", shown, strerror(errno));
        return -1;
    }
    if (strlen(*out) != len) {
        snprintf(err, errlen, "%s: holds a NUL byte; review instructions are text", shown);
        free(*out);
        *out = NULL;
        return -1;
    }
    return 0;
}

/* Appends "text" to o->instructions, separated by a blank line. */
static int add_instructions(rv_opts *o, const char *text, const char *from, char *err,
                            size_t errlen)
{
    size_t have = o->instructions != NULL ? strlen(o->instructions) : 0;
    size_t add = strlen(text);
    if (add == 0)
        return 0;
    if (have + add > RV_MAX_INSTRUCTIONS) {
        snprintf(err, errlen,
                 "%s: the review instructions come to %zu bytes, over the limit of %d; shorten "
                 "them",
                 from, have + add, RV_MAX_INSTRUCTIONS);
        return -1;
    }
    char *p = realloc(o->instructions, have + add + 3);
    if (p == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (have > 0) {
        memcpy(p + have, "\n\n", 2);
        have += 2;
    }
    memcpy(p + have, text, add + 1);
    o->instructions = p;
    return 0;
}

/* Adds a source to the description of where the instructions come from. */
static void note_source(rv_opts *o, const char *name)
{
    size_t n = strlen(o->instructions_from);
    snprintf(o->instructions_from + n, sizeof o->instructions_from - n, "%s%s",
             n > 0 ? " and " : "", name);
}

static int load_json_config(rv_opts *o, const char *top, char *err, size_t errlen)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/.agenttools/review.json", top);
    if (!exists(path, 0))
        return 0;
    const char *shown = ".agenttools/review.json";
    size_t len = 0;
    char *text = cli_read_file(path, &len);
    if (text == NULL) {
        snprintf(err, errlen, "%s: cannot read it: %s", shown, strerror(errno));
        return -1;
    }
    json_error_t je;
    json_t *cfg = json_loadb(text, len, 0, &je);
    if (cfg == NULL) {
        snprintf(err, errlen, "%s: line %d: %s", shown, je.line, je.text);
        free(text);
        return -1;
    }
    int bad = cli_schema_check(rv_config_schema_json, rv_config_schema_json_len, text, len, shown,
                               err, errlen);
    free(text);
    if (bad) {
        json_decref(cfg);
        return -1;
    }
    o->repo_config = cfg;
    o->repo_config_used = 1;
    json_t *ex = json_object_get(cfg, "exclude");
    size_t n = json_array_size(ex);
    if (n > 0) {
        const char **all = calloc(o->n_excludes + n + 1, sizeof *all);
        if (all == NULL) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        memcpy(all, o->excludes, o->n_excludes * sizeof *all);
        for (size_t i = 0; i < n; i++)
            all[o->n_excludes + i] = json_string_value(json_array_get(ex, i));
        free(o->excludes);
        o->excludes = all;
        o->n_excludes += n;
        o->n_config_excludes = n;
    }
    if (o->language == NULL)
        o->language = json_string_value(json_object_get(cfg, "language"));
    o->min_severity = json_string_value(json_object_get(cfg, "min_severity"));
    o->cfg.repo_model = json_string_value(json_object_get(cfg, "model"));
    const char *ins = json_string_value(json_object_get(cfg, "instructions"));
    if (ins != NULL && ins[0] != '\0') {
        if (add_instructions(o, ins, shown, err, errlen) != 0)
            return -1;
        note_source(o, shown);
    }
    return 0;
}

/* instructions_file, else REVIEW.md, else AGENTS.md's review section. */
static int load_instruction_file(rv_opts *o, const char *top, char *err, size_t errlen)
{
    char path[PATH_MAX + 64], shown[PATH_MAX + 64];
    char *text = NULL;
    const char *file = json_string_value(json_object_get(o->repo_config, "instructions_file"));
    if (file != NULL) {
        if (file[0] == '/' || strstr(file, "..") != NULL) {
            snprintf(err, errlen,
                     ".agenttools/review.json: \"instructions_file\" must be a path inside the "
                     "repository, relative to its top folder, not \"%s\"",
                     file);
            return -1;
        }
        snprintf(path, sizeof path, "%s/%s", top, file);
        snprintf(shown, sizeof shown, "%s (\"instructions_file\" of .agenttools/review.json)",
                 file);
        if (!exists(path, 0)) {
            snprintf(err, errlen, "%s: no such file", shown);
            return -1;
        }
        if (read_text(path, shown, &text, err, errlen) != 0)
            return -1;
        snprintf(shown, sizeof shown, "%s", file);
    } else {
        snprintf(path, sizeof path, "%s/REVIEW.md", top);
        if (exists(path, 0)) {
            if (read_text(path, "REVIEW.md", &text, err, errlen) != 0)
                return -1;
            snprintf(shown, sizeof shown, "REVIEW.md");
        } else {
            snprintf(path, sizeof path, "%s/AGENTS.md", top);
            if (!exists(path, 0))
                return 0;
            char *md = NULL;
            if (read_text(path, "AGENTS.md", &md, err, errlen) != 0)
                return -1;
            text = rv_agents_review_section(md);
            free(md);
            if (text == NULL)
                return 0;
            snprintf(shown, sizeof shown, "the review section of AGENTS.md");
        }
    }
    /* trailing blank lines say nothing */
    size_t n = strlen(text);
    while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == '\r' || text[n - 1] == ' '))
        text[--n] = '\0';
    int rc = add_instructions(o, text, shown, err, errlen);
    free(text);
    if (rc == 0 && n > 0)
        note_source(o, shown);
    return rc;
}

int rv_load_repo_config(rv_opts *o, char *err, size_t errlen)
{
    char top[PATH_MAX];
    if (find_top(o->repo, top, sizeof top) != 0)
        return 0; /* not a repository: rv_collect says so */
    if (load_json_config(o, top, err, errlen) != 0)
        return -1;
    if (load_instruction_file(o, top, err, errlen) != 0)
        return -1;
    if (o->repo_config_used)
        fprintf(stderr, "agt-review: settings from .agenttools/review.json\n");
    if (o->instructions_from[0] != '\0')
        fprintf(stderr, "agt-review: review instructions from %s (%zu bytes)\n",
                o->instructions_from, strlen(o->instructions));
    return 0;
}
