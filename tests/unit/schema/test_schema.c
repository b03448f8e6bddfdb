/* Unit tests of the JSON Schema public API (schema.h) and the internal
 * jansson entry points (schema_internal.h). Expected values were worked out by
 * hand from the drafts' text. */
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agenttools/schema.h"
#include "core/core.h"
#include "harness.h"
#include "schema/schema_internal.h"

static agt_schema *compile(const char *json)
{
    agt_schema *s = NULL;
    int rc = agt_schema_compile(&s, json, strlen(json));
    if (rc != AGT_OK)
        t_diag("compile %s: %s", json, agt_error_message());
    return s;
}

static int validate(const agt_schema *s, const char *inst, char **errs)
{
    return agt_schema_validate(s, inst, strlen(inst), errs);
}

/* The first error's field, or NULL. */
static char *first_field(const char *errors_json, const char *field)
{
    json_t *a = json_loads(errors_json ? errors_json : "null", 0, NULL);
    json_t *v = json_object_get(json_array_get(a, 0), field);
    char *r = json_is_string(v) ? strdup(json_string_value(v)) : NULL;
    json_decref(a);
    return r;
}

static size_t error_count(const char *errors_json)
{
    json_t *a = json_loads(errors_json ? errors_json : "[]", 0, NULL);
    size_t n = json_array_size(a);
    json_decref(a);
    return n;
}

static void expect_error(const char *schema, const char *inst, const char *ipath, const char *spath,
                         const char *kw, const char *msg)
{
    agt_schema *s = compile(schema);
    char *errs = NULL;
    int rc = s ? validate(s, inst, &errs) : AGT_ERROR;
    T_EQ_INT(rc, AGT_EINVALID, "%s against %s is invalid", inst, schema);
    char *f;
    f = first_field(errs, "instance_path");
    T_EQ_STR(f, ipath, "instance_path of %s", inst);
    free(f);
    f = first_field(errs, "schema_path");
    T_EQ_STR(f, spath, "schema_path of %s", inst);
    free(f);
    f = first_field(errs, "keyword");
    T_EQ_STR(f, kw, "keyword of %s", inst);
    free(f);
    if (msg) {
        f = first_field(errs, "message");
        T_EQ_STR(f, msg, "message of %s", inst);
        free(f);
    }
    agt_free(errs);
    agt_schema_free(s);
}

static void expect_valid(const char *schema, const char *inst, int valid)
{
    agt_schema *s = compile(schema);
    char *errs = NULL;
    int rc = s ? validate(s, inst, &errs) : AGT_ERROR;
    T_EQ_INT(rc, valid ? AGT_OK : AGT_EINVALID, "%s against %s: %s", inst, schema,
             valid ? "valid" : "invalid");
    if (valid)
        T_CHECK(errs == NULL, "no errors_json when valid");
    agt_free(errs);
    agt_schema_free(s);
}

static void expect_bad_schema(const char *schema, int code, const char *needle)
{
    agt_schema *s = (agt_schema *)1;
    int rc = agt_schema_compile(&s, schema, strlen(schema));
    T_EQ_INT(rc, code, "schema %s is rejected", schema);
    T_CHECK(s == NULL, "out is NULL after a failed compile");
    T_CHECK(strstr(agt_error_message(), needle) != NULL, "message names '%s': %s", needle,
            agt_error_message());
}

static void test_messages(void)
{
    const char *tool = "{\"type\":\"object\",\"required\":[\"path\"],\"properties\":{"
                       "\"path\":{\"type\":\"string\"},"
                       "\"n\":{\"type\":\"integer\",\"maximum\":300,\"minimum\":1},"
                       "\"tags\":{\"type\":\"array\",\"items\":{\"enum\":[\"a\",\"b\"]}}},"
                       "\"additionalProperties\":false}";
    expect_error(tool, "{}", "", "/required", "required", "missing required property 'path'");
    expect_error(tool, "{\"path\":5}", "/path", "/properties/path/type", "type",
                 "expected string, got integer");
    expect_error(tool, "{\"path\":\"x\",\"n\":301}", "/n", "/properties/n/maximum", "maximum",
                 "must be at most 300");
    expect_error(tool, "{\"path\":\"x\",\"n\":0}", "/n", "/properties/n/minimum", "minimum",
                 "must be at least 1");
    expect_error(tool, "{\"path\":\"x\",\"n\":1.5}", "/n", "/properties/n/type", "type",
                 "expected integer, got number");
    expect_error(tool, "{\"path\":\"x\",\"tags\":[\"a\",\"c\"]}", "/tags/1",
                 "/properties/tags/items/enum", "enum", "must be one of [\"a\",\"b\"]");
    expect_error(tool, "{\"path\":\"x\",\"extra\":1}", "/extra", "/additionalProperties",
                 "additionalProperties",
                 "property 'extra' is not allowed (allowed: path, n, tags)");
    expect_error("{\"patternProperties\":{\"^x-\":true},\"additionalProperties\":false}",
                 "{\"y\":1}", "/y", "/additionalProperties", "additionalProperties",
                 "property 'y' is not allowed (allowed: names matching '^x-')");
    expect_error("{\"type\":[\"string\",\"null\"]}", "3", "", "/type", "type",
                 "expected null or string, got integer");
    expect_error("{\"maxLength\":2}", "\"\xc3\xa9\xc3\xa9\xc3\xa9\"", "", "/maxLength", "maxLength",
                 "must be at most 2 characters long, got 3");
    expect_error("{\"pattern\":\"^a\"}", "\"ba\"", "", "/pattern", "pattern",
                 "does not match pattern '^a'");
    expect_error("{\"properties\":{\"a/b\":{\"properties\":{\"~\":{\"const\":1}}}}}",
                 "{\"a/b\":{\"~\":2}}", "/a~1b/~0", "/properties/a~1b/properties/~0/const", "const",
                 "must be equal to 1");
    expect_error(
        "{\"$defs\":{\"pos\":{\"exclusiveMinimum\":0}},\"items\":{\"$ref\":\"#/$defs/pos\"}}",
        "[1,0]", "/1", "/$defs/pos/exclusiveMinimum", "exclusiveMinimum", "must be greater than 0");
    expect_error("{\"multipleOf\":0.5}", "0.75", "", "/multipleOf", "multipleOf",
                 "must be a multiple of 0.5");
    expect_error("{\"anyOf\":[{\"type\":\"string\"},{\"minimum\":2}]}", "1", "", "/anyOf", "anyOf",
                 "must match at least one of the schemas in anyOf (option 0: expected string, "
                 "got integer; option 1: must be at least 2)");
    expect_error("{\"properties\":{\"a\":{\"oneOf\":[{\"required\":[\"x\"]},"
                 "{\"properties\":{\"y\":{\"const\":1}}}]}}}",
                 "{\"a\":{\"y\":2}}", "/a", "/properties/a/oneOf", "oneOf",
                 "must match exactly one of the schemas in oneOf, matches none (option 0: "
                 "missing required property 'x'; option 1: /a/y: must be equal to 1)");
    expect_error("{\"oneOf\":[{\"minimum\":0},{\"maximum\":5}]}", "3", "", "/oneOf", "oneOf",
                 "must match exactly one schema in oneOf, matches both 0 and 1");
    expect_error("{\"not\":{\"type\":\"null\"}}", "null", "", "/not", "not",
                 "must not match the schema in \"not\"");
    /* A "not" around const or enum names the refused value (Read's
     * line_offset is {"not":{"const":0}}; the message said only "must not
     * match the schema in not", which the model cannot see). */
    expect_error("{\"not\":{\"const\":0}}", "0", "", "/not", "not", "must not be 0");
    expect_error("{\"not\":{\"const\":0}}", "0.0", "", "/not", "not", "must not be 0");
    expect_error("{\"not\":{\"enum\":[1,\"a\",null]}}", "\"a\"", "", "/not", "not",
                 "must not be one of [1,\"a\",null]");
    expect_valid("{\"not\":{\"const\":0}}", "-1", 1);
    /* Limits compare exactly when either side is an integer (python3-jsonschema
     * agrees on each): as doubles, 2^53 + 1 <= 2^53 and 2^63 <= 2^63 - 1 held. */
    expect_error("{\"maximum\":9007199254740992}", "9007199254740993", "", "/maximum", "maximum",
                 "must be at most 9007199254740992");
    expect_error("{\"minimum\":9007199254740993}", "9007199254740992", "", "/minimum", "minimum",
                 "must be at least 9007199254740993");
    expect_error("{\"maximum\":9223372036854775807}", "9223372036854775808", "", "/maximum",
                 "maximum", "must be at most 9223372036854775807");
    expect_valid("{\"maximum\":9223372036854775807}", "9223372036854775807", 1);
    /* the value written is the limit itself (a double would read 2^53) */
    expect_error("{\"exclusiveMaximum\":9007199254740993}", "9007199254740993.0", "",
                 "/exclusiveMaximum", "exclusiveMaximum", "must be less than 9007199254740993");
    expect_error("{\"exclusiveMinimum\":-9223372036854775808}", "-9223372036854775808", "",
                 "/exclusiveMinimum", "exclusiveMinimum",
                 "must be greater than -9223372036854775808");
    expect_valid("{\"maximum\":2.5}", "2", 1);
    expect_error("{\"maximum\":-1.5}", "-1", "", "/maximum", "maximum", "must be at most -1.5");
    expect_valid("{\"exclusiveMinimum\":2}", "2.0000001", 1);
    expect_error("{\"exclusiveMinimum\":2}", "2.0", "", "/exclusiveMinimum", "exclusiveMinimum",
                 "must be greater than 2");
    expect_error("{\"prefixItems\":[{}],\"items\":false}", "[1,2]", "/1", "/items", "items", NULL);
    expect_error("false", "1", "", "", "false", NULL);
    expect_error("{\"unevaluatedProperties\":false,\"allOf\":[{\"properties\":{\"a\":true}}]}",
                 "{\"a\":1,\"b\":2}", "/b", "/unevaluatedProperties", "unevaluatedProperties",
                 "property 'b' is not allowed");
    expect_error("{\"propertyNames\":{\"maxLength\":3}}", "{\"ab\":1,\"long\":2}", "/long",
                 "/propertyNames", "propertyNames",
                 "property name 'long' is not allowed: must be at most 3 characters long, got 4");
    expect_error("{\"enum\":[\"a\\\"b\",null,1.5,{\"k\":[true]}]}", "2", "", "/enum", "enum",
                 "must be one of [\"a\\\"b\",null,1.5,{\"k\":[true]}]");
    {
        /* a long value in a message is cut at 160 bytes and marked */
        char digits[201], sch[260], want[200];
        for (int i = 0; i < 200; i++)
            digits[i] = (char)('0' + i % 10);
        digits[200] = '\0';
        snprintf(sch, sizeof sch, "{\"const\":\"%s\"}", digits);
        snprintf(want, sizeof want, "must be equal to \"%.155s...", digits);
        expect_error(sch, "1", "", "/const", "const", want);
    }
    expect_error("{\"dependentRequired\":{\"a\":[\"b\"]}}", "{\"a\":1}", "", "/dependentRequired",
                 "dependentRequired", "missing property 'b', required when 'a' is present");

    /* every violation is listed in all-errors mode */
    agt_schema *s = compile(tool);
    char *errs = NULL;
    T_EQ_INT(validate(s, "{\"n\":0,\"tags\":[1,\"a\",2],\"x\":null}", &errs), AGT_EINVALID,
             "several violations");
    T_EQ_INT(error_count(errs), 5, "required + minimum + 2 enum + additionalProperties: %s", errs);
    agt_free(errs);
    /* errors_json NULL: first-error mode, same verdict */
    T_EQ_INT(validate(s, "{\"path\":\"p\",\"tags\":[\"a\",\"x/~\"]}", NULL), AGT_EINVALID,
             "first-error mode");
    T_EQ_STR(agt_error_message(), "/tags/1: must be one of [\"a\",\"b\"]",
             "first-error message: path and violation");
    {
        /* the value text of a message is cut at 159 bytes with "...", the
         * same in first-error and all-errors mode (worked out by hand:
         * `["` + 154 a's + `...`) */
        char big[400], want[400];
        memset(want, 0, sizeof want);
        snprintf(big, sizeof big, "{\"enum\":[\"%0300d\"]}", 0);
        for (char *q = strchr(big, '0'); q && *q == '0'; q++)
            *q = 'a';
        agt_schema *e = compile(big);
        strcpy(want, "instance: must be one of [\"");
        memset(want + strlen(want), 'a', 154);
        strcat(want, "...");
        T_EQ_INT(validate(e, "1", NULL), AGT_EINVALID, "long enum, first-error mode");
        T_EQ_STR(agt_error_message(), want, "long enum value cut in the message");
        T_EQ_INT(validate(e, "1", &errs), AGT_EINVALID, "long enum, all errors");
        T_EQ_STR(agt_error_message(), want, "the same message in all-errors mode");
        agt_free(errs);
        agt_schema_free(e);
    }
    T_EQ_INT(validate(s, "{\"path\":\"p\",\"x/~\":1}", NULL), AGT_EINVALID, "escaped path");
    T_EQ_STR(agt_error_message(), "/x~1~0: property 'x/~' is not allowed (allowed: path, n, tags)",
             "pointer escapes");
    T_EQ_INT(validate(s, "{\"n\":0}", NULL), AGT_EINVALID, "first-error mode");
    T_CHECK(strstr(agt_error_message(), "path") != NULL, "last error names the problem: %s",
            agt_error_message());
    T_EQ_INT(validate(s, "{\"path\":\"p\",\"n\":300,\"tags\":[]}", &errs), AGT_OK, "valid call");
    T_CHECK(errs == NULL, "errors_json NULL when valid");
    agt_schema_free(s);
}

