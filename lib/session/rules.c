/* Permission rules: parsing `Tool` / `Tool(pattern)`, matching a call's
 * subject (command part, path, pattern, URL), and a (tool, key) index so a
 * call is checked against a handful of candidate rules instead of all. */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "fs/fs.h"
#include "fs_settings.h"
#include "patch/codex.h"
#include "policy.h"
#include "session_internal.h"

int agti_rule_subject(const char *tool)
{
    if (strcmp(tool, "Bash") == 0)
        return AGTI_SUBJ_COMMAND;
    if (strcmp(tool, "Read") == 0 || strcmp(tool, "Write") == 0 || strcmp(tool, "Edit") == 0 ||
        strcmp(tool, "MultiEdit") == 0 || strcmp(tool, "NotebookEdit") == 0 ||
        strcmp(tool, "ReadMediaFile") == 0 || strcmp(tool, "apply_patch") == 0)
        return AGTI_SUBJ_PATH;
    if (strcmp(tool, "Grep") == 0 || strcmp(tool, "Glob") == 0 || strcmp(tool, "FetchURL") == 0)
        return AGTI_SUBJ_TEXT;
    return AGTI_SUBJ_NAME;
}

void agti_rule_free(agti_rule *r)
{
    if (r == NULL)
        return;
    free(r->text);
    free(r->tool);
    free(r->pattern);
    free(r->key);
    free(r->glob_text);
    free(r->needle);
    agti_glob_free(r->glob);
    agti_wm_free(r->wm);
    free(r->cpat);
    agti_bash_pat_free(r->bash);
    free(r);
}

static bool tool_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.' || c == ':';
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The literal first word of a command pattern, or "" when it starts with a
 * wildcard or an escape (then the rule is checked for every command). */
static char *command_key(const char *pat)
{
    size_t i = 0;
    while (pat[i] && pat[i] != ' ' && pat[i] != '\t') {
        if (pat[i] == '*' || pat[i] == '\\')
            return agti_strdup("");
        i++;
    }
    return agti_strndup(pat, i);
}

static bool has_glob_char(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strchr("*?[{\\", s[i]) != NULL)
            return true;
    return false;
}

/* The literal tail of a pattern: what follows its last special character. */
static void set_suffix(agti_rule *r, const char *pat, const char *special)
{
    size_t n = strlen(pat), i = n;
    while (i > 0 && strchr(special, pat[i - 1]) == NULL)
        i--;
    r->suf = pat + i;
    r->suf_len = n - i;
}

/* Turns a path pattern into the relative gitignore-style glob the matcher
 * takes (or an absolute wildmatch pattern outside the root). */
