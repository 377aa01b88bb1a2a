/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * engine_send: the engine's output: the pending control records encoded
 * into SENDs, in protocol order, and the work requests to post, control
 * before data.  Layer 3: it calls the layers below.
 */
#include <string.h>

#include "engine.h"
#include "engine_int.h"
#include "engine_io.h"
#include "idq.h"
#include "ring.h"
#include "wire.h"

/* Room kept at the end of every SEND for a MSG_CREDIT record. */
#define MSG_CREDIT_ROOM	10

/*
 * Records fill a SEND up to SEND_ROOM bytes, sealed or not, which leaves
 * a sealed SEND's tag its place.  On a link without immediates its
 * notice comes first and counts in the room (build_send starts the
 * length after it).
 */
#define SEND_ROOM	(WIRE_MSG_SIZE - WIRE_TAG_LEN)

static int
put(uint8_t *buf, size_t *len, const struct wire_rec *r)
{
	size_t cap = SEND_ROOM - MSG_CREDIT_ROOM;
	size_t n;

	if (r->type == WIRE_MSG_CREDIT)
		cap = SEND_ROOM;
	n = *len < cap ? wire_rec_encode(buf + *len, cap - *len, r) : 0;

	*len += n;
	return (n != 0);
}

/* What the peer is granted of receive ring ${ring}: address, rkey, size. */
static struct wire_ring
ring_grant(const struct engine_ring *ring)
{
	struct wire_ring w;

	w.addr = ring->addr;
	w.rkey = ring->key;
	w.size = ring->size;
	return (w);
}

/*
 * One of encode_stream's steps: a record of stream ${id} if it has one
 * pending.  ENC_ON when it went (or none was due), ENC_FULL when it did not
 * fit this SEND, ENC_WAIT when the stream's other records must wait.
 */
enum enc { ENC_ON, ENC_FULL, ENC_WAIT };

/* A record of ${type} to the peer about stream ${s}. */
static void
enc_rec(struct wire_rec *r, const struct stream *s, uint8_t type)
{

	memset(r, 0, sizeof(*r));
	r->type = type;
	r->stream = s->peer_id;
}

static enum enc
enc_resume(struct engine *e, uint32_t id, uint8_t *buf, size_t *len)
{
	struct stream *s = &e->s[id];
	struct wire_rec r;

	if (!(s->ctrl & C_RESUME))
		return (ENC_ON);
	enc_rec(&r, s, WIRE_RESUME_STREAM);
	r.peer_stream = id;
	r.cursor = s->rx.tail;
	r.consumed = s->rx.cons;
	r.flags = (uint8_t)(((s->flags & F_PEER_SHUT) ? WIRE_RS_SHUT : 0) |
	    ((s->flags & F_TERM_RECV) ? WIRE_RS_CLOSE : 0));
	r.ring = ring_grant(&s->rx.ring);
	if (!put(buf, len, &r))
		return (ENC_FULL);
	s->rx.rep = s->rx.cons;
	s->ctrl &= (uint8_t)~C_RESUME;
	eng_tx_queue(e, id);
	return (ENC_ON);
}

/* The rest waits until the peer's answer resumed the stream. */
static enum enc
enc_resuming(struct engine *e, uint32_t id, uint8_t *buf, size_t *len)
{

	(void)buf;
	(void)len;
	return ((e->s[id].flags & F_RESUMING) ? ENC_WAIT : ENC_ON);
}

