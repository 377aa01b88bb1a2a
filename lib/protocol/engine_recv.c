/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * engine_recv: the engine's input: receive slots handed out and
 * completed, data WRITEs, the records a SEND carries, checked and
 * handled, and send completions.  Layer 3: it calls the layers below.
 */
#include <string.h>

#include "engine.h"
#include "engine_int.h"
#include "engine_io.h"
#include "idq.h"
#include "ring.h"
#include "wire.h"

/* Our receive slot ${slot} completed: count it and queue it for reposting. */
static int
recv_slot(struct engine *e, uint32_t slot)
{

	struct lane *l;

	if (e->failed)
		return (-1);
	if (slot >= e->conf.rq_size * engine_lanes(e))
		return (eng_fail(e, ENGINE_ERR_TRANSPORT, "completion for "
		    "unknown receive slot %u",
		    (unsigned)slot));
	e->rx_lane = engine_slot_lane(e, slot);
	l = &e->ln[e->rx_lane];
	if (l->recv_done >= l->recv_posted)
		return (eng_fail(e, ENGINE_ERR_TRANSPORT, "more receives "
		    "completed than were posted"));
	l->recv_done++;
	e->st.recvs++;
	(void)idq_push(&e->repost, slot);
	return (0);
}

/* Stream ${id}'s next ${n} bytes are in its receive ring. */
static void
arrived(struct engine *e, uint32_t id, uint32_t n)
{
	struct stream *s = &e->s[id];

	s->rx.tail += n;
	e->st.bytes_rx += n;
	if (s->flags & F_RESET) {
		/* We reset it; the peer had not heard yet.  Drop. */
		s->rx.cons = s->rx.tail;
		return;
	}
	eng_event(e, id, ENGINE_EV_READABLE);
	eng_rx_grow(e, id);
}

/* The free space in stream ${s}'s receive ring. */
static uint64_t
rx_room(const struct stream *s)
{

	/* After a shrink the old ring may still hold more than the new. */
	return (s->rx.tail - s->rx.cons >= s->rx.ring.size ? 0 :
	    ring_free(s->rx.ring.size, s->rx.tail, s->rx.cons));
}

/*
 * Data arrived: WRITE WITH IMMEDIATE ${imm} of ${len} bytes, or on a
 * sealed link the tag ${tag} of the WRITE ${imm} names.
 */
static int
data_in(struct engine *e, uint32_t imm, uint32_t len, const uint8_t *tag)
{
	uint32_t id, n;
	uint64_t room;
	struct stream *s;

	if (!e->up && !e->lane_wait)
		return (eng_violation(e, "data before the link was up"));
	if (!engine_authenticated(e))
		return (eng_violation(e, "data before authentication"));
	if (wire_imm_decode(imm, &id, &n) != WIRE_OK)
		return (eng_violation(e, "immediate 0x%08x has an unknown "
		    "operation", (unsigned)imm));
	if (tag == NULL && n != len)
		return (eng_violation(e, "immediate says %u bytes but %u were "
		    "written", (unsigned)n, (unsigned)len));
	if ((s = eng_live(e, id)) == NULL || s->state != S_OPEN ||
	    (s->flags & F_RESUMING))
		return (eng_violation(e,
		    "data for stream %u, which is not open",
		    (unsigned)id));
	if (s->flags & (F_PEER_SHUT | F_TERM_RECV))
		return (eng_violation(e,
		    "data for stream %u after its shutdown",
		    (unsigned)id));
	room = rx_room(s);
	if (n > room)
		return (eng_violation(e, "%u bytes for stream %u exceed its "
		    "free ring space %llu", (unsigned)n, (unsigned)id,
		    (unsigned long long)room));
	if (eng_seal_open_write(e, s, imm, n, tag))
		return (-1);
	arrived(e, id, n);
	return (0);
}

