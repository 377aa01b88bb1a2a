/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * engine_sched: which stream writes next (deficit round robin over the
 * streams ready to send), its WRITEs and their tags as work requests
 * within the send window, and the time streams wait for credit or the
 * send queue.  Layer 1: it calls engine_seal.c and engine_core.c.
 */
#include <string.h>

#include "engine.h"
#include "engine_int.h"
#include "engine_io.h"
#include "idq.h"
#include "ring.h"
#include "wire.h"

/*
 * Can the stream put data on the wire now?  Not before a RING_AT or a
 * resume answer it owes: those say where and from which byte it writes;
 * nor before its OPEN_OK, which on a link of two lanes need not go first
 * on its own.
 */
static int
tx_ready(const struct engine *e, const struct stream *s)
{

	return (s->state == S_OPEN &&
	    !(s->flags & (F_TERM_SENT | F_RESET | F_SUSP | F_RESUMING)) &&
	    !(s->rs & RS_RING_AT) && !(s->ctrl & C_RESUME) &&
	    !(e->lanes > 1 && (s->ctrl & C_OPEN_OK)) &&
	    s->tx.app > s->tx.sent &&
	    s->tx.sent - s->tx.peer < s->tx.peer_ring.size);
}

/*
 * A stream with bytes to send waits for the peer's ring credit, or for
 * its turn on the send queue (ready: in Q_TX), or for neither (a RING_AT
 * or resume it owes, or nothing to send).  The time is charged to the
 * wait it was in, up to now, each time this is asked again.
 */
void
eng_wait_update(struct engine *e, uint32_t id)
{
	struct stream *s = &e->s[id];
	uint64_t now = e->win.now, d;
	uint8_t w = W_NONE;

	if (s->state == S_OPEN && s->tx.app > s->tx.sent &&
	    !(s->flags & (F_RESET | F_TERM_SENT | F_SUSP)))
		w = s->tx.sent - s->tx.peer >= s->tx.peer_ring.size ? W_CREDIT :
		    tx_ready(e, s) ? W_SQ : W_NONE;
	if (s->wait != W_NONE && now > s->wait_at) {
		d = now - s->wait_at;
		if (s->wait == W_CREDIT) {
			s->wait_credit += d;
			e->st.wait_credit_ns += d;
		} else {
			s->wait_sq += d;
			e->st.wait_sq_ns += d;
		}
	}
	s->wait = w;
	s->wait_at = now;
}

/*
 * A stream became ready to send: into the scheduler's queue (eng_take_data).
 * A stream that last left it with nothing to send (a request, a reply,
 * a new stream: sparse) goes first, as fq_codel serves new flows first,
 * so 64 bytes do not wait for a turn of every bulk stream; it gets one
 * quantum there like any other, and once it has used a whole quantum it
 * counts as backlogged and queues at the tail from then on.
 */
void
eng_tx_queue(struct engine *e, uint32_t id)
{
	struct stream *s = &e->s[id];

	if (!tx_ready(e, s))
		return;
	if (s->backlogged)
		eng_qpush(e, Q_TX, id);
	else
		eng_qpush_head(e, Q_TX, id);
}

uint64_t
eng_msg_avail(const struct engine *e, unsigned lane)
{

	return (e->ln[lane].peer_posted - e->ln[lane].msgs_sent);
}

int
eng_fenced(const struct engine *e)
{

	return (e->notify && e->lanes > 1);
}

uint64_t
eng_lane_arrived(const struct engine *e, unsigned lane)
{

	return (eng_fenced(e) ? e->ln[lane].seq_arrived :
	    e->ln[lane].seq_done);
}

/*
 * One FENCE out per lane at most, and only for what waits for one.  On
 * lane 0, once lane 1 may open (lane1_latch): lane 1's opening, and any
 * stream's WR since the last FENCE (fence_want), so that a stream whose
 * last WR went on lane 0 may move to lane 1 about one round trip after
 * lane 0's queue drained (it cannot ask in time: its small write went as
 * a WRITE on lane 0 already).  On lane 1: the streams waiting in Q_FENCE
 * to send WRITEs on lane 0.  Never for the link's own records alone: a
 * FENCE takes a receive the peer reports with a MSG_CREDIT, which would
 * call for a FENCE of its own, and so on for ever.
 */
int
eng_fence_due(const struct engine *e, unsigned lane)
{
	const struct lane *l = &e->ln[lane];

	/* Nor in a SEND with our proof or handshake message, which the
	 * peer must take before any FENCE (rec_allowed). */
	if (!eng_fenced(e) || l->fence_seq != FENCE_NONE ||
	    l->seq_arrived >= l->seq || e->auth_send || e->hs.out_len > 0)
		return (0);
	if (lane == 1)
		return (e->q[Q_FENCE].head != NIL);
	return (e->lane1_latched && (l->fence_want ||
	    l->seq_arrived < e->lane1_at));
}

