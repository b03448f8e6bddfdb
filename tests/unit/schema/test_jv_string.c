/* Unit tests of the JSON reader's string path (lib/schema/jv.c: a scan in
 * blocks of 16 and 8 bytes, copying only strings with escapes, either
 * straight into the arena's current block or once the length is known) and
 * of the block loops of lib/core/utf8.c. Each string is built from filler
 * 'a's with one special piece at every position, for every length up to 40,
 * with 0, 7 or 15 spaces after the string (blocks may be read past the
 * closing quote while the text goes on), so that the piece falls at every
 * place of a block, across block ends and in the bytes after the last whole
 * block. Expected
 * bytes, lengths and error columns are worked out from the construction
 * (UTF-8 from RFC 3629: U+00E9 = C3 A9, U+20AC = E2 82 AC, U+1F600 =
 * F0 9F 98 80 = "\ud83d\ude00"), not from the code. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agenttools/schema.h"
#include "core/core.h"
#include "harness.h"
#include "schema/jv.h"
#include "schema/schema_internal.h"
#include <jansson.h>

#define MAXLEN 40

/* How the parser gets its arena: a large first block (the string is
 * decoded in one pass straight into it) or a first block the root value
 * fills (the string is scanned to its end, then copied into a heap chunk). */
enum { ARENA_ROOMY, ARENA_FULL, N_ARENAS };

typedef struct {
    const char *text;  /* the piece as written inside the JSON string */
    const char *bytes; /* what it decodes to */
    size_t nbytes;
    int cps; /* code points it decodes to */
} piece;

static const piece good[] = {
    {"\\n", "\n", 1, 1},
    {"\\\"", "\"", 1, 1},
    {"\\\\", "\\", 1, 1},
    {"\\/", "/", 1, 1},
    {"\\b", "\b", 1, 1},
    {"\\f", "\f", 1, 1},
    {"\\r", "\r", 1, 1},
    {"\\t", "\t", 1, 1},
    {"\\u0041", "A", 1, 1},
    {"\\u00e9", "\xc3\xa9", 2, 1},
    {"\\u00E9", "\xc3\xa9", 2, 1},
    {"\\u20ac", "\xe2\x82\xac", 3, 1},
    {"\\ud83d\\ude00", "\xf0\x9f\x98\x80", 4, 1},
    {"\\uD83D\\uDE00", "\xf0\x9f\x98\x80", 4, 1},
    {"\\u0000", "\0", 1, 1},
    {"\xc3\xa9", "\xc3\xa9", 2, 1},
    {"\xe2\x82\xac", "\xe2\x82\xac", 3, 1},
    {"\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80", 4, 1},
    {"\x7f", "\x7f", 1, 1},
};

typedef struct {
    const char *text;
    size_t ntext;
    const char *msg;
} bad_piece;

static const bad_piece bad[] = {
    {"\xff", 1, "invalid UTF-8 in string"},
    {"\x80", 1, "invalid UTF-8 in string"},
    {"\xc3", 1, "invalid UTF-8 in string"},             /* lead byte, then an 'a' */
    {"\xc0\xaf", 2, "invalid UTF-8 in string"},         /* overlong '/' */
    {"\xed\xa0\x80", 3, "invalid UTF-8 in string"},     /* an encoded surrogate */
    {"\xf4\x90\x80\x80", 4, "invalid UTF-8 in string"}, /* past U+10FFFF */
    {"\x01", 1, "control character in string"},
    {"\x1f", 1, "control character in string"},
    {"\n", 1, "control character in string"},
    {"\0", 1, "control character in string"}, /* a raw NUL */
    {"\\q", 2, "invalid escape in string"},
    {"\\x41", 4, "invalid escape in string"},
    {"\\u12g4", 6, "invalid \\u escape"},
    {"\\u12x", 5, "invalid \\u escape"},
    {"\\ud800", 6, "invalid Unicode surrogate pair"},         /* lone high, then 'a' */
    {"\\udc00", 6, "invalid Unicode surrogate pair"},         /* lone low */
    {"\\ud800\\u0041", 12, "invalid Unicode surrogate pair"}, /* high, then not a low */
    {"\\ud800\\ud800", 12, "invalid Unicode surrogate pair"},
};

static _Alignas(16) char roomy[1 << 16];
static _Alignas(16) char tiny[16];