/* A data WRITE's immediate, or its notice: the WRITE landed. */
static int
write_in(struct engine *e, uint32_t imm, uint32_t len)
{

	if (e->rx_lane != 0)
		return (eng_violation(e, "a data WRITE on lane %u",
		    e->rx_lane));
	if (e->seal.rx)
		return (eng_violation(e,
		    "data without its tag on a sealed link"));
	return (data_in(e, imm, len, NULL));
}

/* A sealed data WRITE's tag (after its notice, without immediates). */
static int
tag_in(struct engine *e, uint32_t imm, const uint8_t *buf, uint32_t len)
{

	if (e->rx_lane != 0)
		return (eng_violation(e, "a data tag on lane %u", e->rx_lane));
	if (!e->seal.rx || len != WIRE_TAG_LEN)
		return (eng_violation(e, "a %u-byte tag on a link that %s",
		    (unsigned)len, e->seal.rx ? "seals" : "does not seal"));
	return (data_in(e, imm, 0, buf));
}

/* An immediate, which a link that runs without may not bring. */
static int
imm_check(struct engine *e, uint32_t slot, const char *what)
{

	if (recv_slot(e, slot))
		return (-1);
	if (e->notify)
		return (eng_violation(e, "%s on a link without immediates",
		    what));
	return (0);
}

static int
on_recv_imm(struct engine *e, uint32_t slot, uint32_t imm, uint32_t len)
{

	if (imm_check(e, slot, "a WRITE WITH IMMEDIATE"))
		return (-1);
	return (write_in(e, imm, len));
}

static int
on_recv_tag(struct engine *e, uint32_t slot, uint32_t imm,
    const uint8_t *buf, uint32_t len)
{

	if (imm_check(e, slot, "a SEND WITH IMMEDIATE"))
		return (-1);
	return (tag_in(e, imm, buf, len));
}

int
engine_on_recv_imm(struct engine *e, uint32_t slot, uint32_t imm,
    uint32_t len)
{
	int rc = on_recv_imm(e, slot, imm, len);

	eng_fail_finish(e);
	return (rc);
}

int
engine_on_recv_tag(struct engine *e, uint32_t slot, uint32_t imm,
    const uint8_t *buf, uint32_t len)
{
	int rc = on_recv_tag(e, slot, imm, buf, len);

	eng_fail_finish(e);
	return (rc);
}

static int
rec_open(struct engine *e, const struct wire_rec *r,
    const struct wire_origin *origin)
{
	uint32_t id;
	struct stream *s;

	if (eng_peer_bit_isset(e, r->stream))
		return (eng_violation(e, "OPEN for peer stream %u, which is "
		    "already open", (unsigned)r->stream));
	e->opened_any = 1;
	/* The bitmap check above bounds the refusal queue: one per id. */
	if (e->ctl.goaway || (id = eng_slot_alloc(e)) == NIL) {
		(void)idq_push(&e->refusals, r->stream << 16 |
		    (e->ctl.goaway ? WIRE_REASON_SHUTTING_DOWN :
		    WIRE_REASON_LIMIT));
		eng_peer_bit(e, r->stream, 1);
		e->st.streams_refused++;
		return (0);
	}
	s = &e->s[id];
	s->state = S_INCOMING;
	s->peer_id = r->stream;
	s->tx.peer_ring = r->ring;
	s->flags |= F_PEER_MAPPED;
	eng_peer_bit(e, r->stream, 1);
	memcpy(s->name, r->name, sizeof(s->name));
	if (origin != NULL)
		s->origin = *origin;
	eng_event(e, id, ENGINE_EV_INCOMING);
	return (0);
}

/*
 * The records that name one of our streams, in rec_stream's table: each
 * handler returns 0, -1 once it ended the link, or REC_BAD when the
 * stream's state does not allow the record (rec_stream says so).
 */
#define REC_BAD	1

