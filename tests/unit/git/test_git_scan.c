/*
 * The workspace scan (lib/git/scan.c): a workspace change set diffed by
 * the scan's list of paths must be the change set libgit2's diff of the
 * whole working tree gives (itself checked against the git CLI in
 * test_git_workspace.c and test_git_changes.c): the same files, statuses,
 * modes, hunks and contents, and the same reviewed-tree file list, in
 * every way a working tree can differ from its index. Each case starts
 * from a committed tree whose files are dated in the past (their stat
 * data is then trusted, so the scan leaves clean files out of its list),
 * changes it, and opens the change set both ways.
 */
#include "agenttools/diff.h"
#include "git/git_internal.h"
#include "gitfix.h"

static char dir[600];

static void base_repo(const char *name)
{
    snprintf(dir, sizeof(dir), "%s/%s", gf_root, name);
    mkdir(dir, 0755);
    gf_sh(dir, GIT "init -q");
    gf_puts(dir, "a.txt", "alpha\nbeta\ngamma\ndelta\nepsilon\n");
    gf_puts(dir, "b.txt", "bee\n");
    gf_puts(dir, "dir/c.txt", "sea\nsee\n");
    gf_puts(dir, "dir/sub/d.txt", "dee\n");
    gf_puts(dir, "other/e.txt", "ee\n");
    gf_puts(dir, "ign/tracked.o", "tracked though ignored\n");
    gf_puts(dir, "run.sh", "#!/bin/sh\necho run\n");
    gf_puts(dir, ".gitignore", "*.o\n!keep.o\nbuild/\nign/\n");
    gf_sh(dir, "chmod +x run.sh && ln -s a.txt link && "
               "touch -h -d '2020-01-02 03:04:05' a.txt b.txt dir/c.txt dir/sub/d.txt "
               "other/e.txt ign/tracked.o run.sh .gitignore link && " GIT "add -A && " GIT
               "add -f ign/tracked.o && " GIT "commit -q -m base");
}

static char *diff_json(const char *label, bool scan, size_t *hits)
{
    agti_git_scan_disable(!scan);
    size_t before = agti_git_scan_hits();
    agt_changes *c = NULL;
    int rc = agt_changes_open(&c, dir, AGT_CHANGES_WORKSPACE, NULL, NULL);
    agti_git_scan_disable(false);
    if (rc != AGT_OK) {
        T_CHECK(false, "%s: open (%s)", label, scan ? "scan" : "whole tree");
        t_diag("%s", agt_error_message());
        return NULL;
    }
    *hits = agti_git_scan_hits() - before;
    char *d = NULL, *files = NULL, *info = NULL;
    agt_diff_to_json(agt_changes_diff(c), &d);
    agt_changes_list_files(c, &files);
    agt_changes_info(c, &info);
    char *all = NULL;
    if (d && files && info) {
        size_t n = strlen(d) + strlen(files) + strlen(info) + 8;
        all = malloc(n);
        snprintf(all, n, "%s\n%s\n%s", info, files, d);
    }
    agt_free(d);
    agt_free(files);
    agt_free(info);
    agt_changes_free(c);
    return all;
}

/* Opens the change set both ways: the same; and the scan used or not. */
static void check(const char *label, bool want_scan)
{
    size_t hits_off = 0, hits_on = 0;
    char *whole = diff_json(label, false, &hits_off);
    char *scanned = diff_json(label, true, &hits_on);
    T_EQ_INT((long long)hits_off, 0, "%s: the whole tree diffed when the scan is off", label);
    T_EQ_INT((long long)hits_on, want_scan ? 1 : 0, "%s: the scan %s", label,
             want_scan ? "vouches for its list" : "gives up");
    T_CHECK(whole != NULL && scanned != NULL && strcmp(whole, scanned) == 0,
            "%s: the same change set both ways", label);
    if (whole && scanned && strcmp(whole, scanned) != 0)
        t_diag("whole tree:\n%s\nscan:\n%s", whole, scanned);
    free(whole);
    free(scanned);
}

static const struct {
    const char *label, *change;
    bool scan;
} cases[] = {
    {"clean", "true", true},
    {"an edit", "echo more >> a.txt", true},
    {"an edit of the same size, mtime put back",
     "printf 'ALPHA\\nbeta\\ngamma\\ndelta\\nepsilon\\n' > a.txt && touch -d '2020-01-02 03:04:05' "
     "a.txt",
     true},
    {"touched only", "touch b.txt", true},
    {"a deleted file", "rm b.txt", true},
    {"a deleted folder", "rm -r dir", true},
    {"a file now a folder", "rm b.txt && mkdir b.txt && echo x > b.txt/x", true},
    {"a folder now a file", "rm -r dir/sub && echo file > dir/sub", true},
    {"a folder now a link", "rm -r dir/sub && ln -s ../other dir/sub", true},
    {"a file now a link", "rm b.txt && ln -s a.txt b.txt", true},
    {"a link now a file", "rm link && echo text > link", true},
    {"a link retargeted", "rm link && ln -s b.txt link", true},
    {"executable bit dropped", "chmod -x run.sh", true},
    {"executable bit set", "chmod +x b.txt", true},
    {"untracked files", "echo u > u.txt && echo v > dir/sub/v.txt", true},
    {"untracked folders", "mkdir -p new/deep/er && echo n > new/deep/er/n.txt && mkdir empty",
     true},
    {"ignored files and folders",
     "echo o > dir/x.o && echo k > dir/keep.o && mkdir -p build/y && echo b > build/y/b.txt && "
     "echo i > ign/untracked.txt && mkdir onlyign && echo x > onlyign/x.o",
     true},
    {"a nested repository", "mkdir nested && cd nested && git init -q && echo n > n.txt", true},
    {"special names",
     "echo s > 'sp ace.txt' && echo s > 'a*b.txt' && echo s > 'q[1].txt' && echo s > \"$(printf "
     "'\\303\\274.txt')\" && echo s > dir/'?.txt'",
     true},
    {"staged and unstaged", "echo staged >> b.txt && " GIT "add b.txt && echo more >> b.txt", true},
    {"a staged rename with an edit", GIT "mv a.txt moved.txt && echo more >> moved.txt", true},
    {"an untracked copy", "cp a.txt copy.txt", true},
    {"a plain move", "mv a.txt plain-moved.txt", true},
    {"intent to add", "echo n > n.txt && " GIT "add -N n.txt", true},
    {"skip-worktree", GIT "update-index --skip-worktree b.txt && echo changed > b.txt", true},
    {"assume-unchanged", GIT "update-index --assume-unchanged b.txt && echo changed > b.txt", true},
    {"a submodule entry",
     GIT "update-index --add --cacheinfo 160000,"
         "1111111111111111111111111111111111111111,mod",
     true},
    {"racily clean", "echo same > r.txt && " GIT "add r.txt && echo SAME > r.txt", true},
    {"folders nested past the scan's depth",
     "d=$(printf 'n/%.0s' $(seq 1 95)) && mkdir -p $d && echo deep > ${d}f && " GIT
     "add -A && " GIT "commit -q -m deep && echo more >> ${d}f",
     false},
    {"a .git inside a tracked folder", "mkdir dir/.git && echo x > dir/.git/HEAD", false},
    {"core.ignorecase", GIT "config core.ignorecase true && echo more >> a.txt", false},
};

