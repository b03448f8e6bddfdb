/* Other names of a sensitive file: a git rename or copy from or to one in
 * the reviewed change set, a hard link to one, a symbolic link to one, and
 * the spellings of a path that lead to one (./, sub/.., absolute, globs).
 * Each must keep the sensitive file's content from every tool, while a
 * plain file beside it (and a plain rename, a plain hard link) stays shown.
 * Expected outcomes follow docs/sensitive-files.md and what git and ln(1)
 * make of the tree, not what the code printed. */
#include <stdbool.h>

#include "wsfix.h"

static agt_registry *rreg;

#define GIT "git -c user.name=T -c user.email=t@example.com "

static agt_session *review_session(const char *repo, int mode)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s", ws, repo);
    agt_session *s = NULL;
    if (agt_session_new(&s, rreg, path) != AGT_OK ||
        agt_session_open_review(s, path, mode, NULL, NULL) != AGT_OK) {
        printf("Bail out! review session %s: %s\n", repo, agt_error_message());
        exit(1);
    }
    return s;
}

/* Twelve lines, one of them with the mark: a rename that changes one line
 * stays above git's 50% similarity. */
static void put_lines(const char *rel, const char *mark)
{
    char text[1024];
    int n = 0;
    for (int i = 1; i <= 12; i++)
        n += snprintf(text + n, sizeof text - (size_t)n, i == 6 ? "KEY%d=%s\n" : "LINE%d=plain\n",
                      i, mark);
    put_file(rel, text);
}

static bool has(const char *t, const char *s)
{
    return strstr(t, s) != NULL;
}

/* ---- renames in the change set ------------------------------------------ */

/* Makes dir a repository with everything in it committed, then runs more
 * (shell commands, may be ""). */
static void git_base(const char *dir, const char *more)
{
    if (ws_sh("cd %s && git init -q . && git add -A && " GIT "commit -q -m base%s%s", dir,
              more[0] ? " && " : "", more) != 0) {
        printf("Bail out! git in %s\n", dir);
        exit(1);
    }
}

/* file_read_diff shows nothing of the file at path (and file_read neither,
 * whether it refuses or does not find it). */
static void review_hidden(agt_session *rev, const char *path, const char *mark, const char *what)
{
    char args[512];
    int st;
    snprintf(args, sizeof args, "{\"path_array\":[\"%s\"]}", path);
    const char *t = ws_run(rev, "file_read_diff", args, &st);
    T_CHECK(!has(t, mark) && has(t, "[diff not shown: "), "%s: file_read_diff %s hides it: %s",
            what, path, flat(t));
    T_CHECK(!has(t, "LINE1=plain"), "%s: file_read_diff %s shows no line of it", what, path);
    snprintf(args, sizeof args, "{\"file_path\":\"%s\"}", path);
    t = ws_run(rev, "file_read", args, &st);
    T_CHECK(st != AGT_OK && !has(t, mark), "%s: file_read %s shows nothing: %s", what, path,
            flat(t));
}