static const agti_jv *parse(agti_jarena *a, int arena, const char *text, size_t len)
{
    if (arena == ARENA_ROOMY)
        agti_jarena_init(a, roomy, sizeof roomy);
    else
        agti_jarena_init(a, tiny, sizeof tiny);
    return agti_jv_parse(a, text, len, "t");
}

/* The JSON text: a quote, `pre` (an escape or nothing), i filler bytes,
 * the piece, filler up to `len` filler bytes in all, `post`, a quote,
 * `trail` spaces. Returns its length; *at is where the piece starts. */
static size_t build(char *t, size_t trail, const char *pre, size_t i, const char *p, size_t np,
                    size_t len, const char *post, size_t *at)
{
    size_t n = 0;
    t[n++] = '"';
    memcpy(t + n, pre, strlen(pre));
    n += strlen(pre);
    memset(t + n, 'a', i);
    n += i;
    *at = n;
    memcpy(t + n, p, np);
    n += np;
    memset(t + n, 'a', len - i);
    n += len - i;
    memcpy(t + n, post, strlen(post));
    n += strlen(post);
    t[n++] = '"';
    memset(t + n, ' ', trail);
    return n + trail;
}

/* A place of a piece: trails[trail] spaces after the string, `len` filler
 * bytes in it (0-MAXLEN), the piece after the first i of them (0-len). */
static const size_t trails[] = {0, 7, 15};
#define N_TRAILS (sizeof trails / sizeof trails[0])

typedef struct {
    size_t trail, len, i;
} place;

/* Steps to the next place; false after the last. */
static bool next_place(place *pl)
{
    if (pl->i < pl->len) {
        pl->i++;
        return true;
    }
    pl->i = 0;
    if (pl->len < MAXLEN) {
        pl->len++;
        return true;
    }
    pl->len = 0;
    return ++pl->trail < N_TRAILS;
}

/* One sweep: a piece framed by `pre` and `post` at every place, in one
 * kind of arena; check() says what is wrong with one parse (NULL: right). */
typedef struct sweep sweep;
struct sweep {
    int arena;
    const char *pre, *post, *piece;
    size_t npiece;
    const char *(*check)(const sweep *sw, const char *text, size_t at, const place *pl,
                         const agti_jv *v);
    const void *data;
};

/* Runs the sweep and records one TAP check: how many strings came out right
 * and the first that did not. */
static void run_sweep(const sweep *sw, const char *what)
{
    char text[256];
    int wrong = 0, cases = 0;
    char first[300] = "";
    place pl = {0, 0, 0};
    do {
        size_t at;
        size_t n = build(text, trails[pl.trail], sw->pre, pl.i, sw->piece, sw->npiece, pl.len,
                         sw->post, &at);
        agti_jarena a;
        const agti_jv *v = parse(&a, sw->arena, text, n);
        const char *bad_why = sw->check(sw, text, at, &pl, v);
        cases++;
        if (bad_why != NULL && wrong++ == 0)
            snprintf(first, sizeof first,
                     "; first wrong: %zu spaces after, %zu filler, piece at %zu: %s",
                     trails[pl.trail], pl.len, pl.i, bad_why);
        agti_jarena_free(&a);
    } while (next_place(&pl));
    T_EQ_INT(wrong, 0, "%s arena, %s: %d of %d strings right%s",
             sw->arena == ARENA_ROOMY ? "roomy" : "full", what, cases - wrong, cases, first);
}

typedef struct {
    const piece *pc;
    const char *dpre, *dpost; /* pre and post decoded */
} good_case;

static const char *check_good(const sweep *sw, const char *text, size_t at, const place *pl,
                              const agti_jv *v)
{
    const good_case *g = sw->data;
    (void)at;
    if (v == NULL)
        return agt_error_message();
    /* expected: pre, i a's, the piece's bytes, len - i a's, post */
    char want[256];
    size_t w = 0;
    memcpy(want + w, g->dpre, strlen(g->dpre));
    w += strlen(g->dpre);
    memset(want + w, 'a', pl->i);
    w += pl->i;
    memcpy(want + w, g->pc->bytes, g->pc->nbytes);
    w += g->pc->nbytes;
    memset(want + w, 'a', pl->len - pl->i);
    w += pl->len - pl->i;
    memcpy(want + w, g->dpost, strlen(g->dpost));
    w += strlen(g->dpost);
    if (v->type != AGTI_JV_STRING || v->len != w || memcmp(v->u.s, want, w) != 0)
        return "wrong value";
    /* no escape: the value points into the text; else a copy ending with a NUL */
    bool plain = sw->piece[0] != '\\' && sw->pre[0] == '\0' && sw->post[0] == '\0';
    if ((v->u.s == text + 1) != plain)
        return plain ? "copied" : "not copied";
    if (!plain && v->u.s[w] != '\0')
        return "no NUL after the copy";
    return NULL;
}

