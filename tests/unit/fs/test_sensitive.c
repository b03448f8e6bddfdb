/*
 * The index of lib/fs/sensitive.c (a name is judged against the patterns
 * that can match it, issue 19) decides as the linear walk over every
 * pattern does: the same verdict, the same reason, the same host exception.
 * Checked on names worked out by hand against docs/sensitive-files.md, on
 * names generated from every built-in pattern (decorated, case-changed, in
 * folders), on a policy with host patterns of every index kind, and on the
 * real file names under /usr/include and /usr/share/doc.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs/fs.h"
#include "harness.h"

static agti_sensitive *ix, *lin;   /* built-in policy: indexed, linear */
static agti_sensitive *hix, *hlin; /* with host patterns */
static size_t compared, differ;

static void compare(const char *path)
{
    const agti_sensitive *pols[2][2] = {{ix, lin}, {hix, hlin}};
    for (size_t k = 0; k < 2; k++) {
        const char *r1 = NULL, *r2 = NULL;
        bool s1 = agti_sensitive_match(pols[k][0], path, &r1);
        bool s2 = agti_sensitive_match(pols[k][1], path, &r2);
        bool h1 = agti_sensitive_host_excepted(pols[k][0], path);
        bool h2 = agti_sensitive_host_excepted(pols[k][1], path);
        compared++;
        if (s1 != s2 || h1 != h2 || (r1 != r2 && (r1 == NULL || r2 == NULL || strcmp(r1, r2)))) {
            if (differ++ < 10)
                t_diag("  %s (policy %zu): indexed %d %s %d, linear %d %s %d", path, k, s1,
                       r1 ? r1 : "-", h1, s2, r2 ? r2 : "-", h2);
        }
    }
}

static void expect(const char *path, const char *reason)
{
    const char *why = NULL;
    bool s = agti_sensitive_match(ix, path, &why);
    T_EQ_STR(s ? why : NULL, reason, "%s: %s", path, reason ? reason : "not sensitive");
    compare(path);
}

static void by_hand(void)
{
    static const char *const env = "environment file (.env)", *const ssh = "private SSH key";
    expect(".env", env);
    expect(".env.local", env);
    expect("app/config/.env.production", env);
    expect(".ENV", env);
    expect(".Env.Local", env);
    expect(".env.example", NULL);
    expect(".ENV.EXAMPLE", NULL);
    expect("x.env", NULL);
    expect("env", NULL);
    expect(".envrc", "environment file (.envrc)");
    expect(".envrc.bak", "environment file (.envrc)");
    expect("#.env#", env);
    expect(".#.env", env);
    expect(".env~", env);
    expect("id_rsa", ssh);
    expect("home/u/.ssh/id_rsa", ssh);
    expect("ID_RSA", ssh);
    expect("id_rsa.pub", NULL);
    expect("id_ed25519_work", ssh);
    expect("id_ed25519_work.PUB", NULL);
    expect("ssh_host_rsa_key", "private SSH host key");
    expect("etc/ssh/ssh_host_rsa_key.pub", NULL);
    expect("server.pem", "private key or certificate bundle (.pem)");
    expect("certs/SERVER.PEM", "private key or certificate bundle (.pem)");
    expect("pem", NULL);
    expect(".pem", "private key or certificate bundle (.pem)");
    expect("tls.key", "private key (.key)");
    expect("keys.txt", NULL);
    expect("store.jks", "Java keystore");
    expect("secring.gpg", "private PGP keyring");
    expect("home/.gnupg/private-keys-v1.d/ABC.key", "private key (.key)"); /* first reason */
    expect("home/.gnupg/private-keys-v1.d/ABC", "private PGP key");
    expect(".aws/credentials", "cloud credentials file");
    expect("home/u/.aws/credentials.bak", "cloud credentials file");
    expect("credentials", NULL);
    expect("aws/credentials", NULL);
    expect("home/.azure/msal/accessTokens.json", "cloud credentials file");
    expect(".azure/config", NULL);
    expect(".config/gcloud/legacy_credentials/me/adc.json", "cloud credentials file");
    expect(".docker/config.json", "Docker registry credentials");
    expect("config.json", NULL);
    expect(".kube/config", "Kubernetes client credentials");
    expect(".npmrc", "package registry token");
    expect("pkg/.npmrc.orig", "package registry token");
    expect("prod.tfstate", "Terraform state (holds secrets in clear)");
    expect("prod.tfstate.backup", "Terraform state (holds secrets in clear)");
    expect("vars.tfvars.json", "Terraform variables");
    expect(".netrc", "password file");
    expect("_netrc", "password file");
    expect("known_hosts", NULL);
    expect("authorized_keys", NULL);
    expect("src/main.c", NULL);
    expect("", NULL);
    expect("a/", NULL);
}

