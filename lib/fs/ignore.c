/*
 * Ignore rules with git's semantics (dir.c): .gitignore at every level plus
 * .ignore and .rgignore (ripgrep's files, read after .gitignore of the same
 * directory so they win), <root>/.git/info/exclude and the global excludes
 * file. Precedence: within a file the last matching line wins; a deeper
 * directory wins over a shallower one; then info/exclude; then the global
 * file. A path is ignored when it or any parent directory is excluded, and
 * the ignore files inside an excluded directory are never read.
 *
 * The files inside the tree are opened below the root's descriptor, never by
 * their full name, and never through a symbolic link: a walker hands in the
 * descriptor of the folder it has open (agti_ignore_push_at), other lookups
 * go through agti_fs_open_beneath from the root (no link followed on the
 * way, none as the file itself). So a .gitignore that is a symlink is not
 * read (as git does since 2.32, which opens in-tree ignore files with
 * O_NOFOLLOW), wherever it points, and a folder swapped for a symlink after
 * the walker opened it cannot redirect the read. .git/info/exclude is read
 * the same way. The global excludes file is the user's own configuration,
 * outside the tree, and is read by name.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs.h"

#define IGN_MAX_FILE (64u << 20)

/* How a rule is matched. Basename rules that are a plain name ("Makefile",
 * "build/") or a star and a plain suffix ("*.o") are found through a hash
 * table keyed by the name or by the basename's last bytes, so an entry
 * costs a few lookups instead of a match against every rule; the other
 * rules are tried newest first, only down to the newest indexed hit. */
enum { PAT_OTHER = 0, PAT_NAME, PAT_SUFFIX };

/* Distinct suffix lengths indexed per list; more go to the slow path. */
#define IGN_MAX_SUFLENS 16
#define NO_PAT SIZE_MAX

typedef struct ign_pat {
    agti_wm *wm;
    bool negative;
    bool mustbedir;
    bool nodir;
    int kind;  /* PAT_* */
    char *lit; /* the name or the suffix (PAT_NAME, PAT_SUFFIX) */
    size_t litlen;
    size_t prev; /* previous rule with the same key, or NO_PAT */
} ign_pat;

typedef struct ign_key {
    size_t last; /* newest rule with this key; NO_PAT for an empty slot */
} ign_key;

typedef struct ign_list {
    /* Holders: the frames, the cache, snapshots and forked contexts (a list
     * is never changed once loaded, so threads may share it). */
    atomic_size_t refs;
    char *base; /* "" or "dir/sub/" */
    size_t baselen;
    ign_pat *pats;
    size_t n, cap;
    ign_key *keys; /* open addressing over (kind, lit) */
    size_t keycap, nkeys;
    size_t *others; /* indices of PAT_OTHER rules, ascending */
    size_t nothers, capothers;
    size_t suflens[IGN_MAX_SUFLENS];
    size_t nsuflens;
} ign_list;

typedef struct ign_frame {
    ign_list *list; /* NULL when the directory has no rules; else a reference */
} ign_frame;

struct agti_ignore {
    char *root;
    int rootfd; /* the root (O_PATH); -1 when it could not be opened */
    unsigned flags;
    ign_list *global;
    ign_list *exclude;
    ign_frame *stack;
    size_t depth, stack_cap;
    ign_list **tab; /* cache for queries: open addressing on base */
    size_t tab_cap, tab_n;
};

/* ---- lists ------------------------------------------------------------ */

static ign_list *list_new(const char *reldir)
{
    ign_list *l = calloc(1, sizeof *l);
    if (l == NULL)
        return NULL;
    size_t n = strlen(reldir);
    l->base = malloc(n + 2);
    if (l->base == NULL) {
        free(l);
        return NULL;
    }
    atomic_init(&l->refs, 1);
    memcpy(l->base, reldir, n);
    if (n > 0)
        l->base[n++] = '/';
    l->base[n] = '\0';
    l->baselen = n;
    return l;
}

