/* Internal review state of a session (lib/session/review.c): the change set
 * under review, the relocation callback to forward to its diff, the file
 * under review, the current turn's thinking, the stored comments and the
 * task_done flag. The review providers (lib/tools/review_*.c) use it. */
#ifndef AGT_LIB_SESSION_REVIEW_INTERNAL_H
#define AGT_LIB_SESSION_REVIEW_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>

#include "agenttools/git.h"
#include "agenttools/session.h"

/* Most comments a session stores: far more than any review needs, and a
 * bound on what a looping model can pile up. */
#define AGTI_REVIEW_MAX_COMMENTS 2000

typedef struct agti_review {
    agt_changes *changes;
    bool owned; /* free changes with the session */
    agt_diff_relocate_fn reloc;
    int reloc_max;
    void *reloc_payload;
    char *file;     /* file under review, or NULL */
    char *thinking; /* the current turn's reasoning, or NULL */
    json_t *comments;
    bool done;
    bool failed;
} agti_review;

/* The session's review state, created on first use; NULL on OOM. */
agti_review *agti_session_review(agt_session *s);
void agti_review_free(agti_review *r);

/* The change set under review; opens AGT_CHANGES_WORKSPACE at the session
 * root when none is set. Returns the codes of agt_changes_open(). */
int agti_review_changes(agt_session *s, agt_changes **out);

/* Save/restore section "comments" (save.c). */
int agti_review_section_save(const agt_session *s, json_t **value);
int agti_review_section_load(agt_session *s, json_t *value, void **tmp);
void agti_review_section_commit(agt_session *s, void *tmp);
void agti_review_section_discard(void *tmp);

#endif