static void test_semantics(void)
{
    expect_valid("{\"type\":\"integer\"}", "1.0", 1);
    expect_valid("{\"type\":\"integer\"}", "1.5", 0);
    expect_valid("{\"uniqueItems\":true}", "[1,1.0]", 0);
    expect_valid("{\"uniqueItems\":true}", "[{\"a\":1,\"b\":2},{\"b\":2,\"a\":1.0}]", 0);
    expect_valid("{\"uniqueItems\":true}", "[[1],[true]]", 1);
    expect_valid("{\"enum\":[1]}", "1.0", 1);
    expect_valid("{\"const\":false}", "0", 0);
    expect_valid("{\"type\":\"integer\",\"multipleOf\":0.123456789}", "1e308", 0);
    expect_valid("{\"multipleOf\":0.0001}", "0.0075", 1);
    expect_valid("{\"multipleOf\":0.01}", "19.99", 1);
    expect_valid("{\"minLength\":2}", "\"\xf0\x9f\x92\xa9\"", 0); /* one code point */
    expect_valid("{\"pattern\":\"\\\\d\"}", "\"\xd9\xa3\"", 0);   /* ARABIC-INDIC 3: not ASCII */
    expect_valid("{\"pattern\":\"b\"}", "\"abc\"", 1);            /* unanchored */
    expect_valid("{\"pattern\":\"^a$\"}", "\"a\\n\"", 0);         /* $ only at the very end */
    expect_valid("{\"$schema\":\"http://json-schema.org/draft-07/schema#\","
                 "\"definitions\":{\"s\":{\"type\":\"string\"}},"
                 "\"properties\":{\"a\":{\"$ref\":\"#/definitions/s\",\"type\":\"integer\"}}}",
                 "{\"a\":\"x\"}", 1); /* draft 7: $ref overrides siblings */
    expect_valid("{\"$defs\":{\"s\":{\"type\":\"string\"}},"
                 "\"properties\":{\"a\":{\"$ref\":\"#/$defs/s\",\"maxLength\":1}}}",
                 "{\"a\":\"xy\"}", 0); /* 2020-12: siblings apply */
    expect_valid("{\"$ref\":\"https://json-schema.org/draft/2020-12/schema\"}",
                 "{\"type\":\"string\"}", 1); /* embedded meta-schema */
    expect_valid("{\"$ref\":\"https://json-schema.org/draft/2020-12/schema\"}", "{\"type\":7}", 0);
    expect_valid("{\"$ref\":\"http://json-schema.org/draft-07/schema#\"}", "{\"minLength\":-1}", 0);
    expect_valid("{\"format\":\"email\"}", "\"nope\"", 1); /* annotation by default */

    /* a cycle of $refs compiles; walking it without progress is an error */
    agt_schema *s =
        compile("{\"$defs\":{\"a\":{\"$ref\":\"#/$defs/b\"},\"b\":{\"$ref\":\"#/$defs/a\"}},"
                "\"$ref\":\"#/$defs/a\"}");
    T_CHECK(s != NULL, "schema with a $ref cycle compiles");
    char *errs = NULL;
    T_EQ_INT(validate(s, "1", &errs), AGT_EINVALID, "a $ref loop makes the instance invalid");
    char *kw = first_field(errs, "keyword");
    T_EQ_STR(kw, "$ref", "the loop is reported on $ref");
    free(kw);
    T_CHECK(strstr(agt_error_message(), "loops") != NULL, "message says the schema loops: %s",
            agt_error_message());
    agt_free(errs);
    T_EQ_INT(validate(s, "1", NULL), AGT_EINVALID, "same in first-error mode");
    agt_schema_free(s);

    /* a long chain of $refs at one location is not a loop */
    {
        agti_buf b = AGTI_BUF_INIT;
        agti_buf_puts(&b, "{\"$ref\":\"#/$defs/d0\",\"$defs\":{");
        for (int i = 0; i < 200; i++)
            agti_buf_printf(&b, "\"d%d\":{\"$ref\":\"#/$defs/d%d\"},", i, i + 1);
        agti_buf_puts(&b, "\"d200\":{\"type\":\"string\"}}}");
        s = compile(agti_buf_cstr(&b));
        T_EQ_INT(validate(s, "\"x\"", NULL), AGT_OK, "200 chained $refs: valid");
        T_EQ_INT(validate(s, "1", NULL), AGT_EINVALID, "200 chained $refs: invalid");
        T_EQ_STR(agt_error_message(), "instance: expected string, got integer",
                 "the chain's end reports");
        agt_schema_free(s);
        agti_buf_free(&b);
    }

    /* a loop inside anyOf still reports why */
    s = compile("{\"anyOf\":[{\"$ref\":\"#\"}]}");
    T_EQ_INT(validate(s, "1", &errs), AGT_EINVALID, "a $ref loop inside anyOf");
    T_EQ_INT(error_count(errs), 1, "one error: %s", errs);
    kw = first_field(errs, "keyword");
    T_EQ_STR(kw, "$ref", "reported on $ref");
    free(kw);
    agt_free(errs);
    agt_schema_free(s);

    /* a recursive schema over a nested instance is fine */
    s = compile("{\"type\":\"array\",\"items\":{\"$ref\":\"#\"}}");
    T_EQ_INT(validate(s, "[[[[]]],[]]", NULL), AGT_OK, "recursive schema, nested arrays");
    T_EQ_INT(validate(s, "[[[[1]]],[]]", NULL), AGT_EINVALID, "recursive schema, deep violation");
    agt_schema_free(s);
}