static void renames(void)
{
    /* base: the secret .env, a file that becomes .env.local, a plain file */
    put_lines("r1/.env", "old-env-secret");
    put_lines("r1/draft.txt", "becomes-env-secret");
    put_lines("r1/a.txt", "plain-rename");
    git_base("r1", "");
    /* git mv .env notes.txt and change a line; git mv draft.txt .env.local
     * (a rename TO a sensitive name); a plain rename a.txt -> b.txt */
    if (ws_sh(
            "cd r1 && git mv .env notes.txt && git mv draft.txt .env.local && git mv a.txt b.txt "
            "&& sed -i 's/^LINE2=plain/LINE2=edited/' notes.txt .env.local b.txt && git add -A") !=
        0) {
        printf("Bail out! git mv\n");
        exit(1);
    }
    agt_session *rev = review_session("r1", AGT_CHANGES_WORKSPACE);
    const agt_diff *d = agt_changes_diff(agt_session_changes(rev));
    size_t idx = 0;
    T_CHECK(agt_diff_file_index(d, "notes.txt", &idx) == AGT_OK &&
                agt_diff_file_status(d, idx) == AGT_DIFF_RENAMED,
            "setup: git sees .env -> notes.txt as a rename");
    int st;
    review_hidden(rev, "notes.txt", "old-env-secret", "rename from .env");
    review_hidden(rev, ".env", "old-env-secret", "rename from .env (old path)");
    review_hidden(rev, "draft.txt", "becomes-env-secret", "rename to .env.local (old path)");
    review_hidden(rev, ".env.local", "becomes-env-secret", "rename to .env.local");
    const char *t = ws_run(rev, "file_read_diff", "{\"path_array\":[\"b.txt\"]}", &st);
    T_CHECK(st == AGT_OK && has(t, "+LINE2=edited") && has(t, "-LINE2=plain"),
            "plain rename: its diff is shown: %s", flat(t));
    t = ws_run(rev, "file_read_diff", "{\"path_array\":[\"./notes.txt\"]}", &st);
    T_CHECK(!has(t, "old-env-secret"), "rename from .env: ./notes.txt hides it: %s", flat(t));

    t = ws_run(rev, "file_read", "{\"file_path\":\"notes.txt\"}", &st);
    T_CHECK(st == AGT_EDENIED && !has(t, "old-env-secret") && has(t, "sensitive"),
            "rename from .env: file_read notes.txt refused: %s", flat(t));
    t = ws_run(rev, "file_read", "{\"file_path\":\"./notes.txt\"}", &st);
    T_CHECK(st == AGT_EDENIED && !has(t, "old-env-secret"),
            "rename from .env: file_read ./notes.txt refused: %s", flat(t));
    t = ws_run(rev, "file_read", "{\"file_path\":\"b.txt\"}", &st);
    T_CHECK(st == AGT_OK && has(t, "plain-rename"), "plain rename: file_read shown: %s", flat(t));

    t = ws_run(rev, "code_search", "{\"search_text\":\"secret\"}", &st);
    T_CHECK(!has(t, "old-env-secret") && !has(t, "becomes-env-secret"),
            "renames: code_search shows neither: %s", flat(t));
    T_CHECK(has(t, "2 sensitive files"), "renames: code_search counts both: %s", flat(t));
    t = ws_run(rev, "code_search", "{\"search_text\":\"LINE1\"}", &st);
    T_CHECK(has(t, "File: b.txt") && !has(t, "File: notes.txt") && !has(t, "File: .env"),
            "renames: code_search shows only the plain file: %s", flat(t));

    /* the host's own check, with the change set under review */
    const char *why = NULL;
    T_EQ_INT(agt_session_check_sensitive(rev, "notes.txt", NULL, 0, &why), 1,
             "check_sensitive: notes.txt, renamed from .env");
    T_EQ_STR(why, "renamed or copied from or to a sensitive file in the change set",
             "check_sensitive: the reason");
    T_EQ_INT(agt_session_check_sensitive(rev, "draft.txt", NULL, 0, NULL), 1,
             "check_sensitive: draft.txt, renamed to .env.local");
    T_EQ_INT(agt_session_check_sensitive(rev, "b.txt", NULL, 0, NULL), 0,
             "check_sensitive: b.txt, a plain rename");
    T_EQ_INT(agt_session_check_sensitive(NULL, "notes.txt", NULL, 0, NULL), 0,
             "check_sensitive without a session: the name only");
    /* a pattern added later: what was found under the old patterns is not
     * reused (a.txt -> b.txt now has a sensitive side) */
    T_EQ_INT(agt_session_check_sensitive(rev, "a.txt", NULL, 0, NULL), 0,
             "check_sensitive: a.txt before a pattern names b.txt");
    agt_session *rev2 = review_session("r1", AGT_CHANGES_WORKSPACE);
    T_EQ_INT(agt_session_add_sensitive_pattern(rev2, "b.txt"), AGT_OK, "add pattern b.txt");
    T_EQ_INT(agt_session_set_changes(rev2, agt_session_changes(rev)), AGT_OK,
             "second session borrows the first one's change set");
    T_EQ_INT(agt_session_check_sensitive(rev2, "a.txt", NULL, 0, &why), 1,
             "check_sensitive: a.txt once b.txt is sensitive (its rename's other side)");
    T_EQ_INT(agt_session_check_sensitive(rev, "a.txt", NULL, 0, NULL), 0,
             "check_sensitive: still not under the first session's patterns");
    agt_session_free(rev2);
    t = ws_run(rev, "file_find", "{\"query_name\":\"txt\"}", &st);
    T_CHECK(has(t, "b.txt") && !has(t, "notes.txt"),
            "rename from .env: file_find leaves notes.txt out: %s", flat(t));

    /* comments: anchoring in the renamed .env must not tell whether a
     * guessed line is in it */
    t = ws_run(rev, "code_comment",
               "{\"comments\":[{\"path\":\"notes.txt\",\"content\":\"c\","
               "\"existing_code\":\"KEY6=old-env-secret\"}]}",
               &st);
    T_CHECK(!has(t, "notes.txt:6") && has(t, "sensitive"),
            "rename from .env: code_comment does not place a comment in it: %s", flat(t));
    t = ws_run(rev, "code_comment",
               "{\"comments\":[{\"content\":\"c\",\"existing_code\":\"KEY6=old-env-secret\"}]}",
               &st);
    T_CHECK(!has(t, "notes.txt") && has(t, "not anchored") && has(t, "was not found"),
            "rename from .env: a comment without a path is not placed in it: %s", flat(t));
    t = ws_run(rev, "code_comment",
               "{\"comments\":[{\"path\":\"b.txt\",\"content\":\"c\","
               "\"existing_code\":\"KEY6=old-env-secret\"}]}",
               &st);
    T_CHECK(!has(t, "notes.txt") && !has(t, "moved") && has(t, "not anchored"),
            "rename from .env: a comment on b.txt is not moved into it: %s", flat(t));
    t = ws_run(rev, "code_comment",
               "{\"comments\":[{\"path\":\"b.txt\",\"content\":\"c\","
               "\"existing_code\":\"LINE2=edited\"}]}",
               &st);
    T_CHECK(has(t, "b.txt:2"), "plain rename: a comment is placed: %s", flat(t));
    t = ws_run(rev, "file_read_diff", "{\"path_array\":[\"b/notes.txt\",\"a/.env\"]}", &st);
    T_CHECK(!has(t, "old-env-secret") && !has(t, "LINE1=plain"),
            "rename from .env: a/ and b/ prefixes hide it too: %s", flat(t));
    agt_session_free(rev);

    /* the same rename as a commit, reviewed in commit mode: reads at the
     * commit */
    if (ws_sh("cd r1 && " GIT "commit -q -m renames") != 0) {
        printf("Bail out! commit\n");
        exit(1);
    }
    rev = review_session("r1", AGT_CHANGES_COMMIT);
    review_hidden(rev, "notes.txt", "old-env-secret", "commit mode: rename from .env");
    review_hidden(rev, "draft.txt", "becomes-env-secret", "commit mode: rename to .env.local");
    t = ws_run(rev, "file_read", "{\"file_path\":\"notes.txt\"}", &st);
    T_CHECK(st == AGT_EDENIED && !has(t, "old-env-secret"),
            "commit mode: file_read notes.txt refused: %s", flat(t));
    t = ws_run(rev, "code_search", "{\"search_text\":\"secret\"}", &st);
    T_CHECK(!has(t, "old-env-secret") && !has(t, "becomes-env-secret"),
            "commit mode: code_search shows neither: %s", flat(t));
    t = ws_run(rev, "file_read", "{\"file_path\":\"b.txt\"}", &st);
    T_CHECK(st == AGT_OK && has(t, "plain-rename"), "commit mode: plain file shown: %s", flat(t));
    agt_session_free(rev);
}

