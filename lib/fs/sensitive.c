/*
 * Sensitive files: refused on read and write, filtered out of listings and
 * search results. Names are compared case-insensitively (macOS and Windows
 * volumes are usually case-insensitive, and ".ENV" is as secret as ".env").
 *
 *  - environment files: ".env", ".env.<anything>" except the documented
 *    examples ".env.example", ".env.sample", ".env.template";
 *  - private SSH keys: "id_rsa", "id_ed25519", "id_ecdsa", "id_dsa" and their
 *    variants ("id_rsa.bak", "id_rsa_old", "id_ed25519-work",
 *    "id_ecdsa_sk"), but never a "*.pub" public key;
 *  - cloud credentials: "credentials" (and "credentials.*") under ".aws/" or
 *    ".gcp/"; anything under ".azure/" or ".config/gcloud/" whose path below
 *    that directory contains "credentials" or "token"
 *    (application_default_credentials.json, access_tokens.db,
 *    legacy_credentials/<account>/adc.json, msal_token_cache.json, ...);
 *  - ".envrc" (direnv: exports secrets into the shell like a ".env");
 *  - ".docker/config.json" (registry auth tokens), ".kube/config" (cluster
 *    client keys and bearer tokens), ".npmrc" (_authToken), ".pypirc"
 *    (upload password), ".git-credentials", ".netrc", ".pgpass" (plain-text
 *    passwords).
 * Certificates and "*.pem"/"*.key" are not on the list: projects keep test
 * fixtures under those names and the agent legitimately edits them. For the
 * same reason a bare "credentials.json" is not either (OAuth quickstarts and
 * test suites use the name for fixtures); only under the cloud tools' own
 * folders above.
 */
#include <string.h>
#include <strings.h>

#include "fs.h"

static bool ieq(const char *a, size_t n, const char *b)
{
    return strlen(b) == n && strncasecmp(a, b, n) == 0;
}

static bool iprefix(const char *a, size_t n, const char *b)
{
    size_t m = strlen(b);
    return n >= m && strncasecmp(a, b, m) == 0;
}

static bool icontains(const char *a, size_t n, const char *b)
{
    size_t m = strlen(b);
    for (size_t i = 0; i + m <= n; i++)
        if (strncasecmp(a + i, b, m) == 0)
            return true;
    return false;
}

/* True when the directory just above the basename (which starts at bstart)
 * is dir ("a" or "a/b"), compared case-insensitively by components. */
static bool parent_is(const char *path, size_t bstart, const char *dir)
{
    size_t dl = strlen(dir);
    if (bstart < dl + 1)
        return false;
    size_t s = bstart - 1 - dl;
    return strncasecmp(path + s, dir, dl) == 0 && (s == 0 || path[s - 1] == '/');
}

/* Offset just past the last "dir/" component sequence in path[0..len), or
 * 0 when dir is not a component sequence of the path's directories. */
static size_t after_dir(const char *path, size_t len, const char *dir)
{
    size_t dl = strlen(dir), found = 0;
    for (size_t i = 0; i + dl < len; i++)
        if ((i == 0 || path[i - 1] == '/') && path[i + dl] == '/' &&
            strncasecmp(path + i, dir, dl) == 0)
            found = i + dl + 1;
    return found;
}

/* Whether the part of the path below dir names credentials or tokens. */
static bool secret_below(const char *path, size_t len, const char *dir)
{
    size_t at = after_dir(path, len, dir);
    return at > 0 && (icontains(path + at, len - at, "credentials") ||
                      icontains(path + at, len - at, "token"));
}

bool agti_fs_is_sensitive(const char *relpath, const char **reason)
{
    const char *why = NULL;
    if (relpath == NULL) {
        if (reason != NULL)
            *reason = NULL;
        return false;
    }
    size_t len = strlen(relpath);
    while (len > 0 && relpath[len - 1] == '/')
        len--;
    size_t bstart = len;
    while (bstart > 0 && relpath[bstart - 1] != '/')
        bstart--;
    const char *b = relpath + bstart;
    size_t bl = len - bstart;

    if (ieq(b, bl, ".env") || (iprefix(b, bl, ".env.") && !ieq(b, bl, ".env.example") &&
                               !ieq(b, bl, ".env.sample") && !ieq(b, bl, ".env.template")))
        why = "environment file (.env)";
    else if (ieq(b, bl, ".envrc"))
        why = "environment file (.envrc)";
    else if ((iprefix(b, bl, "id_rsa") || iprefix(b, bl, "id_ed25519") ||
              iprefix(b, bl, "id_ecdsa") || iprefix(b, bl, "id_dsa")) &&
             !(bl >= 4 && strncasecmp(b + bl - 4, ".pub", 4) == 0))
        why = "private SSH key";
    else if ((ieq(b, bl, "credentials") || iprefix(b, bl, "credentials.")) &&
             (parent_is(relpath, bstart, ".aws") || parent_is(relpath, bstart, ".gcp")))
        why = "cloud credentials file";
    else if (secret_below(relpath, len, ".azure") || secret_below(relpath, len, ".config/gcloud"))
        why = "cloud credentials file";
    else if (ieq(b, bl, "config.json") && parent_is(relpath, bstart, ".docker"))
        why = "Docker registry credentials";
    else if (ieq(b, bl, "config") && parent_is(relpath, bstart, ".kube"))
        why = "Kubernetes client credentials";
    else if (ieq(b, bl, ".npmrc") || ieq(b, bl, ".pypirc"))
        why = "package registry token";
    else if (ieq(b, bl, ".git-credentials") || ieq(b, bl, ".netrc") || ieq(b, bl, ".pgpass"))
        why = "password file";
    if (reason != NULL)
        *reason = why;
    return why != NULL;
}
