#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "core/core.h"
#include "harness.h"

static void test_errors(void)
{
    T_EQ_INT(agti_error(AGT_EINVAL, "argument 'x' is %d", 3), AGT_EINVAL,
             "agti_error returns code");
    T_EQ_INT(agt_error_code(), AGT_EINVAL, "last code recorded");
    T_EQ_STR(agt_error_message(), "argument 'x' is 3", "last message recorded");
    agti_error_prefix("in %s", "f");
    T_EQ_STR(agt_error_message(), "in f: argument 'x' is 3", "prefix added");
    /* wrapping the message below: the argument is the message buffer itself
     * (formatting from it into it overlapped; valgrind found it in
     * agti_rule_parse's "bad path pattern" message) */
    agti_error(AGT_EINVAL, "glob '%s': unbalanced '{'", "src/{a");
    agti_error(AGT_EINVALID, "rule '%s': bad path pattern: %s", "Edit(src/{a)",
               agt_error_message());
    T_EQ_STR(agt_error_message(),
             "rule 'Edit(src/{a)': bad path pattern: glob 'src/{a': unbalanced '{'",
             "a message wrapping the previous one");
    T_EQ_INT(agt_error_code(), AGT_EINVALID, "the wrapping code recorded");
    T_EQ_STR(agt_status_string(AGT_EPENDING), "waiting for approval", "status string");
    T_EQ_STR(agt_status_string(-9999), "unknown status", "unknown status string");
    T_EQ_STR(agt_version(), "1.0.0", "version");
}

static void test_buf(void)
{
    agti_buf b = AGTI_BUF_INIT;
    T_EQ_STR(agti_buf_cstr(&b), "", "empty buffer is empty string");
    for (int i = 0; i < 1000; i++)
        agti_buf_printf(&b, "%d,", i);
    T_EQ_INT(b.len, 3890, "1000 numbers with commas: 10*2 + 90*3 + 900*4 bytes");
    T_CHECK(strncmp(b.ptr, "0,1,2,", 6) == 0, "content starts right");
    agti_buf_truncate(&b, 2);
    T_EQ_STR(agti_buf_cstr(&b), "0,", "truncate");
    char *s = agti_buf_detach(&b);
    T_EQ_STR(s, "0,", "detach");
    T_CHECK(b.ptr == NULL && b.len == 0, "detach resets");
    free(s);
    s = agti_buf_detach(&b);
    T_EQ_STR(s, "", "detach of empty buffer gives empty string");
    free(s);
    /* storage reserved on an empty buffer is an empty C string (the
     * first byte was left unset; fuzz_rule read past the end) */
    agti_buf r = AGTI_BUF_INIT;
    T_CHECK(agti_buf_reserve(&r, 1), "reserve on an empty buffer");
    T_CHECK(r.ptr != NULL && r.ptr[0] == '\0', "reserved storage starts as \"\"");
    T_EQ_STR(agti_buf_cstr(&r), "", "reserved empty buffer reads as \"\"");
    agti_buf_free(&r);
}

static void test_utf8(void)
{
    T_CHECK(agti_utf8_valid("h\xC3\xA9llo", 6), "valid 2-byte");
    T_CHECK(!agti_utf8_valid("\xC0\xAF", 2), "overlong rejected");
    T_CHECK(!agti_utf8_valid("\xED\xA0\x80", 3), "surrogate rejected");
    T_CHECK(!agti_utf8_valid("\xF4\x90\x80\x80", 4), "above U+10FFFF rejected");
    T_CHECK(!agti_utf8_valid("\xE2\x82", 2), "truncated rejected");
    T_EQ_INT(agti_utf8_count("\xF0\x9F\x98\x80"
                             "a\xC3\xA9",
                             7),
             3, "code points counted");
    agti_buf b = AGTI_BUF_INIT;
    agti_utf8_sanitize(&b,
                       "a\xFF"
                       "b\xE2\x82",
                       5);
    T_EQ_STR(agti_buf_cstr(&b),
             "a\xEF\xBF\xBD"
             "b\xEF\xBF\xBD\xEF\xBF\xBD",
             "invalid bytes replaced");
    agti_buf_free(&b);
    /* "a€" = 61 E2 82 AC: cutting at 2 or 3 would split the euro sign */
    T_EQ_INT(agti_utf8_floor("a\xE2\x82\xAC", 3), 1, "floor backs off a split sequence");
    T_EQ_INT(agti_utf8_floor("a\xE2\x82\xAC", 4), 4, "floor keeps a whole sequence");
    T_EQ_INT(agti_utf8_floor("ab", 2), 2, "floor on ASCII");
}

