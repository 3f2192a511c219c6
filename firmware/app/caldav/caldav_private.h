/* What the files of CalDAV share among themselves. caldav/caldav.h is its
 * interface for the layers above. */
#ifndef LITEDAV_CALDAV_PRIVATE_H
#define LITEDAV_CALDAV_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include "caldav/caldav.h"
#include "caldav/ical.h"

/* The phases of a streamed REPORT response (c->phase). */
enum { R_OPEN, R_NEXT, R_OBJECT, R_CLOSE };

/* ---- caldav_filter.c (RFC 4791 section 9.7) ------------------------------ */

/* A CALDAV:time-range's start and end attributes (section 9.9: at least one;
 * a missing one is INT64_MIN or INT64_MAX). false if neither is there, one
 * does not parse, or start is not before end. */
bool caldav_time_range_bounds(const struct xml_node *tr, int64_t *start, int64_t *end);
/* What evaluating the filter relies on: NULL, or the name of the CALDAV
 * precondition it fails (valid-filter, supported-collation). */
const char *caldav_filter_check(const struct xml_node *filter);
/* Does the object match the CALDAV:filter? */
bool caldav_filter_matches(const struct ical_object *obj, const struct xml_node *filter);

/* ---- caldav_freebusy.c (section 7.10) ------------------------------------ */

/* Answers the free-busy-query REPORT whose body is root. */
void caldav_freebusy_query(struct dav_ctx *c, const struct xml_node *root);

#endif
