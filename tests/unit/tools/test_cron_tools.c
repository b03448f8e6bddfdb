/* CronCreate, CronList, CronDelete through agt_session_dispatch, and cron
 * fires from agt_session_tick, on a test clock in Europe/Berlin.
 * 1796022000 = 2026-11-30T07:00:00Z = 08:00 +01:00, a Monday (python3). */
#include <jansson.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agenttools/agenttools.h"
#include "harness.h"
#include "session/events_internal.h"

#define T0 1796022000LL

/* A test name must stay on one line (TAP). */
static const char *flat(const char *s)
{
    static char buf[4][512];
    static int k;
    char *b = buf[k++ % 4];
    size_t i = 0;
    for (; s != NULL && s[i] != '\0' && i + 1 < sizeof buf[0]; i++)
        b[i] = s[i] == '\n' ? '|' : s[i];
    b[i] = '\0';
    return b;
}

static agt_registry *reg;
static char ws[256];
static int64_t now_ms;

static int64_t test_clock(void *payload)
{
    (void)payload;
    return now_ms;
}

static agt_session *new_session(void)
{
    agt_session *s = NULL;
    if (agt_session_new(&s, reg, ws) != AGT_OK)
        return NULL;
    agt_session_set_mode(s, AGT_MODE_YOLO);
    agt_session_set_clock(s, test_clock, NULL);
    return s;
}

static agt_result *call(agt_session *s, const char *tool, const char *args)
{
    agt_result *r = NULL;
    int rc = agt_session_dispatch(s, "c", tool, args, &r);
    if (rc != AGT_OK || r == NULL) {
        printf("Bail out! dispatch %s %s: %d %s\n", tool, args, rc, agt_error_message());
        exit(1);
    }
    return r;
}

/* The jitter rule, computed here from its definition: FNV-1a 32 of the id;
 * recurring: h mod (min(period/10, 900) + 1) seconds later; one-shot on :00
 * or :30: h mod 91 seconds earlier. */
static uint32_t fnv1a(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 16777619u;
    }
    return h;
}

/* Creates a job; returns its id (static buffer) and fills *j with the
 * result JSON (caller decref). */
static const char *create(agt_session *s, const char *expr, int recurring, json_t **j, char **text)
{
    static char id[16];
    char args[256];
    snprintf(args, sizeof args, "{\"cron\":\"%s\",\"prompt\":\"check the build\",\"recurring\":%s}",
             expr, recurring ? "true" : "false");
    agt_result *r = call(s, "CronCreate", args);
    id[0] = '\0';
    *j = agt_result_json(r) ? json_loads(agt_result_json(r), 0, NULL) : NULL;
    const char *v = json_string_value(json_object_get(*j, "id"));
    if (v != NULL)
        snprintf(id, sizeof id, "%s", v);
    if (text)
        *text = strdup(agt_result_text(r));
    agt_result_free(r);
    return id;
}

static json_t *tick(agt_session *s, int64_t at_s)
{
    char *ev = NULL;
    if (agt_session_tick(s, at_s * 1000, &ev) != AGT_OK)
        return NULL;
    json_t *v = json_loads(ev, 0, NULL);
    agt_free(ev);
    return v;
}

