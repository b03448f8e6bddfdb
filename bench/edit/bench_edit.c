/*
 * Edit benchmark: one replacement in a 10 MB text file through the Edit
 * tool (agt_session_dispatch: resolve, load, match, atomic write) against
 * GNU `patch -p1` applying the same change as a unified diff, the tool a
 * user would pick instead. Both results are compared byte for byte first;
 * then 11 alternating runs each, medians, and the ratio. A second round does
 * the same with the ladder (old_string with its indentation changed to
 * tabs), against the same patch.
 * Usage: bench-edit [workdir] (default: a mkdtemp dir under TMPDIR).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agenttools/agenttools.h"
#include "bench_util.h"

#define RUNS 11
#define TARGET 200000

static void line(char *out, size_t cap, size_t no)
{
    snprintf(out, cap, "    value_%07zu = compute(%zu, \"some text\");\n", no, no * 7);
}

int main(int argc, char **argv)
{
    char dir[512];
    if (work_dir(dir, sizeof dir, argc, argv, "edit") != 0)
        return 1;
    /* The 10 MB file: numbered, indented lines. */
    size_t cap = 11u << 20, len = 0, nlines = 0;
    char *orig = malloc(cap), l[128];
    while (len < (10u << 20)) {
        line(l, sizeof l, ++nlines);
        size_t n = strlen(l);
        memcpy(orig + len, l, n);
        len += n;
    }
    char path[600], diff[600], cmd[1400];
    snprintf(path, sizeof path, "%s/big.txt", dir);
    snprintf(diff, sizeof diff, "%s/change.diff", dir);
    /* The change: line TARGET replaced; the diff with 3 lines of context. */
    char old_line[128], new_line[128];
    line(old_line, sizeof old_line, TARGET);
    snprintf(new_line, sizeof new_line, "    value_%07d = compute(0, \"changed\");\n", TARGET);
    FILE *df = fopen(diff, "w");
    fprintf(df, "--- a/big.txt\n+++ b/big.txt\n@@ -%d,7 +%d,7 @@\n", TARGET - 3, TARGET - 3);
    for (int k = -3; k <= 3; k++) {
        line(l, sizeof l, (size_t)(TARGET + k));
        if (k == 0)
            fprintf(df, "-%s+%s", l, new_line);
        else
            fprintf(df, " %s", l);
    }
    fclose(df);

    agt_registry *reg = NULL;
    agt_session *s = NULL;
    if (agt_registry_new(&reg) != AGT_OK || agt_registry_load_builtin(reg, "chat") != AGT_OK)
        return 1;
    char args[1024];
    char old_tabs[128];
    snprintf(old_tabs, sizeof old_tabs, "\\t%s", old_line + 4);
    old_tabs[strlen(old_tabs) - 1] = '\0';
    const char *olds[2] = {old_line, old_tabs};
    const char *names[2] = {"exact match", "ladder (indentation)"};
    for (int round = 0; round < 2; round++) {
        char o[128], nw[128];
        snprintf(o, sizeof o, "%s", olds[round]);
        if (round == 0)
            snprintf(nw, sizeof nw, "%s", new_line);
        else
            snprintf(nw, sizeof nw, "\\t%s", new_line + 4);
        o[strcspn(o, "\n")] = '\0';
        nw[strcspn(nw, "\n")] = '\0';
        /* old_tabs is already escaped for JSON; the others have no quotes
         * needing more than \" */
        char oe[256], ne[256];
        size_t a = 0, b = 0;
        for (const char *p = o; *p; p++) {
            if (*p == '"')
                oe[a++] = '\\';
            oe[a++] = *p;
        }
        oe[a] = '\0';
        for (const char *p = nw; *p; p++) {
            if (*p == '"')
                ne[b++] = '\\';
            ne[b++] = *p;
        }
        ne[b] = '\0';
        snprintf(args, sizeof args,
                 "{\"path\":\"big.txt\",\"old_string\":\"%s\",\"new_string\":\"%s\"}", oe, ne);
        double te[RUNS], tp[RUNS];
        char *want = NULL;
        size_t wl = 0;
        for (int r = 0; r < RUNS; r++) {
            put("bench-edit", path, orig, len);
            if (fresh_session(&s, reg, dir) != 0)
                return 1;
            double t0 = now_s();
            agt_result *res = NULL;
            if (agt_session_dispatch(s, "c", "Edit", args, &res) != AGT_OK ||
                agt_result_is_error(res)) {
                fprintf(stderr, "bench-edit: Edit failed: %s\n",
                        res ? agt_result_text(res) : agt_error_message());
                return 1;
            }
            te[r] = now_s() - t0;
            agt_result_free(res);
            size_t el;
            char *got_e = get(path, &el);
            put("bench-edit", path, orig, len);
            snprintf(cmd, sizeof cmd, "patch -p1 -s -d '%s' < '%s'", dir, diff);
            t0 = now_s();
            if (system(cmd) != 0) {
                fprintf(stderr, "bench-edit: patch failed\n");
                return 1;
            }
            tp[r] = now_s() - t0;
            size_t pl;
            char *got_p = get(path, &pl);
            if (r == 0) {
                if (got_e == NULL || got_p == NULL || el != pl || memcmp(got_e, got_p, el) != 0) {
                    fprintf(stderr, "bench-edit: Edit and patch disagree (%s)\n", names[round]);
                    return 1;
                }
                want = got_p;
                wl = pl;
                got_p = NULL;
            } else if (el != wl || memcmp(got_e, want, wl) != 0) {
                fprintf(stderr, "bench-edit: run %d differs\n", r);
                return 1;
            }
            free(got_e);
            free(got_p);
        }
        free(want);
        double me = median(te, RUNS), mp = median(tp, RUNS);
        printf("Edit on a %.1f MB file, %s: Edit %.2f ms, patch -p1 %.2f ms (medians of %d), "
               "ratio Edit/patch %.2f\n",
               (double)len / 1e6, names[round], me * 1e3, mp * 1e3, RUNS, me / mp);
    }
    agt_session_free(s);
    agt_registry_free(reg);
    free(orig);
    unlink(path);
    unlink(diff);
    if (argc <= 1)
        rmdir(dir);
    return 0;
}
