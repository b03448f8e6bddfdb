/* ReadMediaFile: an image or a video as base64 with its MIME type, for
 * hosts whose model takes image or video input. The kind is decided by the
 * file's magic bytes, never by its name. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/dispatch_internal.h"
#include "session/fs_settings.h"
#include "tools_internal.h"
#include "ws.h"

static char *base64(const unsigned char *d, size_t n, size_t *out_len)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t len = (n + 2) / 3 * 4;
    char *o = malloc(len + 1), *p = o;
    if (o == NULL)
        return NULL;
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)d[i] << 16 | (uint32_t)d[i + 1] << 8 | d[i + 2];
        *p++ = tab[v >> 18];
        *p++ = tab[(v >> 12) & 63];
        *p++ = tab[(v >> 6) & 63];
        *p++ = tab[v & 63];
    }
    if (i < n) {
        uint32_t v = (uint32_t)d[i] << 16 | (i + 1 < n ? (uint32_t)d[i + 1] << 8 : 0u);
        *p++ = tab[v >> 18];
        *p++ = tab[(v >> 12) & 63];
        *p++ = i + 1 < n ? tab[(v >> 6) & 63] : '=';
        *p++ = '=';
    }
    *p = '\0';
    *out_len = len;
    return o;
}

static bool looks_like_svg(const char *d, size_t n)
{
    size_t lim = n < 4096 ? n : 4096;
    return memmem(d, lim, "<svg", 4) != NULL;
}

int agti_tool_read_media(agt_call *call, void *payload)
{
    (void)payload;
    const char *path = json_string_value(json_object_get(agti_call_args_json(call), "path"));
    if (path == NULL)
        return agti_tool_fail(call, AGT_EINVAL, "ReadMediaFile needs a \"path\".");
    agti_ws_path p;
    int rc = agti_ws_resolve(call, path, AGTI_WS_OPEN, O_RDONLY | O_NONBLOCK, true, &p);
    if (rc != AGT_OK)
        return rc;
    char *data = NULL, *b64 = NULL;
    size_t len = 0, b64_len = 0;
    size_t max = (size_t)agti_session_file_limit(agt_call_session(call), AGT_FILE_LIMIT_MEDIA_BYTES,
                                                 AGTI_MEDIA_MAX_BYTES);
    rc = agti_ws_load(call, &p, max, &data, &len);
    if (rc == AGT_ELIMIT) {
        rc = agti_tool_fail(call, AGT_ELIMIT,
                            "%s is larger than %zu bytes, the limit of ReadMediaFile.", p.rel, max);
        goto out;
    }
    if (rc != AGT_OK)
        goto out;
    const char *mime = NULL;
    const char *kind = agti_ws_media_kind((const unsigned char *)data, len, &mime);
    if (kind == NULL) {
        if (looks_like_svg(data, len))
            rc = agti_tool_fail(call, AGT_EUNSUPPORTED,
                                "%s is an SVG image, which is XML text: read it with Read.", p.rel);
        else
            rc = agti_tool_fail(call, AGT_EUNSUPPORTED,
                                "%s is not an image or video file this tool recognises (PNG, "
                                "JPEG, GIF, WebP, BMP, TIFF, ICO, AVIF, HEIC, MP4, MOV, 3GP, "
                                "WebM, MKV, AVI, MPEG). For text files use Read.",
                                p.rel);
        goto out;
    }
    b64 = base64((const unsigned char *)data, len, &b64_len);
    free(data);
    data = NULL;
    json_t *doc = b64 ? json_pack("{s:s, s:s#, s:I, s:s, s:s}", "mime_type", mime, "data", b64,
                                  b64_len, "bytes", (json_int_t)len, "kind", kind, "path", p.rel)
                      : NULL;
    free(b64);
    b64 = NULL;
    char *json = doc ? agti_json_dump(doc) : NULL;
    json_decref(doc);
    if (json == NULL) {
        rc = agti_oom();
        goto out;
    }
    agti_buf b = AGTI_BUF_INIT;
    agti_buf_printf(&b, "%s: %s %s, %zu bytes, attached as base64 data.", p.rel,
                    strcmp(kind, "image") == 0 ? "image" : "video", mime, len);
    rc = agti_ws_finish(call, &b);
    if (rc == AGT_OK)
        rc = agt_call_set_json(call, json, strlen(json));
    free(json);
out:
    free(data);
    free(b64);
    agti_ws_path_free(&p);
    return rc;
}