static void test_create(void)
{
    now_ms = T0 * 1000;
    agt_session *s = new_session();
    json_t *j;
    char *text;
    const char *id = create(s, "0 9 * * 1-5", 1, &j, &text);
    regex_t re;
    regcomp(&re, "^[0-9a-f]{8}$", REG_EXTENDED | REG_NOSUB);
    T_CHECK(regexec(&re, id, 0, NULL, 0) == 0, "id is 8 hex digits: %s", id);
    regfree(&re);
    uint32_t jit = fnv1a(id) % 901; /* daily-ish period >= 86400 s: capped at 15 min */
    char when[64], want[512];
    snprintf(when, sizeof when, "2026-11-30T09:%02u:%02u+01:00", jit / 60, jit % 60);
    snprintf(want, sizeof want,
             "Scheduled cron job %s: at 09:00 on weekdays (0 9 * * 1-5, recurring).\nNext fire: "
             "%s\nIt fires until deleted with CronDelete, for at most 7 days.",
             id, when);
    T_EQ_STR(text, want, "CronCreate text");
    T_EQ_STR(json_string_value(json_object_get(j, "humanSchedule")), "at 09:00 on weekdays",
             "humanSchedule");
    T_EQ_STR(json_string_value(json_object_get(j, "nextFireAt")), when, "nextFireAt with offset");
    free(text);
    json_decref(j);

    /* one-shot at :30 moves earlier by up to 90 s */
    id = create(s, "30 9 * * *", 0, &j, &text);
    uint32_t early = fnv1a(id) % 91;
    uint32_t at = 9 * 3600 + 30 * 60 - early;
    snprintf(when, sizeof when, "2026-11-30T%02u:%02u:%02u+01:00", at / 3600, at / 60 % 60,
             at % 60);
    T_EQ_STR(json_string_value(json_object_get(j, "nextFireAt")), when, "one-shot jitter");
    T_CHECK(strstr(text, "(30 9 * * *, one-shot)") &&
                strstr(text, "fires once and is then deleted"),
            "one-shot text: %s", flat(text));
    free(text);
    json_decref(j);

    /* CronList: sorted by next fire, records separated by --- */
    agt_result *r = call(s, "CronList", "{}");
    const char *t = agt_result_text(r);
    const char *first = strstr(t, "cron: 0 9 * * 1-5"), *second = strstr(t, "cron: 30 9 * * *");
    T_CHECK(first && second && first < second && strstr(t, "\n---\n"),
            "CronList order and separator: %s", flat(t));
    T_CHECK(strstr(t, "humanSchedule: at 09:00 on weekdays\n") &&
                strstr(t, "recurring: false\nageDays: 0\nstale: false"),
            "CronList fields");
    agt_result_free(r);

    /* refusals */
    r = call(s, "CronCreate", "{\"cron\":\"0 0 30 2 *\",\"prompt\":\"never\"}");
    T_CHECK(strncmp(agt_result_text(r), "The cron expression is refused: cron: ", 38) == 0,
            "never-firing expression refused: %s", flat(agt_result_text(r)));
    T_EQ_INT(agt_result_is_error(r), 1, "never-firing is an error result");
    agt_result_free(r);
    /* 5000 x U+00E9: 5000 characters (the schema allows 8192) but 10000 bytes */
    char *big = malloc(10000 + 64);
    strcpy(big, "{\"cron\":\"* * * * *\",\"prompt\":\"");
    size_t n = strlen(big);
    for (int i = 0; i < 5000; i++) {
        big[n++] = '\xc3';
        big[n++] = '\xa9';
    }
    strcpy(big + n, "\"}");
    r = call(s, "CronCreate", big);
    T_EQ_STR(agt_result_text(r),
             "The job was not created: the prompt is 10000 bytes of UTF-8; at most 8192 are "
             "allowed",
             "prompt over 8 KiB refused");
    agt_result_free(r);
    free(big);
    r = call(s, "CronDelete", "{\"id\":\"deadbeef\"}");
    T_EQ_STR(agt_result_text(r), "No cron job with id deadbeef. CronList shows the scheduled jobs.",
             "CronDelete unknown id");
    T_EQ_INT(agt_result_is_error(r), 1, "unknown id is an error result");
    agt_result_free(r);

    /* at most 50 */
    int made = 2;
    for (int i = 0; i < 48; i++) {
        create(s, "*/5 * * * *", 1, &j, NULL);
        made += json_object_get(j, "id") != NULL;
        json_decref(j);
    }
    T_EQ_INT(made, 50, "50 jobs created");
    r = call(s, "CronCreate", "{\"cron\":\"*/5 * * * *\",\"prompt\":\"one more\"}");
    T_EQ_STR(agt_result_text(r),
             "The job was not created: this session already has 50 scheduled jobs, the most it "
             "can hold; delete one with CronDelete first",
             "51st job refused");
    agt_result_free(r);
    agt_session_free(s);
}

