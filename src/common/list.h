/*
 * list.h — intrusive doubly-linked lists, for any struct with `next` and
 * `prev` members, kept as a head and a tail pointer (lvalues). O(1)
 * append and removal; the caller holds whatever lock guards the list.
 */
#ifndef PROUST_LIST_H
#define PROUST_LIST_H

#include <stddef.h>

#define PROUST__LIST_APPEND(head, tail, e)                                                   \
    do {                                                                                     \
        (e)->next = NULL;                                                                    \
        (e)->prev = (tail);                                                                  \
        if (tail)                                                                            \
            (tail)->next = (e);                                                              \
        else                                                                                 \
            (head) = (e);                                                                    \
        (tail) = (e);                                                                        \
    } while (0)

#define PROUST__LIST_REMOVE(head, tail, e)                                                   \
    do {                                                                                     \
        if ((e)->prev)                                                                       \
            (e)->prev->next = (e)->next;                                                     \
        else                                                                                 \
            (head) = (e)->next;                                                              \
        if ((e)->next)                                                                       \
            (e)->next->prev = (e)->prev;                                                     \
        else                                                                                 \
            (tail) = (e)->prev;                                                              \
        (e)->next = (e)->prev = NULL;                                                        \
    } while (0)

#endif
