/* Conditional requests (RFC 9110 section 13): If-Match and If-None-Match
 * against a resource's current entity-tag. Pure functions over the request
 * head; the date-based conditions are not evaluated (the store keeps no
 * modification dates clients could rely on, and section 13.1.3/13.1.4 make
 * them secondary to the entity-tag ones anyway). */
#ifndef LITEDAV_HTTP_COND_H
#define LITEDAV_HTTP_COND_H

#include <stddef.h>

#include "http/http_parse.h"

enum http_etag_match {
    HTTP_ETAG_INVALID = -1,  /* the field value is not a valid list */
    HTTP_ETAG_NO_MATCH = 0,
    HTTP_ETAG_MATCH = 1,
};

/* Does a field value of the form  "*" / #entity-tag  match the current
 * entity-tag (RFC 9110 section 8.8.3, with its W/ prefix if weak; NULL when
 * the resource has no current representation)? strong selects the strong
 * comparison of section 8.8.3.2 (If-Match) over the weak one (If-None-Match).
 * "*" matches any existing representation. */
enum http_etag_match http_etag_list_match(const char *field, size_t field_len,
                                          const char *etag, size_t etag_len, int strong);

/* Is etag[0..len) a well-formed entity-tag (section 8.8.3)? */
int http_etag_valid(const char *etag, size_t len);

/* Evaluate If-Match and If-None-Match of req, in the order of section 13.2.2,
 * for a resource whose current entity-tag is etag (NULL: it does not exist).
 * Several field lines of one name count as one comma-joined list (section
 * 5.3). Returns 0 to go on with the request, 304 (Not Modified, for GET and
 * HEAD), 412 (Precondition Failed) or 400 for a malformed list. The caller
 * applies section 13.2.1: only when the response would otherwise be 2xx. */
int http_preconditions(const struct http_request *req, const char *etag);

#endif
