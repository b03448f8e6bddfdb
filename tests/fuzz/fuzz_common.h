/*
 * Shared set-up of the fuzz targets that need a session: a workspace folder
 * made once per process (removed at exit), and the chat tool set with a
 * provider on every tool that aborts, since no document a target reads may
 * make a tool run.
 */
#ifndef AGT_FUZZ_COMMON_H
#define AGT_FUZZ_COMMON_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agenttools/agenttools.h"

static char fz_root[PATH_MAX];

static inline int fz_never_runs(agt_call *call, void *payload)
{
    (void)payload;
    fprintf(stderr, "fuzz: tool %s ran (%s)\n", agt_call_tool(call), agt_call_args(call));
    abort();
}

static inline void fz_remove_root(void)
{
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fz_root);
    if (fz_root[0] == '/' && system(cmd) != 0)
        fprintf(stderr, "fuzz: could not remove %s\n", fz_root);
}

/* The workspace root, created on the first call. */
static inline const char *fz_workspace(void)
{
    if (fz_root[0] == '\0') {
        char tmpl[] = "/tmp/agt-fuzz-XXXXXX";
        if (mkdtemp(tmpl) == NULL || realpath(tmpl, fz_root) == NULL) {
            perror("fuzz: workspace");
            abort();
        }
        atexit(fz_remove_root);
    }
    return fz_root;
}

/* The chat set with the never-running provider on every tool (frozen). */
static inline agt_registry *fz_registry(void)
{
    static agt_registry *reg;
    if (reg == NULL) {
        if (agt_registry_new(&reg) != AGT_OK || agt_registry_load_builtin(reg, "chat") != AGT_OK)
            abort();
        for (size_t i = 0; i < agt_registry_count(reg); i++)
            agt_registry_set_provider(reg, agt_registry_name_at(reg, i), fz_never_runs, NULL);
        agt_registry_freeze(reg);
    }
    return reg;
}

/* A NUL-terminated copy of the input (NULL when out of memory). */
static inline char *fz_cstr(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (s != NULL) {
        memcpy(s, data, size);
        s[size] = '\0';
    }
    return s;
}

#endif