static void test_jitter(void)
{
    char id[9];
    int64_t maxr = 0, minr = 1 << 30, max5 = 0, mino = 0;
    int same = 1;
    for (unsigned i = 0; i < 2000; i++) {
        snprintf(id, sizeof id, "%08x", i * 2654435761u);
        int64_t a = agti_cron_jitter_s(id, true, T0, 86400);
        same &= a == agti_cron_jitter_s(id, true, T0, 86400);
        maxr = a > maxr ? a : maxr;
        minr = a < minr ? a : minr;
        int64_t f = agti_cron_jitter_s(id, true, T0, 300);
        max5 = f > max5 ? f : max5;
        minr = f < minr ? f : minr;
        int64_t o = agti_cron_jitter_s(id, false, T0 + 3600, 0); /* 09:00 local */
        mino = o < mino ? o : mino;
        same &= o <= 0 && agti_cron_jitter_s(id, false, T0 + 900, 0) == 0; /* 08:15: none */
    }
    T_CHECK(same, "jitter is deterministic; one-shot only at :00/:30, never later");
    T_CHECK(minr >= 0 && maxr <= 900 && maxr >= 850, "daily recurring jitter in [0, 900]: max %lld",
            (long long)maxr);
    T_CHECK(max5 <= 30 && max5 >= 28, "every-5-minutes jitter in [0, 30]: max %lld",
            (long long)max5);
    T_CHECK(mino >= -90 && mino <= -85, "one-shot jitter in [-90, 0]: min %lld", (long long)mino);
}