static void test_good(void)
{
    /* pre/post: none (a piece that is no escape is read in place), an
     * escape first (the whole string is copied), an escape last */
    static const struct {
        const char *pre, *post;
        const char *dpre, *dpost;
    } frames[] = {{"", "", "", ""}, {"\\b", "", "\b", ""}, {"", "\\t", "", "\t"}};
    for (int arena = 0; arena < N_ARENAS; arena++) {
        for (size_t f = 0; f < sizeof frames / sizeof frames[0]; f++) {
            for (size_t k = 0; k < sizeof good / sizeof good[0]; k++) {
                good_case g = {&good[k], frames[f].dpre, frames[f].dpost};
                sweep sw = {arena,
                            frames[f].pre,
                            frames[f].post,
                            good[k].text,
                            strlen(good[k].text),
                            check_good,
                            &g};
                char what[100];
                snprintf(what, sizeof what, "frame %zu, piece %zu (%s)", f, k, good[k].text);
                run_sweep(&sw, what);
            }
        }
    }
}

static const char *check_bad(const sweep *sw, const char *text, size_t at, const place *pl,
                             const agti_jv *v)
{
    const bad_piece *bp = sw->data;
    static char want[200];
    (void)text;
    (void)pl;
    if (v != NULL)
        return "accepted";
    /* at the column of the piece's first byte (1-based); a raw newline is
     * the error itself, so still on line 1 */
    snprintf(want, sizeof want, "t: invalid JSON at line 1, column %zu: %s", at + 1, bp->msg);
    if (agt_error_code() != AGT_EPARSE || strcmp(agt_error_message(), want) != 0)
        return agt_error_message();
    return NULL;
}

static void test_bad(void)
{
    static const char *pres[] = {"", "\\b"};
    for (int arena = 0; arena < N_ARENAS; arena++) {
        for (size_t f = 0; f < 2; f++) {
            for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
                sweep sw = {arena, pres[f], "", bad[k].text, bad[k].ntext, check_bad, &bad[k]};
                char what[100];
                snprintf(what, sizeof what, "%s, bad piece %zu refused at the piece",
                         f ? "after an escape" : "no escape before", k);
                run_sweep(&sw, what);
            }
        }
    }
}

static void test_unterminated(void)
{
    char text[256];
    static const char *tails[] = {"", "\\", "\\u00", "\\\"", "\\\\\\"};
    for (int arena = 0; arena < N_ARENAS; arena++) {
        for (size_t t = 0; t < sizeof tails / sizeof tails[0]; t++) {
            for (size_t pre = 0; pre < 2; pre++) {
                int wrong = 0;
                for (size_t len = 0; len <= MAXLEN; len++) {
                    /* '"', [\b], len a's, the tail, then the text ends */
                    size_t n = 0;
                    text[n++] = '"';
                    if (pre) {
                        memcpy(text + n, "\\b", 2);
                        n += 2;
                    }
                    memset(text + n, 'a', len);
                    n += len;
                    memcpy(text + n, tails[t], strlen(tails[t]));
                    n += strlen(tails[t]);
                    agti_jarena a;
                    const agti_jv *v = parse(&a, arena, text, n);
                    /* whatever the tail, no closing quote: the text's end */
                    char want[128];
                    snprintf(want, sizeof want,
                             "t: invalid JSON at line 1, column %zu: unterminated string", n + 1);
                    if (v != NULL || strcmp(agt_error_message(), want) != 0)
                        wrong++;
                    agti_jarena_free(&a);
                }
                T_EQ_INT(wrong, 0, "%s arena, tail [%s], %s: unterminated strings refused",
                         arena == ARENA_ROOMY ? "roomy" : "full", tails[t],
                         pre ? "after an escape" : "no escape");
            }
        }
    }
}

/* Several strings in one text: each copy lands in the arena after the
 * previous one, none overwrites another (the copy stores whole blocks past
 * its end). */
