/* Differential test: Grep (each output mode) and Glob against ripgrep on a
 * generated tree with nested ignore files, hidden files, a binary file,
 * symbolic links, unicode names and a .git folder. The same set of files
 * and lines must come out. Disagreements on purpose:
 *  - sensitive files (.env, id_rsa, .aws/credentials) are left out by our
 *    tools; they are removed from rg's output before comparing;
 *  - count_matches counts matching lines, so it is compared with
 *    `rg --count` (not --count-matches, which counts every match);
 *  - rg with --hidden descends into .git; our walker always skips VCS
 *    folders, so rg runs with -g '!.git';
 *  - rg prints the "\r" of a CRLF line; Grep shows lines without it, so a
 *    trailing "\r" is dropped from rg's lines;
 *  - rg's -g globs override the ignore rules (an ignored file that matches
 *    the glob is listed); Grep's glob and Glob's pattern only narrow the
 *    files the ignore rules let through, so they are compared with the
 *    intersection of rg with -g and rg without it.
 * Skipped when rg is not installed. */
#include "fs/fs.h"
#include "wsfix.h"

typedef struct lines {
    char **v;
    size_t n;
} lines;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void lines_add(lines *l, const char *s, size_t len)
{
    l->v = realloc(l->v, (l->n + 1) * sizeof *l->v);
    l->v[l->n] = malloc(len + 1);
    memcpy(l->v[l->n], s, len);
    l->v[l->n][len] = '\0';
    l->n++;
}

static void lines_free(lines *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

/* The path part of an output line: up to the first ':' (or the whole line). */
static bool line_is_sensitive(const char *line)
{
    char path[512];
    size_t i = 0;
    while (line[i] && line[i] != ':' && i + 1 < sizeof path) {
        path[i] = line[i];
        i++;
    }
    path[i] = '\0';
    return agti_fs_is_sensitive(path, NULL);
}

static void split(lines *l, const char *text, bool drop_sensitive, bool drop_notes)
{
    const char *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "%.*s", (int)len, p);
        bool note = drop_notes &&
                    (strstr(tmp, " sensitive file") != NULL || strncmp(tmp, "Total: ", 7) == 0 ||
                     strncmp(tmp, "No matches for", 14) == 0 ||
                     strncmp(tmp, "No files match", 14) == 0 || tmp[0] == '[');
        size_t keep = len;
        if (drop_sensitive && keep > 0 && p[keep - 1] == '\r')
            keep--;
        if (len > 0 && !note && !(drop_sensitive && line_is_sensitive(tmp)))
            lines_add(l, p, keep);
        if (nl == NULL)
            break;
        p = nl + 1;
    }
    qsort(l->v, l->n, sizeof *l->v, cmp_str);
}

static char *run_rg(const char *args)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && rg --no-config --hidden --no-require-git -j1 -g '!.git' %s 2>/dev/null",
             ws, args);
    FILE *f = popen(cmd, "r");
    agti_buf b = AGTI_BUF_INIT;
    char buf[4096];
    size_t n;
    while (f && (n = fread(buf, 1, sizeof buf, f)) > 0)
        agti_buf_put(&b, buf, n);
    if (f)
        pclose(f);
    return agti_buf_detach(&b);
}

/* Keeps the lines of l that are also in m (both sorted). */
static void intersect(lines *l, const lines *m)
{
    size_t k = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (bsearch(&l->v[i], m->v, m->n, sizeof *m->v, cmp_str) != NULL)
            l->v[k++] = l->v[i];
        else
            free(l->v[i]);
    }
    l->n = k;
}

/* Compares the tool's lines with rg's (rg_args), intersected with the lines
 * of rg with rg_filter_args when that is not NULL. */
static void compare2(agt_session *s, const char *tool, const char *args, const char *rg_args,
                     const char *rg_filter_args, const char *name)
{
    char *rg = run_rg(rg_args);
    agt_result *r = call(s, tool, args);
    lines a = {0}, b = {0};
    split(&a, agt_result_text(r), false, true);
    split(&b, rg, true, false);
    if (rg_filter_args != NULL) {
        char *rg2 = run_rg(rg_filter_args);
        lines c = {0};
        split(&c, rg2, true, false);
        intersect(&b, &c);
        lines_free(&c);
        free(rg2);
    }
    bool same = a.n == b.n && a.n > 0;
    for (size_t i = 0; same && i < a.n; i++)
        same = strcmp(a.v[i], b.v[i]) == 0;
    if (!T_CHECK(same, "%s: same as rg %s (%zu lines)", name, rg_args, b.n)) {
        t_diag("ours:\n%s", agt_result_text(r));
        t_diag("rg:\n%s", rg);
    }
    T_EQ_INT(agt_result_is_error(r), 0, "%s: not an error", name);
    agt_result_free(r);
    free(rg);
    lines_free(&a);
    lines_free(&b);
}

static void compare(agt_session *s, const char *tool, const char *args, const char *rg_args,
                    const char *name)
{
    compare2(s, tool, args, rg_args, NULL, name);
}