static ign_list *list_ref(ign_list *l)
{
    if (l != NULL)
        atomic_fetch_add_explicit(&l->refs, 1, memory_order_relaxed);
    return l;
}

/* Drops a reference; the last one frees the list. */
static void list_free(ign_list *l)
{
    if (l == NULL || atomic_fetch_sub_explicit(&l->refs, 1, memory_order_acq_rel) != 1)
        return;
    for (size_t i = 0; i < l->n; i++) {
        agti_wm_free(l->pats[i].wm);
        free(l->pats[i].lit);
    }
    free(l->pats);
    free(l->keys);
    free(l->others);
    free(l->base);
    free(l);
}

/* git's trim_trailing_spaces(): unescaped trailing spaces go. */
static size_t trim_trailing_spaces(const char *s, size_t len)
{
    size_t last_space = len;
    bool in_space = false;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == ' ') {
            if (!in_space) {
                last_space = i;
                in_space = true;
            }
        } else if (s[i] == '\\') {
            i++;
            if (i >= len)
                return len;
            in_space = false;
        } else {
            in_space = false;
        }
    }
    return in_space ? last_space : len;
}

static size_t key_hash(int kind, const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    h ^= (unsigned)kind;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return (size_t)(h ^ (h >> 29));
}

/* The slot of key (kind, s[0..n)): its rule chain, or the empty slot where
 * it goes. keycap > 0. */
static ign_key *key_slot(const ign_list *l, int kind, const char *s, size_t n)
{
    size_t mask = l->keycap - 1;
    for (size_t i = key_hash(kind, s, n) & mask;; i = (i + 1) & mask) {
        ign_key *k = &l->keys[i];
        if (k->last == NO_PAT)
            return k;
        const ign_pat *p = &l->pats[k->last];
        if (p->kind == kind && p->litlen == n && memcmp(p->lit, s, n) == 0)
            return k;
    }
}

static int key_grow(ign_list *l)
{
    size_t nc = l->keycap ? l->keycap * 2 : 16;
    ign_key *old = l->keys;
    size_t oldcap = l->keycap;
    l->keys = malloc(nc * sizeof *l->keys);
    if (l->keys == NULL) {
        l->keys = old;
        return agti_oom();
    }
    for (size_t i = 0; i < nc; i++)
        l->keys[i].last = NO_PAT;
    l->keycap = nc;
    for (size_t i = 0; i < oldcap; i++)
        if (old[i].last != NO_PAT) {
            const ign_pat *p = &l->pats[old[i].last];
            *key_slot(l, p->kind, p->lit, p->litlen) = old[i];
        }
    free(old);
    return AGT_OK;
}

static bool has_glob_char(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] == '*' || s[i] == '?' || s[i] == '[' || s[i] == ']' || s[i] == '\\')
            return true;
    return false;
}

/* Files rule l->pats[idx] (all but the index fields set) under its key or
 * among the others. */
static int list_index(ign_list *l, size_t idx)
{
    ign_pat *p = &l->pats[idx];
    if (p->kind == PAT_SUFFIX) {
        size_t k = 0;
        while (k < l->nsuflens && l->suflens[k] != p->litlen)
            k++;
        if (k == l->nsuflens) {
            if (k == IGN_MAX_SUFLENS)
                p->kind = PAT_OTHER;
            else
                l->suflens[l->nsuflens++] = p->litlen;
        }
    }
    if (p->kind != PAT_OTHER) {
        if ((l->nkeys + 1) * 2 > l->keycap && key_grow(l) != AGT_OK)
            return AGT_ENOMEM;
        ign_key *k = key_slot(l, p->kind, p->lit, p->litlen);
        if (k->last == NO_PAT)
            l->nkeys++;
        p->prev = k->last;
        k->last = idx;
        return AGT_OK;
    }
    if (agti_grow(&l->others, &l->capothers, l->nothers, sizeof *l->others, 8) != AGT_OK)
        return AGT_ENOMEM;
    l->others[l->nothers++] = idx;
    return AGT_OK;
}

