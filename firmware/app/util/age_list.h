/* A list in the order entries joined it, oldest first, linked through a
 * struct age_link inside each entry: O(1) to append, to unlink from
 * anywhere, and to find the oldest. The parked connections (tcp_park.c),
 * those in TIME-WAIT (tcp_time_wait.c) and the clients waiting for a
 * connection state (conn_admission.c) are each kept in one. */
#ifndef LITEDAV_AGE_LIST_H
#define LITEDAV_AGE_LIST_H

#include <stddef.h>

struct age_link {
    struct age_link *older, *newer;
};

struct age_list {
    struct age_link *oldest, *newest;
};

/* The entry of type `type` whose member `member` is the link e (NULL for NULL). */
#define AGE_ENTRY(e, type, member) \
    ((e) ? (type *)(void *)((char *)(e) - offsetof(type, member)) : (type *)NULL)

static inline void age_list_append(struct age_list *l, struct age_link *e)
{
    e->newer = NULL;
    e->older = l->newest;
    if (l->newest)
        l->newest->newer = e;
    else
        l->oldest = e;
    l->newest = e;
}

static inline void age_list_unlink(struct age_list *l, struct age_link *e)
{
    if (e->older)
        e->older->newer = e->newer;
    else
        l->oldest = e->newer;
    if (e->newer)
        e->newer->older = e->older;
    else
        l->newest = e->older;
    e->older = e->newer = NULL;
}

#endif
