/* Internal: the approval policy of a session (rules, pending approvals,
 * approver, hooks, plan mode). Lives behind one pointer in struct agt_session
 * so the rest of the session state stays independent of it. */
#ifndef AGT_LIB_SESSION_POLICY_H
#define AGT_LIB_SESSION_POLICY_H

#include <jansson.h>
#include <stdbool.h>

#include "agenttools/session.h"
#include "dispatch/dispatch_internal.h"

struct agti_wm;
struct agti_glob;

/* What a rule's pattern is matched against. */
enum agti_subject {
    AGTI_SUBJ_NAME = 0,    /* name-only tools */
    AGTI_SUBJ_COMMAND = 1, /* Bash: each part of the command */
    AGTI_SUBJ_PATH = 2,    /* file tools: the normalised path */
    AGTI_SUBJ_TEXT = 3     /* Grep/Glob pattern, FetchURL url */
};

typedef struct agti_rule {
    char *text;    /* as given, trimmed */
    char *tool;    /* tool name */
    char *pattern; /* NULL: every call of the tool */
    char *key;     /* index key: literal first word / first path component; "" = any */
    int kind;      /* AGT_RULE_* */
    int subject;   /* enum agti_subject */
    bool session;  /* added by an approve-for-session answer */
    bool abs;      /* path pattern outside the root: matched against absolute paths */
    /* Quick rejection before the matcher runs: every subject the pattern
     * matches starts with pre (when pre_ok) and ends with suf. */
    const char *pre, *suf; /* point into pattern or the compiled glob text */
    size_t pre_len, suf_len;
    bool pre_ok;
    char *needle;    /* star patterns: the longest literal run, which must occur */
    bool cover_dirs; /* also try the parent folders (gitignore folder rules) */
    char *glob_text; /* the compiled path glob, for pre/suf */
    struct agti_glob *glob;
    struct agti_wm *wm;
    /* Bash: the pattern's words as canonical text (one space between words,
     * quoted as bash_rules.c renders a command), what `*` is matched on */
    char *cpat;
    bool colon;                 /* written `x:*`: x alone or x followed by words */
    struct agti_bash_pat *bash; /* the option-set form for deny and ask rules */
} agti_rule;

/* A rule list with a (tool, key) index rebuilt lazily after changes. */
typedef struct agti_ruleset {
    agti_rule **rules; /* in the order added */
    size_t n, cap;
    agti_rule **sorted; /* by (tool, key), for lookups */
    bool dirty;
} agti_ruleset;

typedef struct agti_pending {
    char *call_id;
    char *tool;
    char *args;      /* compact JSON */
    char *reason;    /* why it asks */
    char *suggested; /* NULL when none */
    char *folder;    /* a file tool's folder outside every root (outside.c), or NULL */
    bool folder_write;
} agti_pending;

typedef struct agti_policy {
    agti_ruleset rules;
    agti_pending *pending;
    size_t npending, cappending;
    agt_approver_fn approver;
    void *approver_payload;
    agt_hook_fn pre_hook, post_hook;
    void *pre_payload, *post_payload;
    int64_t hook_budget_ms;
    char *plan_file;          /* absolute; NULL until set or chosen */
    int mode_before_plan;     /* restored by an approved ExitPlanMode */
    const char *exit_reason;  /* the user's answer while ExitPlanMode runs (borrowed) */
    struct agti_subappr *sub; /* suspended calls, pending lister (subapproval.h); NULL: none */
} agti_policy;

/* ---- rules.c ---- */
/* Parses one rule; AGT_EINVALID with a message naming it. root: session root. */
int agti_rule_parse(const char *text, int kind, const char *root, agti_rule **out);
void agti_rule_free(agti_rule *r);
void agti_ruleset_clear(agti_ruleset *rs);
int agti_ruleset_add(agti_ruleset *rs, agti_rule *r); /* takes ownership (also on error) */
/* Whether any rule names this tool (cheap: a look-up in the index). */
bool agti_ruleset_has_tool(agti_ruleset *rs, const char *tool);
/* The subject kind of a tool name. */
int agti_rule_subject(const char *tool);