static int list_add_line(ign_list *l, const char *s, size_t len)
{
    ign_pat p = {NULL, false, false, false, PAT_OTHER, NULL, 0, NO_PAT};
    if (len > 0 && s[0] == '!') {
        p.negative = true;
        s++;
        len--;
    }
    if (len > 0 && s[len - 1] == '/') {
        p.mustbedir = true;
        len--;
    }
    p.nodir = memchr(s, '/', len) == NULL;
    if (!p.nodir && s[0] == '/') {
        s++;
        len--;
    }
    int rc = agti_wm_compile(&p.wm, s, len, 0, NULL);
    if (rc != AGT_OK)
        return rc;
    if (p.nodir && len > 0 && !has_glob_char(s, len)) {
        p.kind = PAT_NAME;
        p.lit = agti_strndup(s, len);
        p.litlen = len;
    } else if (p.nodir && len > 1 && s[0] == '*' && !has_glob_char(s + 1, len - 1)) {
        p.kind = PAT_SUFFIX;
        p.lit = agti_strndup(s + 1, len - 1);
        p.litlen = len - 1;
    }
    if (p.kind != PAT_OTHER && p.lit == NULL) {
        agti_wm_free(p.wm);
        return agti_oom();
    }
    if (agti_grow(&l->pats, &l->cap, l->n, sizeof *l->pats, 8) != AGT_OK) {
        agti_wm_free(p.wm);
        free(p.lit);
        return AGT_ENOMEM;
    }
    l->pats[l->n++] = p;
    rc = list_index(l, l->n - 1);
    if (rc != AGT_OK) {
        l->n--;
        agti_wm_free(p.wm);
        free(p.lit);
    }
    return rc;
}

/* git's add_patterns_from_buffer(): BOM, '\n' lines, '\r' before it dropped,
 * '#' comments, empty lines skipped, trailing spaces trimmed. */
static int list_add_text(ign_list *l, const char *text, size_t len)
{
    size_t i = 0;
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        i = 3;
    while (i < len) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - text) : len;
        size_t n = end - i;
        if (n > 0 && text[i] != '#') {
            if (text[i + n - 1] == '\r')
                n--;
            n = trim_trailing_spaces(text + i, n);
            if (n > 0) {
                int rc = list_add_line(l, text + i, n);
                if (rc != AGT_OK)
                    return rc;
            }
        }
        i = end + 1;
    }
    return AGT_OK;
}

/* Reads the open file fd into l and closes it; anything but a regular file
 * (a FIFO, a device: opened O_NONBLOCK so it cannot hang) is no rules. */
static int list_add_fd(ign_list *l, int fd)
{
    if (fd < 0)
        return AGT_OK;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
        (uint64_t)st.st_size > IGN_MAX_FILE) {
        close(fd);
        return AGT_OK;
    }
    size_t sz = (size_t)st.st_size;
    char *buf = malloc(sz);
    if (buf == NULL) {
        close(fd);
        return agti_oom();
    }
    size_t got = agti_read_full(fd, buf, sz);
    close(fd);
    int rc = list_add_text(l, buf, got);
    free(buf);
    return rc;
}

#define IGN_OPEN_FLAGS (O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)

/* Reads the file at path (outside the tree: the global excludes) into l; a
 * missing or unreadable file is no rules. */
static int list_add_file(ign_list *l, const char *path)
{
    return list_add_fd(l, open(path, IGN_OPEN_FLAGS));
}

/* Reads rel (relative to the root, '/'-separated) into l, opened below the
 * root's descriptor without following any symbolic link. */
static int list_add_beneath(const agti_ignore *ig, ign_list *l, const char *rel)
{
    if (ig->rootfd < 0)
        return AGT_OK;
    return list_add_fd(l, agti_fs_open_beneath(ig->rootfd, rel, IGN_OPEN_FLAGS));
}

/* The newest rule of the chain starting at idx that applies to the entry
 * (directory-only rules skip files), or NO_PAT. */