/* Names from every built-in pattern's text: its wildcards filled in three
 * ways, in folders, decorated, upper-cased. */
static void generated(void)
{
    static const char *const fills[] = {"", "x", "Prod.Old"};
    static const char *const dirs[] = {"", "a/", "a/b/c/", ".ssh/", "home/u/.azure/x/", "home/"};
    static const char *const decos[][2] = {{"", ""},   {"", "~"},  {"", ".bak"}, {".", ".swp"},
                                           {"#", "#"}, {".#", ""}, {"", ".pub"}, {"x", ""}};
    size_t n = agti_sensitive_count(hix);
    for (size_t i = 0; i < n; i++) {
        const char *pat = agti_sensitive_pattern(hix, i);
        if (pat[0] == '!')
            pat++;
        for (size_t f = 0; f < sizeof fills / sizeof *fills; f++) {
            char base[512];
            size_t bl = 0;
            for (const char *c = pat; *c && bl + 16 < sizeof base; c++) {
                if (*c == '*' && c[1] == '*' && c[2] == '/') {
                    c += 2; /* "**" + "/": zero or more folders */
                    if (f == 2)
                        bl += (size_t)snprintf(base + bl, sizeof base - bl, "d/e/");
                } else if (*c == '*') {
                    bl += (size_t)snprintf(base + bl, sizeof base - bl, "%s", fills[f]);
                } else if (*c == '?') {
                    base[bl++] = 'q';
                } else if (*c == '[' || *c == ']' || *c == '\\') {
                    base[bl++] = 'S';
                } else {
                    base[bl++] = *c;
                }
            }
            base[bl] = '\0';
            for (size_t d = 0; d < sizeof dirs / sizeof *dirs; d++)
                for (size_t e = 0; e < sizeof decos / sizeof *decos; e++)
                    for (int up = 0; up < 2; up++) {
                        char path[1200];
                        const char *slash = strrchr(base, '/');
                        size_t dl = slash ? (size_t)(slash - base) + 1 : 0;
                        snprintf(path, sizeof path, "%s%.*s%s%s%s", dirs[d], (int)dl, base,
                                 decos[e][0], base + dl, decos[e][1]);
                        for (char *c = path; up && *c; c++)
                            if (*c >= 'a' && *c <= 'z')
                                *c = (char)(*c - 32);
                        compare(path);
                    }
        }
    }
}

static size_t walk_names(const char *root, size_t rootlen, char *path, size_t len, size_t left)
{
    DIR *d = opendir(path);
    if (d == NULL)
        return 0;
    size_t seen = 0;
    struct dirent *e;
    while (seen < left && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        size_t nl = strlen(e->d_name);
        if (len + 1 + nl + 1 > 4096)
            continue;
        path[len] = '/';
        memcpy(path + len + 1, e->d_name, nl + 1);
        compare(path + rootlen + 1);
        seen++;
        if (e->d_type == DT_DIR)
            seen += walk_names(root, rootlen, path, len + 1 + nl, left - seen);
        path[len] = '\0';
    }
    closedir(d);
    return seen;
}

