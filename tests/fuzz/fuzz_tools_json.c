/*
 * libFuzzer target for tools.json overrides: a host's catalogue
 * (agt_registry_load_json) and single entries (agt_registry_add_json)
 * on a registry holding one tool (Ping, as the session tests add it).
 * Input: flags byte (bit 0: add one
 * entry, else load a whole catalogue), then the JSON.
 * Invariants: all or nothing (a refused document leaves every export as it
 * was, with an error message); after an accepted one every export format
 * is valid JSON, and the "native" export loads into a new registry and
 * exports the same again.
 */
#include <jansson.h>
#include <stdint.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const formats[] = {"openai", "anthropic", "mcp", "native"};

static void export_all(agt_registry *reg, char **out)
{
    for (size_t i = 0; i < 4; i++) {
        out[i] = NULL;
        if (agt_registry_export(reg, formats[i], AGT_PHASE_ALL, &out[i]) != AGT_OK)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 65536)
        return 0;
    static const char ping[] =
        "{\"name\":\"Ping\",\"access\":\"network\",\"plan_task\":true,\"main_task\":true,"
        "\"definition\":{\"name\":\"Ping\",\"description\":\"Ping a host.\","
        "\"parameters\":{\"type\":\"object\",\"properties\":{\"host\":{\"type\":"
        "\"string\"}},\"required\":[\"host\"]}}}";
    agt_registry *reg = NULL;
    if (agt_registry_new(&reg) != AGT_OK ||
        agt_registry_set_provider(reg, "Ping", fz_never_runs, NULL) != AGT_OK ||
        agt_registry_add_json(reg, ping, strlen(ping)) != AGT_OK) {
        fprintf(stderr, "Ping: %s\n", agt_error_message());
        abort();
    }
    char *before[4], *after[4];
    export_all(reg, before);
    const char *json = (const char *)data + 1;
    int rc = data[0] & 1 ? agt_registry_add_json(reg, json, size - 1)
                         : agt_registry_load_json(reg, json, size - 1);
    export_all(reg, after);
    if (rc != AGT_OK) {
        if (!*agt_error_message())
            abort();
        for (size_t i = 0; i < 4; i++)
            if (strcmp(before[i], after[i]) != 0)
                abort();
    } else {
        for (size_t i = 0; i < 4; i++) {
            json_t *j = json_loads(after[i], 0, NULL);
            if (j == NULL)
                abort();
            json_decref(j);
        }
        agt_registry *again = NULL;
        char *native = NULL;
        if (agt_registry_new(&again) != AGT_OK)
            abort();
        for (size_t i = 0; i < agt_registry_count(reg); i++) /* the same providers */
            agt_registry_set_provider(again, agt_registry_name_at(reg, i), fz_never_runs, NULL);
        if (agt_registry_load_json(again, after[3], strlen(after[3])) != AGT_OK) {
            fprintf(stderr, "native export refused: %s\n%s\n", agt_error_message(), after[3]);
            abort();
        }
        if (agt_registry_export(again, "native", AGT_PHASE_ALL, &native) != AGT_OK ||
            strcmp(native, after[3]) != 0) {
            fprintf(stderr, "native export differs:\n%s\n%s\n", after[3], native);
            abort();
        }
        agt_free(native);
        agt_registry_free(again);
    }
    for (size_t i = 0; i < 4; i++) {
        agt_free(before[i]);
        agt_free(after[i]);
    }
    agt_registry_free(reg);
    return 0;
}
