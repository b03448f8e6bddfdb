/*
 * Private structures of the JSON Schema component: the compiled keyword tree
 * shared by compile.c and validate.c. Never installed.
 */
#ifndef AGT_LIB_SCHEMA_PRIV_H
#define AGT_LIB_SCHEMA_PRIV_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agenttools/schema.h"
#include "core/core.h"
#include "jv.h"

/* Deepest nesting of subschemas (and chains of $refs) a schema may have. */
#define AGTI_SCHEMA_MAX_NESTING 3000

/* Type bits for "type". */
enum {
    AGTI_T_NULL = 1u << 0,
    AGTI_T_BOOLEAN = 1u << 1,
    AGTI_T_OBJECT = 1u << 2,
    AGTI_T_ARRAY = 1u << 3,
    AGTI_T_NUMBER = 1u << 4,
    AGTI_T_STRING = 1u << 5,
    AGTI_T_INTEGER = 1u << 6
};

/* Formats that can be asserted. */
enum agti_format {
    AGTI_FMT_NONE = 0,
    AGTI_FMT_DATE_TIME,
    AGTI_FMT_DATE,
    AGTI_FMT_TIME,
    AGTI_FMT_EMAIL,
    AGTI_FMT_URI,
    AGTI_FMT_UUID,
    AGTI_FMT_IPV4,
    AGTI_FMT_IPV6,
    AGTI_FMT_DURATION,
    AGTI_FMT_HOSTNAME,
    AGTI_FMT_IDN_HOSTNAME,
    AGTI_FMT_IDN_EMAIL,
    AGTI_FMT_URI_REFERENCE,
    AGTI_FMT_IRI,
    AGTI_FMT_IRI_REFERENCE,
    AGTI_FMT_URI_TEMPLATE,
    AGTI_FMT_JSON_POINTER,
    AGTI_FMT_RELATIVE_JSON_POINTER,
    AGTI_FMT_REGEX,
    AGTI_FMT_HOSTNAME_1123 /* drafts 4 and 6: RFC 1123 alone, "ab--cd" is a host name */
};

/* Presence bits of number/size keywords. */
enum {
    AGTI_K_MULTIPLE_OF = 1u << 0,
    AGTI_K_MAXIMUM = 1u << 1,
    AGTI_K_MINIMUM = 1u << 2,
    AGTI_K_EXCL_MAXIMUM = 1u << 3,
    AGTI_K_EXCL_MINIMUM = 1u << 4,
    AGTI_K_CONST = 1u << 5,
    AGTI_K_UNIQUE = 1u << 6
};

typedef struct agti_snode agti_snode;
typedef struct agti_sres agti_sres;

typedef struct agti_sprop {
    const char *key;
    size_t len;
    uint32_t hash;
    agti_snode *node;
} agti_sprop;

typedef struct agti_spattern {
    pcre2_code *re;
    const char *src;
    agti_snode *node;
} agti_spattern;

typedef struct agti_sdepreq {
    const char *kw; /* "dependencies" or "dependentRequired" */
    const char *key;
    size_t len;
    const char **names;
    size_t *lens;
    size_t n;
} agti_sdepreq;

/* A schema resource (document root or subschema with "$id"): the unit of the
 * dynamic scope. Its dynamic anchors are looked up by $dynamicRef. */
struct agti_sres {
    const char **danchor_names;
    agti_snode **danchor_nodes;
    size_t n_danchors;
    agti_snode *recursive_anchor; /* 2019-09: the root, when it has "$recursiveAnchor": true */
};

/* Drafts 4, 6 and 7: "$ref" replaces its siblings, "dependencies", "items"
 * as an array with "additionalItems", "#name" ids as anchors. */
static inline bool agti_legacy(int draft)
{
    return draft < AGT_DRAFT_2019_09;
}

struct agti_snode {
    /* boolean schema: is_bool set, bool_value holds the value */
    bool is_bool;
    bool bool_value;
    int draft;        /* AGT_DRAFT_* the node was compiled in */
    unsigned flags;   /* AGTI_K_* */
    unsigned types;   /* AGTI_T_* mask; 0 = no "type" */
    const char *path; /* JSON pointer of this schema inside its document */
    agti_sres *res;   /* resource this node belongs to */

    json_t *enum_values; /* array, borrowed from the document (for messages) */
    json_t *const_value;
    const agti_jv *enum_jv; /* the same values, for comparison */
    const agti_jv *const_jv;
    /* their compact JSON text for messages, cut at 159 bytes with "..."
     * (made once at compile time: a message is built on every failure) */
    const char *enum_text, *const_text;
    double multiple_of, maximum, minimum, excl_maximum, excl_minimum;
    json_int_t multiple_of_int; /* > 0 when multipleOf is an integer */
    /* The four limits again, exact, for those written as JSON integers
     * (AGTI_K_MAXIMUM etc. set in int_limits): a double holds integers
     * exactly only up to 2^53. */
    int64_t maximum_i, minimum_i, excl_maximum_i, excl_minimum_i;
    unsigned int_limits;
    /* The text of multipleOf and the four limits (in that order) when a
     * double cannot hold them (AGTI_JV_BIG): compared exactly. */
    const char *big[5];

    int64_t max_length, min_length; /* -1 = absent */
    pcre2_code *pattern;
    const char *pattern_src;
    int format;
    /* draft 7 content assertions: "contentEncoding": "base64",
     * "contentMediaType": "application/json" */
    bool content_base64, content_json;

