/*
 * An allow rule with a wildcard (`Bash(make *)`, `Bash(ssh *)`) does not
 * cover a command whose options make the program run code, or write or
 * read a file, that an argument chooses (make -f/--eval/-C/VAR=value, ssh
 * -o ProxyCommand, sed's e command, awk's system(), tar --to-command, ...):
 * it asks, saying why. A rule that spells the option still covers it, a
 * rule without a wildcard names its arguments, deny rules still apply, and
 * a bare `Bash` rule covers everything. Each command is one a tester ran
 * under the rule in the comment and that ran the tester's code; the
 * expected decisions follow from the programs' manuals, not from the code.
 */
#include <jansson.h>

#include "common.h"

/* The decision on cmd under rules in manual mode: "ran", "pending",
 * "deny" or "rc:N"; the pending request's reason into why (when not NULL). */
static const char *verdict(const char *rules, const char *cmd, char *why, size_t cap)
{
    static agt_registry *reg;
    static char out[64];
    if (reg == NULL)
        reg = make_chat_registry();
    agt_session *s = NULL;
    agt_session_new(&s, reg, ws_root);
    if (agt_session_load_rules(s, rules, strlen(rules)) != AGT_OK) {
        agt_session_free(s);
        return "bad rules";
    }
    json_t *j = json_pack("{s:s}", "command", cmd);
    char *args = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    agt_result *r = NULL;
    int rc = agt_session_dispatch(s, "c1", "Bash", args, &r);
    free(args);
    if (why)
        why[0] = '\0';
    if (rc == AGT_EPENDING) {
        char *pj = NULL;
        agt_session_pending(s, &pj);
        json_t *list = pj ? json_loads(pj, 0, NULL) : NULL;
        const char *t = json_string_value(json_object_get(json_array_get(list, 0), "reason"));
        if (why)
            snprintf(why, cap, "%s", t ? t : "");
        json_decref(list);
        agt_free(pj);
        snprintf(out, sizeof out, "pending");
    } else if (rc != AGT_OK) {
        snprintf(out, sizeof out, "rc:%d", rc);
    } else {
        snprintf(out, sizeof out, "%s",
                 !agt_result_is_error(r)                         ? "ran"
                 : agt_result_status(r) == AGT_EDENIED           ? "deny"
                 : strstr(agt_result_text(r), "refused") != NULL ? "deny"
                                                                 : "error");
    }
    agt_result_free(r);
    agt_session_free(s);
    return out;
}

typedef struct {
    const char *cmd, *want;
} vcase;

static void run(const char *group, const char *rules, const vcase *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        T_EQ_STR(verdict(rules, c[i].cmd, NULL, 0), c[i].want, "%s: %s", group, c[i].cmd);
}

#define RUN(group, rules, arr) run(group, rules, arr, sizeof arr / sizeof arr[0])

