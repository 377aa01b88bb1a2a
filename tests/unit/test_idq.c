/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Unit tests for lib/idq: first in, first out across the array's end; a
 * full queue refuses and keeps what it holds; an empty one stays empty.
 */
#include <stdint.h>

#include "idq.h"
#include "tap.h"

int
main(void)
{
	struct idq q;
	uint32_t i, bad;
	int ok_all;

	ok(idq_init(&q, 0) == -1 && q.v == NULL && idq_len(&q) == 0,
	    "a queue of capacity 0 is refused");
	idq_free(&q);
	ok(idq_init(&q, 3) == 0 && idq_len(&q) == 0, "a new queue is empty");
	ok(idq_push(&q, 7) == 0 && idq_push(&q, 8) == 0 &&
	    idq_push(&q, 9) == 0 && idq_len(&q) == 3, "three fit in three");
	ok(idq_push(&q, 10) == -1 && idq_len(&q) == 3 && idq_peek(&q) == 7,
	    "a fourth is refused; the oldest is still first");
	idq_drop(&q);
	ok(idq_peek(&q) == 8 && idq_len(&q) == 2, "the oldest goes first");
	/* Round and round the array's end: order holds. */
	ok_all = 1;
	bad = 0;
	for (i = 0; i < 1000; i++) {
		if (idq_push(&q, 100 + i) != 0)
			ok_all = 0;
		if (idq_peek(&q) != (i == 0 ? 8 : i == 1 ? 9 : 100 + i - 2))
			bad++;
		idq_drop(&q);
	}
	ok(ok_all && bad == 0 && idq_len(&q) == 2,
	    "1000 in and out around the array's end, in order");
	idq_drop(&q);
	idq_drop(&q);
	ok(idq_len(&q) == 0, "drained");
	idq_drop(&q);
	ok(idq_len(&q) == 0 && idq_push(&q, 5) == 0 && idq_peek(&q) == 5,
	    "dropping from an empty queue leaves it empty and usable");
	idq_free(&q);
	ok(q.v == NULL && idq_len(&q) == 0 && idq_push(&q, 1) == -1,
	    "a freed queue is empty and takes nothing");
	return (tap_done());
}