static enum enc
enc_open(struct engine *e, uint32_t id, uint8_t *buf, size_t *len)
{
	struct stream *s = &e->s[id];
	struct wire_rec r, o;

	if (!(s->ctrl & C_OPEN))
		return (ENC_ON);
	/*
	 * The peer may still map an id freed here to a stream it is
	 * resuming, until our GONE answer for it (or, asking, until the
	 * RESUME_STREAMs that end what we did not name): a new OPEN waits
	 * for every RESUME_STREAM and every GONE answer to go first, and
	 * from version 5 for the peer's proof too.
	 */
	if (e->res.left > 0 || e->res.count_wait ||
	    idq_len(&e->res.gone) > 0 ||
	    e->res.ask == RES_NAMING ||
	    !engine_resume_proven(e))
		return (ENC_FULL);
	memset(&r, 0, sizeof(r));
	r.type = WIRE_OPEN;
	r.stream = id;
	r.ring = ring_grant(&s->rx.ring);
	r.name_len = (uint8_t)strlen(s->name);
	memcpy(r.name, s->name, r.name_len);
	/* The ORIGIN and its OPEN share one SEND: room for both. */
	if ((s->ctrl & C_ORIGIN) && e->can_origin) {
		memset(&o, 0, sizeof(o));
		o.type = WIRE_ORIGIN;
		o.stream = id;
		o.origin = s->origin;
		if (*len + wire_rec_size(&o) + wire_rec_size(&r) >
		    SEND_ROOM - MSG_CREDIT_ROOM || !put(buf, len, &o))
			return (ENC_FULL);
	}
	if (!put(buf, len, &r))
		return (ENC_FULL);
	s->ctrl &= (uint8_t)~(C_OPEN | C_ORIGIN);
	return (ENC_ON);
}

static enum enc
enc_open_ok(struct engine *e, uint32_t id, uint8_t *buf, size_t *len)
{
	struct stream *s = &e->s[id];
	struct wire_rec r;

	if (!(s->ctrl & C_OPEN_OK))
		return (ENC_ON);
	enc_rec(&r, s, WIRE_OPEN_OK);
	r.peer_stream = id;
	r.ring = ring_grant(&s->rx.ring);
	if (!put(buf, len, &r))
		return (ENC_FULL);
	s->ctrl &= (uint8_t)~C_OPEN_OK;
	if (e->lanes > 1)
		eng_tx_queue(e, id);	/* it waited for this (tx_ready) */
	return (ENC_ON);
}

static enum enc
enc_ring_at(struct engine *e, uint32_t id, uint8_t *buf, size_t *len)
{
	struct stream *s = &e->s[id];
	struct wire_rec r;

	if (!(s->rs & RS_RING_AT))
		return (ENC_ON);
	/* Every WRITE before this record went to the old ring. */
	enc_rec(&r, s, WIRE_RING_AT);
	r.cursor = s->tx.sent;
	if (!put(buf, len, &r))
		return (ENC_FULL);
	s->rs &= (uint8_t)~RS_RING_AT;
	s->tx.peer_ring = s->tx.peer_next;
	memset(&s->tx.peer_next, 0, sizeof(s->tx.peer_next));
	eng_tx_queue(e, id);
	return (ENC_ON);
}

static enum enc
enc_ring(struct engine *e, uint32_t id, uint8_t *buf, size_t *len)
{
	struct stream *s = &e->s[id];
	struct wire_rec r;

	if (!(s->rs & RS_RING))
		return (ENC_ON);
	enc_rec(&r, s, WIRE_RING);
	r.ring = ring_grant(&s->rx.next);
	if (!put(buf, len, &r))
		return (ENC_FULL);
	s->rs &= (uint8_t)~RS_RING;
	s->ring_ticks = 0;
	return (ENC_ON);
}

static enum enc
enc_credit(struct engine *e, uint32_t id, uint8_t *buf, size_t *len)
{
	struct stream *s = &e->s[id];
	struct wire_rec r;

	if (!(s->ctrl & C_CREDIT))
		return (ENC_ON);
	enc_rec(&r, s, WIRE_CREDIT);
	r.cursor = s->rx.cons;
	if (!put(buf, len, &r))
		return (ENC_FULL);
	s->rx.rep = s->rx.cons;
	s->rx.reps[s->rx.rep_n++ % REPS] = s->rx.cons;
	s->ctrl &= (uint8_t)~C_CREDIT;
	e->st.credit_updates++;
	return (ENC_ON);
}

static enum enc
enc_shutdown(struct engine *e, uint32_t id, uint8_t *buf, size_t *len)
{
	struct stream *s = &e->s[id];
	struct wire_rec r;

	if (!(s->ctrl & C_SHUTDOWN))
		return (ENC_ON);
	enc_rec(&r, s, WIRE_SHUTDOWN);
	r.cursor = s->tx.sent;
	if (!put(buf, len, &r))
		return (ENC_FULL);
	s->flags |= F_SHUT_SENT;
	s->ctrl &= (uint8_t)~C_SHUTDOWN;
	return (ENC_ON);
}