unsigned
eng_fence_ans_lane(const struct engine *e)
{

	return (eng_lane1_open(e) ? 1 : 0);
}

int
eng_lane1_open(const struct engine *e)
{

	/* As engine_send.c's lane1_latch found, taking WRs. */
	return (e->lane1_latched && eng_lane_arrived(e, 0) >= e->lane1_at);
}

int
eng_lane_free(const struct engine *e, const struct stream *s, unsigned lane)
{

	return (s->lseq == 0 || s->lane == lane ||
	    eng_lane_arrived(e, s->lane) >= s->lseq);
}

unsigned
eng_rec_lane(const struct engine *e, const struct stream *s)
{

	return (eng_lane1_open(e) && eng_lane_free(e, s, 1) &&
	    !(s->ctrl & C_RESUME) && !(s->flags & F_RESUMING) ? 1 : 0);
}

void
eng_lane_mark(struct engine *e, struct stream *s, unsigned lane)
{

	s->lane = (uint8_t)lane;
	s->lseq = e->ln[lane].seq + 1;
	e->ln[lane].fence_want = 1;
}

int
eng_eager_ok(const struct engine *e, const struct stream *s)
{
	uint64_t n = s->tx.app - s->tx.sent;

	return (eng_lane1_open(e) && tx_ready(e, s) &&
	    n <= ENGINE_EAGER_MAX &&
	    n <= s->tx.peer_ring.size - (s->tx.sent - s->tx.peer) &&
	    s->rs == 0 && s->tx.old.size == 0 && eng_lane_free(e, s, 1));
}

int
eng_eager_any(const struct engine *e)
{
	uint32_t id;

	if (e->lanes < 2)
		return (0);
	for (id = e->q[Q_TX].head; id != NIL; id = e->s[id].next[Q_TX])
		if (eng_eager_ok(e, &e->s[id]))
			return (1);
	return (0);
}

void
eng_fence_lift(struct engine *e)
{
	uint32_t id;

	while ((id = eng_qpop(e, Q_FENCE)) != NIL) {
		eng_tx_queue(e, id);
		eng_wait_update(e, id);
		eng_queue_drop(e, id);
	}
}

void
eng_tx_freed(struct engine *e, uint32_t id)
{
	struct stream *s = &e->s[id];

	if ((s->flags & F_WANT_WR) && (!(s->flags & F_KEEP) || e->seal.tx)) {
		s->flags &= (uint16_t)~F_WANT_WR;
		eng_event(e, id, ENGINE_EV_WRITABLE);
	}
}

/* Does a stream in Q_CTRL have records for ${lane}? */
static int
ctrl_for(const struct engine *e, unsigned lane)
{
	uint32_t id;

	if (e->lanes < 2)
		return (e->q[Q_CTRL].head != NIL);
	for (id = e->q[Q_CTRL].head; id != NIL; id = e->s[id].next[Q_CTRL])
		if (eng_rec_lane(e, &e->s[id]) == lane)
			return (1);
	return (0);
}

int
eng_ctrl_pending(const struct engine *e, unsigned lane)
{
	const struct lane *l = &e->ln[lane];

	if (l->recv_posted - l->recv_reported >= e->msg_credit_threshold ||
	    ctrl_for(e, lane) || eng_fence_due(e, lane) ||
	    (e->fence_ans_due && lane == eng_fence_ans_lane(e)))
		return (1);
	/* What is not a stream's goes on lane 0. */
	return (lane == 0 && (idq_len(&e->refusals) > 0 ||
	    e->ctl.keepalive || e->auth_send || e->hs.out_len > 0 ||
	    e->res.offer_due || e->res.serve == RES_DENYING ||
	    e->res.serve == RES_PROVING || e->res.ask == RES_NAMING ||
	    idq_len(&e->res.gone) > 0 ||
	    (e->ctl.goaway && !e->ctl.goaway_sent)));
}

/*
 * Number the WR and decide whether it asks for a completion.  Only these
 * WRs need one, so that nothing waits for a completion that never comes
 * while the rest (a round trip's WRITE, typically) cost no completion
 * event: every signal_every-th WR (send queue space); every SEND (one
 * may end a stream, whose release waits for every WR it posted, and a
 * completion retires every WR before it); a WRITE after which more
 * than a quarter of its stream's send ring would be held by WRITEs no
 * signalled completion will free; and a WRITE that window_signal (or
 * ${force}: see take_write) asks for, so the window opens again.  The
 * ring rule keeps the application from waiting for ring space for ever:
 * once the signalled WRITE completes, at most a quarter of the ring is
 * held and the rest is free for new data, whose WRITEs are signalled in
 * turn.
 */