static void test_cases(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "scan%zu", i);
        base_repo(name);
        T_EQ_INT(gf_sh(dir, "%s", cases[i].change), 0, "%s: set up", cases[i].label);
        check(cases[i].label, cases[i].scan);
    }
}

static bool hexbytes(const char *hex, unsigned char *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1)
            return false;
        out[i] = (unsigned char)v;
    }
    return true;
}

/* Racily clean, for real: the index entry has the file's very stat data
 * but another blob (the id is swapped in the index file, its checksum
 * made again with sha1sum), and the file is dated after the index was
 * written, so its stat data cannot vouch for it: git and libgit2 hash it
 * and find it changed; a scan that trusted the stat data would not. */
static void test_racy(void)
{
    base_repo("scanracy");
    gf_puts(dir, "r.txt", "same\n");
    gf_sh(dir, GIT "add r.txt && " GIT "commit -q -m r");
    gf_puts(dir, "r.txt", "SAME\n");
    gf_sh(dir, "touch -d '+1 hour' r.txt && " GIT "add r.txt");
    char *want = gf_out(NULL, dir, GIT "rev-parse HEAD:r.txt");
    char path[700];
    snprintf(path, sizeof path, "%s/.git/index", dir);
    FILE *fp = fopen(path, "rb");
    unsigned char *b = malloc(1 << 16);
    size_t len = fp && b ? fread(b, 1, 1 << 16, fp) : 0;
    if (fp)
        fclose(fp);
    unsigned char id[20];
    unsigned char *at = NULL;
    for (size_t i = 62; len > 0 && i + 6 < len; i++)
        if (memcmp(b + i, "r.txt", 6) == 0 && b[i - 2] == 0 && b[i - 1] == 5) {
            at = b + i - 22; /* the id, then 16 bits of flags (name length 5) */
            break;
        }
    bool ok = want != NULL && hexbytes(want, id, 20) && at != NULL;
    T_CHECK(ok, "racy: the entry found in the index file");
    if (ok) {
        memcpy(at, id, 20);
        char body[760];
        snprintf(body, sizeof body, "%s/.git/index.body", dir);
        fp = fopen(body, "wb");
        fwrite(b, 1, len - 20, fp);
        fclose(fp);
        char *sum = gf_out(NULL, dir, "sha1sum .git/index.body && rm .git/index.body");
        ok = sum != NULL && hexbytes(sum, b + len - 20, 20);
        free(sum);
        fp = fopen(path, "wb");
        fwrite(b, 1, len, fp);
        fclose(fp);
        char *ls = gf_out(NULL, dir, GIT "ls-files -s r.txt");
        T_CHECK(ok && ls != NULL && strncmp(ls + 7, want, 40) == 0,
                "racy: git reads the patched index, r.txt at the old blob");
        free(ls);
        check("racily clean, stat data unchanged", true);
        char *st = gf_out(NULL, dir, GIT "status --porcelain r.txt");
        T_EQ_STR(st, " M r.txt\n", "racy: git sees r.txt modified (by content)");
        free(st);
    }
    free(want);
    free(b);
}

/* A conflicted merge: stages 1 to 3 of one path. */
static void test_conflict(void)
{
    base_repo("scanconflict");
    gf_sh(dir, GIT "checkout -q -b other && echo other > b.txt && " GIT
                   "commit -q -am other && " GIT "checkout -q main && echo mine > b.txt && " GIT
                   "commit -q -am mine && (" GIT "merge -q other >/dev/null 2>&1; true)");
    check("a conflict", true);
}

/* Most of the tree changed: the list would be longer than half the index,
 * and the scan gives up (the whole diff is as cheap). */
static void test_long_list(void)
{
    base_repo("scanlong");
    gf_sh(dir, "mkdir many && for i in $(seq 1 200); do echo $i > many/$i.txt; done && " GIT
               "add many && " GIT "commit -q -m many && touch many/*");
    check("most files touched", false);
}

int main(void)
{
    if (gf_setup() != 0) {
        printf("Bail out! cannot create a temp dir\n");
        return 1;
    }
    test_cases();
    test_racy();
    test_conflict();
    test_long_list();
    gf_teardown();
    return t_done();
}