/* RESET or CLOSE: this side's last word on the stream. */
static enum enc
enc_term(struct engine *e, uint32_t id, uint8_t *buf, size_t *len)
{
	struct stream *s = &e->s[id];
	struct wire_rec r;

	if (!(s->ctrl & (C_RESET | C_CLOSE)))
		return (ENC_ON);
	/* CLOSE waits for our SHUTDOWN (a graceful close implies it). */
	if ((s->ctrl & C_CLOSE) && !(s->flags & (F_SHUT_SENT | F_RESET)))
		return (ENC_WAIT);
	enc_rec(&r, s, (s->ctrl & C_RESET) ? WIRE_RESET : WIRE_CLOSE);
	r.reason = s->reason;
	if (!put(buf, len, &r))
		return (ENC_FULL);
	s->flags |= F_TERM_SENT;
	s->ctrl &= (uint8_t)~(C_RESET | C_CLOSE);
	eng_maybe_release(e, id);
	return (ENC_ON);
}

/* A stream's records in protocol order. */
static enum enc (*const enc_steps[])(struct engine *, uint32_t, uint8_t *,
    size_t *) = {
	enc_resume, enc_resuming, enc_open, enc_open_ok, enc_ring_at,
	enc_ring, enc_credit, enc_shutdown, enc_term
};

/*
 * Encode the records stream ${id} has pending, in protocol order, as far
 * as they fit.  Returns 1 if all were encoded (or the rest must wait for
 * the peer), 0 if the SEND is full.
 */
static int
encode_stream(struct engine *e, uint32_t id, uint8_t *buf, size_t *len)
{
	size_t i, was = *len;
	enum enc step = ENC_ON;

	if (e->s[id].state == S_FREE)
		return (1);
	for (i = 0; step == ENC_ON &&
	    i < sizeof(enc_steps) / sizeof(enc_steps[0]); i++)
		step = enc_steps[i](e, id, buf, len);
	/* Its next WR on the other lane waits for this SEND (Q_FENCE). */
	if (*len != was)
		eng_lane_mark(e, &e->s[id], e->tx_lane);
	return (step != ENC_FULL);
}

/*
 * Our handshake message ends its SEND: what follows it may be sealed
 * (rstreamd-protocol(7), "Sealed records"), so nothing may share a SEND
 * with it.  The responder then posts nothing until the initiator's
 * message 3: before version 7 the initiator takes everything after
 * message 2 as sealed, and from 7 the confirmation must come next.
 */
static int
send_hs(struct engine *e, uint8_t *buf, size_t *len)
{
	struct wire_rec r;

	memset(&r, 0, sizeof(r));
	r.type = WIRE_HANDSHAKE;
	r.hs_len = (uint8_t)e->hs.out_len;
	memcpy(r.hs, e->hs.out, e->hs.out_len);
	if (put(buf, len, &r)) {
		e->hs.out_len = 0;
		if (!e->a.initiator && e->auth == AUTH_HS)
			e->auth = AUTH_HS_HELD;
	}
	memset(r.hs, 0, sizeof(r.hs));
	return (0);
}

/*
 * build_send's steps: each puts the link's records of one kind that are
 * due, as far as they fit.  They return 1, or 0 when the SEND must go as
 * it is (the RESUME header did not fit: nothing may pass it).
 */
static int
send_auth(struct engine *e, uint8_t *buf, size_t *len)
{
	struct wire_rec r;

	if (e->hs.out_len > 0)
		return (send_hs(e, buf, len));
	if (!e->auth_send)
		return (1);
	memset(&r, 0, sizeof(r));
	r.type = WIRE_AUTH;
	e->a.prove(e->a.arg, r.proof);
	if (put(buf, len, &r))
		e->auth_send = 0;
	memset(r.proof, 0, sizeof(r.proof));
	return (1);
}

/* A record of ${type} that carries ${reason} alone; 1 if it fit. */
static int
put_reason(uint8_t *buf, size_t *len, uint8_t type, uint16_t reason)
{
	struct wire_rec r;

	memset(&r, 0, sizeof(r));
	r.type = type;
	r.reason = reason;
	return (put(buf, len, &r));
}

