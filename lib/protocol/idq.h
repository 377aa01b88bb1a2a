/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * idq: a FIFO of 32-bit values in an array of fixed capacity, the shape
 * of the engine's queues of receive slots to post again, refusals to send
 * and resumed streams to name as gone.  Its owner bounds what it pushes
 * (a queue never holds more than the ids it could name); a push beyond
 * the capacity is refused rather than wrapping over the oldest.
 */
#ifndef IDQ_H
#define IDQ_H

#include <stdint.h>

struct idq {
	uint32_t *v;		/* cap entries */
	uint32_t cap;
	uint32_t head;		/* the oldest */
	uint32_t n;		/* how many are queued */
};

/**
 * idq_init(q, cap):
 * An empty queue for up to ${cap} (at least 1) values.  0, or -1 out of
 * memory (${q} is then empty with no array, and idq_free takes it).
 */
int idq_init(struct idq *q, uint32_t cap);

/**
 * idq_free(q):
 * Free ${q}'s array; it is empty after.
 */
void idq_free(struct idq *q);

/**
 * idq_push(q, v):
 * Queue ${v} last.  0, or -1 if ${q} is full (nothing queued).
 */
int idq_push(struct idq *q, uint32_t v);

/**
 * idq_peek(q):
 * The oldest value; ${q} must not be empty.
 */
uint32_t idq_peek(const struct idq *q);

/**
 * idq_drop(q):
 * Forget the oldest value; ${q} must not be empty.
 */
void idq_drop(struct idq *q);

/**
 * idq_len(q):
 * How many values are queued.
 */
static inline uint32_t
idq_len(const struct idq *q)
{

	return (q->n);
}

#endif /* !IDQ_H */
