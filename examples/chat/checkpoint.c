/*
 * agt-chat: checkpoints for /undo and /diff. Before a Write, Edit or
 * MultiEdit call runs (the session's pre-tool-use hook, after approval), the
 * file's content is kept, once per turn, with "absent" for a file the call
 * creates. /undo puts the files of the last turn that wrote any back as they
 * were (each one written beside itself and renamed over it, or removed when
 * the turn created it); /diff compares each file the session wrote with its
 * content before the session's first write. Files changed by Bash commands
 * are not tracked.
 */
#include "chat.h"

#include "cli_util.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void entry_free(chat_cp_entry *e)
{
    free(e->path);
    free(e->content);
}

static void turn_free(chat_cp_turn *t)
{
    for (size_t i = 0; i < t->n; i++)
        entry_free(&t->files[i]);
    free(t->files);
    memset(t, 0, sizeof *t);
}

void chat_cp_free(chat_cp *cp)
{
    for (size_t i = 0; i < cp->n; i++)
        turn_free(&cp->turns[i]);
    free(cp->turns);
    memset(cp, 0, sizeof *cp);
}

int chat_cp_begin_turn(chat_cp *cp)
{
    chat_cp_turn *t = realloc(cp->turns, (cp->n + 1) * sizeof *t);
    if (t == NULL)
        return -1;
    cp->turns = t;
    memset(&cp->turns[cp->n], 0, sizeof *t);
    cp->n++;
    return 0;
}

void chat_cp_end_turn(chat_cp *cp)
{
    /* a turn that wrote nothing is no undo step */
    if (cp->n > 0 && cp->turns[cp->n - 1].n == 0)
        turn_free(&cp->turns[--cp->n]);
}

/* The absolute path a file tool's path argument names. */
static char *full_path(const char *root, const char *path)
{
    const char *home = getenv("HOME");
    size_t len = strlen(root) + strlen(path) + (home != NULL ? strlen(home) : 0) + 2;
    char *out = malloc(len);
    if (out == NULL)
        return NULL;
    if (path[0] == '/')
        snprintf(out, len, "%s", path);
    else if (path[0] == '~' && path[1] == '/' && home != NULL)
        snprintf(out, len, "%s%s", home, path + 1);
    else
        snprintf(out, len, "%s/%s", root, path);
    return out;
}

int chat_cp_note(chat_cp *cp, const char *root, const char *path)
{
    if (cp->n == 0)
        return 0; /* not inside a turn (a slash command's own call) */
    chat_cp_turn *t = &cp->turns[cp->n - 1];
    char *full = full_path(root, path);
    if (full == NULL)
        return -1;
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->files[i].path, full) == 0) {
            free(full);
            return 0; /* the turn's first write decides */
        }
    chat_cp_entry *f = realloc(t->files, (t->n + 1) * sizeof *f);
    if (f == NULL) {
        free(full);
        return -1;
    }
    t->files = f;
    chat_cp_entry *e = &t->files[t->n++];
    memset(e, 0, sizeof *e);
    e->path = full;
    struct stat st;
    e->existed = stat(full, &st) == 0;
    if (e->existed) {
        e->mode = st.st_mode & 07777;
        e->content = cli_read_file(full, &e->len);
        if (e->content == NULL) {
            /* unreadable: nothing to put back, the entry is dropped */
            free(e->path);
            t->n--;
            return -1;
        }
    }
    return 0;
}