static int compile_path_pattern(agti_rule *r, const char *root)
{
    const char *pat = r->pattern;
    size_t plen = strlen(pat);
    bool dir_only = plen > 1 && pat[plen - 1] == '/';
    char *norm = NULL;
    bool anchored = false;
    if (pat[0] == '/') {
        norm = agti_path_normalize(pat);
        if (norm == NULL)
            return agti_oom();
        if (agti_path_is_within(norm, root)) {
            size_t rl = strcmp(root, "/") == 0 ? 0 : strlen(root);
            const char *rest = norm[rl] == '/' ? norm + rl + 1 : norm + rl;
            char *rel = agti_strdup(rest[0] ? rest : "**");
            free(norm);
            if (rel == NULL)
                return agti_oom();
            norm = rel;
            anchored = true;
        } else {
            r->abs = true;
        }
    } else {
        anchored = strncmp(pat, "./", 2) == 0;
        norm = agti_path_normalize(pat);
        if (norm == NULL)
            return agti_oom();
        if (strcmp(norm, ".") == 0) {
            free(norm);
            if ((norm = agti_strdup("**")) == NULL)
                return agti_oom();
        }
        if (strncmp(norm, "..", 2) == 0 && (norm[2] == '/' || norm[2] == '\0')) {
            free(norm);
            return agti_error(AGT_EINVALID,
                              "rule '%s': the path pattern climbs out of the workspace root; "
                              "write it as an absolute path",
                              r->text);
        }
    }
    agti_buf b = AGTI_BUF_INIT;
    if (anchored && !r->abs && strchr(norm, '/') == NULL)
        agti_buf_putc(&b, '/'); /* a leading "/" anchors a glob to the root */
    agti_buf_puts(&b, norm);
    if (dir_only)
        agti_buf_puts(&b, "/**");
    free(norm);
    if (b.oom)
        return agti_oom();
    int rc;
    if (r->abs) {
        bool bad = false;
        rc = agti_wm_compile(&r->wm, b.ptr, b.len, 0, &bad);
        if (rc == AGT_OK && bad)
            rc = agti_error(AGT_EINVALID, "rule '%s': malformed pattern", r->text);
        r->key = agti_strdup("");
    } else {
        rc = agti_glob_compile(&r->glob, b.ptr, 0);
        if (rc != AGT_OK && rc != AGT_ENOMEM)
            rc = agti_error(AGT_EINVALID, "rule '%s': bad path pattern: %s", r->text,
                            agt_error_message());
        /* key: the literal first component of an anchored pattern */
        const char *g = b.ptr[0] == '/' ? b.ptr + 1 : b.ptr;
        const char *slash = strchr(g, '/');
        if (slash != NULL && b.ptr[0] != '/' && !has_glob_char(g, (size_t)(slash - g)))
            r->key = agti_strndup(g, (size_t)(slash - g));
        else
            r->key = agti_strdup("");
    }
    if (rc == AGT_OK) {
        r->glob_text = agti_buf_detach(&b);
        if (r->glob_text == NULL)
            return agti_oom();
        const char *g = r->glob_text;
        size_t n = strlen(g);
        r->cover_dirs = !(n >= 3 && strcmp(g + n - 3, "/**") == 0);
        bool glob_anchored = r->abs || g[0] == '/' || strchr(g, '/') != NULL;
        if (!r->abs && g[0] == '/')
            g++;
        if (glob_anchored) {
            r->pre = g;
            r->pre_len = strcspn(g, "*?[{\\");
            r->pre_ok = true;
        }
        set_suffix(r, g, "*?[]{},\\/");
    }
    agti_buf_free(&b);
    if (rc == AGT_OK && r->key == NULL)
        rc = agti_oom();
    return rc;
}