static void test_bad_input(void)
{
    agt_schema *s = NULL;
    T_EQ_INT(agt_schema_compile(NULL, "{}", 2), AGT_EINVAL, "compile: out NULL");
    T_EQ_INT(agt_schema_compile(&s, NULL, 0), AGT_EINVAL, "compile: json NULL");
    T_EQ_INT(agt_schema_compile(&s, "{", 1), AGT_EPARSE, "compile: not JSON");
    T_CHECK(strstr(agt_error_message(), "line 1") != NULL, "parse error gives the line: %s",
            agt_error_message());
    expect_bad_schema("[1]", AGT_EINVALID, "object or a boolean");
    expect_bad_schema("{\"type\":\"strin\"}", AGT_EINVALID, "/type");
    expect_bad_schema("{\"minLength\":-1}", AGT_EINVALID, "/minLength");
    expect_bad_schema("{\"required\":\"a\"}", AGT_EINVALID, "/required");
    expect_bad_schema("{\"multipleOf\":0}", AGT_EINVALID, "multipleOf");
    expect_bad_schema("{\"properties\":{\"a\":3}}", AGT_EINVALID, "/properties");
    expect_bad_schema("{\"pattern\":\"a(\"}", AGT_EINVALID, "invalid regular expression 'a('");
    expect_bad_schema("{\"patternProperties\":{\"[\":{}}}", AGT_EINVALID, "/patternProperties");
    expect_bad_schema("{\"$ref\":\"#/$defs/missing\"}", AGT_ENOTFOUND, "#/$defs/missing");
    expect_bad_schema("{\"$ref\":\"http://example.com/x.json\"}", AGT_ENOTFOUND,
                      "http://example.com/x.json");
    expect_bad_schema("{\"$ref\":\"#nope\"}", AGT_ENOTFOUND, "nope");
    expect_bad_schema("{\"allOf\":[]}", AGT_EINVALID, "allOf");

    s = compile("{\"type\":\"object\"}");
    char *errs = (char *)1;
    T_EQ_INT(agt_schema_validate(NULL, "{}", 2, &errs), AGT_EINVAL, "validate: schema NULL");
    T_CHECK(errs == NULL, "errors_json reset on error");
    T_EQ_INT(agt_schema_validate(s, NULL, 0, NULL), AGT_EINVAL, "validate: instance NULL");
    T_EQ_INT(validate(s, "{\"a\":", NULL), AGT_EPARSE, "validate: instance not JSON");
    T_EQ_INT(validate(s, "{} x", NULL), AGT_EPARSE, "validate: trailing garbage");
    agt_schema_free(s);
    agt_schema_free(NULL);
    agt_schema_options_free(NULL);

    agt_schema_options *o = NULL;
    T_EQ_INT(agt_schema_options_new(NULL), AGT_EINVAL, "options_new: out NULL");
    T_EQ_INT(agt_schema_options_new(&o), AGT_OK, "options_new");
    T_EQ_INT(agt_schema_options_set_draft(o, 5), AGT_EINVAL, "unknown draft");
    T_EQ_INT(agt_schema_options_set_draft(NULL, 7), AGT_EINVAL, "set_draft: opts NULL");
    T_EQ_INT(agt_schema_options_add_resource(o, "http://x/a.json", "{", 1), AGT_EPARSE,
             "resource that is not JSON");
    T_EQ_INT(agt_schema_options_add_resource(o, "http://x/a.json#frag", "{}", 2), AGT_EINVAL,
             "resource URI with a fragment");
    T_EQ_INT(agt_schema_options_add_resource(o, NULL, "{}", 2), AGT_EINVAL, "resource URI NULL");
    T_EQ_INT(agt_schema_options_set_format_assertion(NULL, 1), AGT_EINVAL, "format: opts NULL");
    T_EQ_INT(agt_schema_options_set_resolver(NULL, NULL, NULL), AGT_EINVAL, "resolver: opts NULL");
    T_EQ_INT(agt_schema_resolution_provide(NULL, "{}", 2), AGT_EINVAL, "provide: NULL");
    agt_schema_options_free(o);
}

static void test_deep_nesting(void)
{
    /* 100,000 nested arrays: the parser refuses nesting past 2048 */
    size_t n = 100000;
    char *text = malloc(2 * n + 1);
    memset(text, '[', n);
    memset(text + n, ']', n);
    text[2 * n] = '\0';
    agt_schema *s = compile("{\"items\":{\"$ref\":\"#\"}}");
    T_EQ_INT(validate(s, text, NULL), AGT_EPARSE, "100,000 nested arrays: parse error, no crash");
    char *errs = NULL;
    T_EQ_INT(validate(s, text, &errs), AGT_EPARSE, "same with errors_json");
    T_CHECK(errs == NULL, "no errors_json on a parse error");

    /* nesting the parser accepts validates */
    size_t m = 1400;
    memset(text, '[', m);
    memset(text + m, ']', m);
    text[2 * m] = '\0';
    T_EQ_INT(validate(s, text, NULL), AGT_OK, "1,400 nested arrays validate");

    /* three schema levels per array level: the evaluation depth limit */
    agt_schema *s3 = compile("{\"items\":{\"allOf\":[{\"$ref\":\"#\"}]}}");
    m = 1040;
    memset(text, '[', m);
    memset(text + m, ']', m);
    text[2 * m] = '\0';
    T_EQ_INT(validate(s3, text, NULL), AGT_EINVALID, "1,040 levels x 3 schemas: depth limit");
    T_CHECK(strstr(agt_error_message(), "nested deeper than 3000") != NULL, "message: %s",
            agt_error_message());
    agt_schema_free(s3);

    /* built in memory, deeper than any parse allows: a clear limit, no crash */
    json_t *root = json_array(), *cur = root;
    for (size_t i = 0; i < 20000; i++) {
        json_t *c = json_array();
        json_array_append_new(cur, c);
        cur = c;
    }
    json_t *jerrs = NULL;
    T_EQ_INT(agti_schema_validate_json(s, root, &jerrs), AGT_EINVALID,
             "20,000 nested arrays in memory: depth limit");
    T_CHECK(strstr(agt_error_message(), "deeper") != NULL, "message names the depth limit: %s",
            agt_error_message());
    json_decref(jerrs);
    T_EQ_INT(agti_schema_validate_json(s, root, NULL), AGT_EINVALID, "same, first-error mode");
    /* free iteratively: json_decref recurses */
    while (json_array_size(root)) {
        json_t *child = json_incref(json_array_get(root, 0));
        json_decref(root);
        root = child;
    }
    json_decref(root);
    agt_schema_free(s);
    free(text);
}

static int resolver_calls;

static int resolver(const char *uri, agt_schema_resolution *r, void *payload)
{
    resolver_calls++;
    if (strcmp(uri, "http://example.com/int.json") == 0)
        return agt_schema_resolution_provide(r, "{\"type\":\"integer\"}", 18);
    if (strcmp(uri, "http://example.com/cancel.json") == 0)
        return 1;
    (void)payload;
    return 0;
}

static void test_options(void)
{
    agt_schema_options *o = NULL;
    agt_schema *s = NULL;
    agt_schema_options_new(&o);
    const char *res = "{\"$defs\":{\"name\":{\"type\":\"string\",\"minLength\":1}}}";
    T_EQ_INT(agt_schema_options_add_resource(o, "http://example.com/defs.json", res, strlen(res)),
             AGT_OK, "add resource");
    agt_schema_options_set_resolver(o, resolver, NULL);
    const char *sch =
        "{\"properties\":{\"n\":{\"$ref\":\"http://example.com/defs.json#/$defs/name\"},"
        "\"i\":{\"$ref\":\"int.json\"}},\"$id\":\"http://example.com/root.json\"}";
    T_EQ_INT(agt_schema_compile_with(&s, sch, strlen(sch), o), AGT_OK, "compile with resources");
    T_EQ_INT(resolver_calls, 1, "resolver asked once, for int.json");
    agt_schema_options_free(o); /* the schema does not depend on the options */
    T_EQ_INT(validate(s, "{\"n\":\"x\",\"i\":2}", NULL), AGT_OK, "remote refs: valid");
    T_EQ_INT(validate(s, "{\"n\":\"\"}", NULL), AGT_EINVALID, "registered resource applies");
    T_EQ_INT(validate(s, "{\"i\":\"2\"}", NULL), AGT_EINVALID, "resolved document applies");
    agt_schema_free(s);

    agt_schema_options_new(&o);
    agt_schema_options_set_resolver(o, resolver, NULL);
    const char *c1 = "{\"$ref\":\"http://example.com/cancel.json\"}";
    T_EQ_INT(agt_schema_compile_with(&s, c1, strlen(c1), o), AGT_ECANCELLED, "resolver cancels");
    const char *c2 = "{\"$ref\":\"http://example.com/unknown.json\"}";
    T_EQ_INT(agt_schema_compile_with(&s, c2, strlen(c2), o), AGT_ENOTFOUND, "resolver: unknown");
    T_CHECK(strstr(agt_error_message(), "http://example.com/unknown.json") != NULL,
            "message names the URI: %s", agt_error_message());

    /* format assertion */
    agt_schema_options_set_format_assertion(o, 1);
    const char *f = "{\"properties\":{\"d\":{\"format\":\"date\"},\"u\":{\"format\":\"uuid\"},"
                    "\"x\":{\"format\":\"no-such-format\"}}}";
    T_EQ_INT(agt_schema_compile_with(&s, f, strlen(f), o), AGT_OK, "compile with formats");
    T_EQ_INT(validate(s,
                      "{\"d\":\"2024-02-29\",\"u\":\"123e4567-e89b-12d3-a456-426614174000\","
                      "\"x\":\"?\"}",
                      NULL),
             AGT_OK, "valid date, uuid; unknown format is an annotation");
    char *errs = NULL;
    T_EQ_INT(validate(s, "{\"d\":\"2023-02-29\"}", &errs), AGT_EINVALID, "2023-02-29 is no date");
    char *m = first_field(errs, "message");
    T_EQ_STR(m, "is not a valid date", "format message");
    free(m);
    agt_free(errs);
    T_EQ_INT(validate(s, "{\"u\":\"123e4567e89b12d3a456426614174000\"}", NULL), AGT_EINVALID,
             "uuid without hyphens");
    agt_schema_free(s);

    /* a document without $schema follows the root's draft */
    agt_schema_options *o7 = NULL;
    agt_schema_options_new(&o7);
    const char *tuple = "{\"items\":[{\"type\":\"integer\"}],\"additionalItems\":false}";
    agt_schema_options_add_resource(o7, "http://example.com/tuple.json", tuple, strlen(tuple));
    const char *r7 = "{\"$schema\":\"http://json-schema.org/draft-07/schema#\","
                     "\"$ref\":\"http://example.com/tuple.json\"}";
    T_EQ_INT(agt_schema_compile_with(&s, r7, strlen(r7), o7), AGT_OK,
             "draft-07 root, plain resource");
    T_EQ_INT(validate(s, "[1,2]", NULL), AGT_EINVALID, "the resource is read as draft-07");
    agt_schema_free(s);
    agt_schema_options_free(o7);

    /* draft option for schemas without $schema */
    agt_schema_options_set_draft(o, AGT_DRAFT_7);
    const char *d7 = "{\"items\":[{\"type\":\"integer\"}],\"additionalItems\":false}";
    T_EQ_INT(agt_schema_compile_with(&s, d7, strlen(d7), o), AGT_OK, "draft 7 array items");
    T_EQ_INT(validate(s, "[1]", NULL), AGT_OK, "draft 7 tuple");
    T_EQ_INT(validate(s, "[1,2]", NULL), AGT_EINVALID, "draft 7 additionalItems");
    agt_schema_free(s);
    agt_schema_options_free(o);
}

