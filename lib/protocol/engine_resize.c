/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * engine_resize: a stream's rings grown and shrunk (version 4): ring
 * memory from the embedder, and the switch from the old ring to the new.
 * Layer 2: it calls engine_core.c.
 */
#include <string.h>

#include "engine.h"
#include "engine_int.h"

/* May stream ${s}'s rings change size now? */
static int
resizable(const struct engine *e, const struct stream *s)
{

	return (e->can_resize && !e->failed && e->mem.alloc != NULL &&
	    s->state == S_OPEN &&
	    !(s->flags & (F_RESET | F_TERM_SENT | F_TERM_RECV | F_APP_CLOSED)));
}

/* The engine is done with ring ${r}: hand it back. */
void
eng_ring_drop(struct engine *e, const struct stream *s, struct engine_ring *r)
{

	if (r->size != 0 && e->mem.free != NULL)
		e->mem.free(e->mem.arg, s->user, r);
	memset(r, 0, sizeof(*r));
}

/* New ring memory for stream ${s} to replace ${cur}; -1 if refused. */
static int
ring_get(struct engine *e, struct stream *s, int rx, uint32_t size,
    const struct engine_ring *cur, struct engine_ring *r)
{

	memset(r, 0, sizeof(*r));
	if (e->mem.alloc(e->mem.arg, s->user, rx, size, cur->size, r) != 0) {
		e->st.ring_refused++;
		return (-1);
	}
	if (size > cur->size)
		e->st.ring_grows++;
	else
		e->st.ring_shrinks++;
	return (0);
}

/*
 * A send ring of ${size} bytes from now on: bytes committed from here go
 * into it, and the old ring keeps the rest until their WRITEs completed.
 */
static int
tx_resize(struct engine *e, uint32_t id, uint32_t size)
{
	struct stream *s = &e->s[id];
	struct engine_ring r;

	s->tx.mark = s->tx.app;
	if (ring_get(e, s, 0, size, &s->tx.ring, &r) != 0)
		return (-1);
	if (s->tx.done == s->tx.app && s->tx.wr_out == 0) {
		eng_ring_drop(e, s, &s->tx.ring);
	} else {
		s->tx.old = s->tx.ring;
		s->tx.switch_at = s->tx.app;
	}
	s->tx.ring = r;
	return (0);
}

/* Announce a receive ring of ${size} bytes; the peer's RING_AT switches. */
static int
rx_resize(struct engine *e, uint32_t id, uint32_t size)
{
	struct stream *s = &e->s[id];

	s->rx.mark = s->rx.tail;
	if (s->rx.cons != s->rx.tail)
		s->rx.caught &= ~RX_CAUGHT_RESIZE;
	if (ring_get(e, s, 1, size, &s->rx.ring, &s->rx.next) != 0)
		return (-1);
	s->rs |= RS_RING;
	eng_qpush(e, Q_CTRL, id);
	return (0);
}

/*
 * The peer used all the credit it had, twice the ring's size arrived
 * since the last resize, and the reader took every byte that had arrived
 * at least once in that time: the ring held it back, not the reader, so
 * double it.  A sender with more to send writes up to exactly the credit
 * it holds plus the ring's size, and the credit it holds is one of the
 * last REPS we sent (each moves a quarter of the ring or more, so at most
 * 4 follow the one it holds), so arriving bytes that end exactly there
 * mean it had to stop.
 */
void
eng_rx_grow(struct engine *e, uint32_t id)
{
	struct stream *s = &e->s[id];
	int k, edge = 0;

	if (s->rx.ring.size >= s->rx.max || !resizable(e, s) ||
	    s->rx.next.size != 0 || s->rx.old.size != 0 ||
	    (s->flags & F_PEER_SHUT) || !(s->rx.caught & RX_CAUGHT_RESIZE) ||
	    s->rx.tail - s->rx.mark < 2 * (uint64_t)s->rx.ring.size)
		return;
	for (k = 0; k < REPS; k++)
		edge |= s->rx.tail == s->rx.reps[k] + s->rx.ring.size;
	if (edge)
		rx_resize(e, id, s->rx.ring.size * 2);
}

/*
 * The application found the send ring full, twice its size since the
 * last resize, while the peer's ring had room: double it.
 */
void
eng_tx_grow(struct engine *e, uint32_t id)
{
	struct stream *s = &e->s[id];

	if (s->tx.ring.size >= s->tx.max || !resizable(e, s) ||
	    s->tx.old.size != 0 || (s->flags & F_APP_SHUT) ||
	    s->tx.sent - s->tx.peer >= s->tx.peer_ring.size ||
	    s->tx.app - s->tx.mark < 2 * (uint64_t)s->tx.ring.size)
		return;
	tx_resize(e, id, s->tx.ring.size * 2);
}