static void build(void)
{
    put_file(".gitignore", "*.log\nbuild/\n!keep.log\n/top_only.txt\n");
    put_file(".rgignore", "*.tmp\n");
    put_file("src/.gitignore", "gen_*\n!gen_keep.c\n");
    put_file("src/.ignore", "scratch/\n");
    put_file("src/main.c", "int needle = 1;\nint other;\n// needle needle\n");
    put_file("src/gen_x.c", "needle generated\n");
    put_file("src/gen_keep.c", "needle kept\n");
    put_file("src/scratch/s.c", "needle scratch\n");
    put_file("src/deep/er/most.h", "#define NEEDLE 2\nneedle3\n");
    put_file("top_only.txt", "needle at top\n");
    put_file("sub/top_only.txt", "needle below\n");
    put_file("debug.log", "needle log\n");
    put_file("keep.log", "needle keep\n");
    put_file("build/out.txt", "needle build\n");
    put_file("x.tmp", "needle tmp\n");
    put_file(".hidden/h.txt", "hidden needle\n");
    put_file("src/.dot.c", "needle dot\n");
    put_file_n("bin/data.bin", "\0\0needle\0binary\n", 16);
    put_file("\xc3\xbcn\xc3\xaf/c\xc3\xb6"
             "d\xc3\xa9.txt",
             "needle unicode \xe2\x9c\x93\n");
    put_file("\xe6\x97\xa5\xe6\x9c\xac.md", "NEEDLE caps\n");
    put_file(".git/config", "needle in git\n");
    put_file(".git/HEAD", "ref\n");
    put_file(".env", "needle=secret\n");
    put_file("home/.ssh/id_rsa", "needle key\n");
    put_file(".aws/credentials", "needle aws\n");
    put_file(".env.example", "needle=\n");
    put_file("docs/a.md", "no match here\n");
    put_file("docs/b.py", "def needle():\n    return needle\n");
    put_file("crlf.txt", "needle crlf\r\nplain\r\n");
    char from[700], to[700];
    snprintf(to, sizeof to, "%s/link.c", ws);
    if (symlink("src/main.c", to) != 0)
        t_diag("symlink failed");
    snprintf(to, sizeof to, "%s/linkdir", ws);
    if (symlink("src", to) != 0)
        t_diag("symlink failed");
    (void)from;
}

int main(void)
{
    if (system("rg --version >/dev/null 2>&1") != 0) {
        t_skip("ripgrep (rg) is not installed");
        return t_done();
    }
    make_ws("rgdiff");
    /* Same global excludes for both: none. */
    setenv("HOME", ws, 1);
    unsetenv("XDG_CONFIG_HOME");
    build();
    agt_session *s = new_session();

    compare(s, "Grep", "{\"pattern\":\"needle\"}", "--files-with-matches -e needle",
            "files_with_matches");
    compare(s, "Grep", "{\"pattern\":\"needle\",\"-i\":true}", "--files-with-matches -i -e needle",
            "files_with_matches -i");
    compare(s, "Grep", "{\"pattern\":\"needle\",\"output_mode\":\"content\",\"head_limit\":0}",
            "-n --no-heading --with-filename -e needle", "content");
    compare(s, "Grep",
            "{\"pattern\":\"ne+dle\\\\d?\\\\b\",\"output_mode\":\"content\",\"-i\":true}",
            "-n -i --no-heading --with-filename -e 'ne+dle\\d?\\b'", "content regex -i");
    compare(s, "Grep", "{\"pattern\":\"needle\",\"output_mode\":\"count_matches\"}",
            "--count --with-filename -e needle", "count");
    compare(s, "Grep", "{\"pattern\":\"needle\",\"include_ignored\":true}",
            "--no-ignore --files-with-matches -e needle", "include_ignored");
    compare2(s, "Grep", "{\"pattern\":\"needle\",\"glob\":\"*.c\"}",
             "--files-with-matches -g '*.c' -e needle", "--files-with-matches -e needle", "glob");
    compare(s, "Grep", "{\"pattern\":\"needle\",\"type\":\"py\"}",
            "--files-with-matches -t py -e needle", "type");
    compare(s, "Grep", "{\"pattern\":\"needle\",\"path\":\"src\"}",
            "--files-with-matches -e needle src", "path");
    compare(s, "Glob", "{\"pattern\":\"*\"}", "--files", "Glob *");
    compare2(s, "Glob", "{\"pattern\":\"*.{c,h}\"}", "--files -g '*.{c,h}'", "--files",
             "Glob braces");
    compare2(s, "Glob", "{\"pattern\":\"src/**\"}", "--files -g 'src/**'", "--files",
             "Glob src/**");
    compare2(s, "Glob", "{\"pattern\":\"src/**/*.h\",\"include_ignored\":true}",
             "--files --no-ignore -g 'src/**/*.h'", NULL, "Glob include_ignored with /");
    compare(s, "Glob", "{\"pattern\":\"*\",\"include_ignored\":true}", "--files --no-ignore",
            "Glob include_ignored");
    compare2(s, "Glob", "{\"pattern\":\"*.txt\"}", "--files -g '*.txt'", "--files",
             "Glob unicode and hidden");
    compare2(s, "Glob", "{\"pattern\":\"*.txt\",\"include_ignored\":true}",
             "--files --no-ignore -g '*.txt'", NULL, "Glob include_ignored *.txt");

    agt_session_free(s);
    rm_ws();
    return t_done();
}
