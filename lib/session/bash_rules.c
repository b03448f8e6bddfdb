/* Bash rules on the shell engine's output (lib/shell): a command is parsed,
 * every simple command that can run is listed as it would run (wrappers
 * seen through, sh -c and eval strings parsed again, functions expanded),
 * and rules are matched against the words of each, not against text cut on
 * separators. Undecidable commands fail closed; writing redirections are
 * writes; the suggested session rules name each uncovered command. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/core.h"
#include "fs/fs.h"
#include "policy.h"
#include "session_internal.h"
#include "shell/shell.h"

#define WORD_DYN (AGTI_SHW_DYNAMIC | AGTI_SHW_UNQUOTED_EXP | AGTI_SHW_GLOB | AGTI_SHW_BRACE)

/* ---- canonical text: words joined by one space ------------------------- */

static bool needs_quote(const char *w)
{
    if (*w == '\0')
        return true;
    return strpbrk(w, " \t\n\r'\"\\") != NULL;
}

static void put_word(agti_buf *b, const char *w)
{
    if (!needs_quote(w)) {
        agti_buf_puts(b, w);
        return;
    }
    agti_buf_putc(b, '\'');
    for (; *w; w++) {
        if (*w == '\'')
            agti_buf_puts(b, "'\\''");
        else
            agti_buf_putc(b, *w);
    }
    agti_buf_putc(b, '\'');
}

/* Words joined by one space, each written by put (put_word: the canonical
 * text rules match; put_word_shown: the text shown to the user). */
static void render_by(agti_buf *b, char *const *w, size_t n, void (*put)(agti_buf *, const char *))
{
    for (size_t i = 0; i < n; i++) {
        if (i)
            agti_buf_putc(b, ' ');
        put(b, w[i]);
    }
}

static void render(agti_buf *b, char *const *w, size_t n)
{
    render_by(b, w, n, put_word);
}

/* A word as shown to the user (approval reasons, uncovered commands): as
 * put_word, with the bytes that are not UTF-8 written as bash reads them
 * back ($'\xff'), so the text can go into JSON and be run again. */
static void put_word_shown(agti_buf *b, const char *w)
{
    size_t n = strlen(w);
    if (agti_utf8_valid(w, n)) {
        put_word(b, w);
        return;
    }
    for (size_t i = 0; i < n;) {
        size_t run = i;
        uint32_t cp;
        size_t k;
        while (run < n && (k = agti_utf8_decode((const unsigned char *)w + run, n - run, &cp)) > 0)
            run += k;
        if (run > i) {
            char *part = agti_strndup(w + i, run - i);
            if (part == NULL) {
                b->oom = true;
                return;
            }
            put_word(b, part);
            free(part);
            i = run;
            continue;
        }
        agti_buf_puts(b, "$'");
        while (i < n && agti_utf8_decode((const unsigned char *)w + i, n - i, &cp) == 0)
            agti_buf_printf(b, "\\x%02x", (unsigned char)w[i++]);
        agti_buf_putc(b, '\'');
    }
}

static void render_shown(agti_buf *b, char *const *w, size_t n)
{
    render_by(b, w, n, put_word_shown);
}

/* ---- patterns -------------------------------------------------------- */

/* A pattern word: literal characters, with wildcard stars marked. */
typedef struct pword {
    agti_buf lit;  /* the characters, a wildcard as '*', a literal star as '*' too */
    agti_buf mask; /* one byte per character: 1 = wildcard */
} pword;

static void pword_free(pword *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        agti_buf_free(&v[i].lit);
        agti_buf_free(&v[i].mask);
    }
    free(v);
}

static void pw_put(pword *w, char c, bool wild)
{
    agti_buf_putc(&w->lit, c);
    agti_buf_putc(&w->mask, wild ? 1 : 0);
}

/* Splits a pattern into words as the shell would (quotes, backslashes);
 * an unquoted `*` is a wildcard. AGT_EINVALID on an unterminated quote. */
static int split_pattern(const char *p, pword **out, size_t *nout)
{
    size_t cap = 8, n = 0;
    pword *v = calloc(cap, sizeof *v);
    if (v == NULL)
        return agti_oom();
    bool in_word = false;
    for (size_t i = 0; p[i];) {
        char c = p[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            in_word = false;
            i++;
            continue;
        }
        if (!in_word) {
            if (n == cap) {
                pword *nv = realloc(v, cap * 2 * sizeof *nv);
                if (nv == NULL) {
                    pword_free(v, n);
                    return agti_oom();
                }
                memset(nv + cap, 0, cap * sizeof *nv);
                v = nv;
                cap *= 2;
            }
            n++;
            in_word = true;
            /* an empty word ('') still exists: make lit non-NULL */
            agti_buf_reserve(&v[n - 1].lit, 1);
            agti_buf_reserve(&v[n - 1].mask, 1);
        }
        pword *w = &v[n - 1];
        if (c == '\'') {
            size_t e = i + 1;
            while (p[e] && p[e] != '\'')
                e++;
            if (!p[e]) {
                pword_free(v, n);
                return AGT_EINVALID;
            }
            for (size_t k = i + 1; k < e; k++)
                pw_put(w, p[k], false);
            i = e + 1;
        } else if (c == '"') {
            size_t e = i + 1;
            while (p[e] && p[e] != '"') {
                if (p[e] == '\\' && p[e + 1] && strchr("\"\\$`", p[e + 1]))
                    e++;
                e++;
            }
            if (!p[e]) {
                pword_free(v, n);
                return AGT_EINVALID;
            }
            for (size_t k = i + 1; k < e; k++) {
                if (p[k] == '\\' && strchr("\"\\$`", p[k + 1]))
                    k++;
                pw_put(w, p[k], false);
            }
            i = e + 1;
        } else if (c == '\\' && p[i + 1]) {
            pw_put(w, p[i + 1], false);
            i += 2;
        } else {
            pw_put(w, c, c == '*');
            i++;
        }
    }
    for (size_t i = 0; i < n; i++)
        if (v[i].lit.oom || v[i].mask.oom) {
            pword_free(v, n);
            return agti_oom();
        }
    *out = v;
    *nout = n;
    return AGT_OK;
}

/* The star pattern (rules.c's star_match syntax) of one pattern word. */
static void put_pword(agti_buf *b, const pword *w)
{
    const char *s = agti_buf_cstr(&w->lit);
    const char *m = agti_buf_cstr(&w->mask);
    size_t n = w->lit.len;
    bool q = n == 0;
    for (size_t i = 0; i < n; i++)
        if (!m[i] && strchr(" \t\n\r'\"\\", s[i]))
            q = true;
    if (q)
        agti_buf_putc(b, '\'');
    for (size_t i = 0; i < n; i++) {
        if (m[i])
            agti_buf_putc(b, '*');
        else if (s[i] == '*')
            agti_buf_puts(b, "\\*");
        else if (q && s[i] == '\'')
            agti_buf_puts(b, "'\\''");
        else
            agti_buf_putc(b, s[i]);
    }
    if (q)
        agti_buf_putc(b, '\'');
}

static bool pword_has_wild(const pword *w)
{
    return memchr(agti_buf_cstr(&w->mask), 1, w->mask.len) != NULL;
}

static bool pword_option(const pword *w)
{
    const char *s = agti_buf_cstr(&w->lit);
    return w->lit.len > 1 && s[0] == '-' && !agti_buf_cstr(&w->mask)[0] && strcmp(s, "--") != 0;
}

/* ---- option tokens ----------------------------------------------------- */

typedef struct alias {
    const char *cmd, *sub, *from, *to;
} alias;

/* Spellings of the same option, so `rm --recursive --force` is `rm -rf`;
 * a second entry with the same `from` adds a token the option implies
 * (`cp -a` is `cp -dR --preserve=all`; every git push that can overwrite
 * or delete a remote ref is a `--force`). */
static const alias aliases[] = {
    {"rm", NULL, "-R", "-r"},
    {"rm", NULL, "--recursive", "-r"},
    {"rm", NULL, "--force", "-f"},
    {"rm", NULL, "--dir", "-d"},
    {"cp", NULL, "-R", "-r"},
    {"cp", NULL, "--recursive", "-r"},
    {"cp", NULL, "--force", "-f"},
    {"cp", NULL, "-a", "-r"},
    {"cp", NULL, "--archive", "-a"},
    {"cp", NULL, "--archive", "-r"},
    {"mv", NULL, "--force", "-f"},
    {"chmod", NULL, "--recursive", "-R"},
    {"chown", NULL, "--recursive", "-R"},
    {"chgrp", NULL, "--recursive", "-R"},
    {"git", "push", "-f", "--force"},
    {"git", "push", "--force-with-lease", "--force"},
    {"git", "push", "--force-if-includes", "--force"},
    {"git", "push", "-d", "--delete"},
    {"git", "push", "--delete", "--force"},
    {"git", "push", "-d", "--force"},
    {"git", "push", "--mirror", "--force"},
    {"git", "push", "--mirror", "--delete"},
    {"git", "push", "--prune", "--force"},
    {"git", "push", "--prune", "--delete"},
    {"git", "clean", "--force", "-f"},
    {"git", "reset", "--hard", "--hard"},
    {"git", "branch", "--delete", "-d"},
    {"git", "branch", "--force", "-f"},
    {"git", "branch", "-D", "-d"}, /* -D is --delete --force */
    {"git", "branch", "-D", "-f"},
    {"git", "commit", "--no-verify", "-n"},
    {"git", "commit", "--all", "-a"},
    {"git", "checkout", "--force", "-f"},
};

