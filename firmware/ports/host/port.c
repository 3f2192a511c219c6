/* port.h and lwIP's sys_now() for the host: the "cycle counter" is
 * CLOCK_MONOTONIC in nanoseconds since start-up (port_cycles_hz() = 1 GHz),
 * so status-page cycle figures are host nanoseconds. */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <time.h>

#include "lwip/arch.h"
#include "lwip/sys.h"

#include "host_port.h"
#include "platform/port.h"

#define NS_PER_S 1000000000u

struct port_stats port_stats;

static uint64_t start_ns;
static const char *store_path;

static uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

void host_port_init(void) { start_ns = monotonic_ns(); }

void host_port_set_store_path(const char *path) { store_path = path; }

const char *host_port_store_path(void) { return store_path; }

uint64_t port_cycles(void) { return monotonic_ns() - start_ns; }

uint32_t port_cycles_hz(void) { return NS_PER_S; }

const char *port_name(void) { return "host"; }

/* main.c mounts the store itself (file or RAM). */
const struct flash *port_flash(void) { return NULL; }

uint8_t *port_bulk_buffer(uint32_t size)
{
    static uint8_t area[1024u * 1024u];
    return size <= sizeof(area) ? area : NULL;
}

/* slirp_netif.c hands every frame to libslirp, which copies it, at once. */
int port_tx_holds(const void *start, const void *end)
{
    (void)start, (void)end;
    return 0;
}

/* lwIP's clock, in milliseconds; it wraps after 49 days, which lwIP handles. */
u32_t sys_now(void) { return (u32_t)(port_cycles() / 1000000u); }

/* xorshift32 for TCP initial sequence numbers and local ports (lwIP's
 * LWIP_RAND); seeded from the clock as on the SoC. */
unsigned int litedav_rand(void)
{
    static uint32_t state;
    if (!state)
        state = (uint32_t)monotonic_ns() | 1;
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return state;
}

void litedav_halt(void) { abort(); }
