/*
 * Sensitive files: refused on read and write, filtered out of listings,
 * search results and diffs. One policy for every tool that shows file
 * content; docs/sensitive-files.md lists it for users.
 *
 * A policy is a list of patterns (git wildmatch, case-insensitive: macOS and
 * Windows volumes usually are, and ".ENV" is as secret as ".env"). A pattern
 * without '/' is matched against the file name at any depth; one with '/'
 * against the last components of the path ("**" spans folders). A pattern
 * starting with '!' is an exception: a path it matches is not sensitive by
 * name. The built-in list follows what secret scanners (gitleaks,
 * detect-secrets, trufflehog, shhgit) treat as credential files; the host
 * adds and removes patterns per session (include/agenttools/session.h).
 *
 * Backup and editor copies of a sensitive file are sensitive too: the name
 * is also judged with one decoration taken off ("NAME~", "#NAME#", ".#NAME",
 * "NAME.bak", ".NAME.swp", ...), so ".npmrc.orig" and "#.env#" need no
 * patterns of their own.
 *
 * Content: a file whose text holds a private key block ("-----BEGIN ...
 * PRIVATE KEY-----" on a line of its own, PuTTY's "PuTTY-User-Key-File-") is
 * sensitive whatever its name, unless a host-added exception names it; the
 * readers that already hold the bytes (Read, Grep, the review tools) check it.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fs.h"

/* How a pattern is matched, cheapest first: a name pattern against the
 * file name; a path pattern without "**" against as many trailing
 * components as it has; one with "**" (compiled with a leading "**\/")
 * against the whole path, once its literal start was found as a folder in
 * it. The literal prefix and suffix of the part matched reject most paths
 * before the matcher runs (every file of a tree is judged). */
typedef struct sens_pattern {
    char *text;      /* as given, with its '!' */
    agti_wm *wm;     /* compiled ('!' removed) */
    bool except;     /* a '!' pattern */
    bool builtin;    /* from the built-in table */
    bool deep;       /* has "**": matched on the whole path */
    size_t ncomp;    /* components of a pattern without "**" (1: a name) */
    char *pre, *suf; /* literal start and end of the body ("" when none) */
    bool literal;    /* the body has no wildcard: pre is all of it */
    size_t prelen, suflen;
    size_t dirlen; /* deep: the literal folders at the start of pre */
    const char *reason;
} sens_pattern;

/* The index: every file is judged, and most of the ~69 patterns cannot
 * match a given name. A pattern whose body ends in a literal character
 * can only match a path ending in it (case-folded): it is listed under
 * that character; a name pattern that starts with a literal and ends in a
 * wildcard ("id_rsa*") under its first character; the rest (with "**",
 * a backslash escape, or a wildcard at both ends) is tried for every
 * path. Each list keeps the policy's order, and judge() merges the three
 * lists a path selects, so the verdict (the first reason, any exception)
 * is the one of the linear walk: the lists only skip patterns whose
 * literal prefix or suffix check would reject the path anyway. */
#define IX_LAST 0    /* lists 0..255: by the last character */
#define IX_FIRST 256 /* lists 256..511: by the name's first character */
#define IX_REST 512
#define IX_LISTS 513

struct agti_sensitive {
    sens_pattern *p;
    size_t n, cap;
    uint32_t *order;            /* pattern indices, list by list; NULL: linear */
    uint32_t off[IX_LISTS + 1]; /* list k is order[off[k] .. off[k+1]) */
    bool linear;                /* tests: judge by the linear walk */
};