int agti_rule_parse(const char *text, int kind, const char *root, agti_rule **out)
{
    *out = NULL;
    while (is_space(*text))
        text++;
    size_t len = strlen(text);
    while (len > 0 && is_space(text[len - 1]))
        len--;
    if (len == 0)
        return agti_error(AGT_EINVALID, "rule '': a rule names a tool, as Tool or Tool(pattern)");
    agti_rule *r = calloc(1, sizeof *r);
    if (r == NULL || (r->text = agti_strndup(text, len)) == NULL) {
        agti_rule_free(r);
        return agti_oom();
    }
    r->kind = kind;
    const char *paren = memchr(text, '(', len);
    size_t nlen = paren ? (size_t)(paren - text) : len;
    int rc = AGT_OK;
    /* `*` names every tool (the weakest rule: see agti_policy_evaluate) */
    bool every = nlen == 1 && text[0] == '*';
    if (every && paren != NULL && !(len == 4 && paren[1] == '*' && text[len - 1] == ')'))
        rc = agti_error(AGT_EINVALID,
                        "rule '%s': the rule '*' names every tool and takes no pattern (tools "
                        "match different arguments); write '*', or Tool(pattern) for one tool",
                        r->text);
    for (size_t i = 0; rc == AGT_OK && !every && i < nlen; i++)
        if (!tool_char(text[i])) {
            rc = agti_error(AGT_EINVALID,
                            "rule '%s': '%c' cannot appear in a tool name (write Tool, "
                            "Tool(pattern), or '*' alone for every tool)",
                            r->text, text[i]);
            break;
        }
    if (rc == AGT_OK && nlen == 0)
        rc = agti_error(AGT_EINVALID, "rule '%s': the tool name is missing", r->text);
    if (rc == AGT_OK && paren != NULL && text[len - 1] != ')')
        rc = agti_error(AGT_EINVALID, "rule '%s': the pattern must end with ')'", r->text);
    if (rc == AGT_OK && paren != NULL && len - nlen == 2)
        rc = agti_error(AGT_EINVALID, "rule '%s': the pattern in () is empty", r->text);
    if (rc != AGT_OK) {
        agti_rule_free(r);
        return rc;
    }
    r->tool = agti_strndup(text, nlen);
    if (paren != NULL && !(len - nlen == 3 && paren[1] == '*'))
        r->pattern = agti_strndup(paren + 1, len - nlen - 2);
    if (r->tool == NULL || (paren != NULL && len - nlen != 3 && r->pattern == NULL)) {
        agti_rule_free(r);
        return agti_oom();
    }
    r->subject = agti_rule_subject(r->tool);
    if (r->pattern == NULL) {
        r->key = agti_strdup("");
        rc = r->key ? AGT_OK : agti_oom();
    } else if (r->subject == AGTI_SUBJ_NAME) {
        rc = agti_error(AGT_EINVALID,
                        "rule '%s': %s rules match the tool name only; write '%s' without a "
                        "pattern",
                        r->text, r->tool, r->tool);
    } else if (r->subject == AGTI_SUBJ_PATH) {
        rc = compile_path_pattern(r, root);
    } else {
        if (r->subject == AGTI_SUBJ_COMMAND)
            rc = agti_bash_compile(r);
        const char *pat = r->cpat ? r->cpat : r->pattern;
        if (rc == AGT_OK) {
            r->key = r->subject == AGTI_SUBJ_COMMAND ? command_key(pat) : agti_strdup("");
            rc = r->key ? AGT_OK : agti_oom();
        }
        r->pre = pat;
        r->pre_len = strcspn(pat, "*\\");
        r->pre_ok = true;
        set_suffix(r, pat, "*\\");
        if (rc == AGT_OK && strchr(pat, '\\') == NULL) {
            const char *best = NULL;
            size_t best_len = 0;
            for (const char *q = pat; *q;) {
                size_t run = strcspn(q, "*");
                if (run > best_len) {
                    best = q;
                    best_len = run;
                }
                q += run;
                q += *q == '*';
            }
            if (best_len > r->pre_len && best_len > r->suf_len &&
                (r->needle = agti_strndup(best, best_len)) == NULL)
                rc = agti_oom();
        }
    }
    if (rc != AGT_OK) {
        agti_rule_free(r);
        return rc;
    }
    *out = r;
    return AGT_OK;
}

void agti_ruleset_clear(agti_ruleset *rs)
{
    for (size_t i = 0; i < rs->n; i++)
        agti_rule_free(rs->rules[i]);
    free(rs->rules);
    free(rs->sorted);
    memset(rs, 0, sizeof *rs);
}

int agti_ruleset_add(agti_ruleset *rs, agti_rule *r)
{
    if (agti_grow(&rs->rules, &rs->cap, rs->n, sizeof *rs->rules, 16) != AGT_OK) {
        agti_rule_free(r);
        return AGT_ENOMEM;
    }
    rs->rules[rs->n++] = r;
    rs->dirty = true;
    return AGT_OK;
}

static int cmp_tool_key(const char *t1, const char *k1, const char *t2, const char *k2)
{
    int c = strcmp(t1, t2);
    return c ? c : strcmp(k1, k2);
}

static int cmp_rules(const void *a, const void *b)
{
    const agti_rule *x = *(agti_rule *const *)a, *y = *(agti_rule *const *)b;
    return cmp_tool_key(x->tool, x->key, y->tool, y->key);
}