static int
send_goaway(struct engine *e, uint8_t *buf, size_t *len)
{

	if (e->ctl.goaway && !e->ctl.goaway_sent &&
	    put_reason(buf, len, WIRE_GOAWAY, e->ctl.goaway_reason))
		e->ctl.goaway_sent = 1;
	return (1);
}

static int
send_resume(struct engine *e, uint8_t *buf, size_t *len)
{
	struct wire_rec r;

	if (!e->res.offer_due)
		return (1);
	memset(&r, 0, sizeof(r));
	r.type = WIRE_RESUME;
	memcpy(r.token, e->res.token, WIRE_NONCE_LEN);
	memcpy(r.proof, e->res.proof, WIRE_AUTH_LEN);
	/* From version 10 the count waits for the peer's proof. */
	r.count = e->can_res_count ? 0 : e->res.count;
	if (!put(buf, len, &r))
		return (0);
	e->res.offer_due = 0;
	memset(e->res.proof, 0, sizeof(e->res.proof));
	memset(&r, 0, sizeof(r));	/* and the proof's copy */
	return (1);
}

static int
send_resume_denied(struct engine *e, uint8_t *buf, size_t *len)
{

	if (e->res.serve == RES_DENYING &&
	    put_reason(buf, len, WIRE_RESUME_DENIED, e->res.reason))
		e->res.serve = RES_REFUSED;
	return (1);
}

static int
send_resume_proof(struct engine *e, uint8_t *buf, size_t *len)
{
	struct wire_rec r;

	if (e->res.serve != RES_PROVING)
		return (1);
	memset(&r, 0, sizeof(r));
	r.type = WIRE_RESUME_PROOF;
	memcpy(r.proof, e->res.proof, WIRE_AUTH_LEN);
	if (put(buf, len, &r)) {
		e->res.serve = RES_TAKEN;
		memset(e->res.proof, 0, sizeof(e->res.proof));
	}
	memset(&r, 0, sizeof(r));	/* and the proof's copy */
	return (1);
}

/* Server: the streams of a resume we no longer have (GONE answers). */
static int
send_gone(struct engine *e, uint8_t *buf, size_t *len)
{
	struct wire_rec r;
	uint32_t v;

	memset(&r, 0, sizeof(r));
	while (idq_len(&e->res.gone) > 0) {
		v = idq_peek(&e->res.gone);
		r.type = WIRE_RESUME_STREAM;
		r.stream = v >> 16;
		r.peer_stream = v & 0xffff;
		r.flags = WIRE_RS_GONE;
		if (!put(buf, len, &r))
			break;
		idq_drop(&e->res.gone);
	}
	return (1);
}

/*
 * Version 5: a proven resume's streams are named before any OPEN; from
 * version 10 their count goes first.
 */
static int
send_naming(struct engine *e, uint8_t *buf, size_t *len)
{
	struct wire_rec r;

	if (e->res.ask != RES_NAMING)
		return (1);
	if (e->res.count_due) {
		memset(&r, 0, sizeof(r));
		r.type = WIRE_RESUME_COUNT;
		r.count = e->res.count;
		if (!put(buf, len, &r))
			return (1);
		e->res.count_due = 0;
	}
	for (; e->res.name < e->used; e->res.name++)
		if ((e->s[e->res.name].ctrl & C_RESUME) &&
		    !encode_stream(e, e->res.name, buf, len))
			return (1);
	e->res.ask = RES_PROVEN;
	return (1);
}

static int
send_refusals(struct engine *e, uint8_t *buf, size_t *len)
{
	struct wire_rec r;
	uint32_t v;

	memset(&r, 0, sizeof(r));
	while (idq_len(&e->refusals) > 0) {
		v = idq_peek(&e->refusals);
		r.type = WIRE_REFUSE;
		r.stream = v >> 16;
		r.reason = (uint16_t)v;
		if (!put(buf, len, &r))
			break;
		eng_peer_bit(e, r.stream, 0);
		idq_drop(&e->refusals);
	}
	return (1);
}

/*
 * The streams' records, in the order they asked, those of the lane this
 * SEND goes on (eng_rec_lane).
 */
