/* Glob on a generated tree of 1,440 files: the serial walk and the parallel
 * one (4 threads, helpers forced to start at once and to receive handouts)
 * give byte-identical results, and both give the result worked out from
 * the tree's own description: the matches not ignored and not sensitive,
 * newest first, equal times by path (many files share a time here, so the
 * tie-break decides most of the order), the first 100 and the counts. */
#include "fs/fs.h"
#include "wsfix.h"

#define NT 12
#define NS 10
#define NF 10

typedef struct want_hit {
    char path[64];
    long mtime;
} want_hit;

static long mtime_of(int t, int s, int f)
{
    return 1700000000L + (t * 31 + s * 7 + f * 3) % 50;
}

/* t03/.gitignore drops s1/ and *.c, t05/s5/.gitignore drops f00-f04.h, the
 * root's drops t11/; t02/s2/id_rsa.h is sensitive (id_rsa*). */
static void build(void)
{
    char rel[128];
    for (int t = 0; t < NT; t++)
        for (int s = 0; s < NS; s++) {
            for (int f = 0; f < NF; f++) {
                snprintf(rel, sizeof rel, "t%02d/s%d/f%02d.h", t, s, f);
                put_file(rel, "h");
                set_mtime(rel, mtime_of(t, s, f));
            }
            snprintf(rel, sizeof rel, "t%02d/s%d/g0.c", t, s);
            put_file(rel, "c");
            set_mtime(rel, mtime_of(t, s, 10));
            snprintf(rel, sizeof rel, "t%02d/s%d/g1.txt", t, s);
            put_file(rel, "t");
        }
    put_file(".gitignore", "t11/\n");
    put_file("t03/.gitignore", "s1/\n*.c\n");
    put_file("t05/s5/.gitignore", "f0[0-4].h\n");
    put_file("t02/s2/id_rsa.h", "k");
    set_mtime("t02/s2/id_rsa.h", 1800000000L);
    char link[1024];
    snprintf(link, sizeof link, "%s/t01/s1/link.h", ws);
    if (symlink("f00.h", link) != 0)
        t_diag("symlink failed");
}

static bool kept(int t, int s, int f, bool c_file)
{
    if (t == 11 || (t == 3 && (s == 1 || c_file)))
        return false;
    return !(t == 5 && s == 5 && !c_file && f <= 4);
}

static int by_result_order(const void *a, const void *b)
{
    const want_hit *x = a, *y = b;
    if (x->mtime != y->mtime)
        return x->mtime > y->mtime ? -1 : 1;
    return strcmp(x->path, y->path);
}

/* The expected text for the pattern "*.h" at any depth (with_c: .h and .c) in folder
 * t<only_t> (-1: the root); the paths shown start with that folder as the
 * root-relative ones do. */
static char *expected(bool with_c, int only_t)
{
    static want_hit v[NT * NS * (NF + 1)];
    size_t n = 0;
    for (int t = 0; t < NT; t++)
        for (int s = 0; s < NS; s++)
            for (int f = 0; f <= NF; f++) {
                bool c = f == NF;
                if ((only_t >= 0 && t != only_t) || (c && !with_c) || !kept(t, s, f, c))
                    continue;
                if (c)
                    snprintf(v[n].path, sizeof v[n].path, "t%02d/s%d/g0.c", t, s);
                else
                    snprintf(v[n].path, sizeof v[n].path, "t%02d/s%d/f%02d.h", t, s, f);
                v[n++].mtime = mtime_of(t, s, f);
            }
    qsort(v, n, sizeof v[0], by_result_order);
    size_t shown = n < 100 ? n : 100;
    char *out = malloc(shown * 64 + 512);
    out[0] = '\0';
    for (size_t i = 0; i < shown; i++) {
        strcat(out, v[i].path);
        strcat(out, "\n");
    }
    char tail[400];
    snprintf(tail, sizeof tail,
             "\nShowing the %zu most recently modified of %zu matching files; narrow the "
             "pattern or the folder to see the others.\n",
             shown, n);
    if (n > shown)
        strcat(out, tail);
    if (only_t < 0 || only_t == 2)
        strcat(out, n > shown ? "1 sensitive file matching the pattern was left out (.env files, "
                                "private keys, credentials).\n"
                              : "\n1 sensitive file matching the pattern was left out (.env "
                                "files, private keys, credentials).\n");
    out[strlen(out) - 1] = '\0';
    return out;
}

static char *glob_text(agt_session *s, const char *args, unsigned threads)
{
    agti_walk_force_threads = threads;
    agti_walk_force_parallel_after = threads > 1 ? 1 : 0;
    agti_walk_hold_main = threads > 1;
    agt_result *r = call(s, "Glob", args);
    agti_walk_force_threads = 0;
    agti_walk_force_parallel_after = 0;
    agti_walk_hold_main = false;
    char *t = strdup(agt_result_text(r));
    T_EQ_INT(agt_result_is_error(r), 0, "Glob %s with %u threads: not an error", args, threads);
    agt_result_free(r);
    return t;
}

int main(void)
{
    make_ws("globtree");
    build();
    agt_session *s = new_session();
    static const struct {
        const char *args;
        bool with_c;
        int only_t;
    } cases[] = {
        {"{\"pattern\":\"**/*.h\"}", false, -1},
        {"{\"pattern\":\"**/*.{h,c}\"}", true, -1},
        {"{\"pattern\":\"*.h\"}", false, -1},
        {"{\"pattern\":\"**/*.{h,c}\",\"path\":\"t03\"}", true, 3},
        {"{\"pattern\":\"**/*.h\",\"path\":\"t02\"}", false, 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *want = expected(cases[i].with_c, cases[i].only_t);
        char *serial = glob_text(s, cases[i].args, 1);
        T_EQ_STR(serial, want, "%s: serial walk, the result worked out from the tree",
                 cases[i].args);
        for (unsigned threads = 2; threads <= 4; threads += 2) {
            char *par = glob_text(s, cases[i].args, threads);
            T_EQ_STR(par, serial, "%s: %u threads, byte-identical to the serial walk",
                     cases[i].args, threads);
            free(par);
        }
        free(serial);
        free(want);
    }
    agt_session_free(s);
    rm_ws();
    return t_done();
}
