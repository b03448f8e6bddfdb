/*
 * Path resolution and workspace confinement. A user path is expanded ("~"),
 * made absolute against the root, normalised lexically, and then walked one
 * component at a time with lstat(): every symlink met (dangling ones too) is
 * replaced by its target, so the inside/outside decision is made on the path
 * the kernel would really open or create. The part that does not exist yet
 * is appended as is (it contains no "..": normalisation removed them).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs.h"

#define MAX_SYMLINK_HOPS 40

/* A list of path components (pointers into one owned copy each). */
typedef struct comps {
    char **v;
    size_t n, cap;
} comps;

static void comps_free(comps *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->v[i]);
    free(c->v);
    c->v = NULL;
    c->n = c->cap = 0;
}

static bool comps_push(comps *c, const char *s, size_t n)
{
    if (agti_grow(&c->v, &c->cap, c->n, sizeof *c->v, 16) != AGT_OK)
        return false;
    char *d = agti_strndup(s, n);
    if (d == NULL)
        return false;
    c->v[c->n++] = d;
    return true;
}

/* Splits path and applies "." and ".." to the components in c. absolute:
 * ".." never climbs above the first component; relative: leading ".." kept. */
static bool comps_add_path(comps *c, const char *path, bool absolute)
{
    const char *s = path;
    while (*s) {
        while (*s == '/')
            s++;
        const char *e = s;
        while (*e && *e != '/')
            e++;
        size_t n = (size_t)(e - s);
        if (n == 0 || (n == 1 && s[0] == '.')) {
            /* skip */
        } else if (n == 2 && s[0] == '.' && s[1] == '.') {
            if (c->n > 0 && strcmp(c->v[c->n - 1], "..") != 0) {
                free(c->v[--c->n]);
            } else if (!absolute) {
                if (!comps_push(c, s, n))
                    return false;
            }
        } else if (!comps_push(c, s, n)) {
            return false;
        }
        s = e;
    }
    return true;
}

static char *comps_join(const comps *c, size_t from, bool absolute)
{
    agti_buf b = AGTI_BUF_INIT;
    for (size_t i = from; i < c->n; i++) {
        if (absolute || i > from)
            agti_buf_putc(&b, '/');
        agti_buf_puts(&b, c->v[i]);
    }
    if (b.len == 0)
        agti_buf_puts(&b, absolute ? "/" : ".");
    return agti_buf_detach(&b);
}

char *agti_path_normalize(const char *path)
{
    if (path == NULL)
        return NULL;
    bool absolute = path[0] == '/';
    comps c = {NULL, 0, 0};
    char *r = NULL;
    if (comps_add_path(&c, path, absolute))
        r = comps_join(&c, 0, absolute);
    comps_free(&c);
    if (r == NULL)
        agti_oom();
    return r;
}

bool agti_path_is_within(const char *path, const char *dir)
{
    size_t dl = strlen(dir);
    while (dl > 1 && dir[dl - 1] == '/')
        dl--;
    if (dl == 1 && dir[0] == '/')
        return path[0] == '/';
    return strncmp(path, dir, dl) == 0 && (path[dl] == '\0' || path[dl] == '/');
}

/* Resolves the absolute, normalised path abs to the real path (symlinks
 * resolved where they exist). *via_link is set when a symlink was followed. */
