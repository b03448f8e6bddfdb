/*
 * The index file reader (lib/git/index_file.c) against git's own: the
 * entries of index files git wrote in versions 2, 3 and 4 (a path longer
 * than the 12-bit length field, a conflict's stages, intent-to-add and
 * skip-worktree entries) compared with `git ls-files -s -z`, the cache
 * tree's root with `git rev-parse HEAD^{tree}` (valid after a commit,
 * dropped by `git add` of a change), and every truncation and a run of
 * byte flips of a real index read without a crash.
 */
#include "git/index_file.h"

#include <fcntl.h>

#include "core/core.h"
#include "gitfix.h"

static char dir[600];

static void new_repo(const char *name)
{
    snprintf(dir, sizeof(dir), "%s/%s", gf_root, name);
    mkdir(dir, 0755);
    gf_sh(dir, GIT "init -q");
}

static int read_index(agti_index_file *f)
{
    char path[700];
    snprintf(path, sizeof path, "%s/.git/index", dir);
    return agti_index_file_read(path, (size_t)1 << 30, f);
}

/* The entries as `git ls-files -s -z` prints them: "mode id stage\tpath",
 * compared with what the reader gave (mode, stage, path; in order). */
static void check_entries(const char *label)
{
    agti_index_file f;
    int rc = read_index(&f);
    T_EQ_INT(rc, AGT_OK, "%s: read", label);
    if (rc != AGT_OK) {
        t_diag("%s", agt_error_message());
        return;
    }
    size_t len = 0;
    char *out = gf_out(&len, dir, GIT "ls-files -s -z");
    size_t k = 0, bad = 0;
    for (size_t off = 0; out != NULL && off < len; k++) {
        const char *rec = out + off;
        off += strlen(rec) + 1;
        unsigned mode = 0, stage = 0;
        char id[64];
        const char *tab = strchr(rec, '\t');
        if (tab == NULL || sscanf(rec, "%o %63s %u", &mode, id, &stage) != 3 || k >= f.n) {
            bad++;
            continue;
        }
        if (f.e[k].mode != mode || f.e[k].stage != stage || strcmp(f.e[k].path, tab + 1) != 0) {
            if (bad++ == 0)
                t_diag("%s: entry %zu: git %o %u %s, ours %o %u %s", label, k, mode, stage, tab + 1,
                       f.e[k].mode, f.e[k].stage, f.e[k].path);
        }
    }
    T_EQ_INT((long long)f.n, (long long)k, "%s: as many entries as git lists", label);
    T_EQ_INT((long long)bad, 0, "%s: every entry as git lists it", label);
    free(out);
    agti_index_file_free(&f);
}

static void hex(const unsigned char *id, char *out)
{
    for (int i = 0; i < 20; i++)
        sprintf(out + 2 * i, "%02x", id[i]);
}

static void check_root(const char *label, bool want_valid)
{
    agti_index_file f;
    if (read_index(&f) != AGT_OK) {
        T_CHECK(false, "%s: read", label);
        return;
    }
    T_CHECK(f.tree_root_valid == want_valid, "%s: cache tree root %s", label,
            want_valid ? "valid" : "dropped");
    if (want_valid && f.tree_root_valid) {
        char ours[41];
        hex(f.tree_root_id, ours);
        char *head = gf_out(NULL, dir, GIT "rev-parse HEAD^{tree}");
        if (head != NULL)
            head[strcspn(head, "\n")] = '\0';
        T_EQ_STR(ours, head, "%s: the root is HEAD's tree", label);
        T_EQ_INT((long long)f.tree_root_entries, (long long)f.n, "%s: the root covers every entry",
                 label);
        free(head);
    }
    agti_index_file_free(&f);
}