int main(void)
{
    T_EQ_INT(agti_sensitive_new(&ix), AGT_OK, "built-in policy");
    T_EQ_INT(agti_sensitive_clone(&lin, ix), AGT_OK, "its copy");
    agti_sensitive_set_linear(lin, true);
    /* host patterns of every kind: by last character, by first character,
     * linear (wildcards at both ends, an escape, "**"), exceptions */
    static const char *const host[] = {
        "*.secret", "token?.txt",        "deploy-*",        "*prod*",
        "\\*star",  "config/**/*.yml",   "!.env.local",     "!keep-*",
        "[Tt]ok*",  "conf/prod/db.conf", "!vendor/**/*.pem"};
    T_EQ_INT(agti_sensitive_clone(&hix, ix), AGT_OK, "host policy");
    int rc = AGT_OK;
    for (size_t i = 0; i < sizeof host / sizeof *host; i++)
        if (rc == AGT_OK)
            rc = agti_sensitive_add(hix, host[i]);
    T_EQ_INT(rc, AGT_OK, "host patterns added");
    T_EQ_INT(agti_sensitive_remove(hix, "*.keytab"), AGT_OK, "a built-in pattern removed");
    T_EQ_INT(agti_sensitive_clone(&hlin, hix), AGT_OK, "its copy");
    agti_sensitive_set_linear(hlin, true);

    by_hand();
    /* host patterns, by hand */
    const char *why = NULL;
    T_CHECK(!agti_sensitive_match(hix, "x/.env.local", &why) &&
                agti_sensitive_host_excepted(hix, "x/.env.local"),
            "host exception !.env.local: not sensitive, excepted by the host");
    T_CHECK(agti_sensitive_match(hix, "a/b.SECRET", &why), "*.secret matches a/b.SECRET");
    T_CHECK(agti_sensitive_match(hix, "deploy-key.txt", &why), "deploy-* matches deploy-key.txt");
    T_CHECK(!agti_sensitive_match(hix, "keep-deploy.pem", &why) &&
                agti_sensitive_host_excepted(hix, "keep-deploy.pem"),
            "!keep-* excepts keep-deploy.pem (else *.pem)");
    T_CHECK(!agti_sensitive_match(hix, "vendor/a/b/c.pem", &why) &&
                agti_sensitive_match(hix, "vendors/c.pem", &why),
            "!vendor/**/*.pem excepts under vendor/ only");
    T_CHECK(agti_sensitive_match(hix, "*star", &why) && !agti_sensitive_match(hix, "xstar", &why),
            "\\*star is a literal '*'");
    T_CHECK(!agti_sensitive_match(hix, "krb5.keytab", &why) &&
                agti_sensitive_match(ix, "krb5.keytab", &why),
            "a removed built-in pattern no longer matches");
    compare("x/.env.local");
    compare("keep-deploy.pem");
    compare("vendor/a/b/c.pem");
    compare("config/a/b/x.yml");
    compare("conf/prod/DB.CONF");

    size_t before = compared;
    generated();
    T_CHECK(compared - before > 5000, "generated paths compared: %zu", compared - before);
    static const char *const roots[] = {"/usr/include", "/usr/share/doc"};
    for (size_t r = 0; r < 2; r++) {
        char path[4096];
        snprintf(path, sizeof path, "%s", roots[r]);
        size_t got = walk_names(path, strlen(path), path, strlen(path), 60000);
        if (got == 0)
            t_skip("folder missing");
        else
            T_CHECK(got > 100, "%s: %zu real paths compared", roots[r], got);
    }
    T_EQ_INT(differ, 0, "indexed and linear decisions agree on all %zu comparisons", compared);
    agti_sensitive_free(ix);
    agti_sensitive_free(lin);
    agti_sensitive_free(hix);
    agti_sensitive_free(hlin);
    return t_done();
}
