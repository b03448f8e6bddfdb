/*
 * apply_patch benchmark: 100 hunks across 10 files of 2,000 lines each,
 * through the apply_patch tool (agt_session_dispatch: parse, resolve and
 * load every file, locate every hunk, one all-or-nothing commit) against
 * GNU `patch -p1` applying the same changes as a unified diff (3 lines of
 * context per hunk in both), the tool a user would pick instead. The two
 * resulting trees are compared byte for byte first; then 11 alternating
 * runs each (the tree rewritten before every run, not timed), medians, and
 * the ratio.
 * Usage: bench-apply-patch [workdir] (default: a mkdtemp dir under TMPDIR).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agenttools/agenttools.h"
#include "bench_util.h"
#include "core/core.h"

#define RUNS 11
#define FILES 10
#define LINES 2000
#define HUNKS_PER_FILE 10

static void line(char *out, size_t cap, int file, int no)
{
    snprintf(out, cap, "    total_%d_%04d = add(total_%d_%04d, %d);\n", file, no, file,
             no > 1 ? no - 1 : no, no * 3);
}

/* The tree, written fresh. */
static void write_tree(const char *dir, char **orig, size_t *olen)
{
    char p[700];
    for (int f = 0; f < FILES; f++) {
        snprintf(p, sizeof p, "%s/src/f%d.c", dir, f);
        put("bench-apply-patch", p, orig[f], olen[f]);
    }
}

int main(int argc, char **argv)
{
    char dir[512];
    if (work_dir(dir, sizeof dir, argc, argv, "patch") != 0)
        return 1;
    char p[700], l[160], diff[700], cmd[1600];
    snprintf(p, sizeof p, "%s/src", dir);
    if (mkdir(p, 0755) != 0)
        return 1;
    char *orig[FILES];
    size_t olen[FILES];
    agti_buf cp = AGTI_BUF_INIT, ud = AGTI_BUF_INIT;
    agti_buf_puts(&cp, "*** Begin Patch\n");
    for (int f = 0; f < FILES; f++) {
        agti_buf b = AGTI_BUF_INIT;
        for (int n = 1; n <= LINES; n++) {
            line(l, sizeof l, f, n);
            agti_buf_puts(&b, l);
        }
        olen[f] = b.len;
        orig[f] = agti_buf_detach(&b);
        agti_buf_printf(&cp, "*** Update File: src/f%d.c\n", f);
        agti_buf_printf(&ud, "--- a/src/f%d.c\n+++ b/src/f%d.c\n", f, f);
        for (int h = 0; h < HUNKS_PER_FILE; h++) {
            int at = 100 + h * (LINES - 200) / HUNKS_PER_FILE; /* the line changed */
            agti_buf_puts(&cp, "@@\n");
            /* the new file has one more line per earlier hunk */
            agti_buf_printf(&ud, "@@ -%d,7 +%d,8 @@\n", at - 3, at - 3 + h);
            for (int k = -3; k <= 3; k++) {
                line(l, sizeof l, f, at + k);
                if (k == 0) {
                    agti_buf_printf(&cp, "-%s", l);
                    agti_buf_printf(&ud, "-%s", l);
                    agti_buf_printf(&cp, "+    total_%d_%04d = 0;\n+    check(%d);\n", f, at, at);
                    agti_buf_printf(&ud, "+    total_%d_%04d = 0;\n+    check(%d);\n", f, at, at);
                } else {
                    agti_buf_printf(&cp, " %s", l);
                    agti_buf_printf(&ud, " %s", l);
                }
            }
        }
    }
    agti_buf_puts(&cp, "*** End Patch\n");
    snprintf(diff, sizeof diff, "%s/change.diff", dir);
    put("bench-apply-patch", diff, ud.ptr, ud.len);
    json_t *a = json_pack("{s:s}", "input", cp.ptr);
    char *args = json_dumps(a, JSON_COMPACT);
    json_decref(a);

    agt_registry *reg = NULL;
    agt_session *s = NULL;
    if (agt_registry_new(&reg) != AGT_OK || agt_registry_load_builtin(reg, "chat") != AGT_OK)
        return 1;
    double ta[RUNS], tp[RUNS];
    char *want[FILES] = {0};
    size_t wl[FILES] = {0};
    for (int r = 0; r < RUNS; r++) {
        write_tree(dir, orig, olen);
        if (fresh_session(&s, reg, dir) != 0)
            return 1;
        double t0 = now_s();
        agt_result *res = NULL;
        if (agt_session_dispatch(s, "c", "apply_patch", args, &res) != AGT_OK ||
            agt_result_is_error(res)) {
            fprintf(stderr, "bench-apply-patch: apply_patch failed: %s\n",
                    res ? agt_result_text(res) : agt_error_message());
            return 1;
        }
        ta[r] = now_s() - t0;
        agt_result_free(res);
        char *got_a[FILES];
        size_t al[FILES];
        for (int f = 0; f < FILES; f++) {
            snprintf(p, sizeof p, "%s/src/f%d.c", dir, f);
            got_a[f] = get(p, &al[f]);
        }
        write_tree(dir, orig, olen);
        snprintf(cmd, sizeof cmd, "patch -p1 -s -d '%s' < '%s'", dir, diff);
        t0 = now_s();
        if (system(cmd) != 0) {
            fprintf(stderr, "bench-apply-patch: patch failed\n");
            return 1;
        }
        tp[r] = now_s() - t0;
        for (int f = 0; f < FILES; f++) {
            snprintf(p, sizeof p, "%s/src/f%d.c", dir, f);
            size_t pl;
            char *got_p = get(p, &pl);
            if (r == 0) {
                if (got_a[f] == NULL || got_p == NULL || al[f] != pl ||
                    memcmp(got_a[f], got_p, pl) != 0 || pl == olen[f]) {
                    fprintf(stderr, "bench-apply-patch: apply_patch and patch disagree on f%d.c\n",
                            f);
                    return 1;
                }
                want[f] = got_p;
                wl[f] = pl;
                got_p = NULL;
            } else if (al[f] != wl[f] || memcmp(got_a[f], want[f], wl[f]) != 0) {
                fprintf(stderr, "bench-apply-patch: run %d differs on f%d.c\n", r, f);
                return 1;
            }
            free(got_p);
            free(got_a[f]);
        }
    }
    double ma = median(ta, RUNS), mp = median(tp, RUNS);
    printf("apply_patch, %d hunks across %d files of %d lines: apply_patch %.2f ms, patch -p1 "
           "%.2f ms (medians of %d, outputs identical), ratio apply_patch/patch %.2f\n",
           FILES * HUNKS_PER_FILE, FILES, LINES, ma * 1e3, mp * 1e3, RUNS, ma / mp);
    agt_session_free(s);
    agt_registry_free(reg);
    for (int f = 0; f < FILES; f++) {
        free(orig[f]);
        free(want[f]);
        snprintf(p, sizeof p, "%s/src/f%d.c", dir, f);
        unlink(p);
    }
    snprintf(p, sizeof p, "%s/src", dir);
    rmdir(p);
    unlink(diff);
    if (argc <= 1)
        rmdir(dir);
    free(args);
    agti_buf_free(&cp);
    agti_buf_free(&ud);
    return 0;
}