/* The long options of the commands the aliases name, as "|name|...|":
 * GNU getopt_long and git's parse-options take any unambiguous prefix of
 * one (`rm --recu` is `rm --recursive`). */
typedef struct longs {
    const char *cmd, *sub, *list;
} longs;

static const longs long_opts[] = {
    {"rm", NULL,
     "|force|interactive|one-file-system|no-preserve-root|preserve-root|recursive|dir|verbose|"
     "help|version|"},
    {"cp", NULL,
     "|archive|attributes-only|backup|copy-contents|debug|dereference|force|interactive|link|"
     "no-clobber|no-dereference|preserve|no-preserve|parents|recursive|reflink|"
     "remove-destination|sparse|strip-trailing-slashes|symbolic-link|suffix|target-directory|"
     "no-target-directory|update|verbose|one-file-system|context|keep-directory-symlink|help|"
     "version|"},
    {"mv", NULL,
     "|backup|debug|exchange|force|interactive|no-clobber|no-copy|strip-trailing-slashes|suffix|"
     "target-directory|no-target-directory|update|verbose|context|help|version|"},
    {"chmod", NULL,
     "|changes|no-preserve-root|preserve-root|quiet|silent|reference|recursive|verbose|help|"
     "version|"},
    {"chown", NULL,
     "|changes|dereference|no-dereference|from|no-preserve-root|preserve-root|quiet|silent|"
     "reference|recursive|verbose|help|version|"},
    {"chgrp", NULL,
     "|changes|dereference|no-dereference|no-preserve-root|preserve-root|quiet|silent|reference|"
     "recursive|verbose|help|version|"},
    {"git", "push",
     "|all|branches|mirror|delete|tags|follow-tags|dry-run|porcelain|force|force-with-lease|"
     "force-if-includes|repo|set-upstream|thin|no-thin|verbose|quiet|progress|no-progress|"
     "no-verify|verify|recurse-submodules|no-recurse-submodules|atomic|no-atomic|push-option|"
     "receive-pack|exec|signed|no-signed|ipv4|ipv6|prune|no-force-with-lease|"
     "no-force-if-includes|"},
    {"git", "clean", "|dry-run|force|interactive|quiet|exclude|"},
    {"git", "reset",
     "|hard|soft|mixed|merge|keep|quiet|no-quiet|refresh|no-refresh|recurse-submodules|"
     "no-recurse-submodules|intent-to-add|patch|pathspec-from-file|pathspec-file-nul|"},
    {"git", "branch",
     "|delete|force|move|copy|list|all|remotes|verbose|quiet|track|no-track|set-upstream-to|"
     "unset-upstream|contains|no-contains|merged|no-merged|sort|points-at|format|color|no-color|"
     "column|no-column|create-reflog|edit-description|show-current|ignore-case|omit-empty|"
     "abbrev|no-abbrev|recurse-submodules|"},
    {"git", "commit",
     "|all|patch|reuse-message|reedit-message|fixup|squash|reset-author|short|branch|porcelain|"
     "long|null|file|author|date|message|template|signoff|no-signoff|trailer|no-verify|verify|"
     "allow-empty|allow-empty-message|cleanup|edit|no-edit|amend|no-post-rewrite|include|only|"
     "pathspec-from-file|pathspec-file-nul|untracked-files|verbose|quiet|dry-run|status|"
     "no-status|gpg-sign|no-gpg-sign|"},
    {"git", "checkout",
     "|force|quiet|progress|no-progress|ours|theirs|track|no-track|guess|no-guess|detach|orphan|"
     "ignore-skip-worktree-bits|merge|conflict|patch|ignore-other-worktrees|overwrite-ignore|"
     "no-overwrite-ignore|recurse-submodules|no-recurse-submodules|overlay|no-overlay|"
     "pathspec-from-file|pathspec-file-nul|"},
};

static bool alias_for(const alias *a, const char *cmd, const char *sub)
{
    return strcmp(a->cmd, cmd) == 0 && (a->sub == NULL || (sub && strcmp(a->sub, sub) == 0));
}

static const char *long_list(const char *cmd, const char *sub)
{
    for (size_t i = 0; i < sizeof long_opts / sizeof long_opts[0]; i++)
        if (strcmp(long_opts[i].cmd, cmd) == 0 &&
            (long_opts[i].sub == NULL || (sub && strcmp(long_opts[i].sub, sub) == 0)))
            return long_opts[i].list;
    return NULL;
}

/* A set of option tokens ("-r", "--force"), small and unsorted. */
typedef struct tokset {
    char **v;
    size_t n, cap;
    bool oom;
} tokset;

static void tok_add(tokset *t, const char *tok, size_t len)
{
    for (size_t i = 0; i < t->n; i++)
        if (strlen(t->v[i]) == len && memcmp(t->v[i], tok, len) == 0)
            return;
    if (agti_grow(&t->v, &t->cap, t->n, sizeof *t->v, 8) != AGT_OK) {
        t->oom = true;
        return;
    }
    if ((t->v[t->n] = agti_strndup(tok, len)) == NULL)
        t->oom = true;
    else
        t->n++;
}

static bool tok_has(const tokset *t, const char *tok)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->v[i], tok) == 0)
            return true;
    return false;
}

static void tok_free(tokset *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->v[i]);
    free(t->v);
    memset(t, 0, sizeof *t);
}

/* Adds one option token in its canonical spelling, and what it implies. */
static void tok_norm(tokset *t, const char *cmd, const char *sub, const char *tok)
{
    bool aliased = false;
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (alias_for(&aliases[i], cmd, sub) && strcmp(aliases[i].from, tok) == 0) {
            tok_add(t, aliases[i].to, strlen(aliases[i].to));
            aliased = true;
        }
    /* an option that implies another keeps its own name too (cp -a) */
    if (!aliased || strcmp(tok, "-a") == 0 || strcmp(tok, "--force-with-lease") == 0 ||
        strcmp(tok, "--force-if-includes") == 0 || strcmp(tok, "--mirror") == 0 ||
        strcmp(tok, "--prune") == 0 || strcmp(tok, "--delete") == 0)
        tok_add(t, tok, strlen(tok));
}

/* Adds the tokens of a long option "--name" (name n bytes): the option it
 * abbreviates when the command's long options are known; every one it
 * could abbreviate when it is ambiguous (a deny rule then sees them all). */
static void tok_long(tokset *t, const char *cmd, const char *sub, const char *name, size_t n)
{
    const char *list = long_list(cmd, sub);
    char tmp[128];
    if (n + 3 > sizeof tmp) {
        tok_add(t, name - 2, n + 2);
        return;
    }
    bool exact = list != NULL && agti_sh_opt_listed(list, name, n), any = false;
    for (const char *p = list;
         !exact && n > 0 && p != NULL && (p = strchr(p, '|')) != NULL && p[1];) {
        p++;
        size_t m = strcspn(p, "|");
        if (m > n && memcmp(p, name, n) == 0 && m + 3 <= sizeof tmp) {
            memcpy(tmp, "--", 2);
            memcpy(tmp + 2, p, m);
            tmp[m + 2] = '\0';
            tok_norm(t, cmd, sub, tmp);
            any = true;
        }
        p += m;
    }
    if (any)
        return;
    memcpy(tmp, "--", 2);
    memcpy(tmp + 2, name, n);
    tmp[n + 2] = '\0';
    tok_norm(t, cmd, sub, tmp);
}

/* Adds the tokens of one option word: -abc gives -a -b -c, --x=v gives --x. */
static void tok_word(tokset *t, const char *cmd, const char *sub, const char *w)
{
    if (w[1] == '-') {
        tok_long(t, cmd, sub, w + 2, strcspn(w + 2, "="));
        return;
    }
    for (size_t i = 1; w[i]; i++) {
        char tmp[3] = {'-', w[i], '\0'};
        tok_norm(t, cmd, sub, tmp);
    }
}

/* A git push refspec that forces (+src:dst) or deletes (:dst) a remote
 * ref: the tokens of --force (and --delete). */
static void tok_refspec(tokset *t, const char *cmd, const char *sub, const char *w)
{
    if (strcmp(cmd, "git") != 0 || sub == NULL || strcmp(sub, "push") != 0)
        return;
    if (w[0] == '+')
        tok_add(t, "--force", 7);
    else if (w[0] == ':')
        tok_norm(t, cmd, sub, "--delete");
    else if (strchr(w, '{') != NULL && strpbrk(w, "+:") != NULL)
        /* a brace expansion may make a +refspec or a :refspec of it
         * ({+main,x}): fail closed */
        tok_add(t, "--force", 7);
}

/* Whether a command token meets a pattern token: the same, or a prefix of
 * a long option the pattern names (an abbreviation of an option of a
 * command whose options are not listed above). */
static bool tok_meets(const char *have, const char *want)
{
    if (strcmp(have, want) == 0)
        return true;
    size_t n = strlen(have);
    return n > 2 && have[0] == '-' && have[1] == '-' && want[0] == '-' && want[1] == '-' &&
           strncmp(want, have, n) == 0;
}

