/*
 * agt-review built without the model client (lib/model absent from this
 * tree): only the preview is available.
 */
#include "review.h"

#include <stdio.h>

int rv_review(rv_set *set, const rv_opts *o, int64_t *elapsed_ms, char *err, size_t errlen)
{
    (void)set;
    (void)o;
    *elapsed_ms = 0;
    snprintf(err, errlen, "this build of libagenttools has no model client; use --preview");
    return -1;
}

int rv_print_results(const rv_set *set, const rv_opts *o, int64_t elapsed_ms)
{
    (void)elapsed_ms;
    return rv_print_preview(set, o);
}