static const struct {
    const char *pattern, *reason;
} builtin[] = {
    /* environment files */
    {".env", "environment file (.env)"},
    {".env.*", "environment file (.env)"},
    {"!.env.example", NULL},
    {"!.env.sample", NULL},
    {"!.env.template", NULL},
    {".envrc", "environment file (.envrc)"},
    /* SSH and other private keys, key stores */
    {"id_rsa*", "private SSH key"},
    {"id_dsa*", "private SSH key"},
    {"id_ecdsa*", "private SSH key"},
    {"id_ed25519*", "private SSH key"},
    {"id_xmss*", "private SSH key"},
    {"ssh_host_*key", "private SSH host key"},
    {"*.pem", "private key or certificate bundle (.pem)"},
    {"*.key", "private key (.key)"},
    {"*.ppk", "private key (PuTTY)"},
    {"*.p12", "PKCS#12 key bundle"},
    {"*.pfx", "PKCS#12 key bundle"},
    {"*.pkcs12", "PKCS#12 key bundle"},
    {"*.jks", "Java keystore"},
    {"*.keystore", "keystore"},
    {"*.kdbx", "password database (KeePass)"},
    {"*.keytab", "Kerberos keytab"},
    {"secring.*", "private PGP keyring"},
    {".gnupg/private-keys-v1.d/**", "private PGP key"},
    {"!*.pub", NULL},
    {"!known_hosts", NULL},
    {"!known_hosts.old", NULL},
    {"!authorized_keys", NULL},
    /* cloud and CLI credentials, token caches */
    {".aws/credentials", "cloud credentials file"},
    {".aws/credentials.*", "cloud credentials file"},
    {".gcp/credentials", "cloud credentials file"},
    {".gcp/credentials.*", "cloud credentials file"},
    {"application_default_credentials.json", "cloud credentials file"},
    {".azure/**/*credentials*", "cloud credentials file"},
    {".azure/**/*credentials*/**", "cloud credentials file"},
    {".azure/**/*token*", "cloud credentials file"},
    {".azure/**/*token*/**", "cloud credentials file"},
    {".azure/service_principal_entries.*", "cloud credentials file"},
    {".config/gcloud/**/*credentials*", "cloud credentials file"},
    {".config/gcloud/**/*credentials*/**", "cloud credentials file"},
    {".config/gcloud/**/*token*", "cloud credentials file"},
    {".config/gcloud/**/*token*/**", "cloud credentials file"},
    {".docker/config.json", "Docker registry credentials"},
    {".dockercfg", "Docker registry credentials"},
    {".kube/config", "Kubernetes client credentials"},
    {".config/gh/hosts.yml", "GitHub CLI token"},
    {".config/hub", "GitHub CLI token"},
    {".vault-token", "Vault token"},
    {".s3cfg", "cloud credentials file"},
    {".boto", "cloud credentials file"},
    {".npmrc", "package registry token"},
    {".pypirc", "package registry token"},
    {".gem/credentials", "package registry token"},
    {".cargo/credentials", "package registry token"},
    {".cargo/credentials.toml", "package registry token"},
    {".terraformrc", "Terraform credentials"},
    {"terraform.rc", "Terraform credentials"},
    {"credentials.tfrc.json", "Terraform credentials"},
    {"*.tfstate", "Terraform state (holds secrets in clear)"},
    {"*.tfstate.backup", "Terraform state (holds secrets in clear)"},
    {"*.tfvars", "Terraform variables"},
    {"*.tfvars.json", "Terraform variables"},
    /* password files */
    {".git-credentials", "password file"},
    {".netrc", "password file"},
    {"_netrc", "password file"},
    {".pgpass", "password file"},
    {".my.cnf", "password file"},
    {".htpasswd", "password file"},
    {"htpasswd", "password file"},
    {"etc/shadow", "system password hashes"},
    {"etc/shadow-", "system password hashes"},
    {"etc/gshadow", "system password hashes"},
    {"etc/gshadow-", "system password hashes"},
    /* a process's environment holds the host's tokens (OPENAI_API_KEY=...) */
    {"proc/*/environ", "process environment (holds the host's tokens)"},
    {"proc/*/task/*/environ", "process environment (holds the host's tokens)"},
};

