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
             "{\"content\":\"x\",\"tool_calls\":[],\"finish_reason\":\"\",\"usage\":{"
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

/* A tool call without a function name: refused with a message, where it
 * used to give a call named "" whose canonical JSON the library's own
 * reader (replay, host models) refuses. */
static void test_nameless_call(void)
{
    json_t *root = json_loads("{\"choices\":[{\"message\":{\"content\":\"hi\",\"tool_calls\":"
                              "[{\"id\":\"x\",\"fungtion\":{\"name\":\"Bash\"}}]}}]}",
                              0, NULL);
    agt_model_response *r = agti_resp_new();
    T_EQ_INT(agti_parse_openai_body(r, root, NULL), AGT_OK, "body parses");
    T_EQ_INT(agti_resp_finish(r), AGT_EPARSE, "nameless call refused");
    T_EQ_STR(agt_error_message(), "model answer: tool call 0 (id x) has no function name",
             "message names the call");
    agt_model_response_free(r);
    json_decref(root);

    root = json_loads("{\"choices\":[{\"message\":{\"tool_calls\":[{\"index\":0,\"function\":{"
                      "\"name\":\"Read\",\"arguments\":\"{}\"}},{\"index\":1,\"function\":{"
                      "\"name\":\"\",\"arguments\":\"{}\"}}]}}]}",
                      0, NULL);
    r = agti_resp_new();
    T_EQ_INT(agti_parse_openai_body(r, root, NULL), AGT_OK, "second body parses");
    T_EQ_INT(agti_resp_finish(r), AGT_EPARSE, "empty name refused");
    T_EQ_STR(agt_error_message(), "model answer: tool call 1 has no function name",
             "message without id");
    agt_model_response_free(r);
    json_decref(root);

    /* what the reader gets back from a finished answer reads back */
    root = json_loads("{\"choices\":[{\"message\":{\"tool_calls\":[{\"function\":{"
                      "\"name\":\"Read\",\"arguments\":\"{}\"}}]}}]}",
                      0, NULL);
    r = agti_resp_new();
    agti_parse_openai_body(r, root, NULL);
    T_EQ_INT(agti_resp_finish(r), AGT_OK, "named call accepted");
    agt_model_response *back = NULL;
    const char *j = agt_model_response_json(r);
    T_EQ_INT(agt_model_response_parse(&back, j, strlen(j)), AGT_OK, "canonical JSON reads back");
    T_EQ_STR(back ? agt_model_response_json(back) : NULL,
             "{\"content\":\"\",\"tool_calls\":[{\"id\":\"call_0\",\"name\":\"Read\","
             "\"arguments\":\"{}\"}],\"finish_reason\":\"\",\"usage\":{"
             "\"prompt_tokens\":null,\"completion_tokens\":null,\"total_tokens\":null}}",
             "read back the same");
    agt_model_response_free(back);
    agt_model_response_free(r);
    json_decref(root);
}

int main(void)
{
    test_usage_overflow();
    test_nameless_call();
    return t_done();
}