static int
rs_open_ok(struct engine *e, uint32_t id, const struct wire_rec *r)
{
	struct stream *s = &e->s[id];

	if (eng_peer_bit_isset(e, r->peer_stream))
		return (REC_BAD);
	s->state = S_OPEN;
	s->peer_id = r->peer_stream;
	s->tx.peer_ring = r->ring;
	s->flags |= F_PEER_MAPPED;
	eng_peer_bit(e, r->peer_stream, 1);
	eng_keep_decide(e, s);
	if (s->flags & F_ABORT) {
		s->flags |= F_RESET;
		s->tx.app = s->tx.sent;
		eng_ctrl(e, id, C_RESET);
		return (0);
	}
	eng_event(e, id, ENGINE_EV_OPENED);
	eng_tx_queue(e, id);
	eng_check_shutdown(e, id);
	return (0);
}

static int
rs_refuse(struct engine *e, uint32_t id, const struct wire_rec *r)
{
	struct stream *s = &e->s[id];

	s->ev_reason = r->reason;
	eng_event(e, id, ENGINE_EV_REFUSED);
	s->flags |= F_TERM_SENT | F_TERM_RECV;
	eng_maybe_release(e, id);
	return (0);
}

static int
rs_credit(struct engine *e, uint32_t id, const struct wire_rec *r)
{
	struct stream *s = &e->s[id];

	if (r->cursor > s->tx.sent)
		return (eng_violation(e, "CREDIT for stream %u up to %llu, "
		    "beyond the %llu bytes sent", (unsigned)id,
		    (unsigned long long)r->cursor,
		    (unsigned long long)s->tx.sent));
	if (r->cursor <= s->tx.peer)
		return (0);	/* old news: cursors are absolute */
	s->tx.peer = r->cursor;
	eng_tx_queue(e, id);
	eng_wait_update(e, id);
	if ((s->flags & (F_KEEP | F_WANT_WR)) == (F_KEEP | F_WANT_WR)) {
		s->flags &= (uint16_t)~F_WANT_WR;
		eng_event(e, id, ENGINE_EV_WRITABLE);
	}
	return (0);
}

static int
rs_shutdown(struct engine *e, uint32_t id, const struct wire_rec *r)
{
	struct stream *s = &e->s[id];

	if (r->cursor != s->rx.tail)
		return (eng_violation(e, "SHUTDOWN for stream %u at %llu, but "
		    "%llu bytes arrived", (unsigned)id,
		    (unsigned long long)r->cursor,
		    (unsigned long long)s->rx.tail));
	s->flags |= F_PEER_SHUT;
	s->rx.final = r->cursor;
	eng_check_eof(e, id);
	return (0);
}

static int
rs_close(struct engine *e, uint32_t id, const struct wire_rec *r)
{
	struct stream *s = &e->s[id];

	(void)r;
	/* Graceful only after both shutdowns, or as our reset's answer. */
	if (!(s->flags & F_TERM_SENT && s->flags & F_RESET) &&
	    !((s->flags & F_PEER_SHUT) && (s->flags & F_SHUT_SENT)))
		return (REC_BAD);
	s->flags |= F_TERM_RECV;
	eng_maybe_release(e, id);
	return (0);
}

static int
rs_ring(struct engine *e, uint32_t id, const struct wire_rec *r)
{
	struct stream *s = &e->s[id];

	/* One resize at a time: the peer waits for our RING_AT. */
	if (s->rs & RS_RING_AT)
		return (REC_BAD);
	/* After our last word the peer frees it without RING_AT. */
	if (s->flags & F_TERM_SENT)
		return (0);
	s->tx.peer_next = r->ring;
	s->rs |= RS_RING_AT;
	eng_qpush(e, Q_CTRL, id);
	return (0);
}

static int
rs_ring_at(struct engine *e, uint32_t id, const struct wire_rec *r)
{
	struct stream *s = &e->s[id];

	if (s->rx.next.size == 0 || (s->rs & RS_RING))
		return (REC_BAD);
	if (r->cursor != s->rx.tail)
		return (eng_violation(e, "RING_AT for stream %u at %llu, but "
		    "%llu bytes arrived", (unsigned)id,
		    (unsigned long long)r->cursor,
		    (unsigned long long)s->rx.tail));
	eng_rx_switch(e, id);
	return (0);
}

