/* Path confinement and the sensitive-file table (expected values by hand
 * from the rules in lib/fs/sensitive.c and docs/fs.md). */
#include "fs/fs.h"
#include "fsutil.h"
#include "harness.h"

static char *root, *other, *sibling;

static void expect_ok(const char *user, const char *home, const char *const *allowed, size_t nal,
                      const char *want_abs, const char *want_rel)
{
    char *abs = NULL, *rel = NULL;
    int rc = agti_path_resolve(root, allowed, nal, home, user, &abs, &rel);
    T_EQ_INT(rc, AGT_OK, "resolve '%s' ok", user);
    if (rc != AGT_OK)
        t_diag("  %s", agt_error_message());
    T_EQ_STR(abs, want_abs, "resolve '%s' absolute", user);
    T_EQ_STR(rel, want_rel, "resolve '%s' display", user);
    free(abs);
    free(rel);
}

static void expect_err(const char *user, const char *home, int code, const char *needle)
{
    char *abs = (char *)1, *rel = (char *)1;
    int rc = agti_path_resolve(root, NULL, 0, home, user, &abs, &rel);
    T_EQ_INT(rc, code, "resolve '%s' fails", user);
    T_CHECK(abs == NULL && rel == NULL, "no outputs for '%s'", user);
    if (needle != NULL)
        T_CHECK(strstr(agt_error_message(), needle) != NULL, "message of '%s' has '%s': %s", user,
                needle, agt_error_message());
}

