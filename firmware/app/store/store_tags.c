/*
 * Tags: a caller's digest of an object's content, 16 bits of it kept in the
 * object's index slot (RAM only), and the walk of the members that may carry
 * a given tag.
 */
#include "store/store_internal.h"

#include <string.h>

static uint16_t tag16(uint32_t tag)
{
    return (uint16_t)(tag ^ tag >> 16);
}

int store_tag_next(struct store *s, uint32_t coll, uint32_t tag, uint32_t *pos, char *name,
                   size_t cap, size_t *name_len, int *known)
{
    uint32_t i, id, sync, len;
    int slot, rc;
    if (s->failed)
        return STORE_ERR_IO;
    if (cap <= STORE_NAME_MAX)
        return STORE_ERR_INVALID;
    if ((slot = store_coll_slot_by_id(s, coll)) < 0)
        return STORE_ERR_NOT_FOUND;
    if (*pos == STORE_TAG_START)
        i = s->mem.colls[slot].head;
    else if (*pos < s->mem.index_slots && s->mem.index[*pos].state != SLOT_EMPTY &&
             s->mem.index[*pos].coll == (uint32_t)slot)
        i = s->mem.index[*pos].next;
    else
        return STORE_ERR_INVALID;  /* the store changed under the walk */
    for (; i != LINK_NONE; i = s->mem.index[i].next) {
        const struct store_index_slot *e = &s->mem.index[i];
        if (e->state != SLOT_LIVE)
            continue;
        if ((e->flags & SLOT_TAG_KNOWN) && e->tag != tag16(tag))
            continue;
        if ((rc = store_read_obj_prefix(s, e->addr, &id, &sync, &len)) != STORE_OK)
            return rc;
        memcpy(name, s->name_buf, len);
        name[len] = '\0';
        *name_len = len;
        *known = (e->flags & SLOT_TAG_KNOWN) != 0;
        *pos = i;
        return 1;
    }
    return 0;
}

uint32_t store_name_hash(const void *data, size_t len)
{
    return fnv1a(data, len);
}

int store_tag_set(struct store *s, uint32_t coll, const char *name, size_t name_len, uint32_t tag)
{
    int slot, e, rc;
    if ((rc = store_obj_lookup(s, coll, name, name_len, &slot, &e)) != STORE_OK)
        return rc;
    if (e < 0 || s->mem.index[e].state != SLOT_LIVE)
        return STORE_ERR_NOT_FOUND;
    s->mem.index[e].tag = tag16(tag);
    s->mem.index[e].flags |= SLOT_TAG_KNOWN;
    return STORE_OK;
}