/* ---- compiled Bash patterns -------------------------------------------- */

struct agti_bash_pat {
    char **lead; /* literal words before the options (structured form) */
    size_t nlead;
    tokset opts; /* the options the pattern names */
    char *rest;  /* star pattern for the operands */
    bool structured;
    char **lit; /* the literal words the pattern starts with (for undecidable words) */
    size_t nlit;
    bool names_force; /* a literal word spells a forcing or deleting git push */
    /* the options that run code its words spell (agti_sh_code_options on the
     * pattern): only they are covered by its wildcards (codeopt_spelled) */
    agti_sh_codeopt *codeopts;
    size_t ncodeopts;
};

void agti_bash_pat_free(struct agti_bash_pat *bp)
{
    if (bp == NULL)
        return;
    for (size_t i = 0; i < bp->nlead; i++)
        free(bp->lead[i]);
    free(bp->lead);
    for (size_t i = 0; i < bp->nlit; i++)
        free(bp->lit[i]);
    free(bp->lit);
    tok_free(&bp->opts);
    free(bp->rest);
    free(bp->codeopts);
    free(bp);
}

static char **copy_lits(const pword *w, size_t n)
{
    char **v = calloc(n ? n : 1, sizeof *v);
    for (size_t i = 0; v != NULL && i < n; i++)
        if ((v[i] = agti_strdup(agti_buf_cstr(&w[i].lit))) == NULL) {
            for (size_t k = 0; k < i; k++)
                free(v[k]);
            free(v);
            return NULL;
        }
    return v;
}

#define MAX_CODEOPTS 16

/* The code options a pattern's words spell: each word up to its first
 * wildcard, flagged AGTI_SHW_GLOB when it has one (codeopts.c). */
static int pattern_codeopts(struct agti_bash_pat *bp, const pword *w, size_t n)
{
    if (n == 0)
        return AGT_OK;
    char **argv = calloc(n, sizeof *argv);
    unsigned *flags = calloc(n, sizeof *flags);
    bp->codeopts = calloc(MAX_CODEOPTS, sizeof *bp->codeopts);
    int rc = argv && flags && bp->codeopts ? AGT_OK : agti_oom();
    for (size_t i = 0; rc == AGT_OK && i < n; i++) {
        const char *s = agti_buf_cstr(&w[i].lit);
        const char *m = agti_buf_cstr(&w[i].mask);
        size_t k = 0;
        while (k < w[i].lit.len && !m[k])
            k++;
        flags[i] = k < w[i].lit.len ? AGTI_SHW_GLOB : 0;
        const char *slash = i == 0 ? strrchr(s, '/') : NULL;
        if (slash != NULL && (size_t)(slash - s) < k) /* ./make: its basename */
            argv[i] = agti_strndup(slash + 1, k - (size_t)(slash - s) - 1);
        else
            argv[i] = agti_strndup(s, k);
        if (argv[i] == NULL)
            rc = agti_oom();
    }
    /* from each literal word on: a rule for a wrapper stage (Bash(sudo make
     * -f *)) spells the options of the command it runs */
    for (size_t at = 0; rc == AGT_OK && at < n && bp->ncodeopts < MAX_CODEOPTS; at++) {
        if (flags[at] != 0)
            continue;
        bool oom = false;
        size_t room = MAX_CODEOPTS - bp->ncodeopts;
        size_t c = agti_sh_code_options(argv + at, flags + at, n - at, true,
                                        bp->codeopts + bp->ncodeopts, room, &oom);
        bp->ncodeopts += c < room ? c : room;
        if (oom)
            rc = agti_oom();
    }
    for (size_t i = 0; argv && i < n; i++)
        free(argv[i]);
    free(argv);
    free(flags);
    return rc;
}

int agti_bash_compile(agti_rule *r)
{
    const char *pat = r->pattern;
    size_t plen = strlen(pat);
    bool colon =
        plen >= 2 && strcmp(pat + plen - 2, ":*") == 0 && (plen < 3 || pat[plen - 3] != '\\');
    char *base = agti_strndup(pat, colon ? plen - 2 : plen);
    if (base == NULL)
        return agti_oom();
    pword *w = NULL;
    size_t n = 0;
    int rc = split_pattern(base, &w, &n);
    free(base);
    if (rc == AGT_EINVALID)
        return agti_error(AGT_EINVALID,
                          "rule '%s': the pattern has an unterminated quote; quote each word "
                          "as the shell would",
                          r->text);
    if (rc != AGT_OK)
        return rc;
    agti_buf b = AGTI_BUF_INIT;
    for (size_t i = 0; i < n; i++) {
        if (i)
            agti_buf_putc(&b, ' ');
        put_pword(&b, &w[i]);
    }
    struct agti_bash_pat *bp = calloc(1, sizeof *bp);
    if (bp == NULL || b.oom) {
        free(bp);
        agti_buf_free(&b);
        pword_free(w, n);
        return agti_oom();
    }
    r->cpat = agti_buf_detach(&b);
    r->colon = colon; /* "x:*" = "x" or "x *" */
    /* the literal leading words */
    size_t nlit = 0;
    while (nlit < n && !pword_has_wild(&w[nlit]))
        nlit++;
    bp->lit = copy_lits(w, nlit);
    bp->nlit = nlit;
    /* whether the pattern spells a git push that forces or deletes: only
     * such a pattern covers one (a wildcard does not stand for a force) */
    for (size_t i = 0; i < n; i++) {
        const char *s = agti_buf_cstr(&w[i].lit);
        if (w[i].lit.len > 0 && !agti_buf_cstr(&w[i].mask)[0] && (s[0] == '+' || s[0] == ':')) {
            bp->names_force = true; /* a forcing or deleting refspec: +*, :* */
            continue;
        }
        if (pword_has_wild(&w[i]))
            continue;
        tokset t = {0};
        if (s[0] == '-' && s[1] != '\0')
            tok_word(&t, "git", "push", s);
        else
            tok_refspec(&t, "git", "push", s);
        bp->names_force = bp->names_force || tok_has(&t, "--force");
        bp->opts.oom = bp->opts.oom || t.oom;
        tok_free(&t);
    }
    if (pattern_codeopts(bp, w, n) != AGT_OK)
        bp->opts.oom = true;
    /* the structured form: lead words, options, operands */
    size_t nlead = 0;
    while (nlead < n && !pword_has_wild(&w[nlead]) && agti_buf_cstr(&w[nlead].lit)[0] != '-')
        nlead++;
    size_t k = nlead;
    bool rest_any = false, ok = nlead > 0 && k < n && (agti_buf_cstr(&w[k].lit)[0] == '-');
    const char *cmd = nlead ? agti_buf_cstr(&w[0].lit) : "";
    const char *sub = nlead > 1 ? agti_buf_cstr(&w[1].lit) : NULL;
    while (ok && k < n && agti_buf_cstr(&w[k].lit)[0] == '-') {
        const char *s = agti_buf_cstr(&w[k].lit);
        const char *m = agti_buf_cstr(&w[k].mask);
        size_t len = w[k].lit.len;
        if (len < 2 || strcmp(s, "--") == 0)
            break;
        size_t wild = 0;
        for (size_t i = 0; i < len; i++)
            wild += m[i] ? 1 : 0;
        if (wild == 0) {
            tok_word(&bp->opts, cmd, sub, s);
            k++;
            continue;
        }
        if (wild == 1 && m[len - 1] && len > 2) {
            char *t = agti_strndup(s, len - 1);
            if (t == NULL)
                bp->opts.oom = true;
            else
                tok_word(&bp->opts, cmd, sub, t);
            free(t);
            rest_any = true;
            k++;
            if (k != n)
                ok = false; /* "-rf* x": not a form the structured match reads */
            break;
        }
        ok = false;
    }
    (void)pword_option;
    if (ok && bp->opts.n > 0) {
        agti_buf rb = AGTI_BUF_INIT;
        for (size_t i = k; i < n; i++) {
            if (i > k)
                agti_buf_putc(&rb, ' ');
            put_pword(&rb, &w[i]);
        }
        if (rest_any)
            agti_buf_putc(&rb, '*');
        bp->rest = agti_buf_detach(&rb);
        bp->lead = copy_lits(w, nlead);
        bp->nlead = nlead;
        bp->structured = bp->rest != NULL && bp->lead != NULL;
        if (bp->rest == NULL || bp->lead == NULL)
            bp->opts.oom = true;
    }
    pword_free(w, n);
    if (r->cpat == NULL || bp->lit == NULL || bp->opts.oom) {
        agti_bash_pat_free(bp);
        return agti_oom();
    }
    r->bash = bp;
    return AGT_OK;
}

/* ---- matching one command ---------------------------------------------- */

/* A command as one rule sees it: words (argv of a stage), their flags. */
typedef struct layer {
    char *const *w;
    const unsigned *f;
    size_t n;
    bool more;  /* more arguments come at run time */
    bool inner; /* the command as it runs (not a wrapper stage) */
} layer;

static bool layer_dynamic(const layer *L)
{
    if (L->more)
        return true;
    for (size_t i = 0; i < L->n; i++)
        if (L->f[i] & WORD_DYN)
            return true;
    return false;
}