static void test_resolve(void)
{
    char p[4096], q[4096], r[4096];
    root = tu_mkdtemp();
    other = tu_mkdtemp();
    snprintf(p, sizeof p, "%s2", root);
    mkdir(p, 0755);
    sibling = strdup(p);
    tu_write(root, "src/a.c", "x");
    tu_write(other, "f", "y");
    snprintf(p, sizeof p, "%s/link_out", root);
    symlink(other, p);
    snprintf(p, sizeof p, "%s/link_in", root);
    symlink("src", p);
    snprintf(p, sizeof p, "%s/dangling_out", root);
    snprintf(q, sizeof q, "%s/newfile", other);
    symlink(q, p);
    snprintf(p, sizeof p, "%s/src/up", root);
    symlink("../..", p);
    snprintf(p, sizeof p, "%s/loop1", root);
    symlink("loop2", p);
    snprintf(p, sizeof p, "%s/loop2", root);
    symlink("loop1", p);

    snprintf(p, sizeof p, "%s/src/a.c", root);
    expect_ok("src/a.c", NULL, NULL, 0, p, "src/a.c");
    expect_ok("./src/../src//a.c", NULL, NULL, 0, p, "src/a.c");
    expect_ok(p, NULL, NULL, 0, p, "src/a.c");
    expect_ok("link_in/a.c", NULL, NULL, 0, p, "src/a.c");
    expect_ok(".", NULL, NULL, 0, root, ".");
    snprintf(q, sizeof q, "%s/new/dir/f.txt", root);
    expect_ok("new/dir/f.txt", NULL, NULL, 0, q, "new/dir/f.txt");
    snprintf(q, sizeof q, "%s/src", root);
    expect_ok("~", q, NULL, 0, q, "src");
    expect_ok("~/a.c", q, NULL, 0, p, "src/a.c");

    expect_err("", NULL, AGT_EINVAL, "empty");
    expect_err("../x", NULL, AGT_EDENIED, "ask the user to add it to the allowed paths");
    expect_err("src/../../x", NULL, AGT_EDENIED, "outside the workspace");
    expect_err("new/../../../etc/passwd", NULL, AGT_EDENIED, "outside the workspace");
    snprintf(q, sizeof q, "%s/f", sibling);
    expect_err(q, NULL, AGT_EDENIED, "outside the workspace");
    expect_err("link_out/f", NULL, AGT_EDENIED, "symbolic link");
    expect_err("dangling_out", NULL, AGT_EDENIED, "symbolic link");
    expect_err("src/up/etc", NULL, AGT_EDENIED, "symbolic link");
    expect_err("~", other, AGT_EDENIED, "outside the workspace");
    expect_err("~bob/x", NULL, AGT_EINVAL, "~/");
    expect_err("loop1/x", NULL, AGT_ELIMIT, "symbolic links");
    expect_err("/", NULL, AGT_EDENIED, "outside the workspace");

    /* An allowed directory admits the same paths, shown absolute. */
    const char *allowed[] = {"relative/ignored", other};
    snprintf(q, sizeof q, "%s/f", other);
    expect_ok("link_out/f", NULL, allowed, 2, q, q);
    snprintf(r, sizeof r, "%s/newfile", other);
    expect_ok("dangling_out", NULL, allowed, 2, r, r);
    expect_ok(q, NULL, allowed, 2, q, q);

    /* File URIs name the absolute path (percent-decoded); they were taken
     * as relative paths and made "file:" folders inside the root. */
    tu_write(root, "sp ace/%x#.c", "z");
    snprintf(p, sizeof p, "%s/src/a.c", root);
    snprintf(q, sizeof q, "file://%s/src/a.c", root);
    expect_ok(q, NULL, NULL, 0, p, "src/a.c");
    snprintf(q, sizeof q, "file://localhost%s/src/a.c", root);
    expect_ok(q, NULL, NULL, 0, p, "src/a.c");
    snprintf(q, sizeof q, "FILE://LocalHost%s/src/a.c", root);
    expect_ok(q, NULL, NULL, 0, p, "src/a.c");
    snprintf(q, sizeof q, "file:%s/src/a.c", root);
    expect_ok(q, NULL, NULL, 0, p, "src/a.c");
    snprintf(p, sizeof p, "%s/sp ace/%%x#.c", root);
    snprintf(q, sizeof q, "file://%s/sp%%20ace/%%25x%%23.c", root);
    expect_ok(q, NULL, NULL, 0, p, "sp ace/%x#.c");
    snprintf(p, sizeof p, "%s/file:notes", root);
    expect_ok("file:notes", NULL, NULL, 0, p, "file:notes"); /* not a URI: a name */
    snprintf(q, sizeof q, "file://%s/../x", root);
    expect_err(q, NULL, AGT_EDENIED, "outside the workspace");
    expect_err("file:///etc/passwd", NULL, AGT_EDENIED, "outside the workspace");
    expect_err("file://host/x", NULL, AGT_EINVAL,
               "the file URI names the host 'host'; only files on this machine can be used "
               "(file:///absolute/path or file://localhost/absolute/path), or give the path "
               "itself");
    expect_err("file://localhost", NULL, AGT_EINVAL, "the file URI names no path");
    snprintf(q, sizeof q, "file://%s/src/a.c#L3", root);
    expect_err(q, NULL, AGT_EINVAL, "a query (?) or a fragment (#) does not name a file");
    snprintf(q, sizeof q, "file://%s/src/a.c?x=1", root);
    expect_err(q, NULL, AGT_EINVAL, "write '?' as %3F and '#' as %23");
    snprintf(q, sizeof q, "file://%s/src/%%zz", root);
    expect_err(q, NULL, AGT_EINVAL, "must be followed by two hex digits (%25 for a literal '%')");
    snprintf(q, sizeof q, "file://%s/src/a%%00.c", root);
    expect_err(q, NULL, AGT_EINVAL, "%00 (a NUL byte) cannot be part of a file name");
    snprintf(q, sizeof q, "%s/file:", root);
    T_CHECK(access(q, F_OK) != 0, "no 'file:' folder was made in the root");

    char *abs = NULL;
    T_EQ_INT(agti_path_resolve("/nonexistent-agt-root", NULL, 0, NULL, "x", &abs, NULL),
             AGT_ENOTFOUND, "missing root");
    T_EQ_INT(agti_path_resolve("rel/root", NULL, 0, NULL, "x", &abs, NULL), AGT_EINVAL,
             "relative root");
    T_EQ_INT(agti_path_resolve(root, NULL, 0, NULL, NULL, &abs, NULL), AGT_EINVAL, "NULL path");
    /* A root given through a symlink and with "..": compared after resolution. */
    snprintf(p, sizeof p, "%s/link_in/..", root);
    char *rel = NULL;
    T_EQ_INT(agti_path_resolve(p, NULL, 0, NULL, "src/a.c", &abs, &rel), AGT_OK,
             "root with '..' resolves");
    T_EQ_STR(rel, "src/a.c", "display relative to the normalised root");
    free(abs);
    free(rel);

    tu_rmtree(root);
    tu_rmtree(other);
    tu_rmtree(sibling);
    free(root);
    free(other);
    free(sibling);
}