static int
send_streams(struct engine *e, uint8_t *buf, size_t *len)
{
	uint32_t id, next, prev = NIL;

	for (id = e->q[Q_CTRL].head; id != NIL; id = next) {
		next = e->s[id].next[Q_CTRL];
		if (e->lanes > 1 && eng_rec_lane(e, &e->s[id]) != e->tx_lane) {
			prev = id;
			continue;
		}
		if (!encode_stream(e, id, buf, len))
			break;
		eng_qunlink(e, Q_CTRL, prev, id);
		eng_queue_drop(e, id);
	}
	return (1);
}

/*
 * Stream ${id}'s bytes as DATA records, all of them (eng_eager_ok); 0 if
 * they do not fit.  Each record takes its bytes straight from the send
 * ring (a wrap cuts one), so no copy of them is left anywhere else.
 */
static int
put_eager(struct engine *e, uint32_t id, uint8_t *buf, size_t *len)
{
	struct stream *s = &e->s[id];
	const struct engine_ring *src = &s->tx.ring;
	uint64_t n = s->tx.app - s->tx.sent, cur = s->tx.sent, end = cur + n;
	size_t recs = (n + WIRE_DATA_MAX - 1) / WIRE_DATA_MAX + 1;
	struct wire_rec r;

	/* Its records' headers (one more for a wrap) and its bytes. */
	enc_rec(&r, s, WIRE_DATA);
	r.data = buf;
	r.data_len = 1;
	if (*len + n + recs * (wire_rec_size(&r) - 1) >
	    SEND_ROOM - MSG_CREDIT_ROOM)
		return (0);
	for (; cur < end; cur += r.data_len) {
		r.cursor = cur;
		r.data_len = (uint8_t)ring_contig(src->size, cur,
		    end - cur < WIRE_DATA_MAX ? end - cur : WIRE_DATA_MAX);
		r.data = e->conf.ring_ptr(e->conf.ring_arg, src->addr +
		    ring_off(src->size, cur));
		(void)put(buf, len, &r);
	}
	s->tx.sent = end;
	/* The bytes left the ring: the SEND holds them. */
	if (s->tx.wr_out == 0)
		s->tx.done = s->tx.sent;
	eng_lane_mark(e, s, e->tx_lane);
	e->st.eager++;
	e->st.eager_bytes += n;
	e->st.bytes_tx += n;
	eng_tx_freed(e, id);
	return (1);
}

/*
 * Lane 1: the bytes of streams that have little to send (eng_eager_ok),
 * in the scheduler's order, each with the records that follow them.
 */
static int
send_eager(struct engine *e, uint8_t *buf, size_t *len)
{
	uint32_t id, next, prev = NIL;
	struct stream *s;

	if (e->tx_lane != 1)
		return (1);
	for (id = e->q[Q_TX].head; id != NIL; id = next) {
		s = &e->s[id];
		next = s->next[Q_TX];
		if (!eng_eager_ok(e, s)) {
			prev = id;
			continue;
		}
		if (!put_eager(e, id, buf, len))
			break;
		eng_qunlink(e, Q_TX, prev, id);
		s->backlogged = 0;
		s->deficit = 0;
		eng_wait_update(e, id);
		eng_check_shutdown(e, id);
		if (s->in[Q_CTRL])
			(void)encode_stream(e, id, buf, len);
		eng_queue_drop(e, id);
	}
	return (1);
}

static int
send_keepalive(struct engine *e, uint8_t *buf, size_t *len)
{
	struct wire_rec r;

	if (*len == ENG_NOTICE(e) && e->ctl.keepalive) {
		memset(&r, 0, sizeof(r));
		r.type = WIRE_KEEPALIVE;
		put(buf, len, &r);
	}
	return (1);
}

/*
 * Fences first, where there is room for them: a FENCE due on ${lane}
 * covers this SEND as well, since the peer answers it once it took the
 * whole SEND (1 if it went); and the answers to the peer's (FENCED) on
 * theirs.
 */
