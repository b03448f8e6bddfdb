/*
 * libFuzzer target for canonical model responses (agt_model_response_parse:
 * replay lines and host model answers, lib/model/response.c).
 * Invariants: an accepted response's JSON reads back to the same JSON, and
 * its accessors agree with it; a refused one sets a message.
 */
#include <jansson.h>
#include <stdint.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536)
        return 0;
    agt_model_response *r = NULL, *back = NULL;
    if (agt_model_response_parse(&r, (const char *)data, size) != AGT_OK) {
        if (r != NULL || !*agt_error_message())
            abort();
        return 0;
    }
    const char *j = agt_model_response_json(r);
    if (agt_model_response_parse(&back, j, strlen(j)) != AGT_OK ||
        strcmp(agt_model_response_json(back), j) != 0) {
        fprintf(stderr, "read back: %s\n%s\n", j,
                back ? agt_model_response_json(back) : agt_error_message());
        abort();
    }
    json_t *o = json_loads(j, 0, NULL);
    json_t *calls = json_object_get(o, "tool_calls");
    if (o == NULL || json_array_size(calls) != agt_model_response_tool_count(r))
        abort();
    for (size_t i = 0; i < json_array_size(calls); i++) {
        json_t *c = json_array_get(calls, i);
        if (strcmp(json_string_value(json_object_get(c, "name")),
                   agt_model_response_tool_name(r, i)) != 0 ||
            strcmp(json_string_value(json_object_get(c, "id")), agt_model_response_tool_id(r, i)) !=
                0)
            abort();
    }
    json_decref(o);
    agt_model_response_free(back);
    agt_model_response_free(r);
    return 0;
}