static void test_neighbours(void)
{
    char text[4096];
    for (int arena = 0; arena < N_ARENAS; arena++) {
        int wrong = 0;
        for (size_t len = 0; len <= MAXLEN; len++) {
            /* ["\nA..", "\nB..", ...]: 20 strings of len letters after a \n */
            size_t n = 0;
            text[n++] = '[';
            for (int s = 0; s < 20; s++) {
                if (s)
                    text[n++] = ',';
                text[n++] = '"';
                memcpy(text + n, "\\n", 2);
                n += 2;
                memset(text + n, 'A' + s, len);
                n += len;
                text[n++] = '"';
            }
            text[n++] = ']';
            agti_jarena a;
            const agti_jv *v = parse(&a, arena, text, n);
            if (v == NULL || v->type != AGTI_JV_ARRAY || v->len != 20) {
                wrong++;
            } else {
                for (int s = 0; s < 20; s++) {
                    const agti_jv *e = &v->u.a[s];
                    /* a copy ends with a NUL that the next one leaves alone */
                    bool ok = e->type == AGTI_JV_STRING && e->len == len + 1 && e->u.s[0] == '\n' &&
                              e->u.s[len + 1] == '\0';
                    for (size_t c = 0; ok && c < len; c++)
                        ok = e->u.s[1 + c] == 'A' + s;
                    wrong += !ok;
                }
            }
            agti_jarena_free(&a);
        }
        T_EQ_INT(wrong, 0, "%s arena: 20 escaped strings side by side keep their bytes",
                 arena == ARENA_ROOMY ? "roomy" : "full");
    }
}

/* agti_utf8_valid and agti_utf8_count, with their 8-byte blocks. */
static void test_utf8_blocks(void)
{
    static const struct {
        const char *s;
        size_t n;
        bool valid;
    } pieces[] = {
        {"\xc3\xa9", 2, true},      {"\xe2\x82\xac", 3, true}, {"\xf0\x9f\x98\x80", 4, true},
        {"\xff", 1, false},         {"\x80", 1, false},        {"\xc3", 1, false},
        {"\xed\xa0\x80", 3, false}, {"\xc1\xbf", 2, false},
    };
    char t[128];
    for (size_t k = 0; k < sizeof pieces / sizeof pieces[0]; k++) {
        int wrong = 0;
        for (size_t len = 0; len <= MAXLEN; len++) {
            for (size_t i = 0; i <= len; i++) {
                memset(t, 'a', i);
                memcpy(t + i, pieces[k].s, pieces[k].n);
                memset(t + i + pieces[k].n, 'a', len - i);
                size_t n = len + pieces[k].n;
                if (agti_utf8_valid(t, n) != pieces[k].valid)
                    wrong++;
                /* a valid piece is one code point; count counts lead bytes */
                if (pieces[k].valid && agti_utf8_count(t, n) != len + 1)
                    wrong++;
            }
        }
        T_EQ_INT(wrong, 0, "utf8 piece %zu at every place of strings up to %d bytes", k, MAXLEN);
    }
    /* counts by hand: "é€😀a" = 4 code points in 10 bytes, twice = 8 in 20 */
    T_EQ_INT((int)agti_utf8_count("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"
                                  "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"
                                  "a",
                                  20),
             8, "code points of 20 bytes");
    T_EQ_INT((int)agti_utf8_count("", 0), 0, "code points of nothing");
    T_CHECK(agti_utf8_valid("", 0), "nothing is valid UTF-8");
}

/* maxLength/minLength and const on long escaped strings, through the public
 * call: code points of the decoded value. */
static void test_lengths(void)
{
    /* 1000 times "\u00e9x\n" (9 bytes) = 3000 code points (4000 decoded bytes) */
    size_t reps = 1000;
    char *inst = malloc(reps * 9 + 3);
    size_t n = 0;
    inst[n++] = '"';
    for (size_t r = 0; r < reps; r++) {
        memcpy(inst + n, "\\u00e9x\\n", 9);
        n += 9;
    }
    inst[n++] = '"';
    static const struct {
        const char *schema;
        int rc;
    } cases[] = {
        {"{\"maxLength\":3000}", AGT_OK},
        {"{\"maxLength\":2999}", AGT_EINVALID},
        {"{\"minLength\":3000}", AGT_OK},
        {"{\"minLength\":3001}", AGT_EINVALID},
        {"{\"pattern\":\"^(\\u00e9x\\n)+$\"}", AGT_OK},
        {"{\"pattern\":\"^(\\u00e9x\\n)+x$\"}", AGT_EINVALID},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        agt_schema *s = NULL;
        int rc = agt_schema_compile(&s, cases[k].schema, strlen(cases[k].schema));
        T_EQ_INT(rc, AGT_OK, "compile %s", cases[k].schema);
        rc = agt_schema_validate(s, inst, n, NULL);
        T_EQ_INT(rc, cases[k].rc, "3000 code points in 9000 escaped bytes against %s",
                 cases[k].schema);
        agt_schema_free(s);
    }
    free(inst);
}

