/* NotebookEdit: replace, insert or delete one cell of a Jupyter notebook
 * (nbformat 4), found by its id or its index. The notebook is parsed with
 * jansson and written back as Jupyter writes it (nbformat.h), atomically,
 * so the cells it did not touch keep their bytes. An edited code cell
 * loses its outputs and execution count (they belonged to the old
 * source). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "dispatch/dispatch_internal.h"
#include "fs/fs.h"
#include "nbformat.h"
#include "tools_internal.h"
#include "ws.h"

/* Ids listed when a cell_id is not found. */
#define MAX_IDS_SHOWN 20

enum { MODE_REPLACE, MODE_INSERT, MODE_DELETE };

typedef struct nb_args {
    const char *path;
    const char *cell_id; /* NULL: by index or none */
    long long index;     /* -1: not given */
    const char *source;
    size_t source_len;
    bool has_source;
    const char *type; /* "code", "markdown" or NULL */
    int mode;
} nb_args;

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

static int parse_args(agt_call *call, nb_args *a)
{
    json_t *args = agti_call_args_json(call);
    memset(a, 0, sizeof *a);
    a->index = -1;
    a->path = json_string_value(json_object_get(args, "path"));
    a->cell_id = json_string_value(json_object_get(args, "cell_id"));
    json_t *ji = json_object_get(args, "cell_index");
    json_t *js = json_object_get(args, "new_source");
    a->type = json_string_value(json_object_get(args, "cell_type"));
    const char *mode = json_string_value(json_object_get(args, "edit_mode"));
    if (a->path == NULL)
        return agti_tool_fail(call, AGT_EINVAL, "NotebookEdit needs \"path\" (the .ipynb file).");
    if (mode == NULL || strcmp(mode, "replace") == 0)
        a->mode = MODE_REPLACE;
    else if (strcmp(mode, "insert") == 0)
        a->mode = MODE_INSERT;
    else if (strcmp(mode, "delete") == 0)
        a->mode = MODE_DELETE;
    else
        return agti_tool_fail(call, AGT_EINVAL,
                              "edit_mode must be replace, insert or delete, not '%s'.", mode);
    if (ji != NULL) {
        if (!json_is_integer(ji) || json_integer_value(ji) < 0)
            return agti_tool_fail(call, AGT_EINVAL,
                                  "cell_index must be an integer, 0 or more (0 is the first "
                                  "cell).");
        a->index = json_integer_value(ji);
    }
    if (a->cell_id != NULL && ji != NULL)
        return agti_tool_fail(call, AGT_EINVAL,
                              "Give cell_id or cell_index, not both: they could name different "
                              "cells.");
    if (a->mode != MODE_INSERT && a->cell_id == NULL && ji == NULL)
        return agti_tool_fail(call, AGT_EINVAL,
                              "NotebookEdit needs cell_id or cell_index to %s a cell (Read the "
                              "notebook to see its cells with their ids and indexes).",
                              a->mode == MODE_REPLACE ? "replace" : "delete");
    if (a->type != NULL && strcmp(a->type, "code") != 0 && strcmp(a->type, "markdown") != 0)
        return agti_tool_fail(call, AGT_EINVAL, "cell_type must be code or markdown, not '%s'.",
                              a->type);
    if (a->mode == MODE_INSERT && a->type == NULL)
        return agti_tool_fail(call, AGT_EINVAL,
                              "cell_type (code or markdown) is needed to insert a cell.");
    if (js != NULL) {
        a->has_source = true;
        a->source = json_string_value(js);
        a->source_len = json_string_length(js);
    }
    if (a->mode != MODE_DELETE && !a->has_source)
        return agti_tool_fail(call, AGT_EINVAL, "new_source is needed to %s a cell.",
                              a->mode == MODE_REPLACE ? "replace" : "insert");
    if (!ends_with(a->path, ".ipynb"))
        return agti_tool_fail(call, AGT_EINVAL,
                              "'%s' is not a notebook (.ipynb); NotebookEdit changes Jupyter "
                              "notebooks only. Use Edit or Write for other files.",
                              a->path);
    return AGT_OK;
}