#define NBUILTIN (sizeof builtin / sizeof builtin[0])

static void pattern_free(sens_pattern *p)
{
    free(p->text);
    free(p->pre);
    free(p->suf);
    agti_wm_free(p->wm);
}

void agti_sensitive_free(agti_sensitive *pol)
{
    if (pol == NULL)
        return;
    for (size_t i = 0; i < pol->n; i++)
        pattern_free(&pol->p[i]);
    free(pol->p);
    free(pol->order);
    free(pol);
}

static unsigned char lc(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c;
}

/* The list of a pattern (see struct agti_sensitive). */
static size_t index_list(const sens_pattern *p)
{
    if (p->deep)
        return IX_REST;
    if (p->literal)
        return IX_LAST + lc((unsigned char)p->pre[p->prelen - 1]);
    if (p->suflen > 0)
        return IX_LAST + lc((unsigned char)p->suf[p->suflen - 1]);
    if (p->ncomp == 1 && p->prelen > 0)
        return IX_FIRST + lc((unsigned char)p->pre[0]);
    return IX_REST;
}

/* Rebuilds the index after the patterns changed. Out of memory it leaves
 * none, and judge() walks every pattern (the same verdicts, slower). */
static void index_build(agti_sensitive *pol)
{
    free(pol->order);
    pol->order = malloc((pol->n ? pol->n : 1) * sizeof *pol->order);
    if (pol->order == NULL)
        return;
    memset(pol->off, 0, sizeof pol->off);
    for (size_t i = 0; i < pol->n; i++)
        pol->off[index_list(&pol->p[i]) + 1]++;
    for (size_t k = 0; k < IX_LISTS; k++)
        pol->off[k + 1] += pol->off[k];
    uint32_t fill[IX_LISTS];
    memcpy(fill, pol->off, sizeof fill);
    for (size_t i = 0; i < pol->n; i++)
        pol->order[fill[index_list(&pol->p[i])]++] = (uint32_t)i;
}

void agti_sensitive_set_linear(agti_sensitive *pol, bool linear)
{
    pol->linear = linear;
}

/* Checks and compiles one pattern. AGT_EINVAL with a message for a
 * pattern that cannot be used. */
static int compile(sens_pattern *out, const char *text, const char *reason, bool builtin_p)
{
    memset(out, 0, sizeof *out);
    bool except = text[0] == '!';
    const char *body = except ? text + 1 : text;
    size_t bl = strlen(body);
    if (bl == 0 || body[0] == '/' || body[bl - 1] == '/')
        return agti_error(AGT_EINVAL,
                          "sensitive-file pattern '%s': give a file name or a path pattern "
                          "without a leading or trailing '/' (e.g. \"*.secret\" or "
                          "\"config/prod/*.yml\")",
                          text);
    out->deep = strstr(body, "**") != NULL;
    out->ncomp = 1;
    for (size_t i = 0; i < bl; i++)
        out->ncomp += body[i] == '/';
    /* literal prefix and suffix (none when the body has a backslash escape) */
    size_t pl = 0, sl = 0;
    if (strchr(body, '\\') == NULL) {
        while (pl < bl && strchr("*?[", body[pl]) == NULL)
            pl++;
        while (sl < bl - pl && strchr("*?]", body[bl - 1 - sl]) == NULL)
            sl++;
    }
    out->literal = pl == bl;
    out->prelen = pl;
    out->suflen = sl;
    out->dirlen = pl;
    while (out->dirlen > 0 && body[out->dirlen - 1] != '/')
        out->dirlen--;
    if (out->dirlen > 0)
        out->dirlen--; /* without its '/' */
    out->pre = agti_strndup(body, pl);
    out->suf = agti_strndup(body + bl - sl, sl);
    if (out->pre == NULL || out->suf == NULL) {
        pattern_free(out);
        memset(out, 0, sizeof *out);
        return agti_oom();
    }
    agti_buf b = AGTI_BUF_INIT;
    if (out->deep)
        agti_buf_puts(&b, "**/");
    agti_buf_put(&b, body, bl);
    if (b.oom) {
        agti_buf_free(&b);
        return agti_oom();
    }
    bool bad = false;
    int rc = agti_wm_compile(&out->wm, b.ptr, b.len, AGTI_WM_CASEFOLD, &bad);
    agti_buf_free(&b);
    if (rc != AGT_OK) {
        pattern_free(out);
        memset(out, 0, sizeof *out);
        return rc;
    }
    if (bad) {
        pattern_free(out);
        memset(out, 0, sizeof *out);
        return agti_error(AGT_EINVAL,
                          "sensitive-file pattern '%s' is malformed (an unterminated '[', a bad "
                          "[:class:] or a trailing backslash)",
                          text);
    }
    out->text = agti_strdup(text);
    if (out->text == NULL) {
        pattern_free(out);
        memset(out, 0, sizeof *out);
        return agti_oom();
    }
    out->except = except;
    out->builtin = builtin_p;
    out->reason = except ? NULL : reason;
    return AGT_OK;
}

