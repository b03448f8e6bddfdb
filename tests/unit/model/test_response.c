/*
 * Unit tests of the model response assembly (lib/model/response.c) and the
 * whole-body parsers of lib/model/http.c, on inputs the fuzz targets
 * fuzz_response and fuzz_sse found.
 */
#include <jansson.h>
#include <string.h>

#include "harness.h"
#include "model/model_internal.h"

/* Token counts whose sum does not fit in 64 bits: the total stays unknown
 * (it was computed with a signed overflow). */
static void test_usage_overflow(void)
{
    const char *j = "{\"content\":\"x\",\"usage\":{\"prompt_tokens\":9223372036854775807,"
                    "\"completion_tokens\":1}}";
    agt_model_response *r = NULL;
    T_EQ_INT(agt_model_response_parse(&r, j, strlen(j)), AGT_OK, "huge usage parses");
    int64_t p = 0, c = 0, t = 0;
    agt_model_response_usage(r, &p, &c, &t);
    T_CHECK(p == INT64_MAX && c == 1, "prompt and completion kept");
    T_EQ_INT(t, -1, "total unknown");
    T_EQ_STR(agt_model_response_json(r),
             "{\"content\":\"x\",\"tool_calls\":[],\"finish_reason\":\"stop\",\"usage\":{"
             "\"prompt_tokens\":9223372036854775807,\"completion_tokens\":1,\"total_tokens\":"
             "null}}",
             "canonical JSON: total null");
    agt_model_response_free(r);

    /* the same in an Anthropic body */
    json_t *root = json_loads("{\"content\":[{\"type\":\"text\",\"text\":\"a\"}],\"usage\":{"
                              "\"input_tokens\":9223372036854775807,\"output_tokens\":5}}",
                              0, NULL);
    r = agti_resp_new();
    T_EQ_INT(agti_parse_anthropic_body(r, root, NULL), AGT_OK, "anthropic body parses");
    T_EQ_INT(agti_resp_finish(r), AGT_OK, "anthropic response finished");
    agt_model_response_usage(r, &p, &c, &t);
    T_CHECK(p == INT64_MAX && c == 5, "anthropic input and output kept");
    T_EQ_INT(t, -1, "anthropic total unknown");
    agt_model_response_free(r);
    json_decref(root);
}

int main(void)
{
    test_usage_overflow();
    return t_done();
}