/* A plain mv (no git mv): the working tree deletes the tracked .env and
 * has an untracked notes.txt, which git never pairs as a rename; and the
 * other way, a tracked draft becomes an untracked .env.prod. */
static void plain_moves(void)
{
    put_lines("r4/.env", "mv-env-secret");
    put_lines("r4/draft.txt", "mv-draft-secret");
    /* a plain file of its own text, and one sharing two lines of .env */
    put_file("r4/a.txt", "alpha\nbeta\ngamma\nKEY6=mv-plain\n");
    put_file("r4/c.txt", "LINE1=plain\nLINE3=plain\nsomething else\nand more text\n");
    git_base("r4", "mv .env notes.txt && mv draft.txt .env.prod && mv a.txt b.txt && "
                   "mv c.txt d.txt && sed -i 's/^LINE2=plain/LINE2=edited/' notes.txt .env.prod && "
                   "seq 1 40 >> notes.txt");
    agt_session *rev = review_session("r4", AGT_CHANGES_WORKSPACE);
    int st;
    review_hidden(rev, "notes.txt", "mv-env-secret", "mv .env notes.txt");
    review_hidden(rev, "draft.txt", "mv-draft-secret", "mv draft.txt .env.prod (old path)");
    const char *t = ws_run(rev, "code_search", "{\"search_text\":\"secret\"}", &st);
    T_CHECK(!has(t, "mv-env-secret") && !has(t, "mv-draft-secret"),
            "plain moves: code_search shows neither: %s", flat(t));
    t = ws_run(rev, "file_read", "{\"file_path\":\"b.txt\"}", &st);
    T_CHECK(st == AGT_OK && has(t, "mv-plain"), "plain move of a plain file: shown: %s", flat(t));
    t = ws_run(rev, "file_read_diff", "{\"path_array\":[\"a.txt\"]}", &st);
    T_CHECK(st == AGT_OK && has(t, "-KEY6=mv-plain"), "plain move: a.txt's diff shown: %s",
            flat(t));
    const char *why = NULL;
    T_EQ_INT(agt_session_check_sensitive(rev, "notes.txt", NULL, 0, &why), 1,
             "check_sensitive: notes.txt after mv .env notes.txt");
    T_EQ_STR(why, "holds most of a sensitive file (moved or copied)",
             "check_sensitive: the reason of a move");
    T_EQ_INT(agt_session_check_sensitive(rev, "d.txt", NULL, 0, NULL), 0,
             "check_sensitive: d.txt shares two lines only");
    t = ws_run(rev, "file_read", "{\"file_path\":\"d.txt\"}", &st);
    T_CHECK(st == AGT_OK && has(t, "something else"),
            "a file sharing two lines with .env: shown: %s", flat(t));
    agt_session_free(rev);
}