/* `*` matches any run of characters (slashes and spaces too), `\*` a star. */
bool agti_star_match(const char *pattern, const char *text);
/* Whether a COMMAND or TEXT rule's pattern matches text (affixes, then stars). */
bool agti_rule_text_match(const agti_rule *r, const char *text);
/* Calls fn for every rule of tool whose index key is key. */
void agti_ruleset_each(agti_ruleset *rs, const char *tool, const char *key,
                       void (*fn)(const agti_rule *r, void *ctx), void *ctx);
/* For many look-ups of one tool: where its rules are in the index.
 * agti_ruleset_each_key(rs, &range, key, ...) then calls fn as
 * agti_ruleset_each(rs, tool, key, ...) would, comparing keys only within
 * the range. Valid until a rule is added or removed. */
typedef struct agti_rule_range {
    const char *tool;
    size_t lo, hi;
    bool indexed; /* false: no index (out of memory), each_key scans every rule */
} agti_rule_range;
void agti_ruleset_tool_range(agti_ruleset *rs, const char *tool, agti_rule_range *out);
void agti_ruleset_each_key(agti_ruleset *rs, const agti_rule_range *range, const char *key,
                           void (*fn)(const agti_rule *r, void *ctx), void *ctx);

/* The strongest rule matching one subject: sets *hit (NULL: none). For a
 * path subject, rel is the root-relative path (NULL when outside the root)
 * and abs the absolute one. */
void agti_ruleset_match(agti_ruleset *rs, const char *tool, int subject, const char *text,
                        const char *abs, const agti_rule **hit);

/* What the rules say of a call. */
typedef struct agti_verdict {
    int kind;              /* AGT_RULE_* of the strongest verdict, -1 when no rule applies */
    const agti_rule *rule; /* the rule that decided (borrowed), may be NULL */
    const agti_rule *ask;  /* Bash: the first ask rule that matched a command */
    char *closed;          /* Bash: why the command cannot be decided (it asks, or is refused
                            * where nothing asks); kind is AGT_RULE_ASK then */
    char *refused;         /* Bash: over a limit of the check: refused in every mode */
    char *unallowed;       /* Bash: why an allow rule whose words match a command does not
                            * cover it (a sensitive file, PATH=..., xargs), or NULL */
    /* Bash, filled by agti_verdict_details (only a call that asks needs them): */
    json_t *uncovered;            /* the commands no allow rule covers (strings) */
    json_t *suggest;              /* the narrow session rules for them (strings) */
    struct agti_bash_state *bash; /* what the details are built from */
    size_t ncommands;             /* Bash: the commands an allow rule must cover */
} agti_verdict;

/* Evaluates a call into *v (cleared first; agti_verdict_clear frees it).
 * For Bash: every command the parsed script can run (bash_rules.c): deny
 * if a deny rule matches any, then refused/closed, ask if an ask rule
 * matches any, allow only if every command is allowed. AGT_OK or
 * AGT_ENOMEM. */
int agti_policy_evaluate(agt_session *s, const char *tool, json_t *args, agti_verdict *v);
void agti_verdict_clear(agti_verdict *v);
/* Builds v->uncovered and v->suggest of a Bash verdict (no-op otherwise, or
 * when built already). AGT_OK or AGT_ENOMEM. */
int agti_verdict_details(agti_verdict *v);

/* ---- bash_rules.c ---- */
struct agti_bash_pat;
/* Compiles r->pattern of a Bash rule (r->cpat, r->colon, r->bash). */
int agti_bash_compile(agti_rule *r);
void agti_bash_pat_free(struct agti_bash_pat *bp);
struct agti_sensitive;
/* The Bash part of agti_policy_evaluate; sens: the session's sensitive-file
 * policy (NULL: the built-in one), which a wildcard allow rule does not
 * reach into. */
int agti_bash_evaluate(agti_ruleset *rs, const struct agti_sensitive *sens, const char *command,
                       agti_verdict *v);

/* The root-relative normalised form of a path argument (NULL when it lies
 * outside the root), and the absolute one. Malloc'd. */