static void test_json(void)
{
    struct json_t *v = agti_json_parse("{\"a\": [1, 2", 11, "arguments");
    T_CHECK(v == NULL, "truncated JSON refused");
    T_EQ_INT(agt_error_code(), AGT_EPARSE, "parse error code");
    T_CHECK(strncmp(agt_error_message(), "arguments: invalid JSON at line 1", 33) == 0,
            "parse message names what and where: %s", agt_error_message());
    agti_buf b = AGTI_BUF_INIT;
    agti_json_pointer_append(&b, "a/b~c");
    T_EQ_STR(agti_buf_cstr(&b), "/a~1b~0c", "JSON pointer escaping (RFC 6901)");
    agti_buf_free(&b);
    /* agti_json_text: text that is not UTF-8 becomes a string, not NULL */
    static const struct {
        const char *in, *want;
    } tx[] = {
        {"plain", "\"plain\""},
        {"\xc3\xa9t\xc3\xa9", "\"\xc3\xa9t\xc3\xa9\""},
        {"id\xff", "\"id\xef\xbf\xbd\""},
        {"a\xff\xfe"
         "b",
         "\"a\xef\xbf\xbd\xef\xbf\xbd"
         "b\""},
        {"\xc3", "\"\xef\xbf\xbd\""},                                 /* a sequence cut short */
        {"\xed\xa0\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""}, /* a surrogate */
    };
    for (size_t i = 0; i < sizeof tx / sizeof tx[0]; i++) {
        struct json_t *j = agti_json_text(tx[i].in);
        char *d = j ? agti_json_dump(j) : NULL;
        T_EQ_STR(d, tx[i].want, "agti_json_text %zu", i);
        free(d);
        json_decref(j);
    }
    struct json_t *n = agti_json_text(NULL);
    char *d = agti_json_dump(n);
    T_EQ_STR(d, "null", "agti_json_text(NULL) is null");
    free(d);
    json_decref(n);
}

static void test_grow(void)
{
    size_t *a = NULL, cap = 0;
    T_EQ_INT(agti_grow(&a, &cap, 0, sizeof *a, 32), AGT_OK, "grow: an empty array");
    T_CHECK(a != NULL, "grow: storage given");
    T_EQ_INT(cap, 32, "grow: an empty array gets FIRST elements of room");
    for (size_t i = 0; i < 32; i++)
        a[i] = i * 7;
    size_t *before = a;
    T_EQ_INT(agti_grow(&a, &cap, 31, sizeof *a, 32), AGT_OK, "grow: element 31 of 32");
    T_CHECK(a == before && cap == 32, "grow: nothing done while there is room");
    T_EQ_INT(agti_grow(&a, &cap, 32, sizeof *a, 32), AGT_OK, "grow: element 32 of 32");
    T_EQ_INT(cap, 64, "grow: a full array doubles");
    T_CHECK(a[0] == 0 && a[31] == 217, "grow: the elements kept");
    T_EQ_INT(agti_grow(&a, &cap, 200, sizeof *a, 32), AGT_OK, "grow: element 200 of 64");
    T_EQ_INT(cap, 256, "grow: doubled until element 200 fits (64, 128, 256)");
    T_CHECK(a[31] == 217, "grow: the elements kept again");
    free(a);

    char *c = NULL;
    cap = 0;
    T_EQ_INT(agti_grow(&c, &cap, 0, 1, 0), AGT_OK, "grow: FIRST 0");
    T_EQ_INT(cap, 1, "grow: FIRST 0 counts as 1");
    free(c);

    c = NULL;
    cap = 0;
    T_EQ_INT(agti_grow(&c, &cap, 0, SIZE_MAX / 2, 4), AGT_ENOMEM,
             "grow: 4 elements of SIZE_MAX/2 bytes do not fit in a size_t");
    T_CHECK(c == NULL && cap == 0, "grow: a failed grow leaves the array as it was");
    T_EQ_INT(agt_error_code(), AGT_ENOMEM, "grow: the failure recorded");

    c = malloc(1);
    char *keep = c;
    cap = SIZE_MAX / 2 + 1;
    T_EQ_INT(agti_grow(&c, &cap, cap, 1, 4), AGT_ENOMEM,
             "grow: a room past SIZE_MAX/2 cannot double");
    T_CHECK(c == keep && cap == SIZE_MAX / 2 + 1, "grow: nothing changed on overflow");
    free(keep);
}

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
    (void)sig;
    alarms++;
}

static void test_read_full(void)
{
    int p[2];
    T_CHECK(pipe(p) == 0, "read_full: pipe");
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        /* three writes apart in time: the reader sees short reads, and the
         * alarm below interrupts it while it waits */
        (void)!write(p[1], "abc", 3);
        usleep(150 * 1000);
        (void)!write(p[1], "defgh", 5);
        usleep(50 * 1000);
        (void)!write(p[1], "ij", 2);
        _exit(0);
    }
    close(p[1]);
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm; /* no SA_RESTART: a blocked read fails with EINTR */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, &old);
    struct itimerval it = {{0, 0}, {0, 40 * 1000}};
    setitimer(ITIMER_REAL, &it, NULL);
    char buf[32] = {0};
    size_t got = agti_read_full(p[0], buf, 8);
    T_EQ_INT(got, 8, "read_full: 8 bytes over two writes 150 ms apart");
    T_CHECK(memcmp(buf, "abcdefgh", 8) == 0, "read_full: the bytes in order");
    T_EQ_INT(alarms, 1, "read_full: the read was interrupted once and went on");
    got = agti_read_full(p[0], buf, sizeof buf);
    T_EQ_INT(got, 2, "read_full: the last 2 bytes, then the end of the pipe");
    T_EQ_INT(errno, 0, "read_full: errno 0 at the end of the file");
    T_CHECK(memcmp(buf, "ij", 2) == 0, "read_full: the last bytes");
    sigaction(SIGALRM, &old, NULL);
    close(p[0]);
    waitpid(pid, NULL, 0);
    errno = 0;
    T_EQ_INT(agti_read_full(-1, buf, 4), 0, "read_full: a bad descriptor reads nothing");
    T_EQ_INT(errno, EBADF, "read_full: the read's errno kept");
    T_EQ_INT(agti_read_full(-1, buf, 0), 0, "read_full: no bytes asked, none read");
}

int main(void)
{
    test_errors();
    test_buf();
    test_utf8();
    test_json();
    test_grow();
    test_read_full();
    return t_done();
}