/* Copies from sensitive files the change set leaves alone: an ignored
 * .env copied to an untracked notes.txt, a tracked config/.env.prod copied
 * and staged; then the same reviewed as a commit. */
static void copies(void)
{
    put_file("r5/.gitignore", ".env\n");
    put_lines("r5/.env", "cp-ignored-secret");
    put_lines("r5/config/.env.prod", "cp-tracked-secret");
    put_file("r5/app.py", "print('hi')\n");
    git_base("r5", "cp .env notes.txt && cp config/.env.prod config/copy.txt && "
                   "git add config/copy.txt && echo 'print(1)' > new.py");
    agt_session *rev = review_session("r5", AGT_CHANGES_WORKSPACE);
    int st;
    review_hidden(rev, "notes.txt", "cp-ignored-secret", "cp .env notes.txt (.env ignored)");
    review_hidden(rev, "config/copy.txt", "cp-tracked-secret", "cp of a tracked .env.prod");
    const char *t = ws_run(rev, "code_search", "{\"search_text\":\"secret\"}", &st);
    T_CHECK(!has(t, "cp-ignored-secret") && !has(t, "cp-tracked-secret"),
            "copies: code_search shows neither: %s", flat(t));
    t = ws_run(rev, "file_read_diff", "{\"path_array\":[\"new.py\"]}", &st);
    T_CHECK(st == AGT_OK && has(t, "+print(1)"), "copies: a new plain file shown: %s", flat(t));
    agt_session_free(rev);
    if (ws_sh("cd r5 && git add notes.txt new.py && " GIT "commit -q -m copies") != 0) {
        printf("Bail out! commit r5\n");
        exit(1);
    }
    rev = review_session("r5", AGT_CHANGES_COMMIT);
    review_hidden(rev, "config/copy.txt", "cp-tracked-secret", "commit mode: copy of .env.prod");
    t = ws_run(rev, "file_read", "{\"file_path\":\"config/copy.txt\"}", &st);
    T_CHECK(st == AGT_EDENIED, "commit mode: file_read of the copy refused: %s", flat(t));
    t = ws_run(rev, "file_read", "{\"file_path\":\"new.py\"}", &st);
    T_CHECK(st == AGT_OK && has(t, "print(1)"), "commit mode: new.py shown: %s", flat(t));
    agt_session_free(rev);
}