static void test_fires(void)
{
    now_ms = T0 * 1000;
    agt_session *s = new_session();
    json_t *j;
    char id[16];
    snprintf(id, sizeof id, "%s", create(s, "*/10 * * * *", 1, &j, NULL));
    json_decref(j);
    int64_t jit = fnv1a(id) % 61;   /* period 600 s: up to 60 s */
    int64_t first = T0 + 600 + jit; /* 08:10 local + jitter */
    agt_session_set_idle(s, 1);
    int64_t dl = 0;
    agt_session_next_deadline(s, T0 * 1000, &dl);
    T_EQ_INT(dl, first * 1000, "next deadline is the jittered fire");
    json_t *ev = tick(s, first - 1);
    T_EQ_INT(json_array_size(ev), 0, "nothing due a second early");
    json_decref(ev);
    agt_session_set_idle(s, 0);
    ev = tick(s, T0 + 661);
    T_EQ_INT(json_array_size(ev), 0, "due but busy: not delivered");
    json_decref(ev);
    agt_session_set_idle(s, 1);
    ev = tick(s, T0 + 661);
    json_t *e = json_array_get(ev, 0);
    T_EQ_INT(json_array_size(ev), 1, "delivered once idle");
    T_EQ_STR(json_string_value(json_object_get(e, "type")), "cron_fire", "event type");
    T_EQ_STR(json_string_value(json_object_get(e, "scheduled_at")), "2026-11-30T08:10:00+01:00",
             "scheduled_at");
    T_EQ_INT(json_integer_value(json_object_get(e, "coalesced_count")), 1, "single fire");
    T_EQ_STR(json_string_value(json_object_get(e, "prompt")), "check the build", "prompt");
    char want[256];
    snprintf(want, sizeof want,
             "<cron-fire id=\"%s\" cron=\"*/10 * * * *\" scheduledAt=\"2026-11-30T08:10:00+01:00\" "
             "coalescedCount=\"1\">\ncheck the build\n</cron-fire>",
             id);
    T_EQ_STR(json_string_value(json_object_get(e, "message")), want, "message envelope");
    json_decref(ev);

    /* an hour and a bit later: 08:20 .. 09:10 coalesce into one fire */
    ev = tick(s, T0 + 3600 + 661);
    e = json_array_get(ev, 0);
    T_EQ_INT(json_array_size(ev), 1, "missed fires coalesce into one");
    T_EQ_INT(json_integer_value(json_object_get(e, "coalesced_count")), 6, "coalesced count 6");
    T_EQ_STR(json_string_value(json_object_get(e, "scheduled_at")), "2026-11-30T09:10:00+01:00",
             "coalesced scheduled_at is the latest");
    T_CHECK(json_is_false(json_object_get(e, "stale")), "not stale yet");
    json_decref(ev);

    /* 7 days + 1 h 5 min after creation: 09:20 Nov 30 .. 09:00 Dec 7 = 1007 fires, stale */
    ev = tick(s, T0 + 7 * 86400 + 3600 + 300);
    e = json_array_get(ev, 0);
    T_EQ_INT(json_array_size(ev), 1, "stale fire");
    T_EQ_INT(json_integer_value(json_object_get(e, "coalesced_count")), 1007, "stale count");
    T_CHECK(json_is_true(json_object_get(e, "stale")) &&
                json_is_true(json_object_get(e, "deleted")),
            "marked stale and deleted");
    T_CHECK(strstr(json_string_value(json_object_get(e, "message")), " stale=\"true\">") != NULL,
            "envelope says stale");
    json_decref(ev);
    now_ms = (T0 + 7 * 86400 + 3600 + 300) * 1000;
    agt_result *r = call(s, "CronList", "{}");
    T_EQ_STR(agt_result_text(r), "No scheduled cron jobs.", "stale job deleted");
    agt_result_free(r);

    /* one-shot: fires once, then is gone */
    now_ms = T0 * 1000;
    snprintf(id, sizeof id, "%s", create(s, "30 9 * * *", 0, &j, NULL));
    json_decref(j);
    ev = tick(s, T0 + 5400);
    e = json_array_get(ev, 0);
    T_EQ_INT(json_array_size(ev), 1, "one-shot fires");
    T_CHECK(json_is_true(json_object_get(e, "deleted")) &&
                json_is_false(json_object_get(e, "recurring")),
            "one-shot deleted after firing");
    json_decref(ev);
    ev = tick(s, T0 + 5400 + 86400);
    T_EQ_INT(json_array_size(ev), 0, "one-shot does not fire again");
    json_decref(ev);
    char args[64];
    snprintf(args, sizeof args, "{\"id\":\"%s\"}", id);
    r = call(s, "CronDelete", args);
    snprintf(want, sizeof want, "No cron job with id %s. CronList shows the scheduled jobs.", id);
    T_EQ_STR(agt_result_text(r), want, "CronDelete of a fired one-shot");
    agt_result_free(r);

    /* CronDelete stops a recurring job */
    snprintf(id, sizeof id, "%s", create(s, "* * * * *", 1, &j, NULL));
    json_decref(j);
    snprintf(args, sizeof args, "{\"id\":\"%s\"}", id);
    r = call(s, "CronDelete", args);
    snprintf(want, sizeof want, "Deleted cron job %s (* * * * *, recurring).", id);
    T_EQ_STR(agt_result_text(r), want, "CronDelete");
    agt_result_free(r);
    ev = tick(s, T0 + 86400);
    T_EQ_INT(json_array_size(ev), 0, "deleted job never fires");
    json_decref(ev);
    agt_session_free(s);
}

