/* decide-dump: for every input line (stdin, "<NL>" for a newline), the
 * analysis (every exec: words, flags, stages, path, wrappers, depth,
 * parent) and the approval verdict (kind, rule, closed, refused, counts,
 * uncovered, suggestions) as text: run from two builds and diffed, it shows
 * that a change left every decision as it was. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agenttools/agenttools.h"
#include "session/policy.h"
#include "session/session_internal.h"
#include "shell/shell.h"

static void dump_analysis(const char *cmd, size_t len)
{
    agti_sh_script *s = NULL;
    agti_sh_error err;
    memset(&err, 0, sizeof err);
    int rc = agti_sh_parse(cmd, len, &s, &err);
    printf(" parse %d", rc);
    if (rc != AGTI_SH_OK) {
        printf(" at %zu: %s\n", err.offset, err.message);
        return;
    }
    printf(" cmds %zu funcs %zu\n", agti_sh_ncmds(s), agti_sh_nfuncs(s));
    for (size_t i = 0; i < agti_sh_ncmds(s); i++) {
        const agti_sh_cmd *c = agti_sh_cmd_at(s, i);
        printf("  cmd %zu f%x off %zu len %zu fn %d a%zu r%zu:", i, c->flags, c->offset, c->length,
               c->function, c->nassigns, c->nredirs);
        for (size_t k = 0; k < c->argc; k++)
            printf(" [%.*s/%x]", (int)c->argv[k].vlen, c->argv[k].value, c->argv[k].flags);
        for (size_t k = 0; k < c->nredirs; k++)
            printf(" {%d %d %s w%d i%d %zu}", c->redirs[k].op, c->redirs[k].fd,
                   c->redirs[k].target.value ? c->redirs[k].target.value : "-", c->redirs[k].writes,
                   c->redirs[k].inherited, c->redirs[k].heredoc_len);
        printf("\n");
    }
    agti_sh_analysis *a = NULL;
    rc = agti_sh_analyze(s, &a, &err);
    printf("  analyze %d", rc);
    if (rc != AGTI_SH_OK) {
        printf(": %s\n", err.message);
        agti_sh_free(s);
        return;
    }
    printf(" execs %zu\n", agti_sh_nexecs(a));
    for (size_t i = 0; i < agti_sh_nexecs(a); i++) {
        const agti_sh_exec *e = agti_sh_exec_at(a, i);
        printf("  exec %zu f%x d%d p%d path %s wr %s st", i, e->flags, e->depth, e->parent,
               e->path ? e->path : "-", e->wrappers ? e->wrappers : "-");
        for (size_t k = 0; k < e->nstages; k++)
            printf(" %zu", e->stages[k]);
        printf(" argv@%zu:", (size_t)(e->argv - e->written));
        for (size_t k = 0; k < e->writtenc; k++)
            printf(" [%s/%x]", e->written[k], e->wflags[k]);
        printf("\n");
    }
    agti_sh_analysis_free(a);
    agti_sh_free(s);
}

int main(void)
{
    agt_registry *reg = NULL;
    agt_session *s = NULL;
    agt_registry_new(&reg);
    agt_registry_load_builtin(reg, "chat");
    agt_session_new(&s, reg, "/tmp");
    const char *rules =
        "{\"deny\":[\"Bash(rm -rf*)\",\"Bash(curl *)\",\"Bash(/usr/bin/dd *)\"],"
        "\"ask\":[\"Bash(git push:*)\",\"Bash(sudo *)\"],"
        "\"allow\":[\"Bash(git status)\",\"Bash(git log *)\",\"Bash(git diff *)\",\"Bash(head *)\","
        "\"Bash(tail *)\",\"Bash(make:*)\",\"Bash(cd *)\",\"Bash(ls *)\",\"Bash(ls)\","
        "\"Bash(printf *)\",\"Bash(echo *)\",\"Bash(grep *)\",\"Bash(wc *)\",\"Bash(cat *)\","
        "\"Bash(sort *)\",\"Bash(npm run test:*)\",\"Bash(./gradlew *)\","
        "\"Bash(python3 -m pytest *)\",\"Bash(true)\",\"Bash(/bin/ls *)\"]}";
    if (agt_session_load_rules(s, rules, strlen(rules)) != AGT_OK) {
        fprintf(stderr, "rules: %s\n", agt_error_message());
        return 1;
    }
    static char line[1 << 21];
    size_t n = 0;
    while (fgets(line, sizeof line, stdin)) {
        size_t l = strlen(line);
        if (l && line[l - 1] == '\n')
            line[--l] = '\0';
        char *cmd = malloc(l + 1);
        size_t o = 0;
        for (size_t i = 0; i < l;) {
            if (strncmp(line + i, "<NL>", 4) == 0) {
                cmd[o++] = '\n';
                i += 4;
            } else {
                cmd[o++] = line[i++];
            }
        }
        cmd[o] = '\0';
        printf("== %zu %.200s\n", n++, line);
        dump_analysis(cmd, o);
        json_t *args = json_pack("{s:s}", "command", cmd);
        agti_verdict v;
        memset(&v, 0, sizeof v);
        int rc = agti_policy_evaluate(s, "Bash", args, &v);
        if (rc == AGT_OK)
            rc = agti_verdict_details(&v);
        char *un = v.uncovered ? json_dumps(v.uncovered, JSON_COMPACT) : NULL;
        char *sg = v.suggest ? json_dumps(v.suggest, JSON_COMPACT) : NULL;
        printf(" verdict rc %d kind %d rule %s ask %s n %zu\n closed %s\n refused %s\n uncovered "
               "%s\n suggest %s\n",
               rc, v.kind, v.rule ? v.rule->text : "-", v.ask ? v.ask->text : "-", v.ncommands,
               v.closed ? v.closed : "-", v.refused ? v.refused : "-", un ? un : "-",
               sg ? sg : "-");
        free(un);
        free(sg);
        agti_verdict_clear(&v);
        json_decref(args);
        free(cmd);
    }
    agt_session_free(s);
    agt_registry_free(reg);
    return 0;
}