void
eng_emit(struct engine *e, unsigned lane, struct engine_wr *w,
    uint32_t stream, uint64_t end, int force)
{
	struct lane *l = &e->ln[lane];
	struct wrinfo *wi = &l->wri[l->seq % e->conf.sq_size];
	struct stream *s = stream != NIL ? &e->s[stream] : NULL;
	uint32_t bytes = s != NULL && lane == 0 ? w->len : 0;

	w->wr_id = l->seq | (uint64_t)lane << ENGINE_WR_LANE_SHIFT;
	w->lane = (uint8_t)lane;
	w->inlined = w->len <= e->conf.inline_size;
	w->signaled = 0;
	/*
	 * A WRITE's tag (SEND_IMM) asks for no completion of its own.
	 * Every SEND of lane 1 asks for one: a stream's data waits for them
	 * before it may go on lane 0 (Q_FENCE).  Without immediates
	 * (iWARP) every data WRITE does: iWARP completes a WRITE once TCP
	 * took its bytes, and Soft-iWARP sends an unsignalled one of a page
	 * or more from the ring itself, after that, and again to
	 * retransmit; so the ring's bytes may change (new data, a sealed
	 * WRITE's plaintext restored) only under a completion of the
	 * WRITE's own, for which siw copies them.
	 */
	if ((s == NULL && w->op != ENGINE_WR_SEND_IMM) || force ||
	    lane == 1 || (e->notify && s != NULL) ||
	    l->last_signaled == UINT64_MAX ||
	    l->seq - l->last_signaled >= e->signal_every ||
	    (s != NULL && (end - s->tx.sig > s->tx.ring.size / 4 ||
	    window_signal(&e->win, bytes)))) {
		w->signaled = 1;
		l->last_signaled = l->seq;
		e->st.signaled++;
		if (s != NULL)
			s->tx.sig = end;
	}
	wi->stream = stream;
	wi->end = end;
	wi->bytes = bytes;
	wi->signaled = w->signaled;
	if (lane == 0)
		window_post(&e->win, bytes, w->signaled, &wi->mark);
	if (s != NULL)
		eng_lane_mark(e, s, lane);
	if (lane == 0 && w->op == ENGINE_WR_SEND)
		e->send0_end = l->seq + 1;
	l->seq++;
	/* A plain WRITE takes no receive: its tag's SEND does. */
	if (w->op != ENGINE_WR_WRITE)
		l->msgs_sent++;
}

/*
 * The tag of the sealed WRITE just taken, as a SEND WITH IMMEDIATE right
 * after it: nothing may come between, since the receiver opens the data
 * where the stream's ring is when the tag arrives.  Without immediates
 * every data WRITE is followed so, by a SEND whose notice says what the
 * immediate would, and then the tag if it was sealed: arriving, that
 * SEND says the WRITE before it was placed.
 */
void
eng_take_tag(struct engine *e, struct engine_wr *w)
{
	const struct wrinfo *wi =
	    &e->ln[0].wri[(e->ln[0].seq - 1) % e->conf.sq_size];
	size_t slot = (size_t)(e->ln[0].seq % e->conf.sq_size) * WIRE_MSG_SIZE;
	uint32_t id = wi->stream;

	/*
	 * The WRITE's bytes count at the receiver when the tag arrives: the
	 * stream is on lane 0 until the tag, not just the WRITE, completed.
	 */
	if (id != NIL)
		eng_lane_mark(e, &e->s[id], 0);
	memset(w, 0, sizeof(*w));
	w->op = ENGINE_WR_SEND_IMM;
	w->len = (uint32_t)ENG_NOTICE(e) + (wi->sealed ? WIRE_TAG_LEN : 0);
	w->local_addr = e->conf.ctrl_send_addr + slot;
	w->lkey = e->conf.ctrl_send_lkey;
	w->imm = e->seal.tag_imm;
	eng_emit(e, 0, w, NIL, 0, 0);
	/* eng_emit took it for the tag it is; without immediates, a SEND. */
	if (e->notify) {
		eng_put32(e->conf.ctrl_send + slot, w->imm);
		w->op = ENGINE_WR_SEND;
		w->imm = 0;
	}
	e->seal.tag_due = 0;
}

/*
 * Emit one WRITE WITH IMM for stream ${id}, of at most a chunk and what
 * is left of its quantum; 1 if it did, 0 if it could not, -1 if the
 * window is full.  A window that shrank below what is outstanding, with
 * no signalled WR among it, lets this WRITE through signalled: a
 * completion must come to open it.
 */