/* The peer writes into our announced ring from now on. */
void
eng_rx_switch(struct engine *e, uint32_t id)
{
	struct stream *s = &e->s[id];

	if (s->rx.cons == s->rx.tail) {
		eng_clear_free(e, &s->rx.clear, s->rx.ring.size);
		eng_ring_drop(e, s, &s->rx.ring);
	} else {
		s->rx.old = s->rx.ring;
		s->rx.old_clear = s->rx.clear;
		s->rx.clear = NULL;
		s->rx.switch_at = s->rx.tail;
	}
	s->rx.ring = s->rx.next;
	memset(&s->rx.next, 0, sizeof(s->rx.next));
	/* A smaller ring may be owed credit no later read would send. */
	if (!(s->flags & (F_PEER_SHUT | F_TERM_SENT | F_RESET)) &&
	    s->rx.cons - s->rx.rep >= s->rx.ring.size / 4)
		eng_ctrl(e, id, C_CREDIT);
}

/* The ring the application reads now, and the cursor it ends at. */
const struct engine_ring *
eng_rx_read_ring(const struct stream *s, uint64_t *end)
{

	if (s->rx.old.size != 0) {
		*end = s->rx.switch_at;
		return (&s->rx.old);
	}
	*end = s->rx.tail;
	return (&s->rx.ring);
}

/* Where the application reads that ring: its private copy, if any. */
uint64_t
eng_rx_read_base(const struct stream *s)
{
	const uint8_t *clear = s->rx.old.size != 0 ? s->rx.old_clear :
	    s->rx.clear;

	if (clear != NULL)
		return ((uint64_t)(uintptr_t)clear);
	return (s->rx.old.size != 0 ? s->rx.old.addr : s->rx.ring.addr);
}

/* The application read the last byte of the ring before the switch. */
void
eng_rx_old_drop(struct engine *e, struct stream *s)
{

	eng_clear_free(e, &s->rx.old_clear, s->rx.old.size);
	eng_ring_drop(e, s, &s->rx.old);
}

void
engine_set_mem(struct engine *e, const struct engine_mem *mem)
{

	e->mem = *mem;
}

int
engine_can_resize(const struct engine *e)
{

	return (e->can_resize);
}

/*
 * The size stream ${s}'s receive ring shrinks to now, or 0: the size it
 * started with once it carried no byte for a whole period and holds none;
 * half its size when bytes came and its reader read in that period but
 * never took all there was (a ring the reader keeps full only adds to the
 * bytes queued ahead of everything else the peer sends; it grows again if
 * it ever holds the sender back).  A reader that stopped keeps its ring:
 * the old one would stay, full, beside the new.
 */
static uint32_t
rx_trim_size(const struct stream *s)
{

	if (s->rx.ring.size <= s->rx.min || s->rx.next.size != 0 ||
	    s->rx.old.size != 0 || (s->flags & F_PEER_SHUT))
		return (0);
	if (s->rx.cons == s->rx.tail)
		return (s->rx.tail == s->rx.seen ? s->rx.min : 0);
	if ((s->rx.caught & (RX_CAUGHT_TRIM | RX_READ_TRIM)) == RX_READ_TRIM &&
	    s->rx.tail != s->rx.seen)
		return (s->rx.ring.size / 2);
	return (0);
}

void
engine_trim(struct engine *e)
{
	struct stream *s;
	uint32_t id, size;

	for (id = 0; id < e->used; id++) {
		s = &e->s[id];
		if (s->tx.max == 0 || !resizable(e, s))
			continue;
		/* (Its last WRITEs may complete only with a later one.) */
		if (s->tx.ring.size > s->tx.min && s->tx.old.size == 0 &&
		    s->tx.app == s->tx.seen && s->tx.sent == s->tx.app)
			tx_resize(e, id, s->tx.min);
		if ((size = rx_trim_size(s)) != 0)
			rx_resize(e, id, size);
		s->tx.seen = s->tx.app;
		s->rx.seen = s->rx.tail;
		s->rx.caught &= ~(RX_CAUGHT_TRIM | RX_READ_TRIM);
	}
}

/*
 * Our RING for stream ${s} went out and its RING_AT has not come: a peer
 * answers at once (it may write nothing for the stream until it does), so
 * one that has not by the ENGINE_RING_AT_TICKS-th tick never will; and
 * both rings stay until it does or the link ends.
 */
int
eng_ring_at_overdue(struct stream *s)
{

	return (s->state == S_OPEN && s->rx.next.size != 0 &&
	    !(s->rs & RS_RING) && !(s->flags & (F_TERM_SENT | F_TERM_RECV)) &&
	    ++s->ring_ticks >= ENGINE_RING_AT_TICKS);
}