/* Checks that nb is an nbformat 4 notebook; its cells in *cells. */
static int check_notebook(agt_call *call, const char *rel, json_t *nb, json_t **cells)
{
    json_t *major = json_object_get(nb, "nbformat");
    *cells = json_object_get(nb, "cells");
    if (!json_is_object(nb) || !json_is_array(*cells) || !json_is_integer(major))
        return agti_tool_fail(call, AGT_EINVALID,
                              "%s is not a Jupyter notebook: it needs a top-level object with "
                              "\"cells\" (an array) and \"nbformat\" (a number). Nothing was "
                              "changed.",
                              rel);
    if (json_integer_value(major) != 4)
        return agti_tool_fail(call, AGT_EUNSUPPORTED,
                              "%s is a notebook of nbformat %lld; NotebookEdit changes nbformat 4 "
                              "notebooks only (convert it with jupyter nbconvert --to notebook).",
                              rel, (long long)json_integer_value(major));
    for (size_t i = 0; i < json_array_size(*cells); i++) {
        json_t *c = json_array_get(*cells, i);
        if (!json_is_object(c) || !json_is_string(json_object_get(c, "cell_type")))
            return agti_tool_fail(call, AGT_EINVALID,
                                  "Cell %zu of %s is not a notebook cell (an object with a "
                                  "\"cell_type\"). Nothing was changed.",
                                  i, rel);
    }
    return AGT_OK;
}

static const char *cell_id(json_t *cell)
{
    return json_string_value(json_object_get(cell, "id"));
}

/* The index of the cell the arguments name, or an error set on the call. */
static int find_cell(agt_call *call, const char *rel, json_t *cells, const nb_args *a, size_t *at)
{
    size_t n = json_array_size(cells);
    if (a->cell_id != NULL) {
        for (size_t i = 0; i < n; i++)
            if (cell_id(json_array_get(cells, i)) != NULL &&
                strcmp(cell_id(json_array_get(cells, i)), a->cell_id) == 0) {
                *at = i;
                return AGT_OK;
            }
        agti_buf b = AGTI_BUF_INIT;
        agti_buf_printf(&b, "No cell of %s has the id '%s'.", rel, a->cell_id);
        size_t shown = 0;
        for (size_t i = 0; i < n && shown < MAX_IDS_SHOWN; i++)
            if (cell_id(json_array_get(cells, i)) != NULL)
                agti_buf_printf(&b, "%s%s", shown++ ? ", " : " Its cells' ids: ",
                                cell_id(json_array_get(cells, i)));
        if (shown == 0)
            agti_buf_puts(&b, " Its cells have no ids (nbformat before 4.5): use cell_index.");
        else
            agti_buf_printf(&b, "%s.", shown < n ? " ..." : "");
        agti_buf_puts(&b, " Nothing was changed.");
        int rc = b.oom ? agti_oom() : agti_tool_fail(call, AGT_ENOTFOUND, "%s", agti_buf_cstr(&b));
        agti_buf_free(&b);
        return rc;
    }
    size_t limit = a->mode == MODE_INSERT ? n : (n > 0 ? n - 1 : 0);
    if (a->mode != MODE_INSERT && n == 0)
        return agti_tool_fail(call, AGT_ENOTFOUND, "%s has no cells; there is none to %s.", rel,
                              a->mode == MODE_REPLACE ? "replace" : "delete");
    if ((unsigned long long)a->index > limit)
        return agti_tool_fail(call, AGT_EINVAL,
                              "cell_index %lld is out of range: %s has %zu cell%s, so %s is "
                              "0-%zu.",
                              a->index, rel, n, n == 1 ? "" : "s",
                              a->mode == MODE_INSERT ? "an insert position" : "an index", limit);
    *at = (size_t)a->index;
    return AGT_OK;
}

/* An id for a new cell: 8 hex digits (as nbformat makes them), unused. */
static void new_cell_id(json_t *cells, char id[9])
{
    static _Thread_local unsigned fallback = 0x9e3779b9u;
    for (;;) {
        unsigned r;
        if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
            r = fallback = fallback * 1664525u + 1013904223u;
        snprintf(id, 9, "%08x", r);
        bool used = false;
        for (size_t i = 0; i < json_array_size(cells) && !used; i++)
            used = cell_id(json_array_get(cells, i)) != NULL &&
                   strcmp(cell_id(json_array_get(cells, i)), id) == 0;
        if (!used)
            return;
    }
}

/* Whether the keys of obj are in sorted order (as Jupyter writes them). */
static bool keys_sorted(json_t *obj)
{
    const char *key, *prev = NULL;
    json_t *v;
    json_object_foreach(obj, key, v)
    {
        if (prev != NULL && strcmp(prev, key) > 0)
            return false;
        prev = key;
    }
    return true;
}