static void test_make(void)
{
    static const vcase c[] = {
        {"make -f /dev/stdin <<<'all:;id'", "pending"},
        {"make --eval='$(shell id)'", "pending"},
        {"make --ev='$(shell id)'", "pending"},
        {"make -E '$(shell id)'", "pending"},
        {"make SHELL=/tmp/x", "pending"},
        {"make MAKEFLAGS=-f/tmp/x", "pending"},
        {"make all CC=./evil", "pending"},
        {"make -f - < evil.mk", "pending"},
        {"make -C /elsewhere", "pending"},
        {"make --directory=/elsewhere", "pending"},
        {"make -wC /elsewhere", "pending"},
        {"make -fevil.mk", "pending"},
        {"make -j2 -f x", "pending"},
        {"make all -f x", "pending"},
        {"make $T", "pending"},
        {"timeout 5 make --eval=x", "pending"},
        {"bash -c 'make -f x'", "pending"},
        {"make", "ran"},
        {"make -j2 check", "ran"},
        {"make -k test", "ran"},
        {"make -j 4 all", "ran"},
        {"FOO=1 make -j2", "ran"},
    };
    RUN("make *", "{\"allow\":[\"Bash(make *)\"]}", c);
    RUN("make:*", "{\"allow\":[\"Bash(make:*)\"]}", c);
    /* a rule that spells the option covers it, and only it */
    static const char *spelled = "{\"allow\":[\"Bash(make -f build.mk *)\",\"Bash(make CFLAGS=* "
                                 "*)\",\"Bash(make -C sub)\"]}";
    static const vcase s[] = {
        {"make -f build.mk all", "ran"},
        {"make -f build.mk --eval=x", "pending"},
        {"make -f build.mk -f /dev/stdin", "pending"}, /* the rule spells one -f */
        {"make CFLAGS=-O2 all", "ran"},
        {"make CFLAGS=-O2 SHELL=/tmp/x", "pending"},
        {"make -C sub", "ran"}, /* no wildcard: the rule names its arguments */
        {"make -C other", "pending"},
    };
    RUN("make spelled", spelled, s);
    /* deny rules still apply; a bare Bash rule covers everything */
    T_EQ_STR(verdict("{\"allow\":[\"Bash(make *)\"],\"deny\":[\"Bash(make --eval*)\"]}",
                     "make --eval=x", NULL, 0),
             "deny", "deny still applies");
    T_EQ_STR(verdict("{\"allow\":[\"Bash\"]}", "make -f /dev/stdin", NULL, 0), "ran",
             "a bare Bash rule");
    char why[1024];
    T_EQ_STR(verdict("{\"allow\":[\"Bash(make *)\"]}", "make -f /dev/stdin <<<'all:;id'", why,
                     sizeof why),
             "pending", "make -f asks");
    T_EQ_STR(why,
             "`make -f /dev/stdin` runs code, or writes or reads a file, that its arguments "
             "choose (-f/--file/--makefile: the makefile it names runs its recipes), which "
             "an allow rule with a wildcard covers only when it spells that option",
             "the reason names the option");
    T_EQ_STR(verdict("{\"allow\":[\"Bash(make *)\"]}", "make SHELL=/tmp/x", why, sizeof why),
             "pending", "make SHELL= asks");
    T_EQ_STR(why,
             "`make SHELL=/tmp/x` runs code, or writes or reads a file, that its arguments choose "
             "(a NAME=value argument sets a make variable, which recipes run (SHELL=, CC=, "
             "$(shell ...))), which an allow rule with a wildcard covers only when it spells "
             "that option",
             "the reason names the variable form");
}

static void test_ssh(void)
{
    static const vcase c[] = {
        {"ssh -o ProxyCommand='id' host", "pending"},
        {"ssh -oProxyCommand=id host", "pending"},
        {"ssh -o 'ProxyCommand id' host", "pending"},
        {"ssh host -o ProxyCommand=id", "pending"},
        {"ssh -o LocalCommand=id -o PermitLocalCommand=yes host", "pending"},
        {"ssh -F evil.cfg host", "pending"},
        {"ssh -o KnownHostsCommand=id host", "pending"},
        {"ssh host id", "pending"},
        {"ssh -p 22 host uptime", "pending"},
        {"scp -S ./evil a host:b", "pending"},
        {"ssh host", "ran"},
        {"ssh -p 2222 user@host", "ran"},
        {"ssh -o ConnectTimeout=5 host", "ran"},
    };
    RUN("ssh *", "{\"allow\":[\"Bash(ssh *)\",\"Bash(scp *)\"]}", c);
    static const char *spelled =
        "{\"allow\":[\"Bash(ssh -o ProxyCommand=* *)\",\"Bash(ssh host uptime)\","
        "\"Bash(ssh box *)\"]}";
    static const vcase s[] = {
        {"ssh -o ProxyCommand=x host", "ran"},
        {"ssh -o ProxyCommand=x -o LocalCommand=y host", "pending"},
        {"ssh host uptime", "ran"},
        {"ssh box uptime", "pending"}, /* a wildcard does not stand for a remote command */
        {"ssh box", "ran"},
    };
    RUN("ssh spelled", spelled, s);
    char why[1024];
    T_EQ_STR(verdict(spelled, "ssh box uptime", why, sizeof why), "pending", "remote command");
    T_EQ_STR(why,
             "`ssh box uptime` runs code, or writes or reads a file, that its arguments choose "
             "(runs a command on the remote host), which an allow rule with a wildcard covers "
             "only when it spells that option",
             "the reason says it runs a remote command");
    T_EQ_STR(verdict("{\"allow\":[\"Bash(ssh *)\"]}", "ssh -o \"$O\" host", why, sizeof why),
             "pending", "a dynamic option");
    T_EQ_STR(why,
             "`ssh -o $O host` runs code, or writes or reads a file, that its arguments choose "
             "(an argument only known when it runs may be such an option), which an allow rule "
             "with a wildcard covers only when it spells that option",
             "the reason says the option is not known");
}