static int real_path(const char *abs, char **out, bool *via_link)
{
    comps todo = {NULL, 0, 0}; /* remaining components, reversed (stack) */
    comps done = {NULL, 0, 0}; /* resolved components */
    comps tmp = {NULL, 0, 0};
    int rc = AGT_OK;
    int hops = 0;
    *out = NULL;
    if (!comps_add_path(&tmp, abs, true))
        goto oom;
    for (size_t i = tmp.n; i-- > 0;) {
        if (!comps_push(&todo, tmp.v[i], strlen(tmp.v[i])))
            goto oom;
    }
    comps_free(&tmp);
    bool exists = true;
    while (todo.n > 0) {
        char *name = todo.v[--todo.n];
        if (strcmp(name, "..") == 0) {
            /* From a symlink target: the resolved prefix is real, so ".." is
             * its physical parent. */
            if (done.n > 0)
                free(done.v[--done.n]);
            free(name);
            continue;
        }
        if (!comps_push(&done, name, strlen(name))) {
            free(name);
            goto oom;
        }
        free(name);
        if (!exists)
            continue;
        char *cur = comps_join(&done, 0, true);
        if (cur == NULL)
            goto oom;
        struct stat st;
        if (lstat(cur, &st) != 0) {
            /* Missing (or not searchable): the rest is taken literally. */
            exists = false;
            free(cur);
            continue;
        }
        if (!S_ISLNK(st.st_mode)) {
            free(cur);
            continue;
        }
        if (++hops > MAX_SYMLINK_HOPS) {
            rc = agti_error(AGT_ELIMIT, "too many levels of symbolic links at %s", cur);
            free(cur);
            goto out;
        }
        char target[PATH_MAX];
        ssize_t tl = readlink(cur, target, sizeof target - 1);
        free(cur);
        if (tl < 0) {
            exists = false;
            continue;
        }
        target[tl] = '\0';
        *via_link = true;
        free(done.v[--done.n]);
        if (target[0] == '/')
            comps_free(&done);
        /* Push the target's components (raw: ".." resolved physically). */
        const char *s = target;
        size_t start = tmp.n;
        while (*s) {
            while (*s == '/')
                s++;
            const char *e = s;
            while (*e && *e != '/')
                e++;
            if (e > s && !(e - s == 1 && s[0] == '.') && !comps_push(&tmp, s, (size_t)(e - s)))
                goto oom;
            s = e;
        }
        for (size_t i = tmp.n; i-- > start;)
            if (!comps_push(&todo, tmp.v[i], strlen(tmp.v[i])))
                goto oom;
        comps_free(&tmp);
    }
    *out = comps_join(&done, 0, true);
    if (*out == NULL)
        goto oom;
    goto out;
oom:
    rc = agti_oom();
out:
    comps_free(&todo);
    comps_free(&done);
    comps_free(&tmp);
    return rc;
}