static int
rs_reset(struct engine *e, uint32_t id, const struct wire_rec *r)
{
	struct stream *s = &e->s[id];

	s->flags |= F_TERM_RECV;
	if (!(s->flags & F_RESET)) {
		s->flags |= F_RESET;
		s->ev_reason = r->reason;
		s->tx.app = s->tx.sent;
		s->rx.cons = s->rx.tail;
		e->st.streams_reset++;
		eng_event(e, id, ENGINE_EV_RESET);
	}
	if (!(s->flags & F_TERM_SENT)) {
		s->ctrl &= (uint8_t)~(C_CREDIT | C_SHUTDOWN);
		eng_ctrl(e, id, C_CLOSE);
	}
	eng_maybe_release(e, id);
	return (0);
}

/*
 * DATA (version 8, a link of two lanes): the stream's next bytes, which
 * we copy where a WRITE of them would have put them (eng_seal_put).
 * They come in order: the sender's lane rule (a stream's WRs on one lane
 * complete before it posts on the other) and the one completion queue
 * put them after every byte before them.
 */
static int
rs_data(struct engine *e, uint32_t id, const struct wire_rec *r)
{
	struct stream *s = &e->s[id];
	uint32_t n = r->data_len;

	if (e->lanes < 2)
		return (eng_violation(e, "DATA on a link of one lane"));
	if (r->cursor != s->rx.tail)
		return (eng_violation(e, "DATA for stream %u at %llu, but "
		    "%llu bytes arrived", (unsigned)id,
		    (unsigned long long)r->cursor,
		    (unsigned long long)s->rx.tail));
	if (n > rx_room(s))
		return (eng_violation(e, "%u bytes for stream %u exceed its "
		    "free ring space %llu", (unsigned)n, (unsigned)id,
		    (unsigned long long)rx_room(s)));
	if (eng_seal_put(e, s, r->data, n))
		return (-1);
	e->st.eager_rx++;
	arrived(e, id, n);
	return (0);
}

/*
 * Per record type: the state the stream must be in, the flags it must not
 * have, and the handler.  (An INCOMING stream or one still resuming takes
 * none of them.)
 */
static const struct stream_rec {
	uint8_t state;
	uint16_t not;
	int (*rec)(struct engine *, uint32_t, const struct wire_rec *);
} stream_recs[] = {
	[WIRE_OPEN_OK] =	{ S_OPENING, 0, rs_open_ok },
	[WIRE_REFUSE] =		{ S_OPENING, 0, rs_refuse },
	[WIRE_CREDIT] =		{ S_OPEN, F_TERM_RECV, rs_credit },
	[WIRE_SHUTDOWN] =	{ S_OPEN, F_PEER_SHUT | F_TERM_RECV,
				    rs_shutdown },
	[WIRE_CLOSE] =		{ S_OPEN, F_TERM_RECV, rs_close },
	[WIRE_RING] =		{ S_OPEN, F_TERM_RECV, rs_ring },
	[WIRE_RING_AT] =	{ S_OPEN, F_TERM_RECV, rs_ring_at },
	[WIRE_RESET] =		{ S_OPEN, F_TERM_RECV, rs_reset },
	[WIRE_DATA] =		{ S_OPEN, F_PEER_SHUT | F_TERM_RECV, rs_data },
};

static int
rec_stream(struct engine *e, const struct wire_rec *r)
{
	struct stream *s = eng_live(e, r->stream);
	const struct stream_rec *t = NULL;
	int err = REC_BAD;

	if (r->type < sizeof(stream_recs) / sizeof(stream_recs[0]) &&
	    stream_recs[r->type].rec != NULL)
		t = &stream_recs[r->type];
	if (t != NULL && s != NULL && !(s->flags & F_RESUMING) &&
	    s->state == t->state && !(s->flags & t->not))
		err = t->rec(e, r->stream, r);
	if (err != REC_BAD)
		return (err);
	return (eng_violation(e, "%s for stream %u in a state that does not "
	    "allow it", wire_rec_name(r->type), (unsigned)r->stream));
}