static void test_programs(void)
{
    static const char *rules =
        "{\"allow\":[\"Bash(sort *)\",\"Bash(sed *)\",\"Bash(awk *)\",\"Bash(gawk *)\","
        "\"Bash(tar *)\",\"Bash(rg *)\",\"Bash(less *)\",\"Bash(git *)\",\"Bash(find *)\","
        "\"Bash(zip *)\",\"Bash(rsync *)\",\"Bash(man *)\",\"Bash(vim *)\",\"Bash(curl *)\","
        "\"Bash(python3 *)\",\"Bash(node *)\"]}";
    static const vcase c[] = {
        {"sort --compress-program=./x f", "pending"},
        {"sort -o out f", "pending"},
        {"sed '1e id' f", "pending"},
        {"sed 's/x/id/e' f", "pending"},
        {"sed -e p -e '1e id' f", "pending"},
        {"sed --expression='1e id' f", "pending"},
        {"sed -n '/x/w out' f", "pending"},
        {"sed 'r /etc/passwd' f", "pending"},
        {"tar -xf a.tar --to-command=id", "pending"},
        {"tar -I ./evil -xf a.tar", "pending"},
        {"tar -cf a.tar --use-compress-program=./evil d", "pending"},
        {"tar -cf a.tar --checkpoint=1 --checkpoint-action=exec=id d", "pending"},
        {"tar xIf ./evil a.tar", "pending"},
        {"awk 'BEGIN{system(\"id\")}'", "pending"},
        {"awk '{print | \"sh\"}' f", "pending"},
        {"awk 'BEGIN{\"id\" | getline x}'", "pending"},
        {"awk '{print > \"out\"}' f", "pending"},
        {"gawk -e 'BEGIN{system(\"id\")}'", "pending"},
        {"rg --pre ./x pat", "pending"},
        {"less +'!id' f", "pending"},
        {"LESSOPEN='|id %s' less f", "pending"},
        {"LESS='+!id' less f", "pending"},
        {"git diff --ext-diff", "pending"},
        {"git log --output=f", "pending"},
        {"git -c core.pager=id log", "pending"},
        {"git -c core.fsmonitor=id status", "pending"},
        {"git rebase -x id main", "pending"},
        {"find . -fprintf /tmp/x %p", "pending"},
        {"find . -fprint /tmp/x", "pending"},
        {"find . -fls /tmp/x", "pending"},
        {"find . -name x.o -delete", "pending"},
        {"zip -T -TT ./x a.zip f", "pending"},
        {"rsync -e ./x a host:b", "pending"},
        {"rsync --rsh=./x a host:b", "pending"},
        {"man -P ./x ls", "pending"},
        {"man --pager=./x ls", "pending"},
        {"vim -c '!id' f", "pending"},
        {"vim +'!id' f", "pending"},
        {"curl -o /tmp/x https://e.com", "pending"},
        /* the same programs without such options */
        {"sort -r f", "ran"},
        {"sed -n 1p f", "ran"},
        {"sed -i 's/a/b/' f", "ran"},
        {"awk '{print $1}' f", "ran"},
        {"awk '$3 > 100' f", "ran"},
        {"tar -czf a.tgz src", "ran"},
        {"rg -n TODO src", "ran"},
        {"less f", "ran"},
        {"git status", "ran"},
        {"git log --oneline -3", "ran"},
        {"git push -u origin main", "ran"},
        {"find src -name '*.c'", "ran"},
        {"zip -r a.zip d", "ran"},
        {"rsync -av a/ b/", "ran"},
        {"man ls", "ran"},
        {"vim f", "ran"},
        {"curl -fsSL https://e.com", "ran"},
        /* an interpreter's rule already runs any code: -c and -e are its own */
        {"python3 -c 'print(1)'", "ran"},
        {"node -e 'console.log(1)'", "ran"},
    };
    RUN("programs", rules, c);
    static const char *spelled =
        "{\"allow\":[\"Bash(git diff --ext-diff *)\",\"Bash(git -c color.ui=always *)\","
        "\"Bash(sudo *)\",\"Bash(sort *)\",\"Bash(make -f *)\"]}";
    static const vcase s[] = {
        {"git diff --ext-diff HEAD", "ran"},
        {"git -c color.ui=always log", "ran"},
        {"git -c color.ui=always -c core.pager=id log", "pending"},
        {"sudo sort -o /etc/x f", "pending"}, /* neither stage's rule spells -o */
        {"sudo make -f build.mk", "pending"}, /* Bash(make -f *) alone: sudo not covered */
    };
    RUN("programs spelled", spelled, s);
    static const char *sudo = "{\"allow\":[\"Bash(sudo make -f *)\",\"Bash(make -f *)\"]}";
    T_EQ_STR(verdict(sudo, "sudo make -f build.mk", NULL, 0), "ran",
             "a sudo rule spells the options of the command it runs");
    T_EQ_STR(verdict(sudo, "sudo make -f build.mk --eval=x", NULL, 0), "pending", "but only those");
}