/* agti_schema_parse_json (dispatch reads arguments with it) gives what
 * jansson gives: the same value, or the same error message. */
static void test_parse_json(void)
{
    static const char *same[] = {
        ("{\"path\":\"a\\/b\",\"content\":\"x\\n\\t\\u00e9\\ud83d\\ude00\",\"n\":-12,"
         "\"r\":1.5e3,\"t\":true,\"f\":false,\"z\":null,\"a\":[1,[2],{}],\"o\":{\"k\":\"v\"}}"),
        "{\"k\":1,\"k\":2}",     /* a repeated key: the last value */
        "{\"s\":\"a\\u0000b\"}", /* NUL in a string value */
        "\"top\"",               /* any value at the top */
        "[-9223372036854775808,9223372036854775807,0.1,-0]",
    };
    for (size_t k = 0; k < sizeof same / sizeof same[0]; k++) {
        json_t *want = agti_json_parse(same[k], strlen(same[k]), "arguments");
        json_t *got = agti_schema_parse_json(same[k], strlen(same[k]), "arguments");
        T_CHECK(want != NULL && got != NULL && json_equal(want, got), "same value: %s", same[k]);
        json_decref(want);
        json_decref(got);
    }
    /* the repeated key keeps one member, the last value */
    json_t *v = agti_schema_parse_json("{\"k\":1,\"k\":2}", 13, "arguments");
    T_CHECK(v != NULL && json_object_size(v) == 1 &&
                json_integer_value(json_object_get(v, "k")) == 2,
            "repeated key: one member, 2");
    json_decref(v);
    /* the decoded bytes of the escapes, by hand */
    v = agti_schema_parse_json("[\"x\\n\\u00e9\\ud83d\\ude00\"]", 25, "arguments");
    const char *sv = json_string_value(json_array_get(v, 0));
    T_CHECK(sv != NULL && json_string_length(json_array_get(v, 0)) == 8 &&
                memcmp(sv, "x\n\xc3\xa9\xf0\x9f\x98\x80", 8) == 0,
            "escapes decoded to x, LF, C3 A9, F0 9F 98 80");
    json_decref(v);
    /* refused, or read otherwise by the validator's reader: jansson's answer */
    static const char *differ[] = {
        "{\"a\":123456789012345678901234567890}", /* past 64 bits */
        "{\"a\\u0000b\":1}",                      /* NUL in a member name */
        "{\"a\":1e400}",
        /* found by fuzz_json: a repeated key drops the big number from the
         * value, jansson still refuses the text */
        "{\"a\":19223372036854775807,\"a\":2}",
        "{\"a\":1e400,\"a\":2}",
        "12000000000070200000", /* past 64 bits, 15 significant digits */
        "{\"a\":\"\\ud800\"}",
        "{\"a\":\"\xff\"}",
        "{\"a\":tru}",
        "{\"a\":\"x",
        "",
    };
    for (size_t k = 0; k < sizeof differ / sizeof differ[0]; k++) {
        json_t *want = agti_json_parse(differ[k], strlen(differ[k]), "arguments");
        char wmsg[512];
        snprintf(wmsg, sizeof wmsg, "%s", want ? "" : agt_error_message());
        int wcode = want ? 0 : agt_error_code();
        json_t *got = agti_schema_parse_json(differ[k], strlen(differ[k]), "arguments");
        bool ok = want ? got != NULL && json_equal(want, got)
                       : got == NULL && agt_error_code() == wcode &&
                             strcmp(agt_error_message(), wmsg) == 0;
        T_CHECK(ok, "as jansson: %s (%s)", differ[k], want ? "read" : wmsg);
        json_decref(want);
        json_decref(got);
    }
    T_CHECK(agti_schema_parse_json(NULL, 0, "arguments") == NULL && agt_error_code() == AGT_EINVAL,
            "NULL text: AGT_EINVAL");
}

int main(void)
{
    test_parse_json();
    test_good();
    test_bad();
    test_unterminated();
    test_neighbours();
    test_utf8_blocks();
    test_lengths();
    return t_done();
}
