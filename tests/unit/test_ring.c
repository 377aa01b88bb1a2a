/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Unit tests for lib/protocol/ring: size checks and cursor arithmetic. */
#include <stdint.h>
#include <string.h>

#include "ring.h"
#include "tap.h"

int
main(void)
{
	uint64_t big = (uint64_t)1 << 40;

	/* Sizes: powers of two in range only, never rounded. */
	ok(ring_size_check(4096) == NULL, "4096 is a valid size");
	ok(ring_size_check(64u << 20) == NULL, "64 MiB is a valid size");
	ok(ring_size_check(RING_SIZE_MAX) == NULL, "1 GiB is a valid size");
	ok(ring_size_check(0) != NULL, "0 is refused");
	ok(ring_size_check(1000) != NULL &&
	    strstr(ring_size_check(1000), "minimum") != NULL,
	    "1000 is refused as below the minimum");
	ok(ring_size_check(2048) != NULL, "2048 is refused");
	ok(ring_size_check(6000) != NULL &&
	    strstr(ring_size_check(6000), "power of two") != NULL,
	    "6000 is refused as not a power of two");
	ok(ring_size_check(262145) != NULL, "262145 is refused");
	ok(ring_size_check((uint64_t)RING_SIZE_MAX * 2) != NULL &&
	    strstr(ring_size_check((uint64_t)RING_SIZE_MAX * 2), "maximum"),
	    "2 GiB is refused as above the maximum");
	ok(ring_size_check(((uint64_t)1 << 32) + 4096) != NULL,
	    "a size above 32 bits is refused");

	/* Offsets wrap at the size. */
	ok(ring_off(4096, 0) == 0, "offset of cursor 0");
	ok(ring_off(4096, 4095) == 4095, "offset of cursor 4095");
	ok(ring_off(4096, 4096) == 0, "offset wraps at the size");
	ok(ring_off(4096, big + 17) == 17, "offset of a cursor past 2^40");

	/* Used and free. */
	ok(ring_used(100, 40) == 60, "used = prod - cons");
	ok(ring_free(4096, 100, 40) == 4036, "free = size - used");
	ok(ring_free(4096, big + 4096, big) == 0, "full ring has no space");
	ok(ring_used(big + 5, big + 5) == 0, "empty ring at a large cursor");

	/* Contiguous spans stop at the end of the ring. */
	ok(ring_contig(4096, 0, 4096) == 4096, "whole ring is contiguous at 0");
	ok(ring_contig(4096, 4000, 200) == 96, "span stops at the end");
	ok(ring_contig(4096, 4096 + 10, 50) == 50, "span inside the ring");
	ok(ring_contig(4096, 4095, 1) == 1, "last byte alone");
	ok(ring_contig(4096, 4096, 0) == 0, "empty span");

	/* Cursor validation for values from the peer. */
	ok(ring_cursor_valid(4096, 10, 10, 20), "cursor at low bound");
	ok(ring_cursor_valid(4096, 10, 20, 20), "cursor at high bound");
	ok(!ring_cursor_valid(4096, 10, 9, 20), "cursor below low bound");
	ok(!ring_cursor_valid(4096, 10, 21, 20), "cursor above high bound");
	ok(!ring_cursor_valid(4096, 0, 5000, 5000),
	    "window wider than the ring");
	ok(!ring_cursor_valid(4096, 20, 15, 10), "inverted window");
	ok(ring_cursor_valid(4096, big, big + 4096, big + 4096),
	    "full window at a large cursor");

	return (tap_done());
}
