#include "strategy/strategy.h"

#include <string.h>

const struct proust__strategy_ops *const proust__strategies[] = {
    &proust__strategy_default,
    &proust__strategy_aggreg,
    &proust__strategy_split_balance,
    NULL,
};

const struct proust__strategy_ops *proust__strategy_find(const char *name)
{
    for (int i = 0; proust__strategies[i]; i++)
        if (strcmp(proust__strategies[i]->name, name) == 0)
            return proust__strategies[i];
    return NULL;
}

void proust__window_unlink(struct proust__window *w, struct proust__chunk *prev,
                           struct proust__chunk *c)
{
    if (prev)
        prev->next = c->next;
    else
        w->head = c->next;
    if (w->tail == c)
        w->tail = prev;
    w->count--;
    if (c->urgent)
        w->urgent--;
    c->next = NULL;
}