static size_t chain_first(const ign_list *l, size_t idx, bool is_dir)
{
    while (idx != NO_PAT && l->pats[idx].mustbedir && !is_dir)
        idx = l->pats[idx].prev;
    return idx;
}

/* 1 excluded, 0 re-included by a negated rule, -1 no rule matched. Within a
 * list the newest matching rule decides. */
static int list_match(const ign_list *l, const char *path, size_t len, bool is_dir)
{
    if (l == NULL || l->n == 0)
        return -1;
    const char *slash = NULL;
    for (size_t i = len; i-- > 0;)
        if (path[i] == '/') {
            slash = path + i;
            break;
        }
    const char *bname = slash ? slash + 1 : path;
    size_t blen = len - (size_t)(bname - path);
    size_t best = NO_PAT;
    if (l->nkeys > 0) {
        ign_key *k = key_slot(l, PAT_NAME, bname, blen);
        if (k->last != NO_PAT)
            best = chain_first(l, k->last, is_dir);
        for (size_t j = 0; j < l->nsuflens; j++) {
            size_t sl = l->suflens[j];
            if (sl > blen)
                continue;
            k = key_slot(l, PAT_SUFFIX, bname + blen - sl, sl);
            if (k->last == NO_PAT)
                continue;
            size_t c = chain_first(l, k->last, is_dir);
            if (c != NO_PAT && (best == NO_PAT || c > best))
                best = c;
        }
    }
    bool in_base = l->baselen == 0 || (len > l->baselen && memcmp(path, l->base, l->baselen) == 0);
    /* Only rules newer than the indexed hit can change the answer. */
    for (size_t j = l->nothers; j-- > 0;) {
        size_t i = l->others[j];
        if (best != NO_PAT && i < best)
            break;
        const ign_pat *p = &l->pats[i];
        if (p->mustbedir && !is_dir)
            continue;
        bool m;
        if (p->nodir)
            m = agti_wm_match(p->wm, bname, blen);
        else
            m = in_base && agti_wm_match(p->wm, path + l->baselen, len - l->baselen);
        if (m) {
            best = i;
            break;
        }
    }
    if (best == NO_PAT)
        return -1;
    return l->pats[best].negative ? 0 : 1;
}

/* ---- context ---------------------------------------------------------- */

static char *join(const char *a, const char *b)
{
    size_t la = strlen(a);
    if (la > 0 && a[la - 1] == '/')
        return agti_aprintf("%s%s", a, b);
    return agti_aprintf("%s/%s", a, b);
}

static char *expand_home(const char *v, const char *home)
{
    if (v[0] == '~' && (v[1] == '/' || v[1] == '\0') && home != NULL)
        return agti_aprintf("%s%s", home, v + 1);
    return agti_strdup(v);
}

