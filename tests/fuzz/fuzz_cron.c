/*
 * libFuzzer target for the cron engine: arbitrary bytes as an expression
 * (copied, since fuzz input is not NUL-terminated); accepted expressions get
 * a few fire times (process zone, fixed TZif zone, POSIX rule zone from the
 * same bytes) and a description. Invariants: fires strictly increase.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agenttools/cron.h"
#include "core/core.h"
#include "cron/cron_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_chain(const agt_cron *c, const agti_zone *z, int64_t t)
{
    for (int i = 0; i < 4; i++) {
        int64_t next = 0;
        if (agti_cron_next_in(c, z, t, &next) != AGT_OK)
            return;
        if (next <= t)
            abort();
        t = next;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static agti_zone *ny;
    static int once;
    if (!once) {
        once = 1;
        setenv("TZ", "Europe/Berlin", 1);
        tzset();
        if (agti_zone_load(&ny, "America/New_York") != AGT_OK)
            ny = NULL;
    }
    if (size > 4096)
        return 0;
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';

    agt_cron *c = NULL;
    if (agt_cron_parse(&c, s) == AGT_OK) {
        /* Start times from the input bytes, around DST changes and far off. */
        uint32_t seed = 0;
        for (size_t i = 0; i < size; i++)
            seed = seed * 31u + data[i];
        int64_t starts[3] = {INT64_C(1793505600) + (int64_t)(seed % 86400u),
                             INT64_C(1772946000) - (int64_t)(seed % 3000000u),
                             INT64_C(253402300799) - (int64_t)(seed % 100000000u)};
        for (int i = 0; i < 3; i++) {
            check_chain(c, NULL, starts[i]);
            check_chain(c, ny, starts[i]);
        }
        char *d = NULL;
        if (agt_cron_describe(c, &d) == AGT_OK && (!d || !*d))
            abort();
        agt_free(d);
        agt_cron_free(c);
    }
    /* The same bytes as a POSIX TZ rule and as a TZif file. */
    agti_zone *z = NULL;
    if (agti_zone_from_posix(&z, s) == AGT_OK) {
        agt_cron *every = NULL;
        if (agt_cron_parse(&every, "*/7 1-3 * * *") == AGT_OK) {
            check_chain(every, z, 1793505600);
            agt_cron_free(every);
        }
        agti_zone_free(z);
    }
    z = NULL;
    if (agti_zone_from_tzif(&z, data, size, "fuzz") == AGT_OK) {
        int32_t off;
        agti_zone_offset(z, 0, &off);
        agti_zone_offset(z, INT64_C(4102444800), &off);
        agti_zone_free(z);
    }
    free(s);
    return 0;
}