static void test_versions(void)
{
    new_repo("versions");
    gf_puts(dir, "a.txt", "a\n");
    gf_puts(dir, "b/c.txt", "c\n");
    gf_puts(dir, "b/d/e.txt", "e\n");
    gf_puts(dir, "b-z.txt", "z\n");
    gf_sh(dir, "ln -s a.txt link && chmod +x b/c.txt");
    gf_sh(dir, GIT "add -A && " GIT "commit -q -m one");
    check_entries("v2");
    check_root("v2 after commit", true);

    /* a path past the 12-bit length field (0xfff): the name is found by
     * its NUL; entered without a file (no PATH_MAX to meet) */
    char *longp = malloc(5200);
    size_t n = 0;
    for (int i = 0; i < 25; i++)
        n += (size_t)sprintf(longp + n, "%s%0199d", i ? "/" : "", i);
    char *blob = gf_out(NULL, dir, GIT "hash-object -w a.txt");
    char *info = malloc(5400);
    snprintf(info, 5400, "100644 %.40s\t%s\n", blob ? blob : "", longp);
    gf_puts(dir, ".git/long.info", info); /* past gf_sh's command buffer */
    T_EQ_INT(gf_sh(dir, GIT "update-index --index-info < .git/long.info"), 0,
             "v2: git entered the long path");
    free(blob);
    free(info);
    check_entries("v2, a 5,000-byte path");
    agti_index_file f;
    if (read_index(&f) == AGT_OK) {
        bool found = false;
        for (size_t i = 0; i < f.n; i++)
            found |= strcmp(f.e[i].path, longp) == 0;
        T_CHECK(found, "v2: the long path read whole");
        agti_index_file_free(&f);
    }
    free(longp);

    /* version 3: extended flags */
    gf_puts(dir, "new.txt", "intent\n");
    gf_sh(dir, GIT "add -N new.txt && " GIT "update-index --skip-worktree b-z.txt");
    check_entries("v3");
    if (read_index(&f) == AGT_OK) {
        T_EQ_INT(f.version, 3, "v3: version");
        for (size_t i = 0; i < f.n; i++) {
            if (strcmp(f.e[i].path, "new.txt") == 0)
                T_CHECK(f.e[i].intent_to_add && !f.e[i].skip_worktree, "v3: intent to add");
            if (strcmp(f.e[i].path, "b-z.txt") == 0)
                T_CHECK(f.e[i].skip_worktree && !f.e[i].intent_to_add, "v3: skip-worktree");
            if (strcmp(f.e[i].path, "a.txt") == 0)
                T_CHECK(!f.e[i].skip_worktree && !f.e[i].intent_to_add, "v3: plain entry");
        }
        agti_index_file_free(&f);
    }

    /* version 4: prefix-compressed paths */
    gf_sh(dir, GIT "update-index --index-version 4");
    check_entries("v4");
    if (read_index(&f) == AGT_OK) {
        T_EQ_INT(f.version, 4, "v4: version");
        agti_index_file_free(&f);
    }
}

static void test_cache_tree(void)
{
    new_repo("tree");
    gf_puts(dir, "a.txt", "a\n");
    gf_puts(dir, "sub/b.txt", "b\n");
    gf_sh(dir, GIT "add -A && " GIT "commit -q -m one");
    check_root("after commit", true);
    gf_puts(dir, "a.txt", "changed\n");
    check_root("an unstaged change", true);
    gf_sh(dir, GIT "add a.txt");
    check_root("a staged change", false);
    gf_sh(dir, GIT "commit -q -m two");
    check_root("after the second commit", true);
    gf_sh(dir, GIT "update-index --index-version 4");
    check_root("version 4", true);
}

static void test_conflict(void)
{
    new_repo("conflict");
    gf_puts(dir, "f.txt", "base\n");
    gf_sh(dir, GIT "add -A && " GIT "commit -q -m base && " GIT "checkout -q -b other && "
                   "echo other > f.txt && " GIT "commit -q -am other && " GIT "checkout -q main && "
                   "echo mine > f.txt && " GIT "commit -q -am mine && (" GIT
                   "merge -q other >/dev/null 2>&1; true)");
    check_entries("conflict");
    agti_index_file f;
    if (read_index(&f) == AGT_OK) {
        unsigned stages = 0;
        for (size_t i = 0; i < f.n; i++)
            if (strcmp(f.e[i].path, "f.txt") == 0)
                stages |= 1u << f.e[i].stage;
        T_EQ_INT(stages, 0xe, "conflict: stages 1, 2 and 3 of f.txt");
        T_CHECK(!f.tree_root_valid, "conflict: no valid cache tree root");
        agti_index_file_free(&f);
    }
}

static unsigned char *slurp(size_t *len)
{
    char path[700];
    snprintf(path, sizeof path, "%s/.git/index", dir);
    FILE *fp = fopen(path, "rb");
    if (fp == NULL)
        return NULL;
    unsigned char *b = malloc(1 << 20);
    *len = b ? fread(b, 1, 1 << 20, fp) : 0;
    fclose(fp);
    return b;
}