static void test_normalize(void)
{
    static const char *const cases[][2] = {
        {"/a/../../b", "/b"},   {"a/../../b", "../b"}, {"", "."},    {"/", "/"},
        {"a//b/./c/", "a/b/c"}, {"./", "."},           {"/..", "/"}, {"../../x", "../../x"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *n = agti_path_normalize(cases[i][0]);
        T_EQ_STR(n, cases[i][1], "normalize '%s'", cases[i][0]);
        free(n);
    }
    T_CHECK(!agti_path_is_within("/srv/app2", "/srv/app"), "prefix-sharing sibling is outside");
    T_CHECK(!agti_path_is_within("/srv/app2/x", "/srv/app"), "below a sibling is outside");
    T_CHECK(agti_path_is_within("/srv/app/x", "/srv/app"), "child is inside");
    T_CHECK(agti_path_is_within("/srv/app", "/srv/app/"), "the root itself is inside");
    T_CHECK(agti_path_is_within("/x", "/"), "everything is inside /");
}

static void test_sensitive(void)
{
    static const struct {
        const char *path;
        int want;
    } cases[] = {
        {".env", 1},
        {".ENV", 1},
        {".env.local", 1},
        {".env.production", 1},
        {"config/.env", 1},
        {"a/b/.env.test", 1},
        {".env.example", 0},
        {".env.sample", 0},
        {".env.template", 0},
        {".ENV.Example", 0},
        {"x/.env.template", 0},
        {".envrc", 1},
        {"sub/.ENVRC", 1},
        {".envrc.example", 0},
        {"env", 0},
        {"x.env", 0},
        {"id_rsa", 1},
        {"id_rsa.pub", 0},
        {"id_ed25519", 1},
        {".ssh/id_ed25519-work", 1},
        {"id_rsa.bak", 1},
        {"id_rsa_old", 1},
        {"id_ecdsa", 1},
        {"id_ecdsa_sk", 1},
        {"id_dsa", 1},
        {"ID_RSA", 1},
        {"id_ed25519.PUB", 0},
        {"keys/id_rsa-work.pub", 0},
        {".aws/credentials", 1},
        {"home/.AWS/Credentials", 1},
        {".aws/config", 0},
        {"aws/credentials", 0},
        {"credentials", 0},
        {".gcp/credentials.json", 1},
        {".azure/accessTokens.json", 1},
        {".azure/msal_token_cache.json", 1},
        {".azure/config", 0},
        {".config/gcloud/application_default_credentials.json", 1},
        {".config/gcloud/access_tokens.db", 1},
        {".config/gcloud/legacy_credentials/me@example.com/adc.json", 1},
        {".config/gcloud/configurations/config_default", 0},
        {".docker/config.json", 1},
        {"docker/config.json", 0},
        {".git-credentials", 1},
        {".netrc", 1},
        {".pgpass", 1},
        {".npmrc", 1},
        {"web/.npmrc", 1},
        {"npmrc", 0},
        {".pypirc", 1},
        {".kube/config", 1},
        {"home/.KUBE/config", 1},
        {"kube/config", 0},
        {".kube/cache/discovery.json", 0},
        {"deploy/.kube/config.yaml", 0},
        {"credentials.json", 0},
        {"tests/fixtures/credentials.json", 0},
        {".config/gcloud/credentials.db", 1},
        {"README.md", 0},
        {"src/environment.c", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *why = (const char *)1;
        bool s = agti_fs_is_sensitive(cases[i].path, &why);
        T_EQ_INT(s, cases[i].want, "sensitive('%s') = %d", cases[i].path, cases[i].want);
        T_CHECK(s ? why != NULL && why[0] != '\0' : why == NULL, "reason for '%s'", cases[i].path);
    }
    const char *why = NULL;
    agti_fs_is_sensitive(".env", &why);
    T_EQ_STR(why, "environment file (.env)", "reason text");
    T_CHECK(!agti_fs_is_sensitive(NULL, NULL), "NULL is not sensitive");
}

int main(void)
{
    test_resolve();
    test_normalize();
    test_sensitive();
    return t_done();
}
