/* Edit's output is bounded like its input (64 MiB): replace_all that would
 * grow the file past it is refused before anything is allocated or written,
 * and a result of exactly 64 MiB is still allowed. Sizes worked out by hand:
 * out = len + occurrences * (len(new) - len(old)). */
#include "wsfix.h"

#define MIB (1024u * 1024u)

static void put_big(const char *rel, size_t n, char c)
{
    char *d = malloc(n);
    if (d == NULL) {
        printf("Bail out! malloc\n");
        exit(1);
    }
    memset(d, c, n);
    put_file_n(rel, d, n);
    free(d);
}

static off_t size_of(const char *rel)
{
    char full[1024];
    snprintf(full, sizeof full, "%s/%s", ws, rel);
    struct stat st;
    return stat(full, &st) == 0 ? st.st_size : -1;
}

static void edit_args(char *buf, size_t cap, const char *path, size_t nb, int all)
{
    int k = snprintf(buf, cap, "{\"path\":\"%s\",\"old_string\":\"a\",\"new_string\":\"", path);
    memset(buf + k, 'b', nb);
    snprintf(buf + k + nb, cap - (size_t)k - nb, "\",\"replace_all\":%s}", all ? "true" : "false");
}

static void test_cap(agt_session *s)
{
    char args[4096];

    /* the case: 4,000,000 'a' -> 1,000 'b' each = 4 GB */
    put_big("big.txt", 4000000, 'a');
    edit_args(args, sizeof args, "big.txt", 1000, 1);
    expect(s, "Edit", args,
           "Edit would make big.txt larger than the 64 MiB limit: 4000000 occurrences of "
           "old_string (1 bytes) replaced by new_string (1000 bytes) in a file of 4000000 bytes. "
           "Nothing was changed. Replace fewer occurrences per call or use a shorter new_string.",
           1, "replace_all to 4 GB");
    agt_result *r = call(s, "Edit", args);
    T_EQ_INT(agt_result_status(r), AGT_ELIMIT, "replace_all to 4 GB: AGT_ELIMIT");
    agt_result_free(r);
    r = NULL;
    T_EQ_INT(size_of("big.txt"), 4000000, "replace_all to 4 GB: file unchanged");

    /* boundary: 64 'a's, each -> 1 MiB: 64 + 64 * (1 MiB - 1) = 64 MiB exactly */
    size_t cap = 2 * MIB;
    char *big = malloc(cap);
    if (big == NULL) {
        printf("Bail out! malloc\n");
        exit(1);
    }
    put_big("edge.txt", 64, 'a');
    edit_args(big, cap, "edge.txt", MIB + 1, 1);
    agt_result *r2 = call(s, "Edit", big);
    T_EQ_INT(agt_result_status(r2), AGT_ELIMIT, "64 MiB + 64 bytes: refused");
    agt_result_free(r2);
    T_EQ_INT(size_of("edge.txt"), 64, "64 MiB + 64 bytes: file unchanged");
    edit_args(big, cap, "edge.txt", MIB, 1);
    expect(s, "Edit", big, "Edited edge.txt: replaced 64 occurrences.", 0,
           "exactly 64 MiB: allowed");
    T_EQ_INT(size_of("edge.txt"), 64 * MIB, "exactly 64 MiB: size");
    free(big);

    /* a single replacement counts once even in a file full of matches */
    put_file("one.txt", "aaaa\n");
    edit_args(args, sizeof args, "one.txt", 1000, 0);
    r = call(s, "Edit", args);
    T_EQ_INT(agt_result_status(r), AGT_EAMBIGUOUS, "not replace_all: still ambiguous");
    agt_result_free(r);
    put_file("one.txt", "xay\n");
    edit_args(args, sizeof args, "one.txt", 3, 0);
    expect_prefix(s, "Edit", args, "Edited one.txt: replaced 1 occurrence at line 1.", AGT_OK,
                  "small growth: allowed");
    T_EQ_STR(get_file("one.txt", NULL), "xbbby\n", "small growth: content");
}

int main(void)
{
    make_ws("editcap");
    agt_session *s = new_session();
    test_cap(s);
    agt_session_free(s);
    rm_ws();
    return t_done();
}