    /* arrays */
    agti_snode **prefix;
    size_t n_prefix;
    agti_snode *items;    /* for elements past the prefix */
    const char *items_kw; /* "items" or "additionalItems" */
    agti_snode *contains;
    int64_t min_contains, max_contains; /* max -1 = absent */
    int64_t max_items, min_items;
    agti_snode *unevaluated_items;

    /* objects */
    agti_sprop *props;
    size_t n_props;
    uint32_t *prop_table; /* open addressing: index+1, 0 = empty */
    uint32_t prop_mask;
    agti_spattern *patterns;
    size_t n_patterns;
    agti_snode *additional;
    const char **required;
    size_t *required_lens;
    size_t n_required;
    agti_sdepreq *dep_required;
    size_t n_dep_required;
    agti_sprop *dep_schemas;
    size_t n_dep_schemas;
    agti_snode *property_names;
    int64_t max_props, min_props;
    agti_snode *unevaluated_props;

    /* combinators */
    agti_snode **all_of, **any_of, **one_of;
    size_t n_all_of, n_any_of, n_one_of;
    agti_snode *not_;
    agti_snode *if_, *then_, *else_;

    /* references */
    agti_snode *ref;
    const char *ref_src;
    agti_snode *dyn_ref; /* static target of $dynamicRef */
    const char *dyn_ref_src;
    const char *dyn_ref_anchor; /* set when the static target bookends */
    agti_snode *rec_ref;        /* 2019-09 "$recursiveRef": static target */
    const char *rec_ref_src;
    bool rec_ref_dynamic; /* the static target has "$recursiveAnchor": true */

    /* true when some keyword of this node needs evaluated-location tracking */
    bool has_unevaluated;
};

/* A compiled schema. */
struct agt_schema {
    agti_snode *root;
    bool format_assert;
    /* arena */
    void *arena;
    pcre2_code **codes;
    size_t n_codes, cap_codes;
    json_t *documents;  /* array of every parsed document (keeps borrowed values alive) */
    agti_jarena consts; /* enum/const values converted for comparison */
    _Atomic(pcre2_match_data *) match_cache;
};

struct agt_schema_options {
    int draft;
    bool format_assert;
    char **res_uris;
    json_t **res_docs;
    size_t n_res, cap_res;
    agt_schema_resolve_fn resolver;
    void *payload;
};

struct agt_schema_resolution {
    json_t *doc;
};

/* The text of the numbers of a schema document that jansson cannot hold
 * (AGTI_JV_BIG), by the json_t that stands for them (a real). */
typedef struct agti_bigmap {
    const json_t **vals;
    const char **texts;
    size_t *lens;
    size_t n, cap;
} agti_bigmap;

const char *agti_bigmap_get(const agti_bigmap *m, const json_t *v, size_t *len);

/* compile.c: agti_schema_compile_json with the big-number texts of the
 * document (may be NULL). */
int agti_schema_compile_big(agt_schema **out, json_t *schema, const agt_schema_options *opts,
                            const agti_bigmap *big);

/* schema.c: parses schema text; *big receives the texts of its big numbers
 * (free with agti_bigmap_free). NULL with the error recorded on failure. */
json_t *agti_schema_parse_text(const char *text, size_t len, const char *what, agti_bigmap *big);
void agti_bigmap_free(agti_bigmap *m);

void agti_schema_destroy(agt_schema *s);

uint32_t agti_schema_hash(const char *s, size_t len);
/* A value's compact JSON text for messages, cut at 159 bytes with "...",
 * allocated in A (validate.c). NULL when out of memory. */
char *agti_schema_jv_text(agti_jarena *a, const agti_jv *v);

/* regex.c: compiles an ECMA-262 pattern with PCRE2 (UTF, UCP, JIT). On failure
 * returns NULL and writes a message into err. */
pcre2_code *agti_schema_regex_compile(const char *src, size_t len, char *err, size_t errlen);

/* num.c: exact decimals. value = (neg ? -1 : 1) * 0.d[0]d[1]...d[n-1] * 10^e,
 * no leading or trailing zero digits; zero has n == 0. */
typedef struct agti_dec {
    bool neg;
    char *d;
    size_t n;
    long long e;
    char inl[48];
} agti_dec;
/* Reads a JSON number's text (false: not a number, or out of memory). */
bool agti_dec_parse(agti_dec *d, const char *s, size_t len);
bool agti_dec_from_double(agti_dec *d, double v); /* the shortest text that reads back */
bool agti_dec_from_int(agti_dec *d, long long v);
void agti_dec_free(agti_dec *d);
int agti_dec_cmp(const agti_dec *a, const agti_dec *b); /* -1, 0, 1 */
bool agti_dec_is_integer(const agti_dec *d);
/* 1 when v is an integer multiple of m (m > 0), 0 when not, -1 when it
 * cannot tell (exponents too far apart, out of memory). */
int agti_dec_multiple(const agti_dec *v, const agti_dec *m);

/* regex.c: whether the text is an ECMA-262 pattern (format "regex"). */
bool agti_schema_regex_valid(const char *src, size_t len);

/* format.c */
int agti_schema_format_id(const char *name);
const char *agti_schema_format_name(int fmt);
bool agti_schema_format_check(int fmt, const char *s, size_t len);

/* uri.c: RFC 3986 reference resolution (section 5.2). Returns a malloc'd
 * string or NULL on OOM. base may be "" (the reference is returned as is). */
char *agti_uri_resolve(const char *base, const char *ref);
/* Decodes %XX escapes into a malloc'd string (invalid escapes kept as is). */
char *agti_uri_pct_decode(const char *s, size_t len);

/* metaschemas.c: embedded documents, looked up by URI without fragment. */
const char *agti_schema_embedded(const char *uri);

#endif
