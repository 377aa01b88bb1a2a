/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include <stddef.h>

#include "ring.h"

const char *
ring_size_check(uint64_t size)
{

	if (size < RING_SIZE_MIN)
		return ("is below the minimum 4096");
	if (size > RING_SIZE_MAX)
		return ("is above the maximum 1073741824 (1 GiB)");
	if ((size & (size - 1)) != 0)
		return ("is not a power of two");
	return (NULL);
}

bool
ring_cursor_valid(uint32_t size, uint64_t lo, uint64_t c, uint64_t hi)
{

	if (hi < lo || hi - lo > size)
		return (false);
	return (lo <= c && c <= hi);
}