/* MSG_CREDIT: the peer's receives on the lane the message came on. */
static int
rec_msg_credit(struct engine *e, const struct wire_rec *r)
{
	struct lane *l = &e->ln[e->rx_lane];
	uint64_t posted = r->cursor;

	/* The peer cannot have more receives out than its queue holds. */
	if (posted > l->msgs_sent + e->peer_rq)
		return (eng_violation(e, "message credit %llu is beyond the "
		    "peer's receive queue (%llu sent, queue %u)",
		    (unsigned long long)posted,
		    (unsigned long long)l->msgs_sent, (unsigned)e->peer_rq));
	if (posted > l->peer_posted)
		l->peer_posted = posted;
	return (0);
}

static int
rec_goaway(struct engine *e, const struct wire_rec *r)
{

	(void)r;
	e->ctl.peer_goaway = 1;
	return (0);
}

static int
rec_keepalive(struct engine *e, const struct wire_rec *r)
{

	(void)e;
	(void)r;
	return (0);
}

/* Fences (version 12) run on links that fence their lane switches. */
static int
fence_check(struct engine *e, const struct wire_rec *r)
{

	if (!eng_fenced(e))
		return (eng_violation(e, "%s on a link that does not fence "
		    "(%u lane%s, %s immediates)", wire_rec_name(r->type),
		    engine_lanes(e), engine_lanes(e) > 1 ? "s" : "",
		    e->notify ? "without" : "with"));
	return (0);
}

/*
 * FENCE: we have every message the peer sent before it on its lane; say
 * so (FENCED), on whichever lane (eng_fence_ans_lane).  The peer keeps
 * one out per lane: a newer one answers for both.
 */
static int
rec_fence(struct engine *e, const struct wire_rec *r)
{

	if (fence_check(e, r))
		return (-1);
	e->fence_ans[e->rx_lane] = r->cursor;
	e->fence_ans_due |= (uint8_t)(1u << e->rx_lane);
	return (0);
}

/* FENCED: the peer has every WR before our FENCE of that number. */
static int
rec_fenced(struct engine *e, const struct wire_rec *r)
{
	struct lane *l;
	unsigned lane;

	if (fence_check(e, r))
		return (-1);
	for (lane = 0; lane < WIRE_LANES_MAX; lane++) {
		l = &e->ln[lane];
		if (l->fence_seq == FENCE_NONE || l->fence_num != r->cursor)
			continue;
		l->seq_arrived = l->fence_seq + 1;
		l->fence_seq = FENCE_NONE;
		/* Streams waiting for lane 1 may go on lane 0 now. */
		if (lane == 1)
			eng_fence_lift(e);
		return (0);
	}
	return (eng_violation(e, "FENCED %llu, but no FENCE of that number "
	    "is out", (unsigned long long)r->cursor));
}

/*
 * Records about the link rather than one stream, by type; the rest (but
 * OPEN and ORIGIN, which engine_on_recv pairs) go to rec_stream.
 */
static int (*const link_recs[])(struct engine *, const struct wire_rec *) = {
	[WIRE_AUTH] = eng_rec_auth,
	[WIRE_HANDSHAKE] = eng_rec_handshake,
	[WIRE_MSG_CREDIT] = rec_msg_credit,
	[WIRE_KEEPALIVE] = rec_keepalive,
	[WIRE_GOAWAY] = rec_goaway,
	[WIRE_RESUME] = eng_rec_resume,
	[WIRE_RESUME_STREAM] = eng_rec_resume_stream,
	[WIRE_RESUME_DENIED] = eng_rec_resume_denied,
	[WIRE_RESUME_PROOF] = eng_rec_resume_proof,
	[WIRE_RESUME_COUNT] = eng_rec_resume_count,
	[WIRE_FENCE] = rec_fence,
	[WIRE_FENCED] = rec_fenced,
};

