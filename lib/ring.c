#include <stddef.h>

#include "ring.h"

/**
 * ring_size_check(size):
 * Return NULL if ${size} is a usable ring size (a power of two from
 * RING_SIZE_MIN to RING_SIZE_MAX), or a static string saying why not
 * ("is not a power of two", "is below the minimum 4096", ...).  Sizes are
 * never rounded: a size the caller cannot use is an error it reports.
 */
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

/**
 * ring_cursor_valid(size, lo, c, hi):
 * True if ${lo} <= ${c} <= ${hi} and ${hi} - ${lo} <= ${size}: the check a
 * receiver applies to a cursor that came from the peer.
 */
bool
ring_cursor_valid(uint32_t size, uint64_t lo, uint64_t c, uint64_t hi)
{

	if (hi < lo || hi - lo > size)
		return (false);
	return (lo <= c && c <= hi);
}