static bool structured_match(const struct agti_bash_pat *bp, const layer *L)
{
    if (!bp->structured || L->n < bp->nlead)
        return false;
    for (size_t i = 0; i < bp->nlead; i++)
        if (strcmp(L->w[i], bp->lead[i]) != 0)
            return false;
    const char *cmd = L->w[0];
    const char *sub = L->n > 1 ? L->w[1] : NULL;
    tokset have = {0};
    agti_buf ops = AGTI_BUF_INIT;
    bool dashdash = false, first = true;
    for (size_t i = bp->nlead; i < L->n; i++) {
        const char *a = L->w[i];
        if (!dashdash && strcmp(a, "--") == 0) {
            dashdash = true;
            continue;
        }
        if (!dashdash && a[0] == '-' && a[1] != '\0') {
            tok_word(&have, cmd, sub, a);
            continue;
        }
        tok_refspec(&have, cmd, sub, a);
        if (!first)
            agti_buf_putc(&ops, ' ');
        first = false;
        put_word(&ops, a);
    }
    bool ok = !have.oom && !ops.oom;
    for (size_t i = 0; ok && i < bp->opts.n; i++) {
        bool found = false;
        for (size_t j = 0; j < have.n && !found; j++)
            found = tok_meets(have.v[j], bp->opts.v[i]);
        ok = found;
    }
    if (ok)
        ok = agti_star_match(bp->rest, agti_buf_cstr(&ops));
    tok_free(&have);
    agti_buf_free(&ops);
    return ok;
}

/* Whether the words could still match once their dynamic parts are known:
 * the static words before the first dynamic one agree with the pattern's
 * literal leading words. */
static bool maybe_match(const struct agti_bash_pat *bp, const layer *L)
{
    size_t i = 0;
    for (; i < L->n && !(L->f[i] & WORD_DYN); i++)
        if (i < bp->nlit && strcmp(L->w[i], bp->lit[i]) != 0)
            return false;
    return true;
}

static bool text_match(const agti_rule *r, const char *text)
{
    if (agti_rule_text_match(r, text))
        return true;
    if (r->cpat != NULL) { /* a trailing " *" also matches no more words: "ls *" covers "ls" */
        size_t n = strlen(r->cpat);
        if (n >= 2 && strcmp(r->cpat + n - 2, " *") == 0 && (n < 3 || r->cpat[n - 3] != '\\')) {
            if (memchr(r->cpat, '*', n - 2) == NULL && memchr(r->cpat, '\\', n - 2) == NULL)
                return strlen(text) == n - 2 && memcmp(text, r->cpat, n - 2) == 0;
            char *head = agti_strndup(r->cpat, n - 2);
            bool hit = head != NULL && agti_star_match(head, text);
            free(head);
            if (hit)
                return true;
        }
    }
    if (r->colon) { /* "x:*": also "x ..." */
        size_t n = strlen(r->cpat);
        return n > 0 && strncmp(text, r->cpat, n) == 0 && text[n] == ' ';
    }
    return false;
}

/* What the rules say of one layer. */
typedef struct hits {
    const agti_rule *deny, *ask, *allow, *maybe;
} hits;

typedef struct lctx {
    size_t calls; /* rules handed to check_rule */
    const layer *L;
    const char *path;  /* the command word as written when it is a path, or NULL */
    agti_buf *scratch; /* [0]: text, [1]: ptext */
    bool rendered;     /* text and ptext are set: rendered at the first rule to check */
    const char *text;  /* canonical, command word basename */
    const char *ptext; /* canonical with the command word as written (a path), or NULL */
    bool path_ok;      /* an allow rule naming the basename covers the path */
    bool dyn;
    bool oom;
    int push_force; /* the layer is a git push that forces or deletes: -1 not known yet */
    hits *h;
} lctx;

static size_t git_globals(const layer *L);
static bool git_config_forces(const layer *L, size_t g);

/* Whether a layer is a git push that can overwrite or delete a remote ref:
 * a force option in any spelling or abbreviation, a +refspec, a :refspec,
 * --delete, --mirror, --prune. */
/* Whether a layer is `git [global options] push ...` (g: the number of
 * global option words, git_globals). */
static bool is_git_push(const layer *L, size_t g)
{
    return L->n >= 2 + g && strcmp(L->w[0], "git") == 0 && strcmp(L->w[1 + g], "push") == 0;
}

static bool push_forces(const layer *L)
{
    size_t g = git_globals(L);
    if (!is_git_push(L, g))
        return false;
    tokset t = {0};
    bool dashdash = false;
    for (size_t i = 2 + g; i < L->n; i++) {
        const char *a = L->w[i];
        if (!dashdash && strcmp(a, "--") == 0)
            dashdash = true;
        else if (!dashdash && a[0] == '-' && a[1] != '\0')
            tok_word(&t, "git", "push", a);
        else
            tok_refspec(&t, "git", "push", a);
    }
    bool f =
        t.oom || tok_has(&t, "--force") || git_config_forces(L, g); /* out of memory: fail closed */
    tok_free(&t);
    return f;
}

/* The layer's canonical texts, rendered once, when a rule first needs them
 * (most commands of a long script have no rule keyed by their name). */
static bool lctx_render(lctx *c)
{
    if (c->rendered)
        return true;
    agti_buf *t = &c->scratch[0], *pt = &c->scratch[1];
    agti_buf_truncate(t, 0);
    agti_buf_truncate(pt, 0);
    render(t, c->L->w, c->L->n);
    if (c->path != NULL) {
        put_word(pt, c->path);
        if (c->L->n > 1) {
            agti_buf_putc(pt, ' ');
            render(pt, c->L->w + 1, c->L->n - 1);
        }
    }
    if (t->oom || pt->oom)
        return false;
    c->text = agti_buf_cstr(t);
    c->ptext = c->path ? agti_buf_cstr(pt) : NULL;
    c->rendered = true;
    return true;
}

/* Whether an allow rule's pattern has a wildcard (`*`, or the `x:*` form):
 * such a rule does not name the arguments it covers. */
static bool rule_has_wildcard(const agti_rule *r)
{
    if (r->colon)
        return true;
    for (const char *p = r->cpat; p != NULL && *p; p++) {
        if (*p == '\\' && p[1] == '*')
            p++;
        else if (*p == '*')
            return true;
    }
    return false;
}

static int allow_rank(const agti_rule *r)
{
    return r->pattern == NULL ? 0 : rule_has_wildcard(r) ? 2 : 1;
}

static void check_rule(const agti_rule *r, void *ctx)
{
    lctx *c = ctx;
    hits *h = c->h;
    c->calls++;
    bool hit;
    if (r->pattern == NULL) {
        hit = true;
    } else if (!lctx_render(c)) {
        c->oom = true;
        return;
    } else {
        bool path_pat = r->key != NULL && strchr(r->key, '/') != NULL;
        if (path_pat)
            hit = c->ptext != NULL && text_match(r, c->ptext);
        else
            hit = text_match(r, c->text) && (r->kind != AGT_RULE_ALLOW || c->path_ok);
        if (hit && r->kind == AGT_RULE_ALLOW && r->bash != NULL && !r->bash->names_force) {
            if (c->push_force < 0)
                c->push_force = push_forces(c->L);
            hit = !c->push_force;
        }
        if (!hit && r->kind != AGT_RULE_ALLOW && r->bash != NULL && !path_pat)
            hit = structured_match(r->bash, c->L);
        if (!hit && r->kind != AGT_RULE_ALLOW && c->dyn && r->bash != NULL && !path_pat &&
            maybe_match(r->bash, c->L)) {
            if (h->maybe == NULL || r->kind > h->maybe->kind)
                h->maybe = r;
            return;
        }
    }
    if (!hit)
        return;
    const agti_rule **slot = r->kind == AGT_RULE_DENY  ? &h->deny
                             : r->kind == AGT_RULE_ASK ? &h->ask
                                                       : &h->allow;
    /* of the allow rules, the one that names the most: no pattern, then
     * one without a wildcard (a wildcard does not reach sensitive files) */
    if (*slot == NULL || (r->kind == AGT_RULE_ALLOW && allow_rank(r) < allow_rank(*slot)))
        *slot = r;
}

static bool system_path(const char *path)
{
    static const char *const dirs[] = {
        "/bin/", "/usr/bin/", "/usr/local/bin/", "/sbin/", "/usr/sbin/", "/usr/local/sbin/", NULL};
    const char *slash = strrchr(path, '/');
    for (size_t i = 0; dirs[i]; i++) {
        size_t n = strlen(dirs[i]);
        if ((size_t)(slash - path) + 1 == n && strncmp(path, dirs[i], n) == 0)
            return true;
    }
    return false;
}

/* A set of strings (borrowed), open addressing in a power-of-two table. */
typedef struct sset {
    const char **v;
    size_t cap, n;
} sset;

