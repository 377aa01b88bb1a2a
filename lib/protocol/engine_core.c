/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * engine_core: the engine's lowest layer: stream slots and the queues
 * they wait in, events, a failure recorded (fail, violation), and the
 * small helpers of a stream's state that every layer uses.  It calls no
 * other engine file (the layers: engine_int.h).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "engine.h"
#include "engine_int.h"

/* ---------------------------------------------------------------- queues */

void
eng_qpush(struct engine *e, int which, uint32_t id)
{
	struct queue *q = &e->q[which];
	struct stream *s = &e->s[id];

	if (s->in[which])
		return;
	s->in[which] = 1;
	s->next[which] = NIL;
	if (q->tail == NIL)
		q->head = id;
	else
		e->s[q->tail].next[which] = id;
	q->tail = id;
}

/* Queue ${id} first in q[which], ahead of every stream waiting there. */
void
eng_qpush_head(struct engine *e, int which, uint32_t id)
{
	struct queue *q = &e->q[which];
	struct stream *s = &e->s[id];

	if (s->in[which])
		return;
	s->in[which] = 1;
	s->next[which] = q->head;
	q->head = id;
	if (q->tail == NIL)
		q->tail = id;
}

uint32_t
eng_qpop(struct engine *e, int which)
{
	struct queue *q = &e->q[which];
	uint32_t id = q->head;
	struct stream *s;

	if (id == NIL)
		return (NIL);
	s = &e->s[id];
	q->head = s->next[which];
	if (q->head == NIL)
		q->tail = NIL;
	s->in[which] = 0;
	return (id);
}

int
eng_queued(const struct stream *s)
{
	int i;

	for (i = 0; i < Q_N; i++)
		if (s->in[i])
			return (1);
	return (0);
}

void
eng_qunlink(struct engine *e, int which, uint32_t prev, uint32_t id)
{
	struct queue *q = &e->q[which];
	struct stream *s = &e->s[id];

	if (prev == NIL)
		q->head = s->next[which];
	else
		e->s[prev].next[which] = s->next[which];
	if (q->tail == id)
		q->tail = prev;
	s->in[which] = 0;
}

/* ---------------------------------------------------------------- helpers */

/*
 * The link failed: record why and of which ${kind}, once.  eng_fail() only
 * records; the public entry points finish a failure (eng_fail_finish) before
 * they return to the embedder, so this layer never calls up into sealing
 * and resume.  Its callers return at once, changing nothing more.
 */
int
eng_fail(struct engine *e, enum engine_err kind, const char *fmt, ...)
{
	va_list ap;

	if (e->failed)
		return (-1);
	va_start(ap, fmt);
	vsnprintf(e->err, sizeof(e->err), fmt, ap);
	va_end(ap);
	e->failed = 1;
	e->fail_due = 1;
	e->err_kind = kind;
	e->up = 0;
	return (-1);
}

