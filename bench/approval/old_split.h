/* The old Bash command splitter, for comparison in bench-approval only. */
#ifndef AGT_BENCH_OLD_SPLIT_H
#define AGT_BENCH_OLD_SPLIT_H

#include <jansson.h>
#include <stdbool.h>

json_t *bench_old_split(const char *cmd);
bool bench_old_redirects_to_file(const char *cmd);

#endif