static uint64_t fnv(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The slot of s, or the empty one where it would go (set->cap > 0). */
static size_t sset_slot(const sset *set, const char *s)
{
    size_t j = (size_t)(fnv(s) & (set->cap - 1));
    while (set->v[j] != NULL && strcmp(set->v[j], s) != 0)
        j = (j + 1) & (set->cap - 1);
    return j;
}

/* Room for one more (the table at most half full); false when out of
 * memory. */
static bool sset_room(sset *set)
{
    if (set->n * 2 < set->cap)
        return true;
    size_t cap = set->cap ? set->cap * 2 : 64;
    const char **v = calloc(cap, sizeof *v);
    if (v == NULL)
        return false;
    sset bigger = {v, cap, set->n};
    for (size_t i = 0; i < set->cap; i++)
        if (set->v[i] != NULL)
            v[sset_slot(&bigger, set->v[i])] = set->v[i];
    free(set->v);
    *set = bigger;
    return true;
}

/* What one check keeps across its layers: two buffers for the canonical
 * texts, and the Bash rules under the empty key (patterns with no command
 * word to index them), looked up once instead of once per layer. */
typedef struct jctx {
    agti_buf scratch[2];
    agti_rule_range bash; /* where the Bash rules are in the index */
    const agti_rule **generic;
    size_t ngeneric, capgeneric;
    /* Command words no Bash rule is keyed by: most words of a long script
     * have no rule, and each look-up in the index is a binary search over
     * every Bash rule (with 400 rules, a tenth of a 100 KB script's
     * check). The rules do not change during a check; the words outlive
     * it. */
    sset norule;
    const agti_sensitive *sens; /* the session's sensitive-file policy (NULL: built-in) */
    /* the folders the script changes to (cd, pushd), literal ones; a
     * relative file name may be below any of them when it runs */
    const char **cds;
    size_t ncds;
    bool cd_unknown; /* a cd to a folder only known when it runs (or cd -) */
    bool oom;
} jctx;

/* The rules of the index keyed by key, each given to check_rule. */
static void each_keyed(agti_ruleset *rs, jctx *j, const char *key, lctx *c)
{
    if (j->norule.cap > 0 && j->norule.v[sset_slot(&j->norule, key)] != NULL)
        return;
    size_t before = c->calls;
    agti_ruleset_each_key(rs, &j->bash, key, check_rule, c);
    if (c->calls == before && sset_room(&j->norule)) { /* out of memory: no shortcut */
        j->norule.v[sset_slot(&j->norule, key)] = key;
        j->norule.n++;
    }
}

static void collect_rule(const agti_rule *r, void *ctx)
{
    jctx *j = ctx;
    if (agti_grow(&j->generic, &j->capgeneric, j->ngeneric, sizeof *j->generic, 8) != AGT_OK) {
        j->oom = true;
        return;
    }
    j->generic[j->ngeneric++] = r;
}

/* The rules that match a layer. */
static int match_layer(agti_ruleset *rs, const layer *L, const char *path, hits *h, jctx *j)
{
    agti_buf *scratch = j->scratch;
    lctx c = {.L = L,
              .path = path,
              .scratch = scratch,
              .path_ok = path == NULL || system_path(path),
              .dyn = layer_dynamic(L),
              .push_force = -1,
              .h = h};
    for (size_t i = 0; i < j->ngeneric; i++) /* agti_ruleset_each(rs, "Bash", "", ...) */
        check_rule(j->generic[i], &c);
    if (L->n > 0)
        each_keyed(rs, j, L->w[0], &c);
    if (path != NULL)
        each_keyed(rs, j, path, &c);
    return c.oom ? agti_oom() : AGT_OK;
}

/* git's global options (-C dir, -c k=v, --no-pager, ...) before its
 * subcommand: the words without them, so `git -C x push --force` is a
 * `git push --force`. Returns the number of words skipped (0: none). */
static size_t git_globals(const layer *L)
{
    if (L->n < 2 || strcmp(L->w[0], "git") != 0)
        return 0;
    size_t i = 1;
    while (i < L->n && L->w[i][0] == '-') {
        const char *a = L->w[i];
        if (strcmp(a, "-C") == 0 || strcmp(a, "-c") == 0 || strcmp(a, "--git-dir") == 0 ||
            strcmp(a, "--work-tree") == 0 || strcmp(a, "--namespace") == 0 ||
            strcmp(a, "--config-env") == 0)
            i += 2;
        else
            i++;
    }
    return i > 1 && i < L->n ? i - 1 : 0;
}

/* Whether git's global options (the g words after "git") set a push
 * refspec or mirroring for a remote (-c remote.origin.push=+main:main,
 * --config-env=remote.origin.mirror=V): a push then forces or deletes
 * without saying so on its own command line. */
static bool git_config_forces(const layer *L, size_t g)
{
    for (size_t i = 1; i < 1 + g && i < L->n; i++) {
        const char *kv = NULL;
        if ((strcmp(L->w[i], "-c") == 0 || strcmp(L->w[i], "--config-env") == 0) && i + 1 < L->n)
            kv = L->w[++i];
        else if (strncmp(L->w[i], "--config-env=", 13) == 0)
            kv = L->w[i] + 13;
        if (kv == NULL)
            continue;
        size_t k = strcspn(kv, "=");
        if (k >= 7 && strncasecmp(kv, "remote.", 7) == 0 &&
            ((k >= 12 && strncasecmp(kv + k - 5, ".push", 5) == 0) ||
             (k >= 14 && strncasecmp(kv + k - 7, ".mirror", 7) == 0)))
            return true;
    }
    return false;
}

/* ---- suggestions --------------------------------------------------------- */

static bool plain_word(const char *w)
{
    if (*w == '\0' || w[0] == '-')
        return false;
    for (; *w; w++) {
        char c = *w;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.' || c == ':'))
            return false;
    }
    return true;
}

static void put_rule_word(agti_buf *b, const char *w)
{
    agti_buf tmp = AGTI_BUF_INIT;
    put_word(&tmp, w);
    for (const char *p = agti_buf_cstr(&tmp); *p; p++) {
        if (*p == '*' || (*p == '\\' && p[1] == '*'))
            agti_buf_putc(b, '\\');
        agti_buf_putc(b, *p);
    }
    agti_buf_free(&tmp);
}

/* python, python3, python3.12 */
static bool is_python(const char *w)
{
    if (strncmp(w, "python", 6) != 0)
        return false;
    for (w += 6; *w; w++)
        if (!((*w >= '0' && *w <= '9') || *w == '.'))
            return false;
    return true;
}

/* How many words of an interpreter's or runner's command name what it runs:
 * `python3 -m pytest`, `node x.js`, `java -jar a.jar`, `go run ./cmd`,
 * `cargo run --bin x`, `uv run pytest`, `npx tsc`. 0: not a runner; n: the
 * whole command is code (-c, -e): the rule is the command itself. */
static size_t runner_words(char *const *w, size_t n, int depth)
{
    const char *p = w[0];
    bool py = is_python(p);
    const char *code = NULL, *target = NULL, *withval = "";
    if (py) {
        code = "|-c|";
        target = "|-m|";
        withval = "|-W|-X|";
    } else if (strcmp(p, "node") == 0 || strcmp(p, "nodejs") == 0) {
        code = "|-e|--eval|-p|--print|";
        withval = "|-r|--require|--import|";
    } else if (strcmp(p, "perl") == 0 || strcmp(p, "ruby") == 0) {
        code = "|-e|-E|";
        withval = "|-I|";
    } else if (strcmp(p, "bash") == 0 || strcmp(p, "sh") == 0) {
        code = "|-c|";
        withval = "|-o|-O|--rcfile|--init-file|";
    } else if (strcmp(p, "java") == 0) {
        target = "|-jar|";
        withval = "|-cp|-classpath|--class-path|-p|--module-path|-m|--module|";
    } else if (strcmp(p, "npx") == 0) {
        withval = "|-p|--package|";
    } else if ((strcmp(p, "go") == 0 || strcmp(p, "cargo") == 0) && n > 1 &&
               strcmp(w[1], "run") == 0) {
        size_t i = 2;
        if (strcmp(p, "cargo") == 0) {
            while (i < n && w[i][0] == '-' && strcmp(w[i], "--") != 0)
                i += (strcmp(w[i], "--bin") == 0 || strcmp(w[i], "-p") == 0 ||
                      strcmp(w[i], "--package") == 0 || strcmp(w[i], "--example") == 0)
                         ? 2
                         : 1;
            return i < n ? i : n;
        }
        while (i < n && w[i][0] == '-')
            i++;
        return i < n ? i + 1 : n;
    } else if (strcmp(p, "uv") == 0 && n > 1 && strcmp(w[1], "run") == 0) {
        size_t i = 2;
        while (i < n && w[i][0] == '-')
            i += (strcmp(w[i], "--with") == 0 || strcmp(w[i], "--python") == 0 ||
                  strcmp(w[i], "-p") == 0 || strcmp(w[i], "--directory") == 0)
                     ? 2
                     : 1;
        if (i >= n)
            return n;
        size_t inner = depth < 2 ? runner_words(w + i, n - i, depth + 1) : 0;
        return i + (inner ? inner : 1);
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        char key[64];
        snprintf(key, sizeof key, "|%s|", w[i]);
        if (code && strstr(code, key))
            return n;
        if (target && strstr(target, key))
            return i + 2 <= n ? i + 2 : n;
        if (w[i][0] != '-')
            return i + 1;
        if (strstr(withval, key))
            i++;
    }
    return n;
}

/* The session rule for one command: as narrow as the command allows; the
 * exact command when exact (one whose options run code: a wildcard rule
 * would not cover it again). */
static char *suggest_words(char *const *w, size_t n, bool exact)
{
    if (n == 0)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (strpbrk(w[i], "\n\r") != NULL || !agti_utf8_valid(w[i], strlen(w[i])))
            n = i; /* a rule is one line of UTF-8 text: stop before such a word */
    if (n == 0)
        return NULL;
    size_t keep = exact ? n : runner_words(w, n, 0);
    if (keep == 0)
        keep = n > 1 && plain_word(w[1]) ? 2 : 1;
    if (keep > n)
        keep = n;
    agti_buf b = AGTI_BUF_INIT;
    agti_buf_puts(&b, "Bash(");
    for (size_t i = 0; i < keep; i++) {
        if (i)
            agti_buf_putc(&b, ' ');
        put_rule_word(&b, w[i]);
    }
    agti_buf_puts(&b, keep < n ? " *)" : ")");
    return agti_buf_detach(&b);
}

/* ---- the verdict ----------------------------------------------------------- */

static const char *closed_reason(unsigned f)
{
    if (f & AGTI_SHX_DYNAMIC_NAME)
        return "its command name is only known when it runs";
    if ((f & AGTI_SHX_EVAL_DYNAMIC) && (f & AGTI_SHX_SYNTAX))
        return "it runs a string (sh -c, eval) that does not parse as shell";
    if (f & AGTI_SHX_EVAL_DYNAMIC)
        return "it runs a string (sh -c, eval) that is only known when it runs";
    if (f & AGTI_SHX_SOURCE)
        return "it runs the commands of a file (source or .)";
    if (f & AGTI_SHX_SHELL_STDIN)
        return "it feeds a script to a shell or interpreter on its input";
    if (f & AGTI_SHX_ARITH)
        return "it evaluates the value of a variable as code (arithmetic, an array subscript, a "
               "substring offset, indirection or prompt expansion), which runs any command "
               "substitution the value holds (literal numbers are fine: count with `for i in "
               "$(seq 1 10)` or `seq`, not with i=$((i+1)))";
    if (f & AGTI_SHX_ENV_FUNC)
        return "it passes a shell function through the environment (BASH_FUNC_...), whose body "
               "a shell it starts runs unchecked";
    if (f & AGTI_SHX_WRAPPER_UNKNOWN)
        return "it has wrapper options that cannot be read";
    return "what it runs is only known when it runs";
}

static char *exec_text(const agti_sh_exec *e)
{
    agti_buf b = AGTI_BUF_INIT;
    render_shown(&b, e->written, e->writtenc);
    if (e->writtenc == 0)
        agti_buf_puts(&b, "(redirection)");
    return agti_buf_detach(&b);
}

static int set_once(char **slot, char *text)
{
    if (text == NULL)
        return agti_oom();
    if (*slot == NULL)
        *slot = text;
    else
        free(text);
    return AGT_OK;
}

static bool needs_allow_too(const char *w)
{
    return strcmp(w, "sudo") == 0 || strcmp(w, "doas") == 0 || strcmp(w, "su") == 0 ||
           strcmp(w, "runuser") == 0;
}

/* What the verdict keeps of a Bash command for the details built only when
 * the call asks (agti_verdict_details). */
typedef struct unc {
    size_t exec;       /* index of the exec no allow rule covers */
    size_t priv_stage; /* a privilege wrapper's stage not covered, or SIZE_MAX */
    bool inner;        /* the command as it runs is not covered */
} unc;

struct agti_bash_state {
    agti_sh_script *script;
    agti_sh_analysis *analysis;
    unc *v;
    size_t n, cap;
};

static void state_free(struct agti_bash_state *st)
{
    if (st == NULL)
        return;
    agti_sh_analysis_free(st->analysis);
    agti_sh_free(st->script);
    free(st->v);
    free(st);
}

static int state_add(struct agti_bash_state *st, size_t exec, size_t priv, bool inner)
{
    if (agti_grow(&st->v, &st->cap, st->n, sizeof *st->v, 8) != AGT_OK)
        return AGT_ENOMEM;
    st->v[st->n++] = (unc){exec, priv, inner};
    return AGT_OK;
}

/* Variables whose value the system sets to a folder or a name that is not
 * a file of the workspace: an argument built from them is judged by its
 * written rest (`"$HOME/.ssh/id_rsa"` names a key, `$HOME` nothing). */
static bool known_var(const char *v, size_t *len)
{
    static const char *const names[] = {"HOME",     "PWD", "OLDPWD", "USER", "LOGNAME", "TMPDIR",
                                        "HOSTNAME", "UID", "EUID",   "PPID", NULL};
    bool brace = v[1] == '{';
    const char *n = v + (brace ? 2 : 1);
    if (!brace && n[0] != '\0' && strchr("?$#!-", n[0]) != NULL) {
        *len = 2;
        return true;
    }
    for (size_t i = 0; names[i]; i++) {
        size_t m = strlen(names[i]);
        if (strncmp(n, names[i], m) != 0)
            continue;
        if (brace && n[m] == '}') {
            *len = m + 3;
            return true;
        }
        char c = n[m];
        if (!brace && !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                        (c >= '0' && c <= '9') || c == '_')) {
            *len = m + 1;
            return true;
        }
    }
    return false;
}