static void test_damage(void)
{
    const char *versions[] = {"2", "4"};
    for (int v = 0; v < 2; v++) {
        new_repo(v ? "damage4" : "damage2");
        gf_puts(dir, "a.txt", "a\n");
        gf_puts(dir, "dir/b.txt", "b\n");
        gf_puts(dir, "dir/c/d.txt", "d\n");
        gf_sh(dir,
              GIT "add -A && " GIT "commit -q -m one && " GIT "update-index --index-version %s",
              versions[v]);
        size_t len = 0;
        unsigned char *b = slurp(&len);
        if (b == NULL || len < 40) {
            T_CHECK(false, "damage v%s: index read", versions[v]);
            free(b);
            continue;
        }
        agti_index_file f;
        T_EQ_INT(agti_index_file_parse(b, len, &f), AGT_OK, "damage v%s: whole file", versions[v]);
        T_EQ_INT((long long)f.n, 3, "damage v%s: 3 entries", versions[v]);
        agti_index_file_free(&f);
        /* every shorter length: refused or read, never past the end (the
         * copy is exactly that long, for ASan to see an over-read) */
        size_t refused = 0;
        for (size_t cut = 0; cut < len; cut++) {
            unsigned char *c = malloc(cut ? cut : 1);
            memcpy(c, b, cut);
            int rc = agti_index_file_parse(c, cut, &f);
            if (rc == AGT_OK)
                agti_index_file_free(&f);
            else
                refused++;
            free(c);
        }
        /* the extensions and checksum can be cut into: most lengths fail */
        T_CHECK(refused > len / 2, "damage v%s: cut files refused (%zu of %zu)", versions[v],
                refused, len);
        unsigned seed = 12345;
        size_t empty = 0;
        for (int i = 0; i < 3000; i++) {
            unsigned char *c = malloc(len);
            memcpy(c, b, len);
            for (int k = 0; k < 1 + i % 4; k++) {
                seed = seed * 1103515245u + 12345u;
                c[(seed >> 8) % len] ^= (unsigned char)(1u << ((seed >> 4) % 8));
            }
            if (agti_index_file_parse(c, len, &f) == AGT_OK) {
                for (size_t e = 0; e < f.n; e++)
                    empty += f.e[e].path[0] == '\0';
                agti_index_file_free(&f);
            }
            free(c);
        }
        T_EQ_INT((long long)empty, 0, "damage v%s: flipped bytes: no empty path read", versions[v]);
        free(b);
    }
    agti_index_file f;
    T_EQ_INT(agti_index_file_parse((const unsigned char *)"DIRC", 4, &f), AGT_EPARSE,
             "4 bytes: not an index");
    unsigned char v5[32] = {'D', 'I', 'R', 'C', 0, 0, 0, 5};
    T_EQ_INT(agti_index_file_parse(v5, sizeof v5, &f), AGT_EUNSUPPORTED, "version 5: refused");
    unsigned char huge[32] = {'D', 'I', 'R', 'C', 0, 0, 0, 2, 0xff, 0xff, 0xff, 0xff};
    T_EQ_INT(agti_index_file_parse(huge, sizeof huge, &f), AGT_EPARSE,
             "4 billion entries in 32 bytes: refused before any allocation");
    char missing[700];
    snprintf(missing, sizeof missing, "%s/no-such-index", gf_root);
    T_EQ_INT(agti_index_file_read(missing, 1 << 20, &f), AGT_ENOTFOUND, "no file: not found");
}

/* Indexes this reader leaves to libgit2 (which cannot read them either):
 * a split index, whose entries that replace shared ones have empty paths,
 * and a sparse index's folder entries. Both say so (AGT_EUNSUPPORTED);
 * an empty path in an index that is not split stays malformed. */
static void test_split_and_sparse(void)
{
    new_repo("split");
    gf_split_index(dir);
    agti_index_file f;
    T_EQ_INT(read_index(&f), AGT_EUNSUPPORTED, "split index with a replaced entry: unsupported");
    T_EQ_INT(f.refused, AGTI_INDEX_SPLIT, "split index: the kind told");
    T_CHECK(strstr(agt_error_message(), "a split index") != NULL, "split index: named (%s)",
            agt_error_message());

    new_repo("sparse");
    gf_puts(dir, "a.txt", "a\n");
    gf_puts(dir, "dir/c.txt", "c\n");
    gf_puts(dir, "out/d.txt", "d\n");
    gf_sh(dir, GIT "add -A && " GIT "commit -q -m one && " GIT
                   "sparse-checkout init --cone --sparse-index && " GIT "sparse-checkout set dir");
    T_EQ_INT(read_index(&f), AGT_EUNSUPPORTED, "sparse index: unsupported");
    T_EQ_INT(f.refused, AGTI_INDEX_SPARSE, "sparse index: the kind told");
    T_CHECK(strstr(agt_error_message(), "a sparse") != NULL, "sparse index: named (%s)",
            agt_error_message());

    /* version 2, one entry "x" (mode 100644), its path cut to nothing
     * by hand: flags' name length 0 and a NUL where 'x' was */
    new_repo("emptypath");
    gf_puts(dir, "x", "x\n");
    gf_sh(dir, GIT "add x");
    size_t len = 0;
    unsigned char *b = slurp(&len);
    if (b != NULL && len > 12 + 62 + 1) {
        b[12 + 60] &= 0xf0;
        b[12 + 61] = 0;
        b[12 + 62] = '\0';
        T_EQ_INT(agti_index_file_parse(b, len, &f), AGT_EPARSE,
                 "an empty path, not split: malformed");
        T_CHECK(strstr(agt_error_message(), "an empty path") != NULL, "empty path: named (%s)",
                agt_error_message());
    } else {
        T_CHECK(false, "emptypath: index read");
    }
    free(b);
}

int main(void)
{
    if (gf_setup() != 0) {
        printf("Bail out! cannot create a temp dir\n");
        return 1;
    }
    test_versions();
    test_cache_tree();
    test_conflict();
    test_damage();
    test_split_and_sparse();
    gf_teardown();
    return t_done();
}