static int cmp_keys(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* A copy of obj with its keys sorted. NULL on OOM. */
static json_t *sorted_copy(json_t *obj)
{
    size_t n = json_object_size(obj), k = 0;
    const char **keys = malloc((n ? n : 1) * sizeof *keys);
    json_t *out = json_object();
    if (keys == NULL || out == NULL) {
        free(keys);
        json_decref(out);
        return NULL;
    }
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v) keys[k++] = key;
    qsort(keys, n, sizeof *keys, cmp_keys);
    for (size_t i = 0; i < n; i++)
        if (json_object_set(out, keys[i], json_object_get(obj, keys[i])) != 0) {
            json_decref(out);
            out = NULL;
            break;
        }
    free(keys);
    return out;
}

/* Sets the source (and type) of cell, keeping its key order; a code cell
 * gets empty outputs and no execution count. *cleared: it had either. */
static int set_cell(json_t **cellp, const char *type, json_t *source, bool *cleared)
{
    json_t *cell = *cellp;
    bool sorted = keys_sorted(cell);
    const char *old_type = json_string_value(json_object_get(cell, "cell_type"));
    json_t *outs = json_object_get(cell, "outputs");
    json_t *count = json_object_get(cell, "execution_count");
    *cleared = (json_is_array(outs) && json_array_size(outs) > 0) ||
               (count != NULL && !json_is_null(count));
    if (type == NULL)
        type = old_type;
    int e = 0;
    if (strcmp(type, old_type) != 0)
        e |= json_object_set_new(cell, "cell_type", json_string(type));
    e |= json_object_set(cell, "source", source);
    if (strcmp(type, "code") == 0) {
        e |= json_object_set_new(cell, "execution_count", json_null());
        e |= json_object_set_new(cell, "outputs", json_array());
    } else {
        json_object_del(cell, "execution_count");
        json_object_del(cell, "outputs");
    }
    if (e != 0)
        return AGT_ENOMEM;
    if (sorted && !keys_sorted(cell)) {
        json_t *c = sorted_copy(cell);
        if (c == NULL)
            return AGT_ENOMEM;
        json_decref(cell);
        *cellp = c;
    }
    return AGT_OK;
}

/* A new cell as Jupyter makes it (keys sorted); id may be NULL. */
static json_t *new_cell(const char *type, const char *id, json_t *source)
{
    json_t *c = json_object();
    int e = c == NULL;
    if (!e) {
        e |= json_object_set_new(c, "cell_type", json_string(type));
        if (strcmp(type, "code") == 0)
            e |= json_object_set_new(c, "execution_count", json_null());
        if (id != NULL)
            e |= json_object_set_new(c, "id", json_string(id));
        e |= json_object_set_new(c, "metadata", json_object());
        if (strcmp(type, "code") == 0)
            e |= json_object_set_new(c, "outputs", json_array());
        e |= json_object_set(c, "source", source);
    }
    if (e) {
        json_decref(c);
        return NULL;
    }
    return c;
}

static size_t count_lines(const json_t *source)
{
    return json_array_size(source);
}

/* Applies the edit to the parsed notebook; the result's first sentence in
 * done. */