static void test_internal_json(void)
{
    json_t *sch =
        json_pack("{s:s, s:{s:{s:s}}}", "type", "object", "properties", "a", "type", "boolean");
    agt_schema *s = NULL;
    T_EQ_INT(agti_schema_compile_json(&s, sch, NULL), AGT_OK, "compile from json_t");
    json_decref(sch); /* the schema keeps its own reference */
    json_t *inst = json_pack("{s:i}", "a", 1);
    json_t *errs = NULL;
    T_EQ_INT(agti_schema_validate_json(s, inst, &errs), AGT_EINVALID, "validate json_t");
    T_EQ_INT(json_array_size(errs), 1, "one error");
    T_EQ_STR(json_string_value(json_object_get(json_array_get(errs, 0), "instance_path")), "/a",
             "instance_path");
    json_decref(errs);
    json_decref(inst);
    T_EQ_INT(agti_schema_validate_json(s, NULL, NULL), AGT_EINVAL, "NULL instance");
    agt_schema_free(s);
    T_EQ_INT(agti_schema_compile_json(&s, NULL, NULL), AGT_EINVAL, "NULL schema");
}

/* $dynamicRef / $dynamicAnchor and unevaluated* (draft 2020-12): cases taken
 * from the examples of the 2020-12 core specification and its test suite. */
static void test_dynamic_and_unevaluated(void)
{
    /* same resource: like a $ref to an $anchor */
    const char *same = "{\"$id\":\"https://t.example/same/root\",\"type\":\"array\","
                       "\"items\":{\"$dynamicRef\":\"#items\"},"
                       "\"$defs\":{\"foo\":{\"$dynamicAnchor\":\"items\",\"type\":\"string\"}}}";
    expect_valid(same, "[\"foo\",\"bar\"]", 1);
    expect_valid(same, "[\"foo\",42]", 0);
    /* resolved to the outermost dynamic anchor in scope */
    const char *typical =
        "{\"$id\":\"https://t.example/typical/root\",\"$ref\":\"list\","
        "\"$defs\":{\"foo\":{\"$dynamicAnchor\":\"items\",\"type\":\"string\"},"
        "\"list\":{\"$id\":\"list\",\"type\":\"array\",\"items\":{\"$dynamicRef\":\"#items\"},"
        "\"$defs\":{\"items\":{\"$dynamicAnchor\":\"items\"}}}}}";
    expect_valid(typical, "[\"foo\",\"bar\"]", 1);
    expect_valid(typical, "[\"foo\",42]", 0);
    /* a JSON pointer fragment is a plain $ref */
    const char *noanchor = "{\"$id\":\"https://t.example/noanchor/root\",\"$ref\":\"list\","
                           "\"$defs\":{\"foo\":{\"$dynamicAnchor\":\"items\",\"type\":\"string\"},"
                           "\"list\":{\"$id\":\"list\",\"type\":\"array\",\"items\":{\"$"
                           "dynamicRef\":\"#/$defs/items\"},"
                           "\"$defs\":{\"items\":{\"$anchor\":\"items\",\"$dynamicAnchor\":"
                           "\"items\",\"type\":\"number\"}}}}}";
    expect_valid(noanchor, "[\"foo\",\"bar\"]", 0);
    expect_valid(noanchor, "[24,42]", 1);
    /* a plain $anchor of the same name does not take part */
    const char *plain =
        "{\"$id\":\"https://t.example/plain/root\",\"$ref\":\"list\","
        "\"$defs\":{\"foo\":{\"$anchor\":\"items\",\"type\":\"string\"},"
        "\"list\":{\"$id\":\"list\",\"type\":\"array\",\"items\":{\"$dynamicRef\":\"#items\"},"
        "\"$defs\":{\"items\":{\"$dynamicAnchor\":\"items\"}}}}}";
    expect_valid(plain, "[\"foo\",42]", 1);
    /* without the bookend the reference is static */
    const char *nobookend =
        "{\"$id\":\"https://t.example/nobookend/root\",\"$ref\":\"list\","
        "\"$defs\":{\"foo\":{\"$dynamicAnchor\":\"items\",\"type\":\"string\"},"
        "\"list\":{\"$id\":\"list\",\"type\":\"array\",\"items\":{\"$dynamicRef\":\"#items\"},"
        "\"$defs\":{\"items\":{\"$anchor\":\"items\"}}}}}";
    expect_valid(nobookend, "[\"foo\",42]", 1);
    /* strict tree: the extension's unevaluatedProperties reaches every node */
    const char *tree =
        "{\"$id\":\"https://t.example/strict-tree\",\"$dynamicAnchor\":\"node\",\"$ref\":\"tree\","
        "\"unevaluatedProperties\":false,\"$defs\":{\"tree\":{\"$id\":\"tree\","
        "\"$dynamicAnchor\":\"node\",\"type\":\"object\",\"properties\":{\"data\":true,"
        "\"children\":{\"type\":\"array\",\"items\":{\"$dynamicRef\":\"#node\"}}}}}}";
    expect_valid(tree, "{\"children\":[{\"data\":1}]}", 1);
    expect_valid(tree, "{\"children\":[{\"daat\":1}]}", 0);
    expect_error(tree, "{\"children\":[{\"daat\":1}]}", "/children/0/daat",
                 "/unevaluatedProperties", "unevaluatedProperties",
                 "property 'daat' is not allowed");
    /* the 2020-12 meta-schema extends its vocabularies through $dynamicRef */
    const char *meta = "{\"$ref\":\"https://json-schema.org/draft/2020-12/schema\"}";
    expect_valid(meta, "{\"properties\":{\"a\":{\"type\":\"string\"}}}", 1);
    expect_valid(meta, "{\"properties\":{\"a\":{\"type\":7}}}", 0);
    expect_valid(meta, "{\"items\":{\"minLength\":-1}}", 0);

    /* unevaluatedProperties */
    const char *adj = "{\"properties\":{\"foo\":true},\"unevaluatedProperties\":false}";
    expect_valid(adj, "{\"foo\":1}", 1);
    expect_valid(adj, "{\"foo\":1,\"bar\":2}", 0);
    const char *any =
        "{\"properties\":{\"foo\":true},\"anyOf\":[{\"properties\":{\"bar\":"
        "{\"const\":\"bar\"}},\"required\":[\"bar\"]},{\"properties\":{\"baz\":"
        "{\"const\":\"baz\"}},\"required\":[\"baz\"]}],\"unevaluatedProperties\":false}";
    expect_valid(any, "{\"foo\":1,\"bar\":\"bar\"}", 1);
    expect_valid(any, "{\"foo\":1,\"bar\":\"bar\",\"baz\":\"baz\"}", 1); /* both branches count */
    expect_valid(any, "{\"foo\":1,\"bar\":\"bar\",\"baz\":\"x\"}", 0); /* failed branch does not */
    const char *notk =
        "{\"properties\":{\"foo\":true},\"not\":{\"not\":{\"properties\":{\"bar\":"
        "{\"const\":\"bar\"}},\"required\":[\"bar\"]}},\"unevaluatedProperties\":false}";
    expect_valid(notk, "{\"foo\":1,\"bar\":\"bar\"}", 0); /* not collects no annotations */
    const char *cond =
        "{\"if\":{\"properties\":{\"foo\":{\"const\":\"then\"}},\"required\":[\"foo\"]},"
        "\"then\":{\"properties\":{\"bar\":true}},\"else\":{\"properties\":{\"baz\":true}},"
        "\"unevaluatedProperties\":false}";
    expect_valid(cond, "{\"foo\":\"then\",\"bar\":1}", 1);
    expect_valid(cond, "{\"foo\":\"then\",\"baz\":1}", 0);
    expect_valid(cond, "{\"baz\":1}", 1);
    expect_valid(cond, "{\"foo\":\"else\",\"baz\":1}", 0); /* if failed: foo not evaluated */
    const char *cousins =
        "{\"allOf\":[{\"properties\":{\"foo\":true},\"unevaluatedProperties\":true},"
        "{\"unevaluatedProperties\":false}]}";
    expect_valid(cousins, "{\"foo\":1}", 0); /* a sibling's annotations are not visible */
    const char *nested =
        "{\"allOf\":[{\"unevaluatedProperties\":true}],\"unevaluatedProperties\":false}";
    expect_valid(nested, "{\"foo\":1}", 1);
    const char *viaref =
        "{\"$defs\":{\"b\":{\"properties\":{\"bar\":true}}},\"$ref\":\"#/$defs/b\","
        "\"properties\":{\"foo\":true},\"unevaluatedProperties\":false}";
    expect_valid(viaref, "{\"foo\":1,\"bar\":2}", 1);
    expect_valid(viaref, "{\"foo\":1,\"bar\":2,\"baz\":3}", 0);
    const char *dep =
        "{\"properties\":{\"foo\":true},\"dependentSchemas\":{\"foo\":{\"properties\":"
        "{\"bar\":{\"const\":\"bar\"}},\"required\":[\"bar\"]}},"
        "\"unevaluatedProperties\":false}";
    expect_valid(dep, "{\"foo\":1,\"bar\":\"bar\"}", 1);
    expect_valid(dep, "{\"bar\":\"bar\"}", 0);
    const char *schema_uev = "{\"unevaluatedProperties\":{\"type\":\"string\",\"minLength\":3}}";
    expect_valid(schema_uev, "{\"foo\":\"foo\"}", 1);
    expect_valid(schema_uev, "{\"foo\":\"fo\"}", 0);

    /* unevaluatedItems */
    const char *pi = "{\"prefixItems\":[{\"type\":\"string\"}],\"unevaluatedItems\":false}";
    expect_valid(pi, "[\"a\"]", 1);
    expect_valid(pi, "[\"a\",\"b\"]", 0);
    const char *it = "{\"items\":{\"type\":\"string\"},\"unevaluatedItems\":false}";
    expect_valid(it, "[\"a\",\"b\"]", 1);
    const char *ct =
        "{\"contains\":{\"type\":\"string\"},\"unevaluatedItems\":{\"type\":\"integer\"}}";
    expect_valid(ct, "[1,\"a\",2]", 1);
    expect_valid(ct, "[1,\"a\",2.5]", 0);
    const char *ai = "{\"prefixItems\":[{\"const\":\"foo\"}],\"allOf\":[{\"prefixItems\":[true,"
                     "{\"const\":\"bar\"}]}],\"unevaluatedItems\":false}";
    expect_valid(ai, "[\"foo\",\"bar\"]", 1);
    expect_valid(ai, "[\"foo\",\"bar\",\"baz\"]", 0);
    const char *uncle = "{\"properties\":{\"foo\":{\"prefixItems\":[{\"type\":\"string\"}],"
                        "\"unevaluatedItems\":false}},\"anyOf\":[{\"properties\":{\"foo\":"
                        "{\"prefixItems\":[true,{\"type\":\"string\"}]}}}]}";
    expect_valid(uncle, "{\"foo\":[\"test\"]}", 1);
    expect_valid(uncle, "{\"foo\":[\"test\",\"test\"]}", 0);
    /* draft 7 has no unevaluated*: the keyword is ignored there */
    expect_valid("{\"$schema\":\"http://json-schema.org/draft-07/schema#\","
                 "\"unevaluatedProperties\":false}",
                 "{\"a\":1}", 1);
}