/* ---- hard links --------------------------------------------------------- */

static void hard_links(void)
{
    put_file("h1/.env", "TOKEN=hard-one-secret\n");
    put_file("h1/ok.txt", "hard-one-ok\n");
    put_file("h3/a.txt", "hard-three-plain\n");
    /* h2: the .env is ignored, so a walk never meets it, only its link */
    put_file("h2/.gitignore", ".env\n");
    put_file("h2/.env", "TOKEN=hard-two-secret\n");
    put_file("h2/ok.txt", "hard-two-ok\n");
    if (ws_sh("ln h1/.env h1/notes.txt && ln h3/a.txt h3/b.txt && ln h2/.env h2/notes.txt && "
              "mkdir -p h1/deep/er && ln h1/.env h1/deep/er/data.csv") != 0) {
        printf("Bail out! ln\n");
        exit(1);
    }
    agt_session *chat = new_session();
    int st;
    const char *t = ws_run(chat, "Read", "{\"path\":\"h1/notes.txt\"}", &st);
    T_CHECK(st == AGT_EDENIED && !has(t, "hard-one-secret") && has(t, "sensitive"),
            "hard link: Read refused: %s", flat(t));
    t = ws_run(chat, "Read", "{\"path\":\"h1/deep/er/data.csv\"}", &st);
    T_CHECK(st == AGT_EDENIED && !has(t, "hard-one-secret"),
            "hard link in another folder: Read refused: %s", flat(t));
    t = ws_run(chat, "Read", "{\"path\":\"h2/notes.txt\"}", &st);
    T_CHECK(st == AGT_EDENIED && !has(t, "hard-two-secret"),
            "hard link to an ignored .env: Read refused: %s", flat(t));
    t = ws_run(chat, "Read", "{\"path\":\"h3/b.txt\"}", &st);
    T_CHECK(st == AGT_OK && has(t, "hard-three-plain"), "plain hard link: Read shown: %s", flat(t));
    t = ws_run(chat, "Grep", "{\"pattern\":\"hard-\",\"output_mode\":\"content\"}", &st);
    T_CHECK(!has(t, "secret") && has(t, "hard-one-ok") && has(t, "hard-two-ok") &&
                has(t, "hard-three-plain"),
            "hard links: Grep over the workspace shows none: %s", flat(t));
    t = ws_run(chat, "Grep", "{\"pattern\":\"hard-\",\"output_mode\":\"files_with_matches\"}", &st);
    T_CHECK(!has(t, "notes.txt") && !has(t, "data.csv") && has(t, "h3/b.txt"),
            "hard links: Grep files_with_matches lists none: %s", flat(t));
    t = ws_run(chat, "Grep", "{\"pattern\":\"TOKEN\",\"output_mode\":\"count\"}", &st);
    T_CHECK(!has(t, "notes.txt") && !has(t, "data.csv"), "hard links: Grep count lists none: %s",
            flat(t));
    t = ws_run(chat, "Grep",
               "{\"pattern\":\"hard-\",\"path\":\"h1/notes.txt\",\"output_mode\":\"content\"}",
               &st);
    T_CHECK(!has(t, "hard-one-secret"), "hard link: Grep on the file itself: %s", flat(t));
    /* what Grep says of the link must not tell a right guess of its content
     * from a wrong one (a count of the dropped file did) */
    {
        char *right = strdup(
            ws_run(chat, "Grep", "{\"pattern\":\"hard-one-s\",\"path\":\"h1/notes.txt\"}", &st));
        const char *wrong =
            ws_run(chat, "Grep", "{\"pattern\":\"hard-one-x\",\"path\":\"h1/notes.txt\"}", &st);
        T_EQ_STR(right, "No matches for 'hard-one-s'.",
                 "hard link: Grep answers a right guess as no match");
        T_EQ_STR(wrong, "No matches for 'hard-one-x'.", "hard link: and a wrong one the same way");
        free(right);
    }
    t = ws_run(chat, "Grep",
               "{\"pattern\":\"hard-\",\"include_ignored\":true,\"output_mode\":\"content\"}", &st);
    T_CHECK(!has(t, "secret"), "hard links: Grep include_ignored shows none: %s", flat(t));
    t = ws_run(chat, "Glob", "{\"pattern\":\"**/*\",\"path\":\"h1\"}", &st);
    T_CHECK(has(t, "ok.txt") && !has(t, "notes.txt") && !has(t, "data.csv"),
            "hard link: Glob leaves it out: %s", flat(t));
    t = ws_run(chat, "Glob", "{\"pattern\":\"*\",\"path\":\"h3\"}", &st);
    T_CHECK(has(t, "a.txt") && has(t, "b.txt"), "plain hard link: Glob lists both: %s", flat(t));
    t = ws_run(chat, "Edit",
               "{\"path\":\"h1/notes.txt\",\"old_string\":\"TOKEN\",\"new_string\":\"X\"}", &st);
    T_EQ_INT(st, AGT_EDENIED, "hard link: Edit refused");
    t = ws_run(chat, "Write", "{\"path\":\"h1/notes.txt\",\"content\":\"overwritten\\n\"}", &st);
    T_EQ_INT(st, AGT_EDENIED, "hard link: Write refused");
    t = ws_run(chat, "MultiEdit",
               "{\"path\":\"h1/notes.txt\",\"edits\":[{\"old_string\":\"TOKEN\",\"new_string\":"
               "\"X\"}]}",
               &st);
    T_EQ_INT(st, AGT_EDENIED, "hard link: MultiEdit refused");
    t = ws_run(chat, "ReadMediaFile", "{\"path\":\"h1/notes.txt\"}", &st);
    T_CHECK(st == AGT_EDENIED && !has(t, "hard-one-secret"), "hard link: ReadMediaFile refused: %s",
            flat(t));
    t = ws_run(chat, "apply_patch",
               "{\"input\":\"*** Begin Patch\\n*** Update File: h1/notes.txt\\n@@\\n"
               "-TOKEN=hard-one-secret\\n+TOKEN=x\\n*** End Patch\\n\"}",
               &st);
    T_CHECK(st != AGT_OK && !has(t, "hard-one-secret"), "hard link: apply_patch refused: %s",
            flat(t));
    T_EQ_STR(get_file("h1/.env", NULL), "TOKEN=hard-one-secret\n", "hard link: .env unchanged");
    agt_session_free(chat);

    /* the review tools over a working tree with the link untracked */
    put_file("r2/ok.txt", "base\n");
    git_base("r2", "printf 'TOKEN=hard-rev-secret\\n' > .env && echo .env > .gitignore && "
                   "ln .env notes.txt && echo 'hard-rev-ok' >> ok.txt");
    agt_session *rev = review_session("r2", AGT_CHANGES_WORKSPACE);
    t = ws_run(rev, "file_read", "{\"file_path\":\"notes.txt\"}", &st);
    T_CHECK(st == AGT_EDENIED && !has(t, "hard-rev-secret"),
            "review: file_read of a hard link refused: %s", flat(t));
    t = ws_run(rev, "file_read_diff", "{\"path_array\":[\"notes.txt\",\"ok.txt\"]}", &st);
    T_CHECK(!has(t, "hard-rev-secret") && has(t, "+hard-rev-ok"),
            "review: file_read_diff hides the hard link: %s", flat(t));
    t = ws_run(rev, "code_search", "{\"search_text\":\"hard-rev\"}", &st);
    T_CHECK(!has(t, "hard-rev-secret") && has(t, "hard-rev-ok"),
            "review: code_search hides the hard link: %s", flat(t));
    t = ws_run(rev, "file_find", "{\"query_name\":\"notes\"}", &st);
    T_CHECK(!has(t, "notes.txt"), "review: file_find leaves the hard link out: %s", flat(t));
    agt_session_free(rev);
}

