/*
 * The exports of the built-in sets, byte for byte, against files written by
 * the build of main before the registry loaded its catalogue lazily (issue
 * 19): loading must not change what a model is shown. The files live in
 * tests/unit/registry/exports/ as <sets>-<format>-<phase>.json. Run with
 * "--write DIR" to write them (only to regenerate after a deliberate change
 * of the catalogue or of an export format).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#include "agenttools/common.h"
#include "agenttools/registry.h"

/* "chat" alone is within "review+chat". Every built-in entry has
 * "main_task": true, so the "main" exports are compared with the "all" files. */
static const char *const setlists[][3] = {{"review", NULL}, {"review", "chat", NULL}};
static const char *const setnames[] = {"review", "review+chat"};
static const char *const formats[] = {"openai", "anthropic", "mcp", "native"};
static const char *const phases[] = {"all", "plan", "all"};
static const int phase_ids[] = {AGT_PHASE_ALL, AGT_PHASE_PLAN, AGT_PHASE_MAIN};

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    size_t r;
    while (buf != NULL && (r = fread(buf + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) {
            char *nb = realloc(buf, cap *= 2);
            if (nb == NULL)
                free(buf);
            buf = nb;
        }
    }
    fclose(f);
    *len = n;
    return buf;
}

int main(int argc, char **argv)
{
    const char *write_dir = argc == 3 && strcmp(argv[1], "--write") == 0 ? argv[2] : NULL;
    const char *src = getenv("AGT_SOURCE_DIR");
    if (write_dir == NULL && src == NULL) {
        T_CHECK(0, "AGT_SOURCE_DIR is set");
        return t_done();
    }
    for (size_t s = 0; s < sizeof setnames / sizeof *setnames; s++) {
        agt_registry *reg = NULL;
        int rc = agt_registry_new(&reg);
        for (size_t k = 0; rc == AGT_OK && setlists[s][k] != NULL; k++)
            rc = agt_registry_load_builtin(reg, setlists[s][k]);
        T_EQ_INT(rc, AGT_OK, "%s: loaded", setnames[s]);
        for (size_t f = 0; rc == AGT_OK && f < sizeof formats / sizeof *formats; f++)
            for (size_t p = 0; p < sizeof phases / sizeof *phases; p++) {
                char path[4096];
                snprintf(path, sizeof path, "%s/%s%s-%s-%s.json", write_dir ? write_dir : src,
                         write_dir ? "" : "tests/unit/registry/exports/", setnames[s], formats[f],
                         phases[p]);
                char *out = NULL;
                int erc = agt_registry_export(reg, formats[f], phase_ids[p], &out);
                if (write_dir != NULL) {
                    FILE *w = fopen(path, "wb");
                    if (erc != AGT_OK || w == NULL || fputs(out, w) < 0 || fclose(w) != 0) {
                        fprintf(stderr, "cannot write %s\n", path);
                        return 1;
                    }
                    agt_free(out);
                    continue;
                }
                size_t len = 0;
                char *want = slurp(path, &len);
                T_CHECK(erc == AGT_OK && want != NULL && out != NULL && strlen(out) == len &&
                            memcmp(out, want, len) == 0,
                        "%s %s phase %d: export equals %s", setnames[s], formats[f], phase_ids[p],
                        path);
                free(want);
                agt_free(out);
            }
        agt_registry_free(reg);
    }
    return write_dir ? 0 : t_done();
}
