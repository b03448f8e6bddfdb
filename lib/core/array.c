#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"

int agti_grow(void *arrp, size_t *cap, size_t n, size_t elem, size_t first)
{
    if (n < *cap)
        return AGT_OK;
    size_t nc = *cap ? *cap : (first ? first : 1);
    while (nc <= n) {
        if (nc > SIZE_MAX / 2)
            return agti_oom();
        nc *= 2;
    }
    if (elem == 0 || nc > SIZE_MAX / elem)
        return agti_oom();
    /* the pointer is read and written as bytes: ARRP may point at a
     * pointer of any object type, which void ** would not alias */
    void *old;
    memcpy(&old, arrp, sizeof old);
    void *nv = realloc(old, nc * elem);
    if (nv == NULL)
        return agti_oom();
    memcpy(arrp, &nv, sizeof nv);
    *cap = nc;
    return AGT_OK;
}

size_t agti_read_full(int fd, void *buf, size_t len)
{
    unsigned char *p = buf;
    size_t got = 0;
    while (got < len) {
        ssize_t r = read(fd, p + got, len - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return got;
        if (r == 0) {
            errno = 0;
            return got;
        }
        got += (size_t)r;
    }
    return got;
}
