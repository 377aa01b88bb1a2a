/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "fabric.h"
#include "link.h"
#include "loop.h"
#include "simlink.h"

struct dlink {
	struct fab *f;
	int side;
	struct loop *lp;
	const struct link_ops *ops;
	void *arg;
	struct dlink *other;
	struct loop_job flush;
	int flushing;
	uint32_t next_rkey;
	unsigned live;			/* rings held */
	uint32_t max_ring;		/* the largest made */
	char peer[64];
};

struct link_ring {
	struct dlink *dl;		/* NULL: detached */
	uint8_t *buf;
	uint32_t size;
	int rx;
	uint32_t rkey;			/* rx: as registered on dl's side */
};

static struct engine *
side_engine(const struct dlink *dl)
{

	return (dl->f->side[dl->side].e);
}

/* link_deliver's rule: INCOMING to the owner, the rest to the stream's. */
static void
deliver(struct dlink *dl, struct engine *e, const struct engine_event *ev)
{

	if ((ev->flags & ENGINE_EV_INCOMING) &&
	    !(ev->flags & ENGINE_EV_RELEASED)) {
		dl->ops->incoming(dl->arg, dl, ev->stream,
		    engine_tunnel(e, ev->stream));
		return;
	}
	if (ev->user != NULL)
		dl->ops->event(dl->arg, dl, ev);
}

/*
 * The job (link.c's on_flush and pump): completions in, events out, work
 * requests onto the wire and through it, until nothing moves; then the
 * other side has completions to take.
 */
static void
on_flush(void *arg)
{
	struct dlink *dl = arg;
	struct fab *f = dl->f;
	struct engine *e = side_engine(dl);
	struct engine_event ev;
	int moved, n;

	dl->flushing = 1;
	do {
		moved = 0;
		while (fab_complete(f, dl->side) > 0)
			moved = 1;
		while (engine_error(e) == NULL && engine_next_event(e, &ev)) {
			deliver(dl, e, &ev);
			moved = 1;
		}
		if ((n = fab_pump(f, dl->side)) < 0)
			break;
		if (n > 0)
			moved = 1;
		while ((n = fab_deliver(f, dl->side)) > 0)
			moved = 1;
	} while (moved && n >= 0 && engine_error(e) == NULL && !f->failed);
	dl->flushing = 0;
	if (dl->other != NULL && f->side[dl->other->side].cq_n > 0)
		link_mark(dl->other);
}

struct dlink *
simlink_new(struct loop *lp, struct fab *f, int side, const char *peer,
    const struct link_ops *ops, void *arg)
{
	struct dlink *dl;

	if ((dl = calloc(1, sizeof(*dl))) == NULL)
		abort();
	dl->f = f;
	dl->side = side;
	dl->lp = lp;
	dl->ops = ops;
	dl->arg = arg;
	dl->next_rkey = 0x100u + ((uint32_t)side << 16);
	snprintf(dl->peer, sizeof(dl->peer), "%s", peer);
	loop_job_init(&dl->flush, lp, on_flush, dl);
	return (dl);
}

void
simlink_join(struct dlink *a, struct dlink *b)
{

	a->other = b;
	b->other = a;
}

void
simlink_free(struct dlink *dl)
{

	if (dl == NULL)
		return;
	loop_job_cancel(&dl->flush);
	free(dl);
}

const char *
simlink_error(const struct dlink *dl)
{

	if (dl->f->failed)
		return (dl->f->err);
	return (engine_error(side_engine(dl)));
}

void
simlink_rings(const struct dlink *dl, unsigned *live, uint32_t *max)
{

	*live = dl->live;
	*max = dl->max_ring;
}

/* ---- link.h, as bridge.c calls it. */

struct engine *
link_engine(const struct dlink *dl)
{

	return (dl != NULL ? side_engine(dl) : NULL);
}

struct loop *
link_loop(const struct dlink *dl)
{

	return (dl->lp);
}

const char *
link_peer(const struct dlink *dl)
{

	return (dl->peer);
}

void
link_mark(struct dlink *dl)
{

	if (dl != NULL && !dl->flushing)
		loop_job_defer(&dl->flush);
}

/* A receive ring opens to the peer's WRITEs under an rkey of its own. */
static void
ring_register(struct link_ring *r, struct dlink *dl)
{

	r->dl = dl;
	if (!r->rx)
		return;
	r->rkey = dl->next_rkey++;
	fab_mr_add(dl->f, dl->side, (uint64_t)(uintptr_t)r->buf, r->size,
	    r->rkey);
}

static void
ring_unregister(struct link_ring *r)
{

	if (r->dl != NULL && r->rx)
		fab_mr_del(r->dl->f, r->dl->side, (uint64_t)(uintptr_t)r->buf);
	r->dl = NULL;
}

struct link_ring *
link_ring_new(struct dlink *dl, uint32_t size, int flags, char *err,
    size_t errlen)
{
	struct link_ring *r;
	void *buf;

	if ((r = calloc(1, sizeof(*r))) == NULL ||
	    posix_memalign(&buf, 4096, size) != 0) {
		free(r);
		snprintf(err, errlen, "no memory for a ring of %u bytes",
		    (unsigned)size);
		errno = ENOMEM;
		return (NULL);
	}
	memset(buf, 0, size);
	r->buf = buf;
	r->size = size;
	r->rx = (flags & LINK_RING_RX) != 0;
	ring_register(r, dl);
	dl->live++;
	if (size > dl->max_ring)
		dl->max_ring = size;
	return (r);
}

void
link_ring_free(struct link_ring *r)
{

	if (r == NULL)
		return;
	if (r->dl != NULL)
		r->dl->live--;
	ring_unregister(r);
	free(r->buf);
	free(r);
}

uint32_t
link_ring_size(const struct link_ring *r)
{

	return (r != NULL ? r->size : 0);
}

void
link_ring_describe(const struct link_ring *r, struct engine_ring *ring)
{

	ring->addr = (uint64_t)(uintptr_t)r->buf;
	ring->size = r->size;
	ring->key = r->rx ? r->rkey : 1;
	ring->mem = (void *)(uintptr_t)r;
}

void
link_ring_detach(struct link_ring *r)
{

	if (r == NULL || r->dl == NULL)
		return;
	r->dl->live--;
	ring_unregister(r);
}

int
link_ring_move(struct link_ring *r, struct dlink *dl, char *err,
    size_t errlen)
{

	(void)err;
	(void)errlen;
	if (r->dl != NULL) {
		r->dl->live--;
		ring_unregister(r);
	}
	ring_register(r, dl);
	dl->live++;
	return (0);
}
