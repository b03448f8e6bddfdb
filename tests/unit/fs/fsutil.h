/* Helpers shared by the fs unit tests: temporary trees. */
#ifndef AGT_TEST_FSUTIL_H
#define AGT_TEST_FSUTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int tu_rm_cb(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    /* chmod follows a symbolic link: a test tree's link to an outside folder
     * (the race and confinement tests plant links to /tmp and its parents)
     * made /tmp itself mode 0700. Links are removed, never chmodded. */
    if (flag != FTW_SL && flag != FTW_SLN)
        chmod(p, 0700);
    return remove(p);
}

__attribute__((unused)) static void tu_rmtree(const char *dir)
{
    nftw(dir, tu_rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

__attribute__((unused)) static char *tu_mkdtemp(void)
{
    const char *t = getenv("TMPDIR");
    char tmpl[4096];
    snprintf(tmpl, sizeof tmpl, "%s/agt-fs-XXXXXX", t && t[0] ? t : "/tmp");
    char *d = mkdtemp(tmpl);
    if (d == NULL)
        return NULL;
    /* Resolve /tmp symlinks so expected real paths compare equal. */
    return realpath(d, NULL);
}

/* Creates every missing directory of rel's parent under root. */
__attribute__((unused)) static void tu_mkparents(const char *root, const char *rel)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    for (char *s = p + strlen(root) + 1; *s; s++) {
        if (*s == '/') {
            *s = '\0';
            mkdir(p, 0755);
            *s = '/';
        }
    }
}

__attribute__((unused)) static int tu_write(const char *root, const char *rel, const char *text)
{
    tu_mkparents(root, rel);
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    FILE *f = fopen(p, "wb");
    if (f == NULL)
        return -1;
    fwrite(text, 1, strlen(text), f);
    fclose(f);
    return 0;
}

__attribute__((unused)) static int tu_mkdir(const char *root, const char *rel)
{
    tu_mkparents(root, rel);
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    return mkdir(p, 0755) == 0 || errno == EEXIST ? 0 : -1;
}

/* root/rel in a static buffer (one at a time). */
__attribute__((unused)) static const char *tu_path(const char *root, const char *rel)
{
    static char p[4096];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    return p;
}

/* Reads a whole file; NULL when missing. */
__attribute__((unused)) static char *tu_read(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 4096, n = 0;
    char *b = malloc(cap + 1);
    size_t got;
    while ((got = fread(b + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            cap *= 2;
            b = realloc(b, cap + 1);
        }
    }
    fclose(f);
    b[n] = '\0';
    if (len)
        *len = n;
    return b;
}

#endif