/* Whether the file a word names can only be known when it runs: its file
 * name holds an expansion (other than of a known_var), a glob or a brace
 * expansion. The rest (a folder from $HOME) is judged as written. */
static bool name_unknown(const char *w, unsigned f)
{
    if (!(f & WORD_DYN))
        return false;
    if (f & (AGTI_SHW_GLOB | AGTI_SHW_BRACE))
        return true;
    for (size_t i = 0; w[i];) {
        size_t n;
        if (w[i] == '$' && known_var(w + i, &n)) {
            i += n;
            continue;
        }
        if (w[i] == '$' || w[i] == '`')
            return true;
        i++;
    }
    return false;
}

/* The sensitive file a word names, if any: the word, its value after `=`
 * (--file=.env), after each `:` (HEAD:.env, host:.env), after `@`
 * (curl -d @.env), after a short option letter (-f.env). */
/* path with "//" collapsed and "." segments dropped ("./.aws//x" ->
 * ".aws/x"), in buf (cap bytes); NULL when it does not fit. The file
 * tools clean their paths the same way before judging them. */
static const char *lexical_clean(const char *path, char *buf, size_t cap)
{
    size_t o = 0;
    const char *p = path;
    if (*p == '/') {
        buf[o++] = '/';
        while (*p == '/')
            p++;
    }
    while (*p) {
        const char *seg = p;
        while (*p && *p != '/')
            p++;
        size_t n = (size_t)(p - seg);
        while (*p == '/')
            p++;
        if (n == 1 && seg[0] == '.')
            continue;
        if (o + n + 2 > cap)
            return NULL;
        if (o > 0 && buf[o - 1] != '/')
            buf[o++] = '/';
        memcpy(buf + o, seg, n);
        o += n;
    }
    if (o == 0)
        buf[o++] = '.';
    buf[o] = '\0';
    return buf;
}

/* Whether a file name matches the policy as written, cleaned, or below a
 * folder the script changes to (cd .aws && cat credentials). */
static bool name_sensitive(const agti_sensitive *pol, const char *f, const jctx *j,
                           const char **why)
{
    if (agti_sensitive_match(pol, f, why))
        return true;
    char buf[4096], joined[4096];
    const char *c = lexical_clean(f, buf, sizeof buf);
    if (c == NULL)
        return true; /* too long to clean: fail closed */
    if (strcmp(c, f) != 0 && agti_sensitive_match(pol, c, why))
        return true;
    if (c[0] == '/' || c[0] == '~' || j == NULL)
        return false;
    for (size_t i = 0; i < j->ncds; i++) {
        int n = snprintf(joined, sizeof joined, "%s/%s", j->cds[i], c);
        if (n < 0 || (size_t)n >= sizeof joined)
            return true;
        const char *jc = lexical_clean(joined, buf, sizeof buf);
        if (jc == NULL || agti_sensitive_match(pol, jc, why))
            return true;
    }
    return false;
}

static bool word_sensitive(const agti_sensitive *pol, const char *w, const char **name,
                           const char **why, const jctx *j)
{
    const char *cand[64];
    size_t nc = 0;
    cand[nc++] = w;
    if (w[0] == '@')
        cand[nc++] = w + 1;
    if (w[0] == '-' && w[1] != '-' && w[1] != '\0' && w[2] != '\0')
        cand[nc++] = w + 2;
    const char *eq = strchr(w, '=');
    if (eq != NULL)
        cand[nc++] = eq + 1;
    for (const char *p = w; (p = strchr(p, ':')) != NULL && nc < 64; p++)
        cand[nc++] = p + 1;
    for (size_t i = 0; i < nc; i++)
        if (cand[i][0] != '\0' && name_sensitive(pol, cand[i], j, why)) {
            *name = cand[i];
            return true;
        }
    return false;
}

/* Why a wildcard allow rule does not cover exec e, which names a file that
 * is sensitive or that may be (malloc'd), or NULL: none. *oom on failure. */
