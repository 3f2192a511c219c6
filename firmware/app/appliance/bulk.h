/* /bulk: a RAM resource for throughput tests (bulk.c). */
#ifndef LITEDAV_BULK_H
#define LITEDAV_BULK_H

#include "http/httpd.h"

extern const struct http_handler bulk_handler;

#endif
