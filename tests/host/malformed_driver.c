/* Drives the slirp_ethernet module's malformed-frame generator
 * (sim/modules/slirp_ethernet/malformed.c) for tests/test_sim_malformed.py:
 *
 *   malformed_driver CONFIG_JSON CYCLES STATS_JSON
 *
 * Runs the injector's clock from cycle 0 to CYCLES and prints every frame it
 * injects as "KIND FLAGS HEX", then writes its counters to STATS_JSON. */
#include <stdio.h>
#include <stdlib.h>

#include "malformed.h"

static int current_kind(const struct malformed *m, const uint64_t *before)
{
    int k;
    for (k = 0; k < MALFORMED_KINDS; k++)
        if (m->count[k] != before[k])
            return k;
    return -1;
}

static struct malformed injector;
static uint64_t counted[MALFORMED_KINDS];

static void print_frame(const uint8_t *data, size_t len, int flags, void *opaque)
{
    int k = current_kind(&injector, counted);
    size_t i;

    printf("%s %d ", k >= 0 ? malformed_names[k] : "?", flags);
    for (i = 0; i < len; i++)
        printf("%02x", data[i]);
    printf("\n");
    if (k >= 0)
        counted[k] = injector.count[k];
}

int main(int argc, char **argv)
{
    json_object *cfg;
    char err[256];
    uint64_t cycles, c;

    if (argc != 4) {
        fprintf(stderr, "usage: %s CONFIG_JSON CYCLES STATS_JSON\n", argv[0]);
        return 2;
    }
    cfg = json_tokener_parse(argv[1]);
    malformed_init(&injector, print_frame, NULL);
    if (!cfg || malformed_configure(&injector, cfg, err, sizeof(err)) != 0) {
        fprintf(stderr, "bad config: %s\n", cfg ? err : "not JSON");
        return 2;
    }
    cycles = strtoull(argv[2], NULL, 0);
    for (c = 0; c <= cycles; c += 100)
        malformed_tick(&injector, c);
    malformed_report(&injector, stderr);
    return malformed_write_stats(&injector, argv[3]) ? 1 : 0;
}