/* The instance parser (RFC 8259) behind agt_schema_validate(). */
static void test_parser(void)
{
    agt_schema *any = compile("true");
    static const char *bad[] = {"",
                                "  ",
                                "[1,]",
                                "{\"a\":1,}",
                                "01",
                                "1.",
                                "-",
                                ".5",
                                "+1",
                                "[1 2]",
                                "tru",
                                "nul",
                                "true false",
                                "\"abc",
                                "{\"a\" 1}",
                                "{1:2}",
                                "\"\\x\"",
                                "\"\\ud800\"",
                                "\"\\udc00x\"",
                                "\"a\tb\"",
                                "\"\xff\"",
                                "\"\xc0\xaf\"",
                                "[",
                                "{\"a\":",
                                "\"\\u12\"",
                                "1e",
                                "-01"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        T_EQ_INT(validate(any, bad[i], NULL), AGT_EPARSE, "not JSON: [%s]", bad[i]);
    T_EQ_INT(validate(any, "{\n  \"a\": tru}", NULL), AGT_EPARSE, "bad token on line 2");
    T_CHECK(strstr(agt_error_message(), "line 2, column 8") != NULL, "line and column: %s",
            agt_error_message());
    static const char *good[] = {"0",
                                 "1e400",
                                 "-1e-400",
                                 "-0",
                                 "1.5e-3",
                                 "1E+2",
                                 " [ ] ",
                                 "{}",
                                 "\"\\u0000\"",
                                 "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"",
                                 "null",
                                 "-9223372036854775808",
                                 "123456789012345678901234567890",
                                 "[[[{\"a\":[]}]]]"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        T_EQ_INT(validate(any, good[i], NULL), AGT_OK, "JSON: [%s]", good[i]);
    agt_schema_free(any);

    /* escapes decode to code points */
    expect_valid("{\"maxLength\":1}", "\"\\u00e9\"", 1);
    expect_valid("{\"maxLength\":1}", "\"\\ud83d\\udca9\"", 1);
    expect_valid("{\"const\":\"\xf0\x9f\x92\xa9\"}", "\"\\ud83d\\udca9\"", 1);
    expect_valid("{\"const\":\"a\\u0000b\"}", "\"a\\u0000b\"", 1);
    expect_valid("{\"const\":\"a\\u0000b\"}", "\"a\\u0000c\"", 0);
    expect_valid("{\"type\":\"integer\"}", "-9223372036854775808", 1);
    expect_valid("{\"type\":\"integer\"}", "123456789012345678901234567890", 1);
    expect_valid("{\"minimum\":1e20}", "123456789012345678901234567890", 1);
    expect_valid("{\"type\":\"integer\"}", "1e2", 1);
    /* a repeated key: the last value wins */
    expect_valid("{\"properties\":{\"a\":{\"type\":\"string\"}}}", "{\"a\":1,\"a\":\"x\"}", 1);
    expect_valid("{\"maxProperties\":1}", "{\"a\":1,\"a\":2}", 1);
    /* escaped keys in instance paths */
    expect_error("{\"additionalProperties\":false}", "{\"a\\/b\":1}", "/a~1b",
                 "/additionalProperties", "additionalProperties", "property 'a/b' is not allowed");
    /* a long array and a long string (scratch and arena growth) */
    size_t n = 5000;
    char *big = malloc(n * 2 + 3);
    big[0] = '[';
    for (size_t i = 0; i < n; i++) {
        big[1 + 2 * i] = '1';
        big[2 + 2 * i] = ',';
    }
    big[2 * n] = ']';
    big[2 * n + 1] = '\0';
    expect_valid("{\"items\":{\"const\":1},\"minItems\":5000,\"maxItems\":5000}", big, 1);
    memset(big, 'x', 2 * n);
    big[0] = '"';
    big[2 * n - 1] = '"';
    big[2 * n] = '\0';
    expect_valid("{\"minLength\":9998,\"maxLength\":9998}", big, 1);
    free(big);
}

static void test_hostile(void)
{
    /* uniqueItems on a large array is not quadratic, and finds the pair */
    size_t n = 100000;
    agti_buf b = AGTI_BUF_INIT;
    agti_buf_putc(&b, '[');
    for (size_t i = 0; i < n; i++)
        agti_buf_printf(&b, "%s{\"k\":%zu,\"v\":[%zu.5]}", i ? "," : "", i, i);
    agti_buf_puts(&b, ",{\"v\":[17.5],\"k\":17.0}]");
    agt_schema *s = compile("{\"uniqueItems\":true}");
    char *errs = NULL;
    T_EQ_INT(validate(s, agti_buf_cstr(&b), &errs), AGT_EINVALID, "duplicate among 100,001 items");
    char *m = first_field(errs, "message");
    T_EQ_STR(m, "must not contain duplicate items (items 17 and 100000 are equal)",
             "the duplicate pair is named");
    free(m);
    agt_free(errs);
    agti_buf_truncate(&b, b.len - strlen(",{\"v\":[17.5],\"k\":17.0}]"));
    agti_buf_puts(&b, ",1,true,\"1\",[1]]");
    T_EQ_INT(validate(s, agti_buf_cstr(&b), NULL), AGT_OK, "100,004 distinct items");
    agt_schema_free(s);
    agti_buf_free(&b);

    /* a schema nested deeper than the compile limit is refused, not a crash */
    json_t *root = json_object(), *cur = root;
    for (int i = 0; i < 5000; i++) {
        json_t *sub = json_object();
        json_object_set_new(cur, "not", sub);
        cur = sub;
    }
    agt_schema *deep = NULL;
    T_EQ_INT(agti_schema_compile_json(&deep, root, NULL), AGT_EINVALID, "5,000 nested 'not'");
    T_CHECK(strstr(agt_error_message(), "deeper than") != NULL, "message: %.80s",
            agt_error_message());
    json_decref(root);
    /* so is a chain of 5,000 $refs */
    agti_buf_puts(&b, "{\"$ref\":\"#/$defs/d0\",\"$defs\":{");
    for (int i = 0; i < 5000; i++)
        agti_buf_printf(&b, "%s\"d%d\":{\"$ref\":\"#/$defs/d%d\"}", i ? "," : "", i, i + 1);
    agti_buf_puts(&b, ",\"d5000\":{\"type\":\"string\"}}}");
    T_EQ_INT(agt_schema_compile(&deep, agti_buf_cstr(&b), b.len), AGT_EINVALID,
             "a chain of 5,000 $refs");
    agti_buf_free(&b);
    /* a pathological pattern is bounded by PCRE2's match limit */
    s = compile("{\"pattern\":\"^(a+)+$\"}");
    T_EQ_INT(validate(s, "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab\"", NULL), AGT_EINVALID,
             "catastrophic backtracking ends");
    agt_schema_free(s);
}

typedef struct {
    const agt_schema *s;
    int bad;
} thread_arg;

static void *thread_main(void *p)
{
    thread_arg *a = p;
    for (int i = 0; i < 2000; i++) {
        char *errs = NULL;
        if (validate(a->s, "{\"name\":\"abc\",\"tags\":{\"x-1\":1}}", NULL) != AGT_OK)
            a->bad++;
        if (validate(a->s, "{\"name\":\"ABC\",\"tags\":{\"x-1\":\"1\"}}", &errs) != AGT_EINVALID ||
            error_count(errs) != 2)
            a->bad++;
        agt_free(errs);
    }
    return NULL;
}

/* A compiled schema is shared by threads (the PCRE2 match block cache). */
static void test_threads(void)
{
    agt_schema *s = compile("{\"properties\":{\"name\":{\"pattern\":\"^[a-z]+$\"},"
                            "\"tags\":{\"patternProperties\":{\"^x-\":{\"type\":\"integer\"}}}}}");
    pthread_t th[4];
    thread_arg args[4];
    for (int i = 0; i < 4; i++) {
        args[i].s = s;
        args[i].bad = 0;
        pthread_create(&th[i], NULL, thread_main, &args[i]);
    }
    int bad = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        bad += args[i].bad;
    }
    T_EQ_INT(bad, 0, "4 threads x 4,000 validations on one schema");
    agt_schema_free(s);
}

#define D4 "\"$schema\":\"http://json-schema.org/draft-04/schema#\""
#define D6 "\"$schema\":\"http://json-schema.org/draft-06/schema#\""
#define D19 "\"$schema\":\"https://json-schema.org/draft/2019-09/schema\""

/* Drafts 4 and 6: their own keywords (draft-04 and draft-06 texts). */
static void test_draft4_6(void)
{
    /* draft 4 section 5.1.2: exclusiveMaximum is a boolean modifying maximum */
    expect_error("{" D4 ",\"maximum\":5,\"exclusiveMaximum\":true}", "5", "", "/exclusiveMaximum",
                 "exclusiveMaximum", "must be less than 5");
    expect_valid("{" D4 ",\"maximum\":5,\"exclusiveMaximum\":true}", "4.5", 1);
    expect_valid("{" D4 ",\"maximum\":5,\"exclusiveMaximum\":false}", "5", 1);
    expect_error("{" D4 ",\"minimum\":2,\"exclusiveMinimum\":true}", "2", "", "/exclusiveMinimum",
                 "exclusiveMinimum", "must be greater than 2");
    expect_bad_schema("{" D4 ",\"exclusiveMaximum\":3}", AGT_EINVALID,
                      "\"exclusiveMaximum\" must be a boolean in draft 4");
    /* draft 6 section 6.3: a number */
    expect_error("{" D6 ",\"exclusiveMaximum\":3}", "3", "", "/exclusiveMaximum",
                 "exclusiveMaximum", "must be less than 3");
    /* no const, contains, propertyNames in draft 4; no if in 4 and 6 */
    expect_valid("{" D4 ",\"const\":1}", "2", 1);
    expect_valid("{" D4 ",\"contains\":{\"type\":\"string\"}}", "[1]", 1);
    expect_valid("{" D4 ",\"propertyNames\":{\"maxLength\":1}}", "{\"long\":1}", 1);
    expect_valid("{" D6 ",\"if\":{\"type\":\"string\"},\"then\":{\"minLength\":3}}", "\"ab\"", 1);
    expect_valid("{" D6 ",\"contains\":{\"const\":1}}", "[2]", 0);
    expect_valid("{" D6 ",\"contains\":{\"const\":1}}", "[2,1]", 1);
    /* draft 4: an integer has no fraction part, 1.0 is a number */
    expect_error("{" D4 ",\"type\":\"integer\"}", "1.0", "", "/type", "type",
                 "expected integer, got number");
    expect_valid("{" D4 ",\"type\":\"integer\"}", "1", 1);
    expect_valid("{" D6 ",\"type\":\"integer\"}", "1.0", 1);
    /* draft 4 identifies with "id"; "$id" means nothing there */
    expect_valid("{" D4
                 ",\"id\":\"http://x.test/r.json\",\"properties\":{\"p\":{\"$ref\":\"#foo\"}},"
                 "\"definitions\":{\"a\":{\"id\":\"#foo\",\"type\":\"string\"}}}",
                 "{\"p\":1}", 0);
    expect_valid("{" D4
                 ",\"id\":\"http://x.test/r.json\",\"properties\":{\"p\":{\"$ref\":\"#foo\"}},"
                 "\"definitions\":{\"a\":{\"id\":\"#foo\",\"type\":\"string\"}}}",
                 "{\"p\":\"s\"}", 1);
    expect_bad_schema("{" D4 ",\"properties\":{\"p\":{\"$ref\":\"http://x.test/s.json\"}},"
                      "\"definitions\":{\"a\":{\"$id\":\"http://x.test/s.json\"}}}",
                      AGT_ENOTFOUND, "http://x.test/s.json");
    /* no boolean schemas in draft 4, except the boolean forms of additional* */
    expect_bad_schema("{" D4 ",\"items\":true}", AGT_EINVALID, "draft 4 has no boolean schemas");
    expect_error("{" D4 ",\"additionalProperties\":false}", "{\"a\":1}", "/a",
                 "/additionalProperties", "additionalProperties", "property 'a' is not allowed");
    expect_error("{" D4 ",\"items\":[{}],\"additionalItems\":false}", "[1,2]", "/1",
                 "/additionalItems", "additionalItems", "item 1 is not allowed (at most 1 items)");
    /* dependencies: names or a schema */
    expect_error("{" D4 ",\"dependencies\":{\"a\":[\"b\"]}}", "{\"a\":1}", "", "/dependencies",
                 "dependencies", "missing property 'b', required when 'a' is present");
    expect_valid("{" D4 ",\"dependencies\":{\"a\":{\"required\":[\"c\"]}}}", "{\"a\":1,\"c\":2}",
                 1);
    expect_valid("{" D4 ",\"dependencies\":{\"a\":{\"required\":[\"c\"]}}}", "{\"a\":1}", 0);
    /* the draft chosen by option when there is no "$schema" */
    agt_schema_options *o = NULL;
    agt_schema_options_new(&o);
    T_EQ_INT(agt_schema_options_set_draft(o, AGT_DRAFT_4), AGT_OK, "AGT_DRAFT_4 accepted");
    agt_schema *s = NULL;
    const char *sch = "{\"type\":\"integer\"}";
    T_EQ_INT(agt_schema_compile_with(&s, sch, strlen(sch), o), AGT_OK, "draft 4 by option");
    T_EQ_INT(validate(s, "1.0", NULL), AGT_EINVALID, "draft 4 by option: 1.0 is not an integer");
    agt_schema_free(s);
    const char *b = "false";
    s = (agt_schema *)1;
    T_EQ_INT(agt_schema_compile_with(&s, b, strlen(b), o), AGT_EINVALID,
             "draft 4 by option: a boolean schema is refused");
    T_CHECK(strstr(agt_error_message(), "draft 4 has no boolean schemas") != NULL, "says why: %s",
            agt_error_message());
    T_EQ_INT(agt_schema_options_set_draft(o, AGT_DRAFT_6), AGT_OK, "AGT_DRAFT_6 accepted");
    sch = "{\"if\":false,\"else\":false}";
    T_EQ_INT(agt_schema_compile_with(&s, sch, strlen(sch), o), AGT_OK, "draft 6 by option");
    T_EQ_INT(validate(s, "1", NULL), AGT_OK, "draft 6 by option: no if/else");
    agt_schema_free(s);
    /* a "$schema" wins over the option */
    sch = "{" D4 ",\"type\":\"integer\"}";
    T_EQ_INT(agt_schema_compile_with(&s, sch, strlen(sch), o), AGT_OK, "draft 4 by $schema");
    T_EQ_INT(validate(s, "1.0", NULL), AGT_EINVALID, "draft 4 by $schema over option 6");
    agt_schema_free(s);
    agt_schema_options_free(o);
}

/* 2019-09 (draft 2019-09 core and validation texts). */
static void test_draft2019(void)
{
    /* items as an array, additionalItems; prefixItems is not a keyword */
    expect_valid("{" D19 ",\"items\":[{\"type\":\"string\"}],\"additionalItems\":false}", "[\"a\"]",
                 1);
    expect_error("{" D19 ",\"items\":[{\"type\":\"string\"}],\"additionalItems\":false}",
                 "[\"a\",1]", "/1", "/additionalItems", "additionalItems",
                 "item 1 is not allowed (at most 1 items)");
    expect_valid("{" D19 ",\"prefixItems\":[{\"type\":\"string\"}]}", "[1]", 1);
    /* $ref beside other keywords (core 8.2.4.1), unevaluated* see through it */
    expect_valid("{" D19 ",\"$ref\":\"#/$defs/a\",\"unevaluatedProperties\":false,"
                 "\"$defs\":{\"a\":{\"properties\":{\"a\":true}}}}",
                 "{\"a\":1}", 1);
    expect_error("{" D19 ",\"$ref\":\"#/$defs/a\",\"unevaluatedProperties\":false,"
                 "\"$defs\":{\"a\":{\"properties\":{\"a\":true}}}}",
                 "{\"a\":1,\"b\":2}", "/b", "/unevaluatedProperties", "unevaluatedProperties",
                 "property 'b' is not allowed");
    expect_valid("{" D19 ",\"items\":[true],\"unevaluatedItems\":false}", "[1]", 1);
    expect_error("{" D19 ",\"items\":[true],\"unevaluatedItems\":false}", "[1,2]", "/1",
                 "/unevaluatedItems", "unevaluatedItems", "item 1 is not allowed");
    expect_valid("{" D19 ",\"items\":[true],\"additionalItems\":true,\"unevaluatedItems\":false}",
                 "[1,2]", 1);
    /* dependentRequired, dependentSchemas, minContains */
    expect_error("{" D19 ",\"dependentRequired\":{\"a\":[\"b\"]}}", "{\"a\":1}", "",
                 "/dependentRequired", "dependentRequired",
                 "missing property 'b', required when 'a' is present");
    expect_valid("{" D19 ",\"dependentSchemas\":{\"a\":{\"maxProperties\":1}}}",
                 "{\"a\":1,\"b\":2}", 0);
    expect_valid("{" D19 ",\"contains\":{\"const\":1},\"minContains\":2}", "[1]", 0);
    expect_valid("{" D19 ",\"contains\":{\"const\":1},\"minContains\":2}", "[1,2,1]", 1);
    /* $anchor is an anchor, $dynamicAnchor is not (it is 2020-12's) */
    expect_valid("{" D19
                 ",\"$ref\":\"#s\",\"$defs\":{\"x\":{\"$anchor\":\"s\",\"type\":\"string\"}}}",
                 "1", 0);
    expect_bad_schema("{" D19 ",\"$ref\":\"#s\",\"$defs\":{\"x\":{\"$dynamicAnchor\":\"s\"}}}",
                      AGT_ENOTFOUND, "no anchor 's'");
    /* $recursiveRef (core 8.2.4.2): a tree whose nodes may be strings or
     * objects of nodes; the outer schema extends it to allow integers. With
     * "$recursiveAnchor": true on both, "#" in node.json means the outermost
     * resource of the dynamic scope, so integers are allowed deep inside. */
    const char *tree = "{" D19 ",\"$id\":\"http://x.test/tree.json\",%s"
                       "\"anyOf\":[{\"type\":\"integer\"},{\"$ref\":\"node.json\"}],"
                       "\"$defs\":{\"node\":{\"$id\":\"node.json\",%s\"anyOf\":[{\"type\":"
                       "\"string\"},{\"type\":\"object\",\"additionalProperties\":"
                       "{\"$recursiveRef\":\"#\"}}]}}}";
    char buf[1024];
    const char *on = "\"$recursiveAnchor\":true,", *off = "\"$recursiveAnchor\":false,";
    snprintf(buf, sizeof buf, tree, on, on);
    expect_valid(buf, "{\"a\":1}", 1);
    expect_valid(buf, "{\"a\":{\"b\":2}}", 1);
    expect_valid(buf, "{\"a\":{\"b\":null}}", 0);
    /* no anchor on the outer resource: "#" stays node.json */
    snprintf(buf, sizeof buf, tree, "", on);
    expect_valid(buf, "{\"a\":\"x\"}", 1);
    expect_valid(buf, "{\"a\":1}", 0);
    /* the target itself without the anchor: like "$ref" */
    snprintf(buf, sizeof buf, tree, on, off);
    expect_valid(buf, "{\"a\":1}", 0);
    expect_valid(buf, "{\"a\":{\"b\":\"x\"}}", 1);
    /* the error names the keyword and the branch reasons */
    snprintf(buf, sizeof buf, tree, "", on);
    expect_error(buf, "{\"a\":1}", "", "/anyOf", "anyOf", NULL);
    /* by option */
    agt_schema_options *o = NULL;
    agt_schema_options_new(&o);
    T_EQ_INT(agt_schema_options_set_draft(o, AGT_DRAFT_2019_09), AGT_OK, "AGT_DRAFT_2019_09");
    agt_schema *s = NULL;
    const char *sch = "{\"items\":[{\"type\":\"string\"}]}";
    T_EQ_INT(agt_schema_compile_with(&s, sch, strlen(sch), o), AGT_OK, "2019-09 by option");
    T_EQ_INT(validate(s, "[1]", NULL), AGT_EINVALID, "2019-09 by option: items array applies");
    agt_schema_free(s);
    agt_schema_options_free(o);
    /* 2020-12 also honours "dependencies" (the suite's optional
     * dependencies-compatibility) */
    expect_error("{\"dependencies\":{\"a\":[\"b\"]}}", "{\"a\":1}", "", "/dependencies",
                 "dependencies", "missing property 'b', required when 'a' is present");
}

/* $vocabulary of a custom meta-schema (2020-12 core 8.1.2). */
static void test_vocabulary(void)
{
    agt_schema_options *o = NULL;
    agt_schema_options_new(&o);
    const char *noval = "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\","
                        "\"$id\":\"http://x.test/noval\",\"$vocabulary\":{"
                        "\"https://json-schema.org/draft/2020-12/vocab/core\":true,"
                        "\"https://json-schema.org/draft/2020-12/vocab/applicator\":true}}";
    const char *fmt = "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\","
                      "\"$id\":\"http://x.test/fmt\",\"$vocabulary\":{"
                      "\"https://json-schema.org/draft/2020-12/vocab/core\":true,"
                      "\"https://json-schema.org/draft/2020-12/vocab/format-assertion\":false}}";
    const char *unknown = "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\","
                          "\"$vocabulary\":{\"https://json-schema.org/draft/2020-12/vocab/core\":"
                          "true,\"http://x.test/vocab/colours\":true}}";
    const char *optional = "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\","
                           "\"$vocabulary\":{\"https://json-schema.org/draft/2020-12/vocab/core\":"
                           "true,\"https://json-schema.org/draft/2020-12/vocab/validation\":true,"
                           "\"http://x.test/vocab/colours\":false}}";
    agt_schema_options_add_resource(o, "http://x.test/noval", noval, strlen(noval));
    agt_schema_options_add_resource(o, "http://x.test/fmt", fmt, strlen(fmt));
    agt_schema_options_add_resource(o, "http://x.test/unknown", unknown, strlen(unknown));
    agt_schema_options_add_resource(o, "http://x.test/optional", optional, strlen(optional));
    agt_schema *s = NULL;
    const char *sch = "{\"$schema\":\"http://x.test/noval\",\"properties\":{\"bad\":false,"
                      "\"n\":{\"minimum\":10}}}";
    T_EQ_INT(agt_schema_compile_with(&s, sch, strlen(sch), o), AGT_OK, "no-validation dialect");
    T_EQ_INT(validate(s, "{\"n\":1}", NULL), AGT_OK, "no validation vocabulary: minimum unknown");
    T_EQ_INT(validate(s, "{\"bad\":1}", NULL), AGT_EINVALID, "applicators still apply");
    agt_schema_free(s);
    sch = "{\"$schema\":\"http://x.test/fmt\",\"format\":\"ipv4\"}";
    T_EQ_INT(agt_schema_compile_with(&s, sch, strlen(sch), o), AGT_OK, "format-assertion dialect");
    T_EQ_INT(validate(s, "\"1.2.3\"", NULL), AGT_EINVALID,
             "format-assertion vocabulary: format asserts with the option off");
    T_EQ_INT(validate(s, "\"1.2.3.4\"", NULL), AGT_OK, "a valid ipv4");
    agt_schema_free(s);
    sch = "{\"$schema\":\"http://x.test/unknown\"}";
    s = (agt_schema *)1;
    T_EQ_INT(agt_schema_compile_with(&s, sch, strlen(sch), o), AGT_EINVALID,
             "a required unknown vocabulary is refused");
    T_EQ_STR(agt_error_message(),
             "meta-schema 'http://x.test/unknown' requires the vocabulary "
             "'http://x.test/vocab/colours', which is not supported",
             "the message names the meta-schema and the vocabulary");
    sch = "{\"$schema\":\"http://x.test/optional\",\"type\":\"number\"}";
    T_EQ_INT(agt_schema_compile_with(&s, sch, strlen(sch), o), AGT_OK,
             "an optional unknown vocabulary is ignored");
    T_EQ_INT(validate(s, "\"x\"", NULL), AGT_EINVALID, "validation vocabulary applies");
    agt_schema_free(s);
    agt_schema_options_free(o);
}

/* Numbers compared by the value written, past 64 bits and past a double's
 * 15 to 17 digits (values checked with Python's decimal module). */
static void test_exact_numbers(void)
{
    expect_error("{\"maximum\":18446744073709551615}", "18446744073709551616", "", "/maximum",
                 "maximum", "must be at most 18446744073709551615");
    expect_valid("{\"maximum\":18446744073709551615}", "18446744073709551615", 1);
    expect_error("{\"exclusiveMinimum\":0.1000000000000000000001}", "0.1", "", "/exclusiveMinimum",
                 "exclusiveMinimum", "must be greater than 0.1000000000000000000001");
    expect_valid("{\"exclusiveMinimum\":0.1000000000000000000001}", "0.10000000000000000000011", 1);
    expect_error("{\"const\":12345678901234567890123}", "12345678901234567890124", "", "/const",
                 "const", "must be equal to 12345678901234567890123");
    expect_valid("{\"const\":12345678901234567890123}", "12345678901234567890123.0", 1);
    expect_valid("{\"enum\":[1e400]}", "1e400", 1);
    expect_valid("{\"enum\":[1e400]}", "10e399", 1);
    expect_valid("{\"enum\":[1e400]}", "1e401", 0);
    expect_valid("{\"multipleOf\":1.0000000000000000001}", "2.0000000000000000002", 1);
    expect_error("{\"multipleOf\":1.0000000000000000001}", "2", "", "/multipleOf", "multipleOf",
                 "must be a multiple of 1.0000000000000000001");
    expect_valid("{\"multipleOf\":3}", "100000000000000000000000000002", 1);
    expect_error("{\"multipleOf\":3}", "100000000000000000000000000001", "", "/multipleOf",
                 "multipleOf", "must be a multiple of 3");
    /* 1e308 / 0.5 overflows a double; the remainder is exact */
    expect_valid("{\"type\":\"integer\",\"multipleOf\":0.5}", "1e308", 1);
    expect_valid("{\"type\":\"integer\"}", "123456789012345678901234567890", 1);
    expect_valid("{\"type\":\"integer\"}", "1e400", 1);
    expect_error("{\"type\":\"integer\"}", "1234567890123456789012.5", "", "/type", "type",
                 "expected integer, got number");
    expect_valid("{" D4 ",\"type\":\"integer\"}", "123456789012345678901234567890", 1);
    expect_valid("{" D4 ",\"type\":\"integer\"}", "1e400", 0);
    expect_error("{\"uniqueItems\":true}", "[12345678901234567890123,12345678901234567890123.0]",
                 "", "/uniqueItems", "uniqueItems",
                 "must not contain duplicate items (items 0 and 1 are equal)");
    expect_valid("{\"uniqueItems\":true}", "[12345678901234567890123,12345678901234567890124]", 1);
    /* draft 4's boolean exclusiveMaximum moves a big limit too */
    expect_error("{" D4 ",\"maximum\":18446744073709551615,\"exclusiveMaximum\":true}",
                 "18446744073709551615", "", "/exclusiveMaximum", "exclusiveMaximum",
                 "must be less than 18446744073709551615");
    /* through the errors list too: the message keeps the text */
    agt_schema *s = compile("{\"maximum\":18446744073709551615}");
    char *errs = NULL;
    T_EQ_INT(validate(s, "1e20", &errs), AGT_EINVALID, "1e20 > 2^64 - 1");
    char *m = first_field(errs, "message");
    T_EQ_STR(m, "must be at most 18446744073709551615", "message with the exact limit");
    free(m);
    agt_free(errs);
    agt_schema_free(s);
}

/* ECMA-262 regular expressions (ECMA-262 22.2; JSON Schema uses its Unicode
 * mode). */
static void test_ecma_regex(void)
{
    /* \s is WhiteSpace + LineTerminator: U+FEFF is in, U+0085 is not */
    expect_valid("{\"pattern\":\"^\\\\s$\"}", "\"\\ufeff\"", 1);
    expect_valid("{\"pattern\":\"^\\\\s$\"}", "\"\\u0085\"", 0);
    expect_valid("{\"pattern\":\"^\\\\s$\"}", "\"\\u3000\"", 1);
    expect_valid("{\"pattern\":\"^\\\\S$\"}", "\"\\ufeff\"", 0);
    expect_valid("{\"pattern\":\"^\\\\S$\"}", "\"\\u0085\"", 1);
    expect_valid("{\"pattern\":\"^[\\\\s]$\"}", "\"\\u2029\"", 1);
    /* "." stops at the four line terminators only */
    expect_valid("{\"pattern\":\"^.$\"}", "\"\\u2028\"", 0);
    expect_valid("{\"pattern\":\"^.$\"}", "\"\\r\"", 0);
    expect_valid("{\"pattern\":\"^.$\"}", "\"\\u0085\"", 1);
    expect_valid("{\"pattern\":\"^.$\"}", "\"\xf0\x9f\x90\xb2\"", 1); /* U+1F432: one character */
    /* \b is ASCII: between "a" and "é" there is a boundary */
    expect_valid("{\"pattern\":\"a\\\\b\"}", "\"a\xc3\xa9\"", 1);
    expect_valid("{\"pattern\":\"a\\\\B\"}", "\"a\xc3\xa9\"", 0);
    expect_valid("{\"pattern\":\"a\\\\b\"}", "\"ab\"", 0);
    /* what ECMA-262 rejects */
    expect_bad_schema("{\"pattern\":\"\\\\a\"}", AGT_EINVALID,
                      "'\\a': an escaped letter that ECMA-262 does not define");
    expect_bad_schema("{\"pattern\":\"\\\\Z\"}", AGT_EINVALID, "does not define");
    expect_bad_schema("{\"pattern\":\"(?i)a\"}", AGT_EINVALID,
                      "only (?:, (?=, (?!, (?<=, (?<! and (?<name> groups are ECMA-262");
    expect_bad_schema("{\"pattern\":\"(?P<n>a)\"}", AGT_EINVALID, "groups are ECMA-262");
    expect_bad_schema("{\"pattern\":\"(?#note)a\"}", AGT_EINVALID, "groups are ECMA-262");
    /* and what it accepts */
    expect_valid("{\"pattern\":\"^(?<y>\\\\d{4})-(?:\\\\d\\\\d)$\"}", "\"2024-05\"", 1);
    expect_valid("{\"pattern\":\"(?<=a)b(?!c)\"}", "\"ab\"", 1);
    expect_valid("{\"pattern\":\"^\\\\cJ\\\\x41\\\\u0042\\\\t$\"}", "\"\\nAB\\t\"", 1);
}

/* One format assertion: {"format": fmt} (in draft `draft`) against the JSON
 * string `inst`. */
static void fmt_case(int draft, const char *fmt, const char *inst, int valid)
{
    agt_schema_options *o = NULL;
    agt_schema_options_new(&o);
    agt_schema_options_set_draft(o, draft);
    agt_schema_options_set_format_assertion(o, 1);
    char sch[128];
    snprintf(sch, sizeof sch, "{\"format\":\"%s\"}", fmt);
    agt_schema *s = NULL;
    int rc = agt_schema_compile_with(&s, sch, strlen(sch), o);
    T_EQ_INT(rc, AGT_OK, "compile %s", sch);
    char *text = agti_aprintf("\"%s\"", inst);
    T_EQ_INT(s ? validate(s, text, NULL) : AGT_ERROR, valid ? AGT_OK : AGT_EINVALID,
             "%s %s (draft %d): %s", fmt, text, draft, valid ? "valid" : "invalid");
    free(text);
    agt_schema_free(s);
    agt_schema_options_free(o);
}

/* Formats, from their RFCs' grammars. */
static void test_formats(void)
{
    const int D = AGT_DRAFT_2020_12;
    /* RFC 3339 appendix A: dur-year = 1*DIGIT "Y" [dur-month], ... */
    fmt_case(D, "duration", "P1Y2M3DT4H5M6S", 1);
    fmt_case(D, "duration", "P4W", 1);
    fmt_case(D, "duration", "PT36H", 1);
    fmt_case(D, "duration", "P2M3D", 1);
    fmt_case(D, "duration", "P", 0);
    fmt_case(D, "duration", "PT", 0);
    fmt_case(D, "duration", "P1DT", 0);
    fmt_case(D, "duration", "P1Y3D", 0);  /* a year is followed by months only */
    fmt_case(D, "duration", "PT1H1S", 0); /* an hour by minutes only */
    fmt_case(D, "duration", "P1W2D", 0);
    fmt_case(D, "duration", "P1.5Y", 0);
    /* hostname: RFC 1123; from draft 7 "--" in positions 3-4 only in A-labels */
    fmt_case(D, "hostname", "www.example.com", 1);
    fmt_case(D, "hostname", "xn--bcher-kva.example", 1); /* bücher */
    fmt_case(D, "hostname", "ab--cd.example", 0);
    fmt_case(AGT_DRAFT_4, "hostname", "ab--cd.example", 1);
    fmt_case(D, "hostname", "-a.example", 0);
    fmt_case(D, "hostname", "a_b.example", 0);
    fmt_case(D, "hostname",
             "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.example", 0);
    /* idn-hostname: IDNA2008 */
    fmt_case(D, "idn-hostname",
             "b\xc3\xbc"
             "cher.example",
             1);
    fmt_case(D, "idn-hostname", "l\xc2\xb7l.example", 1); /* MIDDLE DOT between l and l */
    fmt_case(D, "idn-hostname", "a\xc2\xb7l.example", 0); /* RFC 5892 A.3 */
    fmt_case(D, "idn-hostname", "0a.\xd7\x90", 0);        /* Bidi rule 1 */
    fmt_case(D, "idn-hostname",
             "\xe4\xbe\x8b\xe3\x80\x82"
             "com",
             1); /* U+3002 separates */
    fmt_case(D, "idn-hostname",
             "B\xc3\xbc"
             "cher.example",
             0); /* upper case is not PVALID */
    /* email: RFC 5321 4.1.2 */
    fmt_case(D, "email", "joe.bloggs@example.com", 1);
    fmt_case(D, "email", "\\\"joe bloggs\\\"@example.com", 1);
    fmt_case(D, "email", "joe@[127.0.0.1]", 1);
    fmt_case(D, "email", "joe@[IPv6:::1]", 1);
    fmt_case(D, "email", "joe..bloggs@example.com", 0);
    fmt_case(D, "email",
             "j\xc3\xb6"
             "e@example.com",
             0);
    fmt_case(D, "idn-email",
             "j\xc3\xb6"
             "e@b\xc3\xbc"
             "cher.example",
             1);
    fmt_case(D, "idn-email", "joe@", 0);
    /* uri / uri-reference / iri: RFC 3986 and 3987 */
    fmt_case(D, "uri", "http://example.com/a?b#c", 1);
    fmt_case(D, "uri", "http://[::1]:80/", 1);
    fmt_case(D, "uri", "urn:isbn:0451450523", 1);
    fmt_case(D, "uri", "http://ex ample.com", 0);
    fmt_case(D, "uri", "//example.com", 0);
    fmt_case(D, "uri", "http://example.com:8o/", 0);
    fmt_case(D, "uri", "http://example.com/\xc3\xa4", 0);
    fmt_case(D, "iri", "http://example.com/\xc3\xa4", 1);
    fmt_case(D, "iri", "/\xc3\xa4", 0);
    fmt_case(D, "iri-reference", "/\xc3\xa4", 1);
    fmt_case(D, "uri-reference", "//example.com/x", 1);
    fmt_case(D, "uri-reference", "#frag", 1);
    fmt_case(D, "uri-reference", "../x", 1);
    fmt_case(D, "uri-reference", "a b", 0);
    fmt_case(D, "uri-reference", "\\\\\\\\server", 0);
    fmt_case(D, "uri-reference", "%zz", 0);
    /* uri-template: RFC 6570 section 2 */
    fmt_case(D, "uri-template", "http://example.com/{user}/{+path}{?q,lang}", 1);
    fmt_case(D, "uri-template", "{var:30}{list*}{a.b}", 1);
    fmt_case(D, "uri-template", "{var:0}", 0);
    fmt_case(D, "uri-template", "{var:10000}", 0);
    fmt_case(D, "uri-template", "{a..b}", 0);
    fmt_case(D, "uri-template", "x{}", 0);
    fmt_case(D, "uri-template", "{open", 0);
    /* json-pointer (RFC 6901), relative-json-pointer */
    fmt_case(D, "json-pointer", "", 1);
    fmt_case(D, "json-pointer", "/a~1b/~0", 1);
    fmt_case(D, "json-pointer", "/a~2", 0);
    fmt_case(D, "json-pointer", "a", 0);
    fmt_case(D, "relative-json-pointer", "0", 1);
    fmt_case(D, "relative-json-pointer", "1/a", 1);
    fmt_case(D, "relative-json-pointer", "2#", 1);
    fmt_case(D, "relative-json-pointer", "0+1/a", 1);
    fmt_case(D, "relative-json-pointer", "01", 0);
    fmt_case(D, "relative-json-pointer", "-1", 0);
    fmt_case(D, "relative-json-pointer", "1##", 0);
    fmt_case(D, "relative-json-pointer", "0-0", 0);
    /* regex: ECMA-262; a variable-width lookbehind is ECMA-262 (ES2018) */
    fmt_case(D, "regex", "^a(b|c)$", 1);
    fmt_case(D, "regex", "(?<=a+)b", 1);
    fmt_case(D, "regex", "(?i)a", 0);
    fmt_case(D, "regex", "\\\\a", 0);
    fmt_case(D, "regex", "a(", 0);
    /* the message names the format */
    agt_schema_options *o = NULL;
    agt_schema_options_new(&o);
    agt_schema_options_set_format_assertion(o, 1);
    agt_schema *s = NULL;
    const char *sch = "{\"properties\":{\"d\":{\"format\":\"duration\"}}}";
    T_EQ_INT(agt_schema_compile_with(&s, sch, strlen(sch), o), AGT_OK, "compile duration");
    char *errs = NULL;
    T_EQ_INT(validate(s, "{\"d\":\"P1Y3D\"}", &errs), AGT_EINVALID, "P1Y3D refused");
    char *m = first_field(errs, "message");
    T_EQ_STR(m, "is not a valid duration", "format message");
    free(m);
    agt_free(errs);
    agt_schema_free(s);
    agt_schema_options_free(o);
    /* draft 7 content (validation 8.3); annotations only in 2020-12 */
    const char *content = "{\"$schema\":\"http://json-schema.org/draft-07/schema#\","
                          "\"contentEncoding\":\"base64\",\"contentMediaType\":"
                          "\"application/json\"}";
    expect_valid(content, "\"e30=\"", 1); /* {} */
    expect_error(content, "\"e30\"", "", "/contentEncoding", "contentEncoding",
                 "is not valid base64 (RFC 4648: A-Z a-z 0-9 + /, padded with = to a multiple of 4 "
                 "characters)");
    expect_error(content, "\"ezp9\"", "", "/contentMediaType", "contentMediaType",
                 "is not a valid application/json document once decoded from base64"); /* {:} */
    expect_valid("{\"contentEncoding\":\"base64\",\"contentMediaType\":\"application/json\"}",
                 "\"ezp9\"", 1);
}

int main(void)
{
    test_formats();
    test_ecma_regex();
    test_exact_numbers();
    test_vocabulary();
    test_draft4_6();
    test_draft2019();
    test_threads();
    test_hostile();
    test_parser();
    test_dynamic_and_unevaluated();
    test_messages();
    test_semantics();
    test_bad_input();
    test_deep_nesting();
    test_options();
    test_internal_json();
    return t_done();
}