static void test_save_restore(void)
{
    now_ms = T0 * 1000;
    agt_session *a = new_session();
    json_t *j;
    char id[16];
    snprintf(id, sizeof id, "%s", create(a, "*/10 * * * *", 1, &j, NULL));
    json_decref(j);
    agt_session_set_idle(a, 1);
    json_t *ev = tick(a, T0 + 661);
    T_EQ_INT(json_array_size(ev), 1, "fired before saving");
    json_decref(ev);
    char *saved = NULL;
    T_EQ_INT(agt_session_save(a, &saved), AGT_OK, "save with cron jobs");
    agt_session *b = new_session();
    T_EQ_INT(agt_session_restore(b, saved, strlen(saved)), AGT_OK, "restore with cron jobs");
    agt_result *ra = call(a, "CronList", "{}"), *rb = call(b, "CronList", "{}");
    T_EQ_STR(agt_result_text(rb), agt_result_text(ra), "restored table lists the same");
    T_CHECK(strstr(agt_result_text(rb), id) != NULL, "same id after restore");
    agt_result_free(ra);
    agt_result_free(rb);
    agt_session_set_idle(b, 1);
    ev = tick(b, T0 + 3600 + 661);
    T_EQ_INT(json_integer_value(json_object_get(json_array_get(ev, 0), "coalesced_count")), 6,
             "restored job keeps its last fire (6 missed fires since 08:10)");
    json_decref(ev);
    const char *bad = "{\"format\":1,\"cron\":[{\"id\":\"xyz\",\"cron\":\"* * * * *\"}]}";
    T_EQ_INT(agt_session_restore(b, bad, strlen(bad)), AGT_EINVALID, "corrupt cron refused");
    const char *never = "{\"format\":1,\"cron\":[{\"id\":\"0000abcd\",\"cron\":\"0 0 30 2 *\","
                        "\"prompt\":\"p\",\"recurring\":true,\"created\":1}]}";
    T_EQ_INT(agt_session_restore(b, never, strlen(never)), AGT_EINVALID,
             "never-firing saved job refused");
    agt_result *r = call(b, "CronList", "{}");
    T_CHECK(strstr(agt_result_text(r), id) != NULL, "session unchanged after a refused restore");
    agt_result_free(r);
    agt_free(saved);
    agt_session_free(b);
    agt_session_free(a);
}

/* The host's own calls: list, pause/resume, delete, no model call involved. */
static void expect_list(agt_session *s, const char *want, const char *name)
{
    char *got = NULL;
    T_EQ_INT(agt_session_cron_list(s, &got), AGT_OK, "%s: listed", name);
    json_t *g = got ? json_loads(got, 0, NULL) : NULL, *w = json_loads(want, 0, NULL);
    if (!T_CHECK(g && w && json_equal(g, w), "%s", name)) {
        t_diag("  got  %s", got ? got : "(null)");
        t_diag("  want %s", want);
    }
    json_decref(g);
    json_decref(w);
    agt_free(got);
}

