/*
 * libFuzzer target for session documents: agt_session_restore() of
 * arbitrary bytes into a new session.
 * Invariants: all or nothing (a refused document leaves the session's saved
 * state exactly as before, with an error message); an accepted one saves
 * to a document that restores into another session and saves the same
 * again; no tool runs.
 */
#include <stdint.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536)
        return 0;
    agt_session *s = NULL, *t = NULL;
    if (agt_session_new(&s, fz_registry(), fz_workspace()) != AGT_OK)
        abort();
    char *before = NULL, *after = NULL, *again = NULL;
    if (agt_session_save(s, &before) != AGT_OK)
        abort();
    int rc = agt_session_restore(s, (const char *)data, size);
    if (agt_session_save(s, &after) != AGT_OK)
        abort();
    if (rc != AGT_OK) {
        if (rc == AGT_OK || strcmp(before, after) != 0 || !*agt_error_message()) {
            fprintf(stderr, "refused (%s) but changed:\n%s\n%s\n", agt_error_message(), before,
                    after);
            abort();
        }
    } else {
        if (agt_session_new(&t, fz_registry(), fz_workspace()) != AGT_OK)
            abort();
        if (agt_session_restore(t, after, strlen(after)) != AGT_OK) {
            fprintf(stderr, "saved document refused: %s\n%s\n", agt_error_message(), after);
            abort();
        }
        if (agt_session_save(t, &again) != AGT_OK)
            abort();
        if (strcmp(after, again) != 0) {
            fprintf(stderr, "save/restore/save differs:\n%s\n%s\n", after, again);
            abort();
        }
        agt_session_free(t);
    }
    agt_free(before);
    agt_free(after);
    agt_free(again);
    agt_session_free(s);
    return 0;
}