int agti_path_real(const char *abs, char **out)
{
    bool via = false;
    *out = NULL;
    if (abs == NULL || abs[0] != '/')
        return agti_error(AGT_EINVAL, "agti_path_real: not an absolute path");
    char *norm = agti_path_normalize(abs);
    if (norm == NULL)
        return AGT_ENOMEM;
    int rc = real_path(norm, out, &via);
    free(norm);
    return rc;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* "file:" followed by "/" (any case of the scheme): the forms of RFC 8089
 * that name a local absolute path. "file:notes" stays a relative name. */
static bool is_file_uri(const char *p)
{
    return strncasecmp(p, "file:", 5) == 0 && p[5] == '/';
}

/* The absolute path a file URI names, percent-decoded: file:///p,
 * file://localhost/p and file:/p. Another host, a query, a fragment, a bad
 * or NUL escape are refused with the reason. */
static int from_file_uri(const char *uri, char **out)
{
    *out = NULL;
    const char *p = uri + 5;
    if (p[1] == '/') {
        const char *host = p + 2, *slash = strchr(host, '/');
        size_t hl = slash ? (size_t)(slash - host) : strlen(host);
        if (hl != 0 && !(hl == 9 && strncasecmp(host, "localhost", 9) == 0))
            return agti_error(AGT_EINVAL,
                              "the file URI names the host '%.*s'; only files on this machine "
                              "can be used (file:///absolute/path or "
                              "file://localhost/absolute/path), or give the path itself",
                              (int)hl, host);
        if (slash == NULL)
            return agti_error(AGT_EINVAL,
                              "the file URI names no path; give it as file:///absolute/path "
                              "or give the path itself");
        p = slash;
    }
    if (strpbrk(p, "?#") != NULL)
        return agti_error(AGT_EINVAL,
                          "a file URI with a query (?) or a fragment (#) does not name a "
                          "file; write '?' as %%3F and '#' as %%23, or give the path itself");
    char *d = malloc(strlen(p) + 1);
    if (d == NULL)
        return agti_oom();
    size_t n = 0;
    for (; *p; p++) {
        if (*p != '%') {
            d[n++] = *p;
            continue;
        }
        int hi = hexval(p[1]), lo = hi < 0 ? -1 : hexval(p[2]);
        if (hi < 0 || lo < 0) {
            free(d);
            return agti_error(AGT_EINVAL,
                              "'%%' in a file URI must be followed by two hex digits (%%25 "
                              "for a literal '%%')");
        }
        if (hi == 0 && lo == 0) {
            free(d);
            return agti_error(AGT_EINVAL, "%%00 (a NUL byte) cannot be part of a file name");
        }
        d[n++] = (char)(hi * 16 + lo);
        p += 2;
    }
    d[n] = '\0';
    *out = d;
    return AGT_OK;
}

int agti_path_absolute(const char *base, const char *home, const char *user_path, char **out)
{
    *out = NULL;
    if (is_file_uri(user_path))
        return from_file_uri(user_path, out);
    if (user_path[0] == '~') {
        if (user_path[1] != '\0' && user_path[1] != '/')
            return agti_error(AGT_EINVAL,
                              "path '%s': only '~' and '~/...' (the current user's home) are "
                              "supported; give the absolute path instead",
                              user_path);
        if (home == NULL)
            home = getenv("HOME");
        if (home == NULL || home[0] != '/')
            return agti_error(AGT_EINVAL, "path '%s': the home directory is not known", user_path);
        *out = agti_aprintf("%s/%s", home, user_path + 1);
    } else if (user_path[0] == '/') {
        *out = agti_strdup(user_path);
    } else {
        *out = agti_aprintf("%s/%s", base, user_path);
    }
    return *out ? AGT_OK : agti_oom();
}

int agti_path_resolve(const char *root, const char *const *allowed, size_t nallowed,
                      const char *home, const char *user_path, char **out_abs, char **out_rel)
{
    if (out_abs != NULL)
        *out_abs = NULL;
    if (out_rel != NULL)
        *out_rel = NULL;
    if (root == NULL || root[0] != '/')
        return agti_error(AGT_EINVAL, "the workspace root must be an absolute path");
    if (user_path == NULL || user_path[0] == '\0')
        return agti_error(AGT_EINVAL, "the path is empty; give a file path relative to the "
                                      "workspace or an absolute one");
    char *root_norm = agti_path_normalize(root);
    char *root_real = NULL, *abs = NULL, *norm = NULL, *real = NULL;
    bool via_link = false, root_link = false;
    int rc = root_norm ? real_path(root_norm, &root_real, &root_link) : AGT_ENOMEM;
    if (rc != AGT_OK)
        goto out;
    struct stat st;
    if (stat(root_real, &st) != 0 || !S_ISDIR(st.st_mode)) {
        rc = agti_error(AGT_ENOTFOUND, "the workspace root %s is not an existing directory", root);
        goto out;
    }
    if ((rc = agti_path_absolute(root_real, home, user_path, &abs)) != AGT_OK)
        goto out;
    if ((norm = agti_path_normalize(abs)) == NULL) {
        rc = AGT_ENOMEM;
        goto out;
    }
    if ((rc = real_path(norm, &real, &via_link)) != AGT_OK)
        goto out;
    const char *display_base = NULL;
    if (agti_path_is_within(real, root_real)) {
        display_base = root_real;
    } else {
        for (size_t i = 0; i < nallowed && display_base == NULL; i++) {
            if (allowed[i] == NULL || allowed[i][0] != '/')
                continue;
            char *an = agti_path_normalize(allowed[i]);
            char *ar = NULL;
            bool al = false;
            if (an != NULL && real_path(an, &ar, &al) == AGT_OK && agti_path_is_within(real, ar))
                display_base = "";
            free(an);
            free(ar);
        }
        if (display_base == NULL) {
            /* Where a link outside leads is not told (it may be anything). */
            if (via_link)
                rc = agti_error(AGT_EDENIED,
                                "path '%s' leads outside the workspace %s through a symbolic "
                                "link; ask the user to add the folder it leads to to the allowed "
                                "paths",
                                user_path, root_real);
            else
                rc = agti_error(AGT_EDENIED,
                                "path '%s' resolves to %s, which is outside the workspace %s; "
                                "ask the user to add it to the allowed paths",
                                user_path, real, root_real);
            goto out;
        }
    }
    if (out_rel != NULL) {
        if (display_base[0] == '\0')
            *out_rel = agti_strdup(real);
        else if (strlen(real) == strlen(root_real))
            *out_rel = agti_strdup(".");
        else
            *out_rel = agti_strdup(real + strlen(root_real) + (strcmp(root_real, "/") != 0));
        if (*out_rel == NULL) {
            rc = agti_oom();
            goto out;
        }
    }
    if (out_abs != NULL) {
        *out_abs = real;
        real = NULL;
    }
out:
    if (rc != AGT_OK && out_rel != NULL) {
        free(*out_rel);
        *out_rel = NULL;
    }
    free(root_norm);
    free(root_real);
    free(abs);
    free(norm);
    free(real);
    return rc;
}
