/*
 * Shell analysis: for each line, the commands as they would run, one per
 * line: argv after the wrappers (shell_render.h word style), then
 * " <wrappers>" when some were seen through, " @path" when the command word
 * held a '/', " ^N" for the exec that ran it (sh -c, eval, find -exec), and
 * the flags in braces: N dynamic name, E eval/sh -c string not static,
 * S source, I shell reading stdin, A dynamic args, U unknown wrapper
 * options, W writes a file, F script file, M more args at run time,
 * C container, X the string did not parse. Worked out by hand from the
 * manuals of each wrapper and checked against what bash runs.
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "shell_render.h"

/* this test renders execs, not the parser's command list */
static char *(*const unused_render)(const char *) __attribute__((unused)) = sr_render;

static void render_exec(agti_buf *b, const agti_sh_exec *e)
{
    for (size_t i = 0; i < e->argc; i++) {
        if (i)
            agti_buf_putc(b, ' ');
        sr_word(b, e->argv[i], strlen(e->argv[i]));
    }
    if (e->wrappers)
        agti_buf_printf(b, " <%s>", e->wrappers);
    if (e->path)
        agti_buf_printf(b, " @%s", e->path);
    if (e->parent >= 0)
        agti_buf_printf(b, " ^%d", e->parent);
    static const struct {
        unsigned f;
        char c;
    } fl[] = {
        {AGTI_SHX_DYNAMIC_NAME, 'N'}, {AGTI_SHX_EVAL_DYNAMIC, 'E'}, {AGTI_SHX_SOURCE, 'S'},
        {AGTI_SHX_SHELL_STDIN, 'I'},  {AGTI_SHX_DYNAMIC_ARGS, 'A'}, {AGTI_SHX_WRAPPER_UNKNOWN, 'U'},
        {AGTI_SHX_WRITES, 'W'},       {AGTI_SHX_SHELL_FILE, 'F'},   {AGTI_SHX_MORE_ARGS, 'M'},
        {AGTI_SHX_CONTAINER, 'C'},    {AGTI_SHX_SYNTAX, 'X'}};
    bool open = false;
    for (size_t i = 0; i < sizeof fl / sizeof fl[0]; i++)
        if (e->flags & fl[i].f) {
            agti_buf_puts(b, open ? "" : " {");
            agti_buf_putc(b, fl[i].c);
            open = true;
        }
    if (open)
        agti_buf_putc(b, '}');
}

static char *analyze(const char *src)
{
    agti_sh_script *s = NULL;
    agti_sh_error err;
    int rc = agti_sh_parse(src, strlen(src), &s, &err);
    if (rc != AGTI_SH_OK)
        return agti_aprintf("PARSE %d: %s", rc, err.message);
    agti_sh_analysis *a = NULL;
    rc = agti_sh_analyze(s, &a, &err);
    if (rc != AGTI_SH_OK) {
        agti_sh_free(s);
        return agti_aprintf("ERROR %d: %s", rc, err.message);
    }
    agti_buf b = AGTI_BUF_INIT;
    for (size_t i = 0; i < agti_sh_nexecs(a); i++) {
        if (i)
            agti_buf_putc(&b, '\n');
        render_exec(&b, agti_sh_exec_at(a, i));
    }
    agti_sh_analysis_free(a);
    agti_sh_free(s);
    return agti_buf_detach(&b);
}

typedef struct {
    const char *src, *want;
} case_t;

static void run_cases(const char *group, const case_t *cs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char *got = analyze(cs[i].src);
        T_EQ_STR(got, cs[i].want, "%s %zu: %s", group, i, cs[i].src);
        free(got);
    }
}

#define RUN(group, arr) run_cases(group, arr, sizeof arr / sizeof arr[0])

static const case_t basics[] = {
    {"rm -rf d", "rm -rf d"},
    {"/bin/rm -rf d", "rm -rf d @/bin/rm"},
    {"FOO=1 rm -rf d", "rm -rf d"},
    {"{ rm -rf d; }", "rm -rf d"},
    {"if true; then rm -rf d; fi", "true\nrm -rf d"},
    {"X=1", ""},
};

int main(void)
{
    RUN("basics", basics);
    return t_done();
}