/* Checks a message passes before its records are decoded. */
static int
recv_check(struct engine *e, uint32_t slot, uint32_t len)
{

	if (recv_slot(e, slot))
		return (-1);
	if (!e->up && !e->lane_wait)
		return (eng_violation(e, "message before the link was up"));
	if (len == 0)
		return (eng_violation(e, "%s", wire_strerror(WIRE_EEMPTY)));
	if (len > WIRE_MSG_SIZE)
		return (eng_violation(e, "message of %u bytes exceeds %u",
		    (unsigned)len, WIRE_MSG_SIZE));
	return (0);
}

static int
orphan_origin(struct engine *e, uint32_t origin_for)
{

	return (eng_violation(e, "ORIGIN for peer stream %u not followed by "
	    "its OPEN", (unsigned)origin_for));
}

/* Records of a version the link does not speak end it (wire.c's table
 * says which version brought each); and rings keep their size on a link
 * that can resume. */
static int
rec_version(struct engine *e, const struct wire_rec *r)
{
	unsigned v = wire_rec_version(r->type);

	if ((r->type == WIRE_RING || r->type == WIRE_RING_AT) &&
	    !e->can_resize)
		return (eng_violation(e,
		    "%s on a link that cannot resize rings",
		    wire_rec_name(r->type)));
	if (e->ver_link < v)
		return (eng_violation(e, "%s on a link below version %u",
		    wire_rec_name(r->type), v));
	return (0);
}

/*
 * May record ${r} come now?  Before the proof only what proving needs;
 * after an ORIGIN (for peer stream ${origin_for}) only its OPEN; and only
 * records the link's version carries.
 */
static int
rec_allowed(struct engine *e, const struct wire_rec *r, uint32_t origin_for)
{

	if (!engine_authenticated(e) && r->type != WIRE_AUTH &&
	    r->type != WIRE_HANDSHAKE && r->type != WIRE_MSG_CREDIT &&
	    r->type != WIRE_KEEPALIVE)
		return (eng_violation(e, "%s before authentication",
		    wire_rec_name(r->type)));
	if (origin_for != NIL && (r->type != WIRE_OPEN ||
	    r->stream != origin_for))
		return (orphan_origin(e, origin_for));
	return (rec_version(e, r));
}

/*
 * A SEND on a link without immediates: its notice off the front.  A data
 * notice is handled here (1, or -1 if it ended the link); records leave
 * ${*buf} and ${*len} past the notice (0).
 */
static int
notice_in(struct engine *e, const uint8_t **buf, uint32_t *len)
{
	uint32_t notice, id, n;

	if (*len < WIRE_NOTICE_LEN)
		return (eng_violation(e, "a message of %u bytes, which has no "
		    "room for its notice", (unsigned)*len));
	notice = eng_get32(*buf);
	*buf += WIRE_NOTICE_LEN;
	*len -= WIRE_NOTICE_LEN;
	if (notice == WIRE_NOTICE_RECORDS) {
		if (*len == 0)
			return (eng_violation(e, "%s",
			    wire_strerror(WIRE_EEMPTY)));
		return (0);
	}
	if (wire_imm_decode(notice, &id, &n) != WIRE_OK)
		return (eng_violation(e, "notice 0x%08x has an unknown "
		    "operation", (unsigned)notice));
	if (e->seal.rx || *len != 0)
		return (tag_in(e, notice, *buf, *len) ? -1 : 1);
	return (write_in(e, notice, n) ? -1 : 1);
}

