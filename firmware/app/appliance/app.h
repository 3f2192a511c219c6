/* The appliance on top of the layers: what a port calls once the network
 * and the store are up. */
#ifndef LITEDAV_APPLIANCE_APP_H
#define LITEDAV_APPLIANCE_APP_H

#include <stdint.h>

/* Wire the layers (CalDAV and sync onto WebDAV) and serve the appliance's
 * routes on the given TCP port. Returns 0, or -1 when the listener cannot be
 * opened or a layer cannot be registered. */
int app_start(uint16_t port);

/* The main loop's work besides lwIP's input and timers: ports call it every
 * turn. */
void app_poll(void);

#endif
