/* The status page: counters for humans and benchmark scripts, one
 * "name: value" per line, rendered one section at a time. */
#ifndef LITEDAV_APPLIANCE_STATUS_H
#define LITEDAV_APPLIANCE_STATUS_H

#include <stddef.h>

/* Writes section `index` to out and returns its length; STATUS_END after
 * the last one, STATUS_TOO_SMALL if it does not fit size. */
#define STATUS_END ((size_t)-1)
#define STATUS_TOO_SMALL ((size_t)-2)
size_t status_section(unsigned index, char *out, size_t size);

#endif