/* Minimal git config reader: the last core.excludesFile in path, or NULL. */
static char *config_excludes_file(const char *path)
{
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return NULL;
    char line[4096];
    bool in_core = false;
    char *found = NULL;
    while (fgets(line, sizeof line, f) != NULL) {
        char *s = line;
        while (*s == ' ' || *s == '\t')
            s++;
        size_t n = strlen(s);
        while (n > 0 &&
               (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
            s[--n] = '\0';
        if (s[0] == '[') {
            char *e = strchr(s, ']');
            in_core = e != NULL && (size_t)(e - s) == 5 && strncasecmp(s + 1, "core", 4) == 0;
            continue;
        }
        if (!in_core || strncasecmp(s, "excludesfile", 12) != 0)
            continue;
        char *v = s + 12;
        while (*v == ' ' || *v == '\t')
            v++;
        if (*v != '=')
            continue;
        v++;
        while (*v == ' ' || *v == '\t')
            v++;
        size_t vl = strlen(v);
        if (vl >= 2 && v[0] == '"' && v[vl - 1] == '"') {
            v[vl - 1] = '\0';
            v++;
        }
        char *copy = agti_strdup(v);
        if (copy != NULL) {
            free(found);
            found = copy;
        }
    }
    fclose(f);
    return found;
}

static int load_global(agti_ignore *ig, const char *home)
{
    const char *xdg = getenv("XDG_CONFIG_HOME");
    char *xdg_dir = NULL;
    if (xdg != NULL && xdg[0] != '\0')
        xdg_dir = agti_strdup(xdg);
    else if (home != NULL)
        xdg_dir = join(home, ".config");
    char *file = NULL;
    /* git reads $XDG_CONFIG_HOME/git/config, then ~/.gitconfig (later wins). */
    if (xdg_dir != NULL) {
        char *cfg = join(xdg_dir, "git/config");
        if (cfg != NULL)
            file = config_excludes_file(cfg);
        free(cfg);
    }
    if (home != NULL) {
        char *cfg = join(home, ".gitconfig");
        char *v = cfg ? config_excludes_file(cfg) : NULL;
        if (v != NULL) {
            free(file);
            file = v;
        }
        free(cfg);
    }
    char *path = NULL;
    if (file != NULL)
        path = expand_home(file, home);
    else if (xdg_dir != NULL)
        path = join(xdg_dir, "git/ignore");
    free(file);
    free(xdg_dir);
    int rc = AGT_OK;
    if (path != NULL) {
        ig->global = list_new("");
        rc = ig->global ? list_add_file(ig->global, path) : agti_oom();
    }
    free(path);
    return rc;
}

/* The context for root, with rootfd its descriptor (owned; -1: none). */
static int ignore_new(agti_ignore **out, int rootfd, const char *root, const char *home,
                      unsigned flags)
{
    agti_ignore *ig = calloc(1, sizeof *ig);
    if (ig == NULL) {
        if (rootfd >= 0)
            close(rootfd);
        return agti_oom();
    }
    ig->flags = flags;
    ig->rootfd = rootfd;
    ig->root = agti_strdup(root);
    if (ig->root == NULL) {
        agti_ignore_free(ig);
        return agti_oom();
    }
    if (home == NULL)
        home = getenv("HOME");
    int rc = AGT_OK;
    if (!(flags & AGTI_IGN_NO_GLOBAL))
        rc = load_global(ig, home);
    if (rc == AGT_OK && !(flags & AGTI_IGN_NO_EXCLUDE)) {
        ig->exclude = list_new("");
        rc = ig->exclude == NULL ? agti_oom()
                                 : list_add_beneath(ig, ig->exclude, ".git/info/exclude");
    }
    if (rc != AGT_OK) {
        agti_ignore_free(ig);
        return rc;
    }
    *out = ig;
    return AGT_OK;
}

int agti_ignore_new(agti_ignore **out, const char *root, const char *home, unsigned flags)
{
    if (out == NULL || root == NULL || root[0] == '\0')
        return agti_error(AGT_EINVAL, "ignore: root directory must be given");
    *out = NULL;
    return ignore_new(out, open(root, O_PATH | O_DIRECTORY | O_CLOEXEC), root, home, flags);
}

int agti_ignore_new_at(agti_ignore **out, int rootfd, const char *root, const char *home,
                       unsigned flags)
{
    if (out == NULL || root == NULL || root[0] == '\0' || rootfd < 0)
        return agti_error(AGT_EINVAL, "ignore: root directory must be given");
    *out = NULL;
    int fd = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
    if (fd < 0)
        return agti_error(AGT_EIO, "ignore: cannot use the descriptor of %s: %s", root,
                          strerror(errno));
    return ignore_new(out, fd, root, home, flags);
}

void agti_ignore_free(agti_ignore *ig)
{
    if (ig == NULL)
        return;
    while (ig->depth > 0)
        agti_ignore_pop(ig);
    free(ig->stack);
    for (size_t i = 0; i < ig->tab_cap; i++)
        list_free(ig->tab[i]);
    free(ig->tab);
    list_free(ig->global);
    list_free(ig->exclude);
    if (ig->rootfd >= 0)
        close(ig->rootfd);
    free(ig->root);
    free(ig);
}

/* Reads the ignore files of reldir into a new list; present (AGTI_IGN_HAS_*)
 * says which of them the directory listing showed, so absent ones are not
 * opened. dirfd: the folder, open (-1: looked up below the root). */
static int load_dir(const agti_ignore *ig, const char *reldir, int dirfd, unsigned present,
                    ign_list **out)
{
    *out = NULL;
    ign_list *l = list_new(reldir);
    if (l == NULL)
        return agti_oom();
    static const char *const names[] = {".gitignore", ".ignore", ".rgignore"};
    size_t nnames = (ig->flags & AGTI_IGN_NO_DOTIGNORE) ? 1 : 3;
    int rc = AGT_OK;
    for (size_t i = 0; i < nnames && rc == AGT_OK; i++) {
        if (!(present & (1u << i)))
            continue;
        if (dirfd >= 0) {
            rc = list_add_fd(l, openat(dirfd, names[i], IGN_OPEN_FLAGS | O_NOFOLLOW));
            continue;
        }
        char *p = reldir[0] ? agti_aprintf("%s/%s", reldir, names[i]) : agti_strdup(names[i]);
        if (p == NULL) {
            rc = agti_oom();
            break;
        }
        rc = list_add_beneath(ig, l, p);
        free(p);
    }
    if (rc != AGT_OK) {
        list_free(l);
        return rc;
    }
    *out = l;
    return AGT_OK;
}

static size_t hash_str(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return (size_t)h;
}

/* The cached list for reldir (base = reldir + "/"), or NULL. */
static ign_list *cache_find(const agti_ignore *ig, const char *reldir, size_t n)
{
    if (ig->tab_cap == 0)
        return NULL;
    size_t mask = ig->tab_cap - 1;
    for (size_t i = hash_str(reldir, n) & mask;; i = (i + 1) & mask) {
        ign_list *l = ig->tab[i];
        if (l == NULL)
            return NULL;
        size_t bl = l->baselen ? l->baselen - 1 : 0;
        if (bl == n && memcmp(l->base, reldir, n) == 0)
            return l;
    }
}

static int cache_put(agti_ignore *ig, ign_list *l)
{
    if ((ig->tab_n + 1) * 2 > ig->tab_cap) {
        size_t nc = ig->tab_cap ? ig->tab_cap * 2 : 64;
        ign_list **nt = calloc(nc, sizeof *nt);
        if (nt == NULL)
            return agti_oom();
        for (size_t i = 0; i < ig->tab_cap; i++) {
            ign_list *e = ig->tab[i];
            if (e == NULL)
                continue;
            size_t bl = e->baselen ? e->baselen - 1 : 0;
            size_t j = hash_str(e->base, bl) & (nc - 1);
            while (nt[j] != NULL)
                j = (j + 1) & (nc - 1);
            nt[j] = e;
        }
        free(ig->tab);
        ig->tab = nt;
        ig->tab_cap = nc;
    }
    size_t bl = l->baselen ? l->baselen - 1 : 0;
    size_t j = hash_str(l->base, bl) & (ig->tab_cap - 1);
    while (ig->tab[j] != NULL)
        j = (j + 1) & (ig->tab_cap - 1);
    ig->tab[j] = l;
    ig->tab_n++;
    return AGT_OK;
}

/* The cached list of reldir[0..n), loading it on first use. */
static int cache_get(agti_ignore *ig, const char *reldir, size_t n, ign_list **out)
{
    ign_list *l = cache_find(ig, reldir, n);
    if (l != NULL) {
        *out = l;
        return AGT_OK;
    }
    char *d = agti_strndup(reldir, n);
    if (d == NULL)
        return agti_oom();
    int rc = load_dir(ig, d, -1, AGTI_IGN_HAS_ALL, &l);
    free(d);
    if (rc == AGT_OK && (rc = cache_put(ig, l)) != AGT_OK)
        list_free(l);
    *out = rc == AGT_OK ? l : NULL;
    return rc;
}

int agti_ignore_add_text(agti_ignore *ig, const char *reldir, const char *text, size_t len)
{
    if (ig == NULL || reldir == NULL || (text == NULL && len > 0))
        return agti_error(AGT_EINVAL, "ignore: NULL argument");
    ign_list *l;
    int rc = cache_get(ig, reldir, strlen(reldir), &l);
    if (rc != AGT_OK)
        return rc;
    return list_add_text(l, text, len);
}

int agti_ignore_push(agti_ignore *ig, const char *reldir)
{
    return agti_ignore_push_listed(ig, reldir, AGTI_IGN_HAS_ALL);
}

int agti_ignore_push_listed(agti_ignore *ig, const char *reldir, unsigned present)
{
    return agti_ignore_push_at(ig, reldir, -1, present);
}

int agti_ignore_push_at(agti_ignore *ig, const char *reldir, int dirfd, unsigned present)
{
    if (agti_grow(&ig->stack, &ig->stack_cap, ig->depth, sizeof *ig->stack, 16) != AGT_OK)
        return AGT_ENOMEM;
    ign_frame fr = {NULL};
    size_t n = strlen(reldir);
    fr.list = list_ref(cache_find(ig, reldir, n));
    if (fr.list == NULL) {
        int rc = load_dir(ig, reldir, dirfd, present, &fr.list);
        if (rc != AGT_OK)
            return rc;
        if (fr.list->n == 0) {
            list_free(fr.list);
            fr.list = NULL;
        }
    }
    ig->stack[ig->depth++] = fr;
    return AGT_OK;
}

void agti_ignore_pop(agti_ignore *ig)
{
    if (ig == NULL || ig->depth == 0)
        return;
    list_free(ig->stack[--ig->depth].list);
}

size_t agti_ignore_depth(const agti_ignore *ig)
{
    return ig != NULL ? ig->depth : 0;
}

struct agti_ignore_snap {
    size_t n;
    ign_list *lists[]; /* references, NULL for folders without rules */
};

int agti_ignore_snapshot(const agti_ignore *ig, size_t depth, agti_ignore_snap **out)
{
    *out = NULL;
    if (depth > ig->depth)
        return agti_error(AGT_EINVAL, "ignore: snapshot of %zu frames, %zu pushed", depth,
                          ig->depth);
    agti_ignore_snap *s = malloc(sizeof *s + depth * sizeof s->lists[0]);
    if (s == NULL)
        return agti_oom();
    s->n = depth;
    for (size_t i = 0; i < depth; i++)
        s->lists[i] = list_ref(ig->stack[i].list);
    *out = s;
    return AGT_OK;
}

void agti_ignore_snap_free(agti_ignore_snap *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->n; i++)
        list_free(s->lists[i]);
    free(s);
}

int agti_ignore_restore(agti_ignore *ig, const agti_ignore_snap *s)
{
    if (s->n > ig->stack_cap) {
        ign_frame *ns = realloc(ig->stack, s->n * sizeof *ns);
        if (ns == NULL)
            return agti_oom();
        ig->stack = ns;
        ig->stack_cap = s->n;
    }
    while (ig->depth > 0)
        agti_ignore_pop(ig);
    for (size_t i = 0; i < s->n; i++)
        ig->stack[i].list = list_ref(s->lists[i]);
    ig->depth = s->n;
    return AGT_OK;
}

int agti_ignore_fork(const agti_ignore *ig, agti_ignore **out)
{
    *out = NULL;
    agti_ignore *f = calloc(1, sizeof *f);
    if (f == NULL)
        return agti_oom();
    f->flags = ig->flags;
    f->rootfd = -1;
    f->root = agti_strdup(ig->root);
    if (f->root == NULL) {
        free(f);
        return agti_oom();
    }
    if (ig->rootfd >= 0 && (f->rootfd = fcntl(ig->rootfd, F_DUPFD_CLOEXEC, 3)) < 0) {
        int rc = agti_error(AGT_EIO, "ignore: cannot use the descriptor of %s: %s", ig->root,
                            strerror(errno));
        agti_ignore_free(f);
        return rc;
    }
    f->global = list_ref(ig->global);
    f->exclude = list_ref(ig->exclude);
    if (ig->tab_cap > 0) {
        f->tab = calloc(ig->tab_cap, sizeof *f->tab);
        if (f->tab == NULL) {
            agti_ignore_free(f);
            return agti_oom();
        }
        f->tab_cap = ig->tab_cap;
        f->tab_n = ig->tab_n;
        for (size_t i = 0; i < ig->tab_cap; i++)
            f->tab[i] = list_ref(ig->tab[i]);
    }
    *out = f;
    return AGT_OK;
}

static int decide(const agti_ignore *ig, ign_list *const *lists, size_t nlists, const char *path,
                  size_t len, bool is_dir)
{
    for (size_t i = nlists; i-- > 0;) {
        int r = list_match(lists[i], path, len, is_dir);
        if (r >= 0)
            return r;
    }
    int r = list_match(ig->exclude, path, len, is_dir);
    if (r < 0)
        r = list_match(ig->global, path, len, is_dir);
    return r > 0 ? 1 : 0;
}

int agti_ignore_check_entry(const agti_ignore *ig, const char *relpath, bool is_dir)
{
    size_t len = strlen(relpath);
    for (size_t i = ig->depth; i-- > 0;) {
        int r = list_match(ig->stack[i].list, relpath, len, is_dir);
        if (r >= 0)
            return r;
    }
    int r = list_match(ig->exclude, relpath, len, is_dir);
    if (r < 0)
        r = list_match(ig->global, relpath, len, is_dir);
    return r > 0 ? 1 : 0;
}

int agti_ignore_is_ignored(agti_ignore *ig, const char *relpath, bool is_dir, bool *out)
{
    if (ig == NULL || relpath == NULL || out == NULL)
        return agti_error(AGT_EINVAL, "ignore: NULL argument");
    *out = false;
    /* "./a//b/", "a/../b" and an absolute path inside the root all name the
     * same entry as "a/b" or "b". */
    char *norm = agti_path_normalize(relpath);
    if (norm == NULL)
        return AGT_ENOMEM;
    const char *path = norm;
    if (norm[0] == '/') {
        char *rootn = agti_path_normalize(ig->root);
        bool inside = rootn != NULL && agti_path_is_within(norm, rootn);
        size_t rl = rootn ? strlen(rootn) : 0;
        free(rootn);
        if (!inside) {
            free(norm);
            return agti_error(AGT_EINVAL, "ignore: %s is not inside %s", relpath, ig->root);
        }
        path = norm + rl;
        while (*path == '/')
            path++;
    }
    size_t len = strlen(path);
    if (len == 0 || strcmp(path, ".") == 0 || strncmp(path, "../", 3) == 0 ||
        strcmp(path, "..") == 0) {
        free(norm);
        return AGT_OK;
    }
    size_t ncomp = 1;
    for (size_t i = 0; i < len; i++)
        if (path[i] == '/')
            ncomp++;
    ign_list **lists = malloc(ncomp * sizeof *lists);
    if (lists == NULL) {
        free(norm);
        return agti_oom();
    }
    size_t nlists = 0;
    int rc = cache_get(ig, "", 0, &lists[nlists]);
    if (rc == AGT_OK)
        nlists++;
    for (size_t i = 0; rc == AGT_OK && i <= len; i++) {
        if (i < len && path[i] != '/')
            continue;
        bool last = i == len;
        if (decide(ig, lists, nlists, path, i, last ? is_dir : true)) {
            *out = true;
            break;
        }
        if (!last) {
            rc = cache_get(ig, path, i, &lists[nlists]);
            if (rc == AGT_OK)
                nlists++;
        }
    }
    free(lists);
    free(norm);
    return rc;
}
