/*
 * libFuzzer target for the approval rule parser (agti_rule_parse) and its
 * matcher. Input: lines; the first is a rule such as "Bash(git log *)" or
 * an Edit rule with a path glob, the others are subjects (a command, a
 * path, a pattern),
 * matched with the rule's own tool and subject kind; every line is also
 * split as a shell command (agti_command_split).
 * Invariants: an accepted rule's text parses again to the same tool,
 * pattern and subject; a refused one sets a message; a subject the rule
 * matches is matched the same way by a ruleset holding only that rule
 * and by one holding it after a rule of another tool.
 */
#include <jansson.h>
#include <stdint.h>

#include "fuzz_common.h"
#include "session/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool streq0(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 8192)
        return 0;
    char *s = fz_cstr(data, size);
    if (s == NULL)
        return 0;
    const char *root = "/nonexistent-agt-fuzz/ws";
    char *nl = strchr(s, '\n');
    if (nl != NULL)
        *nl = '\0';
    int kind = size && (data[size - 1] & 3) < 3 ? (int)(data[size - 1] & 3) : AGT_RULE_ALLOW;
    agti_rule *r = NULL;
    int rc = agti_rule_parse(s, kind, root, &r);
    agti_ruleset one = {0}, two = {0};
    if (rc != AGT_OK) {
        if (r != NULL || !*agt_error_message())
            abort();
    } else {
        agti_rule *again = NULL;
        if (agti_rule_parse(r->text, kind, root, &again) != AGT_OK) {
            fprintf(stderr, "rule text %s refused: %s\n", r->text, agt_error_message());
            abort();
        }
        if (!streq0(r->tool, again->tool) || !streq0(r->pattern, again->pattern) ||
            r->subject != again->subject || r->abs != again->abs)
            abort();
        agti_rule *other = NULL;
        const char *other_text = strcmp(r->tool, "TodoWrite") != 0 ? "TodoWrite" : "Read";
        if (agti_rule_parse(other_text, AGT_RULE_DENY, root, &other) != AGT_OK)
            abort();
        agti_ruleset_add(&two, other);
        agti_ruleset_add(&two, again);
        agti_ruleset_add(&one, r);
    }
    for (char *line = nl ? nl + 1 : NULL; line != NULL;) {
        char *next = strchr(line, '\n');
        if (next != NULL)
            *next++ = '\0';
        /* the line as a Bash command decided by both rule sets: one deny
         * rule more cannot turn a deny into an allow */
        agti_verdict v1, v2; /* agti_bash_evaluate fills but does not clear them */
        memset(&v1, 0, sizeof v1);
        memset(&v2, 0, sizeof v2);
        int e1 = agti_bash_evaluate(&one, NULL, line, &v1);
        int e2 = agti_bash_evaluate(&two, NULL, line, &v2);
        if ((e1 != AGT_OK && e1 != AGT_ENOMEM) || (e2 != AGT_OK && e2 != AGT_ENOMEM))
            abort();
        if (e1 == AGT_OK && e2 == AGT_OK && agti_verdict_details(&v1) == AGT_ENOMEM)
            e1 = AGT_ENOMEM;
        if (e1 == AGT_OK && e2 == AGT_OK && v1.kind == AGT_RULE_DENY && v2.kind != AGT_RULE_DENY)
            abort();
        agti_verdict_clear(&v1);
        agti_verdict_clear(&v2);
        if (rc == AGT_OK) {
            const agti_rule *r1 = one.rules[0];
            const char *text = line, *abs = NULL;
            char *rel = NULL, *absbuf = NULL;
            if (r1->subject == AGTI_SUBJ_PATH) {
                if (agti_policy_path(root, line, &rel, &absbuf) != AGT_OK) {
                    line = next;
                    continue;
                }
                text = rel;
                abs = absbuf;
            }
            const agti_rule *h1 = NULL, *h2 = NULL;
            agti_ruleset_match(&one, r1->tool, r1->subject, text, abs, &h1);
            agti_ruleset_match(&two, r1->tool, r1->subject, text, abs, &h2);
            if ((h1 != NULL) != (h2 != NULL))
                abort();
            free(rel);
            free(absbuf);
        }
        line = next;
    }
    agti_ruleset_clear(&one);
    agti_ruleset_clear(&two);
    free(s);
    return 0;
}