/* ---- symbolic links ----------------------------------------------------- */

static void symlinks(void)
{
    put_file("l1/.env", "TOKEN=link-one-secret\n");
    put_file("l1/.aws/credentials", "aws_secret=link-aws-secret\n");
    put_file("l1/real/.env.prod", "TOKEN=link-dir-secret\n");
    if (ws_sh("cd l1 && ln -s .env link.txt && ln -s .aws/credentials creds.txt && "
              "ln -s real cfg && ln -s \"$PWD/.env\" abs.txt && ln -s link.txt chain.txt && "
              "ln -s .aws awsdir") != 0) {
        printf("Bail out! ln -s\n");
        exit(1);
    }
    agt_session *chat = new_session();
    int st;
    static const char *const links[] = {"l1/link.txt", "l1/creds.txt", "l1/cfg/.env.prod",
                                        "l1/abs.txt",  "l1/chain.txt", "l1/awsdir/credentials"};
    for (size_t i = 0; i < sizeof links / sizeof *links; i++) {
        char args[256];
        snprintf(args, sizeof args, "{\"path\":\"%s\"}", links[i]);
        const char *t = ws_run(chat, "Read", args, &st);
        T_CHECK(st == AGT_EDENIED && !has(t, "-secret"), "symlink %s: Read refused: %s", links[i],
                flat(t));
        snprintf(args, sizeof args,
                 "{\"pattern\":\"secret\",\"path\":\"%s\",\"output_mode\":\"content\"}", links[i]);
        t = ws_run(chat, "Grep", args, &st);
        T_CHECK(!has(t, "-secret"), "symlink %s: Grep on it: %s", links[i], flat(t));
        snprintf(args, sizeof args,
                 "{\"path\":\"%s\",\"old_string\":\"TOKEN\",\"new_string\":\"X\"}", links[i]);
        ws_run(chat, "Edit", args, &st);
        T_EQ_INT(st, AGT_EDENIED, "symlink %s: Edit refused", links[i]);
    }
    const char *t = ws_run(chat, "Grep", "{\"pattern\":\"secret\",\"path\":\"l1\"}", &st);
    T_CHECK(!has(t, "link.txt") && !has(t, "creds.txt") && !has(t, "abs.txt"),
            "symlinks: Grep over the folder lists none: %s", flat(t));
    T_EQ_STR(get_file("l1/.env", NULL), "TOKEN=link-one-secret\n", "symlinks: .env unchanged");
    agt_session_free(chat);

    /* the review tools: a tracked folder replaced by a link to .aws, so
     * the tracked path conf/credentials would lead to .aws/credentials */
    put_file("r3/conf/credentials", "plain-conf\n");
    put_file("r3/ok.txt", "base\n");
    git_base("r3", "mkdir .aws && printf 'aws_secret=link-rev-secret\\n' > .aws/credentials && "
                   "echo .aws > .gitignore && rm -r conf && ln -s .aws conf && "
                   "ln -s .aws/credentials creds.txt && echo more >> ok.txt");
    agt_session *rev = review_session("r3", AGT_CHANGES_WORKSPACE);
    static const char *const rpaths[] = {"conf/credentials", "creds.txt", "conf"};
    for (size_t i = 0; i < sizeof rpaths / sizeof *rpaths; i++) {
        char args[256];
        snprintf(args, sizeof args, "{\"file_path\":\"%s\"}", rpaths[i]);
        t = ws_run(rev, "file_read", args, &st);
        T_CHECK(!has(t, "link-rev-secret"), "review: file_read %s through a link: %s", rpaths[i],
                flat(t));
        snprintf(args, sizeof args, "{\"path_array\":[\"%s\"]}", rpaths[i]);
        t = ws_run(rev, "file_read_diff", args, &st);
        T_CHECK(!has(t, "link-rev-secret"), "review: file_read_diff %s through a link: %s",
                rpaths[i], flat(t));
    }
    t = ws_run(rev, "code_search", "{\"search_text\":\"secret\"}", &st);
    T_CHECK(!has(t, "link-rev-secret"), "review: code_search through links: %s", flat(t));
    agt_session_free(rev);
}

