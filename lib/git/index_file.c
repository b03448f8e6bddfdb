/*
 * git's index file, read without libgit2 (index_file.h). The layout is
 * gitformat-index's: a 12-byte header ("DIRC", version, entry count), the
 * entries (40 bytes of stat data, the 20-byte object id, 16 bits of flags,
 * 16 more in versions 3 and 4 when the entry is "extended", the path:
 * NUL-padded to a multiple of 8 bytes in versions 2 and 3, prefix-
 * compressed against the previous path in version 4), the extensions
 * (4-byte signature, 4-byte size), and a trailing checksum.
 */
#include "git/index_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"

#define HASH_LEN 20
#define HEADER_LEN 12
#define STAT_LEN 40
#define FLAG_ASSUME_VALID 0x8000u
#define FLAG_EXTENDED 0x4000u
#define FLAG_STAGE_SHIFT 12
#define FLAG_NAME_MASK 0x0fffu
#define XFLAG_SKIP_WORKTREE 0x4000u
#define XFLAG_INTENT_TO_ADD 0x2000u
#define XFLAG_KNOWN (XFLAG_SKIP_WORKTREE | XFLAG_INTENT_TO_ADD)

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint16_t be16(const unsigned char *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static int bad(const char *why)
{
    return agti_error(AGT_EPARSE, "index file: %s", why);
}

static int unsupported(const char *why)
{
    return agti_error(AGT_EUNSUPPORTED, "index file: %s", why);
}

/* git's varint (varint.c): 7 bits a byte, most significant first, each
 * continuation adding one; false on overflow or at the end of the data. */
static bool varint(const unsigned char **p, const unsigned char *end, uint64_t *out)
{
    if (*p >= end)
        return false;
    unsigned char c = *(*p)++;
    uint64_t v = c & 127;
    while (c & 128) {
        v += 1;
        if (v == 0 || (v >> 57) != 0 || *p >= end)
            return false;
        c = *(*p)++;
        v = (v << 7) + (c & 127);
    }
    *out = v;
    return true;
}

/* The TREE extension's first entry, the root: "" NUL, entry count (ASCII,
 * negative when invalid), ' ', subtree count, '\n', then the tree id when
 * valid. */
static void tree_root(agti_index_file *f, const unsigned char *p, size_t len)
{
    const unsigned char *end = p + len;
    if (len < 1 || p[0] != '\0')
        return;
    p++;
    bool neg = p < end && *p == '-';
    p += neg;
    int64_t count = 0;
    const unsigned char *digits = p;
    while (p < end && *p >= '0' && *p <= '9' && count < ((int64_t)1 << 40))
        count = count * 10 + (*p++ - '0');
    if (p == digits || p >= end || *p != ' ')
        return;
    p++;
    const unsigned char *sub = p;
    while (p < end && *p >= '0' && *p <= '9')
        p++;
    if (p == sub || p >= end || *p != '\n')
        return;
    p++;
    if (neg || (size_t)(end - p) < HASH_LEN)
        return;
    f->tree_root_valid = true;
    f->tree_root_entries = count;
    memcpy(f->tree_root_id, p, HASH_LEN);
}

int agti_index_file_parse(const unsigned char *data, size_t len, agti_index_file *out)
{
    memset(out, 0, sizeof *out);
    if (len < HEADER_LEN + HASH_LEN || memcmp(data, "DIRC", 4) != 0)
        return bad("no index header");
    unsigned version = be32(data + 4);
    if (version < 2 || version > 4)
        return unsupported("an index version other than 2, 3 and 4");
    uint32_t n = be32(data + 8);
    const unsigned char *p = data + HEADER_LEN, *end = data + len - HASH_LEN;
    /* the smallest entry is 62 bytes and a 1-byte path (version 4) */
    if ((uint64_t)n * 63 > (uint64_t)(end - p))
        return bad("more entries than the file holds");
    agti_index_file f;
    memset(&f, 0, sizeof f);
    f.version = version;
    f.e = n ? calloc(n, sizeof *f.e) : NULL;
    /* the paths take at most the file's bytes, plus a NUL each; a
     * version 4 path can be longer than its bytes, so that arena grows */
    size_t cap = (size_t)(end - p) + n + 1, used = 0;
    f.arena = malloc(cap);
    if ((n && f.e == NULL) || f.arena == NULL) {
        free(f.e);
        free(f.arena);
        return agti_oom();
    }
    size_t prev_off = 0, prev_len = 0;
    bool empty_path = false;
    agti_index_kind refused = AGTI_INDEX_OTHER;
    int rc = AGT_OK;
    for (uint32_t i = 0; i < n && rc == AGT_OK; i++) {
        const unsigned char *start = p;
        if ((size_t)(end - p) < STAT_LEN + HASH_LEN + 2) {
            rc = bad("an entry runs past the end");
            break;
        }
        agti_index_entry *e = &f.e[i];
        e->mode = be32(p + 24);
        uint16_t flags = be16(p + STAT_LEN + HASH_LEN);
        p += STAT_LEN + HASH_LEN + 2;
        e->assume_valid = (flags & FLAG_ASSUME_VALID) != 0;
        e->stage = (flags >> FLAG_STAGE_SHIFT) & 3;
        if (flags & FLAG_EXTENDED) {
            if (version < 3 || end - p < 2) {
                rc = bad("an extended entry in a version 2 index");
                break;
            }
            uint16_t x = be16(p);
            p += 2;
            if (x & ~XFLAG_KNOWN) {
                rc = unsupported("an entry flag this reader does not know");
                break;
            }
            e->skip_worktree = (x & XFLAG_SKIP_WORKTREE) != 0;
            e->intent_to_add = (x & XFLAG_INTENT_TO_ADD) != 0;
        }
        size_t plen;
        if (version == 4) {
            uint64_t strip;
            if (!varint(&p, end, &strip) || strip > prev_len) {
                rc = bad("a compressed path that strips more than the previous path");
                break;
            }
            const unsigned char *nul = memchr(p, '\0', (size_t)(end - p));
            if (nul == NULL) {
                rc = bad("a path without its NUL");
                break;
            }
            size_t keep = prev_len - (size_t)strip, tail = (size_t)(nul - p);
            plen = keep + tail;
            if (cap - used < plen + 1) {
                size_t ncap = cap * 2 > used + plen + 1 ? cap * 2 : used + plen + 1;
                char *na = realloc(f.arena, ncap);
                if (na == NULL) {
                    rc = agti_oom();
                    break;
                }
                f.arena = na;
                cap = ncap;
            }
            memmove(f.arena + used, f.arena + prev_off, keep);
            memcpy(f.arena + used + keep, p, tail);
            p = nul + 1;
        } else {
            size_t named = flags & FLAG_NAME_MASK;
            const unsigned char *nul =
                named < FLAG_NAME_MASK && (size_t)(end - p) > named && p[named] == '\0'
                    ? p + named
                    : memchr(p, '\0', (size_t)(end - p));
            if (nul == NULL) {
                rc = bad("a path without its NUL");
                break;
            }
            plen = (size_t)(nul - p);
            /* the entry is padded with 1 to 8 NULs to a multiple of 8 */
            size_t entry = ((size_t)(nul - start) + 8) & ~(size_t)7;
            if ((size_t)(end - start) < entry) {
                rc = bad("an entry runs past the end");
                break;
            }
            memcpy(f.arena + used, p, plen);
            p = start + entry;
        }
        f.arena[used + plen] = '\0';
        if (memchr(f.arena + used, '\0', plen) != NULL) {
            rc = bad("a NUL inside a path");
            break;
        }
        /* a split index's entry that replaces one of the shared index has
         * no path: judged once the extensions show whether it is one */
        if (plen == 0)
            empty_path = true;
        if ((e->mode & 0170000) == 0040000) {
            refused = AGTI_INDEX_SPARSE;
            rc = unsupported("a sparse directory entry");
            break;
        }
        prev_off = used;
        prev_len = plen;
        used += plen + 1;
    }
    /* the paths are placed once the arena stops moving */
    for (size_t i = 0, off = 0; rc == AGT_OK && i < n; i++) {
        f.e[i].path = f.arena + off;
        off += strlen(f.arena + off) + 1;
    }
    while (rc == AGT_OK && p < end) {
        if (end - p < 8) {
            rc = bad("an extension header runs past the end");
            break;
        }
        uint32_t size = be32(p + 4);
        if ((size_t)(end - p) - 8 < size) {
            rc = bad("an extension runs past the end");
            break;
        }
        if (memcmp(p, "TREE", 4) == 0) {
            tree_root(&f, p + 8, size);
        } else if (memcmp(p, "link", 4) == 0) {
            refused = AGTI_INDEX_SPLIT;
            rc = unsupported("a split index");
            break;
        } else if (memcmp(p, "sdir", 4) == 0) {
            refused = AGTI_INDEX_SPARSE;
            rc = unsupported("a sparse index");
            break;
        } else if (p[0] < 'A' || p[0] > 'Z') {
            rc = unsupported("an extension this reader must know and does not");
            break;
        }
        p += 8 + size;
    }
    if (rc == AGT_OK && empty_path)
        rc = bad("an empty path");
    if (rc != AGT_OK) {
        free(f.e);
        free(f.arena);
        out->refused = refused;
        return rc;
    }
    f.n = n;
    *out = f;
    return AGT_OK;
}

int agti_index_file_read(const char *path, size_t max_bytes, agti_index_file *out)
{
    memset(out, 0, sizeof *out);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return errno == ENOENT ? agti_error(AGT_ENOTFOUND, "no index file at '%s'", path)
                               : agti_error(AGT_EIO, "cannot open '%s': %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return agti_error(AGT_EIO, "'%s' is not a readable file", path);
    }
    if ((uint64_t)st.st_size > max_bytes) {
        close(fd);
        return agti_error(AGT_ELIMIT, "'%s' is larger than %zu bytes", path, max_bytes);
    }
    size_t len = (size_t)st.st_size, got;
    unsigned char *buf = malloc(len ? len : 1);
    if (buf == NULL) {
        close(fd);
        return agti_oom();
    }
    got = agti_read_full(fd, buf, len);
    close(fd);
    int rc = got == len ? agti_index_file_parse(buf, len, out)
                        : agti_error(AGT_EIO, "'%s' changed size while it was read", path);
    free(buf);
    return rc;
}

void agti_index_file_free(agti_index_file *f)
{
    free(f->e);
    free(f->arena);
    memset(f, 0, sizeof *f);
}
