/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include <string.h>

#include "loop.h"
#include "prio.h"

int
prio_dev(struct prio_table *t, const char *device)
{
	unsigned i;

	loop_assert_exclusive();
	for (i = 0; i < t->ndev; i++)
		if (strcmp(t->dev[i].name, device) == 0)
			return ((int)i);
	if (t->ndev == PRIO_DEVS || strlen(device) >= PRIO_NAME_LEN)
		return (-1);
	memset(&t->dev[t->ndev], 0, sizeof(t->dev[0]));
	strcpy(t->dev[t->ndev].name, device);
	return ((int)t->ndev++);
}

uint32_t
prio_share(struct prio_table *t, int dev, unsigned prio, int busy,
    uint64_t now_ms)
{
	struct prio_dev *d;
	unsigned q, top;
	uint64_t seen;

	if (dev < 0 || (unsigned)dev >= PRIO_DEVS || prio < PRIO_LOWEST ||
	    prio > PRIO_HIGHEST)
		return (1000);
	d = &t->dev[dev];
	if (busy) {
		__atomic_store_n(&d->seen[prio], now_ms, __ATOMIC_RELAXED);
		top = __atomic_load_n(&d->top, __ATOMIC_RELAXED);
		while (prio > top && !__atomic_compare_exchange_n(&d->top,
		    &top, prio, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			;
	}
	for (q = __atomic_load_n(&d->top, __ATOMIC_RELAXED); q > prio; q--) {
		seen = __atomic_load_n(&d->seen[q], __ATOMIC_RELAXED);
		if (seen != 0 && seen + PRIO_SPAN_MS > now_ms)
			return (prio * 1000 / q);
	}
	return (1000);
}
