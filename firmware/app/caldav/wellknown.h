/* Service discovery (RFC 6764 section 5): /.well-known/caldav. */
#ifndef LITEDAV_WELLKNOWN_H
#define LITEDAV_WELLKNOWN_H

#include "http/httpd.h"

extern const struct http_handler wellknown_handler;

#endif