static int
send_fences(struct engine *e, unsigned lane, uint8_t *buf, size_t *len)
{
	int fenced = 0;
	struct lane *l = &e->ln[lane];
	struct wire_rec r;
	unsigned k;

	memset(&r, 0, sizeof(r));
	if (eng_fence_due(e, lane)) {
		r.type = WIRE_FENCE;
		r.cursor = ++e->fence_last;
		(void)put(buf, len, &r);
		l->fence_seq = l->seq;
		l->fence_num = r.cursor;
		e->st.lane[lane].fences++;
		fenced = 1;
	}
	if (e->fence_ans_due == 0 || lane != eng_fence_ans_lane(e))
		return (fenced);
	for (k = 0; k < WIRE_LANES_MAX; k++) {
		if (!(e->fence_ans_due & (1u << k)))
			continue;
		r.type = WIRE_FENCED;
		r.cursor = e->fence_ans[k];
		(void)put(buf, len, &r);
	}
	e->fence_ans_due = 0;
	return (fenced);
}

/* What a SEND carries, in this order. */
static int (*const send_steps[])(struct engine *, uint8_t *, size_t *) = {
	send_auth, send_goaway, send_resume, send_resume_denied,
	send_resume_proof, send_gone, send_naming, send_refusals,
	send_streams, send_keepalive
};

/* What a SEND on lane 1 carries: streams' records, then eager bytes. */
static int (*const lane1_steps[])(struct engine *, uint8_t *, size_t *) = {
	send_streams, send_eager
};

/* The slot of lane ${lane}'s SEND ${seq} in the control send area. */
static size_t
send_slot(const struct engine *e, unsigned lane, uint64_t seq)
{

	return (((size_t)lane * e->conf.sq_size +
	    (size_t)(seq % e->conf.sq_size)) * WIRE_MSG_SIZE);
}

/* Build lane ${lane}'s next SEND of records into its slot. */
static size_t
build_send(struct engine *e, unsigned lane)
{
	struct lane *l = &e->ln[lane];
	uint8_t *buf = e->conf.ctrl_send + send_slot(e, lane, l->seq);
	int fenced;
	size_t len = ENG_NOTICE(e), i, nsteps = lane == 0 ?
	    sizeof(send_steps) / sizeof(send_steps[0]) :
	    sizeof(lane1_steps) / sizeof(lane1_steps[0]);
	struct wire_rec r;

	e->tx_lane = lane;
	if (e->notify)
		eng_put32(buf, WIRE_NOTICE_RECORDS);
	fenced = send_fences(e, lane, buf, &len);
	for (i = 0; i < nsteps; i++)
		if (!(lane == 0 ? send_steps : lane1_steps)[i](e, buf, &len))
			break;
	/* The FENCE covers this SEND's stream records too. */
	if (fenced)
		l->fence_want = 0;
	if (i < nsteps)
		return (len > ENG_NOTICE(e) ? len : 0);
	/*
	 * Report our receives whenever the threshold is reached, and always
	 * when this SEND takes the peer's last message credit: a message
	 * that empties our credit must refill the peer's, or both sides
	 * could end up waiting for each other.
	 */
	if (l->recv_posted - l->recv_reported >= e->msg_credit_threshold ||
	    (len > ENG_NOTICE(e) && eng_msg_avail(e, lane) <= 1)) {
		memset(&r, 0, sizeof(r));
		r.type = WIRE_MSG_CREDIT;
		r.cursor = l->recv_posted;
		put(buf, &len, &r);
		l->recv_reported = l->recv_posted;
		e->st.msg_credit_updates++;
	}
	if (len == ENG_NOTICE(e))
		return (0);
	/* Any SEND proves the link alive as well as a KEEPALIVE would. */
	e->ctl.keepalive = 0;
	return (len);
}

/* One SEND on ${lane} of the records pending; 0 if there were none. */
static int
take_send(struct engine *e, unsigned lane, struct engine_wr *w)
{
	size_t slot = send_slot(e, lane, e->ln[lane].seq);
	size_t len = build_send(e, lane);

	if (len == 0)
		return (0);
	memset(w, 0, sizeof(*w));
	w->op = ENGINE_WR_SEND;
	w->len = (uint32_t)len;
	w->local_addr = e->conf.ctrl_send_addr + slot;
	w->lkey = e->conf.ctrl_send_lkey;
	eng_emit(e, lane, w, NIL, 0, 0);
	eng_seal_send(e, w);
	if (e->hs.seal_after) {
		e->hs.seal_after = 0;
		engine_seal_tx(e);
	}
	e->st.sends++;
	return (1);
}