int agti_policy_path(const char *root, const char *path, char **rel, char **abs);
/* Checks path (absolute, or relative to the root) as the session's plan
 * file: inside the root it is looked up below the root's descriptor and
 * must not lead out through a symlink, be a symlink itself, a folder or a
 * special file; outside the root the same by name, and with restored (a
 * session document) it must lie in the plan folder
 * ($XDG_STATE_HOME/agenttools/plans or ~/.local/state/agenttools/plans).
 * *out: the absolute path to store (malloc'd). AGT_EDENIED, AGT_EINVAL,
 * AGT_ENOMEM. */
int agti_plan_path_check(agt_session *s, const char *path, bool restored, char **out);

/* ---- policy.c, gate.c, pending.c (see approval_internal.h) ---- */
agti_policy *agti_policy_new(void);
void agti_policy_free(agti_policy *p);
void agti_policy_drop_pending(agti_policy *p);
int agti_session_gate(void *ctx, agt_call *call, agt_result **out);
/* Builds an error result; AGT_EDENIED, or an error code on OOM. */
int agti_refuse(agt_call *call, int status, const char *text, agt_result **out);
/* Full dispatch with approval and hooks (used by agt_session_dispatch). */
int agti_session_dispatch(agt_session *s, const char *call_id, const char *tool,
                          const char *args_json, agt_result **out);

/* Deny rules and plan-mode limits (also after a hook rewrote the args). */
int agti_policy_recheck(agt_session *s, agt_call *call, agt_result **out);
/* After a pre-tool-use hook replaced the arguments: agti_policy_recheck,
 * and a Bash command it changed (before: the command it had) that an ask
 * rule matches or that cannot be decided is refused: nobody approved it. */
int agti_policy_recheck_rewrite(agt_session *s, agt_call *call, const char *before,
                                agt_result **out);
/* {"allow":[...],...} → rules appended to `into`; AGT_EINVALID names `where`. */
int agti_rules_from_json(agt_session *s, json_t *doc, agti_ruleset *into, const char *where);
/* The rule lists as {"allow","ask","deny","session"}; NULL on OOM. */
json_t *agti_rules_to_json(const agti_ruleset *rs);

/* ---- hooks.c ---- */
/* Runs the pre-tool-use hook: AGT_OK to go on (args may have been replaced),
 * AGT_EDENIED with an error result in *out, or an error code. note: appended
 * to when the hook failed; context: gets what the hook added for the model
 * (agt_hook_add_context), kept also when it denied the call. The caller
 * hands both to agti_hook_post with the result. */
int agti_hook_pre(agt_session *s, agt_call *call, agt_result **out, agti_buf *note,
                  agti_buf *context);
/* Runs the post-tool-use hook (when args is not NULL: the call ran) on a
 * finished result, then appends to its text, each after a blank line: the
 * pre-tool-use hook's context (may be NULL or empty), the post-tool-use
 * hook's own text, and the note. */
int agti_hook_post(agt_session *s, agt_result *r, const char *args, const agti_buf *context,
                   agti_buf *note);

/* ---- plan.c ---- */
/* Plan-mode restrictions and ExitPlanMode preconditions: AGT_OK, or
 * AGT_EDENIED with an error result in *out. */
int agti_plan_check(agt_session *s, agt_call *call, agt_result **out);
/* Whether tool changes one file named by its "path" argument (Write, Edit,
 * MultiEdit, NotebookEdit): in plan mode such a call may change only the
 * plan file, and one that does runs without asking (the plan check and the
 * gate's shortcut use this one list). */
bool agti_plan_file_tool(const char *tool);
/* The plan file, chosen (and its directory created) when none is set. */
int agti_plan_ensure_file(agt_session *s, const char **path);
/* Called on every mode change: remembers the mode before plan mode. */
void agti_plan_mode_changed(agt_session *s, int old_mode, int new_mode);
/* Whether options (a JSON array or NULL) obey the label rules; on failure
 * writes a message for the model into msg. */
bool agti_plan_options_ok(json_t *options, agti_buf *msg);

#endif