static char *sensitive_reason(const agti_sensitive *pol, const agti_sh_exec *e, const jctx *j,
                              bool *oom)
{
    /* builtins that open no file their arguments name (they print them) */
    static const char *const no_files[] = {"echo", "printf", "true", "false", ":", NULL};
    for (size_t i = 0; e->argc > 0 && no_files[i]; i++)
        if (strcmp(e->argv[0], no_files[i]) == 0)
            return NULL;
    const char *name = NULL, *why = NULL;
    bool unknown = false;
    for (size_t i = 1; i < e->argc && name == NULL && !unknown; i++) {
        size_t at = (size_t)(e->argv - e->written) + i;
        if (name_unknown(e->argv[i], e->wflags[at]) ||
            (j != NULL && j->cd_unknown && e->argv[i][0] != '-' && e->argv[i][0] != '/'))
            unknown = true;
        else
            word_sensitive(pol, e->argv[i], &name, &why, j);
    }
    const agti_sh_cmd *c = e->cmd;
    for (size_t i = 0; c != NULL && i < c->nredirs && name == NULL && !unknown; i++) {
        const agti_sh_redir *r = &c->redirs[i];
        if (r->op == AGTI_SHR_HEREDOC || r->op == AGTI_SHR_HEREDOC_TAB ||
            r->op == AGTI_SHR_HERESTRING || r->target.value == NULL)
            continue;
        if (name_unknown(r->target.value, r->target.flags))
            unknown = true;
        else
            word_sensitive(pol, r->target.value, &name, &why, j);
    }
    if (name == NULL && !unknown)
        return NULL;
    char *t = exec_text(e);
    char *out = t == NULL ? NULL
                : unknown
                    ? agti_aprintf("`%s` names a file that is only known when it runs, which may "
                                   "be a sensitive file: an allow rule with a wildcard does not "
                                   "cover it",
                                   t)
                    : agti_aprintf("`%s` names a sensitive file (%s: %s), which an allow rule "
                                   "with a wildcard does not cover",
                                   t, name, why ? why : "sensitive");
    free(t);
    *oom = out == NULL;
    return out;
}

static size_t codeopt_count(const agti_sh_codeopt *v, size_t n, const agti_sh_codeopt *o)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += v[i].why == o->why && strcmp(v[i].detail, o->detail) == 0;
    return k;
}

/* Why an allow rule with a wildcard does not cover exec e, whose options
 * make its program run code or open a file an argument chooses
 * (AGTI_SHX_CODE_OPT): the first such option the rule's words do not spell
 * as many times as the command gives it (make -f build.mk -f evil under
 * Bash(make -f build.mk *)), malloc'd; NULL: it spells them all. */
static char *codeopt_reason(const agti_rule *r, const agti_sh_exec *e, bool *oom)
{
    agti_sh_codeopt have[MAX_CODEOPTS];
    size_t at = (size_t)(e->argv - e->written);
    bool omem = false;
    size_t n =
        agti_sh_code_options(e->argv, e->wflags + at, e->argc, false, have, MAX_CODEOPTS, &omem);
    const agti_sh_codeopt *miss = NULL;
    const struct agti_bash_pat *bp = r->bash;
    for (size_t i = 0; i < n && miss == NULL; i++) {
        if (i >= MAX_CODEOPTS || omem || bp == NULL) {
            miss = &have[0];
            break;
        }
        if (codeopt_count(have, n, &have[i]) > codeopt_count(bp->codeopts, bp->ncodeopts, &have[i]))
            miss = &have[i];
    }
    if (miss == NULL && n > 0)
        return NULL;
    if (n == 0)
        return NULL; /* (the analysis saw one: not reached) */
    char *t = exec_text(e);
    char *out =
        t ? agti_aprintf("`%s` runs code, or writes or reads a file, that its arguments choose "
                         "(%s), which an allow rule with a wildcard covers only when it spells "
                         "that option",
                         t, miss->why)
          : NULL;
    free(t);
    *oom = out == NULL;
    return out;
}

/* Why an allow rule with a pattern does not cover exec e although its
 * words match (malloc'd), or NULL. */
static char *allow_blocked(const agti_sensitive *pol, const agti_rule *r, const agti_sh_exec *e,
                           const jctx *j, bool *oom)
{
    *oom = false;
    const char *what = NULL;
    if (e->flags & AGTI_SHX_ENV_CODE)
        what = "runs where the command sets a variable that changes which program or code runs "
               "(PATH, LD_PRELOAD, BASH_ENV, GIT_*, ...: docs/session.md)";
    else if (e->flags & AGTI_SHX_MORE_ARGS)
        what = "gets more arguments when it runs (xargs, parallel, find -exec ... {} +)";
    if (what == NULL && rule_has_wildcard(r) && (e->flags & AGTI_SHX_CODE_OPT) && e->argc > 0) {
        char *why = codeopt_reason(r, e, oom);
        if (why != NULL || *oom)
            return why;
    }
    if (what == NULL)
        return rule_has_wildcard(r) ? sensitive_reason(pol, e, j, oom) : NULL;
    char *t = exec_text(e);
    char *out =
        t ? agti_aprintf("`%s` %s, which an allow rule with a pattern does not cover", t, what)
          : NULL;
    free(t);
    *oom = out == NULL;
    return out;
}

/* One exec: deny/ask on every stage, allow on the command as it runs and on
 * any privilege wrapper around it. */
static int judge_exec(agti_ruleset *rs, const agti_sh_exec *e, size_t idx, agti_verdict *v,
                      struct agti_bash_state *st, const agti_rule **first_allow, bool *all_allowed,
                      size_t *needing, jctx *j)
{
    int rc = AGT_OK;
    if (e->argc == 0 && !(e->flags & (AGTI_SHX_WRITES | AGTI_SHX_ARITH | AGTI_SHX_FAIL_CLOSED))) {
        /* redirections only, reading ($(<f)): no rule to match, and nothing
         * to approve, unless what it reads is a sensitive file (or may be):
         * echo "$(<.env)" printed .env under Bash(echo *) */
        bool oom = false;
        char *why = sensitive_reason(j->sens, e, j, &oom);
        if (oom)
            return agti_oom();
        if (why == NULL)
            return AGT_OK;
        rc = set_once(&v->unallowed, why);
        if (rc != AGT_OK)
            return rc;
        (*needing)++;
        *all_allowed = false;
        return state_add(st, idx, SIZE_MAX, true);
    }
    bool inner_allowed = false;
    size_t priv = SIZE_MAX;
    const agti_rule *allow_rule = NULL;
    for (size_t k = 0; k < e->nstages && rc == AGT_OK; k++) {
        size_t at = e->stages[k];
        bool inner = k + 1 == e->nstages;
        layer L = {e->written + at, e->wflags + at, e->writtenc - at,
                   inner && (e->flags & AGTI_SHX_MORE_ARGS), inner};
        hits h = {0};
        rc = match_layer(rs, &L, inner ? e->path : NULL, &h, j);
        size_t g = rc == AGT_OK ? git_globals(&L) : 0;
        /* a git push after the script changed git's environment
         * (GIT_CONFIG_COUNT/KEY_n/VALUE_n, GIT_CONFIG_PARAMETERS, HOME, ...)
         * may be configured to force or mirror, as with -c: for deny and ask
         * rules it is a --force (it forced past Bash(git push --force *)) */
        bool envf = rc == AGT_OK && (e->flags & AGTI_SHX_ENV_CODE) && is_git_push(&L, g);
        if (g > 0 || envf) {
            /* git without its global options, for deny and ask rules */
            /* a -c remote.X.push=+... makes the push a force: one more word */
            bool gf = git_config_forces(&L, g) || envf;
            char **w = malloc((L.n - g + gf) * sizeof *w);
            unsigned *f = malloc((L.n - g + gf) * sizeof *f);
            if (w == NULL || f == NULL) {
                rc = agti_oom();
            } else {
                w[0] = L.w[0];
                f[0] = L.f[0];
                memcpy(w + 1, L.w + 1 + g, (L.n - 1 - g) * sizeof *w);
                memcpy(f + 1, L.f + 1 + g, (L.n - 1 - g) * sizeof *f);
                if (gf) {
                    w[L.n - g] = (char *)(uintptr_t) "--force";
                    f[L.n - g] = 0;
                }
                layer G = {w, f, L.n - g + gf, L.more, inner};
                hits gh = {0};
                rc = match_layer(rs, &G, NULL, &gh, j);
                if (h.deny == NULL)
                    h.deny = gh.deny;
                if (h.ask == NULL)
                    h.ask = gh.ask;
                if (h.maybe == NULL || (gh.maybe && gh.maybe->kind > h.maybe->kind))
                    h.maybe = gh.maybe ? gh.maybe : h.maybe;
            }
            free(w);
            free(f);
        }
        if (rc != AGT_OK)
            break;
        if (h.deny != NULL) {
            v->kind = AGT_RULE_DENY;
            v->rule = h.deny;
            return AGT_OK;
        }
        if (h.maybe != NULL && v->closed == NULL) {
            char *t = exec_text(e);
            rc = set_once(&v->closed,
                          t ? agti_aprintf("`%s` could match the %s rule '%s' once its words "
                                           "are known, which happens only when it runs",
                                           t, h.maybe->kind == AGT_RULE_DENY ? "deny" : "ask",
                                           h.maybe->text)
                            : NULL);
            free(t);
        }
        if (h.ask != NULL && v->ask == NULL)
            v->ask = h.ask;
        bool allowed =
            h.allow != NULL && (h.allow->pattern == NULL || !(e->flags & AGTI_SHX_WRITES));
        if (allowed && h.allow->pattern != NULL) {
            bool oom = false;
            char *why = allow_blocked(j->sens, h.allow, e, j, &oom);
            if (oom)
                return agti_oom();
            if (why != NULL) {
                allowed = false;
                rc = set_once(&v->unallowed, why);
            }
        }
        if (inner) {
            inner_allowed = allowed;
            if (allowed)
                allow_rule = h.allow;
        } else if (L.n > 0 && needs_allow_too(L.w[0]) && !allowed && priv == SIZE_MAX) {
            priv = k;
        }
    }
    if (rc != AGT_OK)
        return rc;
    if (e->flags & AGTI_SHX_FAIL_CLOSED) {
        char *t = exec_text(e);
        rc = set_once(&v->closed, t ? agti_aprintf("`%s`: %s", t, closed_reason(e->flags)) : NULL);
        free(t);
        if (rc != AGT_OK)
            return rc;
    }
    bool container =
        (e->flags & AGTI_SHX_CONTAINER) && !(e->argc > 0 && needs_allow_too(e->argv[0]));
    if (container)
        return AGT_OK;
    (*needing)++;
    if (inner_allowed && priv == SIZE_MAX) {
        if (*first_allow == NULL)
            *first_allow = allow_rule;
        return AGT_OK;
    }
    *all_allowed = false;
    return state_add(st, idx, priv, !inner_allowed);
}