/* The peer broke the protocol: fail with "protocol violation: " and why. */
int
eng_violation(struct engine *e, const char *fmt, ...)
{
	char why[sizeof(e->err)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return (eng_fail(e, ENGINE_ERR_PROTOCOL, "protocol violation: %s",
	    why));
}

void
eng_event(struct engine *e, uint32_t id, uint32_t ev)
{
	struct stream *s = &e->s[id];

	if ((s->flags & F_APP_CLOSED) && ev != ENGINE_EV_RELEASED)
		return;
	s->ev |= ev;
	eng_qpush(e, Q_EV, id);
}

void
eng_ctrl(struct engine *e, uint32_t id, uint8_t c)
{

	e->s[id].ctrl |= c;
	eng_qpush(e, Q_CTRL, id);
}

void
eng_peer_bit(struct engine *e, uint32_t peer_id, int set)
{
	uint8_t m = (uint8_t)(1u << (peer_id & 7));

	if (set)
		e->peer_ids[peer_id >> 3] |= m;
	else
		e->peer_ids[peer_id >> 3] &= (uint8_t)~m;
}

int
eng_peer_bit_isset(const struct engine *e, uint32_t peer_id)
{

	return ((e->peer_ids[peer_id >> 3] >> (peer_id & 7)) & 1);
}

uint32_t
eng_slot_alloc(struct engine *e)
{
	uint32_t id = e->free_head;
	struct stream *s;
	uint64_t lseq;
	uint8_t lane;

	if (id != NIL)
		e->free_head = e->s[id].next_free;
	else if (e->used < e->conf.max_streams)
		id = e->used++;
	else
		return (NIL);
	s = &e->s[id];
	lane = s->lane;
	lseq = s->lseq;
	/* qpush sets the next[] links; in[] is zero: in no queue. */
	memset(s, 0, sizeof(*s));
	s->next_free = NIL;
	/*
	 * The id's last stream may have WRs outstanding on a lane (its
	 * CLOSE): the new one, under the same id, keeps its lane until they
	 * completed, so its OPEN cannot pass them (eng_lane_free).
	 */
	s->lane = lane;
	s->lseq = lseq;
	e->st.streams_active++;
	return (id);
}

/*
 * A slot left a queue: if it is free and no queue holds it any more, it
 * may be reused.  (Queues skip free slots; the in[] flags keep a slot from
 * being queued twice, so it must not be handed out while still queued.)
 */
void
eng_queue_drop(struct engine *e, uint32_t id)
{
	struct stream *s = &e->s[id];

	if (s->state == S_FREE && !eng_queued(s)) {
		s->next_free = e->free_head;
		e->free_head = id;
	}
}

/* Free a slot; it returns to the free list once it is in no queue. */
void
eng_slot_free(struct engine *e, uint32_t id)
{
	struct stream *s = &e->s[id];

	if (s->flags & F_PEER_MAPPED)
		eng_peer_bit(e, s->peer_id, 0);
	eng_clear_free(e, &s->rx.clear, s->rx.ring.size);
	eng_clear_free(e, &s->rx.old_clear, s->rx.old.size);
	s->state = S_FREE;
	s->flags = 0;
	s->ctrl = 0;
	e->st.streams_active--;
	eng_queue_drop(e, id);
}

/*
 * Release the slot when both sides have said their last word and no WRITE
 * still reads from our send ring.  The peer id stops being ours as soon as
 * both terminal records are exchanged: the peer may reuse it from then on.
 */
void
eng_maybe_release(struct engine *e, uint32_t id)
{
	struct stream *s = &e->s[id];

	if (!(s->flags & F_TERM_SENT) || !(s->flags & F_TERM_RECV))
		return;
	if (s->flags & F_PEER_MAPPED) {
		eng_peer_bit(e, s->peer_id, 0);
		s->flags &= (uint16_t)~F_PEER_MAPPED;
	}
	if (s->tx.wr_out != 0 || s->state == S_DEAD)
		return;
	s->state = S_DEAD;
	s->ctrl = 0;
	s->ev |= ENGINE_EV_RELEASED;
	eng_qpush(e, Q_EV, id);
}

/*
 * Stream ${id}'s slot while it is in use: live, or released but not yet
 * closed by the application (S_DEAD); else NULL.
 */
struct stream *
eng_held(const struct engine *e, uint32_t id)
{

	if (id >= e->conf.max_streams || e->s[id].state == S_FREE)
		return (NULL);
	return (&e->s[id]);
}

/* A live stream by our id (in use and not released), or NULL. */
struct stream *
eng_live(const struct engine *e, uint32_t id)
{
	struct stream *s = eng_held(e, id);

	return (s != NULL && s->state != S_DEAD ? s : NULL);
}

/*
 * Keep a stream's bytes if it asked to and the link can resume, and if
 * the peer's credit returns often enough: the receiver returns credit
 * for every quarter of its ring consumed, so a kept send ring smaller
 * than that would wait for credit for ever.  Decided before the first
 * WRITE, when both ring sizes are known (until then both bases are 0).
 */
void
eng_keep_decide(const struct engine *e, struct stream *s)
{

	if ((s->flags & F_KEEP_WANT) && e->can_resume && s->tx.sent == 0 &&
	    (uint64_t)s->tx.ring.size * 4 >= s->tx.peer_ring.size)
		s->flags |= F_KEEP;
}

/* Queue SHUTDOWN once every committed byte has been written. */
void
eng_check_shutdown(struct engine *e, uint32_t id)
{
	struct stream *s = &e->s[id];

	if (s->state == S_OPEN && (s->flags & F_APP_SHUT) &&
	    !(s->flags & (F_SHUT_SENT | F_TERM_SENT | F_RESET)) &&
	    s->tx.sent == s->tx.app)
		eng_ctrl(e, id, C_SHUTDOWN);
}

/* Queue EOF once the peer shut down and every byte was consumed. */
void
eng_check_eof(struct engine *e, uint32_t id)
{
	struct stream *s = &e->s[id];

	if ((s->flags & F_PEER_SHUT) && !(s->flags & F_EOF_DONE) &&
	    !(s->flags & F_RESET) && s->rx.cons == s->rx.final) {
		s->flags |= F_EOF_DONE;
		eng_event(e, id, ENGINE_EV_EOF);
	}
}

/*
 * A failed link's stream waits for a resume if it keeps its bytes, is
 * open and not being reset, has not exchanged both terminal records, and
 * the transport (or the embedder) ended the link, or a sealed message
 * that did not open, which someone on the fabric forged, not the peer
 * (the embedder bounds how often: rstreamd(8)); a peer that broke the
 * protocol or failed authentication gets no second chance.
 */
int
eng_suspendable(const struct stream *s, enum engine_err kind)
{

	return ((kind == ENGINE_ERR_TRANSPORT || kind == ENGINE_ERR_LOCAL ||
	    kind == ENGINE_ERR_FORGED) &&
	    (s->flags & F_KEEP) && s->state == S_OPEN &&
	    !(s->flags & F_RESET) &&
	    (s->flags & (F_TERM_SENT | F_TERM_RECV)) !=
	    (F_TERM_SENT | F_TERM_RECV));
}

void
eng_clear_free(struct engine *e, uint8_t **clear, uint32_t size)
{

	if (*clear != NULL)
		e->st.rx_private -= size;
	free(*clear);
	*clear = NULL;
}

void
eng_put32(uint8_t *p, uint32_t v)
{

	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

uint32_t
eng_get32(const uint8_t *p)
{

	return ((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3]);
}
