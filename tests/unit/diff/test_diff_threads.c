/*
 * Anchoring from several threads on one fresh handle: the first
 * agt_diff_anchor builds the line indexes lazily, so 8 threads start
 * together (a barrier) on a handle nobody anchored yet, each runs the same
 * queries in its own order, and every result must equal the one computed
 * on a second handle by one thread. Run it under -Db_sanitize=address (a
 * double build leaks or frees twice) and -Db_sanitize=thread.
 *
 * The diff: NF files fK.c, each one hunk "@@ -1,40 +1,41 @@" whose context
 * lines are "file K line I" (I = 1..40) with "added in K" inserted after
 * line 20. So (worked out from the hunk): "added in K" is new line 21;
 * "file K line 25" is new line 26; "file K line 20 / added in K / file K
 * line 21" is new lines 20-22; "file K line 3" is new line 3.
 */
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agenttools/diff.h"
#include "core/core.h"
#include "harness.h"

#define NF 300
#define NTHREADS 8
#define NQ (NF * 4)

static void make_diff(agti_buf *b)
{
    for (int k = 0; k < NF; k++) {
        agti_buf_printf(b, "diff --git a/f%d.c b/f%d.c\n--- a/f%d.c\n+++ b/f%d.c\n", k, k, k, k);
        agti_buf_puts(b, "@@ -1,40 +1,41 @@\n");
        for (int i = 1; i <= 40; i++) {
            agti_buf_printf(b, " file %d line %d\n", k, i);
            if (i == 20)
                agti_buf_printf(b, "+added in %d\n", k);
        }
    }
}

/* Query q: its path and snippet (static buffers per caller). */
static void query(int q, char *path, size_t pcap, char *snip, size_t scap)
{
    int k = (q / 4) % NF;
    snprintf(path, pcap, "f%d.c", k);
    switch (q % 4) {
    case 0:
        snprintf(snip, scap, "added in %d", k);
        break;
    case 1:
        snprintf(snip, scap, "file %d line 25", k);
        break;
    case 2:
        snprintf(snip, scap, "file %d line 20\nadded in %d\nfile %d line 21", k, k, k);
        break;
    default:
        /* a snippet of another file: found by stage 4 ("moved") */
        snprintf(snip, scap, "file %d line 3", (k + 1) % NF);
        break;
    }
}

static char *ref[NQ];
static char *got[NTHREADS][NQ];
static int failed[NTHREADS];
static agt_diff *shared;
static pthread_barrier_t start;

static void *worker(void *arg)
{
    int t = (int)(size_t)arg;
    pthread_barrier_wait(&start);
    for (int n = 0; n < NQ; n++) {
        /* each thread walks the queries from its own offset */
        int q = (n + t * (NQ / NTHREADS)) % NQ;
        char path[32], snip[128];
        query(q, path, sizeof path, snip, sizeof snip);
        if (agt_diff_anchor(shared, path, snip, &got[t][q]) != AGT_OK)
            failed[t]++;
    }
    return NULL;
}

/* start_line, end_line, path and method of a result, as "path:s-e:method". */
static char *summary(const char *json)
{
    json_t *j = json_loads(json ? json : "", 0, NULL);
    char *s = agti_aprintf("%s:%lld-%lld:%s", json_string_value(json_object_get(j, "path")),
                           (long long)json_integer_value(json_object_get(j, "start_line")),
                           (long long)json_integer_value(json_object_get(j, "end_line")),
                           json_string_value(json_object_get(j, "method")));
    json_decref(j);
    return s;
}

int main(void)
{
    agti_buf text = AGTI_BUF_INIT;
    make_diff(&text);
    agt_diff *single = NULL;
    T_EQ_INT(agt_diff_parse(&single, text.ptr, text.len), AGT_OK, "reference handle parses");
    T_EQ_INT(agt_diff_parse(&shared, text.ptr, text.len), AGT_OK, "shared handle parses");
    for (int q = 0; q < NQ; q++) {
        char path[32], snip[128];
        query(q, path, sizeof path, snip, sizeof snip);
        if (agt_diff_anchor(single, path, snip, &ref[q]) != AGT_OK)
            T_CHECK(0, "reference anchor %d: %s", q, agt_error_message());
    }

    /* The reference itself, checked against the values worked out above. */
    static const char *const want[] = {"f7.c:21-21:hunk_new", "f7.c:26-26:hunk_new",
                                       "f7.c:20-22:hunk_new", "f8.c:3-3:moved"};
    for (int i = 0; i < 4; i++) {
        char *s = summary(ref[7 * 4 + i]);
        T_EQ_STR(s, want[i], "reference query kind %d", i);
        free(s);
    }
    char *s = summary(ref[(NF - 1) * 4 + 3]);
    T_EQ_STR(s, "f0.c:3-3:moved", "reference: the last file's snippet is in f0.c");
    free(s);

    pthread_barrier_init(&start, NULL, NTHREADS);
    pthread_t th[NTHREADS];
    for (int t = 0; t < NTHREADS; t++)
        pthread_create(&th[t], NULL, worker, (void *)(size_t)t);
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(th[t], NULL);
    pthread_barrier_destroy(&start);

    for (int t = 0; t < NTHREADS; t++) {
        int same = 0;
        for (int q = 0; q < NQ; q++)
            same += got[t][q] != NULL && ref[q] != NULL && strcmp(got[t][q], ref[q]) == 0;
        T_EQ_INT(failed[t], 0, "thread %d: every anchor call succeeded", t);
        T_EQ_INT(same, NQ, "thread %d: all %d results equal the single-threaded ones", t, NQ);
    }
    for (int t = 0; t < NTHREADS; t++)
        for (int q = 0; q < NQ; q++)
            agt_free(got[t][q]);
    for (int q = 0; q < NQ; q++)
        agt_free(ref[q]);
    agt_diff_free(shared);
    agt_diff_free(single);
    agti_buf_free(&text);
    return t_done();
}