/* Adds s (owned by the caller's JSON array) unless present. */
static int sset_add(sset *set, json_t *arr, char *s)
{
    if (s == NULL)
        return agti_oom();
    if (!sset_room(set)) {
        free(s);
        return agti_oom();
    }
    size_t j = sset_slot(set, s);
    if (set->v[j] != NULL) {
        free(s);
        return AGT_OK;
    }
    json_t *js = json_string(s);
    free(s);
    if (js == NULL || json_array_append_new(arr, js) != 0)
        return agti_oom();
    set->v[j] = json_string_value(js);
    set->n++;
    return AGT_OK;
}

int agti_verdict_details(agti_verdict *v)
{
    struct agti_bash_state *st = v->bash;
    if (st == NULL || v->uncovered != NULL)
        return AGT_OK;
    v->uncovered = json_array();
    v->suggest = json_array();
    if (v->uncovered == NULL || v->suggest == NULL)
        return agti_oom();
    sset us = {0}, ss = {0};
    int rc = AGT_OK;
    for (size_t i = 0; rc == AGT_OK && i < st->n; i++) {
        const agti_sh_exec *e = agti_sh_exec_at(st->analysis, st->v[i].exec);
        if (st->v[i].inner && e->argc > 0) {
            agti_buf arg = AGTI_BUF_INIT;
            render_shown(&arg, e->argv, e->argc);
            rc = sset_add(&us, v->uncovered, agti_buf_detach(&arg));
            if (rc == AGT_OK && !(e->flags & (AGTI_SHX_WRITES | AGTI_SHX_FAIL_CLOSED))) {
                char *sug = suggest_words(e->argv, e->argc, (e->flags & AGTI_SHX_CODE_OPT) != 0);
                if (sug != NULL)
                    rc = sset_add(&ss, v->suggest, sug);
            }
        } else {
            rc = sset_add(&us, v->uncovered, exec_text(e));
        }
        size_t k = st->v[i].priv_stage;
        if (rc == AGT_OK && k != SIZE_MAX && !(e->flags & AGTI_SHX_WRITES)) {
            size_t at = e->stages[k];
            char *sug = suggest_words(e->written + at, e->writtenc - at,
                                      (e->flags & AGTI_SHX_CODE_OPT) != 0);
            if (sug != NULL)
                rc = sset_add(&ss, v->suggest, sug);
        }
    }
    free(us.v);
    free(ss.v);
    return rc;
}

/* The folders the script changes to: the literal operand of every cd and
 * pushd (the first word not an option); a cd with none is $HOME ("~"), and
 * one whose folder is only known when it runs (cd "$D", cd -, popd) makes
 * every relative file name unknown for the sensitive-file check. */
static int collect_cds(const agti_sh_analysis *a, jctx *j)
{
    for (size_t i = 0; i < agti_sh_nexecs(a); i++) {
        const agti_sh_exec *e = agti_sh_exec_at(a, i);
        if (e->argc == 0 || (strcmp(e->argv[0], "cd") != 0 && strcmp(e->argv[0], "pushd") != 0 &&
                             strcmp(e->argv[0], "popd") != 0))
            continue;
        if (strcmp(e->argv[0], "popd") == 0) {
            j->cd_unknown = true;
            continue;
        }
        const char *dir = "~";
        for (size_t k = 1; k < e->argc; k++) {
            size_t at = (size_t)(e->argv - e->written) + k;
            if (name_unknown(e->argv[k], e->wflags[at]) || strcmp(e->argv[k], "-") == 0) {
                j->cd_unknown = true;
                dir = NULL;
                break;
            }
            if (e->argv[k][0] == '-' && strcmp(e->argv[k], "--") != 0)
                continue;
            if (strcmp(e->argv[k], "--") == 0)
                continue;
            dir = e->argv[k];
            break;
        }
        if (dir == NULL)
            continue;
        const char **g = realloc(j->cds, (j->ncds + 1) * sizeof *g);
        if (g == NULL)
            return agti_oom();
        j->cds = g;
        j->cds[j->ncds++] = dir;
    }
    return AGT_OK;
}

int agti_bash_evaluate(agti_ruleset *rs, const struct agti_sensitive *sens, const char *command,
                       agti_verdict *v)
{
    size_t len = strlen(command);
    v->kind = -1;
    if (len > AGTI_SH_MAX_INPUT) {
        v->refused = agti_aprintf("the command is %zu bytes long, over the %u-byte (1 MiB) limit "
                                  "of the approval check; split it into smaller commands",
                                  len, AGTI_SH_MAX_INPUT);
        return v->refused ? AGT_OK : agti_oom();
    }
    agti_sh_script *s = NULL;
    agti_sh_error err;
    memset(&err, 0, sizeof err);
    int rc = agti_sh_parse(command, len, &s, &err);
    if (rc == AGTI_SH_ENOMEM)
        return agti_oom();
    if (rc == AGTI_SH_ESYNTAX) {
        v->kind = AGT_RULE_ASK;
        v->closed = agti_aprintf("the command does not parse as shell (%s, at byte %zu), so "
                                 "what it runs cannot be checked",
                                 err.message, err.offset);
        return v->closed ? AGT_OK : agti_oom();
    }
    if (rc != AGTI_SH_OK) {
        v->refused = agti_aprintf("the command is over a limit of the approval check: %s; split "
                                  "it into smaller commands",
                                  err.message);
        return v->refused ? AGT_OK : agti_oom();
    }
    agti_sh_analysis *a = NULL;
    rc = agti_sh_analyze(s, &a, &err);
    if (rc == AGTI_SH_ENOMEM) {
        agti_sh_free(s);
        return agti_oom();
    }
    if (rc != AGTI_SH_OK) {
        agti_sh_free(s);
        v->refused = agti_aprintf("the command is over a limit of the approval check: %s; split "
                                  "it into smaller commands",
                                  err.message);
        return v->refused ? AGT_OK : agti_oom();
    }
    struct agti_bash_state *st = calloc(1, sizeof *st);
    if (st == NULL) {
        agti_sh_analysis_free(a);
        agti_sh_free(s);
        return agti_oom();
    }
    st->script = s;
    st->analysis = a;
    v->bash = st;
    const agti_rule *first_allow = NULL;
    bool all_allowed = true;
    size_t needing = 0;
    jctx j = {.scratch = {AGTI_BUF_INIT, AGTI_BUF_INIT}, .sens = sens};
    rc = collect_cds(a, &j);
    agti_ruleset_tool_range(rs, "Bash", &j.bash);
    agti_ruleset_each_key(rs, &j.bash, "", collect_rule, &j);
    if (j.oom)
        rc = agti_oom();
    for (size_t i = 0; rc == AGT_OK && i < agti_sh_nexecs(a); i++) {
        rc = judge_exec(rs, agti_sh_exec_at(a, i), i, v, st, &first_allow, &all_allowed, &needing,
                        &j);
        if (v->kind == AGT_RULE_DENY)
            break;
    }
    agti_buf_free(&j.scratch[0]);
    agti_buf_free(&j.scratch[1]);
    free(j.generic);
    free(j.norule.v);
    free(j.cds);
    v->ncommands = needing;
    if (rc != AGT_OK || v->kind == AGT_RULE_DENY)
        return rc;
    if (v->closed != NULL) {
        v->kind = AGT_RULE_ASK;
        v->rule = v->ask;
    } else if (v->ask != NULL) {
        v->kind = AGT_RULE_ASK;
        v->rule = v->ask;
    } else if (all_allowed && needing > 0) {
        v->kind = AGT_RULE_ALLOW;
        v->rule = first_allow;
    }
    return AGT_OK;
}

void agti_verdict_clear(agti_verdict *v)
{
    free(v->closed);
    free(v->unallowed);
    free(v->refused);
    json_decref(v->uncovered);
    json_decref(v->suggest);
    state_free(v->bash);
    memset(v, 0, sizeof *v);
    v->kind = -1;
}