static int
on_recv(struct engine *e, uint32_t slot, const uint8_t *buf, uint32_t len)
{
	struct wire_rec r;
	struct wire_origin origin;
	size_t off = 0, used;
	uint32_t origin_for = NIL;	/* an ORIGIN waits for its OPEN */
	uint8_t clear[WIRE_MSG_SIZE];
	int err;

	if (recv_check(e, slot, len))
		return (-1);
	if (e->notify) {
		if ((err = notice_in(e, &buf, &len)) != 0)
			return (err < 0 ? -1 : 0);
	}
	if (eng_seal_open_send(e, engine_slot_lane(e, slot), &buf, &len,
	    clear))
		return (-1);
	while (off < len) {
		if ((err = wire_rec_decode(buf + off, len - off, &r, &used)))
			return (eng_violation(e, "bad control record at offset "
			    "%zu: %s", off, wire_strerror(err)));
		off += used;
		if (rec_allowed(e, &r, origin_for))
			return (-1);
		/* What follows a handshake message may have to be sealed. */
		if (r.type == WIRE_HANDSHAKE && off < len)
			return (eng_violation(e, "records after HANDSHAKE in "
			    "its SEND"));
		if (r.type == WIRE_ORIGIN) {
			origin = r.origin;
			origin_for = r.stream;
			continue;
		}
		if (r.type == WIRE_OPEN) {
			err = rec_open(e, &r, origin_for != NIL ? &origin :
			    NULL);
			origin_for = NIL;
		} else if (r.type < sizeof(link_recs) / sizeof(link_recs[0]) &&
		    link_recs[r.type] != NULL)
			err = link_recs[r.type](e, &r);
		else
			err = rec_stream(e, &r);
		if (err)
			return (-1);
	}
	if (origin_for != NIL)
		return (orphan_origin(e, origin_for));
	return (0);
}

int
engine_on_recv(struct engine *e, uint32_t slot, const uint8_t *buf,
    uint32_t len)
{
	int rc = on_recv(e, slot, buf, len);

	eng_fail_finish(e);
	return (rc);
}

int
engine_on_send_done(struct engine *e, uint64_t wr_id)
{
	unsigned lane = (unsigned)(wr_id >> ENGINE_WR_LANE_SHIFT);
	uint64_t seq = ENG_WR_SEQ(wr_id);
	struct lane *l = &e->ln[lane];
	struct wrinfo *w;
	struct stream *s;

	if (e->failed)
		return (-1);
	if (lane >= engine_lanes(e) || seq < l->seq_done || seq >= l->seq) {
		eng_fail(e, ENGINE_ERR_TRANSPORT, "completion for unknown work "
		    "request %llu", (unsigned long long)wr_id);
		eng_fail_finish(e);
		return (-1);
	}
	if (lane == 1) {
		/* SENDs only: what waits for them may go on. */
		l->seq_done = seq + 1;
		eng_fence_lift(e);
		return (0);
	}
	wr_id = seq;
	for (; e->ln[0].seq_done <= wr_id; e->ln[0].seq_done++) {
		w = &e->ln[0].wri[e->ln[0].seq_done % e->conf.sq_size];
		window_done(&e->win, w->bytes);
		if (e->ln[0].seq_done == wr_id && w->signaled)
			window_sample(&e->win, &w->mark,
			    e->q[Q_TX].head != NIL);
		if (w->stream == NIL)
			continue;
		s = &e->s[w->stream];
		eng_seal_restore(e, w, e->ln[0].seq_done);
		s->tx.done = w->end;
		s->tx.wr_out--;
		if (s->tx.old.size != 0 && s->tx.done >= s->tx.switch_at &&
		    !e->failed)
			eng_ring_drop(e, s, &s->tx.old);
		eng_tx_freed(e, w->stream);
		if (s->tx.wr_out == 0)
			eng_maybe_release(e, w->stream);
	}
	return (0);
}

unsigned
engine_slot_lane(const struct engine *e, uint32_t slot)
{

	return (slot >= e->conf.rq_size ? 1 : 0);
}

int
engine_take_recvs(struct engine *e, uint32_t *slots, int max)
{
	int n = 0;

	if (e->failed)
		return (0);
	while (n < max && idq_len(&e->repost) > 0) {
		slots[n] = idq_peek(&e->repost);
		idq_drop(&e->repost);
		if (engine_slot_lane(e, slots[n++]) == 1)
			e->ln[1].recv_posted++;
		else
			e->ln[0].recv_posted++;
	}
	return (n);
}