/* ---- spellings of a path to .env ---------------------------------------- */

static void spellings(void)
{
    put_file("g1/.env", "TOKEN=spell-secret\n");
    put_file("g1/sub/ok.txt", "spell-ok\n");
    put_file("g2/.ENV", "TOKEN=spell-upper-secret\n");
    put_file("g2/Config/.Env.Local", "TOKEN=spell-mixed-secret\n");
    agt_session *chat = new_session();
    char abs[700];
    snprintf(abs, sizeof abs, "%s/g1/.env", ws);
    const char *paths[] = {"g1/.env",  "./g1/.env", "g1/sub/../.env", "g1/./.env",
                           "g1//.env", abs,         "g2/.ENV",        "g2/Config/.Env.Local"};
    int st;
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
        char args[900];
        snprintf(args, sizeof args, "{\"path\":\"%s\"}", paths[i]);
        const char *t = ws_run(chat, "Read", args, &st);
        T_CHECK(st == AGT_EDENIED && !has(t, "-secret"), "Read %s refused: %s", paths[i], flat(t));
        snprintf(args, sizeof args,
                 "{\"pattern\":\"spell\",\"path\":\"%s\",\"output_mode\":\"content\"}", paths[i]);
        t = ws_run(chat, "Grep", args, &st);
        T_CHECK(!has(t, "-secret"), "Grep path %s: %s", paths[i], flat(t));
        snprintf(args, sizeof args,
                 "{\"pattern\":\"spell\",\"path\":\"%s\",\"output_mode\":\"count\"}", paths[i]);
        t = ws_run(chat, "Grep", args, &st);
        T_CHECK(!has(t, ":1"), "Grep count path %s: %s", paths[i], flat(t));
    }
    static const char *const globs[] = {".env", "*.env", "**/.env",  ".ENV",   "*",
                                        "**/*", ".e*",   "{.env,x}", "[.]env", "**/.[eE]*"};
    for (size_t i = 0; i < sizeof globs / sizeof *globs; i++) {
        char args[300];
        snprintf(args, sizeof args,
                 "{\"pattern\":\"spell\",\"glob\":\"%s\",\"output_mode\":\"content\"}", globs[i]);
        const char *t = ws_run(chat, "Grep", args, &st);
        T_CHECK(!has(t, "-secret"), "Grep glob %s: %s", globs[i], flat(t));
        snprintf(args, sizeof args,
                 "{\"pattern\":\"spell\",\"glob\":\"%s\",\"include_ignored\":true,"
                 "\"output_mode\":\"files_with_matches\"}",
                 globs[i]);
        t = ws_run(chat, "Grep", args, &st);
        T_CHECK(!has(t, "g1/.env") && !has(t, "g2/.ENV") && !has(t, ".Env.Local"),
                "Grep glob %s include_ignored: %s", globs[i], flat(t));
    }
    const char *t = ws_run(chat, "Grep",
                           "{\"pattern\":\"spell\",\"-i\":true,\"output_mode\":\"content\"}", &st);
    T_CHECK(!has(t, "-secret") && has(t, "spell-ok"), "Grep -i over the workspace: %s", flat(t));
    agt_session_free(chat);
}

