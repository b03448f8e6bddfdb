/*
 * agt-chat: what the model is told about where it works. The system prompt
 * gets an environment block (working directory, platform, date, git branch
 * and a status summary) and the project's instructions: AGENTS.md (CLAUDE.md
 * where a folder has none) of the workspace root and of each parent folder
 * up to the repository's root (the nearest folder with .git), outermost
 * first, so the nearer file has the last word.
 */
#include "chat.h"

#include "cli_util.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>

#define MAX_INSTRUCTIONS (64 * 1024) /* bytes of one file given to the model */
#define MAX_LEVELS 64

typedef cli_buf sbuf;

static void put(sbuf *b, const char *s, size_t n)
{
    cli_buf_put(b, s, n);
}

static void puts_(sbuf *b, const char *s)
{
    cli_buf_puts(b, s);
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* The nearest folder at or above root holding .git; NULL when none. */
static char *repo_root(const char *root)
{
    char *dir = strdup(root);
    while (dir != NULL) {
        char probe[4200];
        snprintf(probe, sizeof probe, "%s/.git", strcmp(dir, "/") == 0 ? "" : dir);
        if (exists(probe))
            return dir;
        char *slash = strrchr(dir, '/');
        if (slash == NULL || strcmp(dir, "/") == 0)
            break;
        if (slash == dir)
            slash[1] = '\0';
        else
            *slash = '\0';
    }
    free(dir);
    return NULL;
}

/* The output of a git command in dir (trimmed), or NULL. */
static char *git_out(const char *dir, const char *args)
{
    char cmd[4400];
    /* the path is quoted for sh: ' becomes '\'' */
    sbuf q = {0};
    puts_(&q, "'");
    for (const char *p = dir; *p; p++) {
        if (*p == '\'')
            puts_(&q, "'\\''");
        else
            put(&q, p, 1);
    }
    puts_(&q, "'");
    snprintf(cmd, sizeof cmd, "GIT_OPTIONAL_LOCKS=0 git -C %s %s 2>/dev/null", q.p ? q.p : "''",
             args);
    free(q.p);
    FILE *f = popen(cmd, "r");
    if (f == NULL)
        return NULL;
    sbuf out = {0};
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        put(&out, buf, n);
    int st = pclose(f);
    if (st != 0) {
        free(out.p);
        return NULL;
    }
    while (out.len > 0 && (out.p[out.len - 1] == '\n' || out.p[out.len - 1] == '\r'))
        out.p[--out.len] = '\0';
    return out.p != NULL ? out.p : strdup("");
}

static void git_line(sbuf *b, const char *root)
{
    char *branch = git_out(root, "rev-parse --abbrev-ref HEAD");
    char *status = branch != NULL ? git_out(root, "status --porcelain") : NULL;
    if (branch == NULL) {
        char *top = repo_root(root);
        puts_(b, top != NULL ? "Git: a repository git could not read\n"
                             : "Git: not a git repository\n");
        free(top);
        return;
    }
    size_t changed = 0, untracked = 0;
    for (const char *p = status != NULL ? status : ""; *p != '\0';) {
        const char *nl = strchr(p, '\n');
        if (strncmp(p, "??", 2) == 0)
            untracked++;
        else if (p[0] != '\0' && p[0] != '\n')
            changed++;
        p = nl != NULL ? nl + 1 : p + strlen(p);
    }
    char line[512];
    if (changed == 0 && untracked == 0)
        snprintf(line, sizeof line, "Git: branch %s, clean\n", branch);
    else
        snprintf(line, sizeof line, "Git: branch %s, %zu changed file%s, %zu untracked file%s\n",
                 branch, changed, changed == 1 ? "" : "s", untracked, untracked == 1 ? "" : "s");
    puts_(b, line);
    free(branch);
    free(status);
}

char *chat_context(const char *root, char **sources)
{
    sbuf b = {0};
    sbuf src = {0};
    struct utsname u;
    char line[1024];
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    puts_(&b, "<environment>\n");
    puts_(&b, "Working directory: ");
    puts_(&b, root);
    puts_(&b, "\n");
    if (uname(&u) == 0) {
        snprintf(line, sizeof line, "Platform: %s %s (%s)\n", u.sysname, u.release, u.machine);
        puts_(&b, line);
    }
    strftime(line, sizeof line, "Date: %Y-%m-%d\n", &tm);
    puts_(&b, line);
    git_line(&b, root);
    puts_(&b, "</environment>\n");

    /* the folders from the repository's root down to the workspace root */
    char *top = repo_root(root);
    const char *levels[MAX_LEVELS];
    char *owned = strdup(root);
    size_t n = 0;
    if (owned != NULL) {
        char *dir = owned;
        for (;;) {
            if (n < MAX_LEVELS)
                levels[n++] = strdup(dir);
            if (top == NULL || strcmp(dir, top) == 0 || strcmp(dir, "/") == 0)
                break;
            char *slash = strrchr(dir, '/');
            if (slash == NULL)
                break;
            if (slash == dir)
                slash[1] = '\0';
            else
                *slash = '\0';
        }
    }
    for (size_t k = n; k-- > 0;) {
        static const char *const names[] = {"AGENTS.md", "CLAUDE.md"};
        for (size_t i = 0; levels[k] != NULL && i < 2; i++) {
            char path[4200];
            snprintf(path, sizeof path, "%s/%s", strcmp(levels[k], "/") == 0 ? "" : levels[k],
                     names[i]);
            size_t len = 0;
            char *text = exists(path) ? cli_read_file(path, &len) : NULL;
            if (text == NULL)
                continue;
            if (len > MAX_INSTRUCTIONS)
                len = MAX_INSTRUCTIONS;
            puts_(&b, "\n<project-instructions path=\"");
            puts_(&b, path);
            puts_(&b, "\">\n");
            put(&b, text, len);
            if (len > 0 && text[len - 1] != '\n')
                puts_(&b, "\n");
            puts_(&b, "</project-instructions>\n");
            free(text);
            if (src.len > 0)
                puts_(&src, ", ");
            puts_(&src, path);
            break; /* CLAUDE.md only where there is no AGENTS.md */
        }
        free((char *)levels[k]);
    }
    free(owned);
    free(top);
    if (sources != NULL)
        *sources = src.p;
    else
        free(src.p);
    return b.p;
}
