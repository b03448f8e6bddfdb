/* The old Bash command splitter: what the naive linear-scan baseline of
 * bench-approval splits a command with. */
#ifndef AGT_BENCH_OLD_SPLIT_H
#define AGT_BENCH_OLD_SPLIT_H

#include <jansson.h>
#include <stdbool.h>

json_t *bench_old_split(const char *cmd);

#endif
