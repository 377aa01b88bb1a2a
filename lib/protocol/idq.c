/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include <stdlib.h>

#include "idq.h"

int
idq_init(struct idq *q, uint32_t cap)
{

	q->head = q->n = 0;
	q->cap = 0;
	if (cap == 0 || (q->v = calloc(cap, sizeof(*q->v))) == NULL) {
		q->v = NULL;
		return (-1);
	}
	q->cap = cap;
	return (0);
}

void
idq_free(struct idq *q)
{

	free(q->v);
	q->v = NULL;
	q->cap = q->head = q->n = 0;
}

int
idq_push(struct idq *q, uint32_t v)
{

	if (q->n >= q->cap)
		return (-1);
	q->v[(q->head + q->n) % q->cap] = v;
	q->n++;
	return (0);
}

uint32_t
idq_peek(const struct idq *q)
{

	return (q->v[q->head]);
}

void
idq_drop(struct idq *q)
{

	if (q->n == 0)
		return;
	q->head = (q->head + 1) % q->cap;
	q->n--;
}