static int edit_cells(agt_call *call, const char *rel, json_t *nb, json_t *cells, const nb_args *a,
                      agti_buf *done)
{
    size_t at = 0, n = json_array_size(cells);
    if (a->mode == MODE_INSERT && a->cell_id == NULL && a->index < 0) {
        at = 0; /* neither given: at the start */
    } else {
        int rc = find_cell(call, rel, cells, a, &at);
        if (rc != AGT_OK)
            return rc;
        if (a->mode == MODE_INSERT && a->cell_id != NULL)
            at++; /* after the cell with that id */
    }
    json_t *source = NULL;
    if (a->mode != MODE_DELETE) {
        source = agti_nb_split_lines(a->source, a->source_len);
        if (source == NULL)
            return AGT_ENOMEM;
    }
    size_t nl = source ? count_lines(source) : 0;
    int rc = AGT_OK;
    if (a->mode == MODE_DELETE) {
        json_t *cell = json_array_get(cells, at);
        const char *id = cell_id(cell);
        agti_buf_printf(done, "Deleted the %s cell at index %zu",
                        json_string_value(json_object_get(cell, "cell_type")), at);
        if (id != NULL)
            agti_buf_printf(done, " (id %s)", id);
        json_array_remove(cells, at);
        agti_buf_printf(done, " of %s; the notebook has %zu cell%s now.", rel, n - 1,
                        n - 1 == 1 ? "" : "s");
    } else if (a->mode == MODE_INSERT) {
        json_t *minor = json_object_get(nb, "nbformat_minor");
        bool ids = json_is_integer(minor) && json_integer_value(minor) >= 5;
        char id[9];
        if (ids)
            new_cell_id(cells, id);
        json_t *cell = new_cell(a->type, ids ? id : NULL, source);
        if (cell == NULL || json_array_insert_new(cells, at, cell) != 0)
            rc = AGT_ENOMEM;
        agti_buf_printf(done, "Inserted a %s cell at index %zu", a->type, at);
        if (ids)
            agti_buf_printf(done, " (id %s)", id);
        agti_buf_printf(done, " of %s, %zu line%s; the notebook has %zu cell%s now.", rel, nl,
                        nl == 1 ? "" : "s", n + 1, n + 1 == 1 ? "" : "s");
    } else {
        json_t *cell = json_incref(json_array_get(cells, at));
        bool cleared = false;
        const char *was = json_string_value(json_object_get(cell, "cell_type"));
        char old_type[16];
        snprintf(old_type, sizeof old_type, "%s", was);
        rc = set_cell(&cell, a->type, source, &cleared);
        if (rc == AGT_OK && json_array_set(cells, at, cell) != 0)
            rc = AGT_ENOMEM;
        const char *type = json_string_value(json_object_get(cell, "cell_type"));
        agti_buf_printf(done, "Replaced the source of the %s cell at index %zu", type, at);
        if (cell_id(cell) != NULL)
            agti_buf_printf(done, " (id %s)", cell_id(cell));
        agti_buf_printf(done, " of %s: %zu line%s", rel, nl, nl == 1 ? "" : "s");
        if (strcmp(old_type, type) != 0)
            agti_buf_printf(done, "; it was a %s cell", old_type);
        if (cleared)
            agti_buf_puts(done, "; its outputs and execution count were cleared");
        agti_buf_puts(done, ".");
        json_decref(cell);
    }
    json_decref(source);
    return rc;
}

int agti_tool_notebook_edit(agt_call *call, void *payload)
{
    (void)payload;
    nb_args a;
    int rc = parse_args(call, &a);
    if (rc != AGT_OK)
        return rc;
    agti_ws_path p;
    rc = agti_ws_resolve(call, a.path, AGTI_WS_OPEN | AGTI_WS_CHANGE, O_RDONLY | O_NONBLOCK, true,
                         &p);
    if (rc != AGT_OK)
        return rc;
    char *text = NULL;
    size_t len = 0;
    json_t *nb = NULL;
    agti_buf out = AGTI_BUF_INIT, done = AGTI_BUF_INIT;
    rc = agti_ws_load(call, &p, AGTI_EDIT_MAX_BYTES, &text, &len);
    if (rc == AGT_OK)
        rc = agti_ws_check_seen(call, &p, "NotebookEdit", text, len, true);
    if (rc != AGT_OK)
        goto out;
    json_error_t err;
    nb = json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &err);
    if (nb == NULL) {
        rc = agti_tool_fail(call, AGT_EPARSE,
                            "%s is not valid JSON (line %d, column %d: %s), so it cannot be "
                            "edited as a notebook. Nothing was changed. Read it to see the "
                            "damage, and repair it with Write.",
                            p.rel, err.line, err.column, err.text);
        goto out;
    }
    json_t *cells;
    rc = check_notebook(call, p.rel, nb, &cells);
    if (rc == AGT_OK)
        rc = edit_cells(call, p.rel, nb, cells, &a, &done);
    if (rc == AGT_ENOMEM || done.oom) {
        rc = agti_oom();
        goto out;
    }
    if (rc != AGT_OK)
        goto out;
    agti_nb_style st;
    agti_nb_style_of(text, len, &st);
    agti_nb_dump(&out, nb, &st);
    if (out.oom) {
        rc = agti_oom();
        goto out;
    }
    agti_write_info info;
    rc = agti_fs_write_at(p.loc.dirfd, p.loc.name, p.abs, out.ptr, out.len,
                          agti_tool_write_flags(call), &info);
    if (rc != AGT_OK) {
        if (rc != AGT_ENOMEM)
            rc = agti_tool_write_failed(call, rc, p.rel, info.kept);
        goto out;
    }
    agti_ws_record_seen(call, &p, out.ptr, out.len);
    agti_tool_link_note(&done, &p, &info);
    rc = agti_ws_finish(call, &done);
out:
    agti_buf_free(&done);
    agti_buf_free(&out);
    json_decref(nb);
    free(text);
    agti_ws_path_free(&p);
    return rc;
}