static bool reindex(agti_ruleset *rs)
{
    free(rs->sorted);
    rs->sorted = NULL;
    if (rs->n > 0) {
        rs->sorted = malloc(rs->n * sizeof *rs->sorted);
        if (rs->sorted == NULL)
            return false;
        memcpy(rs->sorted, rs->rules, rs->n * sizeof *rs->sorted);
        qsort(rs->sorted, rs->n, sizeof *rs->sorted, cmp_rules);
    }
    rs->dirty = false;
    return true;
}

bool agti_star_match(const char *p, const char *t)
{
    const char *star_p = NULL, *star_t = NULL;
    while (*t) {
        if (*p == '*') {
            star_p = ++p;
            star_t = t;
            continue;
        }
        const char *lit = p;
        if (*p == '\\' && p[1] == '*')
            lit = p + 1;
        if (*lit && *lit == *t) {
            p = lit + 1;
            t++;
            continue;
        }
        if (star_p == NULL)
            return false;
        p = star_p;
        t = ++star_t;
    }
    while (*p == '*')
        p++;
    return *p == '\0';
}

static bool has_affixes(const agti_rule *r, const char *text, size_t n, bool *suffix_ok)
{
    if (r->pre_ok && (n < r->pre_len || memcmp(text, r->pre, r->pre_len) != 0))
        return false;
    *suffix_ok = n >= r->suf_len && memcmp(text + n - r->suf_len, r->suf, r->suf_len) == 0;
    return true;
}

static bool path_rule_match(const agti_rule *r, const char *rel, const char *abs)
{
    const char *text = r->abs ? abs : rel;
    if (text == NULL)
        return false;
    size_t n = strlen(text);
    bool suffix_ok;
    if (!has_affixes(r, text, n, &suffix_ok))
        return false;
    if (r->abs) {
        if (suffix_ok && agti_wm_match(r->wm, abs, n))
            return true;
        for (size_t i = n; r->cover_dirs && i-- > 1;)
            if (abs[i] == '/' && agti_wm_match(r->wm, abs, i))
                return true;
        return false;
    }
    if (suffix_ok && agti_glob_match(r->glob, rel, n, false))
        return true;
    if (!r->cover_dirs)
        return false;
    /* gitignore: a pattern that matches a directory covers what is inside */
    for (size_t i = n; i-- > 0;)
        if (rel[i] == '/' && agti_glob_match(r->glob, rel, i, true))
            return true;
    return false;
}

static bool rule_match(const agti_rule *r, int subject, const char *text, const char *abs)
{
    if (r->pattern == NULL)
        return true;
    if (subject == AGTI_SUBJ_PATH)
        return path_rule_match(r, text, abs);
    if (text == NULL)
        return false;
    return agti_rule_text_match(r, text);
}

bool agti_rule_text_match(const agti_rule *r, const char *text)
{
    if (r->pattern == NULL)
        return true;
    bool suffix_ok;
    if (!has_affixes(r, text, strlen(text), &suffix_ok) || !suffix_ok)
        return false;
    if (r->needle != NULL && strstr(text, r->needle) == NULL)
        return false;
    return agti_star_match(r->cpat ? r->cpat : r->pattern, text);
}