/*
 * May lane 1 carry streams' records now?  Not before the peer proved
 * itself, nor while a resume may still come or is under way: its records
 * and the OPENs after them keep one order, lane 0's.
 */
static int
lane1_may(const struct engine *e)
{

	return (e->lanes > 1 && engine_authenticated(e) &&
	    engine_resume_settled(e) && !e->res.offer_due &&
	    e->res.left == 0 && idq_len(&e->res.gone) == 0 &&
	    e->res.wait == 0 &&
	    (e->res.ask == RES_ASK_NONE || e->res.ask == RES_PROVEN) &&
	    e->res.serve != RES_DENYING && e->res.serve != RES_PROVING);
}

static void
lane1_latch(struct engine *e)
{

	if (!lane1_may(e)) {
		e->lane1_latched = 0;
		return;
	}
	/* ... and then only once lane 0's SENDs so far completed. */
	if (!e->lane1_latched) {
		e->lane1_latched = 1;
		e->lane1_at = e->send0_end;
	}
}

/*
 * Lane 1's SENDs: streams' records and the bytes of streams with little
 * to send, which so never queue behind lane 0's WRITEs.
 */
static int
take_lane1(struct engine *e, struct engine_wr *wrs, int max)
{
	const struct lane *l = &e->ln[1];
	int n = 0;

	while (n < max && (eng_ctrl_pending(e, 1) || eng_eager_any(e))) {
		if (l->seq - l->seq_done >= e->conf.sq_size) {
			e->st.stall_sq++;
			break;
		}
		if (eng_msg_avail(e, 1) == 0) {
			e->st.stall_msg++;
			break;
		}
		if (!take_send(e, 1, &wrs[n]))
			break;
		n++;
	}
	return (n);
}

/*
 * Lane 0: the link's records, then WRITEs (and their tags).  Control
 * records go first, always: they are few and small, and a credit, open
 * or close that waited behind data would stall a stream (or both sides)
 * for as long as the data takes.  Data leaves the last message credit
 * for a credit-bearing SEND, and the window (lib/protocol/window.h)
 * bounds the data bytes outstanding, so a SEND posted later waits behind
 * at most a window's worth.  On a link of two lanes, the streams' records
 * and small writes go on lane 1 instead, behind none of it.
 */
static int
take_lane0(struct engine *e, struct engine_wr *wrs, int max)
{
	const struct lane *l = &e->ln[0];
	int n = 0, r;

	while (n < max && e->auth != AUTH_HS_HELD) {
		if (l->seq - l->seq_done >= e->conf.sq_size) {
			e->st.stall_sq++;
			break;
		}
		if (e->seal.tag_due) {
			eng_take_tag(e, &wrs[n++]);
			continue;
		}
		if (eng_ctrl_pending(e, 0)) {
			if (eng_msg_avail(e, 0) == 0) {
				e->st.stall_msg++;
				break;
			}
			if (take_send(e, 0, &wrs[n])) {
				n++;
				continue;
			}
		}
		if (e->q[Q_TX].head == NIL)
			break;
		if (eng_msg_avail(e, 0) < 2) {
			e->st.stall_msg++;
			break;
		}
		/* A sealed WRITE needs room for its tag's SEND too, and
		 * so does one without immediates for its notice's. */
		if ((e->seal.tx || e->notify) &&
		    l->seq - l->seq_done + 2 > e->conf.sq_size) {
			e->st.stall_sq++;
			break;
		}
		if ((r = eng_take_data(e, &wrs[n])) <= 0)
			break;
		n++;
	}
	return (n);
}

int
engine_take_wrs(struct engine *e, struct engine_wr *wrs, int max)
{
	int n = 0;

	if (!e->up || e->failed)
		return (0);
	lane1_latch(e);
	if (e->lanes > 1)
		n = take_lane1(e, wrs, max);
	if (n < max)
		n += take_lane0(e, wrs + n, max - n);
	/* A stream that take_lane0 put in Q_FENCE asks lane 1 for one. */
	if (n < max && eng_fence_due(e, 1))
		n += take_lane1(e, wrs + n, max - n);
	return (n);
}
