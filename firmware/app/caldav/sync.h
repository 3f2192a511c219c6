/* Collection synchronization (RFC 6578): the sync-collection REPORT and the
 * DAV:sync-token property. A token names the collection and its sync
 * sequence in the store: "urn:litedav:sync:<collection id>:<sequence>". */
#ifndef LITEDAV_SYNC_H
#define LITEDAV_SYNC_H

#include <stddef.h>
#include <stdint.h>

#include "dav/dav.h"

void sync_token_format(uint32_t coll, uint32_t seq, char *out, size_t size);
/* 0 with *seq set, or -1 if the token is not one of this collection's. */
int sync_token_parse(const char *token, size_t len, uint32_t coll, uint32_t *seq);

/* For dav_register(): the REPORT and DAV:sync-token (section 4). */
extern const struct dav_extension sync_extension;

#endif
