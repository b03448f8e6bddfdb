/*
 * Hard links to sensitive files. The sensitive-file policy judges names, and
 * a hard link is another name of the same file: `ln .env notes.txt` gives
 * the secret a name no pattern knows. A regular file with more than one
 * link is therefore compared, by device and inode, with the sensitive files
 * of a folder (the workspace, the repository's working tree): those are
 * found by one walk of the folder, made the first time a multi-linked file
 * is judged (most trees have none, so most calls make no walk). The walk
 * goes into ignored folders too (an ignored .env is the usual case), does
 * not follow symbolic links, and stats only files whose name is sensitive.
 * It fails closed: past AGTI_LINKSET_MAX entries or AGTI_LINKSET_DEPTH
 * levels, or when a folder cannot be read, every multi-linked file counts
 * as sensitive.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"
#include "fs/fs.h"

struct agti_inode {
    dev_t dev;
    ino_t ino;
};

void agti_linkset_init(agti_linkset *ls, const agti_sensitive *pol, const char *root)
{
    memset(ls, 0, sizeof *ls);
    ls->pol = pol;
    ls->root = root;
    pthread_mutex_init(&ls->mu, NULL);
}

void agti_linkset_free(agti_linkset *ls)
{
    if (ls == NULL)
        return;
    free(ls->v);
    ls->v = NULL;
    ls->n = ls->cap = 0;
    pthread_mutex_destroy(&ls->mu);
}

typedef struct scan {
    agti_linkset *ls;
    agti_buf path; /* absolute path of the folder being read, then the entry */
    size_t entries;
    bool closed; /* failed closed */
} scan;

static void add(scan *sc, const struct stat *st)
{
    agti_linkset *ls = sc->ls;
    if (ls->n == ls->cap) {
        size_t ncap = ls->cap ? 2 * ls->cap : 8;
        struct agti_inode *nv = realloc(ls->v, ncap * sizeof *nv);
        if (nv == NULL) {
            sc->closed = true;
            return;
        }
        ls->v = nv;
        ls->cap = ncap;
    }
    ls->v[ls->n++] = (struct agti_inode){st->st_dev, st->st_ino};
}

/* Reads the folder fd (consumed) whose absolute path is in sc->path. */
static void scan_dir(scan *sc, int fd, unsigned depth)
{
    DIR *d = fdopendir(fd);
    if (d == NULL) {
        close(fd);
        sc->closed = true;
        return;
    }
    size_t base = sc->path.len;
    struct dirent *de = NULL;
    while (!sc->closed && (errno = 0, de = readdir(d)) != NULL) {
        const char *name = de->d_name;
        if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0')))
            continue;
        if (++sc->entries > AGTI_LINKSET_MAX) {
            sc->closed = true;
            break;
        }
        agti_buf_truncate(&sc->path, base);
        agti_buf_putc(&sc->path, '/');
        agti_buf_puts(&sc->path, name);
        if (sc->path.oom) {
            sc->closed = true;
            break;
        }
        unsigned char t = de->d_type;
        struct stat st;
        if (t == DT_UNKNOWN) {
            if (fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) != 0)
                continue; /* gone meanwhile */
            t = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_LNK;
        }
        if (t == DT_DIR) {
            if (depth + 1 > AGTI_LINKSET_DEPTH) {
                sc->closed = true;
                break;
            }
            int cfd =
                openat(dirfd(d), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
            if (cfd < 0) {
                if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP)
                    sc->closed = true; /* a folder we cannot read may hold one */
                continue;
            }
            scan_dir(sc, cfd, depth + 1);
            continue;
        }
        if (t != DT_REG || !agti_sensitive_match(sc->ls->pol, agti_buf_cstr(&sc->path), NULL))
            continue;
        if (fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
            st.st_nlink > 1)
            add(sc, &st);
    }
    if (de == NULL && errno != 0)
        sc->closed = true;
    agti_buf_truncate(&sc->path, base);
    closedir(d);
}

static void build(agti_linkset *ls)
{
    ls->built = true;
    if (ls->root == NULL) {
        ls->closed = true;
        return;
    }
    scan sc;
    memset(&sc, 0, sizeof sc);
    sc.ls = ls;
    int fd = open(ls->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        ls->closed = true;
        return;
    }
    size_t rl = strlen(ls->root);
    while (rl > 1 && ls->root[rl - 1] == '/')
        rl--;
    agti_buf_put(&sc.path, ls->root, rl == 1 ? 0 : rl); /* "/" as "" so names get one '/' */
    scan_dir(&sc, fd, 0);
    agti_buf_free(&sc.path);
    ls->closed = sc.closed;
}

bool agti_linkset_hit(agti_linkset *ls, const struct stat *st)
{
    if (ls == NULL || !S_ISREG(st->st_mode) || st->st_nlink <= 1)
        return false;
    pthread_mutex_lock(&ls->mu);
    if (!ls->built)
        build(ls);
    bool hit = ls->closed;
    for (size_t i = 0; !hit && i < ls->n; i++)
        hit = ls->v[i].dev == st->st_dev && ls->v[i].ino == st->st_ino;
    pthread_mutex_unlock(&ls->mu);
    return hit;
}

bool agti_linkset_hit_at(agti_linkset *ls, int dirfd, const char *name)
{
    struct stat st;
    if (ls == NULL || fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return false;
    return agti_linkset_hit(ls, &st);
}
