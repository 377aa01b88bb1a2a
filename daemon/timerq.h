/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * timerq: a queue of deadlines, ordered by time and then by arrival, kept
 * in an intrusive pairing heap.  The nodes live inside their owners, so
 * adding one never allocates and cannot fail; adding and taking the
 * earliest are O(1) and O(log n) amortized, and so is removing any node,
 * whatever the number queued (thousands of streams each with a timer).
 *
 * Pure: no clock, no I/O.  loop.c builds its timers on it.
 */
#ifndef TIMERQ_H
#define TIMERQ_H

#include <stdint.h>

struct timerq_node {
	uint64_t when;
	uint64_t seq;			/* arrival order among equal times */
	int queued;
	/* Pairing heap links: first child, next sibling, and the previous
	 * sibling (or the parent, for a first child). */
	struct timerq_node *child, *next, *prev;
};

struct timerq {
	struct timerq_node *root;
	uint64_t seq;
	uint64_t n;
};

/**
 * timerq_init(q):
 * Make ${q} an empty queue.
 */
void timerq_init(struct timerq *q);

/**
 * timerq_add(q, n, when):
 * Queue ${n} (not queued) for time ${when}.  Among nodes of the same time,
 * the one added first comes out first.
 */
void timerq_add(struct timerq *q, struct timerq_node *n, uint64_t when);

/**
 * timerq_del(q, n):
 * Take ${n} out of ${q}; a node that is not queued is left alone.
 */
void timerq_del(struct timerq *q, struct timerq_node *n);

/**
 * timerq_first(q):
 * The earliest node, or NULL if ${q} is empty; it stays queued.
 */
struct timerq_node *timerq_first(const struct timerq *q);

/**
 * timerq_pop(q, now):
 * Take out and return the earliest node if its time is at or before
 * ${now}, else return NULL.
 */
struct timerq_node *timerq_pop(struct timerq *q, uint64_t now);

#endif /* !TIMERQ_H */