static int
take_write(struct engine *e, uint32_t id, struct engine_wr *w)
{
	struct stream *s = &e->s[id];
	const struct engine_ring *src = &s->tx.ring;
	uint64_t n, cur = s->tx.sent;
	int force = 0;

	n = s->tx.app - cur;
	if (n > s->tx.peer_ring.size - (cur - s->tx.peer))
		n = s->tx.peer_ring.size - (cur - s->tx.peer);
	if (n > e->win.chunk)
		n = e->win.chunk;
	if (n > s->deficit)
		n = s->deficit;
	/* Bytes from before a resize are in the old ring, up to the switch. */
	if (s->tx.old.size != 0 && cur < s->tx.switch_at) {
		src = &s->tx.old;
		if (n > s->tx.switch_at - cur)
			n = s->tx.switch_at - cur;
	}
	/* Both rings are powers of two: the smaller one's wrap is the cut. */
	n = ring_contig(src->size, cur, n);
	n = ring_contig(s->tx.peer_ring.size, cur, n);
	if (n == 0)
		return (0);
	/* Its records or eager data on lane 1 go first (Q_FENCE). */
	if (!eng_lane_free(e, s, 0)) {
		eng_qpush(e, Q_FENCE, id);
		return (0);
	}
	if (!window_allows(&e->win, n)) {
		if (ENG_SIGNAL_PENDING(&e->ln[0]))
			return (-1);
		force = 1;
	}
	memset(w, 0, sizeof(*w));
	w->op = e->seal.tx || e->notify ? ENGINE_WR_WRITE : ENGINE_WR_WRITE_IMM;
	w->len = (uint32_t)n;
	w->local_addr = src->addr + ring_off(src->size, cur);
	w->lkey = src->key;
	w->remote_addr = s->tx.peer_ring.addr + ring_off(s->tx.peer_ring.size,
	    cur);
	w->rkey = s->tx.peer_ring.rkey;
	w->imm = wire_imm_encode(s->peer_id, (uint32_t)n);
	s->tx.sent += n;
	s->deficit -= (uint32_t)n;
	s->tx.wr_out++;
	eng_emit(e, 0, w, id, s->tx.sent, force);
	eng_seal_write(e, w);
	if (e->notify) {
		/* Its notice follows it, as a tag does (eng_take_tag). */
		e->seal.tag_due = 1;
		e->seal.tag_imm = w->imm;
	}
	e->st.writes++;
	e->st.bytes_tx += n;
	return (1);
}

/*
 * The next WRITE of the scheduler: deficit round robin in bytes over the
 * streams ready to send (Q_TX, in the order they became ready).  The
 * stream at the head gets a quantum of chunk * weight bytes when its turn
 * starts and keeps the head until it has written the quantum or has
 * nothing ready; then it goes to the tail if it is still ready, and its
 * unused quantum lapses.  So a stream that becomes ready waits for at
 * most one quantum of each stream ahead of it, and a 64-byte stream
 * never waits behind a neighbour's whole ring.  Returns 1 if it emitted
 * ${w}, 0 if no stream is ready, -1 if the window is full.
 */
int
eng_take_data(struct engine *e, struct engine_wr *w)
{
	struct stream *s;
	uint32_t id;
	int r;

	while ((id = e->q[Q_TX].head) != NIL) {
		s = &e->s[id];
		r = 0;
		if (tx_ready(e, s)) {
			if (s->deficit == 0)
				s->deficit = e->win.chunk *
				    (s->weight ? s->weight : 1u);
			if ((r = take_write(e, id, w)) < 0) {
				e->st.stall_window++;
				return (-1);
			}
		}
		if (r == 0 || s->deficit == 0 || !tx_ready(e, s)) {
			eng_qpop(e, Q_TX);
			if (s->deficit == 0)
				s->backlogged = 1;
			else if (s->tx.app == s->tx.sent)
				s->backlogged = 0;
			s->deficit = 0;
			if (r != 0 && tx_ready(e, s)) {
				eng_qpush(e, Q_TX, id);
			} else {
				if (s->state == S_OPEN &&
				    s->tx.app > s->tx.sent && !s->in[Q_FENCE])
					e->st.stall_ring++;
				eng_queue_drop(e, id);
			}
		}
		eng_wait_update(e, id);
		eng_check_shutdown(e, id);
		if (r > 0)
			return (1);
	}
	return (0);
}

void
engine_clock(struct engine *e, uint64_t now)
{

	window_clock(&e->win, now);
}

int
engine_data_busy(struct engine *e)
{
	int busy = e->q[Q_TX].head != NIL || e->st.bytes_tx != e->busy_mark;

	e->busy_mark = e->st.bytes_tx;
	return (busy);
}

void
engine_window_share(struct engine *e, uint32_t permille)
{

	window_share(&e->win, permille);
}