static int push(agti_sensitive *pol, const char *text, const char *reason, bool builtin_p)
{
    if (agti_grow(&pol->p, &pol->cap, pol->n, sizeof *pol->p, NBUILTIN + 8) != AGT_OK)
        return AGT_ENOMEM;
    int rc = compile(&pol->p[pol->n], text, reason, builtin_p);
    if (rc == AGT_OK)
        pol->n++;
    return rc;
}

int agti_sensitive_new(agti_sensitive **out)
{
    *out = NULL;
    agti_sensitive *pol = calloc(1, sizeof *pol);
    if (pol == NULL)
        return agti_oom();
    for (size_t i = 0; i < NBUILTIN; i++) {
        int rc = push(pol, builtin[i].pattern, builtin[i].reason, true);
        if (rc != AGT_OK) {
            agti_sensitive_free(pol);
            return rc;
        }
    }
    index_build(pol);
    *out = pol;
    return AGT_OK;
}

static pthread_once_t builtin_once = PTHREAD_ONCE_INIT;
static agti_sensitive *builtin_pol;

static void builtin_init(void)
{
    if (agti_sensitive_new(&builtin_pol) != AGT_OK)
        builtin_pol = NULL;
}

/* The built-in policy, compiled once; NULL only when memory ran out. */
static const agti_sensitive *builtin_policy(void)
{
    pthread_once(&builtin_once, builtin_init);
    return builtin_pol;
}

int agti_sensitive_clone(agti_sensitive **out, const agti_sensitive *src)
{
    *out = NULL;
    agti_sensitive *pol = calloc(1, sizeof *pol);
    if (pol == NULL)
        return agti_oom();
    for (size_t i = 0; i < src->n; i++) {
        int rc = push(pol, src->p[i].text, src->p[i].reason, src->p[i].builtin);
        if (rc != AGT_OK) {
            agti_sensitive_free(pol);
            return rc;
        }
    }
    pol->linear = src->linear;
    index_build(pol);
    *out = pol;
    return AGT_OK;
}

int agti_sensitive_add(agti_sensitive *pol, const char *pattern)
{
    if (pattern == NULL)
        return agti_error(AGT_EINVAL, "sensitive-file pattern is NULL");
    for (size_t i = 0; i < pol->n; i++)
        if (strcasecmp(pol->p[i].text, pattern) == 0)
            return AGT_OK;
    int rc = push(pol, pattern, "matches a sensitive-file pattern set by the host", false);
    if (rc == AGT_OK)
        index_build(pol);
    return rc;
}

