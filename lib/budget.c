/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "config.h"

#include <stdint.h>

#include "budget.h"

int
budget_take(uint64_t *used, uint64_t max, uint64_t n)
{
	uint64_t cur = __atomic_load_n(used, __ATOMIC_RELAXED);

	do {
		if (max != 0 && (n > max || cur > max - n))
			return (-1);
	} while (!__atomic_compare_exchange_n(used, &cur, cur + n, 1,
	    __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	return (0);
}

void
budget_give(uint64_t *used, uint64_t n)
{

	(void)__atomic_fetch_sub(used, n, __ATOMIC_RELAXED);
}

uint64_t
budget_now(const uint64_t *used)
{

	return (__atomic_load_n(used, __ATOMIC_RELAXED));
}
