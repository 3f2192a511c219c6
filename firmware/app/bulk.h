/* /bulk: a RAM resource for throughput tests (bulk.c). */
#ifndef LITEDAV_BULK_H
#define LITEDAV_BULK_H

#include <stdint.h>

#include "httpd.h"

extern const struct http_handler bulk_handler;

/* Bytes a PUT may store: the port's bulk buffer, 0 when it has none. */
uint32_t bulk_capacity(void);

#endif