static size_t lower_bound(agti_rule **v, size_t n, const char *tool, const char *key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_tool_key(v[mid]->tool, v[mid]->key, tool, key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void scan_bucket(agti_ruleset *rs, const char *tool, const char *key, int subject,
                        const char *text, const char *abs, const agti_rule **hit)
{
    for (size_t i = lower_bound(rs->sorted, rs->n, tool, key); i < rs->n; i++) {
        const agti_rule *r = rs->sorted[i];
        if (cmp_tool_key(r->tool, r->key, tool, key) != 0)
            break;
        if ((*hit == NULL || r->kind > (*hit)->kind) && rule_match(r, subject, text, abs))
            *hit = r;
    }
}

bool agti_ruleset_has_tool(agti_ruleset *rs, const char *tool)
{
    if (rs->n == 0)
        return false;
    if (rs->dirty && !reindex(rs))
        return true; /* unknown without the index: let the caller evaluate */
    size_t i = lower_bound(rs->sorted, rs->n, tool, "");
    return i < rs->n && strcmp(rs->sorted[i]->tool, tool) == 0;
}

void agti_ruleset_match(agti_ruleset *rs, const char *tool, int subject, const char *text,
                        const char *abs, const agti_rule **hit)
{
    *hit = NULL;
    if (rs->dirty && !reindex(rs)) {
        /* no index (out of memory): a linear scan gives the same answer */
        for (size_t i = 0; i < rs->n; i++) {
            const agti_rule *r = rs->rules[i];
            if (strcmp(r->tool, tool) == 0 && (*hit == NULL || r->kind > (*hit)->kind) &&
                rule_match(r, subject, text, abs))
                *hit = r;
        }
        return;
    }
    scan_bucket(rs, tool, "", subject, text, abs, hit);
    if (text == NULL || (subject != AGTI_SUBJ_COMMAND && subject != AGTI_SUBJ_PATH))
        return;
    char key[256];
    size_t n = 0;
    const char *sep = subject == AGTI_SUBJ_COMMAND ? " \t" : "/";
    while (text[n] && strchr(sep, text[n]) == NULL)
        n++;
    if (n == 0 || n >= sizeof key || (subject == AGTI_SUBJ_PATH && text[n] == '\0'))
        return;
    memcpy(key, text, n);
    key[n] = '\0';
    scan_bucket(rs, tool, key, subject, text, abs, hit);
}

/* ---- evaluating a call ---------------------------------------------- */

void agti_ruleset_each(agti_ruleset *rs, const char *tool, const char *key,
                       void (*fn)(const agti_rule *r, void *ctx), void *ctx)
{
    if (rs->n == 0)
        return;
    if (rs->dirty && !reindex(rs)) {
        /* no index (out of memory): every rule of the tool with that key */
        for (size_t i = 0; i < rs->n; i++)
            if (strcmp(rs->rules[i]->tool, tool) == 0 && strcmp(rs->rules[i]->key, key) == 0)
                fn(rs->rules[i], ctx);
        return;
    }
    for (size_t i = lower_bound(rs->sorted, rs->n, tool, key); i < rs->n; i++) {
        const agti_rule *r = rs->sorted[i];
        if (cmp_tool_key(r->tool, r->key, tool, key) != 0)
            break;
        fn(r, ctx);
    }
}

void agti_ruleset_tool_range(agti_ruleset *rs, const char *tool, agti_rule_range *out)
{
    out->tool = tool;
    out->lo = out->hi = 0;
    out->indexed = rs->n == 0 || !rs->dirty || reindex(rs);
    if (rs->n == 0 || !out->indexed)
        return;
    size_t lo = 0, hi = rs->n;
    while (lo < hi) { /* first rule of tool */
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(rs->sorted[mid]->tool, tool) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    out->lo = lo;
    hi = rs->n;
    while (lo < hi) { /* first rule past tool */
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(rs->sorted[mid]->tool, tool) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    out->hi = lo;
}

void agti_ruleset_each_key(agti_ruleset *rs, const agti_rule_range *range, const char *key,
                           void (*fn)(const agti_rule *r, void *ctx), void *ctx)
{
    if (!range->indexed) {
        agti_ruleset_each(rs, range->tool, key, fn, ctx);
        return;
    }
    size_t lo = range->lo, hi = range->hi;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(rs->sorted[mid]->key, key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < range->hi && strcmp(rs->sorted[i]->key, key) == 0; i++)
        fn(rs->sorted[i], ctx);
}

int agti_policy_path(const char *root, const char *path, char **rel, char **abs)
{
    *rel = *abs = NULL;
    /* Judged where the path leads, as the file tools resolve it (~ expanded,
     * symlinks followed): lexically, a Write rule for src and below admitted
     * src/up/x with src/up -> .. and wrote x at the root. Lexical when it
     * cannot be resolved (a symlink loop: the tool fails on it anyway). */
    static const char *const anywhere[] = {"/"};
    int rc = agti_path_resolve(root, anywhere, 1, NULL, path, abs, NULL);
    if (rc == AGT_ENOMEM)
        return rc;
    if (rc != AGT_OK) {
        char *joined = path[0] == '/' ? agti_strdup(path) : agti_aprintf("%s/%s", root, path);
        if (joined == NULL)
            return agti_oom();
        *abs = agti_path_normalize(joined);
        free(joined);
    }
    if (*abs == NULL)
        return agti_oom();
    if (agti_path_is_within(*abs, root)) {
        size_t rl = strcmp(root, "/") == 0 ? 0 : strlen(root);
        const char *rest = (*abs)[rl] == '/' ? *abs + rl + 1 : *abs + rl;
        *rel = agti_strdup(rest[0] ? rest : ".");
        if (*rel == NULL) {
            free(*abs);
            *abs = NULL;
            return agti_oom();
        }
    }
    return AGT_OK;
}

static const char *subject_arg(int subject, const char *tool)
{
    switch (subject) {
    case AGTI_SUBJ_COMMAND:
        return "command";
    case AGTI_SUBJ_PATH:
        return "path";
    case AGTI_SUBJ_TEXT:
        return strcmp(tool, "FetchURL") == 0 ? "url" : "pattern";
    default:
        return NULL;
    }
}

/* The rules naming the tool decide: the rule '*' (every tool) applies only
 * to a call no rule of its own tool decided, so `deny: ["*"]` with
 * `allow: ["Read"]` leaves Read allowed and everything else denied, and
 * `allow: ["*"]` with `deny: ["Bash(rm *)"]` still refuses rm. Among '*'
 * rules deny beats ask beats allow. A Bash command that cannot be checked
 * keeps asking under an allow '*' (it is never allowed by a rule); a deny
 * '*' refuses it. A command over a limit is refused anyway. */
static void every_tool_rules(agti_ruleset *rs, agti_verdict *v)
{
    if (v->rule != NULL || v->refused != NULL || (v->kind != -1 && v->closed == NULL))
        return;
    const agti_rule *hit = NULL;
    agti_ruleset_match(rs, "*", AGTI_SUBJ_NAME, NULL, NULL, &hit);
    if (hit == NULL)
        return;
    if (v->closed != NULL && hit->kind == AGT_RULE_ALLOW)
        return;
    v->rule = hit;
    v->kind = hit->kind;
}

static int evaluate_own(agt_session *s, const char *tool, json_t *args, agti_verdict *v);

/* The strongest rule of apply_patch or Edit for one path of a patch
 * (rel/abs NULL: name-only rules). */
static const agti_rule *patch_path_rule(agti_ruleset *rs, const char *rel, const char *abs)
{
    static const char *const tools[] = {"apply_patch", "Edit"};
    const agti_rule *best = NULL;
    for (size_t t = 0; t < sizeof tools / sizeof tools[0]; t++) {
        const agti_rule *hit = NULL;
        agti_ruleset_match(rs, tools[t], AGTI_SUBJ_PATH, rel, abs, &hit);
        if (hit != NULL && (best == NULL || hit->kind > best->kind))
            best = hit;
    }
    return best;
}

/* apply_patch: every path of the patch (Move to targets included) is
 * judged by the rules of apply_patch and of Edit, as Edit judges its path:
 * deny when one path is denied, ask when one asks, allow when every path
 * is allowed. A patch that cannot be read meets the name-only rules (the
 * tool refuses it without writing). */
static int patch_evaluate(agt_session *s, json_t *args, agti_verdict *v)
{
    agti_ruleset *rs = &s->policy->rules;
    if (!agti_ruleset_has_tool(rs, "apply_patch") && !agti_ruleset_has_tool(rs, "Edit"))
        return AGT_OK;
    json_t *jin = json_object_get(args, "input");
    agti_patch *p = NULL;
    if (json_is_string(jin)) {
        agti_buf err = AGTI_BUF_INIT;
        int rc = agti_patch_parse(json_string_value(jin), json_string_length(jin), &p, &err);
        agti_buf_free(&err);
        if (rc == AGT_ENOMEM)
            return rc;
    }
    const agti_rule *deny = NULL, *ask = NULL, *allow = NULL;
    bool every = true;
    size_t npaths = 0;
    for (size_t i = 0; p != NULL && i < p->nops; i++) {
        for (int k = 0; k < 2; k++) {
            const char *path = k == 0 ? p->ops[i].path : p->ops[i].move_to;
            if (path == NULL)
                continue;
            char *rel, *abs;
            if (agti_policy_path(s->root, path, &rel, &abs) != AGT_OK) {
                agti_patch_free(p);
                return AGT_ENOMEM;
            }
            const agti_rule *r = patch_path_rule(rs, rel, abs);
            free(rel);
            free(abs);
            npaths++;
            if (r == NULL)
                every = false;
            else if (r->kind == AGT_RULE_DENY && deny == NULL)
                deny = r;
            else if (r->kind == AGT_RULE_ASK && ask == NULL)
                ask = r;
            else if (r->kind == AGT_RULE_ALLOW)
                allow = r;
        }
    }
    agti_patch_free(p);
    if (npaths == 0) {
        const agti_rule *r = patch_path_rule(rs, NULL, NULL);
        if (r != NULL && r->kind == AGT_RULE_ALLOW)
            allow = r;
        else if (r != NULL && r->kind == AGT_RULE_DENY)
            deny = r;
        else if (r != NULL)
            ask = r;
        every = r != NULL;
    }
    v->rule = deny ? deny : ask ? ask : every ? allow : NULL;
    if (v->rule != NULL)
        v->kind = v->rule->kind;
    return AGT_OK;
}

int agti_policy_evaluate(agt_session *s, const char *tool, json_t *args, agti_verdict *v)
{
    int rc = evaluate_own(s, tool, args, v);
    if (rc == AGT_OK)
        every_tool_rules(&s->policy->rules, v);
    return rc;
}

static int evaluate_own(agt_session *s, const char *tool, json_t *args, agti_verdict *v)
{
    agti_ruleset *rs = &s->policy->rules;
    int subject = agti_rule_subject(tool);
    const char *arg = subject_arg(subject, tool);
    const char *text = arg ? json_string_value(json_object_get(args, arg)) : NULL;
    memset(v, 0, sizeof *v);
    v->kind = -1;
    if (strcmp(tool, "apply_patch") == 0)
        return patch_evaluate(s, args, v);
    if (subject == AGTI_SUBJ_PATH && text != NULL) {
        /* resolving the path costs a stat per component: only when a rule
         * for this tool could use it */
        if (!agti_ruleset_has_tool(rs, tool))
            return AGT_OK;
        char *rel, *abs;
        if (agti_policy_path(s->root, text, &rel, &abs) != AGT_OK)
            return AGT_ENOMEM;
        agti_ruleset_match(rs, tool, subject, rel, abs, &v->rule);
        free(rel);
        free(abs);
    } else if (subject == AGTI_SUBJ_COMMAND && text != NULL) {
        return agti_bash_evaluate(rs, agti_session_sensitive(s), text, v);
    } else {
        agti_ruleset_match(rs, tool, subject, text, NULL, &v->rule);
    }
    if (v->rule != NULL)
        v->kind = v->rule->kind;
    return AGT_OK;
}
