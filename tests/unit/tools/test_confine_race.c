/* The symlink-swap race of issue 14: a thread swaps a folder inside the
 * workspace with a symlink to a folder outside (renameat2 RENAME_EXCHANGE
 * in a loop) while Read, Write, Edit, Grep and Glob run through
 * agt_session_dispatch. Whatever the timing, nothing may be created or
 * changed outside, and no outside text or name may come back. Run with
 * openat2 and with the component walk (agti_fs_no_openat2). On the code
 * before this test (resolve by name, open by name later) about one call in
 * four escaped: Write created d/new.txt outside, Read returned the outside
 * text. The counts below are fixed; the test has no timed assertion. */
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>

#include "fs/fs.h"
#include "wsfix.h"

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

#define ROUNDS 300

static char out[512];
static atomic_bool stop;
static atomic_long swaps;

static void *swapper(void *arg)
{
    (void)arg;
    char a[1024], b[1024];
    snprintf(a, sizeof a, "%s/d", ws);
    snprintf(b, sizeof b, "%s/L", ws);
    while (!atomic_load(&stop)) {
        if (syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) == 0)
            atomic_fetch_add(&swaps, 1);
    }
    return NULL;
}

/* Names in the outside folder, as one sorted-by-readdir string. */
static void outside_listing(char *buf, size_t n)
{
    buf[0] = '\0';
    DIR *d = opendir(out);
    if (d == NULL)
        return;
    struct dirent *e;
    int count = 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' && (e->d_name[1] == '\0' || strcmp(e->d_name, "..") == 0))
            continue;
        count++;
        strncat(buf, e->d_name, n - strlen(buf) - 2);
        strncat(buf, ",", n - strlen(buf) - 1);
    }
    closedir(d);
    (void)count;
}

static const char *outside_text(void)
{
    static char buf[256];
    char p[600];
    snprintf(p, sizeof p, "%s/f.txt", out);
    FILE *f = fopen(p, "rb");
    buf[0] = '\0';
    if (f) {
        size_t k = fread(buf, 1, sizeof buf - 1, f);
        buf[k] = '\0';
        fclose(f);
    }
    return buf;
}

typedef struct tally {
    long calls, leaked_text, leaked_name, asked;
} tally;

/* A call that saw the outside folder through the link asks (the session is
 * in manual mode: a path outside every folder is an approval matter) and is
 * rejected; every other one runs and must stay inside whatever the timing. */
static void run(agt_session *s, const char *tool, const char *args, tally *t)
{
    agt_result *r = NULL;
    int rc = agt_session_dispatch(s, "c", tool, args, &r);
    if (rc == AGT_EPENDING) {
        t->asked++;
        agt_session_answer(s, "c", AGT_DECISION_REJECT, "no", &r);
        agt_result_free(r);
        return;
    }
    if (rc != AGT_OK || r == NULL) {
        printf("Bail out! dispatch %s %s: %d %s\n", tool, args, rc, agt_error_message());
        exit(1);
    }
    const char *txt = agt_result_text(r);
    t->calls++;
    if (txt != NULL && strstr(txt, "SECRET-7f3a") != NULL)
        t->leaked_text++;
    if (txt != NULL && strcmp(tool, "Glob") == 0 && strstr(txt, "only-outside") != NULL)
        t->leaked_name++;
    if (strcmp(tool, "Read") == 0 && strstr(args, "only-outside") != NULL &&
        !agt_result_is_error(r))
        t->leaked_text++;
    agt_result_free(r);
}

static void rounds(agt_session *s, const char *mode)
{
    tally t = {0, 0, 0, 0};
    for (int i = 0; i < ROUNDS; i++) {
        run(s, "Read", "{\"path\":\"d/f.txt\"}", &t);
        run(s, "Write", "{\"path\":\"d/new.txt\",\"content\":\"w\\n\"}", &t);
        run(s, "Write", "{\"path\":\"d/sub/made/x.txt\",\"content\":\"x\\n\"}", &t);
        run(s, "Edit",
            i % 2 ? "{\"path\":\"d/f.txt\",\"old_string\":\"inside\",\"new_string\":\"INSIDE\"}"
                  : "{\"path\":\"d/f.txt\",\"old_string\":\"INSIDE\",\"new_string\":\"inside\"}",
            &t);
        run(s, "Grep",
            "{\"pattern\":\"SECRET-7f3[a]|inside\",\"path\":\"d\",\"output_mode\":\"content\"}",
            &t);
        run(s, "Grep", "{\"pattern\":\"SECRET-7f3[a]\",\"output_mode\":\"content\"}", &t);
        run(s, "Glob", "{\"pattern\":\"**/*\",\"path\":\"d\"}", &t);
        run(s, "Read", "{\"path\":\"d/only-outside.txt\"}", &t);
    }
    char listing[1024];
    outside_listing(listing, sizeof listing);
    T_EQ_STR(listing, "f.txt,only-outside.txt,", "%s: nothing created outside", mode);
    T_EQ_STR(outside_text(), "inside SECRET-7f3a\n", "%s: the outside file is unchanged", mode);
    T_EQ_INT(t.leaked_text, 0, "%s: no outside text in %ld results", mode, t.calls);
    T_EQ_INT(t.leaked_name, 0, "%s: no outside name in %ld results", mode, t.calls);
    t_diag("%s: %ld calls ran, %ld saw the outside folder and asked", mode, t.calls, t.asked);
}

int main(void)
{
    make_ws("race");
    const char *tmp = getenv("TMPDIR");
    snprintf(out, sizeof out, "%s/agt-race-out-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (mkdtemp(out) == NULL) {
        printf("Bail out! mkdtemp\n");
        return 1;
    }
    char p[1024];
    snprintf(p, sizeof p, "%s/f.txt", out);
    FILE *f = fopen(p, "wb");
    fputs("inside SECRET-7f3a\n", f);
    fclose(f);
    snprintf(p, sizeof p, "%s/only-outside.txt", out);
    f = fopen(p, "wb");
    fputs("SECRET-7f3a\n", f);
    fclose(f);
    put_file("d/f.txt", "inside\n");
    snprintf(p, sizeof p, "%s/L", ws);
    if (symlink(out, p) != 0) {
        printf("Bail out! symlink\n");
        return 1;
    }
    agt_session *s = new_session();
    agt_session_set_mode(s, AGT_MODE_MANUAL);
    agt_session_add_rule(s, AGT_RULE_ALLOW, "Write");
    agt_session_add_rule(s, AGT_RULE_ALLOW, "Edit");
    pthread_t th;
    pthread_create(&th, NULL, swapper, NULL);
    rounds(s, "openat2");
#ifdef AGTI_LOC_OPEN /* the old code (to show the test fails there) has no walk hook */
    agti_fs_no_openat2 = true;
    rounds(s, "component walk");
    agti_fs_no_openat2 = false;
#endif
    atomic_store(&stop, true);
    pthread_join(th, NULL);
    T_CHECK(atomic_load(&swaps) > 1000, "the folder was swapped %ld times", atomic_load(&swaps));
    agt_session_free(s);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", out);
    if (system(cmd) != 0)
        t_diag("could not remove %s", out);
    rm_ws();
    return t_done();
}