/* code_search over a tree where an untracked notes.txt is a hard link to
 * the ignored .env: a right guess of the secret and a wrong one get the
 * same text (a count of the hidden link told them apart). */
static void hard_link_guess(void)
{
    put_file("r9/.gitignore", ".env\n");
    put_lines("r9/.env", "TOKEN=hx-secret");
    put_file("r9/app.py", "print('hi')\n");
    git_base("r9", "ln .env notes.txt");
    agt_session *rev = review_session("r9", AGT_CHANGES_WORKSPACE);
    int st;
    char *right = strdup(ws_run(rev, "code_search", "{\"search_text\":\"TOKEN=hx\"}", &st));
    const char *wrong = ws_run(rev, "code_search", "{\"search_text\":\"TOKEN=hy\"}", &st);
    /* notes.txt, a copy of .env by content too, is counted in every search */
    const char *want = "No matches found.\n\nNote: 1 sensitive file (credentials, keys, "
                       "environment files) is not searched.";
    T_EQ_STR(right, want, "hard link guess: a right guess finds nothing shown");
    T_EQ_STR(wrong, want, "hard link guess: and a wrong one the same");
    free(right);
    agt_session_free(rev);
}

int main(void)
{
    make_ws("sensnames");
    if (agt_registry_new(&rreg) != AGT_OK || agt_registry_load_builtin(rreg, "review") != AGT_OK) {
        printf("Bail out! review registry: %s\n", agt_error_message());
        return 1;
    }
    renames();
    plain_moves();
    copies();
    hard_links();
    hard_link_guess();
    symlinks();
    spellings();
    agt_registry_free(rreg);
    rm_ws();
    return t_done();
}