/* Approving such a command for the session stores the exact command: a
 * wildcard rule (Bash(make *)) would not cover it the next time. */
static void test_session_rule(void)
{
    agt_registry *reg = make_chat_registry();
    agt_session *s = NULL;
    agt_session_new(&s, reg, ws_root);
    const char *rules = "{\"allow\":[\"Bash(make *)\"]}";
    agt_session_load_rules(s, rules, strlen(rules));
    const char *args = "{\"command\":\"make -f build.mk --eval=x all\"}";
    agt_result *r = NULL;
    T_EQ_INT(agt_session_dispatch(s, "s1", "Bash", args, &r), AGT_EPENDING, "it asks");
    char *pj = NULL;
    agt_session_pending(s, &pj);
    T_CHECK(pj != NULL &&
                strstr(pj, "\"suggested_rule\":\"Bash(make -f build.mk --eval=x all)\"") != NULL,
            "the suggested rule is the exact command: %s", pj ? pj : "(null)");
    agt_free(pj);
    T_EQ_INT(agt_session_answer(s, "s1", AGT_DECISION_APPROVE_SESSION, NULL, &r), AGT_OK,
             "approved for the session");
    agt_result_free(r);
    r = NULL;
    T_EQ_STR(outcome(s, "Bash", args), "ran", "the same command then runs");
    T_EQ_STR(outcome(s, "Bash", "{\"command\":\"make -f build.mk --eval=y all\"}"), "pending",
             "another --eval still asks");
    agt_session_free(s);
    agt_registry_free(reg);
}

int main(void)
{
    make_workspace();
    test_make();
    test_ssh();
    test_programs();
    test_session_rule();
    remove_tree(ws_root);
    return t_done();
}