int agti_sensitive_remove(agti_sensitive *pol, const char *pattern)
{
    if (pattern == NULL)
        return agti_error(AGT_EINVAL, "sensitive-file pattern is NULL");
    for (size_t i = 0; i < pol->n; i++)
        if (strcasecmp(pol->p[i].text, pattern) == 0) {
            pattern_free(&pol->p[i]);
            memmove(&pol->p[i], &pol->p[i + 1], (pol->n - i - 1) * sizeof *pol->p);
            pol->n--;
            index_build(pol);
            return AGT_OK;
        }
    return agti_error(AGT_ENOTFOUND,
                      "'%s' is not one of the session's sensitive-file patterns (a built-in one "
                      "is removed by its exact text, e.g. \"*.pem\" or \"!*.pub\"; see "
                      "docs/sensitive-files.md)",
                      pattern);
}

size_t agti_sensitive_count(const agti_sensitive *pol)
{
    if (pol == NULL)
        pol = builtin_policy();
    return pol ? pol->n : 0;
}

const char *agti_sensitive_pattern(const agti_sensitive *pol, size_t i)
{
    if (pol == NULL)
        pol = builtin_policy();
    return pol && i < pol->n ? pol->p[i].text : NULL;
}

#define MAX_COMPS 16 /* trailing components judged; deeper paths: the rest is one */

/* A path split once for all patterns: cs[k] is where its k-th component
 * from the end starts (cs[0] the file name), n how many there are. */
typedef struct split {
    const char *path;
    size_t len, n;
    size_t cs[MAX_COMPS];
} split;

static void split_path(split *sp, const char *path, size_t len)
{
    sp->path = path;
    sp->len = len;
    sp->n = 0;
    size_t i = len;
    while (sp->n < MAX_COMPS) {
        while (i > 0 && path[i - 1] != '/')
            i--;
        sp->cs[sp->n++] = i;
        if (i == 0)
            break;
        i--;
    }
}

/* Case-insensitive equality of n bytes (the patterns are ASCII). */
static bool ieqn(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (lc((unsigned char)a[i]) != lc((unsigned char)b[i]))
            return false;
    return true;
}

static bool pattern_matches(const sens_pattern *p, const split *sp)
{
    if (p->deep) {
        /* the literal folders before the first wildcard (".azure") must be
         * whole components somewhere in the path */
        if (p->dirlen > 0 && sp->n < MAX_COMPS) {
            bool found = false;
            for (size_t k = 1; k < sp->n && !found; k++) {
                size_t at = sp->cs[k];
                found = sp->len - at > p->dirlen && sp->path[at + p->dirlen] == '/' &&
                        ieqn(sp->path + at, p->pre, p->dirlen);
            }
            if (!found)
                return false;
        }
        return agti_wm_match(p->wm, sp->path, sp->len);
    }
    if (p->ncomp > sp->n || (p->ncomp == sp->n && p->ncomp == MAX_COMPS))
        return false;
    size_t start = sp->cs[p->ncomp - 1];
    const char *t = sp->path + start;
    size_t tl = sp->len - start;
    if (p->literal)
        return tl == p->prelen && ieqn(t, p->pre, tl);
    if (tl < p->prelen + p->suflen || !ieqn(t, p->pre, p->prelen) ||
        !ieqn(t + tl - p->suflen, p->suf, p->suflen))
        return false;
    return agti_wm_match(p->wm, t, tl);
}

/* The verdict of the patterns on one candidate path: 1 sensitive, 0 no
 * pattern, -1 excepted (by a host exception when *host_except). */
