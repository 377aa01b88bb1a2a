/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "config.h"

#include <stddef.h>

#include "timerq.h"

static int
before(const struct timerq_node *a, const struct timerq_node *b)
{

	return (a->when < b->when || (a->when == b->when && a->seq < b->seq));
}

/* Join two roots (no siblings): the later becomes the earlier's child. */
static struct timerq_node *
meld(struct timerq_node *a, struct timerq_node *b)
{
	struct timerq_node *t;

	if (before(b, a)) {
		t = a;
		a = b;
		b = t;
	}
	b->prev = a;
	b->next = a->child;
	if (a->child != NULL)
		a->child->prev = b;
	a->child = b;
	return (a);
}

/*
 * Join a list of siblings into one tree: pairs left to right, then the
 * pairs right to left.  The two passes are what keep the heap shallow.
 */
static struct timerq_node *
merge_pairs(struct timerq_node *h)
{
	struct timerq_node *a, *b, *rest, *stack = NULL, *m;

	while (h != NULL) {
		a = h;
		b = a->next;
		rest = b != NULL ? b->next : NULL;
		a->next = a->prev = NULL;
		if (b != NULL) {
			b->next = b->prev = NULL;
			a = meld(a, b);
		}
		a->next = stack;
		stack = a;
		h = rest;
	}
	while (stack != NULL) {
		m = stack;
		stack = m->next;
		m->next = NULL;
		h = h != NULL ? meld(m, h) : m;
	}
	return (h);
}

void
timerq_init(struct timerq *q)
{

	q->root = NULL;
	q->seq = 0;
	q->n = 0;
}

void
timerq_add(struct timerq *q, struct timerq_node *n, uint64_t when)
{

	n->when = when;
	n->seq = q->seq++;
	n->child = n->next = n->prev = NULL;
	n->queued = 1;
	q->root = q->root != NULL ? meld(q->root, n) : n;
	q->n++;
}

void
timerq_del(struct timerq *q, struct timerq_node *n)
{
	struct timerq_node *sub;

	if (!n->queued)
		return;
	n->queued = 0;
	q->n--;
	sub = n->child != NULL ? merge_pairs(n->child) : NULL;
	if (n == q->root) {
		q->root = sub;
		return;
	}
	/* Unlink from the sibling list (prev is the parent for a first child). */
	if (n->prev->child == n)
		n->prev->child = n->next;
	else
		n->prev->next = n->next;
	if (n->next != NULL)
		n->next->prev = n->prev;
	n->next = n->prev = n->child = NULL;
	if (sub != NULL)
		q->root = meld(q->root, sub);
}

struct timerq_node *
timerq_first(const struct timerq *q)
{

	return (q->root);
}

struct timerq_node *
timerq_pop(struct timerq *q, uint64_t now)
{
	struct timerq_node *n = q->root;

	if (n == NULL || n->when > now)
		return (NULL);
	timerq_del(q, n);
	return (n);
}