/* Writes the saved content beside the file and renames it over it. */
static int put_back(const chat_cp_entry *e)
{
    if (!e->existed)
        return unlink(e->path) == 0 || errno == ENOENT ? 0 : -1;
    size_t len = strlen(e->path) + 32;
    char *tmp = malloc(len);
    if (tmp == NULL)
        return -1;
    snprintf(tmp, len, "%s.agt-undo-%ld", e->path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    int ok = f != NULL && fwrite(e->content, 1, e->len, f) == e->len;
    if (f != NULL && fclose(f) != 0)
        ok = 0;
    if (ok && (chmod(tmp, (mode_t)e->mode) != 0 || rename(tmp, e->path) != 0))
        ok = 0;
    if (!ok)
        unlink(tmp);
    free(tmp);
    return ok ? 0 : -1;
}

static const char *rel(const char *root, const char *path)
{
    size_t n = strlen(root);
    if (strncmp(path, root, n) == 0 && path[n] == '/')
        return path + n + 1;
    return path;
}

char *chat_cp_undo(chat_cp *cp, const char *root, FILE *f)
{
    if (cp->n == 0) {
        fprintf(f, "/undo: no file changes to undo\n");
        return NULL;
    }
    chat_cp_turn *t = &cp->turns[cp->n - 1];
    json_t *restored = json_array(), *removed = json_array();
    int failed = 0;
    for (size_t i = 0; i < t->n; i++) {
        chat_cp_entry *e = &t->files[i];
        if (put_back(e) != 0) {
            fprintf(f, "/undo: cannot restore %s: %s\n", e->path, strerror(errno));
            failed = 1;
            continue;
        }
        json_array_append_new(e->existed ? restored : removed, json_string(rel(root, e->path)));
    }
    /* the note for the model: what the user took back */
    size_t cap = 256;
    for (size_t i = 0; i < t->n; i++)
        cap += strlen(t->files[i].path) + 4;
    char *note = malloc(cap);
    if (note != NULL) {
        size_t w =
            (size_t)snprintf(note, cap, "[The user undid the file changes of the last turn (");
        json_t *lists[2] = {restored, removed};
        const char *heads[2] = {"restored: ", "removed: "};
        for (int k = 0; k < 2; k++) {
            if (json_array_size(lists[k]) == 0)
                continue;
            if (k == 1 && json_array_size(restored) > 0)
                w += (size_t)snprintf(note + w, cap - w, "; ");
            w += (size_t)snprintf(note + w, cap - w, "%s", heads[k]);
            for (size_t i = 0; i < json_array_size(lists[k]); i++)
                w += (size_t)snprintf(note + w, cap - w, "%s%s", i == 0 ? "" : ", ",
                                      json_string_value(json_array_get(lists[k], i)));
        }
        snprintf(note + w, cap - w, "). The files are as they were before that turn.]");
    }
    for (size_t i = 0; i < json_array_size(restored); i++)
        fprintf(f, "restored %s\n", json_string_value(json_array_get(restored, i)));
    for (size_t i = 0; i < json_array_size(removed); i++)
        fprintf(f, "removed %s (the turn created it)\n",
                json_string_value(json_array_get(removed, i)));
    json_decref(restored);
    json_decref(removed);
    if (!failed)
        turn_free(&cp->turns[--cp->n]);
    return note;
}

void chat_cp_diff(const chat_cp *cp, const char *root, FILE *f, int color)
{
    int any = 0;
    json_t *seen = json_object();
    /* each file once, against its content before the session's first write */
    for (size_t k = 0; k < cp->n; k++) {
        for (size_t i = 0; i < cp->turns[k].n; i++) {
            const chat_cp_entry *e = &cp->turns[k].files[i];
            if (json_object_get(seen, e->path) != NULL)
                continue;
            json_object_set_new(seen, e->path, json_true());
            char *now = cli_read_file(e->path, NULL);
            const char *before = e->existed ? e->content : NULL;
            if ((now == NULL && before == NULL) ||
                (now != NULL && before != NULL && strcmp(now, before) == 0)) {
                free(now);
                continue;
            }
            if (now == NULL)
                fprintf(f, "%s: deleted\n", rel(root, e->path));
            else
                chat_print_diff(f, rel(root, e->path), before, now, color);
            any = 1;
            free(now);
        }
    }
    json_decref(seen);
    if (!any)
        fprintf(f, "(no file changes in this session)\n");
}