static void test_host_api(void)
{
    now_ms = T0 * 1000;
    agt_session *s = new_session();
    json_t *j;
    char id[16], want[512];
    snprintf(id, sizeof id, "%s", create(s, "*/10 * * * *", 1, &j, NULL));
    json_decref(j);
    int64_t jit = fnv1a(id) % 61;
    snprintf(want, sizeof want,
             "[{\"id\":\"%s\",\"cron\":\"*/10 * * * *\",\"prompt\":\"check the build\","
             "\"recurring\":true,\"paused\":false,\"created\":%lld,\"last_fire\":null,"
             "\"next_fire\":%lld}]",
             id, T0, T0 + 600 + jit);
    expect_list(s, want, "host list: the job with its next fire (08:10 + jitter)");

    T_EQ_INT(agt_session_cron_set_paused(s, id, 1), AGT_OK, "paused");
    snprintf(want, sizeof want,
             "[{\"id\":\"%s\",\"cron\":\"*/10 * * * *\",\"prompt\":\"check the build\","
             "\"recurring\":true,\"paused\":true,\"created\":%lld,\"last_fire\":null,"
             "\"next_fire\":null}]",
             id, T0);
    expect_list(s, want, "host list: paused, no next fire");
    agt_session_set_idle(s, 1);
    json_t *ev = tick(s, T0 + 3000);
    T_EQ_INT(json_array_size(ev), 0, "a paused job does not fire (5 fires due)");
    json_decref(ev);
    agt_result *r = call(s, "CronList", "{}");
    T_CHECK(strstr(agt_result_text(r),
                   "\npaused: true (by the user: it does not fire until resumed)") != NULL,
            "CronList tells the model it is paused");
    agt_result_free(r);

    char *saved = NULL;
    T_EQ_INT(agt_session_save(s, &saved), AGT_OK, "saved while paused");
    agt_session *b = new_session();
    T_EQ_INT(agt_session_restore(b, saved, strlen(saved)), AGT_OK, "restored");
    agt_free(saved);
    expect_list(b, want, "the pause survives save and restore");

    now_ms = (T0 + 3600 + 5) * 1000; /* 09:00:05 */
    T_EQ_INT(agt_session_cron_set_paused(b, id, 0), AGT_OK, "resumed at 09:00:05");
    snprintf(want, sizeof want,
             "[{\"id\":\"%s\",\"cron\":\"*/10 * * * *\",\"prompt\":\"check the build\","
             "\"recurring\":true,\"paused\":false,\"created\":%lld,\"last_fire\":null,"
             "\"next_fire\":%lld}]",
             id, T0, T0 + 4200 + jit);
    expect_list(b, want, "resumed: next fire 09:10 + jitter, the missed ones dropped");
    agt_session_set_idle(b, 1);
    ev = tick(b, T0 + 4200 + jit);
    json_t *e = json_array_get(ev, 0);
    T_EQ_INT(json_array_size(ev), 1, "fires again after the resume");
    T_EQ_STR(json_string_value(json_object_get(e, "scheduled_at")), "2026-11-30T09:10:00+01:00",
             "the first fire after now");
    T_EQ_INT(json_integer_value(json_object_get(e, "coalesced_count")), 1,
             "no burst of the fires missed while paused");
    json_decref(ev);

    T_EQ_INT(agt_session_cron_delete(b, id), AGT_OK, "deleted by the host");
    expect_list(b, "[]", "host list empty after delete");
    r = call(b, "CronList", "{}");
    T_EQ_STR(agt_result_text(r), "No scheduled cron jobs.", "the model's CronList agrees");
    agt_result_free(r);
    T_EQ_INT(agt_session_cron_delete(b, id), AGT_ENOTFOUND, "delete twice: not found");
    char msg[160];
    snprintf(msg, sizeof msg,
             "agt_session_cron_delete: no cron job with id '%s' (agt_session_cron_list shows them)",
             id);
    T_EQ_STR(agt_error_message(), msg, "not found names the id");
    T_EQ_INT(agt_session_cron_set_paused(b, "0000beef", 1), AGT_ENOTFOUND, "pause unknown id");
    T_EQ_INT(agt_session_cron_set_paused(NULL, id, 1), AGT_EINVAL, "NULL session");
    T_EQ_INT(agt_session_cron_delete(b, NULL), AGT_EINVAL, "NULL id");
    T_EQ_INT(agt_session_cron_list(b, NULL), AGT_EINVAL, "NULL out");
    agt_session_free(b);
    agt_session_free(s);
}

int main(void)
{
    setenv("TZ", "Europe/Berlin", 1);
    tzset();
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(ws, sizeof ws, "%s/agt-test-cron-XXXXXX", tmp);
    if (mkdtemp(ws) == NULL || agt_registry_new(&reg) != AGT_OK ||
        agt_registry_load_builtin(reg, "chat") != AGT_OK) {
        printf("Bail out! setup\n");
        return 1;
    }
    test_create();
    test_jitter();
    test_fires();
    test_save_restore();
    test_host_api();
    agt_registry_free(reg);
    rmdir(ws);
    return t_done();
}
