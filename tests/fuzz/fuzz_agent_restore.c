/*
 * libFuzzer target for agent documents: agt_agent_restore() of arbitrary
 * bytes into a new agent (host model that is never asked: restoring calls
 * no model and runs no tool).
 * Invariants: all or nothing (a refused document leaves the agent's saved
 * state as before, with an error message); an accepted one saves to a
 * document that restores into another agent and saves the same again.
 */
#include <stdint.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int never_asked(agt_model_reply *reply, const char *request_json, void *payload)
{
    (void)reply;
    (void)payload;
    fprintf(stderr, "fuzz: the model was asked: %s\n", request_json);
    abort();
}

static agt_agent *new_agent(agt_session **s, agt_model *m)
{
    agt_agent *a = NULL;
    if (agt_session_new(s, fz_registry(), fz_workspace()) != AGT_OK ||
        agt_agent_new(&a, *s, m) != AGT_OK)
        abort();
    return a;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static agt_model *m;
    if (size > 65536)
        return 0;
    if (m == NULL && agt_model_new_host(&m, never_asked, NULL) != AGT_OK)
        abort();
    agt_session *s = NULL, *t = NULL;
    agt_agent *a = new_agent(&s, m);
    char *before = NULL, *after = NULL, *again = NULL;
    if (agt_agent_save(a, &before) != AGT_OK)
        abort();
    int rc = agt_agent_restore(a, (const char *)data, size);
    if (agt_agent_save(a, &after) != AGT_OK)
        abort();
    if (rc != AGT_OK) {
        if (strcmp(before, after) != 0 || !*agt_error_message()) {
            fprintf(stderr, "refused (%s) but changed:\n%s\n%s\n", agt_error_message(), before,
                    after);
            abort();
        }
    } else {
        agt_agent *b = new_agent(&t, m);
        if (agt_agent_restore(b, after, strlen(after)) != AGT_OK) {
            fprintf(stderr, "saved document refused: %s\n%s\n", agt_error_message(), after);
            abort();
        }
        if (agt_agent_save(b, &again) != AGT_OK)
            abort();
        if (strcmp(after, again) != 0) {
            fprintf(stderr, "save/restore/save differs:\n%s\n%s\n", after, again);
            abort();
        }
        agt_agent_free(b);
        agt_session_free(t);
    }
    agt_free(before);
    agt_free(after);
    agt_free(again);
    agt_agent_free(a);
    agt_session_free(s);
    return 0;
}