static int judge(const agti_sensitive *pol, const char *path, size_t len, const char **why,
                 bool *host_except)
{
    const char *reason = NULL;
    bool except = false;
    split sp;
    split_path(&sp, path, len);
    /* the candidates in policy order: all patterns, or the three lists of
     * the index this path selects, merged */
    const uint32_t *lo[3], *hi[3];
    size_t nl = 0;
    bool indexed = pol->order != NULL && !pol->linear;
    if (indexed) {
        size_t keys[3], nk = 0;
        if (len > 0)
            keys[nk++] = IX_LAST + lc((unsigned char)path[len - 1]);
        if (sp.cs[0] < len)
            keys[nk++] = IX_FIRST + lc((unsigned char)path[sp.cs[0]]);
        keys[nk++] = IX_REST;
        for (size_t k = 0; k < nk; k++)
            if (pol->off[keys[k]] < pol->off[keys[k] + 1]) {
                lo[nl] = pol->order + pol->off[keys[k]];
                hi[nl++] = pol->order + pol->off[keys[k] + 1];
            }
    }
    for (size_t next = 0;; next++) {
        size_t i = next;
        if (indexed) {
            size_t best = nl;
            for (size_t k = 0; k < nl; k++)
                if (lo[k] < hi[k] && (best == nl || *lo[k] < *lo[best]))
                    best = k;
            if (best == nl)
                break;
            i = *lo[best]++;
        } else if (i >= pol->n) {
            break;
        }
        const sens_pattern *p = &pol->p[i];
        if (p->except ? except && (*host_except || p->builtin) : reason != NULL)
            continue; /* already decided for this kind */
        if (!pattern_matches(p, &sp))
            continue;
        if (p->except) {
            except = true;
            if (!p->builtin)
                *host_except = true;
        } else {
            reason = p->reason;
        }
    }
    if (except)
        return -1;
    if (reason != NULL) {
        *why = reason;
        return 1;
    }
    return 0;
}

static bool iends(const char *s, size_t n, const char *suf)
{
    size_t m = strlen(suf);
    return n >= m && strncasecmp(s + n - m, suf, m) == 0;
}

/* Writes into out (cap bytes) the directory part of path plus the base
 * name with one editor or backup decoration removed; false when the name
 * has none. */
static bool undecorate(const char *path, size_t len, size_t bstart, char *out, size_t cap)
{
    static const char *const backups[] = {"~",     ".bak",  ".backup", ".old", ".orig",
                                          ".save", ".sav",  ".tmp",    ".swp", ".swo",
                                          ".swx",  ".copy", ".prev",   ".1",   ".dist-old"};
    const char *b = path + bstart;
    size_t bl = len - bstart, from = 0, to = bl;
    bool swap = false;
    if (bl > 2 && b[0] == '#' && b[bl - 1] == '#') { /* Emacs auto-save */
        from = 1;
        to = bl - 1;
    } else if (bl > 2 && b[0] == '.' && b[1] == '#') { /* Emacs lock */
        from = 2;
    } else {
        for (size_t k = 0; k < sizeof backups / sizeof backups[0]; k++)
            if (iends(b, bl, backups[k]) && bl > strlen(backups[k])) {
                to = bl - strlen(backups[k]);
                swap = backups[k][1] == 's' && backups[k][2] == 'w';
                break;
            }
        if (to == bl)
            return false;
    }
    /* Vim's swap file of "NAME" is ".NAME.swp"; of ".NAME", ".NAME.swp" */
    if (swap && to - from > 1 && b[from] == '.' && b[from + 1] != '.')
        from++;
    if (bstart + (to - from) + 1 > cap)
        return false;
    memcpy(out, path, bstart);
    memcpy(out + bstart, b + from, to - from);
    out[bstart + to - from] = '\0';
    return true;
}

static bool check_name(const agti_sensitive *pol, const char *relpath, const char **reason,
                       bool *host_except)
{
    *host_except = false;
    if (pol == NULL)
        pol = builtin_policy();
    if (pol == NULL) {
        *reason = "the sensitive-file list could not be built (out of memory)";
        return true; /* fail closed */
    }
    while (relpath[0] == '/')
        relpath++;
    size_t len = strlen(relpath);
    while (len > 0 && relpath[len - 1] == '/')
        len--;
    size_t bstart = len;
    while (bstart > 0 && relpath[bstart - 1] != '/')
        bstart--;
    const char *why = NULL;
    int v = judge(pol, relpath, len, &why, host_except);
    if (v == 1) {
        *reason = why;
        return true;
    }
    char alt[4096];
    bool alt_except = false;
    if (undecorate(relpath, len, bstart, alt, sizeof alt)) {
        v = judge(pol, alt, strlen(alt), &why, &alt_except);
        if (v == 1) {
            *reason = why;
            return true;
        }
        *host_except = *host_except || alt_except;
    }
    return false;
}

