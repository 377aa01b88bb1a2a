/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Unit tests for daemon/timerq: deadlines come out in time order, ties in
 * the order they were added, and any node can be taken out; checked
 * against a plain sorted model over many random operations.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "timerq.h"

#define N 500

static struct timerq_node nodes[N];

/* The model: the earliest queued node by (when, seq), found by a scan. */
static struct timerq_node *
model_first(void)
{
	struct timerq_node *best = NULL;
	int i;

	for (i = 0; i < N; i++)
		if (nodes[i].queued && (best == NULL ||
		    nodes[i].when < best->when || (nodes[i].when ==
		    best->when && nodes[i].seq < best->seq)))
			best = &nodes[i];
	return (best);
}

static uint64_t
model_count(void)
{
	uint64_t n = 0;
	int i;

	for (i = 0; i < N; i++)
		n += nodes[i].queued != 0;
	return (n);
}

/* Random adds, deletes (of queued and unqueued nodes) and pops. */
static int
random_run(unsigned seed, int ops)
{
	struct timerq q;
	struct timerq_node *n, *m;
	uint64_t now = 0;
	int k, i;

	srand(seed);
	memset(nodes, 0, sizeof(nodes));
	timerq_init(&q);
	for (k = 0; k < ops; k++) {
		i = rand() % N;
		switch (rand() % 4) {
		case 0:
		case 1:
			if (nodes[i].queued)
				timerq_del(&q, &nodes[i]);
			/* Few distinct times, so ties are common. */
			timerq_add(&q, &nodes[i], now + (uint64_t)(rand() % 50));
			break;
		case 2:
			timerq_del(&q, &nodes[i]);
			break;
		default:
			now += (uint64_t)(rand() % 5);
			for (;;) {
				m = model_first();
				n = timerq_pop(&q, now);
				if (n != (m != NULL && m->when <= now ? m : NULL))
					return (0);
				if (n == NULL)
					break;
				if (n->queued)
					return (0);
			}
		}
		if (timerq_first(&q) != model_first() || q.n != model_count())
			return (0);
	}
	return (1);
}

int
main(void)
{
	struct timerq q;
	struct timerq_node a, b, c, d;
	unsigned seed;
	int good = 1;

	timerq_init(&q);
	ok(timerq_first(&q) == NULL && timerq_pop(&q, 100) == NULL,
	    "an empty queue has no first node and pops nothing");
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(&c, 0, sizeof(c));
	memset(&d, 0, sizeof(d));
	timerq_add(&q, &a, 30);
	timerq_add(&q, &b, 10);
	timerq_add(&q, &c, 20);
	timerq_add(&q, &d, 10);
	ok(timerq_first(&q) == &b, "the earliest comes first");
	ok(timerq_pop(&q, 5) == NULL, "nothing is due before its time");
	ok(timerq_pop(&q, 10) == &b && timerq_pop(&q, 10) == &d,
	    "equal times come out in the order they were added");
	ok(timerq_pop(&q, 10) == NULL, "and then nothing more is due");
	timerq_del(&q, &c);
	ok(!c.queued && q.n == 1, "a node taken out is no longer queued");
	timerq_del(&q, &c);
	ok(q.n == 1, "taking out a node that is not queued changes nothing");
	ok(timerq_pop(&q, 1000) == &a && q.n == 0, "the last one pops");

	for (seed = 1; seed <= 20 && good; seed++)
		good = random_run(seed, 20000);
	ok(good, "20 random runs of 20000 operations agree with the model%s",
	    good ? "" : " (one did not)");
	return (tap_done());
}
