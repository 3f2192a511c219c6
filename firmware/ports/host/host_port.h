/* Host port hooks beyond firmware/app/platform/port.h: set up by main.c, read by the
 * host's drivers. */
#ifndef LITEDAV_HOST_PORT_H
#define LITEDAV_HOST_PORT_H

/* Start port_cycles() and sys_now() at zero; call once before lwip_init(). */
void host_port_init(void);

/* The file given with --store (the flash image of the store), or NULL. */
void host_port_set_store_path(const char *path);
const char *host_port_store_path(void);

#endif