bool agti_sensitive_match(const agti_sensitive *pol, const char *relpath, const char **reason)
{
    const char *why = NULL;
    bool host_except = false;
    bool s = relpath != NULL && check_name(pol, relpath, &why, &host_except);
    if (reason != NULL)
        *reason = s ? why : NULL;
    return s;
}

bool agti_sensitive_host_excepted(const agti_sensitive *pol, const char *relpath)
{
    const char *why = NULL;
    bool host_except = false;
    return relpath != NULL && !check_name(pol, relpath, &why, &host_except) && host_except;
}

bool agti_fs_is_sensitive(const char *relpath, const char **reason)
{
    return agti_sensitive_match(NULL, relpath, reason);
}

static bool ends_with_tail(const char *s, size_t n, const char *tail)
{
    size_t tl = strlen(tail);
    return n >= tl + 1 && memcmp(s + n - tl, tail, tl) == 0 && s[n - tl - 1] == ' ';
}

/* s[0..n) starts with "-----BEGIN " and runs to the end of the armour line
 * (before a line break, a literal "\n" of a JSON or C string, a quote):
 * upper-case words ending in "PRIVATE KEY-----" or "PRIVATE KEY BLOCK-----". */
static bool key_armour(const char *s, size_t n)
{
    size_t k = 11;
    while (k < n && ((s[k] >= 'A' && s[k] <= 'Z') || (s[k] >= '0' && s[k] <= '9') || s[k] == ' ' ||
                     s[k] == '-'))
        k++;
    bool end = k == n || s[k] == '\n' || s[k] == '\r' || s[k] == '"' || s[k] == '\'' ||
               (s[k] == '\\' && k + 1 < n && s[k + 1] == 'n');
    return end && k <= 80 &&
           (ends_with_tail(s, k, "PRIVATE KEY-----") ||
            ends_with_tail(s, k, "PRIVATE KEY BLOCK-----"));
}

/* Whether text[0..len) holds a private key: an armour line such as
 * "-----BEGIN OPENSSH PRIVATE KEY-----" (PEM, PKCS#8, OpenSSH, PGP), also
 * inside a string ("private_key": "-----BEGIN PRIVATE KEY-----\n..." of a
 * service account file) or a diff line, or a PuTTY key file. */
bool agti_sensitive_content(const char *text, size_t len, const char **reason)
{
    const char *why = NULL;
    if (text != NULL && len >= 20 && memcmp(text, "PuTTY-User-Key-File-", 20) == 0)
        why = "private key (PuTTY key file)";
    size_t i = 0;
    while (text != NULL && why == NULL && i + 11 <= len) {
        const char *hit = memmem(text + i, len - i, "-----BEGIN ", 11);
        if (hit == NULL)
            break;
        size_t at = (size_t)(hit - text);
        if (key_armour(hit, len - at))
            why = "private key (a PRIVATE KEY block in the content)";
        i = at + 11;
    }
    if (reason != NULL)
        *reason = why;
    return why != NULL;
}

bool agti_sensitive_check(const agti_sensitive *pol, const char *relpath, const char *text,
                          size_t len, const char **reason)
{
    const char *why = NULL;
    bool host_except = false;
    bool s = relpath != NULL && check_name(pol, relpath, &why, &host_except);
    if (!s && !host_except && text != NULL)
        s = agti_sensitive_content(text, len, &why);
    if (reason != NULL)
        *reason = s ? why : NULL;
    return s;
}
