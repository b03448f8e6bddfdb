/*
 * agt-chat: tool rules that outlive a session. The user's rules are the
 * config file's "permissions"; the project's are the "permissions" of
 * <workspace>/.agenttools/settings.json, where `[p]` at an approval prompt
 * adds the suggested rule. Both are {"allow":[...],"ask":[...],"deny":[...]}
 * of the library's rule syntax (agt_session_add_rule()).
 */
#include "chat.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int chat_settings_path(const char *root, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%s%s.agenttools/settings.json", root,
                     strcmp(root, "/") == 0 ? "" : "/");
    return n > 0 && (size_t)n < len ? 0 : -1;
}

int chat_rules_load(agt_session *s, const char *json_text, const char *what, char *err,
                    size_t errlen)
{
    if (json_text == NULL)
        return 0;
    if (agt_session_load_rules(s, json_text, strlen(json_text)) != AGT_OK) {
        snprintf(err, errlen, "%s: permissions: %s", what, agt_error_message());
        return -1;
    }
    return 0;
}

/* The settings file as a JSON object: {} when it does not exist, NULL (err
 * filled) when it cannot be read or is not an object. */
static json_t *read_settings(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) != 0 && errno == ENOENT)
        return json_object();
    json_error_t je;
    json_t *doc = json_load_file(path, 0, &je);
    if (doc == NULL) {
        snprintf(err, errlen, "%s: line %d: %s", path, je.line, je.text);
        return NULL;
    }
    if (!json_is_object(doc)) {
        snprintf(err, errlen, "%s: the top level must be a JSON object", path);
        json_decref(doc);
        return NULL;
    }
    return doc;
}

int chat_rules_load_project(agt_session *s, const char *root, int *loaded, char *err, size_t errlen)
{
    char path[4200];
    *loaded = 0;
    if (chat_settings_path(root, path, sizeof path) != 0)
        return 0;
    json_t *doc = read_settings(path, err, errlen);
    if (doc == NULL)
        return -1;
    json_t *perm = json_object_get(doc, "permissions");
    int rc = 0;
    if (perm != NULL && !json_is_object(perm)) {
        snprintf(err, errlen, "%s: \"permissions\" must be an object of rule lists", path);
        rc = -1;
    } else if (perm != NULL) {
        char *text = json_dumps(perm, JSON_COMPACT);
        rc = text != NULL ? chat_rules_load(s, text, path, err, errlen) : -1;
        free(text);
        *loaded = rc == 0;
    }
    json_decref(doc);
    return rc;
}

int chat_rules_persist(const char *root, const char *rule, char *err, size_t errlen)
{
    char path[4200], dir[4200], tmp[4300];
    if (chat_settings_path(root, path, sizeof path) != 0) {
        snprintf(err, errlen, "the workspace path is too long");
        return -1;
    }
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = '\0';
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
        return -1;
    }
    json_t *doc = read_settings(path, err, errlen);
    if (doc == NULL)
        return -1;
    json_t *perm = json_object_get(doc, "permissions");
    if (perm == NULL) {
        perm = json_object();
        json_object_set_new(doc, "permissions", perm);
    }
    json_t *allow = json_object_get(perm, "allow");
    if (allow == NULL) {
        allow = json_array();
        json_object_set_new(perm, "allow", allow);
    }
    if (!json_is_object(perm) || !json_is_array(allow)) {
        snprintf(err, errlen, "%s: \"permissions\".\"allow\" is not a list of rules", path);
        json_decref(doc);
        return -1;
    }
    /* a compound command's suggestion holds one rule per line */
    for (const char *p = rule; *p != '\0';) {
        const char *nl = strchr(p, '\n');
        size_t n = nl != NULL ? (size_t)(nl - p) : strlen(p);
        int have = 0;
        for (size_t i = 0; i < json_array_size(allow); i++) {
            const char *r = json_string_value(json_array_get(allow, i));
            have |= r != NULL && strlen(r) == n && strncmp(r, p, n) == 0;
        }
        if (!have && n > 0)
            json_array_append_new(allow, json_stringn(p, n));
        p += n + (nl != NULL);
    }
    /* written beside it and renamed over it: never a half-written file */
    snprintf(tmp, sizeof tmp, "%s.tmp-%ld", path, (long)getpid());
    int rc = json_dump_file(doc, tmp, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(doc);
    if (rc != 0 || rename(tmp, path) != 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

void chat_rules_print(FILE *f, agt_session *s, const char *user_path, const char *project_path)
{
    char *text = NULL;
    if (agt_session_rules(s, &text) != AGT_OK) {
        fprintf(f, "/permissions: %s\n", agt_error_message());
        return;
    }
    json_t *r = json_loads(text, 0, NULL);
    agt_free(text);
    static const char *const kinds[] = {"allow", "ask", "deny", "session"};
    for (size_t k = 0; k < 4; k++) {
        json_t *list = json_object_get(r, kinds[k]);
        fprintf(f, "%s:%s", kinds[k], json_array_size(list) == 0 ? " (none)" : "");
        for (size_t i = 0; i < json_array_size(list); i++)
            fprintf(f, "%s%s", i == 0 ? " " : ", ", json_string_value(json_array_get(list, i)));
        fputc('\n', f);
    }
    json_decref(r);
    fprintf(f, "user rules: %s\nproject rules: %s\n", user_path != NULL ? user_path : "(none)",
            project_path != NULL ? project_path : "(none)");
}
